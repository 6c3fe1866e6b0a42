import { describe, expect, it } from 'vitest';
import { describeValue } from './json-shapes.js';

describe('describeValue', () => {
  it('names what a bad option or field was, numbers as written', () => {
    expect(describeValue(Number.NaN)).toBe('number NaN');
    expect(describeValue(Number.POSITIVE_INFINITY)).toBe('number Infinity');
    expect(describeValue(-1.5)).toBe('number -1.5');
    expect(describeValue(10n)).toBe('bigint 10');
    expect(describeValue(true)).toBe('boolean true');
    expect(describeValue('ten')).toBe('string "ten"');
    expect(describeValue('x'.repeat(100))).toHaveLength('string '.length + 40);
    expect(describeValue(null)).toBe('null');
    expect(describeValue(undefined)).toBe('nothing');
    expect(describeValue([1])).toBe('an array');
    expect(describeValue({ a: 1 })).toBe('an object');
    expect(describeValue(() => 1)).toBe('function');
  });
});
