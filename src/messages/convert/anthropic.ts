/**
 * Lossless conversion between precis messages and the Anthropic Messages API request format.
 *
 * Reading (`fromAnthropic`) keeps everything: what precis does not model goes into `providerOptions.anthropic` of
 * the matching message or part, under the Vercel AI SDK's key where it has one (`signature`, `redactedData`,
 * `cacheControl`, document `context` / `citations`; a document title is the file part's `filename`), unknown
 * fields in `extra`, and blocks precis cannot map exactly (unknown types, unusual sources, unsigned thinking)
 * whole in `rawBlock`. So `toAnthropic(fromAnthropic(x))` gives back `x`.
 *
 * Writing (`toAnthropic`) accepts any precis conversation, also one read from OpenAI or the AI SDK, and returns a
 * warning for everything it cannot send instead of dropping it silently.
 *
 * Keys precis uses in `providerOptions.anthropic`:
 * - `cacheControl`, `extra`, `rawBlock` on parts; `cacheControl` and `extra` on messages and tools;
 * - `signature` / `redactedData` on reasoning parts;
 * - `context`, `citations` on document (file) parts, and `title`, which toAnthropic prefers to `filename`;
 * - `isError` (an explicit `is_error` the output type does not already say) and `contentOmitted` (no `content`
 *   at all) on tool results;
 * - `resultType` on server tool results whose block type is not `<toolName>_tool_result`;
 * - `systemBlock` on a lone system message that came from a one-block `system` array;
 * - `toolResultIndexes` (positions of tool_result blocks that were not all leading) and `turnEnd` (the next
 *   user message was a separate Anthropic message) on tool messages;
 * - `rawTool` on server tool definitions.
 */

import { Buffer } from 'node:buffer';
import type { InputLocation } from '../../errors/index.js';
import { InvalidMessageError } from '../../errors/index.js';
import { describeValue, isRecord } from '../../internal/json-shapes.js';
import { toolOutputText } from '../content.js';
import type {
  AssistantContentPart,
  AssistantMessage,
  Conversation,
  DataContent,
  FilePart,
  ImagePart,
  JSONObject,
  JSONValue,
  Message,
  ProviderOptions,
  ReasoningPart,
  SystemMessage,
  TextPart,
  ToolCallPart,
  ToolContentPart,
  ToolDefinition,
  ToolMessage,
  ToolResultContentItem,
  ToolResultOutput,
  ToolResultPart,
  UserContentPart,
  UserMessage,
} from '../types.js';
import type {
  AnthropicContentBlock,
  AnthropicCustomTool,
  AnthropicDocumentSource,
  AnthropicImageSource,
  AnthropicMessage,
  AnthropicTextBlock,
  AnthropicTool,
  AnthropicUnknownBlock,
} from './anthropic-types.js';
import type { ConversionWarning } from './conversion-warning.js';
import { unknownToolName } from './placeholders.js';

export interface FromAnthropicOptions {
  /** File name to put in error messages. */
  file?: string;
}

export interface ToAnthropicOptions {
  /**
   * Throw an `InvalidMessageError` at the first thing that cannot be represented instead of returning warnings.
   * @default false
   */
  strict?: boolean;
}

export interface ToAnthropicResult {
  system?: string | AnthropicTextBlock[];
  messages: AnthropicMessage[];
  tools?: AnthropicTool[];
  /** What could not be represented. Warnings about tool definitions have index -1 and a `tools[i]` path. */
  warnings: ConversionWarning[];
}

type UnknownRecord = Record<string, unknown>;
/** The contents of `providerOptions.anthropic`. */
type AnthropicFields = Record<string, JSONValue | undefined>;

// Fields each block kind maps; everything else on the block travels in `extra`.
const messageFields = ['role', 'content'];
const textFields = ['type', 'text', 'cache_control'];
const imageFields = ['type', 'source', 'cache_control'];
const documentFields = ['type', 'source', 'context', 'citations', 'cache_control'];
const thinkingFields = ['type', 'thinking', 'signature'];
const redactedThinkingFields = ['type', 'data'];
const toolUseFields = ['type', 'id', 'name', 'input', 'cache_control'];
const toolResultFields = ['type', 'tool_use_id', 'content', 'is_error', 'cache_control'];
const serverToolResultFields = ['type', 'tool_use_id', 'content', 'cache_control'];
const customToolFields = ['name', 'description', 'input_schema', 'cache_control'];
const base64SourceFields = ['type', 'media_type', 'data'];
const urlSourceFields = ['type', 'url'];

// The providerOptions.anthropic keys toAnthropic reads, per kind; any other key gets a warning.
const systemMessageKeys = ['cacheControl', 'extra', 'systemBlock'];
const messageKeys = ['cacheControl', 'extra'];
const toolMessageKeys = ['cacheControl', 'extra', 'toolResultIndexes', 'turnEnd'];
const textPartKeys = ['cacheControl', 'extra', 'rawBlock'];
const imagePartKeys = ['cacheControl', 'extra', 'rawBlock'];
const filePartKeys = ['cacheControl', 'extra', 'rawBlock', 'title', 'context', 'citations'];
const reasoningPartKeys = ['signature', 'redactedData', 'extra', 'rawBlock'];
const toolCallPartKeys = ['cacheControl', 'extra', 'rawBlock'];
const toolResultPartKeys = ['cacheControl', 'extra', 'rawBlock', 'isError', 'contentOmitted'];
const serverToolResultPartKeys = ['cacheControl', 'extra', 'rawBlock', 'resultType'];
const toolDefinitionKeys = ['cacheControl', 'extra', 'rawTool'];
const rawPartKeys = ['rawBlock'];

const deniedToolOutput = 'Tool execution denied.';

// ---------------------------------------------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------------------------------------------

/** The fields of `record` not named in `known`, or undefined when there are none. Undefined values count as absent. */
function unknownFields(record: UnknownRecord, known: readonly string[]): JSONObject | undefined {
  const entries = Object.entries(record).filter(
    ([key, value]) => value !== undefined && !known.includes(key),
  );
  // fromEntries defines own properties, so even a "__proto__" field is copied as data.
  return entries.length === 0 ? undefined : (Object.fromEntries(entries) as JSONObject);
}

function hasOnlyFields(record: UnknownRecord, known: readonly string[]): boolean {
  return unknownFields(record, known) === undefined;
}

/** `{ anthropic: fields }` without the undefined fields, or undefined when none is left. */
function anthropicOptions(fields: Record<string, unknown>): ProviderOptions | undefined {
  const entries = Object.entries(fields).filter(([, value]) => value !== undefined);
  return entries.length === 0 ? undefined : { anthropic: Object.fromEntries(entries) as JSONObject };
}

