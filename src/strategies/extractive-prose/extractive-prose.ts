import { InvalidArgumentError } from '../../errors/index.js';
import type { IdentifiedMessage, TextPart } from '../../messages/types.js';
import type { Strategy, StrategyAction, StrategyContext, StrategyResult } from '../strategy.js';
import { checkShare, recentTurnsStart } from '../strategy-support.js';
import { compressProse } from './compress-prose.js';

export interface ExtractiveProseOptions {
  /** Text parts shorter than this many tokens are left alone. @default 300 */
  minTokens?: number;
  /** Share of each text part's prose tokens to keep (see `compressProse`). @default 0.5 */
  keepRatio?: number;
  /** The last N turns (a turn starts at a user message) are never touched. @default 2 */
  keepRecentTurns?: number;
}

const strategyName = 'extractive-prose';

interface Candidate {
  messageIndex: number;
  /** Index of the text part, or -1 for string content. */
  partIndex: number;
  tokens: number;
}

/**
 * Extractive sentence selection in long user and assistant prose (text parts only: never tool calls, tool
 * outputs, reasoning, preserved messages or the most recent turns). Candidates are taken oldest message
 * first and, within a message, longest part first; the strategy stops as soon as the conversation fits the
 * budget. Each shortened part's original text is archived (kind `text`); the handle goes in the action and
 * in a note at the end of the shortened text. Applying it to its own output changes nothing, because
 * `compressProse` leaves already-compressed text as it is.
 */
export function extractiveProse(options: ExtractiveProseOptions = {}): Strategy {
  const { minTokens = 300, keepRatio = 0.5, keepRecentTurns = 2 } = options;
  if (!(Number.isInteger(minTokens) && minTokens >= 0))
    throw new InvalidArgumentError('minTokens', `expected a non-negative integer, got ${minTokens}`);
  checkShare('keepRatio', keepRatio);
  if (!(Number.isInteger(keepRecentTurns) && keepRecentTurns >= 0))
    throw new InvalidArgumentError(
      'keepRecentTurns',
      `expected a non-negative integer, got ${keepRecentTurns}`,
    );

  return {
    name: strategyName,
    apply(input: readonly IdentifiedMessage[], context: StrategyContext): StrategyResult {
      const messages = [...input];
      const actions: StrategyAction[] = [];
      const protectedFrom = recentTurnsStart(messages, keepRecentTurns);

      const candidates: Candidate[] = [];
      for (let messageIndex = 0; messageIndex < protectedFrom; messageIndex++) {
        const message = messages[messageIndex]!;
        if (message.role !== 'user' && message.role !== 'assistant') continue;
        if (context.preservedIds.has(message.id) || message.metadata?.pinned === true) continue;
        if (typeof message.content === 'string') {
          const tokens = context.accountant.countText(message.content);
          if (tokens >= minTokens) candidates.push({ messageIndex, partIndex: -1, tokens });
          continue;
        }
        message.content.forEach((part, partIndex) => {
          if (part.type !== 'text') return;
          const tokens = context.accountant.countText(part.text);
          if (tokens >= minTokens) candidates.push({ messageIndex, partIndex, tokens });
        });
      }
      candidates.sort(
        (left, right) =>
          left.messageIndex - right.messageIndex ||
          right.tokens - left.tokens ||
          left.partIndex - right.partIndex,
      );

      let total = context.accountant.countTotal(messages);
      for (const candidate of candidates) {
        if (total <= context.budgetTokens) break;
        const message = messages[candidate.messageIndex]!;
        const original =
          candidate.partIndex < 0
            ? (message.content as string)
            : ((message.content as readonly TextPart[])[candidate.partIndex] as TextPart).text;
        const compressed = compressProse(original, { keepRatio });
        if (compressed === original) continue;
        const handle = context.archive.put({
          kind: 'text',
          content: original,
          messageIds: [message.id],
          strategy: strategyName,
        });
        const text = `${compressed}\n\n[precis: sentences marked […] were elided from this ${candidate.tokens}-token text; full text: ${handle}]`;
        const replacement = replaceText(message, candidate.partIndex, text);
        const before = context.accountant.countMessage(message);
        const after = context.accountant.countMessage(replacement);
        if (after >= before) continue;
        messages[candidate.messageIndex] = replacement;
        total += after - before;
        actions.push({
          type: 'compress-prose',
          strategy: strategyName,
          messageIds: [message.id],
          handle,
          tokensBefore: before,
          tokensAfter: after,
          description: `Kept the key sentences of a ${candidate.tokens}-token ${message.role} text; original in ${handle}`,
        });
      }
      return { messages, actions, warnings: [] };
    },
  };
}

function replaceText(message: IdentifiedMessage, partIndex: number, text: string): IdentifiedMessage {
  if (partIndex < 0) return { ...message, content: text } as IdentifiedMessage;
  const parts = [...(message.content as readonly TextPart[])];
  parts[partIndex] = { ...parts[partIndex]!, text };
  return { ...message, content: parts } as IdentifiedMessage;
}
