/**
 * Plain provider message logs: OpenAI Chat Completions, Anthropic Messages and precis / AI SDK messages, read
 * with the existing converters (`fromOpenAI`, `fromAnthropic`, `parseMessages`). Accepted layouts:
 * - one JSON document: a message array, or a request body `{ messages, ... }` (also wrapped as `{ body }` or
 *   `{ request, response }`, as request logs and OpenAI batch files write it);
 * - JSON Lines of messages, one message per line;
 * - JSON Lines of request logs, one request (body) per line, as an agent that logs every call writes them.
 *   Each request repeats the history so far, so the line with the most messages (the last one on a tie) is the
 *   session; the other lines are counted as ignored (`superseded request`).
 * A logged response (`choices[0].message`, or an Anthropic response message) is appended as the last message.
 *
 * Messages are converted one at a time, so one bad message costs only itself: in JSON Lines a line that is not
 * JSON, or a message the converter rejects, is skipped with a counted warning naming the line (`strict: true`
 * throws a `TranscriptImportError` instead); in a document the message is named by its index (`record`). The
 * cross-message links the converters make are rebuilt afterwards: tool names of results (OpenAI tool messages
 * carry only the call id), ids of legacy OpenAI `function_call`s, and Anthropic's `turnEnd` hint.
 *
 * Detection is a fallback, tried after every specific transcript format: it parses the sample and asks
 * `detectFormat` which of the three formats the messages are in, and declines documents that another importer
 * reads (gptme and Codex logs, mini-swe-agent and SWE-agent trajectories, OpenHands dumps, Claude Code records).
 *
 * Message metadata: `origin` (kept when a precis message already names one), `record` (index in the message
 * array) and, for JSON Lines, `line`.
 */

import { InvalidMessageError, TranscriptImportError } from '../../errors/index.js';
import { describeValue, isRecord } from '../../internal/json-shapes.js';
import { parseJsonText } from '../../internal/parse-json.js';
import { fromAnthropic } from '../../messages/convert/anthropic.js';
import { detectFormat, type MessageFormat } from '../../messages/convert/detect-format.js';
import { fromOpenAI, unknownToolCallId } from '../../messages/convert/openai.js';
import { unknownToolName } from '../../messages/convert/placeholders.js';
import { parseConversation, parseMessages } from '../../messages/parse.js';
import type { Conversation, Message, Part, ToolCallPart, ToolResultPart } from '../../messages/types.js';
import { validateMessages } from '../../messages/validate/index.js';
import { codexImporter } from '../codex/codex-importer.js';
import { gptmeImporter } from '../gptme/gptme-importer.js';
import { readJsonLineRecords } from '../internal/record-readers.js';
import type {
  ImportContext,
  ImportResult,
  TranscriptImporter,
  TranscriptMetadata,
  TranscriptSample,
} from '../transcript-importer.js';

type UnknownRecord = Record<string, unknown>;

interface Location {
  line?: number;
  record?: number;
}

interface SourceMessage {
  value: unknown;
  location: Location;
}

/** A request (message array or body) and the response logged with it, if any. */
interface Exchange {
  request: unknown[] | UnknownRecord;
  response: unknown;
}

interface Converter {
  /** The conversation-level fields of a request body (system prompt, tools, model, request options). */
  body(value: UnknownRecord, file: string | undefined): Conversation;
  /** One wire message. */
  message(value: unknown, file: string | undefined): Message[];
}

const fileOption = (file: string | undefined) => (file === undefined ? {} : { file });

const converters: Record<MessageFormat, Converter> = {
  openai: {
    body: (value, file) => fromOpenAI({ ...value, messages: [] }, fileOption(file)),
    message: (value, file) => fromOpenAI([value], fileOption(file)).messages,
  },
  anthropic: {
    body: (value, file) => fromAnthropic({ ...value, messages: [] }, fileOption(file)),
    message: (value, file) => fromAnthropic([value], fileOption(file)).messages,
  },
  precis: {
    body: (value, file) => parseConversation({ ...value, messages: [] }, fileOption(file)),
    message: (value, file) => parseMessages([value], fileOption(file)),
  },
};

const descriptions: Record<MessageFormat, string> = {
  openai:
    'OpenAI Chat Completions messages (JSON array, request body, or JSON Lines of messages or requests)',
  anthropic:
    'Anthropic Messages API messages (JSON array, request body, or JSON Lines of messages or requests)',
  precis: 'precis / AI SDK messages (JSON array, conversation document, or JSON Lines)',
};