function withProviderOptions<T extends { providerOptions?: ProviderOptions }>(
  value: T,
  providerOptions: ProviderOptions | undefined,
): T {
  return providerOptions === undefined ? value : { ...value, providerOptions };
}

function isHttpUrl(text: string): boolean {
  return /^https?:\/\//i.test(text);
}

/** True for strings toAnthropic would read as a URL rather than base64 (see `resolveData`). */
function looksLikeUrl(text: string): boolean {
  return isHttpUrl(text) || /^data:/i.test(text);
}

/** Anthropic server tool results are `<tool name>_tool_result` blocks; the client `tool_result` is not one. */
function isServerToolResultType(type: unknown): type is string {
  return typeof type === 'string' && type.endsWith('_tool_result');
}

/** Server tool errors are content objects like `{ type: 'web_search_tool_result_error', error_code }`. */
function isServerToolError(content: unknown): boolean {
  return isRecord(content) && typeof content.type === 'string' && content.type.endsWith('_error');
}

// ---------------------------------------------------------------------------------------------------------------
// Anthropic → precis
// ---------------------------------------------------------------------------------------------------------------

interface ReadContext {
  file: string | undefined;
  /** Index of the Anthropic message being read; undefined while reading `system` and `tools`. */
  index: number | undefined;
  /** Tool names by call id, from every tool_use and server_tool_use read so far. */
  toolNames: Map<string, string>;
}

function invalid(context: ReadContext, reason: string, path: string): never {
  const location: InputLocation = { path };
  if (context.file !== undefined) location.file = context.file;
  if (context.index !== undefined) location.index = context.index;
  throw new InvalidMessageError(reason, location);
}

function readString(record: UnknownRecord, field: string, path: string, context: ReadContext): string {
  const value = record[field];
  if (typeof value !== 'string') {
    invalid(context, `"${field}" must be a string, got ${describeValue(value)}`, `${path}.${field}`);
  }
  return value;
}

/** A content block: an object with a string `type`. */
function readBlockShape(value: unknown, path: string, context: ReadContext): UnknownRecord {
  if (!isRecord(value))
    invalid(context, `a content block must be an object, got ${describeValue(value)}`, path);
  if (typeof value.type !== 'string') {
    invalid(
      context,
      `a content block needs a string "type", got ${describeValue(value.type)}`,
      `${path}.type`,
    );
  }
  return value;
}

/**
 * Reads a Messages request body `{ system?, messages, tools?, model?, ... }` or a bare message array into a
 * precis conversation. Other request fields (`max_tokens`, `thinking`, ...) are kept verbatim in
 * `conversation.providerOptions.anthropic`. Ids are not assigned here. An empty `system` array reads as no
 * system prompt, which is what it means. Bad input throws an `InvalidMessageError` naming the message index
 * and field path.
 */
export function fromAnthropic(input: unknown, options: FromAnthropicOptions = {}): Conversation {
  const context: ReadContext = { file: options.file, index: undefined, toolNames: new Map() };
  if (Array.isArray(input)) return { messages: readMessages(input, context) };
  if (!isRecord(input) || input.messages === undefined) {
    invalid(
      context,
      `expected an array of messages or a request body with "messages", got ${describeValue(input)}`,
      '',
    );
  }
  const { system, messages, tools, model, ...requestFields } = input;
  if (!Array.isArray(messages))
    invalid(context, `"messages" must be an array, got ${describeValue(messages)}`, 'messages');
  if (model !== undefined && typeof model !== 'string') {
    invalid(context, `"model" must be a string, got ${describeValue(model)}`, 'model');
  }
  const conversation: Conversation = {
    messages: [...readSystem(system, context), ...readMessages(messages, context)],
  };
  if (tools !== undefined) conversation.tools = readTools(tools, context);
  if (model !== undefined) conversation.model = model;
  const providerOptions = anthropicOptions(requestFields);
  if (providerOptions !== undefined) conversation.providerOptions = providerOptions;
  return conversation;
}

function readSystem(system: unknown, context: ReadContext): SystemMessage[] {
  if (system === undefined) return [];
  if (typeof system === 'string') return [{ role: 'system', content: system }];
  if (!Array.isArray(system)) {
    invalid(
      context,
      `"system" must be a string or an array of text blocks, got ${describeValue(system)}`,
      'system',
    );
  }
  return system.map((block, position) =>
    readSystemBlock(block, `system[${position}]`, system.length === 1, context),
  );
}

/** One system message per block, so each keeps its own cache_control. */
function readSystemBlock(value: unknown, path: string, lone: boolean, context: ReadContext): SystemMessage {
  const block = readBlockShape(value, path, context);
  if (block.type !== 'text')
    invalid(context, `system blocks must be text blocks, got "${block.type}"`, `${path}.type`);
  const content = readString(block, 'text', path, context);
  const cacheControl = block.cache_control;
  const extra = unknownFields(block, textFields);
  // A lone plain block would otherwise be written back as a system string.
  const systemBlock = lone && cacheControl === undefined && extra === undefined ? true : undefined;
  const message: SystemMessage = { role: 'system', content };
  return withProviderOptions(message, anthropicOptions({ cacheControl, extra, systemBlock }));
}

function readTools(tools: unknown, context: ReadContext): ToolDefinition[] {
  if (!Array.isArray(tools))
    invalid(context, `"tools" must be an array, got ${describeValue(tools)}`, 'tools');
  return tools.map((tool, position) => readTool(tool, `tools[${position}]`, context));
}

function readTool(value: unknown, path: string, context: ReadContext): ToolDefinition {
  if (!isRecord(value)) invalid(context, `a tool must be an object, got ${describeValue(value)}`, path);
  const name = readString(value, 'name', path, context);
  // Server tools (web search, code execution, ...) have a versioned type and no input schema: kept whole.
  if (typeof value.type === 'string' && value.type !== 'custom') {
    return { name, inputSchema: {}, providerOptions: { anthropic: { rawTool: value as JSONObject } } };
  }
  if (value.input_schema === undefined)
    invalid(context, 'a tool needs an "input_schema"', `${path}.input_schema`);
  const definition: ToolDefinition = { name, inputSchema: value.input_schema as JSONValue };
  if (value.description !== undefined)
    definition.description = readString(value, 'description', path, context);
  const extra = unknownFields(value, customToolFields);
  return withProviderOptions(definition, anthropicOptions({ cacheControl: value.cache_control, extra }));
}

function readMessages(values: readonly unknown[], context: ReadContext): Message[] {
  return values.flatMap((value, index) => {
    const next = values[index + 1];
    const nextIsUser = isRecord(next) && next.role === 'user';
    return readMessage(value, { ...context, index }, nextIsUser);
  });
}

