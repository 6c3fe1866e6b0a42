/**
 * Deterministic JSON for hashing: object keys sorted, binary data as base64, URLs as strings, `undefined`
 * properties skipped (as JSON.stringify does). Two messages that mean the same thing serialise the same,
 * whatever order their keys were written in.
 */
export function stableStringify(value: unknown): string {
  const out: string[] = [];
  write(value, out);
  return out.join('');
}

function write(value: unknown, out: string[]): void {
  if (value === null || value === undefined) {
    out.push('null');
    return;
  }
  switch (typeof value) {
    case 'string':
      out.push(JSON.stringify(value));
      return;
    case 'number':
      out.push(Number.isFinite(value) ? String(value) : 'null');
      return;
    case 'boolean':
      out.push(value ? 'true' : 'false');
      return;
    case 'bigint':
      out.push(JSON.stringify(value.toString()));
      return;
    case 'object':
      break;
    default:
      out.push('null');
      return;
  }
  if (Array.isArray(value)) {
    out.push('[');
    value.forEach((item, i) => {
      if (i > 0) out.push(',');
      write(item, out);
    });
    out.push(']');
    return;
  }
  if (value instanceof Uint8Array) {
    out.push(
      JSON.stringify(Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64')),
    );
    return;
  }
  if (value instanceof ArrayBuffer) {
    out.push(JSON.stringify(Buffer.from(value).toString('base64')));
    return;
  }
  if (value instanceof URL) {
    out.push(JSON.stringify(value.href));
    return;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort();
  out.push('{');
  keys.forEach((key, i) => {
    if (i > 0) out.push(',');
    out.push(JSON.stringify(key), ':');
    write(record[key], out);
  });
  out.push('}');
}