function createProviderJsonImporter(format: MessageFormat): TranscriptImporter {
  return {
    format,
    description: descriptions[format],
    detect: (sample) => detectProviderJson(format, sample),
    parse: (text, context) => parseProviderJson(format, text, context),
  };
}

export const openAIImporter: TranscriptImporter = createProviderJsonImporter('openai');
export const anthropicImporter: TranscriptImporter = createProviderJsonImporter('anthropic');
export const precisImporter: TranscriptImporter = createProviderJsonImporter('precis');

// ---------------------------------------------------------------------------------------------------------------
// Shapes
// ---------------------------------------------------------------------------------------------------------------

/** The request (and response) a document or line holds: a message array, a body, or a wrapped body. */
function exchangeOf(value: unknown): Exchange | undefined {
  if (Array.isArray(value)) return { request: value, response: undefined };
  if (!isRecord(value)) return undefined;
  if (Array.isArray(value.messages)) {
    const { response, ...request } = value;
    return { request, response };
  }
  for (const key of ['body', 'request']) {
    const inner = value[key];
    if (isRecord(inner) && Array.isArray(inner.messages)) return { request: inner, response: value.response };
  }
  return undefined;
}

function messagesOf(request: unknown[] | UnknownRecord): unknown[] {
  return Array.isArray(request) ? request : (request.messages as unknown[]);
}

