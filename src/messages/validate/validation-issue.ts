import { type Provider, providers } from '../provider.js';
import type { Message } from '../types.js';

/** What a conversation must be valid for: one provider, or `any` for every provider at once (all rules). */
export type ValidationTarget = Provider | 'any';
export const validationTargets = ['any', ...providers] as const satisfies readonly ValidationTarget[];

export interface ValidateMessagesOptions {
  /**
   * The provider whose rules apply. `any` applies the rules of every provider, so the result can be sent
   * anywhere.
   * @default 'any'
   */
  provider?: ValidationTarget;
  /**
   * Lets the tool calls of the last assistant message go without results while nothing but tool messages
   * follows it: an agent loop in the middle of a turn, with its tools still running.
   * @default false
   */
  allowPendingToolCalls?: boolean;
}

export type RepairMessagesOptions = ValidateMessagesOptions;

export const validationIssueTypes = [
  /** Empty string, no parts, or only empty text / reasoning parts. */
  'empty-message',
  /** A system message after the conversation has started (Anthropic takes one system prompt up front). */
  'misplaced-system-message',
  /** A tool message before any assistant message: nothing it could answer. */
  'leading-tool-message',
  /** A tool result that answers no tool call of the assistant message it belongs to. */
  'orphaned-tool-result',
  /** A second result for the same tool call. */
  'duplicate-tool-result',
  /** A tool message separated from the assistant message it answers by a user (or system) message. */
  'misplaced-tool-message',
  /** A tool call without a result. */
  'missing-tool-result',
  /** A tool call id used by an earlier tool call of the conversation. */
  'duplicate-tool-call-id',
  /** The conversation (after system messages) does not start with a user message. */
  'first-message-not-user',
  /** Two user or two assistant messages in a row. */
  'consecutive-same-role',
] as const;
export type ValidationIssueType = (typeof validationIssueTypes)[number];

export interface ValidationIssue {
  type: ValidationIssueType;
  /** Index of the message in the validated array. */
  index: number;
  /** Path of the offending part inside that message, e.g. `content[2]`. */
  path?: string;
  toolCallId?: string;
  /** What is wrong, for people. */
  message: string;
}

export interface ValidationResult {
  valid: boolean;
  /** Ordered by message index. */
  issues: ValidationIssue[];
}

export const repairTypes = [
  /** Dropped a message with no content, or one left without content by another repair. */
  'drop-empty-message',
  /** Moved a system message to the start, after the ones already there. */
  'move-system-message',
  /** Dropped a tool message that came before any assistant message. */
  'drop-leading-tool-message',
  /** Dropped a tool result that answers no tool call. */
  'drop-orphaned-tool-result',
  /** Dropped a second result for the same tool call. */
  'drop-duplicate-tool-result',
  /** Moved a tool message up to directly after the assistant message whose calls it answers. */
  'move-tool-message',
  /** Added an explicit `[no result recorded]` error result for a tool call without one. */
  'add-missing-tool-result',
  /** Gave a tool call with an already used id a fresh id, and its results with it. */
  'rename-tool-call',
  /** Put a `[conversation continues]` user message before a conversation that started with the assistant. */
  'insert-user-message',
  /** Merged a message into the previous one of the same role. */
  'merge-messages',
] as const;
export type RepairType = (typeof repairTypes)[number];

/** One change `repairMessages` made. Indexes, message ids and tool call ids refer to the input. */
export interface Repair {
  type: RepairType;
  /** Index in the input of the message the repair is about. */
  index: number;
  /** That message's id, when it had one. */
  id?: string;
  toolCallId?: string;
  /** What was done and why, for people. */
  description: string;
}

export interface RepairResult {
  messages: Message[];
  /** Ordered by input index. */
  repairs: Repair[];
}
