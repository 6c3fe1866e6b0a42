/**
 * gptme conversation logs (`~/.local/share/gptme/logs/<conversation>/conversation.jsonl`): one message per line,
 * `{ role: 'system' | 'user' | 'assistant', content, timestamp, files?, pinned?, hide?, ui_only?, call_id?,
 * metadata? }`.
 *
 * gptme's tools are text conventions. In the default (markdown) tool format the assistant writes fenced blocks
 * (```shell, ```ipython, ```save path, ```append path, ```patch path, ...) and gptme answers each block it runs
 * with `system` messages ("Ran command: ...", "Saved to ..."); in the XML format the blocks are
 * `<tool-use><shell>...</shell></tool-use>`; in the `tool` format the assistant text holds
 * `@shell(call_id): {json}` and the answers carry the same `call_id`. These become tool calls and results
 * (the block's tool as `toolName`, input `{ command }` / `{ code }` / `{ path, content }`, the system reply
 * verbatim as a text result) when the pairing is clear:
 * - `tool` format: by `call_id`;
 * - markdown / XML: the system messages right after the assistant message answer its blocks one to one and in
 *   order, so the pairing is clear when there are as many of them as blocks (also when counting only blocks with
 *   an explicit tool tag, leaving legacy ```file.py save blocks as text), or when a single block's first
 *   answer starts the way that tool's output does ("Ran command", "Saved to", ...);
 * - an assistant message that ends the log with fewer answers than blocks is an aborted session: the answers
 *   go to the first blocks, the other blocks become calls with a `[no result recorded]` error result.
 * Otherwise the assistant message stays text as written and its system messages stay messages (with a warning).
 *
 * System messages before the first user or assistant message are the system prompt. Later system messages
 * that answer no tool call (hook notices, errors, context added on the way) become **user** messages marked
 * `metadata.originalRole = 'system'`: gptme sends them to Anthropic the same way, and a system message in
 * the middle would be moved to the top by a repair for Anthropic. `ui_only` messages were never sent to the
 * model and are counted as ignored.
 *
 * Message metadata: `origin`, `timestamp` (as gptme wrote it: local time without an offset), `line`, `pinned`,
 * `hide`, `files` (attachment paths; their contents were never logged), `model` (assistant), `originalRole`.
 */

import { isRecord } from '../../internal/json-shapes.js';
import { nonBlankLines } from '../../internal/parse-json.js';
import type { AssistantContentPart, JSONValue, MessageMetadata } from '../../messages/types.js';
import { readJsonLineRecords } from '../internal/record-readers.js';
import { createTranscriptBuilder, type TranscriptBuilder } from '../internal/transcript-builder.js';
import type {
  ImportContext,
  ImportResult,
  TranscriptImporter,
  TranscriptMetadata,
  TranscriptSample,
} from '../transcript-importer.js';

const origin = 'gptme';
const linesToSample = 20;
const gptmeRoles = ['system', 'user', 'assistant'] as const;
type GptmeRole = (typeof gptmeRoles)[number];

/** Every field `Message.to_dict` writes (and `quiet`, which older versions wrote). */
const gptmeFields = new Set([
  'role',
  'content',
  'timestamp',
  'files',
  'file_hashes',
  'pinned',
  'hide',
  'quiet',
  'ui_only',
  'ephemeral_ttl',
  'call_id',
  'metadata',
]);

/** Python's `json.dumps` with gptme's field order: recognisable even when the first line is cut off. */
const truncatedFirstLine = /^\{"role": "(system|user|assistant)", "content": "/;

/** Tool-format call: `@tool(call_id): {` at the start of a line, as gptme's `toolcall_re` reads it. */
const toolCallStart = /^@(\w+)\(([\w\-:.]+)\):[ \t]*(?=\{)/gm;
const xmlTagStart = /^\s*<([A-Za-z][\w-]*)([^>]*)>/;
const xmlAttribute = /[\w-]+\s*=\s*"([^"]*)"/g;

