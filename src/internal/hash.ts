import * as crypto from 'node:crypto';

/** One-shot SHA-256 where Node has it (20.12+): no hash object per call, which per-message keys feel. */
const sha256Hex: (text: string) => string =
  typeof crypto.hash === 'function'
    ? (text) => crypto.hash('sha256', text, 'hex')
    : (text) => crypto.createHash('sha256').update(text).digest('hex');

/** Hex SHA-256 of a string, truncated to `length` hex characters. Fast enough for per-message keys. */
export function hashText(text: string, length = 16): string {
  return sha256Hex(text).slice(0, length);
}
