/**
 * Small readers for the JSON that agent logs are made of: a whole document, JSON Lines records, OpenAI-style message content and messages, Unix timestamps.
 */

import { InvalidJsonError, InvalidMessageError, TranscriptImportError } from '../../errors/index.js';
import { isRecord } from '../../internal/json-shapes.js';
import { nonBlankLines, parseJsonText } from '../../internal/parse-json.js';
import { fromOpenAI } from '../../messages/convert/openai.js';
import type { Message } from '../../messages/types.js';
import type { ImportContext } from '../transcript-importer.js';

/** Parses a log that is one JSON document; a file that is not JSON at all is a `TranscriptImportError`. */
export function readJsonDocument(text: string, context: ImportContext, what: string): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return parseJsonText(body, context.file === undefined ? {} : { file: context.file });
  } catch (error) {
    if (!(error instanceof InvalidJsonError)) throw error;
    throw new TranscriptImportError(
      `${what} must be one JSON document: ${error.message}`,
      {
        ...(context.file === undefined ? {} : { file: context.file }),
        ...(error.line === undefined ? {} : { line: error.line }),
        ...(error.column === undefined ? {} : { column: error.column }),
      },
      { cause: error },
    );
  }
}

/**
 * The records of a JSON Lines log. A line that is not JSON is counted as read and reported malformed (skipped
 * with a warning, or a `TranscriptImportError` in strict mode); the caller counts the others as it uses them.
 */
export function readJsonLineRecords(
  text: string,
  context: ImportContext,
): Array<{ value: unknown; line: number }> {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const records: Array<{ value: unknown; line: number }> = [];
  for (const { line, text: raw } of nonBlankLines(body)) {
    try {
      records.push({ value: JSON.parse(raw), line });
    } catch (error) {
      context.read();
      context.malformed(`invalid JSON: ${error instanceof Error ? error.message : String(error)}`, { line });
    }
  }
  return records;
}

/** The file can be read but is not the expected shape at all. */
export function notTheFormat(context: ImportContext, reason: string): TranscriptImportError {
  return new TranscriptImportError(reason, context.file === undefined ? {} : { file: context.file });
}

export interface ContentText {
  text: string;
  /** Parts of a part list that carry no text (images, ...): the caller decides whether that loses anything. */
  otherParts: number;
}

/**
 * The text of OpenAI-style message content: a string as it is, the text parts of a part list (Anthropic-style
 * `cache_control` included) joined by newlines, `null` as empty. Undefined for anything else.
 */
export function contentText(content: unknown): ContentText | undefined {
  if (typeof content === 'string') return { text: content, otherParts: 0 };
  if (content === null) return { text: '', otherParts: 0 };
  if (!Array.isArray(content)) return undefined;
  const texts: string[] = [];
  let otherParts = 0;
  for (const part of content) {
    if (isRecord(part) && typeof part.text === 'string' && (part.type === 'text' || part.type === undefined))
      texts.push(part.text);
    else otherParts++;
  }
  return { text: texts.join('\n'), otherParts };
}

/** ISO 8601 of Unix seconds (what Python's `time.time()` and OpenAI's `created` give), when plausible. */
export function isoFromUnixSeconds(value: unknown): string | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > 1e11) return undefined;
  return new Date(Math.round(value * 1000)).toISOString();
}

const openAIMessageFields = [
  'role',
  'content',
  'name',
  'tool_calls',
  'tool_call_id',
  'function_call',
  'reasoning_content',
  'refusal',
] as const;

/**
 * One OpenAI-style message of a log, converted with `fromOpenAI`. Only the OpenAI fields are passed on, so the
 * log's own annotations (`extra`, `agent`, classification slots, ...) do not end up as provider data.
 * @throws InvalidMessageError when the message is not valid OpenAI input
 */
export function fromOpenAIMessage(raw: Record<string, unknown>, index: number): Message {
  const picked: Record<string, unknown> = {};
  for (const field of openAIMessageFields) {
    if (raw[field] !== undefined) picked[field] = raw[field];
  }
  try {
    const [message] = fromOpenAI([picked]).messages;
    return message!;
  } catch (error) {
    if (error instanceof InvalidMessageError) {
      throw new InvalidMessageError(error.reason, {
        index,
        ...(error.path === undefined ? {} : { path: error.path }),
      });
    }
    throw error;
  }
}
