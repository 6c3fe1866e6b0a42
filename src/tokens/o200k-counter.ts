import { createRequire } from 'node:module';
import { InvalidArgumentError } from '../errors/index.js';
import { createPieceCounter, type PieceCounter } from './piece-counter.js';
import { mayHaveLongRun, splitLongPieces } from './split-long-pieces.js';
import type { TokenCounter } from './token-counter.js';

/** The part of `gpt-tokenizer/encoding/o200k_base` we use. */
interface O200kEncoding {
  countTokens(text: string, options: { disallowedSpecial: Set<string> }): number;
  setMergeCacheSize(size: number): void;
  DEFAULT_MERGE_CACHE_SIZE: number;
  clearMergeCache(): void;
  /** The encoding object; its BPE core is what `createPieceCounter` reads. */
  default?: { bytePairEncodingCoreProcessor?: unknown };
}

export interface O200kCounterOptions {
  /**
   * Letter, symbol and whitespace runs longer than this many characters are counted in slices of this size,
   * because BPE is quadratic in the length of one run. Text without such runs is counted exactly; a guarded
   * 100k-letter run differs from the unguarded count by about 0.03%. `Infinity` turns the guard off.
   * @default 1000
   */
  longRunGuardChars?: number;
}

const require = createRequire(import.meta.url);
// Text such as "<|endoftext|>" in a message is plain text to the model, not a control token; gpt-tokenizer
// throws on it by default.
const plainTextOptions = { disallowedSpecial: new Set<string>() };

let encoding:
  | { encoder: O200kEncoding; countText: (text: string, cache: boolean) => number; pieces?: PieceCounter }
  | undefined;

/**
 * Loaded on first use, through the package's CommonJS build so `count()` stays synchronous: the vocabulary
 * takes about 200-300 ms to load, which importing precis or running `precis --help` should not pay. Texts are
 * counted by the piece counter on the encoding's BPE core, or by the encoding itself where that cannot be had.
 */
function loadEncoding(): NonNullable<typeof encoding> {
  if (encoding === undefined) {
    const encoder = require('gpt-tokenizer/encoding/o200k_base') as O200kEncoding;
    const bare = (text: string) => encoder.countTokens(text, plainTextOptions);
    const pieces = createPieceCounter(encoder.default?.bytePairEncodingCoreProcessor, bare);
    encoding =
      pieces === undefined
        ? { encoder, countText: bare }
        : { encoder, countText: (text, cache) => pieces.count(text, cache), pieces };
  }
  return encoding;
}

/** Empties what o200k counting remembers (gpt-tokenizer's merge cache, the piece counts): for timing cold counts. */
export function clearO200kCaches(): void {
  encoding?.encoder.clearMergeCache();
  encoding?.pieces?.clear();
}

/**
 * A run this long of base64 / hex characters is encoded binary: nearly every BPE piece in it is new, and
 * gpt-tokenizer's merge cache, once full, evicts one entry per piece at a cost that grows with the churn (a
 * 4 MB base64 blob took 19 s to count with the cache and 3.6 s without). Such texts are counted without the
 * cache; the counts are the same, and the cache starts empty afterwards.
 */
const blobRunChars = 16_384;

/** Base64 (standard and URL-safe) and hex characters, as a regex character class. */
const blobClass = 'A-Za-z0-9+/=_-';
/** 256 such characters: a window of what may be encoded binary. */
const blobWindow = new RegExp(`^[${blobClass}]{256}$`);
/** The same characters by code, for measuring a run character by character. */
const blobCharacters = new Uint8Array(128).map((_, code) =>
  new RegExp(`[${blobClass}]`).test(String.fromCharCode(code)) ? 1 : 0,
);

function isBlobCharacter(code: number): boolean {
  return code < 128 && blobCharacters[code] === 1;
}

