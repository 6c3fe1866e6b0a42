import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createTokenAccountant } from '../tokens/index.js';
import { keepHeadAndTail, trimmedTextMarker } from './head-and-tail.js';

const accountant = createTokenAccountant();
const count = (text: string) => accountant.countText(text);
const handle = 'h-0123456789abcdef0123';

function log(lines: number, tag = 'run'): string {
  return Array.from(
    { length: lines },
    (_, line) => `src/module${line}.ts:${line}: ${tag} check ${line} passed`,
  ).join('\n');
}

describe('keepHeadAndTail', () => {
  it('keeps the first and last lines byte for byte, the middle as a marker with its line count', () => {
    const text = `${log(200)}\nexit code 1`;
    const trimmed = keepHeadAndTail(text, 300, handle, count)!;
    const [head, tail] = trimmed.split(/\n?\[… \d+ lines of this output archived: h-[0-9a-f]+ …\]\n?/);
    expect(text.startsWith(head!)).toBe(true);
    expect(text.endsWith(tail!)).toBe(true);
    expect(tail!.endsWith('exit code 1')).toBe(true);
    const cut = text.split('\n').length - head!.split('\n').length - tail!.split('\n').length;
    expect(trimmed).toContain(trimmedTextMarker(cut, handle));
    // About the tokens asked for (the marker costs ~20 more), head before tail.
    expect(count(trimmed)).toBeLessThanOrEqual(300 + 25);
    expect(count(head!)).toBeGreaterThan(count(tail!));
  });

  it('cuts a long unbroken line (minified JSON) in slices, counting its middle in characters', () => {
    const json = JSON.stringify(
      Array.from({ length: 600 }, (_, index) => ({ id: index, name: `item ${index}` })),
    );
    const trimmed = keepHeadAndTail(json, 250, handle, count)!;
    const match =
      /^(\[\{"id":0,[^\n]*)\n\[… (\d+) characters of this output archived: h-[0-9a-f]+ …\]\n([^\n]*\}\])$/.exec(
        trimmed,
      );
    expect(match).not.toBeNull();
    expect(Number(match![2])).toBe(json.length - match![1]!.length - match![3]!.length);
    expect(count(trimmed)).toBeLessThan(count(json) / 4);
  });

  it("keeps a diff's file headers from its cut middle, each between the markers of what was cut around it", () => {
    const file = (path: string, lines: number) =>
      [
        `diff --git a/${path} b/${path}`,
        `--- a/${path}`,
        `+++ b/${path}`,
        '@@ -1,3 +1,4 @@',
        ...Array.from({ length: lines }, (_, line) => `+    value_${line} = compute(${line})  # changed`),
      ].join('\n');
    const diff = [
      file('astropy/wcs/sliced_wcs.py', 60),
      file('reproduce_sliced_wcs.py', 60),
      file('setup.cfg', 40),
    ].join('\n');
    const trimmed = keepHeadAndTail(diff, 300, handle, count)!;
    for (const header of ['reproduce_sliced_wcs.py', 'setup.cfg'])
      expect(trimmed).toContain(`\ndiff --git a/${header} b/${header}\n`);
    const markers = [...trimmed.matchAll(/^\[… (\d+) lines of this output archived: h-[0-9a-f]+ …\]$/gm)];
    expect(markers).toHaveLength(3);
    // Every line is kept or counted by a marker, once.
    const keptLines = trimmed.split('\n').length - markers.length;
    const cutLines = markers.reduce((sum, marker) => sum + Number(marker[1]), 0);
    expect(keptLines + cutLines).toBe(diff.split('\n').length);
    expect(count(trimmed)).toBeLessThanOrEqual(300 + 3 * 25);
    // A call's argument (a patch the agent wrote) is cut around one marker, as before.
    const argument = keepHeadAndTail(diff, 300, handle, count, 'argument')!;
    expect(argument.match(/of this argument archived/g)).toHaveLength(1);
  });

  it('leaves text that would lose nothing', () => {
    expect(keepHeadAndTail('one line\ntwo lines\n', 250, handle, count)).toBeUndefined();
    expect(keepHeadAndTail('', 250, handle, count)).toBeUndefined();
  });

  it('property: a prefix and a suffix of the text around one marker, never longer than the text', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 120 }), { maxLength: 80 }),
        fc.integer({ min: 20, max: 400 }),
        (lines, maxTokens) => {
          const text = lines.join('\n');
          const trimmed = keepHeadAndTail(text, maxTokens, handle, count);
          if (trimmed === undefined) return;
          const match =
            /^([\s\S]*?)\n?\[… (\d+) (?:lines?|characters?) of this output archived: h-[0-9a-f]+ …\]\n?([\s\S]*)$/.exec(
              trimmed,
            );
          expect(match).not.toBeNull();
          expect(text.startsWith(match![1]!)).toBe(true);
          expect(text.endsWith(match![3]!)).toBe(true);
          expect(match![1]!.length + match![3]!.length).toBeLessThan(text.length);
        },
      ),
      { numRuns: 300 },
    );
  });
});
