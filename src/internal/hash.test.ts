import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashText } from './hash.js';

describe('hashText', () => {
  it('is SHA-256 in hex, cut to the length asked', () => {
    expect(hashText('abc')).toBe('ba7816bf8f01cfea');
    const text = `precis ${'é🚀\u0000'.repeat(500)}`;
    expect(hashText(text, 64)).toBe(createHash('sha256').update(text).digest('hex'));
    expect(hashText(text, 20)).toHaveLength(20);
  });
});
