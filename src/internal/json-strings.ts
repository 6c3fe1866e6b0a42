/** A path into a JSON value: object keys and array indexes. */
export type JsonPath = ReadonlyArray<string | number>;

/** Deeper than this, a value's strings are not looked at (tool inputs nest a few levels). */
const maxDepth = 32;

/** The string leaves of a JSON value (a tool call's input) with their paths, in document order. */
export function stringLeaves(value: unknown): Array<{ path: JsonPath; text: string }> {
  const leaves: Array<{ path: JsonPath; text: string }> = [];
  const walk = (node: unknown, path: Array<string | number>): void => {
    if (typeof node === 'string') leaves.push({ path: [...path], text: node });
    else if (path.length >= maxDepth || typeof node !== 'object' || node === null) return;
    else if (Array.isArray(node)) {
      for (const [index, item] of node.entries()) walk(item, [...path, index]);
    } else for (const [key, item] of Object.entries(node)) walk(item, [...path, key]);
  };
  walk(value, []);
  return leaves;
}

/** `value` with the string at `path` replaced by `text`; the objects and arrays on the way are copied. */
export function withStringLeaf(value: unknown, path: JsonPath, text: string): unknown {
  if (path.length === 0) return text;
  const [step, ...rest] = path;
  if (Array.isArray(value))
    return value.map((item, index) => (index === step ? withStringLeaf(item, rest, text) : item));
  const record = value as Record<string, unknown>;
  return { ...record, [step!]: withStringLeaf(record[step!], rest, text) };
}

/** `value` with `map` applied to each string leaf: the same value (object, array) where no string changed. */
export function mapStringLeaves(value: unknown, map: (text: string) => string, depth = 0): unknown {
  if (typeof value === 'string') return map(value);
  if (depth >= maxDepth || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const mapped = value.map((item) => mapStringLeaves(item, map, depth + 1));
    return mapped.every((item, index) => item === value[index]) ? value : mapped;
  }
  const entries = Object.entries(value).map(
    ([key, item]) => [key, mapStringLeaves(item, map, depth + 1)] as const,
  );
  const record = value as Record<string, unknown>;
  return entries.every(([key, item]) => item === record[key]) ? value : Object.fromEntries(entries);
}

/** Whether some string leaf of `value` passes `test` (`stringLeaves` without the paths). */
export function someStringLeaf(value: unknown, test: (text: string) => boolean, depth = 0): boolean {
  if (typeof value === 'string') return test(value);
  if (depth >= maxDepth || typeof value !== 'object' || value === null) return false;
  const items = Array.isArray(value) ? value : Object.values(value);
  return items.some((item) => someStringLeaf(item, test, depth + 1));
}

export interface StringValuesOptions {
  /** Leaves deeper than this are not looked at. @default 32 */
  maxDepth?: number;
  /** Stop once more than this many are collected (a cap for scans that only need a sample). @default no cap */
  maxStrings?: number;
  /** Numbers and booleans too, as text (how a reader sees a tool input). @default false */
  scalarsAsText?: boolean;
}

/** The string leaves of a JSON value in document order, without their paths: the cheap form of `stringLeaves`. */
export function stringValues(value: unknown, options: StringValuesOptions = {}): string[] {
  const {
    maxDepth: depthLimit = maxDepth,
    maxStrings = Number.POSITIVE_INFINITY,
    scalarsAsText = false,
  } = options;
  const out: string[] = [];
  const walk = (node: unknown, depth: number): void => {
    if (depth > depthLimit || out.length > maxStrings) return;
    if (typeof node === 'string') out.push(node);
    else if (Array.isArray(node)) for (const item of node) walk(item, depth + 1);
    else if (typeof node === 'object' && node !== null)
      for (const item of Object.values(node)) walk(item, depth + 1);
    else if (scalarsAsText && node !== undefined && node !== null) out.push(String(node));
  };
  walk(value, 0);
  return out;
}
