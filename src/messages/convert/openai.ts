/**
 * Lossless conversion between precis messages and the OpenAI Chat Completions wire format.
 *
 * Everything the OpenAI format says that the precis model has no field for travels in `providerOptions.openai`
 * of the message, part or tool it belongs to (the AI SDK's place for provider data):
 *
 * - messages: `name`, assistant `refusal` / `audio`, unknown extra fields (`extra`), the `developer` role
 *   (`role: 'developer'` on a system message), a system message's content parts (`contentParts`), how an
 *   assistant's content was written when the parts alone do not say (`contentShape: 'absent' | 'array'`),
 *   `tool_calls: []` / `null` (`toolCalls`), `function_call: null` (`functionCall`), reasoning sent as
 *   `reasoning` rather than `reasoning_content` (`reasoningField`), a legacy `function` message (`role`,
 *   `nullContent`);
 * - parts: image `detail` (`imageDetail`, the AI SDK key), uploaded file ids (`fileId`), refusal parts
 *   (`partType: 'refusal'`), unknown extra fields (`extra`), and for a part that would not convert back to the
 *   same wire form (an unknown part type, an odd data URL) the wire part itself (`rawPart`);
 * - tool calls: the arguments text when `JSON.stringify` of the parsed input would differ (`arguments`), extra
 *   fields of the call and of its `function` object (`extra`, `functionExtra`), custom tool calls (`toolType`),
 *   legacy `function_call`s (`legacyFunctionCall`);
 * - tools: `strict`, a missing `parameters` (`parametersAbsent`), extras, custom tools (`toolType`, `format`),
 *   tools of unknown types (`rawTool`);
 * - request bodies: every field other than `messages`, `tools` and `model` on the conversation.
 *
 * Hints that duplicate content (raw parts, arguments text, system content parts) are stale-safe: they are used
 * only while they still convert to what the message says now, so an edit of the precis message always wins.
 */

import { type InputLocation, InvalidArgumentError, InvalidMessageError } from '../../errors/index.js';
import { describeValue, isRecord } from '../../internal/json-shapes.js';
import { stableStringify } from '../../internal/stable-json.js';
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
  ToolDefinition,
  ToolMessage,
  ToolResultContentItem,
  ToolResultOutput,
  ToolResultPart,
  UserContentPart,
  UserMessage,
} from '../types.js';
import type { ConversionWarning } from './conversion-warning.js';
import {
  type OpenAIAssistantContentPart,
  type OpenAIAssistantMessage,
  type OpenAIChatMessage,
  type OpenAIFunctionMessage,
  type OpenAITextContentPart,
  type OpenAITool,
  type OpenAIToolCall,
  type OpenAIToolMessage,
  type OpenAIUserContentPart,
  openAIRoles,
} from './openai-types.js';
import { unknownToolName } from './placeholders.js';

export interface FromOpenAIOptions {
  /** File name to put in error messages. */
  file?: string;
}

export const openAIReasoningModes = ['field', 'drop'] as const;
export type OpenAIReasoningMode = (typeof openAIReasoningModes)[number];

export interface ToOpenAIOptions {
  /**
   * What to do with reasoning parts: `field` writes them to the assistant message's `reasoning_content`
   * (the DeepSeek / vLLM convention), `drop` leaves them out with one warning per message.
   * @default 'field'
   */
  reasoning?: OpenAIReasoningMode;
}

export interface ToOpenAIResult {
  messages: OpenAIChatMessage[];
  /** Present when the conversation has tools. */
  tools?: OpenAITool[];
  /**
   * The request-level fields recorded from an OpenAI request body (`conversation.providerOptions.openai`), so
   * that `{ model, ...request, messages, tools }` rebuilds the body. Present only when there are any.
   */
  request?: JSONObject;
  warnings: ConversionWarning[];
}

/** Call id of a legacy `function` message that follows no `function_call`. */
export const unknownToolCallId = 'unknown';

// ---------------------------------------------------------------------------------------------------------------
// Shared helpers

type WireObject = Record<string, unknown>;
type OpenAIHints = Record<string, JSONValue>;
type Fail = (reason: string, path: string) => never;
type TextItem = Extract<ToolResultContentItem, { type: 'text' }>;
type HintCarrier = { providerOptions?: ProviderOptions };

const unknownMediaType = 'application/octet-stream';
/** What OpenAI means by a function without `parameters`: one that takes no arguments. */
const emptyParameters: JSONObject = { type: 'object', properties: {} };
const dataUrlPattern = /^data:([^;,]+);base64,([A-Za-z0-9+/]*={0,2})$/;
const schemePattern = /^[a-zA-Z][a-zA-Z0-9+.-]*:/;

/** Used where a stale hint is re-read: a hint that no longer parses is simply not used. */
const failSilently: Fail = (reason) => {
  throw new Error(reason);
};

function location(file: string | undefined, index?: number, path?: string): InputLocation {
  return {
    ...(file === undefined ? {} : { file }),
    ...(index === undefined ? {} : { index }),
    ...(path === undefined ? {} : { path }),
  };
}

function expectObject(value: unknown, path: string, fail: Fail): WireObject {
  if (!isRecord(value)) fail(`expected an object, got ${describeValue(value)}`, path);
  return value as WireObject;
}

function expectString(value: unknown, path: string, fail: Fail): string {
  if (typeof value !== 'string') fail(`expected a string, got ${describeValue(value)}`, path);
  return value as string;
}

function optionalString(value: unknown, path: string, fail: Fail): string | undefined {
  return value === undefined ? undefined : expectString(value, path, fail);
}

/** A field that may be a string or `null`; `undefined` when absent. */
function nullableString(value: unknown, path: string, fail: Fail): string | null | undefined {
  return value === null ? null : optionalString(value, path, fail);
}

/** Fields of `record` that are not in `known`, or undefined when there are none. `undefined` counts as absent. */
function extraFields(record: WireObject, known: readonly string[]): JSONObject | undefined {
  const entries = Object.entries(record).filter(
    ([key, value]) => value !== undefined && !known.includes(key),
  );
  // fromEntries (not assignment) so that a `__proto__` key stays an ordinary field.
  return entries.length === 0 ? undefined : (Object.fromEntries(entries) as JSONObject);
}

