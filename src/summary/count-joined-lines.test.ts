import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { propertyRuns } from '../../test/support/property-runs.js';
import { createO200kCounter } from '../tokens/index.js';
import { countJoinedLines } from './count-joined-lines.js';

const counter = createO200kCounter();
const count = (text: string) => counter.count(text);
const join = (blocks: ReadonlyArray<readonly string[]>) =>
  blocks.map((lines) => lines.join('\n')).join('\n\n');

// Pieces chosen to sit on o200k's piece boundaries: punctuation runs that take newlines and `/` with them,
// whitespace runs, contractions, digits, letters of both cases and other scripts, emoji, a special token's text.
const fragment = fc.constantFrom(
  'a',
  'Z',
  'word',
  'Word',
  "it's",
  "'S",
  '0',
  '123',
  '4567',
  ' ',
  '  ',
  '\t',
  '\r',
  '\n',
  '.',
  ')',
  '`',
  '/',
  '//',
  '- ',
  '## ',
  '[',
  ']',
  '→',
  '…',
  'é',
  'Ω',
  '日本',
  '😀',
  '<|endoftext|>',
  'src/file.ts',
);
const line = fc.array(fragment, { maxLength: 8 }).map((pieces) => pieces.join(''));
const blocks = fc.array(fc.array(line, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 4 });

describe('countJoinedLines', () => {
  it('counts what counting the joined text counts, whenever it counts at all (property)', () => {
    fc.assert(
      fc.property(blocks, (generated) => {
        const composed = countJoinedLines(generated, count);
        if (composed !== undefined) expect(composed).toBe(count(join(generated)));
      }),
      { numRuns: propertyRuns(3000) },
    );
  });

  it('counts texts whose lines start with a letter, digit or punctuation other than `/` (property)', () => {
    const start = fc.constantFrom('- ', '## ', 'a', 'Z', '7', '`', ')', '[', 'é', '😀');
    const renderedLine = fc.tuple(start, line).map(([first, rest]) => first + rest);
    fc.assert(
      fc.property(
        fc.array(fc.array(renderedLine, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 4 }),
        (generated) => {
          expect(countJoinedLines(generated, count)).toBe(count(join(generated)));
        },
      ),
      { numRuns: propertyRuns(2000) },
    );
  });

  it('counts a rendered summary without counting its lines again when they end in a word', () => {
    const counted: string[] = [];
    const recording = (text: string) => {
      counted.push(text);
      return count(text);
    };
    const summary = [
      ['[precis summary of 3 earlier messages — archived: h-0123456789abcdef]'],
      ['## Files', '- `src/a.ts` modified: edit +1/-1', '- `src/b.ts` read'],
      ['## Excerpts (verbatim)', '- const retries = options.retries ?? 3;', '- see src/a.ts line 12'],
    ];
    expect(countJoinedLines(summary, recording)).toBe(count(join(summary)));
    // `read` and `12` end in a word: counted alone, their newlines apart; the others with their newlines.
    expect(counted).toContain('- `src/b.ts` read');
    expect(counted).toContain('- see src/a.ts line 12');
    expect(counted).toContain('- const retries = options.retries ?? 3;\n');
    // Counts known already are not counted again.
    counted.length = 0;
    const known = [[undefined], [undefined, undefined, count('- `src/b.ts` read')]];
    expect(countJoinedLines(summary, recording, known)).toBe(count(join(summary)));
    expect(counted).not.toContain('- `src/b.ts` read');
    expect(counted).toContain('- see src/a.ts line 12');
  });

  it('counts lines a piece may run into together with the lines before them', () => {
    const counted: string[] = [];
    const recording = (text: string) => {
      counted.push(text);
      return count(text);
    };
    const intent = [
      ['[header]'],
      ['## Session intent', 'Fix it:', '\t ', '    indented();', '', 'Then test.'],
    ];
    expect(countJoinedLines(intent, recording)).toBe(count(join(intent)));
    expect(counted).toContain('Fix it:\n\t \n    indented();\n\n');
    expect(counted).not.toContain('\t ');
    expect(countJoinedLines([['a.'], ['/usr/bin']], count)).toBe(count('a.\n\n/usr/bin'));
    expect(countJoinedLines([['a.', ' indented']], count)).toBe(count('a.\n indented'));
    expect(countJoinedLines([['a', '']], count)).toBe(count('a\n'));
  });

  it('gives up on empty blocks and on long lines, alone or counted together', () => {
    expect(countJoinedLines([['a'], []], count)).toBeUndefined();
    expect(countJoinedLines([['x'.repeat(991)]], count)).toBeUndefined();
    expect(countJoinedLines([['x'.repeat(600), ` ${'y'.repeat(600)}`]], count)).toBeUndefined();
    // Only what follows a newline matters: the text may start with anything.
    expect(countJoinedLines([[' /start.'], ['next']], count)).toBe(count(' /start.\n\nnext'));
  });
});
