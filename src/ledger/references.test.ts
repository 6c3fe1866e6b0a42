import { describe, expect, it } from 'vitest';
import { referencesIn } from './references.js';

describe('referencesIn', () => {
  it('finds URLs and issue ids verbatim, in order', () => {
    expect(
      referencesIn(
        'Fixes #365 and kesslerio/attio-mcp-server#380 (GH-12), see https://github.com/o/r/pull/380.',
      ),
    ).toEqual([
      { kind: 'url', value: 'https://github.com/o/r/pull/380' },
      { kind: 'issue', value: '#365' },
      { kind: 'issue', value: 'kesslerio/attio-mcp-server#380' },
      { kind: 'issue', value: 'GH-12' },
    ]);
  });

  it('skips fragments, entities, templates and, in tool output, unanchored numbers and JSON url fields', () => {
    expect(referencesIn(`src/a.ts#12 &#123; a#1 http://localhost:${'$'}{port}`)).toEqual([]);
    expect(referencesIn('line #12 of the log', { strictIssues: true })).toEqual([]);
    expect(referencesIn('closes issue #12', { strictIssues: true })).toEqual([
      { kind: 'issue', value: '#12' },
    ]);
    expect(referencesIn('{"avatar_url": "https://a.example/u/1"}', { strictIssues: true })).toEqual([]);
  });

  // Speed on long word runs is measured in bench/importers.bench.mjs; here, what is found around them.
  it('finds the references around long word runs, and none inside them', () => {
    const text = `#7 ${'a'.repeat(200_000)}#1 ${'b/'.repeat(50_000)}#2 see o/r#3`;
    expect(referencesIn(text)).toEqual([
      { kind: 'issue', value: '#7' },
      { kind: 'issue', value: 'o/r#3' },
    ]);
  });
});
