/**
 * Claude Code session transcripts: `~/.claude/projects/<slug>/<sessionId>.jsonl`, and the JSON-array copies that
 * hooks write (`logs/chat.json`: the same records, in the same order, as one array).
 *
 * What the model saw is `message.content` of the `user` and `assistant` records: Anthropic content blocks, with
 * each block of an assistant response written as its own record (the records of one response share
 * `message.id`). `toolUseResult` is the UI's structured copy of a tool output and is never read, so nothing is
 * counted twice. `system` records are hook notices and bookkeeping, except `local_command` ones, which carry slash
 * command input and output that newer versions send to the model as a user message (older versions wrote the same
 * text as a user record). `summary`, `file-history-snapshot` and the other bookkeeping types are counted as
 * ignored under their type.
 *
 * Message metadata: `origin`, `timestamp`, `line` (JSONL) or `record` (array index), `uuid` of the first record;
 * assistant messages add `messageId`, and `model` when it differs from the session's; user messages add `meta`
 * (`isMeta` records: caveats, skill and command expansions), `compactSummary` (the summary that replaced the
 * history after a compaction), `interrupted`, `command` (slash command name), `systemSubtype`, `harness` (the
 * local-command caveat, built-in commands such as `/clear`, local command output and bash mode's `!command` with
 * its output: not the user's words to the agent),
 * `expansion` (any other `isMeta` prompt: what a custom command or a skill expands to), `contextFiles` (the file an
 * @-mention made Claude Code read, its `isMeta` `Called the Read tool with the following input:` record, which is
 * a harness note, as is the `Result of calling the Read tool:` record);
 * sub-agent messages add `sidechain`, `sidechainId` and, when the Task call that started them is known,
 * `parentToolCallId`.
 */

import { InvalidJsonError, InvalidMessageError, TranscriptImportError } from '../../errors/index.js';
import { describeValue, isRecord } from '../../internal/json-shapes.js';
import { parseJsonText } from '../../internal/parse-json.js';
import { fromAnthropic } from '../../messages/convert/anthropic.js';
import type {
  AssistantContentPart,
  AssistantMessage,
  JSONValue,
  Message,
  MessageMetadata,
  ToolCallPart,
  ToolMessage,
  ToolResultContentItem,
  ToolResultOutput,
  ToolResultPart,
  UserContentPart,
  UserMessage,
} from '../../messages/types.js';
import { repairPlaceholders } from '../../messages/validate/index.js';
import { readJsonLineRecords } from '../internal/record-readers.js';
import type {
  ImportContext,
  ImportResult,
  TranscriptImporter,
  TranscriptMetadata,
  TranscriptSample,
} from '../transcript-importer.js';
import { type ScannedValue, scanRecordFields } from './scan-record-fields.js';

const origin = 'claude-code';
/** The model name Claude Code gives messages it wrote itself (API error notices, "No response requested."). */
const syntheticModel = '<synthetic>';
const interruptionPrefix = '[Request interrupted by user';
const recordsToSample = 25;

type UnknownRecord = Record<string, unknown>;

interface Location {
  line?: number;
  record?: number;
}

interface SourceRecord {
  value: unknown;
  location: Location;
}

/** One sub-agent conversation: the records that descend from one sidechain root. */
interface Chain {
  key: string;
  /** The main-thread Task call whose prompt started it, when one matches. */
  parentToolCallId?: string;
  started: boolean;
}

/** The main thread or one sidechain: tool calls are matched and assistant records merged within a thread. */
interface Thread {
  chain: Chain | undefined;
  lastAssistant: AssistantItem | undefined;
  /** The newest call for each id read in this thread. */
  calls: Map<string, CallSlot>;
  slots: CallSlot[];
  /** Position in `items` of the thread's newest user or assistant message. */
  lastOrder: number;
}

interface CallSlot {
  /** The id in the output: the recorded id, or a fresh one when the recorded id was already used. */
  toolCallId: string;
  toolName: string;
  item: AssistantItem;
  answered: boolean;
}

interface UserItem {
  kind: 'user';
  thread: Thread;
  message: UserMessage;
}

interface AssistantItem {
  kind: 'assistant';
  thread: Thread;
  order: number;
  message: AssistantMessage;
  parts: AssistantContentPart[];
  messageId: string | undefined;
  model: string | undefined;
  /** Tool messages answering this message's calls, wherever in the file their records were. */
  toolMessages: ToolMessage[];
}