function readMessage(value: unknown, context: ReadContext, nextIsUser: boolean): Message[] {
  if (!isRecord(value)) invalid(context, `a message must be an object, got ${describeValue(value)}`, '');
  const { role, content } = value;
  if (role !== 'user' && role !== 'assistant') {
    invalid(context, `unknown role ${JSON.stringify(role)} (expected user or assistant)`, 'role');
  }
  if (typeof content !== 'string' && !Array.isArray(content)) {
    invalid(
      context,
      `content must be a string or an array of blocks, got ${describeValue(content)}`,
      'content',
    );
  }
  const extra = unknownFields(value, messageFields);
  if (role === 'assistant') return [readAssistantMessage(content, extra, context)];
  return readUserMessage(content, extra, context, nextIsUser);
}

function readAssistantMessage(
  content: string | readonly unknown[],
  extra: JSONObject | undefined,
  context: ReadContext,
): AssistantMessage {
  const parts =
    typeof content === 'string'
      ? content
      : content.map((value, position) => {
          const path = `content[${position}]`;
          return readAssistantBlock(readBlockShape(value, path, context), path, context);
        });
  const message: AssistantMessage = { role: 'assistant', content: parts };
  return withProviderOptions(message, anthropicOptions({ extra }));
}

/**
 * A user message with tool_result blocks becomes a tool message with the results, then a user message with the
 * other blocks if there are any. The tool message remembers where the results sat when they were not all at the
 * start, and whether the Anthropic message ended there although the next message is a user message too.
 */
function readUserMessage(
  content: string | readonly unknown[],
  extra: JSONObject | undefined,
  context: ReadContext,
  nextIsUser: boolean,
): Message[] {
  if (typeof content === 'string') {
    const message: UserMessage = { role: 'user', content };
    return [withProviderOptions(message, anthropicOptions({ extra }))];
  }
  const results: ToolResultPart[] = [];
  const resultIndexes: number[] = [];
  const rest: UserContentPart[] = [];
  content.forEach((value, position) => {
    const path = `content[${position}]`;
    const block = readBlockShape(value, path, context);
    if (block.type === 'tool_result') {
      results.push(readToolResultBlock(block, path, context));
      resultIndexes.push(position);
    } else {
      rest.push(readUserBlock(block, path, context));
    }
  });
  if (results.length === 0) {
    const message: UserMessage = { role: 'user', content: rest };
    return [withProviderOptions(message, anthropicOptions({ extra }))];
  }
  const leading = resultIndexes.every((position, order) => position === order);
  const toolMessage = withProviderOptions<ToolMessage>(
    { role: 'tool', content: results },
    anthropicOptions({
      extra,
      toolResultIndexes: leading ? undefined : resultIndexes,
      turnEnd: rest.length === 0 && nextIsUser ? true : undefined,
    }),
  );
  return rest.length === 0 ? [toolMessage] : [toolMessage, { role: 'user', content: rest }];
}

function readUserBlock(block: UnknownRecord, path: string, context: ReadContext): UserContentPart {
  switch (block.type) {
    case 'text':
      return readTextBlock(block, path, context);
    case 'image':
      return readImageBlock(block, path, context);
    case 'document':
      return readDocumentBlock(block, path, context);
    default:
      // Unknown types, and assistant-only blocks the API would refuse here: carried as they are.
      return rawTextPart(block);
  }
}

function readAssistantBlock(block: UnknownRecord, path: string, context: ReadContext): AssistantContentPart {
  switch (block.type) {
    case 'text':
      return readTextBlock(block, path, context);
    case 'thinking':
      return readThinkingBlock(block, path, context);
    case 'redacted_thinking':
      return readRedactedThinkingBlock(block, path, context);
    case 'tool_use':
      return readToolUseBlock(block, path, context, false);
    case 'server_tool_use':
      return readToolUseBlock(block, path, context, true);
    default:
      if (isServerToolResultType(block.type)) return readServerToolResultBlock(block, path, context);
      return rawTextPart(block);
  }
}

/** A block precis cannot map exactly, kept whole and written back unchanged. */
function rawTextPart(block: UnknownRecord): TextPart {
  return { type: 'text', text: '', providerOptions: { anthropic: { rawBlock: block as JSONObject } } };
}

function readTextBlock(block: UnknownRecord, path: string, context: ReadContext): TextPart {
  const part: TextPart = { type: 'text', text: readString(block, 'text', path, context) };
  const extra = unknownFields(block, textFields);
  return withProviderOptions(part, anthropicOptions({ cacheControl: block.cache_control, extra }));
}

type MediaSource =
  | { type: 'base64'; mediaType: string; data: string }
  | { type: 'url'; url: string }
  | { type: 'text'; mediaType: string; data: string };

/**
 * Validates and reads a base64, url or text source. Undefined for other source types (file, content) and for
 * sources with fields of their own: the caller keeps those blocks raw.
 */
function readMediaSource(block: UnknownRecord, path: string, context: ReadContext): MediaSource | undefined {
  const source = block.source;
  const sourcePath = `${path}.source`;
  if (!isRecord(source))
    invalid(context, `"source" must be an object, got ${describeValue(source)}`, sourcePath);
  if (typeof source.type !== 'string') {
    invalid(
      context,
      `"source.type" must be a string, got ${describeValue(source.type)}`,
      `${sourcePath}.type`,
    );
  }
  switch (source.type) {
    case 'base64':
    case 'text': {
      const mediaType = readString(source, 'media_type', sourcePath, context);
      const data = readString(source, 'data', sourcePath, context);
      return hasOnlyFields(source, base64SourceFields) ? { type: source.type, mediaType, data } : undefined;
    }
    case 'url': {
      const url = readString(source, 'url', sourcePath, context);
      return hasOnlyFields(source, urlSourceFields) ? { type: 'url', url } : undefined;
    }
    default:
      return undefined;
  }
}

function readImageBlock(block: UnknownRecord, path: string, context: ReadContext): ImagePart | TextPart {
  const source = readMediaSource(block, path, context);
  const options = anthropicOptions({
    cacheControl: block.cache_control,
    extra: unknownFields(block, imageFields),
  });
  // The guards keep the image on the same source type when written back (see resolveData).
  if (source?.type === 'base64' && !looksLikeUrl(source.data)) {
    return withProviderOptions<ImagePart>(
      { type: 'image', image: source.data, mediaType: source.mediaType },
      options,
    );
  }
  if (source?.type === 'url' && isHttpUrl(source.url)) {
    return withProviderOptions<ImagePart>({ type: 'image', image: source.url }, options);
  }
  return rawTextPart(block);
}

/**
 * Documents become file parts as the AI SDK writes them: PDF as base64 or URL, plain text as base64 of its
 * UTF-8 bytes with media type text/plain; the title is the filename. Content and file sources stay raw.
 */
