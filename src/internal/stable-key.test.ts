import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { reversedKeys } from '../../test/support/json-values.js';
import { propertyRuns } from '../../test/support/property-runs.js';
import { stableStringify } from './stable-json.js';
import { stableKey } from './stable-key.js';

/**
 * Small JSON-like values over a tiny alphabet, so that two drawn at random are often equal or nearly so, with
 * strings that look like the key's own syntax (`s1:a`, `d1;`, `}`), undefined properties and non-finite numbers.
 */
const { value: smallValue } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom<unknown>(null, undefined, true, false, 0, -0, 1, 1.5, Number.NaN, Infinity, 10n),
    fc.string({
      unit: fc.constantFrom('a', 'b', ':', '1', 's', 'd', ';', '[', ']', '{', '}', 'n', '"'),
      maxLength: 5,
    }),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'b', '1', 'a:', ''), tie('value'), { maxKeys: 3 }),
  ),
}));

describe('stableKey', () => {
  it('property: two values share a key exactly when they share a stable JSON', () => {
    fc.assert(
      fc.property(smallValue, smallValue, (left, right) => {
        expect(stableKey(left) === stableKey(right)).toBe(stableStringify(left) === stableStringify(right));
        expect(stableKey(reversedKeys(left))).toBe(stableKey(left));
      }),
      { numRuns: propertyRuns(5000) },
    );
  });

  it('tells apart values whose JSON-free forms could run together', () => {
    // Each pair would collide under a key that wrote strings without their length (`s<text>;`).
    const distinct = [
      ...[
        ['ab'],
        ['a', 'b'],
        ['a;sb'],
        'ab',
        { a: 'b' },
        { ab: null },
        { a: 'b;1:cs1:d' },
        { a: 'b', c: 'd' },
      ],
      ...[[], {}, '', 1, '1', [1], 'd1;', null, 'n', ['s1:a'], ['a']],
    ];
    const keys = distinct.map(stableKey);
    expect(new Set(keys).size).toBe(distinct.length);
  });

  it('writes binary data as its base64 string, URLs as their href, as stable JSON does', () => {
    const bytes = new Uint8Array([0, 1, 2, 250, 251, 252]);
    expect(stableKey({ data: bytes.subarray(3) })).toBe(stableKey({ data: '+vv8' }));
    expect(stableKey(bytes.buffer)).toBe(stableKey('AAEC+vv8'));
    expect(stableKey(new URL('https://example.com/a b'))).toBe(stableKey('https://example.com/a%20b'));
    expect(stableKey({ b: 1, a: undefined, c: [undefined, Number.NaN] })).toBe('{1:bd1;1:c[nn]}');
  });
});
