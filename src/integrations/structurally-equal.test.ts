import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stableStringify } from '../internal/stable-json.js';
import { structurallyEqual } from './structurally-equal.js';

describe('structurallyEqual', () => {
  it('compares JSON-like values by content, key order included', () => {
    const text = 'x'.repeat(1000);
    expect(
      structurallyEqual(
        { role: 'user', content: [{ type: 'text', text }] },
        {
          role: 'user',
          content: [{ type: 'text', text: `${text}` }],
        },
      ),
    ).toBe(true);
    expect(structurallyEqual({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(false);
    expect(structurallyEqual({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(structurallyEqual([1, 2], [1, 2, 3])).toBe(false);
    expect(structurallyEqual([undefined], new Array(1))).toBe(false);
    expect(structurallyEqual({ a: [1] }, { a: { 0: 1 } })).toBe(false);
    expect(structurallyEqual(Object.create(null), {})).toBe(false);
    expect(structurallyEqual(null, {})).toBe(false);
    expect(structurallyEqual(1, '1')).toBe(false);
  });

  it('takes binary data, URLs and class instances as equal only when they are the same object', () => {
    const bytes = new Uint8Array([1, 2, 3]);
    expect(structurallyEqual({ data: bytes }, { data: bytes })).toBe(true);
    expect(structurallyEqual({ data: bytes }, { data: new Uint8Array([1, 2, 3]) })).toBe(false);
    expect(structurallyEqual(new URL('https://example.com'), new URL('https://example.com'))).toBe(false);
  });

  it('holds only for values that serialise the same, and always for a copy', () => {
    const value = fc.jsonValue({ maxDepth: 3 });
    fc.assert(
      fc.property(value, value, (left, right) => {
        expect(structurallyEqual(left, structuredClone(left))).toBe(true);
        if (structurallyEqual(left, right)) {
          expect(JSON.stringify(right)).toBe(JSON.stringify(left));
          expect(stableStringify(right)).toBe(stableStringify(left));
        }
      }),
    );
    // Values drawn from a small alphabet, so that equal pairs are common.
    const small = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.constantFrom(0, 1, 'a', null, true),
        fc.array(tie('value'), { maxLength: 2 }),
        fc.dictionary(fc.constantFrom('a', 'b'), tie('value'), { maxKeys: 2, noNullPrototype: true }),
      ),
    })).value;
    fc.assert(
      fc.property(small, small, (left, right) => {
        const equal = structurallyEqual(left, right);
        expect(equal).toBe(JSON.stringify(left) === JSON.stringify(right));
        expect(structurallyEqual(right, left)).toBe(equal);
      }),
    );
  });
});
