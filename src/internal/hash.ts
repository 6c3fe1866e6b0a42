import * as crypto from 'node:crypto';

/**
 * SHA-256 of a string, one-shot where Node has it (20.12+): no hash object per call, which per-message keys
 * and content handles feel.
 */
export const sha256: (text: string, encoding: 'hex' | 'base64') => string =
  typeof crypto.hash === 'function'
    ? (text, encoding) => crypto.hash('sha256', text, encoding)
    : (text, encoding) => crypto.createHash('sha256').update(text).digest(encoding);

/** Hex SHA-256 of a string, truncated to `length` hex characters. Fast enough for per-message keys. */
export function hashText(text: string, length = 16): string {
  return sha256(text, 'hex').slice(0, length);
}
