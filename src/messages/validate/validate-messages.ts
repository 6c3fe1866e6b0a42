import type { Message } from '../types.js';
import { repairWithFindings } from './repair-messages.js';
import type { ValidateMessagesOptions, ValidationIssue, ValidationResult } from './validation-issue.js';

/**
 * Checks a conversation against the rules of `provider` (all providers by default):
 * - every tool result answers a tool call of the assistant message right before its tool messages, once;
 *   results of parallel calls may come in any order and spread over several tool messages;
 * - every tool call has a result (in a tool message, or in the assistant message itself for
 *   provider-executed tools), except pending calls (see `allowPendingToolCalls`);
 * - no tool message before the first assistant message, and no user or system message between an
 *   assistant message and the tool messages answering it;
 * - tool call ids are unique in the conversation;
 * - no empty messages (an assistant message with only tool calls is not empty, nor is reasoning that
 *   carries a provider signature or redacted data);
 * - Anthropic: system messages only at the start, a user message first, and no two user or two assistant
 *   messages in a row (tool messages count as the user side).
 *
 * Empty messages are reported and then set aside, as are system messages Anthropic would move, so the
 * other issues describe the conversation as `repairMessages` sees it: `valid` is true exactly when
 * `repairMessages` with the same options would change nothing. Linear in the number of parts.
 *
 * @throws InvalidMessageError when `messages` is not an array of messages
 * @throws InvalidArgumentError when an option is not one of its allowed values
 */
export function validateMessages(
  messages: readonly Message[],
  options: ValidateMessagesOptions = {},
): ValidationResult {
  const issues: ValidationIssue[] = [];
  for (const { issue } of repairWithFindings(messages, options).findings) {
    if (issue !== undefined) issues.push(issue);
  }
  return { valid: issues.length === 0, issues };
}
