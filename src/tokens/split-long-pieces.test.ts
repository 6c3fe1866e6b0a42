import fc from 'fast-check';
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';
import { describe, expect, it } from 'vitest';
import { propertyRuns } from '../../test/support/property-runs.js';
import { mayHaveLongRun, o200kPiecePattern, splitLongPieces } from './split-long-pieces.js';

const longRun = (limit: number) =>
  new RegExp(`[\\p{L}\\p{M}]{${limit + 1},}|[^\\s\\p{L}\\p{N}]{${limit + 1},}|\\s{${limit + 1},}`, 'u');
const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const longestPiece = (text: string) =>
  Math.max(0, ...Array.from(text.matchAll(o200kPiecePattern), (match) => match[0].length));

function seededText(length: number, alphabet: string, seed: number): string {
  let state = seed;
  let text = '';
  for (let index = 0; index < length; index++) {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    text += alphabet[(state >>> 16) % alphabet.length];
  }
  return text;
}

/** Text made of runs of a few characters chosen to produce long o200k pieces of every kind. */
const runText = fc
  .array(
    fc.tuple(
      fc.constantFrom('a', 'B', 'é', '的', '=', '😀', '❤️', ' ', '\n', '7', '\u0301', "'ll", '/'),
      fc.nat(40),
    ),
    { maxLength: 30 },
  )
  .map((runs) => runs.map(([unit, times]) => unit.repeat(times)).join(''));

describe('splitLongPieces', () => {
  it('uses exactly the pre-tokenizer pattern of gpt-tokenizer o200k_base', () => {
    expect(o200kPiecePattern.source).toBe(O200K_TOKEN_SPLIT_REGEX.source);
    expect(o200kPiecePattern.flags).toBe(O200K_TOKEN_SPLIT_REGEX.flags);
  });

  it('keeps text without long runs whole', () => {
    const text = `${'word '.repeat(500)}\n${'x'.repeat(1000)} {"a":1}`;
    expect(splitLongPieces(text, 1000)).toEqual([text]);
  });

  it('keeps a long mixed-case letter run whole: case changes already break it into short pieces', () => {
    const text = seededText(20_000, 'abcdefghijABCDEFGHIJ', 5);
    expect(mayHaveLongRun(text, 1000)).toBe(true);
    expect(splitLongPieces(text, 1000)).toEqual([text]);
  });

  it.each([
    ['lower-case letters', 'a'.repeat(2500)],
    ['upper-case letters', 'Q'.repeat(2500)],
    ['CJK', '的一是不了人我在有他'.repeat(250)],
    ['punctuation', '='.repeat(2500)],
    ['emoji (surrogate pairs)', '😀🎉🔥'.repeat(500)],
    ['emoji with variation selectors', '❤️'.repeat(1200)],
    ['spaces', ' '.repeat(2500)],
    ['newlines', '\n'.repeat(2500)],
    ['punctuation followed by newlines', `!${'\n'.repeat(2500)}`],
  ])('slices a long piece of %s and nothing around it', (_name, run) => {
    const text = `before ${run} after`;
    const pieces = splitLongPieces(text, 1000);
    expect(pieces.length).toBeGreaterThan(3);
    expect(pieces.join('')).toBe(text);
    expect(pieces[0]?.startsWith('before')).toBe(true);
    for (const piece of pieces) {
      expect(piece.length).toBeLessThanOrEqual(1000);
      expect(loneSurrogate.test(piece)).toBe(false);
    }
  });

  it('leaves base64 and minified JSON alone: digits and punctuation break their pieces', () => {
    const bytes = new Uint8Array(300_000);
    for (let index = 0; index < bytes.length; index++) bytes[index] = (index * 7919 + (index >> 3)) & 255;
    const base64 = Buffer.from(bytes).toString('base64');
    const json = JSON.stringify(
      Array.from({ length: 5000 }, (_, index) => ({ id: index, name: seededText(12, 'abcdefgh', index) })),
    );
    expect(mayHaveLongRun(base64, 1000)).toBe(false);
    expect(mayHaveLongRun(json, 1000)).toBe(false);
    expect(splitLongPieces(base64, 1000)).toEqual([base64]);
  });

  it('property: parts rebuild the text, split no surrogate pair, and hold no piece over the limit', () => {
    fc.assert(
      fc.property(runText, fc.integer({ min: 2, max: 24 }), (input, limit) => {
        const parts = splitLongPieces(input, limit);
        expect(parts.join('')).toBe(input);
        for (const part of parts) expect(loneSurrogate.test(part)).toBe(false);
        if (mayHaveLongRun(input, limit)) {
          // o200k cuts digits into pieces of up to 3 (`\p{N}{1,3}`): no guard goes below that.
          for (const part of parts) expect(longestPiece(part)).toBeLessThanOrEqual(Math.max(limit, 3));
        }
      }),
      { numRuns: propertyRuns(500) },
    );
  });

  it('property: the fast scan never misses a run the Unicode classes find', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 200 }),
        fc.integer({ min: 2, max: 12 }),
        (input, limit) => {
          if (longRun(limit).test(input)) expect(mayHaveLongRun(input, limit)).toBe(true);
        },
      ),
      { numRuns: propertyRuns(1000) },
    );
  });
});
