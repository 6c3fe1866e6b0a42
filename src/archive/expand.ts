import { InvalidArgumentError, PrecisError } from '../errors/index.js';
import { describeValue } from '../internal/json-shapes.js';
import { toolOutputText } from '../messages/content.js';
import type { JSONValue, Message, Part, ToolDefinition, ToolResultOutput } from '../messages/types.js';
import { type ArchiveEntry, type ArchiveStore, handlePattern } from './archive-store.js';

/**
 * The archived original behind a handle, exactly as stored.
 * @throws {InvalidArgumentError} (code `invalid-argument`) naming the handle when the archive does not have it.
 */
export function expand(archive: ArchiveStore, handle: string): ArchiveEntry {
  if (typeof handle !== 'string' || handle.trim() === '') {
    throw new InvalidArgumentError('handle', 'must be a non-empty string such as "h-0123456789abcdef0123"');
  }
  const entry = archive.get(handle.trim());
  if (entry === undefined) {
    throw new InvalidArgumentError('handle', `no archived original has the handle "${handle}"`);
  }
  return entry;
}

/** A tool an agent can call to read back what compression replaced with a stub. Pass it with your tools. */
export const expandTool = {
  name: 'expand_context',
  description:
    'Read the full original of something that was compressed out of this conversation to save space. ' +
    'Older messages, long tool outputs and passages may have been replaced by a short stub or a summary that ' +
    'says "archived: h-…" (a handle: "h-" followed by 20 hex characters). Call this tool with that handle ' +
    'when you need details the stub or summary left out — exact file contents, complete command output or ' +
    'error messages, earlier instructions or decisions — instead of guessing or re-running the command. ' +
    'It returns the original text exactly as it was, in pages when it is long (the reply says how to ask for ' +
    "the next page). A summary's handle lists what it archived, each with its own handle and a first line. " +
    'Only handles that appear in the conversation exist.',
  inputSchema: {
    type: 'object',
    properties: {
      handle: {
        type: 'string',
        description: 'The handle from the stub, e.g. "h-0123456789abcdef0123".',
      },
      page: {
        type: 'integer',
        minimum: 1,
        description: 'Which page of a long original to return; 1 (the default) is the start.',
      },
    },
    required: ['handle'],
    additionalProperties: false,
  },
} satisfies ToolDefinition;

export interface ExpandToolOptions {
  /**
   * Most characters one reply holds (about 4 per token); a longer original comes in pages, split at line ends
   * where one is near. @default 20000
   */
  pageChars?: number;
}

/**
 * Runs a call of `expandTool`: the original as text the model can read, or, for a missing or unknown handle
 * or an unreadable archive, an error message the model can act on (never a throw: agents call this).
 * Accepts the parsed arguments, their JSON text, or a bare handle; a handle quoted inside other text is found.
 */
export function executeExpandTool(
  archive: ArchiveStore,
  input: unknown,
  options: ExpandToolOptions = {},
): string {
  checkExpandToolOptions(options);
  const { pageChars = 20_000 } = options;
  const args = toolArguments(input);
  const requested = requestedHandle(input, args);
  if (requested === undefined) {
    return 'Error: expand_context needs a handle, e.g. {"handle": "h-0123456789abcdef0123"}. Copy it from a stub that says "archived: h-…".';
  }
  const found = requested.match(handlePattern);
  const candidates = found === null ? [requested] : [...new Set(found)];
  if (candidates.length > 1) {
    return `Error: "${requested}" contains several handles (${candidates.join(', ')}); call expand_context once per handle.`;
  }
  const handle = candidates[0] ?? requested;
  let entry: ArchiveEntry | undefined;
  try {
    entry = archive.get(handle);
  } catch (error) {
    if (!PrecisError.isInstance(error)) throw error;
    return `Error: the archive could not be read (${error.message}). The original of ${handle} is not available right now.`;
  }
  if (entry === undefined) {
    return (
      `Error: no archived content has the handle "${handle}". Handles look like "h-" followed by 20 hex ` +
      'characters and appear in stubs as "archived: h-…"; copy one exactly from the conversation.'
    );
  }
  const page = requestedPage(args);
  if (page === undefined)
    return 'Error: "page" must be a whole number from 1, e.g. {"handle": "h-…", "page": 2}.';
  let text: string;
  try {
    text = recentlyFormatted(entry, archive);
  } catch (error) {
    if (!PrecisError.isInstance(error)) throw error;
    return `Error: the archive could not be read (${error.message}). The original of ${handle} is not available right now.`;
  }
  return pageOf(text, handle, page, pageChars);
}

