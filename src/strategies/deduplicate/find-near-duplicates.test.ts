import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { propertyRuns } from '../../../test/support/property-runs.js';
import { isPrecisError } from '../../errors/index.js';
import { findNearDuplicates, type NearDuplicate, normaliseWhitespace } from './find-near-duplicates.js';

/** Deterministic pseudo-random prose of `count` words from a seed. */
function prose(seed: number, count: number): string {
  const words: string[] = [];
  let state = seed * 2654435761;
  for (let i = 0; i < count; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    words.push(`w${state % 5000}`);
    if (i % 12 === 11) words.push('\n');
  }
  return words.join(' ');
}

/** Rewrites one number every `every` words: a near copy. */
function perturb(text: string, every: number): string {
  return text
    .split(' ')
    .map((word, index) => (index % every === 0 ? `${word}x` : word))
    .join(' ');
}

/**
 * The contract, text by text from the last: a removable text duplicates the latest kept text it copies
 * (whitespace-normalised, in any group), or else the latest kept text of its group it resembles (as the two
 * alone compare); a text that duplicates none is kept.
 */
function pairwise(
  texts: readonly string[],
  groups: readonly string[],
  protectedIndexes: readonly number[],
): NearDuplicate[] {
  // Latest first.
  const kept: number[] = [];
  const found: NearDuplicate[] = [];
  for (let index = texts.length - 1; index >= 0; index--) {
    const text = texts[index] as string;
    if (normaliseWhitespace(text) === '') continue;
    if (!protectedIndexes.includes(index)) {
      const exact = kept.find(
        (later) => normaliseWhitespace(texts[later] as string) === normaliseWhitespace(text),
      );
      if (exact !== undefined) {
        found.push({ index, duplicateOf: exact, similarity: 1 });
        continue;
      }
      const near = kept
        .filter((later) => groups[later] === groups[index])
        .map((later) => ({
          later,
          pair: findNearDuplicates([text, texts[later] as string], { protectedIndexes: [1] })[0],
        }))
        .find(({ pair }) => pair !== undefined);
      if (near?.pair !== undefined) {
        found.push({ index, duplicateOf: near.later, similarity: near.pair.similarity });
        continue;
      }
    }
    kept.push(index);
  }
  return found.reverse();
}