/** `target` with the defined `hints` as `providerOptions.openai`, or `target` itself when none is defined. */
function withHints<T extends HintCarrier>(target: T, hints: Record<string, JSONValue | undefined>): T {
  const defined = Object.entries(hints).filter(([, value]) => value !== undefined);
  if (defined.length === 0) return target;
  const openai = { ...target.providerOptions?.openai, ...Object.fromEntries(defined) } as OpenAIHints;
  return { ...target, providerOptions: { ...target.providerOptions, openai } };
}

function hintsOf(carrier: HintCarrier): OpenAIHints {
  return carrier.providerOptions?.openai ?? {};
}

function objectHint(hints: OpenAIHints, key: string): JSONObject {
  const value = hints[key];
  return isRecord(value) ? (value as JSONObject) : {};
}

function nameField(hints: OpenAIHints): { name?: string } {
  return typeof hints.name === 'string' ? { name: hints.name } : {};
}

/** `carrier` without one openai hint, dropping containers left empty. */
function withoutHint(carrier: HintCarrier, key: string): unknown {
  const { [key]: _removed, ...remaining } = hintsOf(carrier);
  const { openai: _openai, ...otherProviders } = carrier.providerOptions ?? {};
  const providerOptions =
    Object.keys(remaining).length > 0 ? { ...otherProviders, openai: remaining } : otherProviders;
  const { providerOptions: _old, ...fields } = carrier;
  return Object.keys(providerOptions).length > 0 ? { ...fields, providerOptions } : fields;
}

/** Deep equality of JSON data, insensitive to key order. */
function sameJson(left: unknown, right: unknown): boolean {
  return stableStringify(left) === stableStringify(right);
}

/**
 * `converted` as is when `emit` turns it back into `raw`; otherwise `converted` carrying `raw` under
 * `providerOptions.openai[key]`, so the odd wire form survives the round trip.
 */
function withRawFallback<T extends HintCarrier>(
  raw: unknown,
  converted: T,
  emit: (value: T) => unknown,
  key: string,
): T {
  return sameJson(emit(converted), raw) ? converted : withHints(converted, { [key]: raw as JSONValue });
}

/** The raw wire form kept by `withRawFallback`, if it still converts to exactly what `carrier` says now. */
function currentRaw(carrier: HintCarrier, key: string, convert: (raw: unknown) => unknown): unknown {
  const raw = hintsOf(carrier)[key];
  if (raw === undefined) return undefined;
  try {
    return sameJson(convert(raw), withoutHint(carrier, key)) ? raw : undefined;
  } catch {
    return undefined;
  }
}

function parseDataUrl(url: string): { mediaType: string; base64: string } | undefined {
  const match = dataUrlPattern.exec(url);
  return match === null ? undefined : { mediaType: match[1]!, base64: match[2]! };
}

function toBase64(data: Uint8Array | ArrayBuffer): string {
  const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** Data as a URL string: URLs as they are, base64 and bytes as a data URL. */
function dataContentToUrl(data: DataContent, mediaType: string): string {
  if (data instanceof URL) return data.href;
  if (typeof data === 'string') return schemePattern.test(data) ? data : `data:${mediaType};base64,${data}`;
  return `data:${mediaType};base64,${toBase64(data)}`;
}

/** Data as plain base64, or undefined when it is only reachable through a (non-data) URL. */
function dataContentToBase64(data: DataContent): string | undefined {
  if (data instanceof URL) return parseDataUrl(data.href)?.base64;
  if (typeof data === 'string') return schemePattern.test(data) ? parseDataUrl(data)?.base64 : data;
  return toBase64(data);
}

/** OpenAI audio `format` ↔ media type. `mp3` is `audio/mpeg` as IANA registers it (the AI SDK reads both). */
function audioMediaType(format: string): string {
  return format === 'mp3' ? 'audio/mpeg' : `audio/${format}`;
}

const audioFormatsBySubtype: Record<string, string> = {
  mpeg: 'mp3',
  mp3: 'mp3',
  'x-wav': 'wav',
  wave: 'wav',
};

function audioFormat(mediaType: string): string {
  const subtype = mediaType.slice('audio/'.length);
  return audioFormatsBySubtype[subtype] ?? subtype;
}

function parseArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON: the model's text is the input (see ToolCallPart.input).
    return text;
  }
}

/**
 * Canonical arguments text: a string input is raw (not-JSON) arguments text and goes out as it is; a call
 * without input (possible in hand-built conversations) sends `{}`, as OpenAI wants a JSON object.
 */
function argumentsText(input: unknown): string {
  if (typeof input === 'string') return input;
  return (input === undefined ? undefined : JSON.stringify(input)) ?? '{}';
}

/** The arguments text to keep as a hint: only when the canonical text would differ. */
function argumentsHint(text: string, input: unknown): string | undefined {
  return argumentsText(input) === text ? undefined : text;
}

// ---------------------------------------------------------------------------------------------------------------
// OpenAI → precis

interface ImportState {
  file: string | undefined;
  /** Tool names by call id, from the assistant messages read so far: OpenAI tool messages carry only the id. */
  toolNames: Map<string, string>;
  /** Id given to the latest legacy `function_call`, which the next `function` message answers. */
  functionCallId: string | undefined;
}

/**
 * Reads OpenAI Chat Completions messages, either a message array or a request body `{ messages, tools?, model?,
 * ... }`, into a precis conversation. Messages get no ids (see `assignIds`). Throws `InvalidMessageError` naming
 * the file, message index and field path at the first thing that is not valid OpenAI input.
 */