/** What an expand tool made for an agent framework runs with: the archive and the page options. */
export interface ExpandToolSetup {
  archive: ArchiveStore;
  pageOptions: ExpandToolOptions;
}

/**
 * The checked setup of an expand tool for an agent framework (the AI SDK's and LangChain's `createExpandTool`),
 * from the options a user passes: an archive store and an optional `pageChars`.
 * @throws {InvalidArgumentError} naming `archive` when it is not an archive store, or `pageChars` when it is not a
 * positive integer.
 */
export function checkExpandToolSetup(
  options: (ExpandToolOptions & { archive: ArchiveStore }) | undefined,
): ExpandToolSetup {
  const archive = options?.archive;
  if (typeof archive?.get !== 'function')
    throw new InvalidArgumentError('archive', `expected an archive store, got ${describeValue(archive)}`);
  const pageOptions = options?.pageChars === undefined ? {} : { pageChars: options.pageChars };
  checkExpandToolOptions(pageOptions);
  return { archive, pageOptions };
}

/** The texts of the entries last expanded from each archive, by handle and the ids the entry lists. */
const recentTexts = new WeakMap<ArchiveStore, Map<string, string>>();
/** Entries remembered per archive: an agent pages through one or two at a time. */
const recentTextsPerArchive = 4;

/**
 * `formatArchiveEntry(entry, archive)`, remembered for the entries last asked for: a model reads a long original
 * page by page, and formatting it again for each page costs the whole original every time (an index reads
 * every original it lists). An entry's content never changes under its handle, but a `put` may add the
 * message ids it lists, so they are part of the key. (An index's listing is remembered with the ids its
 * originals listed when it was first formatted.)
 */
function recentlyFormatted(entry: ArchiveEntry, archive: ArchiveStore): string {
  let texts = recentTexts.get(archive);
  if (texts === undefined) {
    texts = new Map();
    recentTexts.set(archive, texts);
  }
  const key = `${entry.handle} ${entry.messageIds.join(',')}`;
  let text = texts.get(key);
  if (text === undefined) {
    text = formatArchiveEntry(entry, archive);
    if (texts.size >= recentTextsPerArchive) texts.delete(texts.keys().next().value!);
  } else texts.delete(key);
  // The most recently used last, the first to go when the map is full.
  texts.set(key, text);
  return text;
}

/** @throws {InvalidArgumentError} naming `pageChars` when it is not a positive integer. */
export function checkExpandToolOptions(options: ExpandToolOptions): void {
  const { pageChars } = options;
  if (pageChars !== undefined && (!Number.isInteger(pageChars) || pageChars < 1))
    throw new InvalidArgumentError('pageChars', `must be a positive integer, got ${String(pageChars)}`);
}

/** The page asked for: 1 when none is, undefined when what is given is not a positive whole number. */
function requestedPage(args: unknown): number | undefined {
  if (typeof args !== 'object' || args === null || !('page' in args)) return 1;
  const page = typeof args.page === 'string' && /^\s*\d+\s*$/.test(args.page) ? Number(args.page) : args.page;
  if (page === undefined || page === null) return 1;
  return typeof page === 'number' && Number.isInteger(page) && page >= 1 ? page : undefined;
}

/**
 * Page `page` of `text` in pages of at most `pageChars` characters: the text itself when it fits one. Each page
 * ends at a line end when there is one in its second half, and never inside a surrogate pair. A line after the
 * page says where it is and how to ask for the next; one before it (from page 2) that it continues.
 */
function pageOf(text: string, handle: string, page: number, pageChars: number): string {
  if (text.length <= pageChars) {
    return page === 1 ? text : `Error: ${handle} is one page long; ask for page 1 or leave "page" out.`;
  }
  const starts = pageStarts(text, pageChars);
  const count = starts.length;
  if (page > count) return `Error: ${handle} has ${count} pages; ask for a page from 1 to ${count}.`;
  const body = text.slice(starts[page - 1], starts[page] ?? text.length);
  const before = page === 1 ? '' : `[${handle}, page ${page} of ${count}, continued]\n`;
  const after =
    page === count
      ? `\n[${handle}, page ${page} of ${count}: the end]`
      : `\n[${handle}, page ${page} of ${count}; for more call expand_context with {"handle": "${handle}", "page": ${page + 1}}]`;
  return `${before}${body}${after}`;
}

