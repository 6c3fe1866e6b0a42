import { contraction, o200kPiecePattern } from './split-long-pieces.js';

/**
 * Counting o200k tokens faster than gpt-tokenizer's `countTokens`, with its vocabulary and its BPE, and the
 * same counts. `countTokens` cuts the text with o200k's pre-tokenizer pattern and looks every piece up in the
 * 200k-entry vocabulary (BPE-merging the pieces that are not in it); on agent transcripts the pattern and the
 * lookups each take about half the time. Here:
 * - pieces are counted through a small map of recent pieces (transcripts repeat their words, paths and
 *   indentation: most lookups hit a map that stays in the CPU's caches), and a one-character ASCII piece is
 *   one token without a lookup;
 * - ASCII text is cut with the same pattern written for ASCII (no Unicode property classes, no `u` flag),
 *   which V8 runs about twice as fast. A text with non-ASCII characters is cut into regions where no piece
 *   can cross (see `nextSafeCut`), and each region takes the pattern it can.
 * BPE runs on each piece alone, so the count of a text is the sum of its pieces' counts either way.
 */

/** What the piece counter reads of gpt-tokenizer's BPE core (`BytePairEncodingCore`, gpt-tokenizer 4.0.0). */
interface BpeCore {
  tokenSplitRegex: RegExp;
  bytePairStringRankEncoder: Map<string, number>;
  bytePairEncode(piece: string): number[];
}

function isBpeCore(value: unknown): value is BpeCore {
  if (typeof value !== 'object' || value === null) return false;
  const core = value as Partial<BpeCore>;
  return (
    core.tokenSplitRegex instanceof RegExp &&
    core.bytePairStringRankEncoder instanceof Map &&
    typeof core.bytePairEncode === 'function'
  );
}

/**
 * `o200kPiecePattern` for text without non-ASCII characters: there `\p{L}` is `[A-Za-z]` (upper case `[A-Z]`,
 * lower case `[a-z]`; no ASCII character is a title-case, modifier or other letter, or a mark) and `\p{N}` is
 * `[0-9]`. Tested to cut like the Unicode pattern on ASCII text.
 */
export const asciiPiecePattern = new RegExp(
  [
    `[^\\r\\nA-Za-z0-9]?[A-Z]*[a-z]+(?:${contraction})?`,
    `[^\\r\\nA-Za-z0-9]?[A-Z]+[a-z]*(?:${contraction})?`,
    '[0-9]{1,3}',
    ' ?[^\\sA-Za-z0-9]+[\\r\\n/]*',
    '\\s*[\\r\\n]+',
    '\\s+(?!\\S)',
    '\\s+',
  ].join('|'),
  'g',
);

const nonAsciiCharacter = /[^\x00-\x7f]/g;
/** What a piece ending in a newline may run on into: whitespace, `/` (after punctuation), more newlines. */
const continuesPiece = /[\s/]/;

/** Distinct pieces remembered; cleared when full (a clear costs less than evicting one by one). */
const maxCachedPieces = 65_536;

/**
 * V8 makes a substring this long a view into the string it was cut from: a piece remembered as it was matched
 * would keep the whole text it came from (a tool output) alive for as long as it is remembered.
 */
const minSlicedLength = 13;

/** A copy of `piece` that does not keep the text it was cut from alive. */
function detached(piece: string): string {
  // The concatenation is flattened into a new string when the map hashes it; the slice is a view into that.
  return ` ${piece}`.slice(1);
}

export interface PieceCounter {
  /**
   * `text`'s tokens; the pieces counted are remembered only with `cache` (text that is mostly new pieces, such
   * as encoded binary, is best counted without).
   */
  count(text: string, cache: boolean): number;
  /** Forgets the pieces remembered (for timing cold counts). */
  clear(): void;
}

/**
 * A counter of o200k tokens built on gpt-tokenizer's BPE core, or undefined when `core` is not what it reads
 * (another gpt-tokenizer version) or does not count a sample of every kind of piece like `check` (gpt-tokenizer's
 * own count): the caller then counts with gpt-tokenizer itself.
 */