/**
 * Whether `text` holds encoded binary: a run of base64 / hex characters at least `blobRunChars` long with the
 * variety of random bytes (a run of one repeated letter is cached well: every slice the long-run guard cuts is
 * the same). Every such run covers a sample taken each half run; a sample is looked at through a window of 256
 * characters, and the run around it measured only when the window looks random, and only up to `blobRunChars`.
 */
function holdsEncodedBinary(text: string): boolean {
  const step = blobRunChars / 2;
  for (let sample = step; sample + 256 <= text.length; sample += step) {
    const window = text.slice(sample, sample + 256);
    if (!blobWindow.test(window) || new Set(window).size < 12) continue;
    let start = sample;
    let end = sample + 256;
    while (end - start < blobRunChars && start > 0 && isBlobCharacter(text.charCodeAt(start - 1))) start--;
    while (end - start < blobRunChars && end < text.length && isBlobCharacter(text.charCodeAt(end))) end++;
    if (end - start >= blobRunChars) return true;
  }
  return false;
}

function countWithoutMergeCache(encoder: O200kEncoding, count: () => number): number {
  encoder.setMergeCacheSize(0);
  try {
    return count();
  } finally {
    encoder.setMergeCacheSize(encoder.DEFAULT_MERGE_CACHE_SIZE);
  }
}

/** The default long-run guard; the known counts hold for it (and any larger one). */
const defaultLongRunGuardChars = 1000;

/**
 * Exact counts of long texts that were worked out without counting them whole (a summary renderer composes
 * its text's count from its lines' counts): counting such a text again, as the token accountant does when the
 * text becomes a message, finds it here. Few and recent: a fold renders a handful of texts it keeps.
 */
const knownCounts = new Map<string, number>();
const maxKnownCounts = 32;
/** Shorter texts count faster than a lookup of a long key pays for. */
const minKnownCountLength = 256;

/**
 * Records `tokens` as the exact `o200k_base` count of `text` (with the default long-run guard) for every
 * o200k counter to find, when `text` is long enough to be worth remembering. The caller vouches for the count.
 */
export function rememberO200kCount(text: string, tokens: number): void {
  if (text.length < minKnownCountLength) return;
  knownCounts.delete(text);
  knownCounts.set(text, tokens);
  if (knownCounts.size > maxKnownCounts) knownCounts.delete(knownCounts.keys().next().value as string);
}

/** Exact token counts in OpenAI's `o200k_base` vocabulary (GPT-4o, GPT-4.1, o-series, GPT-5). */
export function createO200kCounter(options: O200kCounterOptions = {}): TokenCounter {
  const { longRunGuardChars = defaultLongRunGuardChars } = options;
  if (
    !(
      longRunGuardChars === Number.POSITIVE_INFINITY ||
      (Number.isInteger(longRunGuardChars) && longRunGuardChars >= 2)
    )
  ) {
    throw new InvalidArgumentError(
      'longRunGuardChars',
      `expected an integer of at least 2 or Infinity, got ${longRunGuardChars}`,
    );
  }
  // A guard below the known counts' would cut pieces they were counted whole in.
  const consultKnown = longRunGuardChars >= defaultLongRunGuardChars;
  return {
    encodingName: 'o200k_base',
    count(text: string): number {
      if (text.length === 0) return 0;
      if (consultKnown && text.length >= minKnownCountLength) {
        const known = knownCounts.get(text);
        if (known !== undefined) return known;
      }
      const { encoder, countText } = loadEncoding();
      // Encoded binary is nearly all new pieces: remembering them would only churn the caches.
      const binary = holdsEncodedBinary(text);
      const countAll = () => {
        if (!mayHaveLongRun(text, longRunGuardChars)) return countText(text, !binary);
        let total = 0;
        for (const piece of splitLongPieces(text, longRunGuardChars)) total += countText(piece, !binary);
        return total;
      };
      return binary ? countWithoutMergeCache(encoder, countAll) : countAll();
    },
  };
}
