/**
 * Assembles a conversation from records read in file order, keeping it valid while the log is not: every tool
 * result is placed right after the assistant message whose call it answers (a result recorded later, after other
 * messages, is moved up with a warning), a result that answers no open call becomes a user message (its text
 * stays in the conversation), a reused call id is renamed, and a call left without a result gets an explicit
 * `[no result recorded]` error result. Shared by the importers of formats whose tool calls and results are
 * separate records (Codex, gptme, mini-swe-agent, SWE-agent, OpenHands); linear in the number of parts.
 *
 * The builder adds what it is given: which records are empty or worth keeping is the importer's call.
 */

import { toolOutputText } from '../../messages/content.js';
import { unknownToolName } from '../../messages/convert/placeholders.js';
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

export interface TranscriptBuilder {
  /** Adds a system message (the builder adds what it is given, empty content included). */
  system(content: string, metadata: MessageMetadata, options?: MessageOptions): void;
  user(content: string | UserContentPart[], metadata: MessageMetadata, options?: MessageOptions): void;
  /**
   * Adds an assistant message and registers its tool calls (not those the provider ran itself). With `merge`,
   * a part list goes to the previous assistant message instead while nothing has come after it (one response
   * written as several records).
   */
  assistant(
    content: string | AssistantContentPart[],
    metadata: MessageMetadata,
    options?: AssistantOptions,
  ): void;
  /**
   * Places the result of the call with id `result.toolCallId` (as recorded, before any renaming) and returns
   * how: `answered` (after its call), `orphaned` (no open call with that id: kept as a user message with the
   * result's text) or `dropped` (no open call and no text to keep).
   */
  toolResult(result: ToolResultInput, metadata: MessageMetadata): ToolResultPlacement;
  /** The call with this recorded id while it waits for a result (its `toolCallId` may be a renamed one). */
  openCall(toolCallId: string): ToolCallPart | undefined;
  /** The messages, with error results for the calls that have none. */
  finish(): Message[];
}

export type ToolResultPlacement = 'answered' | 'orphaned' | 'dropped';

export interface MessageOptions {
  providerOptions?: ProviderOptions | undefined;
}

export interface AssistantOptions extends MessageOptions {
  /**
   * Add the parts to the previous assistant message when nothing has come after it; that message keeps its
   * metadata and provider options. @default false
   */
  merge?: boolean;
}

export interface ToolResultInput {
  /** The call id as the log recorded it. */
  toolCallId: string;
  output: ToolResultOutput;
  /** The tool the log names for the result; the call's name is used when absent or unknown. */
  toolName?: string;
  providerOptions?: ProviderOptions | undefined;
}

export interface TranscriptBuilderOptions {
  /** `metadata.origin` of every message. */
  origin: string;
  context: ImportContext;
  /**
   * How long a call waits for its result: to the `'end'` of the log (records of one turn may be written
   * anywhere later), or until the `'next-assistant-message'`, as in a chat history the model was sent, where
   * a later result answers nothing the model saw.
   * @default 'end'
   */
  answerCallsUntil?: 'end' | 'next-assistant-message';
  /**
   * How a reused call id is renamed: `'suffix'` gives the first free `<id>-2`, `<id>-3`, ... (as
   * `repairMessages` does), `'counter'` gives `<id>#1`, `<id>#2`, ... from one counter for the whole log.
   * @default 'suffix'
   */
  renameCallIds?: 'suffix' | 'counter';
  /** Metadata (besides `origin`) of the error results added for calls without one. @default { synthetic: true } */
  placeholderMetadata?: MessageMetadata;
  /** Metadata key that names the call id of a result kept as a user message. @default 'orphanedToolCallId' */
  orphanedResultKey?: string;
}

interface CallSlot {
  part: ToolCallPart;
  entry: AssistantEntry;
  /** `ended`: the next assistant message came first (with `answerCallsUntil: 'next-assistant-message'`). */
  state: 'open' | 'answered' | 'ended';
}

interface AssistantEntry {
  message: AssistantMessage;
  /** Tool messages answering this message's calls, wherever in the file their records were. */
  toolMessages: ToolMessage[];
  calls: CallSlot[];
}

type Entry = { message: UserMessage | SystemMessage } | AssistantEntry;