function readDocumentBlock(block: UnknownRecord, path: string, context: ReadContext): FilePart | TextPart {
  const source = readMediaSource(block, path, context);
  const document = source === undefined ? undefined : documentData(source);
  if (document === undefined) return rawTextPart(block);
  const part: FilePart = { type: 'file', data: document.data, mediaType: document.mediaType };
  // A title that is not a string (null) cannot be a filename; it stays in `extra`.
  if (typeof block.title === 'string') part.filename = block.title;
  const known = typeof block.title === 'string' ? [...documentFields, 'title'] : documentFields;
  const options = anthropicOptions({
    context: block.context,
    citations: block.citations,
    cacheControl: block.cache_control,
    extra: unknownFields(block, known),
  });
  return withProviderOptions(part, options);
}

/** File part data for a document source, when toAnthropic would write exactly this source back. */
function documentData(source: MediaSource): { data: string; mediaType: string } | undefined {
  switch (source.type) {
    case 'base64': {
      const { mediaType, data } = source;
      const writtenOtherwise =
        mediaType === 'text/plain' || mediaType.startsWith('image/') || looksLikeUrl(data);
      return writtenOtherwise ? undefined : { data, mediaType };
    }
    case 'url':
      return isHttpUrl(source.url) ? { data: source.url, mediaType: 'application/pdf' } : undefined;
    case 'text': {
      const bytes = Buffer.from(source.data, 'utf8');
      // Lone surrogates do not survive UTF-8; such text stays raw.
      if (source.mediaType !== 'text/plain' || bytes.toString('utf8') !== source.data) return undefined;
      return { data: bytes.toString('base64'), mediaType: 'text/plain' };
    }
  }
}

/** A thinking block without a signature is refused by the API but is kept raw, as it came. */
function readThinkingBlock(block: UnknownRecord, path: string, context: ReadContext): ReasoningPart {
  const text = readString(block, 'thinking', path, context);
  if (block.signature === undefined) {
    return { type: 'reasoning', text: '', providerOptions: { anthropic: { rawBlock: block as JSONObject } } };
  }
  const signature = readString(block, 'signature', path, context);
  const options = anthropicOptions({ signature, extra: unknownFields(block, thinkingFields) });
  return withProviderOptions<ReasoningPart>({ type: 'reasoning', text }, options);
}

function readRedactedThinkingBlock(block: UnknownRecord, path: string, context: ReadContext): ReasoningPart {
  const redactedData = readString(block, 'data', path, context);
  const options = anthropicOptions({ redactedData, extra: unknownFields(block, redactedThinkingFields) });
  return withProviderOptions<ReasoningPart>({ type: 'reasoning', text: '' }, options);
}

function readToolUseBlock(
  block: UnknownRecord,
  path: string,
  context: ReadContext,
  providerExecuted: boolean,
): ToolCallPart {
  const toolCallId = readString(block, 'id', path, context);
  const toolName = readString(block, 'name', path, context);
  if (block.input === undefined) invalid(context, `a ${block.type} block needs "input"`, `${path}.input`);
  context.toolNames.set(toolCallId, toolName);
  const part: ToolCallPart = { type: 'tool-call', toolCallId, toolName, input: block.input };
  if (providerExecuted) part.providerExecuted = true;
  const extra = unknownFields(block, toolUseFields);
  return withProviderOptions(part, anthropicOptions({ cacheControl: block.cache_control, extra }));
}

/**
 * Server tool results (web_search_tool_result, ...) stay in the assistant message as tool-result parts with the
 * wire `content` as a JSON output, an error-json one when the content is an error object.
 */
function readServerToolResultBlock(
  block: UnknownRecord,
  path: string,
  context: ReadContext,
): ToolResultPart | TextPart {
  const toolCallId = readString(block, 'tool_use_id', path, context);
  if (block.content === undefined) return rawTextPart(block);
  const toolName = context.toolNames.get(toolCallId) ?? unknownToolName;
  const content = block.content as JSONValue;
  const output: ToolResultOutput = isServerToolError(content)
    ? { type: 'error-json', value: content }
    : { type: 'json', value: content };
  const resultType = block.type === `${toolName}_tool_result` ? undefined : block.type;
  const extra = unknownFields(block, serverToolResultFields);
  const part: ToolResultPart = { type: 'tool-result', toolCallId, toolName, output };
  return withProviderOptions(
    part,
    anthropicOptions({ resultType, cacheControl: block.cache_control, extra }),
  );
}

/**
 * String content is a text output (error-text when is_error is true); block content is a content output. An
 * is_error the output type does not already say is kept as `isError`, missing content as `contentOmitted`.
 */
function readToolResultBlock(block: UnknownRecord, path: string, context: ReadContext): ToolResultPart {
  const toolCallId = readString(block, 'tool_use_id', path, context);
  const isError = block.is_error;
  if (isError !== undefined && typeof isError !== 'boolean') {
    invalid(context, `"is_error" must be a boolean, got ${describeValue(isError)}`, `${path}.is_error`);
  }
  const { content } = block;
  let output: ToolResultOutput;
  if (Array.isArray(content)) {
    const items = content.map((item, position) =>
      readToolResultItem(item, `${path}.content[${position}]`, context),
    );
    output = { type: 'content', value: items };
  } else if (content === undefined || typeof content === 'string') {
    output = { type: isError === true ? 'error-text' : 'text', value: content ?? '' };
  } else {
    invalid(
      context,
      `"content" must be a string or an array of blocks, got ${describeValue(content)}`,
      `${path}.content`,
    );
  }
  const part: ToolResultPart = {
    type: 'tool-result',
    toolCallId,
    toolName: context.toolNames.get(toolCallId) ?? unknownToolName,
    output,
  };
  return withProviderOptions(
    part,
    anthropicOptions({
      isError: output.type === 'error-text' ? undefined : isError,
      contentOmitted: content === undefined ? true : undefined,
      cacheControl: block.cache_control,
      extra: unknownFields(block, toolResultFields),
    }),
  );
}

/** Text and plain images map to content items; anything else is kept raw in an empty text item. */
function readToolResultItem(value: unknown, path: string, context: ReadContext): ToolResultContentItem {
  const block = readBlockShape(value, path, context);
  if (block.type === 'text') return readTextBlock(block, path, context);
  if (block.type === 'image') {
    const source = readMediaSource(block, path, context);
    // Media items have no providerOptions, so an image with cache_control or extra fields stays raw.
    if (hasOnlyFields(block, ['type', 'source'])) {
      if (source?.type === 'base64')
        return { type: 'image-data', data: source.data, mediaType: source.mediaType };
      if (source?.type === 'url') return { type: 'image-url', url: source.url };
    }
  }
  return rawTextPart(block);
}

