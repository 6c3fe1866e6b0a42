/**
 * The string an object stands for when serialised for hashing: binary data as base64, a URL as its href;
 * undefined for any other object. One rule for `stableStringify` and `stableKey`, so both tell apart the same
 * values.
 */
export function objectAsString(value: object): string | undefined {
  if (value instanceof Uint8Array)
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
  if (value instanceof ArrayBuffer) return Buffer.from(value).toString('base64');
  if (value instanceof URL) return value.href;
  return undefined;
}

/**
 * Deterministic JSON for hashing: object keys sorted, binary data as base64, URLs as strings, `undefined`
 * properties skipped (as JSON.stringify does). Two messages that mean the same thing serialise the same,
 * whatever order their keys were written in.
 */
export function stableStringify(value: unknown): string {
  // String concatenation (V8 builds ropes) costs less than collecting pieces and joining them.
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return JSON.stringify(value.toString());
    case 'object':
      break;
    default:
      return 'null';
  }
  if (Array.isArray(value)) {
    let out = '[';
    for (let index = 0; index < value.length; index++) {
      if (index > 0) out += ',';
      out += stableStringify(value[index]);
    }
    return `${out}]`;
  }
  const leaf = objectAsString(value);
  if (leaf !== undefined) return JSON.stringify(leaf);
  const record = value as Record<string, unknown>;
  let out = '{';
  let first = true;
  for (const key of Object.keys(record).sort()) {
    const item = record[key];
    if (item === undefined) continue;
    if (!first) out += ',';
    first = false;
    out += `${JSON.stringify(key)}:${stableStringify(item)}`;
  }
  return `${out}}`;
}
