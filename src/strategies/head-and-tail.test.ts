import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { propertyRuns } from '../../test/support/property-runs.js';
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
    // The first file's changes from the first on, as far as they fit.
    expect(trimmed).toMatch(/\n\+ {4}value_0 = compute\(0\) {2}# changed\n\+ {4}value_1 =/);
    expectEveryLineOnce(diff, trimmed);
    expect(count(trimmed)).toBeLessThanOrEqual(300 + 5);
    // A call's argument (a patch the agent wrote) is cut around one marker, as before.
    const argument = keepHeadAndTail(diff, 300, handle, count, 'argument')!;
    expect(argument.match(/of this argument archived/g)).toHaveLength(1);
  });

  it("keeps a diff's changed lines rather than its ends: context and blank added lines go first", () => {
    const context = (from: number, lines: number) =>
      Array.from(
        { length: lines },
        (_, line) => `     unchanged_${from + line} = settings.lookup("key_${from + line}")`,
      );
    const diff = [
      'diff --git a/django/db/models/sql/query.py b/django/db/models/sql/query.py',
      'index 9735ce10c8..14ff8c407a 100644',
      '--- a/django/db/models/sql/query.py',
      '+++ b/django/db/models/sql/query.py',
      '@@ -551,48 +551,60 @@ class Query(BaseExpression):',
      ...context(0, 20),
      '-        return obj.get_aggregation(using, ["__count"])["__count"]',
      '+        used_expressions = set()',
      '+        if any(isinstance(a, Subquery) for a in obj.annotations.values()):',
      '+            return obj.get_aggregation(using, ["__count"])["__count"]',
      '+',
      ...context(20, 20),
      '+',
      '+    ',
      '+',
      ...context(40, 8),
    ].join('\n');
    const before = count(diff);
    const trimmed = keepHeadAndTail(diff, 120, handle, count)!;
    for (const line of diff
      .split('\n')
      .filter((line) => /^[-+]/.test(line) && !/^(?:[-+]\s*|--- .*|\+\+\+ .*)$/.test(line)))
      expect(trimmed).toContain(`${line}\n`);
    expect(trimmed).not.toContain('unchanged_');
    expectEveryLineOnce(diff, trimmed);
    expect(count(trimmed)).toBeLessThanOrEqual(120 + 5);
    expect(count(trimmed)).toBeLessThan(before / 5);
    // Head and tail would have kept the context around the change and cut the change itself.
    const headAndTail = keepHeadAndTail(diff, 120, handle, count, 'argument')!;
    expect(headAndTail).not.toContain('used_expressions');
  });

  it('property: a trimmed diff keeps whole lines in order, each cut one counted once, within the tokens asked', () => {
    const line = fc.oneof(
      fc.constantFrom('@@ -10,7 +10,9 @@ def f():', 'diff --git a/x.py b/x.py', '+', ' ', ''),
      fc
        .tuple(fc.constantFrom('+', '-', ' ', ''), fc.string({ minLength: 1, maxLength: 120 }))
        .map(([sign, body]) => `${sign}${body.replace(/[\r\n]/g, ' ')}`),
    );
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 80 }),
        fc.integer({ min: 60, max: 400 }),
        (lines, maxTokens) => {
          const diff = ['--- a/x.py', '+++ b/x.py', '@@ -1,3 +1,3 @@', ...lines].join('\n');
          const trimmed = keepHeadAndTail(diff, maxTokens, handle, count);
          if (trimmed === undefined) return;
          expectEveryLineOnce(diff, trimmed);
          expect(count(trimmed)).toBeLessThanOrEqual(maxTokens + 5);
          expect(count(trimmed)).toBeLessThan(count(diff));
        },
      ),
      { numRuns: propertyRuns(300) },
    );
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
      { numRuns: propertyRuns(300) },
    );
  });
});

/** Every line of `original` is in `trimmed` in order, or counted by the marker standing where it was, once. */
function expectEveryLineOnce(original: string, trimmed: string): void {
  const lines = original.split('\n');
  // A marker at the end stands for the last line's newline too.
  if (original.endsWith('\n') && !trimmed.endsWith('\n')) lines.pop();
  let at = 0;
  for (const line of trimmed.split('\n')) {
    const marker = /^\[… (\d+) lines? of this output archived(?:: h-[0-9a-f]+)? …\]$/.exec(line);
    if (marker !== null) at += Number(marker[1]);
    else {
      expect(lines[at]).toBe(line);
      at++;
    }
  }
  expect(at).toBe(lines.length);
}
