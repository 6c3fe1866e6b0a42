/**
 * OpenAI Codex CLI session rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`).
 *
 * Three layouts are read:
 * - the current one, JSON Lines of `{ timestamp, type, payload }` where `type` is `session_meta`,
 *   `response_item`, `turn_context`, `event_msg` or `compacted`;
 * - the earlier Rust one (until about September 2025), JSON Lines without the envelope: a first line
 *   `{ id, timestamp, instructions, git }`, then bare response items and `{ "record_type": "state" }` markers;
 * - the TypeScript CLI's single JSON document `{ session: { id, timestamp, instructions }, items: [...] }`.
 *
 * What the model saw are the response items, which are OpenAI Responses API items: `message` (user, assistant,
 * developer), `reasoning` (summary text as a reasoning part, `encrypted_content` kept in
 * `providerOptions.openai.reasoningEncryptedContent`), `function_call` / `custom_tool_call` / `local_shell_call`
 * and their `function_call_output` / `custom_tool_call_output` (linked by `call_id`), and `web_search_call` (run by
 * the provider: a provider-executed call with its status as an inline result). The session's
 * `base_instructions` were sent as the request's system prompt and become the first system message; its
 * `instructions` (the user's AGENTS.md) become one too, unless a `<user_instructions>` user message repeats them
 * (newer versions send them that way). Developer messages are system messages marked
 * `providerOptions.openai.role = 'developer'`. A `compacted` record's summary (its `message`, or the new user
 * messages of its `replacement_history`) is what replaced the history, and reads as a user message with
 * `metadata.compactSummary`.
 *
 * `event_msg` records are UI copies of the same traffic (`user_message`, `agent_message`, `exec_command_end`,
 * `token_count`, ...) and `turn_context` records annotate turns (the model is read from them): both are counted
 * as ignored, never turned into messages. `ghost_snapshot` (undo state) and encrypted `compaction` items are
 * ignored too.
 *
 * A tool output that is the older JSON text `{"output": "...", "metadata": {"exit_code": 0, ...}}` reads as its
 * output text (an error result when the exit code is not 0), with the metadata in `providerOptions.codex`.
 *
 * Message metadata: `origin`, `timestamp` (current layout), `line` (JSON Lines) or `record` (TypeScript
 * document), `model` on assistant messages when a `turn_context` named it, `compactSummary`.
 */

import { InvalidJsonError, TranscriptImportError } from '../../errors/index.js';
import { describeValue, isRecord } from '../../internal/json-shapes.js';
import { looksLikeJsonLines, nonBlankLines, parseJsonText } from '../../internal/parse-json.js';
import type {
  AssistantContentPart,
  JSONObject,
  JSONValue,
  MessageMetadata,
  ProviderOptions,
  ToolResultContentItem,
  ToolResultOutput,
  UserContentPart,
} from '../../messages/types.js';
import { readJsonLineRecords } from '../internal/record-readers.js';
import { createTranscriptBuilder, type TranscriptBuilder } from '../internal/transcript-builder.js';
import type {
  ImportContext,
  ImportResult,
  TranscriptImporter,
  TranscriptMetadata,
  TranscriptSample,
} from '../transcript-importer.js';

const origin = 'codex';
const linesToSample = 40;

const codexRecordTypes = ['session_meta', 'response_item', 'turn_context', 'event_msg', 'compacted'] as const;

/**
 * The serialised envelope always starts with these fields in this order, so the first line is recognised even
 * when the sample ends inside it (a `session_meta` line carries the whole system prompt).
 */
const envelopePrefix =
  /^\{"timestamp":"[^"\\]*","type":"(session_meta|response_item|turn_context|event_msg|compacted)","payload":\{/;
