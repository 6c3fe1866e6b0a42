/**
 * The long-run guard. BPE merging is quadratic in the length of one pre-tokenizer piece, and o200k's
 * pre-tokenizer makes three kinds of piece with no length limit: letter runs (one case, or caseless scripts
 * such as CJK; a change from lower to upper case starts a new piece), runs of punctuation / symbols / emoji,
 * and whitespace runs. 100k such characters take 7-20 s to count (see bench/tokens.bench.mjs). Digit pieces
 * are at most three long, and base64 or minified JSON are broken into short pieces by digits and punctuation,
 * so they never reach the guard and keep their exact counts.
 */

// What a UTF-16 code unit continues: a letter run (letters and marks), a symbol run (anything but letters,
// numbers and whitespace; marks too) or a whitespace run. A number continues nothing. A surrogate continues
// everything: astral characters are not classified, which keeps the scan a superset test.
const letterRun = 1;
const symbolRun = 2;
const spaceRun = 4;
const runKinds = [letterRun, symbolRun, spaceRun];
let runClasses: Uint8Array | undefined;

/** Built once, on first use, from the Unicode classes o200k's pre-tokenizer uses (about 15 ms of CPU). */
function classes(): Uint8Array {
  if (runClasses !== undefined) return runClasses;
  const table = new Uint8Array(0x10000).fill(symbolRun);
  table.fill(letterRun | symbolRun | spaceRun, 0xd800, 0xe000);
  const codeUnits = new Uint16Array(0x10000);
  for (let code = 0; code < codeUnits.length; code++) codeUnits[code] = code;
  let everyCodeUnit = '';
  for (let start = 0; start < codeUnits.length; start += 0x1000) {
    everyCodeUnit += String.fromCharCode(...codeUnits.subarray(start, start + 0x1000));
  }
  const patterns: Array<[RegExp, number]> = [
    [/\p{L}+/gu, letterRun],
    [/\p{M}+/gu, letterRun | symbolRun],
    [/\p{N}+/gu, 0],
    [/\s+/gu, spaceRun],
  ];
  for (const [pattern, value] of patterns) {
    for (const match of everyCodeUnit.matchAll(pattern))
      table.fill(value, match.index, match.index + match[0].length);
  }
  runClasses = table;
  return table;
}

/**
 * True when `text` may hold a run of more than `maxRunChars` code units of one piece class (letters,
 * symbols, whitespace). Any such run covers a multiple of `maxRunChars`, so only the runs through those
 * positions are measured: on ordinary text that reads a few characters per `maxRunChars`, and never more than
 * a few passes over the text. Only texts that pass are searched for long o200k pieces.
 */
export function mayHaveLongRun(text: string, maxRunChars: number): boolean {
  if (text.length <= maxRunChars) return false;
  const table = classes();
  for (let sample = maxRunChars; sample < text.length; sample += maxRunChars) {
    const runs = table[text.charCodeAt(sample)]!;
    for (const run of runKinds) {
      if ((runs & run) === 0) continue;
      let start = sample;
      while (start > 0 && sample - start <= maxRunChars && table[text.charCodeAt(start - 1)]! & run) start--;
      let end = sample + 1;
      while (end < text.length && end - start <= maxRunChars && table[text.charCodeAt(end)]! & run) end++;
      if (end - start > maxRunChars) return true;
    }
  }
  return false;
}

/**
 * o200k_base's pre-tokenizer (tiktoken's published pattern, as in gpt-tokenizer's `O200K_TOKEN_SPLIT_PATTERN`).
 * BPE runs on each piece it yields, so cutting text at its piece boundaries keeps counts exact.
 */
/** The English contractions o200k's letter pieces may end with (`'s`, `'LL`), as a regex source. */
export const contraction = "'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE])";
export const o200kPiecePattern = new RegExp(
  [
    String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:${contraction})?`,
    String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:${contraction})?`,
    String.raw`\p{N}{1,3}`,
    String.raw` ?[^\s\p{L}\p{N}]+[\r\n/]*`,
    String.raw`\s*[\r\n]+`,
    String.raw`\s+(?!\S)`,
    String.raw`\s+`,
  ].join('|'),
  'gu',
);

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * Cuts `text` into parts to count separately. When the text holds a run longer than `maxRunChars` (see
 * `mayHaveLongRun`), every o200k piece longer than `maxRunChars` is cut out and sliced into parts of at most
 * `maxRunChars` characters (never inside a surrogate pair); the text around it stays whole and keeps its exact
 * count, because the cuts fall on piece boundaries. The parts joined give `text` back.
 */
export function splitLongPieces(text: string, maxRunChars: number): string[] {
  if (!mayHaveLongRun(text, maxRunChars)) return [text];
  const pieces: string[] = [];
  let position = 0;
  for (const match of text.matchAll(o200kPiecePattern)) {
    if (match[0].length <= maxRunChars) continue;
    const runStart = match.index;
    const runEnd = runStart + match[0].length;
    if (runStart > position) pieces.push(text.slice(position, runStart));
    for (let start = runStart; start < runEnd; ) {
      let end = Math.min(start + maxRunChars, runEnd);
      if (end < runEnd && isHighSurrogate(text.charCodeAt(end - 1))) end--;
      pieces.push(text.slice(start, end));
      start = end;
    }
    position = runEnd;
  }
  if (position < text.length) pieces.push(text.slice(position));
  return pieces;
}
