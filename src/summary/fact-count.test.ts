import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { propertyRuns } from '../../test/support/property-runs.js';
import { countFacts } from './fact-count.js';

/** The pattern `countFacts` counts the matches of, as one global regular expression. */
const factPattern =
  /https?:\/\/\S+|[\w.@-]*\/[\w.@/-]+|`[^`\n]+`|\b[0-9a-f]{7,40}\b|#\d+|\b\w+_\w+\b|\b[a-z]+[A-Z]\w*\b|\b[A-Z]{2,}\w*\b|\b\d+(?:\.\d+)?\s*(?:passed|failed|tests?|errors?|files?|ms|s)\b|\w+\(\)|\b\w+\.\w{1,5}\b|--?[a-z][\w-]+/g;

describe('countFacts', () => {
  it('counts paths, URLs, code, hashes, identifiers and numbers with units', () => {
    expect(countFacts('See https://example.com/x and src/retry/backoff.ts')).toBe(2);
    expect(countFacts('run `npm test` then fix retry_count in getUserName()')).toBe(3);
    expect(countFacts('commit 1a2b3c4d fixed #42: 12 passed, 3 failed in 250 ms')).toBe(5);
    expect(countFacts('plain words only, nothing else.')).toBe(0);
  });

  it('counts what one global pattern of its alternatives matches (property)', () => {
    const fragment = fc.constantFrom(
      ...['a', 'f', 'h', 'x', 'z', 'A', 'F', 'Z', '0', '7', '_', '/', '.', '@', '-', '`', '#', '(', ')'],
      ...[' ', '\n', ':', 'é', 'http', 'https://', '()', '--', 'deadbeef1', 'passed', ' ms', 'word', 'Word'],
    );
    fc.assert(
      fc.property(fc.array(fragment, { maxLength: 30 }), (pieces) => {
        const text = pieces.join('');
        expect(countFacts(text)).toBe(text.match(factPattern)?.length ?? 0);
      }),
      { numRuns: propertyRuns(5000) },
    );
  });

  it('takes time linear in the length of a long word', () => {
    // The pattern alone rescans the rest of a run from each of its characters; the count stays exact.
    const text = `${'a'.repeat(20_000)}/b ${'x'.repeat(20_000)}() ${'q'.repeat(20_000)}`;
    expect(countFacts(text)).toBe(2);
  });
});