export function createPieceCounter(core: unknown, check: (text: string) => number): PieceCounter | undefined {
  if (!isBpeCore(core) || core.tokenSplitRegex.source !== o200kPiecePattern.source) return undefined;
  const ranks = core.bytePairStringRankEncoder;
  const unicodePattern = new RegExp(o200kPiecePattern.source, 'gu');
  const pieces = new Map<string, number>();

  // gpt-tokenizer remembers the merges of a piece outside its vocabulary under the piece, and this counter
  // remembers its count: both keep one detached copy.
  const ownPiece = (piece: string): string => (piece.length < minSlicedLength ? piece : detached(piece));
  const newPieceTokens = (own: string): number => (ranks.has(own) ? 1 : core.bytePairEncode(own).length);
  const pieceTokens = (piece: string, cache: boolean): number => {
    if (!cache) return newPieceTokens(ownPiece(piece));
    let tokens = pieces.get(piece);
    if (tokens === undefined) {
      const own = ownPiece(piece);
      tokens = newPieceTokens(own);
      if (pieces.size >= maxCachedPieces) pieces.clear();
      pieces.set(own, tokens);
    }
    return tokens;
  };

  const countWith = (pattern: RegExp, text: string, cache: boolean): number => {
    let total = 0;
    pattern.lastIndex = 0;
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      const piece = match[0];
      // Every ASCII character is a token of its own in o200k.
      if (piece.length === 1 && piece.charCodeAt(0) < 0x80) total++;
      else total += pieceTokens(piece, cache);
    }
    return total;
  };

  const count = (text: string, cache: boolean): number => {
    nonAsciiCharacter.lastIndex = 0;
    let nextNonAscii = nonAsciiCharacter.exec(text)?.index ?? text.length;
    if (nextNonAscii === text.length) return countWith(asciiPiecePattern, text, cache);
    // Stretches between safe cuts, gathered into regions: ASCII ones, and ones with a non-ASCII character.
    let total = 0;
    let regionStart = 0;
    let regionAscii = true;
    let stretchStart = 0;
    while (stretchStart < text.length) {
      const stretchEnd = nextSafeCut(text, stretchStart);
      const stretchAscii = nextNonAscii >= stretchEnd;
      if (stretchAscii !== regionAscii) {
        if (stretchStart > regionStart)
          total += countRegion(text.slice(regionStart, stretchStart), regionAscii, cache);
        regionStart = stretchStart;
        regionAscii = stretchAscii;
      }
      stretchStart = stretchEnd;
      if (nextNonAscii < stretchStart) {
        nonAsciiCharacter.lastIndex = stretchStart;
        nextNonAscii = nonAsciiCharacter.exec(text)?.index ?? text.length;
      }
    }
    return total + countRegion(text.slice(regionStart), regionAscii, cache);
  };
  const countRegion = (region: string, ascii: boolean, cache: boolean) =>
    countWith(ascii ? asciiPiecePattern : unicodePattern, region, cache);

  const sample = [
    "Don't WE'LL they'RE HTTPServer fooBar x ABCdef 12345 3.14 ",
    'a  \n  b\t\t\r\n\r\n  \n/usr/bin }\n\n/x ;;\n',
    'Ça va? naïve Straße русский 日本語のテキスト 한국어 🚀👍🏽 ✅ e\u0301 \u00a0nbsp\u2028x ',
    '<|endoftext|> <|im_start|>user',
  ].join('\n');
  return count(sample, false) === check(sample) ? { count, clear: () => pieces.clear() } : undefined;
}

/**
 * The first point after `start` where no o200k piece crosses: after a newline that is followed by neither
 * whitespace nor `/` (or the end of the text). A piece holding a newline is whitespace (which stops before a
 * non-space) or punctuation followed by newlines and `/` (`};\n\n`), and no piece starts with a newline and
 * goes on past it; so the text cut at such points counts as the sum of its parts.
 */
function nextSafeCut(text: string, start: number): number {
  for (let newline = text.indexOf('\n', start); newline !== -1; newline = text.indexOf('\n', newline + 1)) {
    const next = newline + 1;
    if (next < text.length && !continuesPiece.test(text[next]!)) return next;
  }
  return text.length;
}
