import { InvalidArgumentError } from '../../errors/index.js';
import { checkShare } from '../strategy-support.js';

export interface FindNearDuplicatesOptions {
  /** Estimated Jaccard similarity of word shingles at or above which two texts are near-duplicates. @default 0.9 */
  similarity?: number;
  /**
   * A group per text (e.g. `tool:read_file`): near-duplicates are only looked for within a group; exact copies
   * match across groups. Texts without a group form one group.
   */
  groups?: readonly (string | undefined)[];
  /** Indexes of texts that are never reported as duplicates, though other texts may duplicate them. @default [] */
  protectedIndexes?: readonly number[];
  /** MinHash functions per signature (more: a finer similarity estimate, slower). @default 128 */
  hashCount?: number;
  /** Words per shingle. @default 5 */
  shingleSize?: number;
  /**
   * Per text, the object it was read from (its message or content part), where there is one: a text read again
   * from the same object is not normalised and signed again while it is the same text. A strategy run on a
   * conversation that grew by a few messages reads mostly the texts it read before. @default none
   */
  sources?: readonly (object | undefined)[];
}

export interface NearDuplicate {
  /** The earlier text. */
  index: number;
  /** The later text it duplicates, which is itself never a duplicate: the copy that is kept. */
  duplicateOf: number;
  /** 1 for an exact copy (after whitespace normalisation), otherwise the MinHash estimate, capped below 1. */
  similarity: number;
}

/**
 * Finds the texts that are exact or near copies of a later text, without comparing all pairs: an exact pass on
 * whitespace-normalised text, then MinHash signatures over word shingles and LSH banding for candidates,
 * verified by the estimated Jaccard similarity of their signatures. Texts are visited from the last to the
 * first; a text is a duplicate of the latest kept text it resembles, so every `duplicateOf` names a kept text
 * and the newest copy of anything is the one kept. Empty texts are ignored. Sorted by `index`.
 */
export function findNearDuplicates(
  texts: readonly string[],
  options: FindNearDuplicatesOptions = {},
): NearDuplicate[] {
  const {
    similarity = 0.9,
    groups = [],
    protectedIndexes = [],
    hashCount = 128,
    shingleSize = 5,
    sources = [],
  } = options;
  checkShare('similarity', similarity);
  if (!Number.isInteger(hashCount) || hashCount < 8 || hashCount > 1024)
    throw new InvalidArgumentError('hashCount', `must be an integer from 8 to 1024, got ${hashCount}`);
  if (!Number.isInteger(shingleSize) || shingleSize < 1)
    throw new InvalidArgumentError('shingleSize', `must be a positive integer, got ${shingleSize}`);

  const isProtected = new Set(protectedIndexes);
  const { bands, rows } = bandLayout(hashCount, similarity);
  const seeds = permutationSeeds(hashCount);
  const latestExact = new Map<string, number>();
  // Per group, per band: band hash → kept indexes (only kept texts are ever indexed, so candidates are kept).
  const bandIndexes = new Map<string, Map<number, number[]>[]>();
  const signatures: (Uint32Array | undefined)[] = new Array(texts.length);
  const duplicates: NearDuplicate[] = [];
  // A kept text is only ever looked up by a removable text before it, so protected texts before the first
  // removable one are not read at all, and one with no removable text of its group before it is not signed (a
  // summary or a task: long, and new on every compaction).
  let firstRemovable = texts.length;
  const firstRemovableOfGroup = new Map<string, number>();
  for (let index = texts.length - 1; index >= 0; index--) {
    if (isProtected.has(index)) continue;
    firstRemovable = index;
    firstRemovableOfGroup.set(groups[index] ?? '', index);
  }

  for (let index = texts.length - 1; index >= firstRemovable; index--) {
    const signed = signedText(texts[index] ?? '', sources[index], shingleSize, hashCount);
    const { normalised } = signed;
    if (normalised === '') continue;
    const removable = !isProtected.has(index);
    const exact = latestExact.get(normalised);
    if (removable && exact !== undefined) {
      duplicates.push({ index, duplicateOf: exact, similarity: 1 });
      continue;
    }
    const group = groups[index] ?? '';
    // Only a removable text of its group before it may be compared with it.
    const comparedLater = (firstRemovableOfGroup.get(group) ?? index) < index;
    if (!removable && !comparedLater) {
      if (!latestExact.has(normalised)) latestExact.set(normalised, index);
      continue;
    }
    signed.signature ??= minHashSignature(normalised, shingleSize, seeds);
    const { signature } = signed;
    signatures[index] = signature;
    let groupBands = bandIndexes.get(group);
    if (groupBands === undefined) {
      groupBands = Array.from({ length: bands }, () => new Map<number, number[]>());
      bandIndexes.set(group, groupBands);
    }
    const keys = bandKeys(signature, bands, rows);
    if (removable) {
      let best: NearDuplicate | undefined;
      const seen = new Set<number>();
      for (let band = 0; band < bands; band++) {
        for (const candidate of groupBands[band]?.get(keys[band] ?? 0) ?? []) {
          if (seen.has(candidate)) continue;
          seen.add(candidate);
          const estimate = estimateSimilarity(signature, signatures[candidate] as Uint32Array);
          // The latest kept copy wins: it is the freshest state of whatever both texts show.
          if (estimate >= similarity && (best === undefined || candidate > best.duplicateOf))
            best = { index, duplicateOf: candidate, similarity: Math.min(estimate, 1 - 1 / hashCount) };
        }
      }
      if (best !== undefined) {
        duplicates.push(best);
        continue;
      }
    }
    if (!latestExact.has(normalised)) latestExact.set(normalised, index);
    for (let band = 0; band < bands; band++) {
      const key = keys[band] ?? 0;
      const bucket = groupBands[band]?.get(key);
      if (bucket === undefined) groupBands[band]?.set(key, [index]);
      else bucket.push(index);
    }
  }
  return duplicates.reverse();
}