type Item = UserItem | AssistantItem;

interface ReadState {
  context: ImportContext;
  items: Item[];
  threads: Map<string, Thread>;
  chains: Map<string, Chain>;
  /** Sidechain record uuid → key of its chain. */
  chainOf: Map<string, string>;
  seenUuids: Set<string>;
  usedCallIds: Set<string>;
  /** Main-thread tool calls with a string `prompt` input (Task): prompt → call id, to link sub-agents. */
  promptCalls: Map<string, string>;
  /** Every user and assistant record is a sidechain (an `agent-*.jsonl` file): read them as the conversation. */
  sidechainAsMain: boolean;
  session: SessionFacts;
}

interface SessionFacts {
  sessionIds: string[];
  cwds: string[];
  versions: string[];
  gitBranches: string[];
  models: string[];
  firstTimestamp: string | undefined;
  lastTimestamp: string | undefined;
  summaries: Array<{ leafUuid: string; summary: string }>;
}

export const claudeCodeImporter: TranscriptImporter = {
  format: 'claude-code',
  description: 'Claude Code session transcript (JSONL, or a JSON array copy such as logs/chat.json)',
  detect: detectClaudeCode,
  parse: parseClaudeCode,
};

// ---------------------------------------------------------------------------------------------------------------
// Detection
// ---------------------------------------------------------------------------------------------------------------

/** Claims text whose first records carry the Claude Code envelope; looks at top-level record fields only. */
function detectClaudeCode(sample: TranscriptSample): string | undefined {
  const records = scanRecordFields(sample.head, recordsToSample);
  for (const [index, record] of records.entries()) {
    const evidence = envelopeEvidence(record.fields);
    if (evidence !== undefined) return `record ${index} ${evidence}`;
  }
  return undefined;
}