export function fromOpenAI(input: unknown, options: FromOpenAIOptions = {}): Conversation {
  const { file } = options;
  if (Array.isArray(input)) return { messages: messagesFromOpenAI(input, file) };
  if (!isRecord(input)) {
    throw new InvalidMessageError(
      `expected an array of messages or a request body with "messages", got ${describeValue(input)}`,
      location(file),
    );
  }
  const { messages, tools, model, ...request } = input;
  const conversation: Conversation = { messages: messagesFromOpenAI(messages, file) };
  // `null` tools or model are odd but harmless: they stay request fields so the body round-trips.
  if (Array.isArray(tools)) conversation.tools = toolsFromOpenAI(tools, file);
  else if (tools === null) request.tools = null;
  else if (tools !== undefined) {
    throw new InvalidMessageError(
      `"tools" must be an array, got ${describeValue(tools)}`,
      location(file, undefined, 'tools'),
    );
  }
  if (typeof model === 'string') conversation.model = model;
  else if (model === null) request.model = null;
  else if (model !== undefined) {
    throw new InvalidMessageError(
      `"model" must be a string, got ${describeValue(model)}`,
      location(file, undefined, 'model'),
    );
  }
  const requestFields = extraFields(request, []);
  if (requestFields !== undefined) conversation.providerOptions = { openai: requestFields };
  return conversation;
}

function messagesFromOpenAI(value: unknown, file: string | undefined): Message[] {
  if (!Array.isArray(value)) {
    throw new InvalidMessageError(
      `"messages" must be an array, got ${describeValue(value)}`,
      location(file, undefined, 'messages'),
    );
  }
  const state: ImportState = { file, toolNames: new Map(), functionCallId: undefined };
  return value.map((message, index) => messageFromOpenAI(message, index, state));
}

function messageFromOpenAI(raw: unknown, index: number, state: ImportState): Message {
  const fail: Fail = (reason, path) => {
    throw new InvalidMessageError(reason, location(state.file, index, path));
  };
  const message = expectObject(raw, '', fail);
  switch (message.role) {
    case 'system':
    case 'developer':
      return systemFromOpenAI(message, fail);
    case 'user':
      return userFromOpenAI(message, fail);
    case 'assistant':
      return assistantFromOpenAI(message, index, state, fail);
    case 'tool':
      return toolFromOpenAI(message, state, fail);
    case 'function':
      return functionFromOpenAI(message, state, fail);
    default:
      return fail(`unknown role ${describeValue(message.role)} (expected ${openAIRoles.join(', ')})`, 'role');
  }
}

/** Text of system content parts, one part per line; undefined when a part is not a well-formed text part. */
function systemPartsText(parts: readonly unknown[]): string | undefined {
  const texts: string[] = [];
  for (const part of parts) {
    if (!isRecord(part) || typeof part.type !== 'string') return undefined;
    if (part.type !== 'text') continue;
    if (typeof part.text !== 'string') return undefined;
    texts.push(part.text);
  }
  return texts.join('\n');
}

function checkSystemPart(raw: unknown, path: string, fail: Fail): void {
  const part = expectObject(raw, path, fail);
  const type = expectString(part.type, `${path}.type`, fail);
  if (type === 'text') expectString(part.text, `${path}.text`, fail);
}

/** precis system content is a string: content parts are joined, and kept as a hint for the way back. */
function systemFromOpenAI(message: WireObject, fail: Fail): SystemMessage {
  const { content } = message;
  let contentParts: JSONValue | undefined;
  if (Array.isArray(content)) {
    content.forEach((part, i) => {
      checkSystemPart(part, `content[${i}]`, fail);
    });
    contentParts = content as JSONValue;
  } else if (typeof content !== 'string') {
    fail(
      `system message content must be a string or an array of text parts, got ${describeValue(content)}`,
      'content',
    );
  }
  const text = Array.isArray(content) ? systemPartsText(content)! : (content as string);
  return withHints<SystemMessage>(
    { role: 'system', content: text },
    {
      role: message.role === 'developer' ? 'developer' : undefined,
      name: optionalString(message.name, 'name', fail),
      contentParts,
      extra: extraFields(message, ['role', 'content', 'name']),
    },
  );
}

function userFromOpenAI(message: WireObject, fail: Fail): UserMessage {
  const { content } = message;
  if (typeof content !== 'string' && !Array.isArray(content)) {
    fail(
      `user message content must be a string or an array of parts, got ${describeValue(content)}`,
      'content',
    );
  }
  const converted =
    typeof content === 'string'
      ? content
      : (content as unknown[]).map((part, i) =>
          withRawFallback(
            part,
            userPartFromOpenAI(part, `content[${i}]`, fail),
            emitUserPartQuietly,
            'rawPart',
          ),
        );
  return withHints<UserMessage>(
    { role: 'user', content: converted },
    {
      name: optionalString(message.name, 'name', fail),
      extra: extraFields(message, ['role', 'content', 'name']),
    },
  );
}

/** A wire part precis has no type for: an empty text part that carries the wire part (see `withRawFallback`). */
function unknownPart(): TextPart {
  return { type: 'text', text: '' };
}

function userPartFromOpenAI(raw: unknown, path: string, fail: Fail): UserContentPart {
  const part = expectObject(raw, path, fail);
  const type = expectString(part.type, `${path}.type`, fail);
  switch (type) {
    case 'text':
      return textPartFromOpenAI(part, path, fail);
    case 'image_url':
      return imagePartFromOpenAI(part, path, fail);
    case 'input_audio':
      return audioPartFromOpenAI(part, path, fail);
    case 'file':
      return filePartFromOpenAI(part, path, fail);
    default:
      return unknownPart();
  }
}

function textPartFromOpenAI(part: WireObject, path: string, fail: Fail): TextPart {
  return withHints<TextPart>(
    { type: 'text', text: expectString(part.text, `${path}.text`, fail) },
    { extra: extraFields(part, ['type', 'text']) },
  );
}

/** A base64 data URL becomes base64 + media type (as the AI SDK holds images); any other URL stays a string. */
function imagePartFromOpenAI(part: WireObject, path: string, fail: Fail): ImagePart {
  const imageUrl = expectObject(part.image_url, `${path}.image_url`, fail);
  const url = expectString(imageUrl.url, `${path}.image_url.url`, fail);
  const detail = optionalString(imageUrl.detail, `${path}.image_url.detail`, fail);
  const data = parseDataUrl(url);
  const image: ImagePart =
    data === undefined
      ? { type: 'image', image: url }
      : { type: 'image', image: data.base64, mediaType: data.mediaType };
  return withHints(image, { imageDetail: detail, extra: extraFields(part, ['type', 'image_url']) });
}

