/**
 * Shared by the agent-log importers (mini-swe-agent, SWE-agent, OpenHands): a builder that links tool calls to
 * their results and keeps the conversation valid whatever the log did, plus small readers for the JSON these
 * logs are made of.
 */

import { InvalidJsonError, InvalidMessageError, TranscriptImportError } from '../../errors/index.js';
import { isRecord } from '../../internal/json-shapes.js';
import { parseJsonText } from '../../internal/parse-json.js';
import { toolOutputText } from '../../messages/content.js';
import { fromOpenAI } from '../../messages/convert/openai.js';
import { unknownToolName } from '../../messages/convert/placeholders.js';
import type {
  AssistantMessage,
  Message,
  MessageMetadata,
  SystemMessage,
  ToolCallPart,
  ToolMessage,
  ToolResultPart,
  UserMessage,
} from '../../messages/types.js';
import { repairPlaceholders } from '../../messages/validate/index.js';
import type { ImportContext } from '../transcript-importer.js';

/** Where a message came from in the log: a JSON array entry (`record`) or a line. */
export interface RecordLocation {
  line?: number;
  record?: number;
}

export interface AddResultOptions {
  metadata?: MessageMetadata;
  location?: RecordLocation;
}

export interface ToolTurnBuilder {
  /**
   * Appends a system, user or assistant message. An assistant message first closes the previous turn (calls
   * still without a result get a placeholder result); if it has tool calls it opens a turn whose calls wait for
   * results. Call ids already used earlier in the conversation are renamed (`<id>-2`), with a warning.
   */
  add(message: SystemMessage | UserMessage | AssistantMessage, location?: RecordLocation): void;
  /**
   * Adds the result of a call of the open turn as a tool message right after that turn, moving it up past user
   * or system messages that came between (with a warning). A result that answers no open call becomes a user
   * message with the result's text, so nothing is lost, and a warning; then it returns false.
   */
  addResult(part: ToolResultPart, options?: AddResultOptions): boolean;
  /** The open turn's call with this id (as the log spells it) when it still waits for a result. */
  pendingCall(toolCallId: string): ToolCallPart | undefined;
  /** Closes the open turn and returns the messages. */
  finish(): Message[];
}

interface OpenTurn {
  /** Calls waiting for a result, keyed by the id the log gave them (the part may carry a renamed id). */
  pending: Map<string, ToolCallPart>;
  /** Index where the next result of the turn goes: after the assistant message and the results so far. */
  insertAt: number;
  location: RecordLocation | undefined;
}

export interface ToolTurnBuilderOptions {
  /** `metadata.origin` of the messages the builder writes itself (placeholders, orphaned results). */
  origin: string;
  context: ImportContext;
}