function envelopeEvidence(fields: Map<string, ScannedValue>): string | undefined {
  const type = fields.get('type');
  if (type === 'user' || type === 'assistant' || type === 'system') {
    const parent = fields.get('parentUuid');
    const linked = parent === null || typeof parent === 'string';
    // `uuid` follows `message` in the record, so a record cut off by the sample may only show `isSidechain`.
    const identified =
      typeof fields.get('uuid') === 'string' || typeof fields.get('isSidechain') === 'boolean';
    if (typeof fields.get('sessionId') === 'string' && linked && identified) {
      return `has the Claude Code envelope (type "${type}" with sessionId, parentUuid, uuid)`;
    }
    return undefined;
  }
  if (type === 'summary' && typeof fields.get('leafUuid') === 'string') {
    return 'is a Claude Code "summary" record with "leafUuid"';
  }
  const snapshot = fields.get('snapshot');
  if (type === 'file-history-snapshot' && typeof snapshot === 'object' && snapshot !== null) {
    return 'is a Claude Code "file-history-snapshot" record';
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Reading records
// ---------------------------------------------------------------------------------------------------------------

function parseClaudeCode(text: string, context: ImportContext): ImportResult {
  const records = readRecords(text, context);
  const state: ReadState = {
    context,
    items: [],
    threads: new Map(),
    chains: new Map(),
    chainOf: new Map(),
    seenUuids: new Set(),
    usedCallIds: new Set(),
    promptCalls: new Map(),
    sidechainAsMain: onlySidechainTurns(records),
    session: {
      sessionIds: [],
      cwds: [],
      versions: [],
      gitBranches: [],
      models: [],
      firstTimestamp: undefined,
      lastTimestamp: undefined,
      summaries: [],
    },
  };
  if (state.sidechainAsMain) {
    context.warn('every turn is sub-agent (sidechain) traffic: read as the conversation itself');
  }
  for (const record of records) readRecord(record, state);
  answerOpenCalls(state);
  return buildResult(state);
}

/** A JSON array (parsed whole), else JSON Lines with a counted, skipped record for each line that is not JSON. */
function readRecords(text: string, context: ImportContext): SourceRecord[] {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body.trimStart().startsWith('[')) {
    let document: unknown;
    try {
      document = parseJsonText(body, context.file === undefined ? {} : { file: context.file });
    } catch (error) {
      if (!(error instanceof InvalidJsonError)) throw error;
      const location = {
        ...(context.file === undefined ? {} : { file: context.file }),
        ...(error.line === undefined ? {} : { line: error.line }),
        ...(error.column === undefined ? {} : { column: error.column }),
      };
      throw new TranscriptImportError(`not a readable JSON array of records (${error.message})`, location, {
        cause: error,
      });
    }
    const values = document as unknown[];
    return values.map((value, record) => ({ value, location: { record } }));
  }
  return readJsonLineRecords(body, context).map(({ value, line }) => ({ value, location: { line } }));
}

function isTurnRecord(value: unknown): value is UnknownRecord {
  return isRecord(value) && (value.type === 'user' || value.type === 'assistant');
}

function onlySidechainTurns(records: readonly SourceRecord[]): boolean {
  let sidechains = 0;
  for (const { value } of records) {
    if (!isTurnRecord(value)) continue;
    if (value.isSidechain !== true) return false;
    sidechains++;
  }
  return sidechains > 0;
}

function readRecord(source: SourceRecord, state: ReadState): void {
  const { context } = state;
  const { value, location } = source;
  context.read();
  if (!isRecord(value)) {
    context.malformed(`a record must be a JSON object, got ${describeValue(value)}`, location);
    return;
  }
  const { type } = value;
  if (typeof type !== 'string') {
    context.malformed(`a record needs a string "type", got ${describeValue(type)}`, location);
    return;
  }
  noteSessionFacts(value, state.session);
  if (type === 'summary') {
    if (typeof value.leafUuid === 'string' && typeof value.summary === 'string') {
      state.session.summaries.push({ leafUuid: value.leafUuid, summary: value.summary });
    }
    context.ignore('summary');
    return;
  }
  if (type !== 'user' && type !== 'assistant' && type !== 'system') {
    context.ignore(type);
    return;
  }
  const uuid = typeof value.uuid === 'string' ? value.uuid : undefined;
  if (uuid !== undefined) {
    // Copies of resumed sessions can repeat records; Claude Code itself writes each uuid once.
    if (state.seenUuids.has(uuid)) {
      context.ignore('duplicate');
      return;
    }
    state.seenUuids.add(uuid);
  }
  const sidechain = value.isSidechain === true && !state.sidechainAsMain;
  if (sidechain && context.sidechains === 'exclude') {
    context.ignore('sidechain');
    return;
  }
  // Sidechain system records stay in the chain bookkeeping: later records may name them as parent.
  const thread = threadFor(value, sidechain, uuid, location, state);
  if (type === 'system') {
    readSystemRecord(value, location, thread, state);
    return;
  }
  if (type === 'assistant') readAssistantRecord(value, location, thread, state);
  else readUserRecord(value, location, thread, state);
}

function noteSessionFacts(value: UnknownRecord, session: SessionFacts): void {
  if (typeof value.timestamp === 'string') {
    session.firstTimestamp ??= value.timestamp;
    session.lastTimestamp = value.timestamp;
  }
  addDistinct(session.sessionIds, value.sessionId);
  addDistinct(session.cwds, value.cwd);
  addDistinct(session.versions, value.version);
  addDistinct(session.gitBranches, value.gitBranch);
}

function addDistinct(list: string[], value: unknown): void {
  if (typeof value === 'string' && value !== '' && !list.includes(value)) list.push(value);
}

function threadFor(
  value: UnknownRecord,
  sidechain: boolean,
  uuid: string | undefined,
  location: Location,
  state: ReadState,
): Thread {
  let key = 'main';
  let chain: Chain | undefined;
  if (sidechain) {
    const parent = typeof value.parentUuid === 'string' ? state.chainOf.get(value.parentUuid) : undefined;
    const agent = typeof value.agentId === 'string' ? `agent-${value.agentId}` : undefined;
    key = parent ?? agent ?? uuid ?? `record-${location.line ?? location.record}`;
    if (uuid !== undefined) state.chainOf.set(uuid, key);
    chain = state.chains.get(key);
    if (chain === undefined) {
      chain = { key, started: false };
      state.chains.set(key, chain);
    }
  }
  let thread = state.threads.get(key);
  if (thread === undefined) {
    thread = { chain, lastAssistant: undefined, calls: new Map(), slots: [], lastOrder: -1 };
    state.threads.set(key, thread);
  }
  return thread;
}

function baseMetadata(value: UnknownRecord, location: Location, thread: Thread): MessageMetadata {
  const metadata: MessageMetadata = { origin };
  if (typeof value.timestamp === 'string') metadata.timestamp = value.timestamp;
  if (location.line !== undefined) metadata.line = location.line;
  if (location.record !== undefined) metadata.record = location.record;
  if (typeof value.uuid === 'string') metadata.uuid = value.uuid;
  const { chain } = thread;
  if (chain !== undefined) {
    metadata.sidechain = true;
    metadata.sidechainId = chain.key;
    if (chain.parentToolCallId !== undefined) metadata.parentToolCallId = chain.parentToolCallId;
  }
  return metadata;
}

/** Reads `message.content` of a user or assistant record; reports a record without one as malformed. */
function recordContent(
  value: UnknownRecord,
  location: Location,
  context: ImportContext,
): string | unknown[] | undefined {
  const { message } = value;
  if (!isRecord(message)) {
    context.malformed(`"message" must be an object, got ${describeValue(message)}`, location);
    return undefined;
  }
  const { content } = message;
  if (typeof content !== 'string' && !Array.isArray(content)) {
    context.malformed(
      `"message.content" must be a string or an array of blocks, got ${describeValue(content)}`,
      location,
    );
    return undefined;
  }
  return content;
}

/** The reason of a block the Anthropic converter refused, with the path inside the record. */
function blockError(error: unknown, position: number | undefined): string {
  if (!(error instanceof InvalidMessageError)) throw error;
  const path = error.path ?? '';
  const inRecord = position === undefined ? path : path.replace(/^content\[0\]/, `content[${position}]`);
  return `message.${inRecord}: ${error.reason}`;
}

/** Empty text or reasoning carries nothing (reasoning with a signature or raw block does). */
function carriesSomething(part: { type: string; text?: string; providerOptions?: unknown }): boolean {
  if (part.type !== 'text' && part.type !== 'reasoning') return true;
  return part.text !== '' || part.providerOptions !== undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Assistant records
// ---------------------------------------------------------------------------------------------------------------

function readAssistantRecord(
  value: UnknownRecord,
  location: Location,
  thread: Thread,
  state: ReadState,
): void {
  const { context } = state;
  const content = recordContent(value, location, context);
  if (content === undefined) return;
  let parts: AssistantContentPart[];
  if (typeof content === 'string') {
    parts = [{ type: 'text', text: content }];
  } else {
    try {
      const [converted] = fromAnthropic([{ role: 'assistant', content }]).messages;
      parts =
        converted === undefined || typeof converted.content === 'string'
          ? []
          : (converted.content as AssistantContentPart[]);
    } catch (error) {
      context.malformed(blockError(error, undefined), location);
      return;
    }
  }
  parts = parts.filter(carriesSomething);
  if (parts.length === 0) {
    context.ignore('empty');
    return;
  }
  const message = value.message as UnknownRecord;
  const messageId = typeof message.id === 'string' ? message.id : undefined;
  const model = typeof message.model === 'string' ? message.model : undefined;
  context.use();
  const previous = thread.lastAssistant;
  // The blocks of one API response are separate records sharing message.id: they make one message.
  if (messageId !== undefined && previous?.messageId === messageId) {
    for (const part of parts) previous.parts.push(registerPart(part, previous, thread, state));
    return;
  }
  const metadata = baseMetadata(value, location, thread);
  if (messageId !== undefined) metadata.messageId = messageId;
  if (model === syntheticModel) metadata.synthetic = true;
  if (value.isApiErrorMessage === true) metadata.apiError = true;
  const item: AssistantItem = {
    kind: 'assistant',
    thread,
    order: state.items.length,
    message: { role: 'assistant', content: [], metadata },
    parts: [],
    messageId,
    model: model === syntheticModel ? undefined : model,
    toolMessages: [],
  };
  item.message.content = item.parts;
  for (const part of parts) item.parts.push(registerPart(part, item, thread, state));
  if (item.model !== undefined && thread.chain === undefined) addDistinct(state.session.models, item.model);
  state.items.push(item);
  thread.lastAssistant = item;
  thread.lastOrder = item.order;
}

/** Registers a tool call so later results find it; an id already used in the file gets a fresh one. */
function registerPart(
  part: AssistantContentPart,
  item: AssistantItem,
  thread: Thread,
  state: ReadState,
): AssistantContentPart {
  if (part.type !== 'tool-call') return part;
  const recordedId = part.toolCallId;
  let call: ToolCallPart = part;
  if (state.usedCallIds.has(recordedId)) {
    let suffix = 2;
    while (state.usedCallIds.has(`${recordedId}-${suffix}`)) suffix++;
    call = { ...part, toolCallId: `${recordedId}-${suffix}` };
    state.context.warn(
      `tool call id ${recordedId} is used twice; the second call is renamed ${call.toolCallId}`,
      locationOf(item.message.metadata),
    );
  }
  state.usedCallIds.add(call.toolCallId);
  const slot: CallSlot = { toolCallId: call.toolCallId, toolName: call.toolName, item, answered: false };
  thread.calls.set(recordedId, slot);
  thread.slots.push(slot);
  if (thread.chain === undefined && isRecord(call.input) && typeof call.input.prompt === 'string') {
    state.promptCalls.set(call.input.prompt, call.toolCallId);
  }
  return call;
}

function locationOf(metadata: MessageMetadata | undefined): Location {
  const location: Location = {};
  if (typeof metadata?.line === 'number') location.line = metadata.line;
  if (typeof metadata?.record === 'number') location.record = metadata.record;
  return location;
}

// ---------------------------------------------------------------------------------------------------------------
// User and system records
// ---------------------------------------------------------------------------------------------------------------

function readUserRecord(value: UnknownRecord, location: Location, thread: Thread, state: ReadState): void {
  const { context } = state;
  const content = recordContent(value, location, context);
  if (content === undefined) return;
  if (typeof content === 'string') {
    if (content === '') {
      context.ignore('empty');
      return;
    }
    context.use();
    pushUser(content, userMetadata(value, location, thread, content, state), thread, state);
    return;
  }
  const converted: Array<UserContentPart | ToolResultPart> = [];
  for (const [position, block] of content.entries()) {
    try {
      const [message] = fromAnthropic([{ role: 'user', content: [block] }]).messages;
      const part =
        message === undefined || typeof message.content === 'string' ? undefined : message.content[0];
      if (part !== undefined) converted.push(part as UserContentPart | ToolResultPart);
    } catch (error) {
      context.malformed(blockError(error, position), location);
      return;
    }
  }
  const rest: UserContentPart[] = [];
  const orphans: string[] = [];
  const answered = new Map<AssistantItem, ToolResultPart[]>();
  for (const part of converted) {
    if (part.type !== 'tool-result') {
      if (carriesSomething(part)) rest.push(part);
      continue;
    }
    const slot = thread.calls.get(part.toolCallId);
    if (slot === undefined || slot.answered) {
      // Kept as what the model read, in place, rather than as a result nothing asked for.
      context.warn(
        slot === undefined
          ? `tool result for ${part.toolCallId} answers no tool call in the transcript; kept as user text`
          : `second tool result for ${part.toolCallId}; kept as user text`,
        location,
      );
      orphans.push(part.toolCallId);
      for (const item of outputAsUserParts(part.output)) if (carriesSomething(item)) rest.push(item);
      continue;
    }
    slot.answered = true;
    const results = answered.get(slot.item) ?? [];
    results.push(resultFor(part, slot));
    answered.set(slot.item, results);
  }
  if (answered.size === 0 && rest.length === 0) {
    context.ignore('empty');
    return;
  }
  context.use();
  for (const [item, results] of answered) {
    if (thread.lastOrder > item.order) {
      context.warn(
        `tool result for ${results.map((result) => result.toolCallId).join(', ')} arrives after later messages; placed right after its call`,
        location,
      );
    }
    item.toolMessages.push({
      role: 'tool',
      content: results,
      metadata: baseMetadata(value, location, thread),
    });
  }
  if (rest.length > 0) {
    const metadata = userMetadata(value, location, thread, rest, state);
    if (orphans.length > 0) metadata.orphanToolCallIds = orphans;
    pushUser(rest, metadata, thread, state);
  }
}

/** The result as the tool message carries it: the call's name and id, and an error flag as an error output. */
function resultFor(part: ToolResultPart, slot: CallSlot): ToolResultPart {
  const result: ToolResultPart = { ...part, toolCallId: slot.toolCallId, toolName: slot.toolName };
  const { output } = part;
  const fields = part.providerOptions?.anthropic;
  if (output.type !== 'content' || fields?.isError !== true) return result;
  const texts: string[] = [];
  for (const item of output.value) {
    if (item.type !== 'text' || item.providerOptions !== undefined) return result;
    texts.push(item.text);
  }
  const { isError: _isError, ...others } = fields;
  const rest = Object.entries(others).filter(([, field]) => field !== undefined);
  const converted: ToolResultPart = {
    type: 'tool-result',
    toolCallId: slot.toolCallId,
    toolName: slot.toolName,
    output: { type: 'error-text', value: texts.join('\n') },
  };
  if (rest.length > 0)
    converted.providerOptions = { anthropic: Object.fromEntries(rest) as Record<string, JSONValue> };
  return converted;
}

/** A result whose call is unknown, as the user content the model read. */
function outputAsUserParts(output: ToolResultOutput): UserContentPart[] {
  switch (output.type) {
    case 'text':
    case 'error-text':
      return [{ type: 'text', text: output.value }];
    case 'json':
    case 'error-json':
      return [{ type: 'text', text: JSON.stringify(output.value) }];
    case 'execution-denied':
      return [{ type: 'text', text: output.reason ?? '' }];
    case 'content':
      return output.value.map(resultItemAsUserPart);
  }
}

function resultItemAsUserPart(item: ToolResultContentItem): UserContentPart {
  if (item.type === 'text') return item;
  if ('url' in item) {
    return item.type === 'image-url'
      ? { type: 'image', image: item.url }
      : { type: 'file', data: item.url, mediaType: 'application/octet-stream' };
  }
  if (item.type === 'image-data') return { type: 'image', image: item.data, mediaType: item.mediaType };
  return { type: 'file', data: item.data, mediaType: item.mediaType };
}

function userMetadata(
  value: UnknownRecord,
  location: Location,
  thread: Thread,
  content: string | readonly UserContentPart[],
  state: ReadState,
): MessageMetadata {
  const text = typeof content === 'string' ? content : content.find((part) => part.type === 'text')?.text;
  const chain = thread.chain;
  // A sub-agent's first prompt is the `prompt` of the Task call that started it.
  if (chain !== undefined && !chain.started && text !== undefined) {
    const callId = state.promptCalls.get(text);
    if (callId !== undefined) chain.parentToolCallId = callId;
  }
  const metadata = baseMetadata(value, location, thread);
  if (value.isMeta === true) metadata.meta = true;
  if (value.isCompactSummary === true) metadata.compactSummary = true;
  if (text?.startsWith(interruptionPrefix)) {
    metadata.interrupted = true;
    // The marker alone is Claude Code's note that the user stopped the turn, not something the user typed.
    if (isInterruptionOnly(content)) metadata.harness = true;
  }
  const command = text === undefined ? undefined : commandName(text);
  if (command !== undefined) metadata.command = command;
  const contextFile = value.isMeta === true && text !== undefined ? harnessToolCallOf(text) : undefined;
  if (contextFile !== undefined) {
    // What an @-mention made Claude Code read into the context: its file, not the user's words.
    metadata.harness = true;
    if (contextFile.path !== undefined) metadata.contextFiles = [contextFile.path];
  } else if (writtenByHarness(content, text, command, value.isMeta === true)) metadata.harness = true;
  // Any other prompt Claude Code writes unseen (a custom command's or a skill's) is the request's expansion.
  else if (value.isMeta === true) metadata.expansion = true;
  return metadata;
}

const harnessCallPrefix = /^Called the (\w+) tool with the following input: /;
const harnessResultPrefix = /^Result of calling the \w+ tool:/;

/**
 * A tool call Claude Code made itself for an @-mention (`Called the Read tool with the following input:
 * {"file_path":…}`, its result in the same record or the next, `Result of calling the Read tool:`), with the
 * file a Read took in; undefined for any other text.
 */
function harnessToolCallOf(text: string): { path?: string } | undefined {
  if (harnessResultPrefix.test(text)) return {};
  const call = harnessCallPrefix.exec(text);
  if (call === null) return undefined;
  const rest = text.slice(call[0].length);
  const newline = rest.indexOf('\n');
  let input: unknown;
  try {
    input = JSON.parse(newline === -1 ? rest : rest.slice(0, newline));
  } catch {
    return {};
  }
  if (call[1] !== 'Read' || !isRecord(input)) return {};
  const path = input.file_path ?? input.filePath;
  return typeof path === 'string' && path !== '' ? { path } : {};
}

/** Built-in commands that set the session up or show something; a custom command's prompt is a request. */
const harnessCommands = new Set(
  [
    'add-dir',
    'agents',
    'bashes',
    'bug',
    'clear',
    'compact',
    'config',
    'context',
    'cost',
    'doctor',
    'exit',
    'export',
    'feedback',
    'help',
    'hooks',
    'ide',
    'login',
    'logout',
    'mcp',
    'memory',
    'model',
    'output-style',
    'permissions',
    'privacy-settings',
    'release-notes',
    'resume',
    'rewind',
    'status',
    'statusline',
    'terminal-setup',
    'theme',
    'todos',
    'upgrade',
    'usage',
    'vim',
  ].map((name) => `/${name}`),
);
const localCommandCaveat =
  'Caveat: The messages below were generated by the user while running local commands';
/**
 * A local command's output, or a shell command the user ran in bash mode (`!pwd`: `<bash-input>`, then its
 * `<bash-stdout>` and `<bash-stderr>`): run for the user, not asked of the agent.
 */
const localCommandOutput =
  /^\s*(?:<(local-command-stdout|local-command-stderr|bash-input|bash-stdout|bash-stderr)>[\s\S]*?<\/\1>\s*)+$/;
/**
 * Context Claude Code injects in the user's place, alone in a record: a SessionStart hook's output, the file the
 * IDE has open or its selection (Claude Code's own tools skip such records when they look for the first prompt).
 */
const hookContext = /^\s*(?:<(session-start-hook|ide_opened_file|ide_selection)>[\s\S]*?<\/\1>\s*)+$/;

/** Whether a user record holds nothing but a local command's output or injected context in its texts. */
function isInjectedOnly(content: string | readonly UserContentPart[]): boolean {
  const injected = (text: string) => localCommandOutput.test(text) || hookContext.test(text);
  if (typeof content === 'string') return injected(content);
  return content.length > 0 && content.every((part) => part.type === 'text' && injected(part.text));
}

/** Whether a user record is only Claude Code's interruption marker (`[Request interrupted by user…]`). */
function isInterruptionOnly(content: string | readonly UserContentPart[]): boolean {
  const parts = typeof content === 'string' ? [{ type: 'text' as const, text: content }] : content;
  return parts.every((part) => {
    if (part.type !== 'text') return false;
    const text = part.text.trim();
    // The prefix, then the rest of the one bracketed marker (`]`, ` for tool use]`).
    return text.startsWith(interruptionPrefix) && /^[^\]\n]*\]$/.test(text.slice(interruptionPrefix.length));
  });
}

