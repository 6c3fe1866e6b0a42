import { describe, expect, it } from 'vitest';
import {
  diffBodyStats,
  parseApplyPatch,
  parseConflictBlocks,
  parseUnifiedDiff,
  replacementStats,
} from './code-change.js';

describe('replacementStats', () => {
  it('counts changed lines and names the symbols on them', () => {
    const stats = replacementStats(
      'function total(prices) {\n  return sum(prices);\n}\n',
      'function total(prices) {\n  const cents = toCents(prices);\n  return cents / 100;\n}\n',
    );
    expect(stats).toEqual({ linesAdded: 2, linesRemoved: 1, symbols: ['total'] });
  });

  it('finds Python, TypeScript and Go declarations and ignores prose', () => {
    expect(replacementStats('', 'def collect_refs(expr):\n    pass\nclass Ref:\n').symbols).toEqual([
      'collect_refs',
      'Ref',
    ]);
    expect(replacementStats('', 'export const submitAgentResolution = async () => {\n').symbols).toEqual([
      'submitAgentResolution',
    ]);
    expect(replacementStats('', 'func (s *Server) Start(ctx context.Context) error {\n').symbols).toEqual([
      'Start',
    ]);
    expect(
      replacementStats('', 'A fully functional TODO app.\nThe interface shows notes.\n').symbols,
    ).toEqual([]);
  });
});

describe('patches', () => {
  it('parses a Codex apply_patch envelope', () => {
    const patch = [
      '*** Begin Patch',
      '*** Update File: src/units.ts',
      '@@ export function pickUnit(flags) {',
      '-  return flags.metic ? "C" : DEFAULT_UNIT;',
      '+  return flags.metric ? "C" : DEFAULT_UNIT;',
      '*** Add File: src/new.ts',
      '+export function x() {}',
      '*** Delete File: src/old.ts',
      '*** End Patch',
    ].join('\n');
    expect(parseApplyPatch(patch)).toEqual([
      {
        path: 'src/units.ts',
        operation: 'update',
        hunks: 1,
        linesAdded: 1,
        linesRemoved: 1,
        symbols: ['pickUnit'],
      },
      { path: 'src/new.ts', operation: 'add', hunks: 0, linesAdded: 1, linesRemoved: 0, symbols: ['x'] },
      { path: 'src/old.ts', operation: 'delete', hunks: 0, linesAdded: 0, linesRemoved: 0, symbols: [] },
    ]);
  });

  it('parses unified diffs and diff bodies', () => {
    const diff = '--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,3 @@ def main():\n x = 1\n+y = 2\n-z = 3\n+z = 4\n';
    expect(parseUnifiedDiff(diff)).toEqual([
      { path: 'app.py', operation: 'update', hunks: 1, linesAdded: 2, linesRemoved: 1, symbols: ['main'] },
    ]);
    expect(diffBodyStats('  import x\n+ export function f() {}\n- old()\n')).toMatchObject({
      linesAdded: 1,
      linesRemoved: 1,
      symbols: ['f'],
    });
  });

  it('reads conflict-marker blocks', () => {
    expect(parseConflictBlocks('<<<<<<< ORIGINAL\na\n=======\nb\nc\n>>>>>>> UPDATED')).toEqual([
      { oldText: 'a\n', newText: 'b\nc\n' },
    ]);
  });
});
