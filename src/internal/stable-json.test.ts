import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { reversedKeys } from '../../test/support/json-values.js';
import { propertyRuns } from '../../test/support/property-runs.js';
import { stableStringify } from './stable-json.js';

/** Every object in `value`, nested ones included. */
function objectsIn(value: unknown): Array<Record<string, unknown>> {
  if (typeof value !== 'object' || value === null) return [];
  const children = Object.values(value).flatMap(objectsIn);
  return Array.isArray(value) ? children : [value as Record<string, unknown>, ...children];
}

describe('stableStringify', () => {
  it('property: JSON of the same value, keys sorted, whatever order the keys were written in', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = stableStringify(value);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
        // Each object is its keys in sorted order (integer-like keys too, which JS objects list first).
        for (const object of objectsIn(value)) {
          const keys = Object.keys(object).sort();
          expect(stableStringify(object)).toBe(
            `{${keys.map((key) => `${JSON.stringify(key)}:${stableStringify(object[key])}`).join(',')}}`,
          );
        }
        expect(stableStringify(reversedKeys(value))).toBe(text);
      }),
      { numRuns: propertyRuns(1000) },
    );
  });

  it('skips undefined properties, writes undefined items and non-finite numbers as null', () => {
    expect(stableStringify({ b: 1, a: undefined, c: [undefined, Number.NaN, Infinity] })).toBe(
      '{"b":1,"c":[null,null,null]}',
    );
    expect(stableStringify(undefined)).toBe('null');
    expect(stableStringify(10n)).toBe('"10"');
  });

  it('writes binary data as base64 and URLs as their href', () => {
    const bytes = new Uint8Array([0, 1, 2, 250, 251, 252]);
    expect(stableStringify({ data: bytes.subarray(3) })).toBe('{"data":"+vv8"}');
    expect(stableStringify(bytes.buffer)).toBe('"AAEC+vv8"');
    expect(stableStringify(new URL('https://example.com/a b'))).toBe('"https://example.com/a%20b"');
  });
});
