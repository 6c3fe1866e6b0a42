import { createRequire } from 'node:module';
import fc from 'fast-check';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it, vi } from 'vitest';
import { propertyRuns } from '../../test/support/property-runs.js';
import { InvalidArgumentError } from '../errors/index.js';
import { createO200kCounter, rememberO200kCount } from './o200k-counter.js';
import { o200kPiecePattern } from './split-long-pieces.js';

// The oracle: the package's ESM build, a separate instance from the CommonJS one the counter loads.
const plainText = { disallowedSpecial: new Set<string>() };
const bare = (text: string) => countTokens(text, plainText);

function seededText(length: number, alphabet: string, seed: number): string {
  let state = seed;
  let text = '';
  for (let index = 0; index < length; index++) {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    text += alphabet[(state >>> 16) % alphabet.length];
  }
  return text;
}

const variedTexts: Record<string, string> = {
  empty: '',
  prose: 'The quick brown fox jumps over the lazy dog. It was the best of times, it was the worst of times.',
  json: JSON.stringify({ id: 42, tags: ['a', 'b'], nested: { ok: true, value: null, ratio: 2.71 } }, null, 2),
  minifiedJson: JSON.stringify(
    Array.from({ length: 3000 }, (_, id) => ({ id, name: `user_${id}`, score: id / 7 })),
  ),
  code: 'export function add(a: number, b: number): number {\n  return a + b; // sum\n}\n\tconst x = [1, 2, 3].map((n) => n ** 2);\n',
  unicode: 'Ça va? Naïve café, Straße, ἀρχή, русский текст, עִבְרִית, العربية',
  emoji: 'Ship it 🚀🚀 — 👍🏽 ❤️ 👨‍👩‍👧‍👦 done ✅',
  cjk: '日本語のテキストと中文文本，还有한국어 텍스트。混在した文章です。',
  specialTokens: 'a model may quote <|endoftext|> or <|im_start|>user as plain text',
  whitespace: 'a\n\n\n   b\t\t c\r\n'.repeat(50),
  piecesJustUnderGuard: `${'z'.repeat(1000)}\n${'-'.repeat(999)}\n${' '.repeat(999)}x ${'q'.repeat(999)}`,
  runsOverGuardInShortPieces: `${' '.repeat(1500)}x`.replace(/ {500}/, ' '.repeat(499) + '\n'),
  base64: Buffer.from(seededText(150_000, 'abcdefghijklmnopqrstuvwxyz0123456789 ', 7)).toString('base64'),
  mixedCaseLetters: seededText(20_000, 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', 3),
};

describe('createO200kCounter', () => {
  // Must run before anything in this file counts: the vocabulary loads on first count, not on creation.
  it('loads the vocabulary lazily, on the first count', () => {
    const require = createRequire(import.meta.url);
    const modulePath = require.resolve('gpt-tokenizer/encoding/o200k_base');
    const counter = createO200kCounter();
    expect(require.cache[modulePath]).toBeUndefined();
    expect(counter.count('hello world')).toBe(2);
    expect(require.cache[modulePath]).toBeDefined();
    expect(counter.encodingName).toBe('o200k_base');
  });

  it.each(Object.entries(variedTexts))('counts %s exactly like the bare encoder', (_name, text) => {
    expect(createO200kCounter().count(text)).toBe(bare(text));
  });

  it('counts encoded binary with the merge cache off, and turns it back on', () => {
    // The CommonJS instance the counter loads; its merge cache churns on random pieces.
    const encoding = createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as {
      setMergeCacheSize(size: number): void;
      DEFAULT_MERGE_CACHE_SIZE: number;
    };
    const setSize = vi.spyOn(encoding, 'setMergeCacheSize');
    try {
      const counter = createO200kCounter();
      const blob = Buffer.from(seededText(30_000, 'abcdefghijklmnopqrstuvwxyz0123456789 ', 5)).toString(
        'base64',
      );
      const hex = Buffer.from(seededText(10_000, 'abcdefghijklmnopqrstuvwxyz0123456789', 9)).toString('hex');
      for (const text of [`data:image/png;base64,${blob}\nok`, `sha dump: ${hex}`]) {
        setSize.mockClear();
        expect(counter.count(text)).toBe(bare(text));
        expect(setSize.mock.calls).toEqual([[0], [encoding.DEFAULT_MERGE_CACHE_SIZE]]);
      }
      // Long runs without the variety of random bytes, and ordinary long text, keep the cache.
      setSize.mockClear();
      for (const text of [
        'x'.repeat(40_000),
        'ab'.repeat(20_000),
        variedTexts.minifiedJson!,
        blob.slice(0, 16_000),
      ])
        expect(counter.count(text)).toBe(bare(text));
      expect(setSize).not.toHaveBeenCalled();
    } finally {
      setSize.mockRestore();
    }
  });

  it('finds a long text whose count was remembered, in every counter whose guard allows it', () => {
    const text = `${seededText(400, 'abcdefgh ', 11)} remembered`;
    const exact = bare(text);
    // A count vouched for elsewhere is taken as given: a wrong one shows it is looked up, not recounted.
    rememberO200kCount(text, exact + 1000);
    expect(createO200kCounter().count(text)).toBe(exact + 1000);
    expect(createO200kCounter({ longRunGuardChars: Number.POSITIVE_INFINITY }).count(text)).toBe(
      exact + 1000,
    );
    // A smaller guard may slice pieces the remembered count was taken whole on: it counts.
    expect(createO200kCounter({ longRunGuardChars: 500 }).count(text)).toBe(exact);
    rememberO200kCount(text, exact);
    // Short texts count faster than they are looked up: not remembered.
    rememberO200kCount('short text', 99);
    expect(createO200kCounter().count('short text')).toBe(bare('short text'));
  });

  it('property: equals the bare encoder on arbitrary strings', () => {
    const counter = createO200kCounter();
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => {
        expect(counter.count(text)).toBe(bare(text));
      }),
      { numRuns: propertyRuns(300) },
    );
  });

  it('property: the guard changes nothing unless one o200k piece is longer than the limit', () => {
    const runText = fc
      .array(fc.tuple(fc.constantFrom('a', 'Bc', '的', '=', '😀', ' ', '\n', '7', "'s"), fc.nat(30)), {
        maxLength: 20,
      })
      .map((runs) => runs.map(([unit, times]) => unit.repeat(times)).join(''));
    fc.assert(
      fc.property(runText, fc.integer({ min: 2, max: 40 }), (text, limit) => {
        const longest = Math.max(
          0,
          ...Array.from(text.matchAll(o200kPiecePattern), (match) => match[0].length),
        );
        fc.pre(longest <= limit);
        expect(createO200kCounter({ longRunGuardChars: limit }).count(text)).toBe(bare(text));
      }),
      { numRuns: propertyRuns(300) },
    );
  });

  it('counts 100k random letters in slices, within 0.1% of unguarded counts of 10k slices', () => {
    const text = seededText(100_000, 'abcdefghijklmnopqrstuvwxyz', 11);
    let unguarded = 0;
    for (let start = 0; start < text.length; start += 10_000)
      unguarded += bare(text.slice(start, start + 10_000));
    const guarded = createO200kCounter().count(text);
    expect(Math.abs(guarded - unguarded) / unguarded).toBeLessThan(0.001);
  });

  it('slices long whitespace and symbol runs too, and can be turned off', () => {
    const spaces = ' '.repeat(20_000);
    const guarded = createO200kCounter({ longRunGuardChars: 1000 }).count(spaces);
    const unguarded = createO200kCounter({ longRunGuardChars: Number.POSITIVE_INFINITY }).count(spaces);
    expect(unguarded).toBe(bare(spaces));
    expect(guarded).toBe(20 * bare(' '.repeat(1000)));
    const dashes = '-'.repeat(3000);
    expect(createO200kCounter({ longRunGuardChars: 1000 }).count(dashes)).toBe(3 * bare('-'.repeat(1000)));
  });

  it.each([0, 1, -5, 2.5, Number.NaN])('rejects longRunGuardChars %s', (value) => {
    expect(() => createO200kCounter({ longRunGuardChars: value })).toThrow(InvalidArgumentError);
  });
});