/**
 * What Claude Code writes in the user's place: the caveat before local commands, a local command's output, a
 * built-in command such as `/clear`, injected context alone in a record. The first user request of a session
 * often comes after them. `text` is the record's first text, where the caveat and a command's name stand; the
 * output and the context are the harness's only when they are all the record holds.
 */
function writtenByHarness(
  content: string | readonly UserContentPart[],
  text: string | undefined,
  command: string | undefined,
  meta: boolean,
): boolean {
  if (isInjectedOnly(content)) return true;
  if (text === undefined) return false;
  if (meta && text.includes(localCommandCaveat)) return true;
  return command !== undefined && harnessCommands.has(command);
}

/** `/name` of a slash command record (`<command-name>/name</command-name>`), found without a regex scan. */
function commandName(text: string): string | undefined {
  const open = '<command-name>';
  const start = text.indexOf(open);
  if (start === -1) return undefined;
  const end = text.indexOf('</command-name>', start);
  if (end === -1) return undefined;
  const name = text.slice(start + open.length, end).trim();
  return name === '' ? undefined : name;
}

function pushUser(
  content: string | UserContentPart[],
  metadata: MessageMetadata,
  thread: Thread,
  state: ReadState,
): void {
  if (thread.chain !== undefined) thread.chain.started = true;
  thread.lastOrder = state.items.length;
  state.items.push({ kind: 'user', thread, message: { role: 'user', content, metadata } });
}