function audioPartFromOpenAI(part: WireObject, path: string, fail: Fail): FilePart {
  const audio = expectObject(part.input_audio, `${path}.input_audio`, fail);
  const data = expectString(audio.data, `${path}.input_audio.data`, fail);
  const format = expectString(audio.format, `${path}.input_audio.format`, fail);
  return withHints<FilePart>(
    { type: 'file', data, mediaType: audioMediaType(format) },
    { extra: extraFields(part, ['type', 'input_audio']) },
  );
}

/** An uploaded file has no data here: its id stands in for the data and is kept as the `fileId` hint. */
function filePartFromOpenAI(part: WireObject, path: string, fail: Fail): FilePart {
  const file = expectObject(part.file, `${path}.file`, fail);
  const fileData = optionalString(file.file_data, `${path}.file.file_data`, fail);
  const fileId = optionalString(file.file_id, `${path}.file.file_id`, fail);
  const filename = optionalString(file.filename, `${path}.file.filename`, fail);
  const parsed = fileData === undefined ? undefined : parseDataUrl(fileData);
  const converted: FilePart = {
    type: 'file',
    data: parsed?.base64 ?? fileData ?? fileId ?? '',
    mediaType: parsed?.mediaType ?? unknownMediaType,
  };
  if (filename !== undefined) converted.filename = filename;
  return withHints(converted, { fileId, extra: extraFields(part, ['type', 'file']) });
}

interface ReasoningFromOpenAI {
  part: ReasoningPart;
  field: 'reasoning_content' | 'reasoning';
}

function reasoningFromOpenAI(message: WireObject, fail: Fail): ReasoningFromOpenAI | undefined {
  const { reasoning_content: reasoningContent, reasoning } = message;
  // A null reasoning_content is not reasoning; it stays an extra field.
  if (reasoningContent !== undefined && reasoningContent !== null) {
    const text = expectString(reasoningContent, 'reasoning_content', fail);
    return { part: { type: 'reasoning', text }, field: 'reasoning_content' };
  }
  // `reasoning` of another type (OpenRouter sends objects elsewhere) is not ours to interpret: an extra field.
  if (typeof reasoning === 'string')
    return { part: { type: 'reasoning', text: reasoning }, field: 'reasoning' };
  return undefined;
}

type ContentShape = 'absent' | 'null' | 'string' | 'array';

/** What the assistant content looks like when nothing was recorded: none → null, one plain text → string. */
function defaultContentShape(parts: readonly TextPart[]): ContentShape {
  if (parts.length === 0) return 'null';
  return parts.length === 1 && parts[0]!.providerOptions?.openai === undefined ? 'string' : 'array';
}

function contentShapeOf(content: unknown): ContentShape {
  if (content === undefined) return 'absent';
  if (content === null) return 'null';
  return typeof content === 'string' ? 'string' : 'array';
}

function assistantFromOpenAI(
  message: WireObject,
  index: number,
  state: ImportState,
  fail: Fail,
): AssistantMessage {
  const reasoning = reasoningFromOpenAI(message, fail);
  const textParts = assistantContentFromOpenAI(message.content, fail);
  const toolCalls = toolCallsFromOpenAI(message.tool_calls, fail);
  const functionCall = functionCallFromOpenAI(message.function_call, index, fail);
  for (const call of toolCalls) state.toolNames.set(call.toolCallId, call.toolName);
  if (functionCall !== undefined) state.functionCallId = functionCall.toolCallId;

  const plain = reasoning === undefined && toolCalls.length === 0 && functionCall === undefined;
  const content: AssistantMessage['content'] =
    plain && typeof message.content === 'string'
      ? message.content
      : [
          ...(reasoning === undefined ? [] : [reasoning.part]),
          ...textParts,
          ...toolCalls,
          ...(functionCall === undefined ? [] : [functionCall]),
        ];
  const shape = contentShapeOf(message.content);
  const known = ['role', 'content', 'name', 'refusal', 'audio', 'tool_calls', 'function_call'];
  if (reasoning !== undefined) known.push(reasoning.field);
  return withHints<AssistantMessage>(
    { role: 'assistant', content },
    {
      name: optionalString(message.name, 'name', fail),
      refusal: nullableString(message.refusal, 'refusal', fail),
      audio: audioReferenceFromOpenAI(message.audio, fail),
      contentShape:
        typeof content === 'string' || shape === defaultContentShape(textParts) ? undefined : shape,
      toolCalls: toolCalls.length === 0 ? (message.tool_calls as JSONValue | undefined) : undefined,
      functionCall: message.function_call === null ? null : undefined,
      reasoningField: reasoning?.field === 'reasoning' ? 'reasoning' : undefined,
      extra: extraFields(message, known),
    },
  );
}

function audioReferenceFromOpenAI(value: unknown, fail: Fail): JSONValue | undefined {
  if (value === undefined || value === null) return value;
  return expectObject(value, 'audio', fail) as JSONObject;
}

function assistantContentFromOpenAI(content: unknown, fail: Fail): TextPart[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) {
    return fail(
      `assistant content must be a string, null or an array of parts, got ${describeValue(content)}`,
      'content',
    );
  }
  return content.map((part, i) =>
    withRawFallback(
      part,
      assistantPartFromOpenAI(part, `content[${i}]`, fail),
      assistantTextPartToOpenAI,
      'rawPart',
    ),
  );
}

/** Text and refusal parts both become text parts (a refusal is what the model said); refusals are marked. */
function assistantPartFromOpenAI(raw: unknown, path: string, fail: Fail): TextPart {
  const part = expectObject(raw, path, fail);
  const type = expectString(part.type, `${path}.type`, fail);
  if (type === 'text') return textPartFromOpenAI(part, path, fail);
  if (type !== 'refusal') return unknownPart();
  return withHints<TextPart>(
    { type: 'text', text: expectString(part.refusal, `${path}.refusal`, fail) },
    { partType: 'refusal', extra: extraFields(part, ['type', 'refusal']) },
  );
}