/** Block tags of gptme's tools (`block_types`); `py` is ipython's alias. */
const toolTags: Record<string, string> = {
  shell: 'shell',
  ipython: 'ipython',
  py: 'ipython',
  save: 'save',
  append: 'append',
  patch: 'patch',
  morph: 'morph',
  tmux: 'tmux',
  gh: 'gh',
  read: 'read',
  lsp: 'lsp',
  todo: 'todo',
  todoread: 'todoread',
  todowrite: 'todowrite',
  subagent: 'subagent',
  computer: 'computer',
  browser: 'browser',
};
const commandTools = new Set(['shell', 'tmux', 'gh']);
const fileTools = new Set(['save', 'append', 'patch', 'morph']);

/** How the first answer of a tool starts, for a lone block followed by several system messages. */
const answerStarts: Record<string, readonly string[]> = {
  shell: ['Ran command', 'Ran allowlisted command', '```stdout', '```stderr'],
  ipython: ['Executed code block', 'Result:', '```stdout', '```stderr'],
  save: ['Saved to', 'Save aborted', 'Save cancelled'],
  append: ['Appended to', 'Append aborted'],
  patch: ['Patch applied', 'Patch successfully applied'],
};

type UnknownRecord = Record<string, unknown>;

interface GptmeRecord {
  role: GptmeRole;
  content: string;
  line: number;
  value: UnknownRecord;
  callId: string | undefined;
}

/** A tool use found in assistant text: where it is, and what it becomes. */
interface ToolBlock {
  start: number;
  end: number;
  toolName: string;
  input: unknown;
  /** `tool` format only. */
  callId?: string;
  /** A ```path/to/file block: a save in old gptme versions only. */
  legacy?: boolean;
}

interface GptmeState {
  context: ImportContext;
  builder: TranscriptBuilder;
  firstTimestamp: string | undefined;
  lastTimestamp: string | undefined;
  model: string | undefined;
  started: boolean;
}

export const gptmeImporter: TranscriptImporter = {
  format: 'gptme',
  description: 'gptme conversation log (conversation.jsonl)',
  detect: detectGptme,
  parse: parseGptme,
};

// ---------------------------------------------------------------------------------------------------------------
// Detection
// ---------------------------------------------------------------------------------------------------------------

function detectGptme(sample: TranscriptSample): string | undefined {
  const head = sample.head.charCodeAt(0) === 0xfeff ? sample.head.slice(1) : sample.head;
  const named = sample.fileName === 'conversation.jsonl';
  let matched = 0;
  for (const { line, text: raw } of nonBlankLines(head)) {
    if (line > linesToSample) break;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      // The sample may end inside a line (a long system prompt): its start still shows gptme's field order.
      if (matched === 0 && named && truncatedFirstLine.test(raw)) {
        return 'conversation.jsonl starting with a gptme message ({"role": ..., "content": ...})';
      }
      continue;
    }
    if (!isGptmeMessage(value)) return undefined;
    matched++;
  }
  if (matched === 0) return undefined;
  return `${named ? 'conversation.jsonl: ' : ''}lines are gptme messages (role, string content, timestamp, no "type")`;
}