export function createToolTurnBuilder(options: ToolTurnBuilderOptions): ToolTurnBuilder {
  const { origin, context } = options;
  const messages: Message[] = [];
  const usedIds = new Set<string>();
  let turn: OpenTurn | undefined;

  const where = (location: RecordLocation | undefined) => location ?? {};

  const closeTurn = () => {
    if (turn === undefined) return;
    for (const call of turn.pending.values()) {
      const placeholder: ToolMessage = {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: call.toolCallId,
            toolName: call.toolName,
            output: { type: 'error-text', value: repairPlaceholders.missingToolResult },
          },
        ],
        metadata: { origin, synthetic: true },
      };
      messages.splice(turn.insertAt, 0, placeholder);
      turn.insertAt++;
      context.warn(
        `tool call ${call.toolCallId} (${call.toolName}) has no result in the log; added the error result "${repairPlaceholders.missingToolResult}"`,
        where(turn.location),
      );
    }
    turn = undefined;
  };

  const uniqueId = (id: string, location: RecordLocation | undefined): string => {
    if (!usedIds.has(id)) return id;
    let suffix = 2;
    while (usedIds.has(`${id}-${suffix}`)) suffix++;
    const renamed = `${id}-${suffix}`;
    context.warn(`tool call id ${id} was already used; renamed ${renamed}`, where(location));
    return renamed;
  };

  return {
    add(message, location) {
      if (message.role !== 'assistant') {
        messages.push(message);
        return;
      }
      closeTurn();
      if (typeof message.content === 'string') {
        messages.push(message);
        return;
      }
      const pending = new Map<string, ToolCallPart>();
      const content = message.content.map((part) => {
        if (part.type !== 'tool-call') return part;
        const toolCallId = uniqueId(part.toolCallId, location);
        usedIds.add(toolCallId);
        const call = toolCallId === part.toolCallId ? part : { ...part, toolCallId };
        // A second call with the same id in one message can only be answered by position: the first result wins.
        if (!pending.has(part.toolCallId)) pending.set(part.toolCallId, call);
        return call;
      });
      messages.push({ ...message, content });
      if (pending.size > 0) turn = { pending, insertAt: messages.length, location };
    },

    addResult(part, resultOptions = {}) {
      const { metadata, location } = resultOptions;
      const call = turn?.pending.get(part.toolCallId);
      if (turn === undefined || call === undefined) {
        const text = toolOutputText(part.output);
        context.warn(
          `tool result for ${part.toolCallId} answers no open tool call; kept as a user message`,
          where(location),
        );
        messages.push({
          role: 'user',
          content: text,
          metadata: {
            origin,
            ...metadata,
            orphanedToolCallId: part.toolCallId,
            toolName: part.toolName,
          },
        });
        return false;
      }
      turn.pending.delete(part.toolCallId);
      const toolName =
        part.toolName === unknownToolName || part.toolName === '' ? call.toolName : part.toolName;
      const result: ToolResultPart = { ...part, toolCallId: call.toolCallId, toolName };
      const message: ToolMessage = { role: 'tool', content: [result] };
      if (metadata !== undefined) message.metadata = metadata;
      if (turn.insertAt !== messages.length) {
        context.warn(
          `tool result for ${part.toolCallId} came after other messages; moved up to its tool call`,
          where(location),
        );
      }
      messages.splice(turn.insertAt, 0, message);
      turn.insertAt++;
      if (turn.pending.size === 0) turn = undefined;
      return true;
    },

    pendingCall(toolCallId) {
      return turn?.pending.get(toolCallId);
    },

    finish() {
      closeTurn();
      return messages;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Reading the JSON of agent logs

/** Parses a log that is one JSON document; a file that is not JSON at all is a `TranscriptImportError`. */
export function readJsonDocument(text: string, context: ImportContext, what: string): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return parseJsonText(body, context.file === undefined ? {} : { file: context.file });
  } catch (error) {
    if (!(error instanceof InvalidJsonError)) throw error;
    throw new TranscriptImportError(
      `${what} must be one JSON document: ${error.message}`,
      {
        ...(context.file === undefined ? {} : { file: context.file }),
        ...(error.line === undefined ? {} : { line: error.line }),
        ...(error.column === undefined ? {} : { column: error.column }),
      },
      { cause: error },
    );
  }
}

/** The file can be read but is not the expected shape at all. */
export function notTheFormat(context: ImportContext, reason: string): TranscriptImportError {
  return new TranscriptImportError(reason, context.file === undefined ? {} : { file: context.file });
}

export interface ContentText {
  text: string;
  /** Parts of a part list that carry no text (images, ...): the caller decides whether that loses anything. */
  otherParts: number;
}

/**
 * The text of OpenAI-style message content: a string as it is, the text parts of a part list (Anthropic-style
 * `cache_control` included) joined by newlines, `null` as empty. Undefined for anything else.
 */
export function contentText(content: unknown): ContentText | undefined {
  if (typeof content === 'string') return { text: content, otherParts: 0 };
  if (content === null) return { text: '', otherParts: 0 };
  if (!Array.isArray(content)) return undefined;
  const texts: string[] = [];
  let otherParts = 0;
  for (const part of content) {
    if (isRecord(part) && typeof part.text === 'string' && (part.type === 'text' || part.type === undefined))
      texts.push(part.text);
    else otherParts++;
  }
  return { text: texts.join('\n'), otherParts };
}

/** ISO 8601 of Unix seconds (what Python's `time.time()` and OpenAI's `created` give), when plausible. */
export function isoFromUnixSeconds(value: unknown): string | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > 1e11) return undefined;
  return new Date(Math.round(value * 1000)).toISOString();
}

const openAIMessageFields = [
  'role',
  'content',
  'name',
  'tool_calls',
  'tool_call_id',
  'function_call',
  'reasoning_content',
  'refusal',
] as const;

/**
 * One OpenAI-style message of a log, converted with `fromOpenAI`. Only the OpenAI fields are passed on, so the
 * log's own annotations (`extra`, `agent`, classification slots, ...) do not end up as provider data.
 * @throws InvalidMessageError when the message is not valid OpenAI input
 */
export function fromOpenAIMessage(raw: Record<string, unknown>, index: number): Message {
  const picked: Record<string, unknown> = {};
  for (const field of openAIMessageFields) {
    if (raw[field] !== undefined) picked[field] = raw[field];
  }
  try {
    const [message] = fromOpenAI([picked]).messages;
    return message!;
  } catch (error) {
    if (error instanceof InvalidMessageError) {
      throw new InvalidMessageError(error.reason, {
        index,
        ...(error.path === undefined ? {} : { path: error.path }),
      });
    }
    throw error;
  }
}