function toolCallsFromOpenAI(value: unknown, fail: Fail): ToolCallPart[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value))
    return fail(`"tool_calls" must be an array, got ${describeValue(value)}`, 'tool_calls');
  return value.map((call, i) => toolCallFromOpenAI(call, `tool_calls[${i}]`, fail));
}

function toolCallFromOpenAI(raw: unknown, path: string, fail: Fail): ToolCallPart {
  const call = expectObject(raw, path, fail);
  const toolCallId = expectString(call.id, `${path}.id`, fail);
  if (call.type === 'custom') return customToolCallFromOpenAI(call, toolCallId, path, fail);
  if (call.type !== 'function') {
    fail(
      `a tool call's "type" must be "function" or "custom", got ${describeValue(call.type)}`,
      `${path}.type`,
    );
  }
  const fn = expectObject(call.function, `${path}.function`, fail);
  const toolName = expectString(fn.name, `${path}.function.name`, fail);
  const text = expectString(fn.arguments, `${path}.function.arguments`, fail);
  const input = parseArguments(text);
  return withHints<ToolCallPart>(
    { type: 'tool-call', toolCallId, toolName, input },
    {
      arguments: argumentsHint(text, input),
      extra: extraFields(call, ['id', 'type', 'function']),
      functionExtra: extraFields(fn, ['name', 'arguments']),
    },
  );
}

/** Custom tools take free text, so the input is that text as it is. */
function customToolCallFromOpenAI(
  call: WireObject,
  toolCallId: string,
  path: string,
  fail: Fail,
): ToolCallPart {
  const custom = expectObject(call.custom, `${path}.custom`, fail);
  const toolName = expectString(custom.name, `${path}.custom.name`, fail);
  const input = expectString(custom.input, `${path}.custom.input`, fail);
  return withHints<ToolCallPart>(
    { type: 'tool-call', toolCallId, toolName, input },
    {
      toolType: 'custom',
      extra: extraFields(call, ['id', 'type', 'custom']),
      customExtra: extraFields(custom, ['name', 'input']),
    },
  );
}

/** A legacy `function_call` has no id: it gets one from its message index, which the `function` answer reuses. */
function functionCallFromOpenAI(value: unknown, index: number, fail: Fail): ToolCallPart | undefined {
  if (value === undefined || value === null) return undefined;
  const call = expectObject(value, 'function_call', fail);
  const toolName = expectString(call.name, 'function_call.name', fail);
  const text = expectString(call.arguments, 'function_call.arguments', fail);
  const input = parseArguments(text);
  return withHints<ToolCallPart>(
    { type: 'tool-call', toolCallId: `function-call-${index}`, toolName, input },
    {
      legacyFunctionCall: true,
      arguments: argumentsHint(text, input),
      extra: extraFields(call, ['name', 'arguments']),
    },
  );
}

function toolFromOpenAI(message: WireObject, state: ImportState, fail: Fail): ToolMessage {
  const toolCallId = expectString(message.tool_call_id, 'tool_call_id', fail);
  const part: ToolResultPart = {
    type: 'tool-result',
    toolCallId,
    toolName: state.toolNames.get(toolCallId) ?? unknownToolName,
    output: toolOutputFromOpenAI(message.content, fail),
  };
  return withHints<ToolMessage>(
    { role: 'tool', content: [part] },
    { extra: extraFields(message, ['role', 'content', 'tool_call_id']) },
  );
}

function toolOutputFromOpenAI(content: unknown, fail: Fail): ToolResultOutput {
  if (typeof content === 'string') return { type: 'text', value: content };
  if (!Array.isArray(content)) {
    return fail(
      `tool message content must be a string or an array of text parts, got ${describeValue(content)}`,
      'content',
    );
  }
  const items = content.map((part, i) =>
    withRawFallback(part, toolItemFromOpenAI(part, `content[${i}]`, fail), toolTextItemToOpenAI, 'rawPart'),
  );
  return { type: 'content', value: items };
}

function toolItemFromOpenAI(raw: unknown, path: string, fail: Fail): TextItem {
  const part = expectObject(raw, path, fail);
  const type = expectString(part.type, `${path}.type`, fail);
  return type === 'text' ? textPartFromOpenAI(part, path, fail) : unknownPart();
}

function functionFromOpenAI(message: WireObject, state: ImportState, fail: Fail): ToolMessage {
  const toolName = expectString(message.name, 'name', fail);
  const { content } = message;
  if (content !== null && typeof content !== 'string') {
    fail(`function message content must be a string or null, got ${describeValue(content)}`, 'content');
  }
  const part: ToolResultPart = {
    type: 'tool-result',
    toolCallId: state.functionCallId ?? unknownToolCallId,
    toolName,
    output: { type: 'text', value: (content as string | null) ?? '' },
  };
  return withHints<ToolMessage>(
    { role: 'tool', content: [part] },
    {
      role: 'function',
      nullContent: content === null ? true : undefined,
      extra: extraFields(message, ['role', 'name', 'content']),
    },
  );
}

function toolsFromOpenAI(tools: readonly unknown[], file: string | undefined): ToolDefinition[] {
  const fail: Fail = (reason, path) => {
    throw new InvalidMessageError(reason, location(file, undefined, path));
  };
  return tools.map((tool, i) =>
    withRawFallback(
      tool,
      toolDefinitionFromOpenAI(tool, `tools[${i}]`, fail),
      toolDefinitionToOpenAI,
      'rawTool',
    ),
  );
}

