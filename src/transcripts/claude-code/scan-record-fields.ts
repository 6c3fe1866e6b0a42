/** A top-level field value as the scanner sees it: primitives decoded, nested values only marked. */
export type ScannedValue = string | number | boolean | null | { nested: 'object' | 'array' };

/** Top-level fields of one record, in the order read; `complete` is false for a record cut off by the sample's end. */
export interface ScannedRecord {
  fields: Map<string, ScannedValue>;
  complete: boolean;
}

// Longer strings are never envelope values we look at (ids, types, versions): they are skipped, not decoded.
const maxDecodedLength = 300;

/**
 * Reads the top-level fields of the first records of a JSON array or of JSON Lines, from a sample that may stop
 * in the middle of a record (the first 64 KiB of a file whose first record alone can be megabytes long). Strings
 * are skipped by their quotes, so text inside a message that merely mentions `"sessionId"` never counts as a
 * field. Linear in the length of the sample.
 */
export function scanRecordFields(sample: string, maxRecords: number): ScannedRecord[] {
  const records: ScannedRecord[] = [];
  let start = 0;
  while (start < sample.length && /\s/.test(sample[start] ?? '')) start++;
  if (sample.charCodeAt(start) === 0xfeff) start++;
  // Records are the elements of a top-level array, or top-level objects one after the other.
  const recordDepth = sample[start] === '[' ? 1 : 0;
  let depth = 0;
  let current: ScannedRecord | undefined;
  let key: string | undefined;
  let expectValue = false;
  let index = start;
  while (index < sample.length && records.length < maxRecords) {
    const character = sample[index];
    if (character === '"') {
      const end = stringEnd(sample, index);
      if (current !== undefined && depth === recordDepth + 1) {
        const text = end === -1 ? undefined : decodeString(sample, index, end);
        if (expectValue) {
          if (key !== undefined && text !== undefined) current.fields.set(key, text);
          expectValue = false;
          key = undefined;
        } else {
          key = text;
        }
      }
      if (end === -1) break;
      index = end + 1;
      continue;
    }
    if (character === '{' || character === '[') {
      if (current !== undefined && depth === recordDepth + 1 && expectValue && key !== undefined) {
        current.fields.set(key, { nested: character === '{' ? 'object' : 'array' });
        expectValue = false;
        key = undefined;
      }
      if (depth === recordDepth && character === '{') current = { fields: new Map(), complete: false };
      depth++;
    } else if (character === '}' || character === ']') {
      depth--;
      if (depth === recordDepth && current !== undefined) {
        current.complete = true;
        records.push(current);
        current = undefined;
      }
      if (depth < 0) break;
    } else if (character === ':') {
      if (depth === recordDepth + 1) expectValue = true;
    } else if (character === ',') {
      if (depth === recordDepth + 1) {
        expectValue = false;
        key = undefined;
      }
    } else if (
      current !== undefined &&
      depth === recordDepth + 1 &&
      expectValue &&
      !/\s/.test(character ?? '')
    ) {
      let end = index;
      while (end < sample.length && !/[\s,}\]]/.test(sample[end] ?? '')) end++;
      const literal = sample.slice(index, end);
      if (key !== undefined) current.fields.set(key, literalValue(literal));
      expectValue = false;
      key = undefined;
      index = end;
      continue;
    }
    index++;
  }
  if (current !== undefined && records.length < maxRecords) records.push(current);
  return records;
}

/** Index of the closing quote of the string opening at `open`, or -1 when the sample ends first. */
function stringEnd(text: string, open: number): number {
  for (let index = open + 1; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === 0x5c) index++;
    else if (code === 0x22) return index;
  }
  return -1;
}

function decodeString(text: string, open: number, close: number): string | undefined {
  if (close - open > maxDecodedLength) return undefined;
  try {
    return JSON.parse(text.slice(open, close + 1)) as string;
  } catch {
    return undefined;
  }
}

function literalValue(literal: string): ScannedValue {
  if (literal === 'null') return null;
  if (literal === 'true') return true;
  if (literal === 'false') return false;
  const number = Number(literal);
  return Number.isNaN(number) ? literal : number;
}