describe('findNearDuplicates', () => {
  it('reports exact copies (whitespace-normalised) of a later text, pointing at the latest copy', () => {
    const a = prose(1, 300);
    const b = prose(2, 300);
    const result = findNearDuplicates([a, b, `  ${a.replace(/ /g, '\n  ')}`, a]);
    expect(result).toEqual([
      { index: 0, duplicateOf: 3, similarity: 1 },
      { index: 2, duplicateOf: 3, similarity: 1 },
    ]);
  });

  it('finds near copies above the threshold and not below it', () => {
    const base = prose(3, 400);
    const near = perturb(base, 200); // 2 words of 400 changed: ~97% of shingles shared
    const far = perturb(base, 8); // most 5-shingles touched
    const result = findNearDuplicates([base, near, far, prose(4, 400)]);
    expect(result.map(({ index, duplicateOf }) => [index, duplicateOf])).toEqual([[0, 1]]);
    expect(result[0]?.similarity).toBeGreaterThanOrEqual(0.9);
    expect(result[0]?.similarity).toBeLessThan(1);
  });

  it('only matches near copies within a group, exact copies across groups', () => {
    const base = prose(5, 300);
    const near = perturb(base, 150);
    expect(findNearDuplicates([base, near], { groups: ['tool:bash', 'tool:read'] })).toEqual([]);
    expect(findNearDuplicates([base, base], { groups: ['tool:bash', 'tool:read'] })).toEqual([
      { index: 0, duplicateOf: 1, similarity: 1 },
    ]);
  });

  it('never reports a protected text but lets earlier texts point at it', () => {
    const base = prose(6, 300);
    expect(findNearDuplicates([base, base, base], { protectedIndexes: [0, 2] })).toEqual([
      { index: 1, duplicateOf: 2, similarity: 1 },
    ]);
  });

  it('ignores empty texts and rejects bad options with a typed error', () => {
    expect(findNearDuplicates(['', ' ', ''])).toEqual([]);
    // A share given as text ('0.9' from a config file) is not a number: it used to pass the range check.
    const asText = { similarity: '0.9' as unknown as number };
    for (const options of [
      { similarity: 0 },
      { similarity: 1.5 },
      asText,
      { hashCount: 3 },
      { shingleSize: 0 },
    ]) {
      let caught: unknown;
      try {
        findNearDuplicates(['a'], options);
      } catch (error) {
        caught = error;
      }
      expect(isPrecisError(caught) && caught.code).toBe('invalid-argument');
    }
  });

  it('recalls planted near-duplicates among 300 texts with no false positives', () => {
    const texts: string[] = [];
    const planted = new Set<string>();
    for (let i = 0; i < 300; i++) {
      if (i % 10 === 9) {
        texts.push(perturb(texts[i - 1] as string, 300));
        planted.add(`${i - 1}:${i}`);
      } else texts.push(prose(100 + i, 350));
    }
    const found = findNearDuplicates(texts).map(({ index, duplicateOf }) => `${index}:${duplicateOf}`);
    expect(new Set(found)).toEqual(planted);
  });

  it('finds what comparing texts two by two finds, whether their sources were read before or not (property)', () => {
    const pool = [prose(10, 300), perturb(prose(10, 300), 299), prose(11, 300), ' ', 'short text'];
    const item = fc.record({
      text: fc.constantFrom(...pool),
      // What the same source holds on a later run (a caller that edited its message in place).
      edited: fc.constantFrom(...pool),
      group: fc.constantFrom('tool:bash', 'tool:read', 'text'),
      isProtected: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(item, { maxLength: 16 }), (items) => {
        const texts = items.map((entry) => entry.text);
        const edited = items.map((entry) => entry.edited);
        const groups = items.map((entry) => entry.group);
        const protectedIndexes = items.flatMap((entry, index) => (entry.isProtected ? [index] : []));
        const options = { groups, protectedIndexes, sources: items.map(() => ({})) };
        const expected = pairwise(texts, groups, protectedIndexes);
        expect(findNearDuplicates(texts, { groups, protectedIndexes })).toEqual(expected);
        // Signed on the first run, remembered on the second, signed again where a source's text changed.
        expect(findNearDuplicates(texts, options)).toEqual(expected);
        expect(findNearDuplicates(texts, options)).toEqual(expected);
        expect(findNearDuplicates(edited, options)).toEqual(pairwise(edited, groups, protectedIndexes));
      }),
      { numRuns: propertyRuns(200) },
    );
  });

  it('properties: points forward at kept texts, deterministic, stable once duplicates are removed', () => {
    // Long enough that the perturbed copy is a near duplicate (80 words with two changed were not: 0.78).
    const pool = [prose(7, 300), perturb(prose(7, 300), 299), prose(8, 300), prose(9, 10), '', 'short text'];
    const [near] = findNearDuplicates([pool[1]!, pool[0]!]);
    expect(near?.similarity).toBeGreaterThanOrEqual(0.9);
    expect(near?.similarity).toBeLessThan(1);
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pool), { maxLength: 30 }), (texts) => {
        const result = findNearDuplicates(texts);
        const duplicated = new Set(result.map((duplicate) => duplicate.index));
        for (const duplicate of result) {
          expect(duplicate.duplicateOf).toBeGreaterThan(duplicate.index);
          expect(duplicated.has(duplicate.duplicateOf)).toBe(false);
        }
        expect(findNearDuplicates(texts)).toEqual(result);
        const remaining = texts.filter((_, index) => !duplicated.has(index));
        expect(findNearDuplicates(remaining)).toEqual([]);
      }),
      { numRuns: propertyRuns(200) },
    );
  });
});