function toolDefinitionFromOpenAI(raw: unknown, path: string, fail: Fail): ToolDefinition {
  const tool = expectObject(raw, path, fail);
  const type = expectString(tool.type, `${path}.type`, fail);
  if (type === 'custom') return customToolFromOpenAI(tool, path, fail);
  if (type !== 'function') {
    // A tool type we do not know: named after its type, carried whole by the rawTool fallback.
    return { name: type, inputSchema: {} };
  }
  const fn = expectObject(tool.function, `${path}.function`, fail);
  const { parameters, strict } = fn;
  if (strict !== undefined && strict !== null && typeof strict !== 'boolean') {
    fail(`"strict" must be a boolean, got ${describeValue(strict)}`, `${path}.function.strict`);
  }
  const definition: ToolDefinition = {
    name: expectString(fn.name, `${path}.function.name`, fail),
    inputSchema: parameters === undefined ? emptyParameters : (parameters as JSONValue),
  };
  const description = optionalString(fn.description, `${path}.function.description`, fail);
  if (description !== undefined) definition.description = description;
  return withHints(definition, {
    strict: strict as boolean | null | undefined,
    parametersAbsent: parameters === undefined ? true : undefined,
    extra: extraFields(tool, ['type', 'function']),
    functionExtra: extraFields(fn, ['name', 'description', 'parameters', 'strict']),
  });
}

/** A custom tool takes free text: its schema is a string; the optional grammar `format` is kept as a hint. */
function customToolFromOpenAI(tool: WireObject, path: string, fail: Fail): ToolDefinition {
  const custom = expectObject(tool.custom, `${path}.custom`, fail);
  const definition: ToolDefinition = {
    name: expectString(custom.name, `${path}.custom.name`, fail),
    inputSchema: { type: 'string' },
  };
  const description = optionalString(custom.description, `${path}.custom.description`, fail);
  if (description !== undefined) definition.description = description;
  return withHints(definition, {
    toolType: 'custom',
    format: custom.format as JSONValue | undefined,
    extra: extraFields(tool, ['type', 'custom']),
    customExtra: extraFields(custom, ['name', 'description', 'format']),
  });
}

// ---------------------------------------------------------------------------------------------------------------
// precis → OpenAI

interface EmitContext {
  index: number;
  warnings: ConversionWarning[];
  reasoning: OpenAIReasoningMode;
}

function warn(context: EmitContext, path: string | undefined, message: string): void {
  context.warnings.push({
    type: 'conversion-warning',
    index: context.index,
    ...(path === undefined ? {} : { path }),
    message,
  });
}

function isMessageList(input: Conversation | readonly Message[]): input is readonly Message[] {
  return Array.isArray(input);
}

/**
 * Writes any precis conversation (from OpenAI, Anthropic, the AI SDK, ...) as OpenAI Chat Completions messages
 * and tools. What OpenAI cannot hold is reported in `warnings`, never dropped silently. For a conversation read
 * by `fromOpenAI`, the result is the original input again, with no warnings.
 */
export function toOpenAI(
  input: Conversation | readonly Message[],
  options: ToOpenAIOptions = {},
): ToOpenAIResult {
  const { reasoning = 'field' } = options;
  if (!openAIReasoningModes.includes(reasoning)) {
    throw new InvalidArgumentError(
      'reasoning',
      `expected one of ${openAIReasoningModes.join(', ')}, got ${reasoning}`,
    );
  }
  const conversation: Conversation = isMessageList(input) ? { messages: [...input] } : input;
  const warnings: ConversionWarning[] = [];
  const messages = conversation.messages.flatMap((message, index) =>
    messageToOpenAI(message, { index, warnings, reasoning }),
  );
  const result: ToOpenAIResult = { messages, warnings };
  if (conversation.tools !== undefined) result.tools = conversation.tools.map(toolDefinitionToOpenAI);
  const request = conversation.providerOptions?.openai;
  if (request !== undefined && Object.keys(request).length > 0) result.request = { ...request };
  return result;
}

function messageToOpenAI(message: Message, context: EmitContext): OpenAIChatMessage[] {
  switch (message.role) {
    case 'system':
      return [systemToOpenAI(message)];
    case 'user':
      return [userToOpenAI(message, context)];
    case 'assistant':
      return [assistantToOpenAI(message, context)];
    case 'tool':
      return toolMessageToOpenAI(message, context);
    default:
      throw new InvalidMessageError(`unknown role ${describeValue((message as { role: unknown }).role)}`, {
        index: context.index,
        path: 'role',
      });
  }
}

function systemToOpenAI(message: SystemMessage): OpenAIChatMessage {
  const hints = hintsOf(message);
  const parts = hints.contentParts;
  const content =
    Array.isArray(parts) && systemPartsText(parts) === message.content
      ? (parts as unknown as OpenAITextContentPart[])
      : message.content;
  const role = hints.role === 'developer' ? 'developer' : 'system';
  return { ...objectHint(hints, 'extra'), role, content, ...nameField(hints) };
}

function userToOpenAI(message: UserMessage, context: EmitContext): OpenAIChatMessage {
  const hints = hintsOf(message);
  const content =
    typeof message.content === 'string'
      ? message.content
      : message.content.flatMap((part, i) => userPartToOpenAI(part, `content[${i}]`, context) ?? []);
  return { ...objectHint(hints, 'extra'), role: 'user', content, ...nameField(hints) };
}

/** For the import's round-trip check, which needs no warnings. */
function emitUserPartQuietly(part: UserContentPart): unknown {
  return userPartToOpenAI(part, '', { index: 0, warnings: [], reasoning: 'field' });
}

function userPartToOpenAI(
  part: UserContentPart,
  path: string,
  context: EmitContext,
): OpenAIUserContentPart | undefined {
  const raw = currentRaw(part, 'rawPart', (value) => userPartFromOpenAI(value, '', failSilently));
  if (raw !== undefined) return raw as OpenAIUserContentPart;
  switch (part.type) {
    case 'text':
      return textPartToOpenAI(part);
    case 'image':
      return imagePartToOpenAI(part);
    case 'file':
      return filePartToOpenAI(part, path, context);
    default:
      warn(
        context,
        path,
        `a ${describeValue((part as { type: unknown }).type)} part cannot go in a user message; dropped`,
      );
      return undefined;
  }
}

