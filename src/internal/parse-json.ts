import { InvalidJsonError } from '../errors/index.js';
import { locateJsonError } from './locate-json-error.js';

export interface ParseJsonOptions {
  file?: string;
}

/** 1-based line and column of a character offset. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

/** JSON.parse with an error that names the file, line and column instead of a bare character offset. */
export function parseJsonText(text: string, options: ParseJsonOptions = {}): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const located = locateJsonError(text) ?? {
      offset: text.length,
      reason: error instanceof Error ? error.message : String(error),
    };
    const where = lineAndColumn(text, located.offset);
    throw new InvalidJsonError(
      `invalid JSON: ${located.reason}`,
      { ...(options.file === undefined ? {} : { file: options.file }), ...where },
      { cause: error },
    );
  }
}

export interface JsonLine {
  /** 1-based line number in the file. */
  line: number;
  value: unknown;
}

/** The non-blank lines of a text, trimmed, with their 1-based line numbers. Linear: no split of the whole text. */
export function* nonBlankLines(text: string): Generator<{ line: number; text: string }> {
  let start = 0;
  for (let line = 1; start < text.length; line++) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const raw = text.slice(start, end).trim();
    start = end + 1;
    if (raw !== '') yield { line, text: raw };
  }
}

/** Parses JSON Lines; blank lines are skipped, a bad line throws naming its line number. */
export function parseJsonLines(text: string, options: ParseJsonOptions = {}): JsonLine[] {
  const lines: JsonLine[] = [];
  for (const { line, text: raw } of nonBlankLines(text)) {
    try {
      lines.push({ line, value: JSON.parse(raw) });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new InvalidJsonError(
        `invalid JSON line: ${reason}`,
        { ...(options.file === undefined ? {} : { file: options.file }), line },
        { cause: error },
      );
    }
  }
  return lines;
}

/** JSON Lines when the text has several top-level values on separate lines and is not one JSON document. */
export function looksLikeJsonLines(text: string): boolean {
  const trimmed = text.trimStart();
  if (!trimmed.startsWith('{')) return false;
  const firstLineEnd = trimmed.indexOf('\n');
  if (firstLineEnd === -1) return false;
  const firstLine = trimmed.slice(0, firstLineEnd).trim();
  try {
    JSON.parse(firstLine);
    return true;
  } catch {
    return false;
  }
}
