import { toolOutputText } from '../../messages/content.js';
import type {
  AssistantContentPart,
  AssistantMessage,
  Message,
  MessageMetadata,
  ProviderOptions,
  SystemMessage,
  ToolCallPart,
  ToolMessage,
  ToolResultOutput,
  ToolResultPart,
  UserContentPart,
  UserMessage,
} from '../../messages/types.js';
import { repairPlaceholders } from '../../messages/validate/index.js';
import type { ImportContext } from '../transcript-importer.js';

/**
 * Assembles a conversation from records read in file order, keeping it valid while the log is not: every tool
 * result is placed right after the assistant message whose call it answers (a result recorded later, after other
 * messages, is moved up with a warning), a result whose call was never seen becomes a user message (its text
 * stays in the conversation), a reused call id is renamed, and a call left without a result gets an explicit
 * `[no result recorded]` error result. Shared by the importers of formats whose tool calls and results are
 * separate records (Codex rollouts, gptme logs); linear in the number of parts.
 */
export interface TranscriptBuilder {
  /** Adds a system message. Empty text adds nothing and returns false. */
  system(content: string, metadata: MessageMetadata, providerOptions?: ProviderOptions): boolean;
  /** Adds a user message. Empty content adds nothing and returns false. */
  user(content: string | UserContentPart[], metadata: MessageMetadata): boolean;
  /**
   * Adds assistant parts: to the previous assistant message while nothing has come after it (one response written
   * as several records) unless `merge` is false, else as a new message. Registers the tool calls among them. Empty
   * text and reasoning parts without provider data are left out; returns false when nothing is left.
   */
  assistant(parts: AssistantContentPart[], metadata: MessageMetadata, options?: AssistantOptions): boolean;
  /**
   * Adds the result of the call with id `toolCallId` (the id as recorded, before any renaming). Returns how it was
   * placed: `answered` (after its call), `orphaned` (no such call: kept as a user message) or `dropped` (no such
   * call and no text to keep).
   */
  toolResult(
    toolCallId: string,
    output: ToolResultOutput,
    metadata: MessageMetadata,
    options?: ToolResultOptions,
  ): 'answered' | 'orphaned' | 'dropped';
  /** True when a call with this recorded id was read and has no result yet. */
  isOpenCall(toolCallId: string): boolean;
  /** The messages, with placeholder results for the calls that have none. */
  finish(): Message[];
}

export interface AssistantOptions {
  /** Add to the previous assistant message when nothing has come after it. @default true */
  merge?: boolean;
}

export interface ToolResultOptions {
  location?: { line?: number; record?: number };
  providerOptions?: ProviderOptions;
}

interface CallSlot {
  part: ToolCallPart;
  entry: AssistantEntry;
  answered: boolean;
}

interface AssistantEntry {
  message: AssistantMessage & { content: AssistantContentPart[] };
  /** Tool messages answering this message's calls, wherever in the file their records were. */
  toolMessages: ToolMessage[];
  calls: CallSlot[];
}

type Entry = { message: UserMessage | SystemMessage } | AssistantEntry;