function textPartToOpenAI(part: TextPart | TextItem): OpenAITextContentPart {
  return { ...objectHint(hintsOf(part), 'extra'), type: 'text', text: part.text };
}

function imagePartToOpenAI(part: ImagePart): OpenAIUserContentPart {
  const hints = hintsOf(part);
  // The AI SDK's defaults: a missing or wildcard media type of base64 data is JPEG.
  const mediaType =
    part.mediaType === undefined || part.mediaType === 'image/*' ? 'image/jpeg' : part.mediaType;
  const url = dataContentToUrl(part.image, mediaType);
  const detail = hints.imageDetail;
  return {
    ...objectHint(hints, 'extra'),
    type: 'image_url',
    image_url: typeof detail === 'string' ? { url, detail: detail as 'auto' } : { url },
  };
}

/** Audio → input_audio, images → image_url (as the AI SDK does), anything else → a file part with a data URL. */
function filePartToOpenAI(
  part: FilePart,
  path: string,
  context: EmitContext,
): OpenAIUserContentPart | undefined {
  const hints = hintsOf(part);
  const extra = objectHint(hints, 'extra');
  if (part.mediaType.startsWith('audio/')) {
    const data = dataContentToBase64(part.data);
    if (data === undefined) {
      warn(context, path, 'OpenAI takes audio only inline, not by URL; audio part dropped');
      return undefined;
    }
    return {
      ...extra,
      type: 'input_audio',
      input_audio: { data, format: audioFormat(part.mediaType) as 'wav' },
    };
  }
  if (part.mediaType.startsWith('image/')) {
    if (part.filename !== undefined) warn(context, path, 'OpenAI images have no file name; filename dropped');
    const image: ImagePart = { type: 'image', image: part.data, mediaType: part.mediaType };
    return imagePartToOpenAI(
      part.providerOptions === undefined ? image : { ...image, providerOptions: part.providerOptions },
    );
  }
  const fileId = typeof hints.fileId === 'string' ? hints.fileId : undefined;
  const file: { file_data?: string; file_id?: string; filename?: string } = {};
  if (fileId === undefined || part.data !== fileId) {
    const url = dataContentToUrl(part.data, part.mediaType);
    if (!url.startsWith('data:')) {
      warn(
        context,
        path,
        'OpenAI takes files only inline or by uploaded file id, not by URL; file part dropped',
      );
      return undefined;
    }
    file.file_data = url;
  }
  if (fileId !== undefined) file.file_id = fileId;
  if (part.filename !== undefined) file.filename = part.filename;
  return { ...extra, type: 'file', file };
}

interface AssistantBody {
  textParts: TextPart[];
  toolCalls: OpenAIToolCall[];
  functionCall: { name: string; arguments: string } | undefined;
  reasoning: string[];
}

function assistantToOpenAI(message: AssistantMessage, context: EmitContext): OpenAIAssistantMessage {
  const hints = hintsOf(message);
  const emitted: Record<string, unknown> = {
    ...objectHint(hints, 'extra'),
    role: 'assistant',
    ...nameField(hints),
  };
  // Message-level fields kept verbatim (null included).
  if ('refusal' in hints) emitted.refusal = hints.refusal;
  if ('audio' in hints) emitted.audio = hints.audio;
  const body: AssistantBody =
    typeof message.content === 'string'
      ? { textParts: [], toolCalls: [], functionCall: undefined, reasoning: [] }
      : assistantPartsToOpenAI(message.content, context);
  if (typeof message.content === 'string') emitted.content = message.content;
  else writeAssistantContent(emitted, body.textParts, hints.contentShape);
  if (body.toolCalls.length > 0) emitted.tool_calls = body.toolCalls;
  else if (hints.toolCalls === null || (Array.isArray(hints.toolCalls) && hints.toolCalls.length === 0)) {
    emitted.tool_calls = hints.toolCalls;
  }
  if (body.functionCall !== undefined) emitted.function_call = body.functionCall;
  else if (hints.functionCall === null) emitted.function_call = null;
  if (body.reasoning.length > 0) {
    emitted[hints.reasoningField === 'reasoning' ? 'reasoning' : 'reasoning_content'] =
      body.reasoning.join('\n');
  }
  return emitted as unknown as OpenAIAssistantMessage;
}

/** Writes `content` in the recorded shape when that still fits the parts, in the default shape otherwise. */
function writeAssistantContent(
  emitted: Record<string, unknown>,
  textParts: TextPart[],
  hint: JSONValue | undefined,
) {
  const shape =
    hint === 'array' || (hint === 'absent' && textParts.length === 0) ? hint : defaultContentShape(textParts);
  switch (shape) {
    case 'absent':
      return;
    case 'null':
      emitted.content = null;
      return;
    case 'string':
      emitted.content = textParts[0]!.text;
      return;
    default:
      emitted.content = textParts.map(assistantTextPartToOpenAI);
  }
}

function assistantPartsToOpenAI(parts: readonly AssistantContentPart[], context: EmitContext): AssistantBody {
  const body: AssistantBody = { textParts: [], toolCalls: [], functionCall: undefined, reasoning: [] };
  let droppedReasoningAt: string | undefined;
  parts.forEach((part, i) => {
    const path = `content[${i}]`;
    switch (part.type) {
      case 'reasoning':
        if (context.reasoning === 'drop') droppedReasoningAt ??= path;
        else body.reasoning.push(part.text);
        return;
      case 'text':
        body.textParts.push(part);
        return;
      case 'tool-call':
        addToolCall(body, part, path, context);
        return;
      case 'tool-result':
        warn(context, path, 'OpenAI has no provider-executed tool results; rendered as assistant text');
        body.textParts.push({ type: 'text', text: renderedToolResult(part) });
        return;
      case 'file':
        warn(
          context,
          path,
          `OpenAI assistant messages cannot hold files (${part.mediaType}); file part dropped`,
        );
        return;
      default:
        warn(context, path, `OpenAI has no equivalent of a ${describeValue(part.type)} part; dropped`);
    }
  });
  if (droppedReasoningAt !== undefined) {
    warn(context, droppedReasoningAt, "reasoning dropped (option reasoning: 'drop')");
  }
  return body;
}