function pageStarts(text: string, pageChars: number): number[] {
  const starts = [0];
  let start = 0;
  while (text.length - start > pageChars) {
    let end = start + pageChars;
    const lineEnd = text.lastIndexOf('\n', end - 1);
    if (lineEnd >= start + pageChars / 2) end = lineEnd + 1;
    // A pair is not split: the page ends before it, or (a page of one character) after it.
    else if (isLowSurrogate(text.charCodeAt(end))) end = end - 1 > start ? end - 1 : end + 1;
    starts.push(end);
    start = end;
  }
  return starts;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** The call's arguments: JSON text parsed, anything else as given; undefined for JSON text that does not parse. */
function toolArguments(input: unknown): unknown {
  if (typeof input !== 'string' || !input.trim().startsWith('{')) return input;
  try {
    return JSON.parse(input) as unknown;
  } catch {
    return undefined;
  }
}

function requestedHandle(input: unknown, args: unknown): string | undefined {
  // Truncated JSON arguments may still name a handle; otherwise there is nothing to look up.
  if (args === undefined && typeof input === 'string')
    return new RegExp(handlePattern.source).test(input) ? input.trim() : undefined;
  let value = args;
  if (typeof value === 'object' && value !== null && 'handle' in value) value = value.handle;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  return value.trim();
}

/**
 * An archived entry as plain text: messages as role-labelled blocks with their text, tool calls and tool
 * outputs; a tool output as its text; text as itself. Images and files are described, not dumped.
 */
export function formatArchiveEntry(entry: ArchiveEntry, archive?: ArchiveStore): string {
  const from = entry.messageIds.length === 0 ? '' : ` from ${entry.messageIds.join(', ')}`;
  const header = `Archived ${entry.kind} ${entry.handle} (${entry.strategy}${from}):`;
  return `${header}\n\n${formatContent(entry, archive)}`;
}

function formatContent(entry: ArchiveEntry, archive?: ArchiveStore): string {
  const { content } = entry;
  switch (entry.kind) {
    case 'index':
      return formatIndex(content, archive);
    case 'messages':
      return Array.isArray(content) && content.every(isMessageLike)
        ? (content as Message[]).map(formatMessage).join('\n\n')
        : formatJson(content);
    case 'tool-output':
      return formatToolOutput(content);
    case 'text':
      return typeof content === 'string' ? content : formatJson(content);
  }
}

function isMessageLike(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    'role' in value &&
    typeof value.role === 'string' &&
    'content' in value &&
    (typeof value.content === 'string' || Array.isArray(value.content))
  );
}

function formatMessage(message: Message): string {
  const label = message.id === undefined ? `[${message.role}]` : `[${message.role} ${message.id}]`;
  if (typeof message.content === 'string') return `${label}\n${message.content}`;
  const parts = (message.content as readonly Part[]).map(formatPart);
  return [label, ...parts].join('\n');
}

function formatPart(part: Part): string {
  switch (part.type) {
    case 'text':
      return part.text;
    case 'reasoning':
      return `(reasoning)\n${part.text}`;
    case 'image':
      return `(image${part.mediaType === undefined ? '' : ` ${part.mediaType}`}${describeData(part.image)})`;
    case 'file':
      return `(file${part.filename === undefined ? '' : ` ${part.filename}`} ${part.mediaType}${describeData(part.data)})`;
    case 'tool-call': {
      const input = typeof part.input === 'string' ? part.input : JSON.stringify(part.input ?? null);
      return `(tool call ${part.toolName} ${part.toolCallId})\n${input}`;
    }
    case 'tool-result': {
      const failed = part.output.type.startsWith('error') ? ', error' : '';
      return `(tool result ${part.toolName} ${part.toolCallId}${failed})\n${toolOutputText(part.output)}`;
    }
    case 'tool-approval-request':
      return `(tool approval requested for ${part.toolCallId})`;
    case 'tool-approval-response':
      return `(tool approval ${part.approved ? 'granted' : 'denied'}${part.reason === undefined ? '' : `: ${part.reason}`})`;
    default:
      return formatJson(part as unknown as JSONValue);
  }
}

