/**
 * Counting identifier-like tokens in a line (paths, URLs, code spans, hashes, issue numbers, snake/camel case,
 * numbers with units): how the summary tells a line worth quoting from prose.
 */

/** Identifier-like tokens: paths, URLs, code spans, hashes, issue numbers, snake/camel case, numbers with units. */
const factAlternatives = [
  /https?:\/\/\S+/,
  /[\w.@-]*\/[\w.@/-]+/,
  /`[^`\n]+`/,
  /\b[0-9a-f]{7,40}\b/,
  /#\d+/,
  /\b\w+_\w+\b/,
  /\b[a-z]+[A-Z]\w*\b/,
  /\b[A-Z]{2,}\w*\b/,
  /\b\d+(?:\.\d+)?\s*(?:passed|failed|tests?|errors?|files?|ms|s)\b/,
  /\w+\(\)/,
  /\b\w+\.\w{1,5}\b/,
  /--?[a-z][\w-]+/,
].map((alternative) => alternative.source);
/** The alternatives, tried at one position. */
const factAt = new RegExp(factAlternatives.join('|'), 'y');
/**
 * The same, for a position after one where nothing matched: the two alternatives that scan a run before their
 * delimiter (`path/…`, `name()`) are tried only from the start of a run, because from inside one they match
 * exactly when they matched at the previous character, which was tried already and did not match.
 */
const factAfterMiss = new RegExp(
  factAlternatives
    .map((alternative, index) =>
      index === 1 ? `(?<![\\w.@-])${alternative}` : index === 9 ? `(?<!\\w)${alternative}` : alternative,
    )
    .join('|'),
  'y',
);
const wordCharacter = 1;
/** Characters some alternative starts with even inside a word (`https://`, and the punctuation ones). */
const startCharacter = 2;
const factCharacters = new Uint8Array(128);
for (let code = 0; code < 128; code++) {
  const character = String.fromCharCode(code);
  if (/\w/.test(character)) factCharacters[code]! |= wordCharacter;
  if (/[h.@/`#-]/.test(character)) factCharacters[code]! |= startCharacter;
}

/**
 * How many identifier-like tokens `text` holds: as many as a global pattern of the alternatives above matches,
 * found without trying each alternative at each character. After a position where nothing matched, only
 * positions where an alternative can start are tried: a word's first character (every other alternative
 * starts at a word boundary, or past a run, see `factAfterMiss`) and the characters in `startCharacter`; and
 * a plain word (see `plainWordEnd`) is passed over whole. Exported for its tests.
 */
export function countFacts(text: string): number {
  let count = 0;
  let position = 0;
  search: while (position < text.length) {
    factAt.lastIndex = position;
    if (factAt.test(text)) {
      count++;
      position = factAt.lastIndex;
      continue;
    }
    let previous = characterClass(text, position);
    for (let next = position + 1; next < text.length; next++) {
      const current = characterClass(text, next);
      const wordStart = (current & wordCharacter) !== 0 && (previous & wordCharacter) === 0;
      if (wordStart) {
        const end = plainWordEnd(text, next);
        if (end !== undefined) {
          next = end - 1;
          previous = wordCharacter;
          continue;
        }
      }
      if (wordStart || (current & startCharacter) !== 0) {
        factAfterMiss.lastIndex = next;
        if (factAfterMiss.test(text)) {
          count++;
          position = factAfterMiss.lastIndex;
          continue search;
        }
      }
      previous = current;
    }
    break;
  }
  return count;
}

function characterClass(text: string, index: number): number {
  const code = text.charCodeAt(index);
  return code < 128 ? factCharacters[code]! : 0;
}

/** Characters after a word that an alternative goes on with: `.` `@` `-` `/` (paths, names), `(` (calls), `:` (URLs). */
const continuingCharacters = new Set(
  ['.', '@', '-', '/', '(', ':'].map((character) => character.charCodeAt(0)),
);

/**
 * The end of the word at `start` when no alternative matches at any of its characters, else undefined: a word
 * of ASCII letters, lower case after the first (not camel case, not an acronym), no digit or `_`, not a hex
 * hash, and not followed by a character in `continuingCharacters`. Most prose words are plain.
 */
function plainWordEnd(text: string, start: number): number | undefined {
  let end = start;
  let hexDigitsOnly = true;
  for (; end < text.length; end++) {
    const code = text.charCodeAt(end);
    if (code >= 97 && code <= 122) {
      if (code > 102) hexDigitsOnly = false;
    } else if (end === start && code >= 65 && code <= 90) hexDigitsOnly = false;
    else if ((characterClass(text, end) & wordCharacter) !== 0) return undefined;
    else break;
  }
  if (hexDigitsOnly && end - start >= 7) return undefined;
  return end < text.length && continuingCharacters.has(text.charCodeAt(end)) ? undefined : end;
}