/** A text's whitespace-normalised form, and its MinHash signature once one was needed. */
interface SignedText {
  text: string;
  shingleSize: number;
  hashCount: number;
  normalised: string;
  signature?: Uint32Array;
}

/** Per source object, its text signed: messages and parts are not edited in place, and the text is checked anyway. */
const signedTexts = new WeakMap<object, SignedText>();

function signedText(
  text: string,
  source: object | undefined,
  shingleSize: number,
  hashCount: number,
): SignedText {
  const known = source === undefined ? undefined : signedTexts.get(source);
  if (
    known !== undefined &&
    known.text === text &&
    known.shingleSize === shingleSize &&
    known.hashCount === hashCount
  )
    return known;
  const signed: SignedText = { text, shingleSize, hashCount, normalised: normaliseWhitespace(text) };
  if (source !== undefined) signedTexts.set(source, signed);
  return signed;
}

/** Collapses every whitespace run to one space and trims, so re-indented or re-wrapped copies still match. */
export function normaliseWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * Rows per band: as many as keep the LSH threshold `(1/bands)^(1/rows)` well below the similarity asked for
 * (by 0.15), so near-duplicates are found with high probability while dissimilar texts rarely collide.
 */
function bandLayout(hashCount: number, similarity: number): { bands: number; rows: number } {
  let layout = { bands: hashCount, rows: 1 };
  for (const rows of [2, 4, 8, 16]) {
    const bands = Math.floor(hashCount / rows);
    if (bands >= 1 && (1 / bands) ** (1 / rows) <= similarity - 0.15) layout = { bands, rows };
  }
  return layout;
}

/** Fixed odd multipliers and offsets: the same seeds every run keep results deterministic. */
function permutationSeeds(hashCount: number): Uint32Array {
  const seeds = new Uint32Array(hashCount * 2);
  let state = 0x9e3779b9;
  for (let i = 0; i < seeds.length; i++) {
    state = mix32(state + 0x6d2b79f5);
    seeds[i] = i % 2 === 0 ? state | 1 : state;
  }
  return seeds;
}

function mix32(value: number): number {
  let h = value | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function wordHash(word: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

function minHashSignature(normalised: string, shingleSize: number, seeds: Uint32Array): Uint32Array {
  const hashCount = seeds.length / 2;
  const signature = new Uint32Array(hashCount).fill(0xffffffff);
  const words = normalised.split(' ').map(wordHash);
  const size = Math.min(shingleSize, words.length);
  for (let start = 0; start + size <= words.length; start++) {
    let shingle = 0;
    for (let offset = 0; offset < size; offset++)
      shingle = mix32(Math.imul(shingle, 31) + (words[start + offset] ?? 0));
    for (let i = 0; i < hashCount; i++) {
      // An odd multiplier, an offset and an xor-shift: a bijection of 32-bit values, i.e. a permutation.
      let value = (Math.imul(shingle, seeds[2 * i] ?? 1) + (seeds[2 * i + 1] ?? 0)) >>> 0;
      value = (value ^ (value >>> 15)) >>> 0;
      if (value < (signature[i] ?? 0)) signature[i] = value;
    }
  }
  return signature;
}

function bandKeys(signature: Uint32Array, bands: number, rows: number): number[] {
  const keys: number[] = [];
  for (let band = 0; band < bands; band++) {
    let key = band;
    for (let row = 0; row < rows; row++)
      key = mix32(Math.imul(key, 31) + (signature[band * rows + row] ?? 0));
    keys.push(key);
  }
  return keys;
}

function estimateSimilarity(left: Uint32Array, right: Uint32Array): number {
  let equal = 0;
  for (let i = 0; i < left.length; i++) if (left[i] === right[i]) equal++;
  return equal / left.length;
}