/** Slash command input and output (`local_command`) reach the model as user text; other system records do not. */
function readSystemRecord(value: UnknownRecord, location: Location, thread: Thread, state: ReadState): void {
  const { context } = state;
  if (value.subtype !== 'local_command' || typeof value.content !== 'string' || value.content === '') {
    context.ignore('system');
    return;
  }
  context.use();
  const metadata = userMetadata(value, location, thread, value.content, state);
  metadata.systemSubtype = 'local_command';
  pushUser(value.content, metadata, thread, state);
}

// ---------------------------------------------------------------------------------------------------------------
// Assembling the result
// ---------------------------------------------------------------------------------------------------------------

/** A call the transcript never answers (an interrupted turn, a session cut off) gets an explicit error result. */
function answerOpenCalls(state: ReadState): void {
  for (const thread of state.threads.values()) {
    for (const slot of thread.slots) {
      if (slot.answered) continue;
      slot.answered = true;
      state.context.warn(
        `tool call ${slot.toolCallId} (${slot.toolName}) has no result in the transcript; added an error result "${repairPlaceholders.missingToolResult}"`,
        locationOf(slot.item.message.metadata),
      );
      const metadata: MessageMetadata = { origin, synthetic: true };
      if (thread.chain !== undefined) {
        metadata.sidechain = true;
        metadata.sidechainId = thread.chain.key;
      }
      slot.item.toolMessages.push({
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: slot.toolCallId,
            toolName: slot.toolName,
            output: { type: 'error-text', value: repairPlaceholders.missingToolResult },
          },
        ],
        metadata,
      });
    }
  }
}