// ---------------------------------------------------------------------------------------------------------------
// precis → Anthropic
// ---------------------------------------------------------------------------------------------------------------

interface WriteContext {
  warnings: ConversionWarning[];
  strict: boolean;
}

/** Where a warning points: the source message index and the path inside it ('' for the message itself). */
interface Location {
  index: number;
  path: string;
}

function joinPath(path: string, field: string): string {
  return path === '' ? field : `${path}.${field}`;
}

function warn(context: WriteContext, location: Location, message: string): void {
  if (context.strict) {
    const where: InputLocation = { path: location.path };
    if (location.index >= 0) where.index = location.index;
    throw new InvalidMessageError(message, where);
  }
  const warning: ConversionWarning = { type: 'conversion-warning', index: location.index, message };
  if (location.path !== '') warning.path = location.path;
  context.warnings.push(warning);
}

function providerOptionsOf(value: object): ProviderOptions | undefined {
  return 'providerOptions' in value ? (value.providerOptions as ProviderOptions | undefined) : undefined;
}

/** `providerOptions.anthropic` of a message or part, with a warning for each key this kind cannot send. */
function anthropicFieldsOf(
  value: object,
  allowed: readonly string[],
  location: Location,
  context: WriteContext,
): AnthropicFields {
  const fields = providerOptionsOf(value)?.anthropic;
  if (!isRecord(fields)) return {};
  for (const [key, field] of Object.entries(fields)) {
    if (field === undefined || allowed.includes(key)) continue;
    const path = joinPath(location.path, `providerOptions.anthropic.${key}`);
    warn(context, { index: location.index, path }, `"${key}" has no place in the Anthropic format; not sent`);
  }
  return fields;
}

/** `base` plus the fields kept in `extra`; an extra field never overwrites a mapped one. */
function withExtra<T extends object>(
  base: T,
  extra: JSONValue | undefined,
  location: Location,
  context: WriteContext,
): T {
  if (extra === undefined) return base;
  const path = joinPath(location.path, 'providerOptions.anthropic.extra');
  if (!isRecord(extra)) {
    warn(context, { index: location.index, path }, '"extra" must be an object of fields; not sent');
    return base;
  }
  const entries = Object.entries(extra).filter(([key, value]) => {
    if (value === undefined) return false;
    if (!Object.hasOwn(base, key)) return true;
    warn(
      context,
      { index: location.index, path: `${path}.${key}` },
      `extra field "${key}" clashes with a mapped one; not sent`,
    );
    return false;
  });
  return entries.length === 0 ? base : { ...base, ...Object.fromEntries(entries) };
}

/** Adds `cache_control` and the extra fields to a block, message or tool. */
function finish<T extends object>(
  base: T,
  fields: AnthropicFields,
  location: Location,
  context: WriteContext,
): T {
  const cached = fields.cacheControl === undefined ? base : { ...base, cache_control: fields.cacheControl };
  return withExtra(cached, fields.extra, location, context);
}

/** The verbatim block of a part that carries one, or undefined. */
function rawBlockOf(
  part: object,
  location: Location,
  context: WriteContext,
): AnthropicUnknownBlock | undefined {
  const rawBlock = providerOptionsOf(part)?.anthropic?.rawBlock;
  if (rawBlock === undefined) return undefined;
  const path = joinPath(location.path, 'providerOptions.anthropic.rawBlock');
  if (!isRecord(rawBlock) || typeof rawBlock.type !== 'string') {
    warn(
      context,
      { index: location.index, path },
      'a raw block must be an object with a string "type"; ignored',
    );
    return undefined;
  }
  anthropicFieldsOf(part, rawPartKeys, location, context);
  if ('text' in part && part.text !== '') {
    warn(
      context,
      { index: location.index, path: joinPath(location.path, 'text') },
      'text of a raw block part not sent',
    );
  }
  return rawBlock as AnthropicUnknownBlock;
}

/**
 * Writes a precis conversation (or message array) as an Anthropic request: system messages go to `system`,
 * tool messages become user messages of tool_result blocks, merged with consecutive tool messages and the user
 * message right after them (Anthropic wants the results first in the user turn after the tool_use). Request
 * fields kept in `conversation.providerOptions.anthropic` and the model are not part of the result.
 */
export function toAnthropic(
  input: Conversation | readonly Message[],
  options: ToAnthropicOptions = {},
): ToAnthropicResult {
  const { strict = false } = options;
  const context: WriteContext = { warnings: [], strict };
  const messages = isMessageList(input) ? input : input.messages;
  const tools = isMessageList(input) ? undefined : input.tools;
  const system = writeSystem(messages, context);
  const written = groupTurns(messages).flatMap((turn) => writeTurn(turn, context));
  const result: ToAnthropicResult = { messages: written, warnings: context.warnings };
  if (system !== undefined) result.system = system;
  if (tools !== undefined) result.tools = tools.map((tool, position) => writeTool(tool, position, context));
  return result;
}

function isMessageList(input: Conversation | readonly Message[]): input is readonly Message[] {
  return Array.isArray(input);
}

/** A string when there is one plain system message, text blocks otherwise. Late system messages are hoisted. */
function writeSystem(
  messages: readonly Message[],
  context: WriteContext,
): string | AnthropicTextBlock[] | undefined {
  const entries: { message: SystemMessage; index: number; fields: AnthropicFields }[] = [];
  let started = false;
  messages.forEach((message, index) => {
    if (message.role !== 'system') {
      started = true;
      return;
    }
    const location = { index, path: '' };
    if (started) warn(context, location, 'system message after the conversation start moved into "system"');
    entries.push({
      message,
      index,
      fields: anthropicFieldsOf(message, systemMessageKeys, location, context),
    });
  });
  const [first] = entries;
  if (first === undefined) return undefined;
  const { fields } = first;
  const plain =
    fields.cacheControl === undefined && fields.extra === undefined && fields.systemBlock !== true;
  if (entries.length === 1 && plain) return first.message.content;
  return entries.map(({ message, index, fields }) =>
    finish<AnthropicTextBlock>({ type: 'text', text: message.content }, fields, { index, path: '' }, context),
  );
}

interface IndexedMessage<T extends Message> {
  message: T;
  index: number;
}

type Turn =
  | { role: 'assistant'; entry: IndexedMessage<AssistantMessage> }
  | { role: 'user'; entry: IndexedMessage<UserMessage> }
  | { role: 'tool'; tools: IndexedMessage<ToolMessage>[]; user?: IndexedMessage<UserMessage> };

