import { objectAsString } from './stable-json.js';

/**
 * A deterministic key for hashing a JSON-like value: the same values `stableStringify` tells apart, told apart
 * the same way (object keys sorted, binary data as its base64 string, URLs as their href, `undefined`
 * properties skipped, non-finite numbers as null), but not JSON. Strings are written length-prefixed, so a
 * long output costs a copy instead of JSON's escaping scan (several times faster on transcripts, which are
 * mostly strings full of quotes and newlines). Prefix-free, so two different values never share a key:
 * `n` null, `t`/`f`, `d<number>;`, `s<length>:<text>`, `[…]`, `{<key length>:<key><value>…}`.
 */
export function stableKey(value: unknown): string {
  // String concatenation (V8 builds ropes) costs less than collecting pieces and joining them.
  if (value === null || value === undefined) return 'n';
  switch (typeof value) {
    case 'string':
      return `s${value.length}:${value}`;
    case 'number':
      return Number.isFinite(value) ? `d${value};` : 'n';
    case 'boolean':
      return value ? 't' : 'f';
    case 'bigint':
      return stableKey(value.toString());
    case 'object':
      break;
    default:
      return 'n';
  }
  if (Array.isArray(value)) {
    let out = '[';
    for (let index = 0; index < value.length; index++) out += stableKey(value[index]);
    return `${out}]`;
  }
  const leaf = objectAsString(value);
  if (leaf !== undefined) return stableKey(leaf);
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length > 1) keys.sort();
  let out = '{';
  for (const key of keys) {
    const item = record[key];
    if (item !== undefined) out += `${key.length}:${key}${stableKey(item)}`;
  }
  return `${out}}`;
}
