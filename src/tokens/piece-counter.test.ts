import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { propertyRuns } from '../../test/support/property-runs.js';
import { asciiPiecePattern, createPieceCounter } from './piece-counter.js';
import { o200kPiecePattern } from './split-long-pieces.js';

// The oracle: the package's ESM build; the core comes from the CommonJS build, a separate instance.
const plainText = { disallowedSpecial: new Set<string>() };
const bare = (text: string) => countTokens(text, plainText);
const core = (
  createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as {
    default: { bytePairEncodingCoreProcessor: unknown };
  }
).default.bytePairEncodingCoreProcessor;

function pieceCounter() {
  const counter = createPieceCounter(core, bare);
  if (counter === undefined) throw new Error('gpt-tokenizer core not recognised');
  return (text: string, cache: boolean) => counter.count(text, cache);
}

const pieces = (text: string, pattern: RegExp) => Array.from(text.matchAll(pattern), (match) => match[0]);

/** Units that make o200k's pattern branch: case changes, contractions, digits, punctuation, every whitespace. */
const asciiUnits = [
  'a',
  'Z',
  'xy',
  'AB',
  'Cd',
  "'s",
  "'LL",
  "'re",
  "'",
  '7',
  '1234',
  ' ',
  '  ',
  '\t',
  '\n',
  '\r\n',
  '\n\n',
  '\v',
  '/',
  '.',
  '};',
  '-->',
  '_',
  '"',
];
/** The same with what ASCII lacks: accented, caseless and title-case letters, marks, digits, spaces, emoji. */
const unicodeUnits = [
  ...asciiUnits,
  'é',
  'Ç',
  'ǅ',
  'ß',
  '日本',
  'ー',
  '한',
  '\u0301',
  '٣',
  '\u00a0',
  '\u2028',
  '\u3000',
  '🚀',
  '👍🏽',
  '—',
  '…',
];
const textOf = (units: string[]) =>
  fc.array(fc.constantFrom(...units), { maxLength: 60 }).map((parts) => parts.join(''));

describe('createPieceCounter', () => {
  it('property: the ASCII pattern cuts ASCII text into the pieces the Unicode pattern does', () => {
    fc.assert(
      fc.property(
        fc.oneof(textOf(asciiUnits), fc.string({ unit: 'binary-ascii', maxLength: 80 })),
        (text) => {
          expect(pieces(text, asciiPiecePattern)).toEqual(pieces(text, o200kPiecePattern));
        },
      ),
      { numRuns: propertyRuns(2000) },
    );
  });

  it('property: counts like gpt-tokenizer, with and without remembering pieces', () => {
    const counter = pieceCounter();
    // Lines of ASCII and lines with other characters, so that texts switch patterns between regions.
    const mixedLines = fc
      .array(fc.oneof(textOf(asciiUnits), textOf(unicodeUnits)), { maxLength: 8 })
      .map((lines) => lines.join('\n'));
    fc.assert(
      fc.property(fc.oneof(mixedLines, fc.string({ unit: 'binary', maxLength: 200 })), (text) => {
        const expected = bare(text);
        expect(counter(text, true)).toBe(expected);
        expect(counter(text, false)).toBe(expected);
      }),
      { numRuns: propertyRuns(3000) },
    );
  });

  it('counts exactly after more distinct pieces than it remembers', () => {
    const counter = pieceCounter();
    const letters = 'abcdefghijklmnopqrstuvwxyz';
    const word = (index: number) => {
      let text = '';
      for (let rest = index + 1; rest > 0; rest = Math.floor(rest / 26)) text += letters[rest % 26];
      return text;
    };
    const text = Array.from({ length: 70_000 }, (_, index) => word(index)).join(' ');
    expect(counter(text, true)).toBe(bare(text));
    expect(counter(text, true)).toBe(bare(text));
    expect(counter(text, false)).toBe(bare(text));
  });

  it('keeps no counted text alive through the pieces it (or gpt-tokenizer) remembers', () => {
    setFlagsFromString('--expose-gc');
    const collectGarbage = runInNewContext('gc') as () => void;
    const counter = pieceCounter();
    counter('warm up', true);
    collectGarbage();
    const before = process.memoryUsage().heapUsed;
    // 100 texts of 200 KB, each with a piece of 20 letters that neither the vocabulary nor any cache has.
    for (let index = 0; index < 100; index++) {
      const rare = Array.from(index.toString(5).padStart(20, '0'), (digit) => 'qxzjv'[Number(digit)]).join(
        '',
      );
      counter(`${' filler'.repeat(28_000)} ${rare}`, true);
    }
    collectGarbage();
    // Kept as matched, the 20-letter pieces (views into their texts) would keep 20 MB alive.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(5_000_000);
  });

  it('is not made from a core it cannot read, or one that counts a sample differently', () => {
    expect(createPieceCounter(undefined, bare)).toBeUndefined();
    expect(createPieceCounter({}, bare)).toBeUndefined();
    // The same core, but for its pre-tokenizer pattern: another encoding's.
    const otherPattern = Object.create(core as object, { tokenSplitRegex: { value: /\S+|\s+/gu } });
    expect(createPieceCounter(otherPattern, bare)).toBeUndefined();
    expect(createPieceCounter(core, (text) => bare(text) + 1)).toBeUndefined();
    expect(createPieceCounter(core, bare)?.count('hello world', true)).toBe(2);
  });
});
