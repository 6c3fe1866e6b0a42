import { InvalidArgumentError, PrecisError } from '../errors/index.js';
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
    'It returns the original text exactly as it was. Only handles that appear in the conversation exist.',
  inputSchema: {
    type: 'object',
    properties: {
      handle: {
        type: 'string',
        description: 'The handle from the stub, e.g. "h-0123456789abcdef0123".',
      },
    },
    required: ['handle'],
    additionalProperties: false,
  },
} satisfies ToolDefinition;

/**
 * Runs a call of `expandTool`: the original as text the model can read, or, for a missing or unknown handle
 * or an unreadable archive, an error message the model can act on (never a throw: agents call this).
 * Accepts the parsed arguments, their JSON text, or a bare handle; a handle quoted inside other text is found.
 */
export function executeExpandTool(archive: ArchiveStore, input: unknown): string {
  const requested = requestedHandle(input);
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
  return formatArchiveEntry(entry);
}

function requestedHandle(input: unknown): string | undefined {
  let value = input;
  if (typeof input === 'string' && input.trim().startsWith('{')) {
    try {
      value = JSON.parse(input) as unknown;
    } catch {
      // Truncated arguments may still name a handle; otherwise there is nothing to look up.
      return new RegExp(handlePattern.source).test(input) ? input.trim() : undefined;
    }
  }
  if (typeof value === 'object' && value !== null && 'handle' in value) value = value.handle;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  return value.trim();
}

/**
 * An archived entry as plain text: messages as role-labelled blocks with their text, tool calls and tool
 * outputs; a tool output as its text; text as itself. Images and files are described, not dumped.
 */
export function formatArchiveEntry(entry: ArchiveEntry): string {
  const from = entry.messageIds.length === 0 ? '' : ` from ${entry.messageIds.join(', ')}`;
  const header = `Archived ${entry.kind} ${entry.handle} (${entry.strategy}${from}):`;
  return `${header}\n\n${formatContent(entry)}`;
}

function formatContent(entry: ArchiveEntry): string {
  const { content } = entry;
  switch (entry.kind) {
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

function formatJson(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? 'null';
}