const typescriptDocumentStart = /^\s*\{\s*"session"\s*:\s*\{/;
const environmentCwd = /<cwd>([^<\n]*)<\/cwd>/;
const dataUrl = /^data:([^;,]+);base64,/;

type UnknownRecord = Record<string, unknown>;

interface Location {
  line?: number;
  record?: number;
}

interface SourceRecord {
  value: unknown;
  location: Location;
}

interface CodexState {
  context: ImportContext;
  builder: TranscriptBuilder;
  sessionId: string | undefined;
  cwd: string | undefined;
  model: string | undefined;
  firstTimestamp: string | undefined;
  lastTimestamp: string | undefined;
  sessionMetaSeen: boolean;
  extra: JSONObject;
  /**
   * The session's `instructions`: a system message in front of the conversation, unless a user message repeats
   * them (`<user_instructions>`), which is how newer versions send them.
   */
  instructions: { text: string; metadata: MessageMetadata; repeated: boolean } | undefined;
  /** Text of every user message read, to tell a compaction's new summary from the messages it keeps. */
  userTexts: Set<string>;
  /** Record types met that the importer does not know, warned about once each. */
  unknownTypes: Set<string>;
}

export const codexImporter: TranscriptImporter = {
  format: 'codex',
  description: 'OpenAI Codex CLI session rollout (rollout-<time>-<id>.jsonl, or the TypeScript CLI JSON)',
  detect: detectCodex,
  parse: parseCodex,
};

// ---------------------------------------------------------------------------------------------------------------
// Detection
// ---------------------------------------------------------------------------------------------------------------

function detectCodex(sample: TranscriptSample): string | undefined {
  const head = sample.head.charCodeAt(0) === 0xfeff ? sample.head.slice(1) : sample.head;
  if (typescriptDocumentStart.test(head) && /"items"\s*:\s*\[/.test(head)) {
    return 'a Codex CLI (TypeScript) rollout: { "session": {...}, "items": [...] }';
  }
  let bareMeta = false;
  for (const { line, text: raw } of nonBlankLines(head)) {
    if (line > linesToSample) break;
    const prefix = envelopePrefix.exec(raw);
    if (prefix !== null) return `line ${line} is a Codex rollout "${prefix[1]}" record`;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      continue;
    }
    if (!isRecord(value)) return undefined;
    if (typeof value.type === 'string' && isRecord(value.payload)) {
      if ((codexRecordTypes as readonly string[]).includes(value.type)) {
        return `line ${line} is a Codex rollout "${value.type}" record`;
      }
      continue;
    }
    if (isBareSessionMeta(value)) {
      bareMeta = true;
      continue;
    }
    if (bareMeta && (value.record_type === 'state' || isBareMessage(value))) {
      return `line ${line} follows a Codex session header ({ id, timestamp, instructions }) with bare rollout items`;
    }
  }
  return undefined;
}

function isBareSessionMeta(value: UnknownRecord): boolean {
  return (
    value.type === undefined &&
    value.role === undefined &&
    typeof value.id === 'string' &&
    typeof value.timestamp === 'string' &&
    ('instructions' in value || 'git' in value)
  );
}

function isBareMessage(value: UnknownRecord): boolean {
  return value.type === 'message' && typeof value.role === 'string' && Array.isArray(value.content);
}

// ---------------------------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------------------------

function parseCodex(text: string, context: ImportContext): ImportResult {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const state: CodexState = {
    context,
    builder: createTranscriptBuilder({
      origin,
      context,
      // The marks this importer's output has always had (`<id>#1`, `placeholder`, `orphanedToolResult`).
      renameCallIds: 'counter',
      placeholderMetadata: { placeholder: true },
      orphanedResultKey: 'orphanedToolResult',
    }),
    sessionId: undefined,
    cwd: undefined,
    model: undefined,
    firstTimestamp: undefined,
    lastTimestamp: undefined,
    sessionMetaSeen: false,
    extra: {},
    instructions: undefined,
    userTexts: new Set(),
    unknownTypes: new Set(),
  };
  const records = readRecords(body, context);
  const [only] = records;
  if (records.length === 1 && only !== undefined && isTypescriptDocument(only.value)) {
    readTypescriptDocument(only.value, state);
  } else {
    for (const record of records) readRecord(record, state);
  }
  return buildResult(state);
}

/** JSON Lines with a counted, skipped record for each line that is not JSON; or one JSON document. */
function readRecords(body: string, context: ImportContext): SourceRecord[] {
  const trimmed = body.trimStart();
  if (typescriptDocumentStart.test(trimmed) && !looksLikeJsonLines(trimmed)) {
    let document: unknown;
    try {
      document = parseJsonText(body, context.file === undefined ? {} : { file: context.file });
    } catch (error) {
      if (!(error instanceof InvalidJsonError)) throw error;
      throw new TranscriptImportError(
        `not a readable Codex rollout (${error.message})`,
        {
          ...(context.file === undefined ? {} : { file: context.file }),
          ...(error.line === undefined ? {} : { line: error.line }),
        },
        { cause: error },
      );
    }
    return [{ value: document, location: { line: 1 } }];
  }
  return readJsonLineRecords(body, context).map(({ value, line }) => ({ value, location: { line } }));
}

function isTypescriptDocument(value: unknown): value is { session: unknown; items: unknown[] } {
  return isRecord(value) && Array.isArray(value.items) && isRecord(value.session);
}

function readTypescriptDocument(document: { session: unknown; items: unknown[] }, state: CodexState): void {
  const session = document.session as UnknownRecord;
  state.context.read();
  readSessionMeta(session, { record: 0 }, undefined, state);
  document.items.forEach((item, index) => {
    state.context.read();
    const location = { record: index + 1 };
    if (!isRecord(item) || typeof item.type !== 'string') {
      state.context.malformed(`a rollout item needs a string "type", got ${describeValue(item)}`, location);
      return;
    }
    readResponseItem(item, location, undefined, state);
  });
}

function readRecord(source: SourceRecord, state: CodexState): void {
  const { context } = state;
  const { value, location } = source;
  context.read();
  if (!isRecord(value)) {
    context.malformed(`a record must be a JSON object, got ${describeValue(value)}`, location);
    return;
  }
  const timestamp = typeof value.timestamp === 'string' ? value.timestamp : undefined;
  if (isRecord(value.payload) && typeof value.type === 'string') {
    if (timestamp !== undefined) {
      state.firstTimestamp ??= timestamp;
      state.lastTimestamp = timestamp;
    }
    readEnvelope(value.type, value.payload, location, timestamp, state);
    return;
  }
  if (value.record_type !== undefined && value.type === undefined) {
    context.ignore('state');
    return;
  }
  if (isBareSessionMeta(value)) {
    readSessionMeta(value, location, undefined, state);
    return;
  }
  if (typeof value.type === 'string') {
    readResponseItem(value, location, undefined, state);
    return;
  }
  context.malformed('not a Codex rollout record: no "type"', location);
}

function readEnvelope(
  type: string,
  payload: UnknownRecord,
  location: Location,
  timestamp: string | undefined,
  state: CodexState,
): void {
  const { context } = state;
  switch (type) {
    case 'session_meta':
      readSessionMeta(payload, location, timestamp, state);
      return;
    case 'response_item':
      if (typeof payload.type !== 'string') {
        context.malformed(
          `a response item needs a string "type", got ${describeValue(payload.type)}`,
          location,
        );
        return;
      }
      readResponseItem(payload, location, timestamp, state);
      return;
    case 'turn_context':
      if (typeof payload.model === 'string') state.model = payload.model;
      if (typeof payload.cwd === 'string') state.cwd ??= payload.cwd;
      context.ignore('turn_context');
      return;
    case 'event_msg':
      // UI copies of the response items (and token counts, task boundaries): reading them would count twice.
      context.ignore(`event_msg:${typeof payload.type === 'string' ? payload.type : 'unknown'}`);
      return;
    case 'compacted':
      readCompacted(payload, location, timestamp, state);
      return;
    default:
      warnUnknown(`record type "${type}"`, location, state);
      context.ignore(type);
  }
}

function warnUnknown(what: string, location: Location, state: CodexState): void {
  if (state.unknownTypes.has(what)) return;
  state.unknownTypes.add(what);
  state.context.warn(`unknown Codex ${what}: skipped`, location);
}

function metadataOf(
  location: Location,
  timestamp: string | undefined,
  extra: MessageMetadata = {},
): MessageMetadata {
  return { ...(timestamp === undefined ? {} : { timestamp }), ...location, ...extra };
}

function readSessionMeta(
  payload: UnknownRecord,
  location: Location,
  timestamp: string | undefined,
  state: CodexState,
): void {
  const { context } = state;
  if (state.sessionMetaSeen) {
    // A forked or resumed session repeats its parent's header; the first one describes this file.
    context.ignore('session_meta (repeated)');
    return;
  }
  state.sessionMetaSeen = true;
  if (typeof payload.id === 'string') state.sessionId = payload.id;
  if (typeof payload.cwd === 'string') state.cwd = payload.cwd;
  if (state.firstTimestamp === undefined && typeof payload.timestamp === 'string') {
    state.firstTimestamp = payload.timestamp;
    state.lastTimestamp ??= payload.timestamp;
  }
  const extraFields: Array<[string, string]> = [
    ['cli_version', 'cliVersion'],
    ['originator', 'originator'],
    ['source', 'source'],
    ['model_provider', 'modelProvider'],
    ['git', 'git'],
  ];
  for (const [field, key] of extraFields) {
    const value = payload[field];
    if (value !== undefined && value !== null) state.extra[key] = value as JSONValue;
  }
  const base = isRecord(payload.base_instructions) ? payload.base_instructions.text : undefined;
  if (typeof base === 'string') {
    if (base !== '') {
      state.builder.system(base, metadataOf(location, timestamp, { codexField: 'base_instructions' }));
    }
  } else if (typeof payload.instructions === 'string' && payload.instructions !== '') {
    // The user's instructions (AGENTS.md): later versions also send them as a <user_instructions> message.
    state.instructions = {
      text: payload.instructions,
      metadata: metadataOf(location, timestamp, { codexField: 'instructions' }),
      repeated: false,
    };
  }
  context.use();
}

/**
 * The summary that replaced the history. Newer versions may leave `message` empty and write the new history
 * (`replacement_history`) instead: its user messages that were not read before carry the summary.
 */
function readCompacted(
  payload: UnknownRecord,
  location: Location,
  timestamp: string | undefined,
  state: CodexState,
): void {
  const summaries =
    typeof payload.message === 'string' && payload.message !== ''
      ? [payload.message]
      : newUserTexts(payload.replacement_history, state);
  for (const summary of summaries) {
    state.builder.user(summary, metadataOf(location, timestamp, { compactSummary: true }));
  }
  if (summaries.length > 0) state.context.use();
  else state.context.ignore('compacted (no summary text)');
}

function newUserTexts(history: unknown, state: CodexState): string[] {
  if (!Array.isArray(history)) return [];
  const texts: string[] = [];
  for (const item of history) {
    if (!isRecord(item) || item.type !== 'message' || item.role !== 'user' || !Array.isArray(item.content))
      continue;
    const text = item.content
      .flatMap((entry) => (isRecord(entry) && typeof entry.text === 'string' ? [entry.text] : []))
      .join('\n\n');
    if (text !== '' && !state.userTexts.has(text)) texts.push(text);
  }
  return texts;
}

// ---------------------------------------------------------------------------------------------------------------
// Response items
// ---------------------------------------------------------------------------------------------------------------

function readResponseItem(
  item: UnknownRecord,
  location: Location,
  timestamp: string | undefined,
  state: CodexState,
): void {
  const { context } = state;
  const type = item.type as string;
  switch (type) {
    case 'message':
      readMessage(item, location, timestamp, state);
      return;
    case 'reasoning':
      addAssistant([...reasoningParts(item)], location, timestamp, state);
      return;
    case 'function_call':
    case 'custom_tool_call':
    case 'local_shell_call':
      readToolCall(item, location, timestamp, state);
      return;
    case 'web_search_call':
      readWebSearch(item, location, timestamp, state);
      return;
    case 'function_call_output':
    case 'custom_tool_call_output':
      readToolOutput(item, location, timestamp, state);
      return;
    case 'ghost_snapshot':
      context.ignore('ghost_snapshot');
      return;
    case 'compaction':
    case 'compaction_summary':
      context.ignore('compaction (encrypted)');
      return;
    default:
      warnUnknown(`response item type "${type}"`, location, state);
      context.ignore(`response_item:${type}`);
  }
}

function addAssistant(
  parts: AssistantContentPart[],
  location: Location,
  timestamp: string | undefined,
  state: CodexState,
): void {
  const kept = parts.filter(carriesContent);
  if (kept.length === 0) {
    state.context.ignore('empty');
    return;
  }
  const metadata = metadataOf(location, timestamp, state.model === undefined ? {} : { model: state.model });
  // A response is written as several records (reasoning, text, each call): they make one message.
  state.builder.assistant(kept, metadata, { merge: true });
  state.context.use();
}

/** Empty text, and reasoning without provider data (an encrypted original), would make an empty message. */
function carriesContent(part: AssistantContentPart): boolean {
  if (part.type === 'text') return part.text !== '';
  if (part.type === 'reasoning') {
    return part.text !== '' || Object.keys(part.providerOptions ?? {}).length > 0;
  }
  return true;
}

function readMessage(
  item: UnknownRecord,
  location: Location,
  timestamp: string | undefined,
  state: CodexState,
): void {
  const { context, builder } = state;
  const { role, content } = item;
  if (!Array.isArray(content) && typeof content !== 'string') {
    context.malformed(`message content must be an array, got ${describeValue(content)}`, location);
    return;
  }
  const items: unknown[] = typeof content === 'string' ? [{ type: 'input_text', text: content }] : content;
  switch (role) {
    case 'user': {
      const parts = userParts(items, location, state);
      if (state.cwd === undefined) noteEnvironmentCwd(parts, state);
      const { instructions } = state;
      if (
        instructions !== undefined &&
        !instructions.repeated &&
        parts.some((part) => part.type === 'text' && part.text.includes(instructions.text))
      ) {
        instructions.repeated = true;
      }
      const texts = parts.flatMap((part) => (part.type === 'text' ? [part.text] : []));
      if (texts.length > 0) state.userTexts.add(texts.join('\n\n'));
      const [first] = parts;
      const single = parts.length === 1 && first?.type === 'text' && first.providerOptions === undefined;
      if (parts.length === 0) {
        context.ignore('empty');
        return;
      }
      builder.user(single ? first.text : parts, metadataOf(location, timestamp));
      context.use();
      return;
    }
    case 'assistant':
      addAssistant(assistantParts(items, location, state), location, timestamp, state);
      return;
    case 'developer':
    case 'system': {
      const text = joinedText(items, location, state);
      const providerOptions: ProviderOptions | undefined =
        role === 'developer' ? { openai: { role: 'developer' } } : undefined;
      if (text === '') {
        context.ignore('empty');
        return;
      }
      builder.system(text, metadataOf(location, timestamp), { providerOptions });
      context.use();
      return;
    }
    default:
      context.malformed(`unknown message role ${describeValue(role)}`, location);
  }
}

function noteEnvironmentCwd(parts: readonly UserContentPart[], state: CodexState): void {
  for (const part of parts) {
    if (part.type !== 'text' || !part.text.includes('<environment_context>')) continue;
    const match = environmentCwd.exec(part.text);
    if (match !== null) state.cwd = match[1]!.trim();
  }
}

function contentText(item: UnknownRecord): string | undefined {
  if (typeof item.text === 'string') return item.text;
  if (item.type === 'refusal' && typeof item.refusal === 'string') return item.refusal;
  return undefined;
}

function userParts(items: readonly unknown[], location: Location, state: CodexState): UserContentPart[] {
  const parts: UserContentPart[] = [];
  items.forEach((item, index) => {
    if (!isRecord(item)) {
      state.context.warn(
        `message content[${index}] is ${describeValue(item)}, not a content item: skipped`,
        location,
      );
      return;
    }
    const text = contentText(item);
    if (text !== undefined) {
      if (text !== '') parts.push({ type: 'text', text });
      return;
    }
    if (item.type === 'input_image' && typeof item.image_url === 'string') {
      const mediaType = dataUrl.exec(item.image_url)?.[1];
      parts.push({ type: 'image', image: item.image_url, ...(mediaType === undefined ? {} : { mediaType }) });
      return;
    }
    state.context.warn(
      `message content[${index}] of type ${describeValue(item.type)} is not read: skipped`,
      location,
    );
  });
  return parts;
}

function assistantParts(
  items: readonly unknown[],
  location: Location,
  state: CodexState,
): AssistantContentPart[] {
  const parts: AssistantContentPart[] = [];
  items.forEach((item, index) => {
    const text = isRecord(item) ? contentText(item) : undefined;
    if (text === undefined) {
      state.context.warn(`assistant content[${index}] is not a text item: skipped`, location);
      return;
    }
    if (isRecord(item) && item.type === 'refusal') {
      parts.push({ type: 'text', text, providerOptions: { openai: { partType: 'refusal' } } });
    } else {
      parts.push({ type: 'text', text });
    }
  });
  return parts;
}

/** Developer and system messages are plain text: their text items joined by blank lines. */
function joinedText(items: readonly unknown[], location: Location, state: CodexState): string {
  const texts: string[] = [];
  items.forEach((item, index) => {
    const text = isRecord(item) ? contentText(item) : undefined;
    if (text === undefined) state.context.warn(`content[${index}] is not a text item: skipped`, location);
    else if (text !== '') texts.push(text);
  });
  return texts.join('\n\n');
}

function* reasoningParts(item: UnknownRecord): Generator<AssistantContentPart> {
  const encrypted = typeof item.encrypted_content === 'string' ? item.encrypted_content : undefined;
  const texts = (value: unknown): string[] =>
    Array.isArray(value)
      ? value.flatMap((entry) => (isRecord(entry) && typeof entry.text === 'string' ? [entry.text] : []))
      : [];
  const summary = texts(item.summary).join('\n\n');
  const content = texts(item.content).join('\n\n');
  // The encrypted reasoning travels with the summary (or alone), as the AI SDK keeps it for the Responses API.
  yield {
    type: 'reasoning',
    text: summary,
    ...(encrypted === undefined
      ? {}
      : { providerOptions: { openai: { reasoningEncryptedContent: encrypted } } }),
  };
  if (content !== '') yield { type: 'reasoning', text: content };
}

function callIdOf(item: UnknownRecord, location: Location, kind: string): string {
  if (typeof item.call_id === 'string' && item.call_id !== '') return item.call_id;
  if (typeof item.id === 'string' && item.id !== '') return item.id;
  return `codex-${kind}-${location.line ?? location.record ?? 0}`;
}

function readToolCall(
  item: UnknownRecord,
  location: Location,
  timestamp: string | undefined,
  state: CodexState,
): void {
  const type = item.type as string;
  const toolCallId = callIdOf(item, location, 'call');
  if (type === 'local_shell_call') {
    const input = isRecord(item.action) ? item.action : {};
    addAssistant(
      [{ type: 'tool-call', toolCallId, toolName: 'local_shell', input }],
      location,
      timestamp,
      state,
    );
    return;
  }
  if (typeof item.name !== 'string' || item.name === '') {
    state.context.malformed(`a ${type} needs a string "name", got ${describeValue(item.name)}`, location);
    return;
  }
  if (type === 'custom_tool_call') {
    const input = typeof item.input === 'string' ? item.input : (item.input ?? '');
    addAssistant(
      [
        {
          type: 'tool-call',
          toolCallId,
          toolName: item.name,
          input,
          providerOptions: { openai: { toolType: 'custom' } },
        },
      ],
      location,
      timestamp,
      state,
    );
    return;
  }
  addAssistant(
    [{ type: 'tool-call', toolCallId, toolName: item.name, input: parseArguments(item.arguments) }],
    location,
    timestamp,
    state,
  );
}

/** Arguments are JSON text; text that does not parse is the input as it is (see `ToolCallPart.input`). */
function parseArguments(value: unknown): unknown {
  if (typeof value !== 'string') return value ?? {};
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/** A search the provider ran: the call and its status in the assistant message, as the AI SDK keeps them. */
function readWebSearch(
  item: UnknownRecord,
  location: Location,
  timestamp: string | undefined,
  state: CodexState,
): void {
  const toolCallId = typeof item.id === 'string' ? item.id : callIdOf(item, location, 'web-search');
  const status = typeof item.status === 'string' ? item.status : 'completed';
  addAssistant(
    [
      {
        type: 'tool-call',
        toolCallId,
        toolName: 'web_search',
        input: isRecord(item.action) ? item.action : {},
        providerExecuted: true,
      },
      {
        type: 'tool-result',
        toolCallId,
        toolName: 'web_search',
        output: { type: 'json', value: { status } },
      },
    ],
    location,
    timestamp,
    state,
  );
}

function readToolOutput(
  item: UnknownRecord,
  location: Location,
  timestamp: string | undefined,
  state: CodexState,
): void {
  const { context } = state;
  if (typeof item.call_id !== 'string') {
    context.malformed(
      `a ${item.type as string} needs a string "call_id", got ${describeValue(item.call_id)}`,
      location,
    );
    return;
  }
  const { output, providerOptions } = readOutput(item.output);
  const placed = state.builder.toolResult(
    { toolCallId: item.call_id, output, providerOptions },
    metadataOf(location, timestamp),
  );
  if (placed === 'dropped') context.ignore('orphaned tool result');
  else context.use();
}

/**
 * A tool output as the model read it. Older versions wrote shell results as JSON text
 * `{"output": ..., "metadata": {"exit_code", "duration_seconds"}}`: read as the output text, with the metadata
 * kept in `providerOptions.codex` (JSON with any other field stays text as it is).
 */
function readOutput(raw: unknown): { output: ToolResultOutput; providerOptions?: ProviderOptions } {
  if (typeof raw === 'string') return readOutputText(raw);
  if (raw === undefined || raw === null) return { output: { type: 'text', value: '' } };
  if (Array.isArray(raw)) return { output: { type: 'content', value: raw.map(contentItem) } };
  if (isRecord(raw) && typeof raw.content === 'string') {
    return { output: { type: raw.success === false ? 'error-text' : 'text', value: raw.content } };
  }
  return { output: { type: 'json', value: (raw ?? null) as JSONValue } };
}

function readOutputText(text: string): { output: ToolResultOutput; providerOptions?: ProviderOptions } {
  if (!text.startsWith('{') || !text.includes('"output"')) return { output: { type: 'text', value: text } };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { output: { type: 'text', value: text } };
  }
  if (
    !isRecord(parsed) ||
    typeof parsed.output !== 'string' ||
    Object.keys(parsed).some((key) => key !== 'output' && key !== 'metadata')
  ) {
    return { output: { type: 'text', value: text } };
  }
  const metadata = parsed.metadata;
  const exitCode =
    isRecord(metadata) && typeof metadata.exit_code === 'number' ? metadata.exit_code : undefined;
  const output: ToolResultOutput = {
    type: exitCode !== undefined && exitCode !== 0 ? 'error-text' : 'text',
    value: parsed.output,
  };
  if (metadata === undefined) return { output, providerOptions: { codex: { outputFormat: 'json' } } };
  return {
    output,
    providerOptions: { codex: { outputFormat: 'json', outputMetadata: metadata as JSONValue } },
  };
}

function contentItem(raw: unknown): ToolResultContentItem {
  if (isRecord(raw)) {
    if (typeof raw.text === 'string') return { type: 'text', text: raw.text };
    if (typeof raw.image_url === 'string') {
      const match = dataUrl.exec(raw.image_url);
      if (match !== null) {
        return { type: 'image-data', data: raw.image_url.slice(match[0].length), mediaType: match[1]! };
      }
      return { type: 'image-url', url: raw.image_url };
    }
  }
  return { type: 'text', text: JSON.stringify(raw) ?? '' };
}

// ---------------------------------------------------------------------------------------------------------------
// Result
// ---------------------------------------------------------------------------------------------------------------

function buildResult(state: CodexState): ImportResult {
  const messages = state.builder.finish();
  const { instructions } = state;
  if (instructions !== undefined && !instructions.repeated) {
    messages.unshift({
      role: 'system',
      content: instructions.text,
      metadata: { origin, ...instructions.metadata },
    });
  }
  const metadata: TranscriptMetadata = { format: 'codex' };
  if (state.model !== undefined) metadata.model = state.model;
  if (state.sessionId !== undefined) metadata.sessionId = state.sessionId;
  if (state.firstTimestamp !== undefined) metadata.startedAt = state.firstTimestamp;
  if (state.lastTimestamp !== undefined) metadata.endedAt = state.lastTimestamp;
  if (state.cwd !== undefined) metadata.cwd = state.cwd;
  if (Object.keys(state.extra).length > 0) metadata.extra = state.extra;
  return {
    conversation: state.model === undefined ? { messages } : { messages, model: state.model },
    metadata,
  };
}