function isGptmeMessage(value: unknown): value is UnknownRecord {
  return (
    isRecord(value) &&
    (gptmeRoles as readonly unknown[]).includes(value.role) &&
    typeof value.content === 'string' &&
    typeof value.timestamp === 'string' &&
    Object.keys(value).every((key) => gptmeFields.has(key))
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------------------------

function parseGptme(text: string, context: ImportContext): ImportResult {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const state: GptmeState = {
    context,
    builder: createTranscriptBuilder({
      origin,
      context,
      // The marks this importer's output has always had (`<id>#1`, `placeholder`, `orphanedToolResult`).
      renameCallIds: 'counter',
      placeholderMetadata: { placeholder: true },
      orphanedResultKey: 'orphanedToolResult',
    }),
    firstTimestamp: undefined,
    lastTimestamp: undefined,
    model: undefined,
    started: false,
  };
  const records = readRecords(body, state);
  const answeredIds = new Set<string>();
  for (const record of records)
    if (record.role === 'system' && record.callId !== undefined) answeredIds.add(record.callId);
  for (let index = 0; index < records.length; ) {
    const record = records[index]!;
    if (record.role === 'assistant') {
      let next = index + 1;
      while (next < records.length && records[next]!.role === 'system') next++;
      readTurn(
        record,
        records.slice(index + 1, next),
        { endsLog: next === records.length, answeredIds },
        state,
      );
      index = next;
      continue;
    }
    if (record.role === 'user') {
      state.started = true;
      addUser(record, {}, state);
    } else if (record.callId !== undefined && state.builder.openCall(record.callId) !== undefined) {
      // The answer to a `tool` format call, recorded after a later message (an interruption).
      addAnswer(record, record.callId, state);
    } else if (state.started) {
      addUser(record, { originalRole: 'system' }, state);
    } else {
      state.builder.system(record.content, metadataOf(record, state));
      context.use();
    }
    index++;
  }
  return buildResult(state);
}

/** The lines that are gptme messages; everything else is counted and skipped. */
function readRecords(body: string, state: GptmeState): GptmeRecord[] {
  const { context } = state;
  const records: GptmeRecord[] = [];
  for (const { value, line } of readJsonLineRecords(body, context)) {
    context.read();
    if (!isRecord(value)) {
      context.malformed('a gptme message must be a JSON object', { line });
      continue;
    }
    const { role, content } = value;
    if (!(gptmeRoles as readonly unknown[]).includes(role) || typeof content !== 'string') {
      context.malformed('a gptme message needs a role (system, user or assistant) and string content', {
        line,
      });
      continue;
    }
    if (typeof value.timestamp === 'string') {
      state.firstTimestamp ??= value.timestamp;
      state.lastTimestamp = value.timestamp;
    }
    if (value.ui_only === true) {
      // Status lines shown in gptme's UI and never sent to the model.
      context.ignore('ui_only');
      continue;
    }
    if (content === '') {
      context.ignore('empty');
      continue;
    }
    const callId = typeof value.call_id === 'string' && value.call_id !== '' ? value.call_id : undefined;
    records.push({ role: role as GptmeRole, content, line, value, callId });
  }
  return records;
}

function metadataOf(record: GptmeRecord, state: GptmeState, extra: MessageMetadata = {}): MessageMetadata {
  const { value } = record;
  const metadata: MessageMetadata = {};
  if (typeof value.timestamp === 'string') metadata.timestamp = value.timestamp;
  metadata.line = record.line;
  if (value.pinned === true) metadata.pinned = true;
  if (value.hide === true) metadata.hide = true;
  if (Array.isArray(value.files) && value.files.length > 0) metadata.files = value.files as JSONValue;
  if (record.role === 'assistant' && isRecord(value.metadata) && typeof value.metadata.model === 'string') {
    metadata.model = value.metadata.model;
    state.model = value.metadata.model;
  }
  return { ...metadata, ...extra };
}

function addUser(record: GptmeRecord, extra: MessageMetadata, state: GptmeState): void {
  state.builder.user(record.content, metadataOf(record, state, extra));
  state.context.use();
}

interface TurnContext {
  /** No user or assistant message follows. */
  endsLog: boolean;
  /** The `call_id`s of every system message in the log. */
  answeredIds: ReadonlySet<string>;
}

/** One assistant message and the system messages that follow it. */
function readTurn(
  assistant: GptmeRecord,
  answers: GptmeRecord[],
  turn: TurnContext,
  state: GptmeState,
): void {
  const { context, builder } = state;
  const { endsLog, answeredIds } = turn;
  state.started = true;
  const metadata = metadataOf(assistant, state);
  const calls = toolFormatCalls(assistant.content);
  // `@tool(id): {...}` is a call when gptme answered it somewhere, or when the log stops right after it.
  if (calls.length > 0 && (endsLog || calls.some((call) => answeredIds.has(call.callId!)))) {
    addAssistant(assistant, calls, metadata, state);
    for (const answer of answers) {
      if (answer.callId === undefined) addUser(answer, { originalRole: 'system' }, state);
      else addAnswer(answer, answer.callId, state);
    }
    return;
  }
  const blocks = markdownBlocks(assistant.content);
  const uses = blocks.length > 0 ? blocks : xmlToolUses(assistant.content);
  const paired = pairBlocks(uses, answers, endsLog);
  if (paired === undefined) {
    if (uses.length > 0 && answers.length > 0) {
      context.warn(
        `${uses.length} tool block(s) and ${answers.length} system message(s) after them do not pair up: kept as text`,
        { line: assistant.line },
      );
    }
    builder.assistant([{ type: 'text', text: assistant.content }], metadata);
    context.use();
    for (const answer of answers) addUser(answer, { originalRole: 'system' }, state);
    return;
  }
  const ids = paired.map((_, position) => `gptme-${assistant.line}-${position}`);
  addAssistant(
    assistant,
    paired.map((block, position) => ({ ...block, callId: ids[position]! })),
    metadata,
    state,
  );
  answers.forEach((answer, position) => {
    if (position < paired.length) addAnswer(answer, ids[position]!, state);
    else addUser(answer, { originalRole: 'system' }, state);
  });
}

/**
 * The blocks the answers pair with, in order, or undefined when the pairing is not clear. Every answer up to
 * the number of blocks answers one block (see the module comment for when that is so).
 */
function pairBlocks(uses: ToolBlock[], answers: GptmeRecord[], endsLog: boolean): ToolBlock[] | undefined {
  if (uses.length === 0) return undefined;
  if (answers.length === uses.length) return uses;
  // The log ends while the blocks ran: the answers so far belong to the first blocks, gptme runs them in order.
  if (endsLog && answers.length < uses.length) return uses;
  const explicit = uses.filter((use) => use.legacy !== true);
  if (explicit.length === answers.length) return explicit;
  const [lone] = explicit;
  if (explicit.length === 1 && lone !== undefined && answers.length > 1) {
    const starts = answerStarts[lone.toolName] ?? [];
    if (starts.some((prefix) => answers[0]!.content.startsWith(prefix))) return explicit;
  }
  return undefined;
}

function addAssistant(
  record: GptmeRecord,
  uses: ToolBlock[],
  metadata: MessageMetadata,
  state: GptmeState,
): void {
  const { content } = record;
  const parts: AssistantContentPart[] = [];
  let position = 0;
  for (const use of uses) {
    const before = content.slice(position, use.start);
    if (before.trim() !== '') parts.push({ type: 'text', text: before });
    parts.push({ type: 'tool-call', toolCallId: use.callId!, toolName: use.toolName, input: use.input });
    position = use.end;
  }
  const after = content.slice(position);
  if (after.trim() !== '') parts.push({ type: 'text', text: after });
  state.builder.assistant(parts, metadata);
  state.context.use();
}

function addAnswer(answer: GptmeRecord, toolCallId: string, state: GptmeState): void {
  const placed = state.builder.toolResult(
    { toolCallId, output: { type: 'text', value: answer.content } },
    metadataOf(answer, state, { originalRole: 'system' }),
  );
  if (placed === 'dropped') state.context.ignore('orphaned tool result');
  else state.context.use();
}

// ---------------------------------------------------------------------------------------------------------------
// Tool uses in assistant text
// ---------------------------------------------------------------------------------------------------------------

/** Input of a markdown or XML tool use, from the block's tag words after the tool and its content. */
function toolBlock(
  tag: string,
  words: string[],
  content: string,
  start: number,
  end: number,
): ToolBlock | undefined {
  const toolName = toolTags[tag];
  if (toolName === undefined) {
    // Old gptme versions saved a block whose tag is a file name (```src/app.py) to that file.
    if (words.length > 0 || !(tag.includes('.') || tag.includes('/'))) return undefined;
    return { start, end, toolName: 'save', input: { path: tag, content }, legacy: true };
  }
  const args = words.join(' ');
  let input: Record<string, string>;
  if (commandTools.has(toolName)) input = args === '' ? { command: content } : { command: content, args };
  else if (toolName === 'ipython') input = { code: content };
  else if (fileTools.has(toolName)) input = { path: args, content };
  else input = args === '' ? { content } : { args, content };
  return { start, end, toolName, input };
}

/**
 * Fenced blocks as gptme's own parser finds them: an opening fence at the start of a line, nested fences
 * counted, a bare fence closing only when the next line is blank, another fence or the end; an unclosed block
 * is no block. Text before `</think>` is skipped, as gptme does. Linear in the text.
 */
function markdownBlocks(text: string): ToolBlock[] {
  const thinkEnd = text.indexOf('</think>');
  const from = thinkEnd === -1 ? 0 : thinkEnd + '</think>'.length;
  const firstFence = text.indexOf('```', from);
  if (firstFence === -1 || text.indexOf('```', firstFence + 3) === -1) return [];
  const starts: number[] = [];
  const ends: number[] = [];
  for (let start = from; start <= text.length; ) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    starts.push(start);
    ends.push(end);
    start = end + 1;
  }
  const lineAt = (index: number) => text.slice(starts[index]!, ends[index]!);
  const blocks: ToolBlock[] = [];
  for (let index = 0; index < starts.length; ) {
    const line = lineAt(index);
    if (!line.startsWith('```')) {
      index++;
      continue;
    }
    const open = index;
    let depth = 1;
    let close = -1;
    for (index = open + 1; index < starts.length; index++) {
      const inner = lineAt(index);
      if (!inner.startsWith('```')) continue;
      if (inner.trim() !== '```') {
        depth++;
        continue;
      }
      const next = index + 1 < starts.length ? lineAt(index + 1) : undefined;
      if (next !== undefined && next.trim() !== '' && !next.startsWith('```')) {
        depth++;
        continue;
      }
      depth--;
      if (depth === 0) {
        close = index;
        break;
      }
    }
    if (close === -1) break;
    index = close + 1;
    const [tag = '', ...words] = line.slice(3).trim().split(' ');
    const content = close > open + 1 ? text.slice(starts[open + 1]!, ends[close - 1]!) : '';
    const block = toolBlock(tag, words, content, starts[open]!, ends[close]!);
    if (block !== undefined) blocks.push(block);
  }
  return blocks;
}

/** `<tool-use><shell>ls</shell></tool-use>`, one tool element per `tool-use` as gptme writes them. */
function xmlToolUses(text: string): ToolBlock[] {
  const blocks: ToolBlock[] = [];
  for (let from = 0; ; ) {
    const open = text.indexOf('<tool-use>', from);
    if (open === -1) break;
    const close = text.indexOf('</tool-use>', open);
    if (close === -1) break;
    from = close + '</tool-use>'.length;
    const inner = text.slice(open + '<tool-use>'.length, close);
    const tag = xmlTagStart.exec(inner);
    if (tag === null) continue;
    const name = tag[1]!;
    const end = inner.lastIndexOf(`</${name}>`);
    if (end < tag[0].length) continue;
    const words = Array.from(tag[2]!.matchAll(xmlAttribute), (match) => unescapeXml(match[1]!));
    const content = unescapeXml(inner.slice(tag[0].length, end).trim());
    const block = toolBlock(name, words, content, open, from);
    if (block !== undefined) blocks.push(block);
  }
  return blocks;
}

function unescapeXml(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(lt|gt|quot|apos|amp);/g, (_, entity: string) => xmlEntities[entity] ?? '');
}