export function createTranscriptBuilder(options: TranscriptBuilderOptions): TranscriptBuilder {
  const {
    origin,
    context,
    answerCallsUntil = 'end',
    renameCallIds = 'suffix',
    placeholderMetadata = { synthetic: true },
    orphanedResultKey = 'orphanedToolCallId',
  } = options;
  const entries: Entry[] = [];
  /** The call a result with this recorded id answers: the newest record's. */
  const calls = new Map<string, CallSlot>();
  const usedIds = new Set<string>();
  let renames = 0;
  let lastAssistant: AssistantEntry | undefined;

  const withOrigin = (metadata: MessageMetadata): MessageMetadata => ({ origin, ...metadata });
  const withProviderOptions = <T extends Message>(
    message: T,
    providerOptions: ProviderOptions | undefined,
  ): T => (providerOptions === undefined ? message : { ...message, providerOptions });

  function freshId(recorded: string): string {
    if (!usedIds.has(recorded)) return recorded;
    if (renameCallIds === 'counter') {
      let id = recorded;
      while (usedIds.has(id)) id = `${recorded}#${++renames}`;
      return id;
    }
    let suffix = 2;
    while (usedIds.has(`${recorded}-${suffix}`)) suffix++;
    return `${recorded}-${suffix}`;
  }

  function registerCall(
    part: ToolCallPart,
    entry: AssistantEntry,
    metadata: MessageMetadata,
    idsOfRecord: Set<string>,
  ): ToolCallPart {
    const recorded = part.toolCallId;
    const id = freshId(recorded);
    if (id !== recorded) {
      context.warn(`tool call id ${recorded} was already used; renamed ${id}`, locationOf(metadata));
    }
    usedIds.add(id);
    const call = id === recorded ? part : { ...part, toolCallId: id };
    const slot: CallSlot = { part: call, entry, state: 'open' };
    entry.calls.push(slot);
    // Calls sharing an id in one record can only be told apart by position: a result answers the first.
    if (!idsOfRecord.has(recorded)) {
      idsOfRecord.add(recorded);
      calls.set(recorded, slot);
    }
    return call;
  }

  function warnNoResult(slot: CallSlot): void {
    const { toolCallId, toolName } = slot.part;
    context.warn(
      `tool call ${toolCallId} (${toolName}) has no result in the log; added the error result "${repairPlaceholders.missingToolResult}"`,
      locationOf(slot.entry.message.metadata),
    );
  }

  function placeholderFor(slot: CallSlot): ToolMessage {
    const { toolCallId, toolName } = slot.part;
    return {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId,
          toolName,
          output: { type: 'error-text', value: repairPlaceholders.missingToolResult },
        },
      ],
      metadata: withOrigin(placeholderMetadata),
    };
  }

  return {
    system(content, metadata, messageOptions = {}) {
      const message: SystemMessage = { role: 'system', content, metadata: withOrigin(metadata) };
      entries.push({ message: withProviderOptions(message, messageOptions.providerOptions) });
    },

    user(content, metadata, messageOptions = {}) {
      const message: UserMessage = { role: 'user', content, metadata: withOrigin(metadata) };
      entries.push({ message: withProviderOptions(message, messageOptions.providerOptions) });
    },

    assistant(content, metadata, assistantOptions = {}) {
      const { merge = false, providerOptions } = assistantOptions;
      const previous = entries[entries.length - 1];
      let entry: AssistantEntry;
      if (
        merge &&
        previous === lastAssistant &&
        lastAssistant !== undefined &&
        lastAssistant.toolMessages.length === 0 &&
        Array.isArray(lastAssistant.message.content) &&
        Array.isArray(content)
      ) {
        entry = lastAssistant;
      } else {
        if (answerCallsUntil === 'next-assistant-message') {
          for (const slot of lastAssistant?.calls ?? []) {
            if (slot.state !== 'open') continue;
            slot.state = 'ended';
            warnNoResult(slot);
          }
        }
        const message: AssistantMessage = {
          role: 'assistant',
          content: typeof content === 'string' ? content : [],
          metadata: withOrigin(metadata),
        };
        entry = { message: withProviderOptions(message, providerOptions), toolMessages: [], calls: [] };
        entries.push(entry);
        lastAssistant = entry;
      }
      if (typeof content === 'string') return;
      const parts = entry.message.content as AssistantContentPart[];
      const idsOfRecord = new Set<string>();
      for (const part of content) {
        parts.push(
          part.type === 'tool-call' && part.providerExecuted !== true
            ? registerCall(part, entry, metadata, idsOfRecord)
            : part,
        );
      }
    },

    toolResult(result, metadata) {
      const { toolCallId, output } = result;
      const slot = calls.get(toolCallId);
      const location = locationOf(metadata);
      if (slot === undefined || slot.state !== 'open') {
        const reason =
          slot === undefined
            ? 'no call with this id was read'
            : slot.state === 'answered'
              ? 'the call already has a result'
              : 'another assistant message came after the call';
        const text = toolOutputText(output);
        if (text === '') {
          context.warn(
            `empty tool result for ${toolCallId} answers no open tool call (${reason}); dropped`,
            location,
          );
          return 'dropped';
        }
        context.warn(
          `tool result for ${toolCallId} answers no open tool call (${reason}); kept as a user message`,
          location,
        );
        const orphanMetadata: MessageMetadata = { ...withOrigin(metadata), [orphanedResultKey]: toolCallId };
        if (result.toolName !== undefined) orphanMetadata.toolName = result.toolName;
        entries.push({ message: { role: 'user', content: text, metadata: orphanMetadata } });
        return 'orphaned';
      }
      if (entries[entries.length - 1] !== slot.entry) {
        context.warn(
          `tool result for ${toolCallId} came after other messages; moved up to its tool call`,
          location,
        );
      }
      const { toolName } = result;
      const named = toolName !== undefined && toolName !== '' && toolName !== unknownToolName;
      const part: ToolResultPart = {
        type: 'tool-result',
        toolCallId: slot.part.toolCallId,
        toolName: named ? toolName : slot.part.toolName,
        output,
      };
      if (result.providerOptions !== undefined) part.providerOptions = result.providerOptions;
      slot.entry.toolMessages.push({ role: 'tool', content: [part], metadata: withOrigin(metadata) });
      slot.state = 'answered';
      return 'answered';
    },

    openCall(toolCallId) {
      const slot = calls.get(toolCallId);
      return slot?.state === 'open' ? slot.part : undefined;
    },

    finish() {
      const messages: Message[] = [];
      for (const entry of entries) {
        messages.push(entry.message);
        if (!('calls' in entry)) continue;
        for (const toolMessage of entry.toolMessages) messages.push(toolMessage);
        for (const slot of entry.calls) {
          if (slot.state === 'answered') continue;
          if (slot.state === 'open') warnNoResult(slot);
          messages.push(placeholderFor(slot));
        }
      }
      return messages;
    },
  };
}

/** Where a message's record is in the file, for warnings: its `line` and `record` metadata. */
function locationOf(metadata: MessageMetadata | undefined): { line?: number; record?: number } {
  return {
    ...(typeof metadata?.line === 'number' ? { line: metadata.line } : {}),
    ...(typeof metadata?.record === 'number' ? { record: metadata.record } : {}),
  };
}