function flatten(items: readonly Item[], model: string | undefined): Message[] {
  const messages: Message[] = [];
  for (const item of items) {
    if (item.kind === 'user') {
      messages.push(item.message);
      continue;
    }
    if (item.model !== undefined && item.model !== model && item.message.metadata !== undefined) {
      item.message.metadata.model = item.model;
    }
    messages.push(item.message);
    for (const toolMessage of item.toolMessages) messages.push(toolMessage);
  }
  return messages;
}

function buildResult(state: ReadState): ImportResult {
  const { context, session } = state;
  const model = session.models[0];
  const mainItems = state.items.filter((item) => item.thread.chain === undefined);
  const included = context.sidechains === 'include' ? state.items : mainItems;
  const conversation = { messages: flatten(included, model), ...(model === undefined ? {} : { model }) };
  const result: ImportResult = { conversation, metadata: transcriptMetadata(state, model) };
  if (context.sidechains === 'separate') {
    const byChain = new Map<string, Item[]>();
    for (const item of state.items) {
      const chain = item.thread.chain;
      if (chain === undefined) continue;
      const list = byChain.get(chain.key) ?? [];
      list.push(item);
      byChain.set(chain.key, list);
    }
    result.sidechains = [...byChain.values()].map((items) => {
      const chainModel = items.find(
        (item): item is AssistantItem => item.kind === 'assistant' && item.model !== undefined,
      )?.model;
      return {
        messages: flatten(items, chainModel),
        ...(chainModel === undefined ? {} : { model: chainModel }),
      };
    });
  }
  return result;
}