const xmlEntities: Record<string, string> = { lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' };

/** `@tool(call_id): {json}` calls of gptme's `tool` format; JSON that does not parse is the input as text. */
function toolFormatCalls(text: string): ToolBlock[] {
  if (!text.includes('@')) return [];
  const calls: ToolBlock[] = [];
  let after = 0;
  for (const match of text.matchAll(toolCallStart)) {
    if (match.index < after) continue;
    const jsonStart = match.index + match[0].length;
    const jsonEnd = objectEnd(text, jsonStart);
    if (jsonEnd === -1) continue;
    const json = text.slice(jsonStart, jsonEnd);
    let input: unknown;
    try {
      input = JSON.parse(json);
    } catch {
      input = json;
    }
    calls.push({ start: match.index, end: jsonEnd, toolName: match[1]!, input, callId: match[2]! });
    after = jsonEnd;
  }
  return calls;
}

/** End (exclusive) of the JSON object opening at `start`, counting braces outside strings; -1 when unclosed. */
function objectEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let index = start; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c) index++;
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) {
      inString = true;
    } else if (code === 0x7b) {
      depth++;
    } else if (code === 0x7d) {
      depth--;
      if (depth === 0) return index + 1;
    }
  }
  return -1;
}

// ---------------------------------------------------------------------------------------------------------------
// Result
// ---------------------------------------------------------------------------------------------------------------

function buildResult(state: GptmeState): ImportResult {
  const messages = state.builder.finish();
  const metadata: TranscriptMetadata = { format: 'gptme' };
  if (state.model !== undefined) metadata.model = state.model;
  if (state.firstTimestamp !== undefined) metadata.startedAt = state.firstTimestamp;
  if (state.lastTimestamp !== undefined) metadata.endedAt = state.lastTimestamp;
  return {
    conversation: state.model === undefined ? { messages } : { messages, model: state.model },
    metadata,
  };
}