/** The assistant message of a logged response: OpenAI `choices[0].message`, or an Anthropic response message. */
function responseMessage(response: unknown): unknown {
  const body = isRecord(response) && isRecord(response.body) ? response.body : response;
  if (!isRecord(body)) return undefined;
  if (Array.isArray(body.choices)) {
    const [choice] = body.choices;
    return isRecord(choice) && isRecord(choice.message) ? choice.message : undefined;
  }
  if (body.role === 'assistant' && body.content !== undefined)
    return { role: 'assistant', content: body.content };
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Detection
// ---------------------------------------------------------------------------------------------------------------

const messagesToCheck = 50;

function detectProviderJson(format: MessageFormat, sample: TranscriptSample): string | undefined {
  if (gptmeImporter.detect(sample) !== undefined || codexImporter.detect(sample) !== undefined)
    return undefined;
  const parsed = parseSample(sample.head);
  if (parsed === undefined) return undefined;
  let subject: unknown[] | UnknownRecord;
  let where: string;
  if (parsed.kind === 'document') {
    if (isRecord(parsed.value) && ('trajectory_format' in parsed.value || 'trajectory' in parsed.value)) {
      return undefined;
    }
    const lone = isRecord(parsed.value) && 'role' in parsed.value;
    const exchange = lone ? { request: [parsed.value], response: undefined } : exchangeOf(parsed.value);
    if (exchange === undefined) return undefined;
    subject = exchange.request;
    where = lone ? ' (JSON Lines of messages)' : '';
  } else {
    const [first] = parsed.values;
    const exchange = isRecord(first) && 'role' in first ? undefined : exchangeOf(first);
    subject = exchange === undefined ? parsed.values : exchange.request;
    where = exchange === undefined ? ' (JSON Lines of messages)' : ' (JSON Lines of requests, line 1)';
  }
  if (!looksLikeMessages(subject)) return undefined;
  const guess = detectFormat(subject);
  return guess.format === format ? `${guess.reason}${where}` : undefined;
}

/** The head as one JSON document, or as its complete JSON lines; undefined when it is neither. */
function parseSample(
  head: string,
): { kind: 'document'; value: unknown } | { kind: 'lines'; values: unknown[] } | undefined {
  const text = head.charCodeAt(0) === 0xfeff ? head.slice(1) : head;
  const trimmed = text.trimStart();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return undefined;
  try {
    return { kind: 'document', value: JSON.parse(text) };
  } catch {
    // A longer file, or JSON Lines: read the lines the sample holds whole.
  }
  const lines = text.split('\n');
  if (!text.endsWith('\n')) lines.pop();
  const values: unknown[] = [];
  let broken = 0;
  for (const line of lines) {
    if (line.trim() === '') continue;
    try {
      values.push(JSON.parse(line));
    } catch {
      broken++;
    }
  }
  // A broken line or two is the importer's business (skipped with a warning); mostly broken is not JSON Lines.
  return values.length === 0 || broken > values.length ? undefined : { kind: 'lines', values };
}

/**
 * Messages with a role, and nothing that marks another importer's format: OpenHands dumps (annotation fields,
 * the OpenHands system prompt), records with a `type` envelope (Claude Code and the like).
 */
function looksLikeMessages(subject: unknown[] | UnknownRecord): boolean {
  const messages = messagesOf(subject);
  if (messages.length === 0) return !Array.isArray(subject) && ('system' in subject || 'tools' in subject);
  for (const message of messages.slice(0, messagesToCheck)) {
    if (!isRecord(message) || typeof message.role !== 'string') return false;
    if ('contentClassification' in message || 'uuid' in message || 'parentUuid' in message) return false;
    if (
      message.role === 'system' &&
      typeof message.content === 'string' &&
      message.content.startsWith('You are OpenHands agent')
    ) {
      return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------------------------

function parseProviderJson(format: MessageFormat, text: string, context: ImportContext): ImportResult {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const converter = converters[format];
  let conversation: Conversation;
  const document = readDocument(body, context);
  if (document === jsonLines || (isRecord(document) && 'role' in document)) {
    // JSON Lines, or a single message on its own line.
    conversation = readJsonLines(body, format, converter, context);
  } else {
    const exchange = exchangeOf(document);
    if (exchange === undefined) {
      throw new TranscriptImportError(
        `expected a message array or a request body with "messages", got ${describeValue(document)}`,
        fileOption(context.file),
      );
    }
    // In a document the records are its messages.
    conversation = readExchange(exchange, {}, { format, converter, context, countRecords: true });
  }
  const { issues } = validateMessages(conversation.messages, { provider: 'openai' });
  if (issues.length > 0) {
    const counts = new Map<string, number>();
    for (const issue of issues) counts.set(issue.type, (counts.get(issue.type) ?? 0) + 1);
    const summary = Array.from(counts, ([type, count]) => `${count} ${type}`).join(', ');
    context.warn(`the recorded conversation is not valid for OpenAI (${summary}); repairMessages can fix it`);
  }
  const metadata: TranscriptMetadata = { format };
  if (conversation.model !== undefined) metadata.model = conversation.model;
  return { conversation, metadata };
}

const jsonLines = Symbol('JSON Lines');

/**
 * The text as one JSON document, or `jsonLines` when it is not one and one of its first two lines is JSON on
 * its own (the first line may be the broken one). Anything else is a `TranscriptImportError` naming the line.
 */
function readDocument(body: string, context: ImportContext): unknown {
  try {
    return JSON.parse(body);
  } catch {
    // JSON Lines, or broken JSON.
  }
  let start = 0;
  for (let checked = 0; checked < 2 && start < body.length; ) {
    let end = body.indexOf('\n', start);
    if (end === -1) end = body.length;
    const line = body.slice(start, end).trim();
    start = end + 1;
    if (line === '') continue;
    checked++;
    try {
      JSON.parse(line);
      return jsonLines;
    } catch {
      // Try the next line.
    }
  }
  try {
    return parseJsonText(body, fileOption(context.file));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const line = (error as { line?: number }).line;
    throw new TranscriptImportError(
      `not readable JSON (${reason})`,
      { ...fileOption(context.file), ...(line === undefined ? {} : { line }) },
      { cause: error },
    );
  }
}

function readJsonLines(
  body: string,
  format: MessageFormat,
  converter: Converter,
  context: ImportContext,
): Conversation {
  const lines = readJsonLineRecords(body, context);
  context.read(lines.length);
  const [first] = lines;
  const requestMode =
    first !== undefined &&
    !(isRecord(first.value) && 'role' in first.value) &&
    exchangeOf(first.value) !== undefined;
  if (!requestMode) {
    const sources = lines.map(({ line, value }) => ({ value, location: { line } }));
    return { messages: convertMessages(sources, { format, converter, context, countRecords: true }) };
  }
  // Each request repeats the history: the longest (the last on a tie) is the session.
  let chosen: { line: number; exchange: Exchange } | undefined;
  for (const { line, value } of lines) {
    const exchange = exchangeOf(value);
    if (exchange === undefined) {
      context.malformed('expected a request with "messages" (or a message array) on this line', { line });
      continue;
    }
    if (
      chosen === undefined ||
      messagesOf(exchange.request).length >= messagesOf(chosen.exchange.request).length
    ) {
      if (chosen !== undefined) context.ignore('superseded request');
      chosen = { line, exchange };
    } else {
      context.ignore('superseded request');
    }
  }
  if (chosen === undefined) return { messages: [] };
  context.use();
  return readExchange(
    chosen.exchange,
    { line: chosen.line },
    { format, converter, context, countRecords: false },
  );
}

interface ConvertOptions {
  format: MessageFormat;
  converter: Converter;
  context: ImportContext;
  /** Each message is a record of its own (documents, JSON Lines of messages), read and used one by one. */
  countRecords: boolean;
}

/** A request's conversation (body fields, then messages), plus the logged response. */
function readExchange(exchange: Exchange, base: Location, options: ConvertOptions): Conversation {
  const { format, converter, context } = options;
  const { request, response } = exchange;
  const conversation: Conversation = Array.isArray(request)
    ? { messages: [] }
    : converter.body(request, context.file);
  const sources: SourceMessage[] = messagesOf(request).map((value, record) => ({
    value,
    location: { ...base, record },
  }));
  const answer = responseMessage(response);
  if (answer !== undefined) sources.push({ value: answer, location: { ...base, record: sources.length } });
  if (options.countRecords) context.read(sources.length);
  const leading = conversation.messages.map((message) => withPosition(message, format, base));
  return { ...conversation, messages: [...leading, ...convertMessages(sources, options)] };
}

function withPosition(message: Message, format: MessageFormat, location: Location): Message {
  const metadata = { origin: format, ...message.metadata, ...location };
  return { ...message, metadata };
}

/** Converts messages one by one, skipping the ones the converter rejects, and rebuilds the links between them. */
function convertMessages(sources: readonly SourceMessage[], options: ConvertOptions): Message[] {
  const { format, converter, context } = options;
  const messages: Message[] = [];
  const toolNames = new Map<string, string>();
  let legacyCallId: string | undefined;
  sources.forEach(({ value, location }, index) => {
    let converted: Message[];
    try {
      converted = converter.message(value, context.file);
    } catch (error) {
      if (!(error instanceof InvalidMessageError)) throw error;
      const field = error.path === undefined || error.path === '' ? '' : ` (field ${error.path})`;
      context.malformed(`${error.reason}${field}`, location);
      return;
    }
    if (options.countRecords) context.use();
    if (format === 'anthropic') markTurnEnd(converted, value, sources[index + 1]?.value);
    for (const message of converted) {
      if (typeof message.content !== 'string') {
        const parts = (message.content as readonly Part[]).map((part) => {
          if (part.type === 'tool-call') {
            const call = relinkCall(part, messages.length, (id) => {
              legacyCallId = id;
            });
            toolNames.set(call.toolCallId, call.toolName);
            return call;
          }
          if (part.type === 'tool-result') return relinkResult(part, message, toolNames, legacyCallId);
          return part;
        });
        messages.push(withPosition({ ...message, content: parts } as Message, format, location));
      } else {
        messages.push(withPosition(message, format, location));
      }
    }
  });
  return messages;
}

/** A legacy OpenAI `function_call` read on its own got the id of message 0: give it its position's id. */
function relinkCall(part: ToolCallPart, position: number, onLegacy: (id: string) => void): ToolCallPart {
  if (part.providerOptions?.openai?.legacyFunctionCall !== true) return part;
  const toolCallId = `function-call-${position}`;
  onLegacy(toolCallId);
  return { ...part, toolCallId };
}

function relinkResult(
  part: ToolResultPart,
  message: Message,
  toolNames: ReadonlyMap<string, string>,
  legacyCallId: string | undefined,
): ToolResultPart {
  let result = part;
  if (
    message.providerOptions?.openai?.role === 'function' &&
    part.toolCallId === unknownToolCallId &&
    legacyCallId !== undefined
  ) {
    result = { ...result, toolCallId: legacyCallId };
  }
  const name = toolNames.get(result.toolCallId);
  if (result.toolName === unknownToolName && name !== undefined) result = { ...result, toolName: name };
  return result;
}

/**
 * Anthropic's converter marks a tool message that was a whole user message followed by another user message
 * (`turnEnd`), so the two are not merged on the way back; read one at a time it cannot see the next message.
 */
function markTurnEnd(converted: Message[], value: unknown, next: unknown): void {
  const [only] = converted;
  if (converted.length !== 1 || only?.role !== 'tool') return;
  if (!isRecord(value) || value.role !== 'user' || !isRecord(next) || next.role !== 'user') return;
  converted[0] = {
    ...only,
    providerOptions: {
      ...only.providerOptions,
      anthropic: { ...only.providerOptions?.anthropic, turnEnd: true },
    },
  };
}