function transcriptMetadata(state: ReadState, model: string | undefined): TranscriptMetadata {
  const { session } = state;
  const metadata: TranscriptMetadata = { format: 'claude-code' };
  if (model !== undefined) metadata.model = model;
  const [sessionId] = session.sessionIds;
  if (sessionId !== undefined) metadata.sessionId = sessionId;
  if (session.firstTimestamp !== undefined) metadata.startedAt = session.firstTimestamp;
  if (session.lastTimestamp !== undefined) metadata.endedAt = session.lastTimestamp;
  const [cwd] = session.cwds;
  if (cwd !== undefined) metadata.cwd = cwd;
  // A summary names the branch that ends at its leaf; only one whose leaf is in this file describes it.
  const title = session.summaries.filter((summary) => state.seenUuids.has(summary.leafUuid)).at(-1)?.summary;
  if (title !== undefined) metadata.title = title;
  const extra: Record<string, JSONValue> = {};
  const [version] = session.versions;
  if (version !== undefined) extra.version = version;
  const [gitBranch] = session.gitBranches;
  if (gitBranch !== undefined) extra.gitBranch = gitBranch;
  if (session.sessionIds.length > 1) extra.sessionIds = session.sessionIds;
  if (session.versions.length > 1) extra.versions = session.versions;
  if (session.gitBranches.length > 1) extra.gitBranches = session.gitBranches;
  if (session.cwds.length > 1) extra.cwds = session.cwds;
  if (session.models.length > 1) extra.models = session.models;
  if (Object.keys(extra).length > 0) metadata.extra = extra;
  return metadata;
}