export function createTranscriptBuilder(origin: string, context: ImportContext): TranscriptBuilder {
  const entries: Entry[] = [];
  /** The newest call for each recorded id. */
  const calls = new Map<string, CallSlot>();
  const usedIds = new Set<string>();
  let renames = 0;

  const withOrigin = (metadata: MessageMetadata): MessageMetadata => ({ origin, ...metadata });
  const last = (): Entry | undefined => entries[entries.length - 1];
  const locationOf = (metadata: MessageMetadata) => ({
    ...(typeof metadata.line === 'number' ? { line: metadata.line } : {}),
    ...(typeof metadata.record === 'number' ? { record: metadata.record } : {}),
  });

  function freshId(recorded: string): string {
    let id = recorded;
    while (usedIds.has(id)) id = `${recorded}#${++renames}`;
    return id;
  }

  function registerCall(part: ToolCallPart, entry: AssistantEntry, metadata: MessageMetadata): ToolCallPart {
    const recorded = part.toolCallId;
    const id = freshId(recorded);
    const registered = id === recorded ? part : { ...part, toolCallId: id };
    if (id !== recorded) {
      context.warn(`tool call id ${recorded} is used again; renamed ${id}`, locationOf(metadata));
    }
    usedIds.add(id);
    const slot: CallSlot = { part: registered, entry, answered: false };
    calls.set(recorded, slot);
    entry.calls.push(slot);
    return registered;
  }

  return {
    system(content, metadata, providerOptions) {
      if (content === '') return false;
      const message: SystemMessage = { role: 'system', content, metadata: withOrigin(metadata) };
      if (providerOptions !== undefined) message.providerOptions = providerOptions;
      entries.push({ message });
      return true;
    },

    user(content, metadata) {
      if (typeof content === 'string' ? content === '' : content.length === 0) return false;
      entries.push({ message: { role: 'user', content, metadata: withOrigin(metadata) } });
      return true;
    },

    assistant(parts, metadata, options = {}) {
      const { merge = true } = options;
      const kept = parts.filter((part) => !isEmptyPart(part));
      if (kept.length === 0) return false;
      const previous = last();
      let entry: AssistantEntry;
      if (merge && previous !== undefined && 'calls' in previous && previous.toolMessages.length === 0) {
        entry = previous;
      } else {
        entry = {
          message: { role: 'assistant', content: [], metadata: withOrigin(metadata) },
          toolMessages: [],
          calls: [],
        };
        entries.push(entry);
      }
      for (const part of kept) {
        entry.message.content.push(
          part.type === 'tool-call' && part.providerExecuted !== true
            ? registerCall(part, entry, metadata)
            : part,
        );
      }
      return true;
    },

    toolResult(toolCallId, output, metadata, options = {}) {
      const slot = calls.get(toolCallId);
      const location = options.location ?? locationOf(metadata);
      if (slot === undefined || slot.answered) {
        const text = toolOutputText(output);
        const problem =
          slot === undefined ? 'no tool call with this id was read' : 'the call already has a result';
        if (text === '') {
          context.warn(`empty tool result for ${toolCallId} dropped: ${problem}`, location);
          return 'dropped';
        }
        context.warn(`tool result for ${toolCallId} kept as a user message: ${problem}`, location);
        entries.push({
          message: {
            role: 'user',
            content: text,
            metadata: withOrigin({ ...metadata, orphanedToolResult: toolCallId }),
          },
        });
        return 'orphaned';
      }
      if (last() !== slot.entry) {
        context.warn(
          `tool result for ${toolCallId} was recorded after later messages; moved up to follow its call`,
          location,
        );
      }
      const part: ToolResultPart = {
        type: 'tool-result',
        toolCallId: slot.part.toolCallId,
        toolName: slot.part.toolName,
        output,
      };
      if (options.providerOptions !== undefined) part.providerOptions = options.providerOptions;
      slot.entry.toolMessages.push({ role: 'tool', content: [part], metadata: withOrigin(metadata) });
      slot.answered = true;
      return 'answered';
    },

    isOpenCall(toolCallId) {
      const slot = calls.get(toolCallId);
      return slot !== undefined && !slot.answered;
    },

    finish() {
      const messages: Message[] = [];
      for (const entry of entries) {
        messages.push(entry.message);
        if (!('calls' in entry)) continue;
        for (const toolMessage of entry.toolMessages) messages.push(toolMessage);
        for (const slot of entry.calls) {
          if (slot.answered) continue;
          const { toolCallId, toolName } = slot.part;
          context.warn(
            `tool call ${toolCallId} (${toolName}) has no result; added "${repairPlaceholders.missingToolResult}"`,
            locationOf(entry.message.metadata ?? {}),
          );
          messages.push({
            role: 'tool',
            content: [
              {
                type: 'tool-result',
                toolCallId,
                toolName,
                output: { type: 'error-text', value: repairPlaceholders.missingToolResult },
              },
            ],
            metadata: { origin, placeholder: true },
          });
        }
      }
      return messages;
    },
  };
}

/** Parts that would make an empty message: text, and reasoning that carries no provider data (signatures...). */
function isEmptyPart(part: AssistantContentPart): boolean {
  if (part.type === 'text') return part.text === '';
  if (part.type === 'reasoning') {
    return part.text === '' && Object.keys(part.providerOptions ?? {}).length === 0;
  }
  return false;
}
