import { describe, expect, it } from 'vitest';
import { codeNamesOf, declarationsOf, definitionLine } from './definitions.js';

describe('declarationsOf', () => {
  it('finds declarations under the line-number prefixes reads print, with the line number as location', () => {
    const catN =
      '   547\t\n   548\t    def get_count(self, using):\n   549\t        """Perform a COUNT()."""';
    expect(declarationsOf(catN, 'django/db/models/sql/query.py')).toEqual([
      {
        name: 'get_count',
        line: 'def get_count(self, using):',
        location: 'django/db/models/sql/query.py:548',
      },
    ]);
    // Claude Code's Read.
    expect(
      declarationsOf('    12→export async function withRetry<T>(run: () => Promise<T>) {', 'src/retry.ts'),
    ).toEqual([
      {
        name: 'withRetry',
        line: 'export async function withRetry<T>(run: () => Promise<T>) {',
        location: 'src/retry.ts:12',
      },
    ]);
    // grep -n over several files names the file itself; without a read path the line stands alone.
    expect(declarationsOf('lib/path.py:420:    def iter_bezier(self, **kwargs):\nclass Path:')).toEqual([
      {
        name: 'iter_bezier',
        line: 'def iter_bezier(self, **kwargs):',
        location: 'lib/path.py:420',
        printed: 'lib/path.py:420:    def iter_bezier(self, **kwargs):',
      },
      { name: 'Path', line: 'class Path:' },
    ]);
  });

  it('takes definitions, not statements: exported bindings yes, local ones and dunder methods no', () => {
    const output = [
      'export const DEFAULT_PORT = 3000;',
      '  const state = usePickerState(props);',
      '    def __init__(self, xy, closed=True):',
      'export type PickerSelectionState = "partial" | "shallow" | "finish";',
      'pub fn parse_config(input: &str) -> Config {',
      'func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {',
      'interface Props {',
      'the type of this value is unknown', // prose that only uses a keyword
      `function ${'x'.repeat(300)}() {}`,
    ].join('\n');
    expect(declarationsOf(output).map((found) => found.name)).toEqual([
      'DEFAULT_PORT',
      'PickerSelectionState',
      'parse_config',
      'ServeHTTP',
      'Props',
    ]);
  });

  it('says where a declaration is before the line when it knows, or shows it as printed with where it is', () => {
    expect(definitionLine({ name: 'f', line: 'def f():', location: 'a.py:3' })).toBe('`a.py:3` def f():');
    expect(definitionLine({ name: 'f', line: 'def f():' })).toBe('def f():');
    // Printed with where it is (grep -n over files), it stays as printed: the form a search for it finds.
    expect(
      definitionLine({ name: 'f', line: 'def f():', location: 'a.py:3', printed: 'a.py:3:    def f():' }),
    ).toBe('a.py:3:    def f():');
  });
});

describe('codeNamesOf', () => {
  it('takes names written as code: in code spans, called, snake_case or camelCase, not plain words', () => {
    const names = codeNamesOf(
      'The `count()` path goes through get_aggregation, then parseSitesFixesConfig(text) and `Query.clear_ordering`. I will count the rows.',
    );
    for (const name of ['count', 'get_aggregation', 'parseSitesFixesConfig', 'Query', 'clear_ordering'])
      expect(names).toContain(name);
    for (const word of ['rows', 'path', 'will', 'The']) expect(names).not.toContain(word);
  });
});