function addToolCall(body: AssistantBody, part: ToolCallPart, path: string, context: EmitContext): void {
  const hints = hintsOf(part);
  if (part.providerExecuted === true) {
    // OpenAI would expect a tool message answering it; the provider already ran it.
    warn(context, path, 'OpenAI has no provider-executed tool calls; rendered as assistant text');
    body.textParts.push({ type: 'text', text: `[${part.toolName} call] ${argumentsText(part.input)}` });
  } else if (hints.legacyFunctionCall === true && body.functionCall === undefined) {
    body.functionCall = {
      ...objectHint(hints, 'extra'),
      name: part.toolName,
      arguments: toolCallArguments(part),
    };
  } else {
    body.toolCalls.push(toolCallToOpenAI(part));
  }
}

function renderedToolResult(part: ToolResultPart): string {
  return `[${part.toolName} result] ${toolOutputText(part.output)}`;
}

/** The recorded arguments text while it still parses to the call's input; canonical JSON otherwise. */
function toolCallArguments(part: ToolCallPart): string {
  const hint = hintsOf(part).arguments;
  if (typeof hint === 'string' && sameJson(parseArguments(hint), part.input)) return hint;
  return argumentsText(part.input);
}

function toolCallToOpenAI(part: ToolCallPart): OpenAIToolCall {
  const hints = hintsOf(part);
  const extra = objectHint(hints, 'extra');
  if (hints.toolType === 'custom' && typeof part.input === 'string') {
    const custom = { ...objectHint(hints, 'customExtra'), name: part.toolName, input: part.input };
    return { ...extra, id: part.toolCallId, type: 'custom', custom };
  }
  const fn = {
    ...objectHint(hints, 'functionExtra'),
    name: part.toolName,
    arguments: toolCallArguments(part),
  };
  return { ...extra, id: part.toolCallId, type: 'function', function: fn };
}

function assistantTextPartToOpenAI(part: TextPart): OpenAIAssistantContentPart {
  const raw = currentRaw(part, 'rawPart', (value) => assistantPartFromOpenAI(value, '', failSilently));
  if (raw !== undefined) return raw as OpenAIAssistantContentPart;
  const hints = hintsOf(part);
  if (hints.partType === 'refusal')
    return { ...objectHint(hints, 'extra'), type: 'refusal', refusal: part.text };
  return textPartToOpenAI(part);
}

/** One OpenAI tool message per tool result: OpenAI answers each call in a message of its own. */
function toolMessageToOpenAI(message: ToolMessage, context: EmitContext): OpenAIChatMessage[] {
  const hints = hintsOf(message);
  const legacy = functionMessageToOpenAI(message, hints);
  if (legacy !== undefined) return [legacy];
  if (message.content.length === 0)
    warn(context, 'content', 'a tool message without tool results; nothing to send');
  const extra = objectHint(hints, 'extra');
  return message.content.flatMap((part, i): OpenAIToolMessage[] => {
    const path = `content[${i}]`;
    if (part.type !== 'tool-result') {
      warn(context, path, `OpenAI has no equivalent of a ${describeValue(part.type)} part; dropped`);
      return [];
    }
    const content = toolOutputToOpenAI(part.output, path, context);
    return [{ ...extra, role: 'tool', tool_call_id: part.toolCallId, content }];
  });
}

function functionMessageToOpenAI(
  message: ToolMessage,
  hints: OpenAIHints,
): OpenAIFunctionMessage | undefined {
  const [part] = message.content;
  if (hints.role !== 'function' || message.content.length !== 1 || part?.type !== 'tool-result')
    return undefined;
  if (part.output.type !== 'text') return undefined;
  const text = part.output.value;
  const content = hints.nullContent === true && text === '' ? null : text;
  return { ...objectHint(hints, 'extra'), role: 'function', name: part.toolName, content };
}

/**
 * OpenAI tool results are text: JSON outputs as JSON text, errors and denials as their text (OpenAI has no error
 * flag), content outputs as text parts. Media cannot go in a tool message.
 */
function toolOutputToOpenAI(
  output: ToolResultOutput,
  path: string,
  context: EmitContext,
): string | OpenAITextContentPart[] {
  if (output.type !== 'content') return toolOutputText(output);
  return output.value.flatMap((item, i) => {
    if (item.type === 'text') return [toolTextItemToOpenAI(item)];
    warn(
      context,
      `${path}.output.value[${i}]`,
      `OpenAI tool messages cannot hold ${item.type} content; dropped`,
    );
    return [];
  });
}

function toolTextItemToOpenAI(item: TextItem): OpenAITextContentPart {
  const raw = currentRaw(item, 'rawPart', (value) => toolItemFromOpenAI(value, '', failSilently));
  return raw !== undefined ? (raw as OpenAITextContentPart) : textPartToOpenAI(item);
}

function toolDefinitionToOpenAI(definition: ToolDefinition): OpenAITool {
  const raw = currentRaw(definition, 'rawTool', (value) => toolDefinitionFromOpenAI(value, '', failSilently));
  if (raw !== undefined) return raw as OpenAITool;
  const hints = hintsOf(definition);
  const extra = objectHint(hints, 'extra');
  const description = definition.description === undefined ? {} : { description: definition.description };
  if (hints.toolType === 'custom') {
    const format = hints.format === undefined ? {} : { format: hints.format as JSONObject };
    const custom = { ...objectHint(hints, 'customExtra'), name: definition.name, ...description, ...format };
    return { ...extra, type: 'custom', custom };
  }
  const omitParameters = hints.parametersAbsent === true && sameJson(definition.inputSchema, emptyParameters);
  const fn = {
    ...objectHint(hints, 'functionExtra'),
    name: definition.name,
    ...description,
    ...(omitParameters ? {} : { parameters: definition.inputSchema as JSONObject }),
    ...('strict' in hints ? { strict: hints.strict as boolean | null } : {}),
  };
  return { ...extra, type: 'function', function: fn };
}