/** Groups consecutive tool messages and the user message right after them into one user turn. */
function groupTurns(messages: readonly Message[]): Turn[] {
  const turns: Turn[] = [];
  let open: Extract<Turn, { role: 'tool' }> | undefined;
  messages.forEach((message, index) => {
    switch (message.role) {
      case 'system':
        return;
      case 'tool':
        if (open === undefined) {
          open = { role: 'tool', tools: [] };
          turns.push(open);
        }
        open.tools.push({ message, index });
        if (message.providerOptions?.anthropic?.turnEnd === true) open = undefined;
        return;
      case 'user':
        if (open === undefined) turns.push({ role: 'user', entry: { message, index } });
        else open.user = { message, index };
        open = undefined;
        return;
      case 'assistant':
        open = undefined;
        turns.push({ role: 'assistant', entry: { message, index } });
        return;
    }
  });
  return turns;
}

function writeTurn(turn: Turn, context: WriteContext): AnthropicMessage[] {
  switch (turn.role) {
    case 'assistant':
      return writeAssistantMessage(turn.entry, context);
    case 'user':
      return [writeUserMessage(turn.entry, context)];
    case 'tool':
      return writeToolTurn(turn, context);
  }
}

/** Applies a message-level cacheControl to the last block, unless that block has its own (as the AI SDK does). */
function withMessageCacheControl(
  blocks: AnthropicContentBlock[],
  fields: AnthropicFields,
  location: Location,
  context: WriteContext,
): AnthropicContentBlock[] {
  if (fields.cacheControl === undefined) return blocks;
  const last = blocks.at(-1);
  if (last === undefined) {
    const path = 'providerOptions.anthropic.cacheControl';
    warn(context, { index: location.index, path }, 'cacheControl of a message without content not sent');
    return blocks;
  }
  if ('cache_control' in last) return blocks;
  return [...blocks.slice(0, -1), { ...last, cache_control: fields.cacheControl } as AnthropicContentBlock];
}

interface UserContent {
  content: string | AnthropicContentBlock[];
  fields: AnthropicFields;
  index: number;
}

function writeUserContent(
  { message, index }: IndexedMessage<UserMessage>,
  context: WriteContext,
): UserContent {
  const location = { index, path: '' };
  const fields = anthropicFieldsOf(message, messageKeys, location, context);
  if (typeof message.content === 'string' && fields.cacheControl === undefined) {
    return { content: message.content, fields, index };
  }
  const parts: readonly UserContentPart[] =
    typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
  const blocks = parts.flatMap((part, position) => {
    const block = writeUserPart(part, { index, path: `content[${position}]` }, context);
    return block === undefined ? [] : [block];
  });
  return { content: withMessageCacheControl(blocks, fields, location, context), fields, index };
}

function writeUserMessage(entry: IndexedMessage<UserMessage>, context: WriteContext): AnthropicMessage {
  const { content, fields } = writeUserContent(entry, context);
  return withExtra<AnthropicMessage>(
    { role: 'user', content },
    fields.extra,
    { index: entry.index, path: '' },
    context,
  );
}

function writeAssistantMessage(
  { message, index }: IndexedMessage<AssistantMessage>,
  context: WriteContext,
): AnthropicMessage[] {
  const location = { index, path: '' };
  const fields = anthropicFieldsOf(message, messageKeys, location, context);
  let content: string | AnthropicContentBlock[];
  if (typeof message.content === 'string') {
    const text: AnthropicContentBlock = { type: 'text', text: message.content };
    content =
      fields.cacheControl === undefined
        ? message.content
        : withMessageCacheControl([text], fields, location, context);
  } else {
    const blocks = message.content.flatMap((part, position) => {
      const block = writeAssistantPart(part, { index, path: `content[${position}]` }, context);
      return block === undefined ? [] : [block];
    });
    if (blocks.length === 0 && message.content.length > 0) {
      warn(context, location, 'assistant message has nothing Anthropic can take; not sent');
      return [];
    }
    content = withMessageCacheControl(blocks, fields, location, context);
  }
  return [withExtra<AnthropicMessage>({ role: 'assistant', content }, fields.extra, location, context)];
}

/**
 * One user message: the tool_result blocks of every tool message in the turn, then the blocks of the user
 * message that followed, or interleaved at `toolResultIndexes` when a lone tool message recorded them.
 */
function writeToolTurn(turn: Extract<Turn, { role: 'tool' }>, context: WriteContext): AnthropicMessage[] {
  const toolContents = turn.tools.map((entry) => writeToolContent(entry, context));
  const results = toolContents.flatMap(({ blocks }) => blocks);
  const user = turn.user === undefined ? undefined : writeUserContent(turn.user, context);
  const rest = user === undefined ? [] : asBlocks(user.content);
  const layout = resultLayout(toolContents, results.length + rest.length, context);
  const content = layout === undefined ? [...results, ...rest] : interleave(results, rest, layout);
  if (content.length === 0) return [];
  let message: AnthropicMessage = { role: 'user', content };
  for (const { fields, index } of [...toolContents, ...(user === undefined ? [] : [user])]) {
    message = withExtra(message, fields.extra, { index, path: '' }, context);
  }
  return [message];
}