function describeData(data: unknown): string {
  if (data instanceof URL) return ` ${data.href}`;
  if (typeof data === 'string') {
    if (/^https?:\/\//i.test(data)) return ` ${data}`;
    return `, ${data.length} characters of ${data.startsWith('data:') ? 'data URL' : 'base64'}`;
  }
  if (data instanceof Uint8Array || data instanceof ArrayBuffer) return `, ${data.byteLength} bytes`;
  return '';
}

const outputTypes = ['text', 'json', 'error-text', 'error-json', 'content', 'execution-denied'];

function formatToolOutput(content: ArchiveEntry['content']): string {
  if (typeof content === 'string') return content;
  if (typeof content === 'object' && content !== null && !Array.isArray(content)) {
    const record = content as Record<string, unknown>;
    // A whole tool-result part or just its output.
    const output = record.type === 'tool-result' ? record.output : record;
    if (isToolResultOutput(output)) return toolOutputText(output);
  }
  return formatJson(content);
}

function isToolResultOutput(value: unknown): value is ToolResultOutput {
  if (typeof value !== 'object' || value === null || !('type' in value)) return false;
  if (!outputTypes.includes(String(value.type))) return false;
  if (value.type === 'execution-denied') return true;
  if (!('value' in value)) return false;
  if (value.type === 'text' || value.type === 'error-text') return typeof value.value === 'string';
  if (value.type === 'content') return Array.isArray(value.value);
  return true;
}

/**
 * An index as one line per handle: what it is, where from, its size and its first line, so the reader can pick
 * what to expand. An index inside it (a summary's earlier index, which a later fold extends) is listed in its
 * place, so the list is flat. Without the archive (or for a handle it lacks), only the handle.
 */
function formatIndex(content: ArchiveEntry['content'], archive: ArchiveStore | undefined): string {
  const lines: string[] = [];
  const seen = new Set<string>();
  const list = (handles: unknown) => {
    if (!Array.isArray(handles)) return;
    for (const handle of handles) {
      if (typeof handle !== 'string' || seen.has(handle)) continue;
      seen.add(handle);
      const entry = archive?.get(handle);
      if (entry?.kind === 'index') {
        list(entry.content);
        continue;
      }
      if (entry === undefined) {
        lines.push(`- ${handle}${archive === undefined ? '' : ' (not in this archive)'}`);
        continue;
      }
      const text = formatContent(entry, archive);
      const first = firstLine(text);
      lines.push(
        `- ${handle}: ${describeEntry(entry.kind, entry)}, ${text.length.toLocaleString('en-US')} characters${first === '' ? '' : ` — ${first}`}`,
      );
    }
  };
  list(content);
  const intro = `${lines.length} archived ${lines.length === 1 ? 'original' : 'originals'}`;
  return [`${intro}; expand any by its handle:`, ...lines].join('\n');
}

/** An original's kind, source messages and strategy (`kind` is the entry's: an index is listed, not described). */
function describeEntry(kind: Exclude<ArchiveEntry['kind'], 'index'>, entry: ArchiveEntry): string {
  const { content, messageIds, strategy } = entry;
  const from =
    messageIds.length === 0
      ? ''
      : messageIds.length <= 2
        ? ` of ${messageIds.join(', ')}`
        : ` of ${messageIds[0]} … ${messageIds[messageIds.length - 1]}`;
  switch (kind) {
    case 'messages': {
      const count = Array.isArray(content) ? content.length : 0;
      return `${count} ${count === 1 ? 'message' : 'messages'}${from} (${strategy})`;
    }
    case 'tool-output':
      return `tool output${from} (${strategy})`;
    case 'text':
      return `text${from} (${strategy})`;
  }
}

/**
 * The first line with a letter or digit that is not a message's role label (`[user m1]`), whitespace collapsed,
 * cut to 100 characters.
 */
function firstLine(text: string): string {
  const line = text
    .split('\n')
    .find((candidate) => /[\p{L}\p{N}]/u.test(candidate) && !/^\[\w+( \S+)?\]$/.test(candidate.trim()));
  if (line === undefined) return '';
  const flat = line.replace(/\s+/g, ' ').trim();
  return flat.length <= 100 ? flat : `${flat.slice(0, 99)}…`;
}

function formatJson(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? 'null';
}
