/** A plain JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A short description of a value for error messages: `null`, `an array`, `number 42`, ... */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  // Not JSON for numbers: NaN and Infinity would read as `null`, and a bigint does not serialise at all.
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean')
    return `${typeof value} ${String(value)}`;
  if (typeof value === 'string') return `string ${JSON.stringify(value).slice(0, 40)}`;
  return typeof value;
}