function asBlocks(content: string | AnthropicContentBlock[]): AnthropicContentBlock[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

interface ToolContent {
  blocks: AnthropicContentBlock[];
  fields: AnthropicFields;
  index: number;
}

function writeToolContent(
  { message, index }: IndexedMessage<ToolMessage>,
  context: WriteContext,
): ToolContent {
  const location = { index, path: '' };
  const fields = anthropicFieldsOf(message, toolMessageKeys, location, context);
  const blocks = message.content.flatMap((part, position) => {
    const block = writeToolMessagePart(part, { index, path: `content[${position}]` }, context);
    return block === undefined ? [] : [block];
  });
  return { blocks: withMessageCacheControl(blocks, fields, location, context), fields, index };
}

/** The recorded tool_result positions, when the turn has one tool message and they fit the blocks written. */
function resultLayout(
  toolContents: readonly ToolContent[],
  total: number,
  context: WriteContext,
): number[] | undefined {
  const recorded = toolContents.find(({ fields }) => fields.toolResultIndexes !== undefined);
  if (recorded === undefined) return undefined;
  const indexes = recorded.fields.toolResultIndexes;
  if (toolContents.length === 1 && isLayout(indexes, recorded.blocks.length, total)) return indexes;
  const location = { index: recorded.index, path: 'providerOptions.anthropic.toolResultIndexes' };
  warn(context, location, 'recorded tool_result positions do not fit this turn; results written first');
  return undefined;
}

/** `count` ascending integer positions below `total`. */
function isLayout(value: JSONValue | undefined, count: number, total: number): value is number[] {
  if (!Array.isArray(value) || value.length !== count) return false;
  let previous = -1;
  for (const position of value) {
    if (
      typeof position !== 'number' ||
      !Number.isInteger(position) ||
      position <= previous ||
      position >= total
    ) {
      return false;
    }
    previous = position;
  }
  return true;
}

function interleave<T>(results: readonly T[], rest: readonly T[], positions: readonly number[]): T[] {
  const merged: T[] = [];
  let resultOrder = 0;
  let restOrder = 0;
  for (let position = 0; position < results.length + rest.length; position++) {
    const item = positions.includes(position) ? results[resultOrder++] : rest[restOrder++];
    if (item !== undefined) merged.push(item);
  }
  return merged;
}

function writeToolMessagePart(
  part: ToolContentPart,
  location: Location,
  context: WriteContext,
): AnthropicContentBlock | undefined {
  if (part.type === 'tool-approval-response') {
    warn(context, location, 'tool approval responses have no Anthropic form; not sent');
    return undefined;
  }
  return rawBlockOf(part, location, context) ?? writeToolResultPart(part, location, context);
}

function writeUserPart(
  part: UserContentPart,
  location: Location,
  context: WriteContext,
): AnthropicContentBlock | undefined {
  const raw = rawBlockOf(part, location, context);
  if (raw !== undefined) return raw;
  switch (part.type) {
    case 'text':
      return writeTextPart(part, location, context);
    case 'image':
      return writeImagePart(part, location, context);
    case 'file':
      return writeFilePart(part, location, context);
    default:
      return unsupportedPart(part, location, context);
  }
}

function writeAssistantPart(
  part: AssistantContentPart,
  location: Location,
  context: WriteContext,
): AnthropicContentBlock | undefined {
  const raw = rawBlockOf(part, location, context);
  if (raw !== undefined) return raw;
  switch (part.type) {
    case 'text':
      return writeTextPart(part, location, context);
    case 'reasoning':
      return writeReasoningPart(part, location, context);
    case 'tool-call':
      return writeToolCallPart(part, location, context);
    case 'tool-result':
      return writeServerToolResultPart(part, location, context);
    case 'file':
      warn(context, location, 'Anthropic assistant turns cannot hold files; not sent');
      return undefined;
    case 'tool-approval-request':
      warn(context, location, 'tool approval requests have no Anthropic form; not sent');
      return undefined;
    default:
      return unsupportedPart(part, location, context);
  }
}

function unsupportedPart(part: never, location: Location, context: WriteContext): undefined {
  warn(
    context,
    location,
    `part type ${JSON.stringify((part as { type?: unknown }).type)} is not supported; not sent`,
  );
  return undefined;
}

function writeTextPart(part: TextPart, location: Location, context: WriteContext): AnthropicTextBlock {
  const fields = anthropicFieldsOf(part, textPartKeys, location, context);
  return finish<AnthropicTextBlock>({ type: 'text', text: part.text }, fields, location, context);
}

/** Only signed or redacted reasoning can go back: the API rejects thinking blocks without a valid signature. */
function writeReasoningPart(
  part: ReasoningPart,
  location: Location,
  context: WriteContext,
): AnthropicContentBlock | undefined {
  const fields = anthropicFieldsOf(part, reasoningPartKeys, location, context);
  if (typeof fields.signature === 'string') {
    const block = { type: 'thinking', thinking: part.text, signature: fields.signature };
    return withExtra(block, fields.extra, location, context);
  }
  if (typeof fields.redactedData === 'string') {
    if (part.text !== '') warn(context, location, 'text of redacted reasoning not sent');
    return withExtra(
      { type: 'redacted_thinking', data: fields.redactedData },
      fields.extra,
      location,
      context,
    );
  }
  warn(
    context,
    location,
    'reasoning without an Anthropic signature not sent: the API rejects unsigned thinking',
  );
  return undefined;
}

function writeToolCallPart(
  part: ToolCallPart,
  location: Location,
  context: WriteContext,
): AnthropicContentBlock {
  const fields = anthropicFieldsOf(part, toolCallPartKeys, location, context);
  const block = {
    type: part.providerExecuted === true ? 'server_tool_use' : 'tool_use',
    id: part.toolCallId,
    name: part.toolName,
    input: toolInput(part.input, location, context),
  };
  return finish(block, fields, location, context);
}

/** Anthropic wants an object; anything else (e.g. unparsable OpenAI arguments) is sent as is, with a warning. */
function toolInput(input: unknown, location: Location, context: WriteContext): unknown {
  if (input === undefined) return {};
  if (!isRecord(input)) {
    const path = joinPath(location.path, 'input');
    warn(
      context,
      { index: location.index, path },
      'tool input is not a JSON object, which Anthropic requires',
    );
  }
  return input;
}

function writeServerToolResultPart(
  part: ToolResultPart,
  location: Location,
  context: WriteContext,
): AnthropicContentBlock {
  const fields = anthropicFieldsOf(part, serverToolResultPartKeys, location, context);
  const type = typeof fields.resultType === 'string' ? fields.resultType : `${part.toolName}_tool_result`;
  const block = {
    type,
    tool_use_id: part.toolCallId,
    content: serverToolResultContent(part.output, location, context),
  };
  return finish(block, fields, location, context);
}

function serverToolResultContent(
  output: ToolResultOutput,
  location: Location,
  context: WriteContext,
): JSONValue {
  if (output.type === 'json' || output.type === 'error-json') return output.value;
  const path = joinPath(location.path, 'output');
  warn(
    context,
    { index: location.index, path },
    `server tool results carry JSON; ${output.type} output sent as text`,
  );
  return toolOutputText(output);
}

function writeToolResultPart(
  part: ToolResultPart,
  location: Location,
  context: WriteContext,
): AnthropicContentBlock {
  const fields = anthropicFieldsOf(part, toolResultPartKeys, location, context);
  const { content, isError } = toolResultContent(part.output, location, context);
  const omitted = fields.contentOmitted === true && content === '';
  const flag = isError ?? (typeof fields.isError === 'boolean' ? fields.isError : undefined);
  const block = {
    type: 'tool_result',
    tool_use_id: part.toolCallId,
    ...(omitted ? {} : { content }),
    ...(flag === undefined ? {} : { is_error: flag }),
  };
  return finish(block, fields, location, context);
}

/** JSON outputs become JSON text; error outputs and denials set is_error. */
function toolResultContent(
  output: ToolResultOutput,
  location: Location,
  context: WriteContext,
): { content: string | AnthropicContentBlock[]; isError?: true } {
  switch (output.type) {
    case 'text':
      return { content: output.value };
    case 'error-text':
      return { content: output.value, isError: true };
    case 'json':
      return { content: JSON.stringify(output.value ?? null) };
    case 'error-json':
      return { content: JSON.stringify(output.value ?? null), isError: true };
    case 'execution-denied':
      return { content: output.reason ?? deniedToolOutput, isError: true };
    case 'content': {
      const blocks = output.value.map((item, position) => {
        const path = joinPath(location.path, `output.value[${position}]`);
        return writeToolResultItem(item, { index: location.index, path }, context);
      });
      return { content: blocks };
    }
  }
}

function writeToolResultItem(
  item: ToolResultContentItem,
  location: Location,
  context: WriteContext,
): AnthropicContentBlock {
  switch (item.type) {
    case 'text':
      return rawBlockOf(item, location, context) ?? writeTextPart(item, location, context);
    case 'image-data':
      return { type: 'image', source: { type: 'base64', media_type: item.mediaType, data: item.data } };
    case 'image-url':
      return { type: 'image', source: { type: 'url', url: item.url } };
    case 'file-url':
      return { type: 'document', source: { type: 'url', url: item.url } };
    case 'media':
    case 'file-data': {
      if (item.mediaType.startsWith('image/'))
        return { type: 'image', source: imageSource(item.data, item.mediaType) };
      const source = documentSource(item.data, item.mediaType, location, context);
      const title = 'filename' in item ? item.filename : undefined;
      return { type: 'document', source, ...(title === undefined ? {} : { title }) };
    }
  }
}

function writeImagePart(part: ImagePart, location: Location, context: WriteContext): AnthropicContentBlock {
  const fields = anthropicFieldsOf(part, imagePartKeys, location, context);
  const source = imageSource(part.image, part.mediaType);
  if (source.type === 'base64' && source.media_type === '') {
    warn(context, location, 'image media type unknown and not detectable; sent as image/jpeg');
    source.media_type = 'image/jpeg';
  }
  return finish({ type: 'image', source }, fields, location, context);
}

/**
 * File parts are written as the AI SDK writes them: images as image blocks, text/plain as a text document
 * (the data is base64 of UTF-8), anything else as a base64 or URL document titled with the filename.
 */
function writeFilePart(part: FilePart, location: Location, context: WriteContext): AnthropicContentBlock {
  if (part.mediaType.startsWith('image/')) {
    const fields = anthropicFieldsOf(part, imagePartKeys, location, context);
    if (part.filename !== undefined)
      warn(context, joinLocation(location, 'filename'), 'image filename not sent');
    return finish(
      { type: 'image', source: imageSource(part.data, part.mediaType) },
      fields,
      location,
      context,
    );
  }
  const fields = anthropicFieldsOf(part, filePartKeys, location, context);
  const title = fields.title ?? part.filename;
  const block = {
    type: 'document',
    source: documentSource(part.data, part.mediaType, location, context),
    ...(title === undefined ? {} : { title }),
    ...(fields.context === undefined ? {} : { context: fields.context }),
    ...(fields.citations === undefined ? {} : { citations: fields.citations }),
  };
  return finish(block, fields, location, context);
}

function joinLocation(location: Location, field: string): Location {
  return { index: location.index, path: joinPath(location.path, field) };
}

type ResolvedData = { type: 'url'; url: string } | { type: 'base64'; data: string; mediaType?: string };

/** http(s) URLs stay URLs; data URLs, bytes and other strings become base64. */
function resolveData(data: DataContent): ResolvedData {
  if (data instanceof URL)
    return data.protocol === 'data:' ? resolveString(data.href) : { type: 'url', url: data.href };
  if (data instanceof Uint8Array) return { type: 'base64', data: Buffer.from(data).toString('base64') };
  if (data instanceof ArrayBuffer) return { type: 'base64', data: Buffer.from(data).toString('base64') };
  return resolveString(data);
}

function resolveString(text: string): ResolvedData {
  if (isHttpUrl(text)) return { type: 'url', url: text };
  const match = /^data:([^,]*?)(;base64)?,(.*)$/is.exec(text);
  if (match === null) return { type: 'base64', data: text };
  const [, header = '', base64, body = ''] = match;
  const mediaType = header.split(';')[0] ?? '';
  const data = base64 === undefined ? Buffer.from(decodePercent(body), 'utf8').toString('base64') : body;
  return mediaType === '' ? { type: 'base64', data } : { type: 'base64', data, mediaType };
}

function decodePercent(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** An image source; a base64 one gets `media_type` '' when it is neither given nor detectable. */
function imageSource(data: DataContent, mediaType: string | undefined): AnthropicImageSource {
  const resolved = resolveData(data);
  // A URL image's type comes from the server's response; nothing the model sees is lost by leaving it out.
  if (resolved.type === 'url') return { type: 'url', url: resolved.url };
  const given = mediaType === undefined || mediaType === 'image/*' ? undefined : mediaType;
  const media = given ?? resolved.mediaType ?? detectImageMediaType(resolved.data) ?? '';
  return { type: 'base64', media_type: media, data: resolved.data };
}

const imageSignatures: readonly (readonly [string, string])[] = [
  ['iVBORw0KGgo', 'image/png'],
  ['/9j/', 'image/jpeg'],
  ['R0lGOD', 'image/gif'],
  ['UklGR', 'image/webp'],
];

/** The media type of base64 image data from its first bytes, for parts that do not say. */
function detectImageMediaType(base64: string): string | undefined {
  return imageSignatures.find(([prefix]) => base64.startsWith(prefix))?.[1];
}

function documentSource(
  data: DataContent,
  mediaType: string,
  location: Location,
  context: WriteContext,
): AnthropicDocumentSource {
  const resolved = resolveData(data);
  const supported = mediaType === 'application/pdf' || mediaType === 'text/plain';
  if (!supported)
    warn(context, location, `Anthropic documents are PDF or plain text; ${mediaType} sent as is`);
  if (resolved.type === 'url') return { type: 'url', url: resolved.url };
  if (mediaType === 'text/plain') {
    return {
      type: 'text',
      media_type: 'text/plain',
      data: Buffer.from(resolved.data, 'base64').toString('utf8'),
    };
  }
  return { type: 'base64', media_type: mediaType, data: resolved.data };
}

function writeTool(tool: ToolDefinition, position: number, context: WriteContext): AnthropicTool {
  const location = { index: -1, path: `tools[${position}]` };
  const fields = anthropicFieldsOf(tool, toolDefinitionKeys, location, context);
  const { rawTool } = fields;
  if (isRecord(rawTool) && typeof rawTool.type === 'string' && typeof rawTool.name === 'string') {
    return rawTool as AnthropicTool;
  }
  if (rawTool !== undefined) {
    const path = joinPath(location.path, 'providerOptions.anthropic.rawTool');
    warn(
      context,
      { index: -1, path },
      'a raw tool needs a string "type" and "name"; written from the definition',
    );
  }
  const base: AnthropicCustomTool = { name: tool.name, input_schema: tool.inputSchema };
  if (tool.description !== undefined) base.description = tool.description;
  return finish(base, fields, location, context);
}
