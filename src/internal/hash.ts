import { createHash } from 'node:crypto';

/** Hex SHA-256 of a string, truncated to `length` hex characters. Fast enough for per-message keys. */
export function hashText(text: string, length = 16): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}
