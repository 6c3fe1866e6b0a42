import { InvalidArgumentError } from '../errors/index.js';
import { parseConversation } from '../messages/parse.js';
import type { Conversation, Message } from '../messages/types.js';
import { createTokenAccountant, type TokenAccountant } from '../tokens/index.js';
import type { Compressor } from './compressors.js';
import { collapseWhitespace, renderForProbes, scoreProbesInText } from './fact-score.js';
import type { Probe } from './probes.js';
import type { EvalBudget } from './run-eval.js';

/** Where a session is evaluated by default: a quarter in, half way, three quarters, and the end. */
export const defaultCompressionPoints: readonly number[] = [0.25, 0.5, 0.75, 1];

/**
 * The points sorted, each once.
 *
 * @throws InvalidArgumentError naming `points` when the list is empty or a point is not in (0, 1]
 */
export function checkCompressionPoints(points: readonly number[]): number[] {
  if (!Array.isArray(points) || points.length === 0)
    throw new InvalidArgumentError('points', 'expected at least one compression point');
  for (const point of points)
    if (typeof point !== 'number' || !(point > 0 && point <= 1))
      throw new InvalidArgumentError('points', `expected numbers in (0, 1], got ${JSON.stringify(point)}`);
  return [...new Set(points)].sort((a, b) => a - b);
}

/**
 * For each message, the share of the session's model-visible content (whitespace collapsed, as the probe
 * format measures `first_offset`) that ends with it.
 */
export function contentShares(messages: readonly Message[]): number[] {
  const ends: number[] = [];
  let end = 0;
  messages.forEach((message, index) => {
    // One space stands for the separator between messages once whitespace is collapsed.
    end += collapseWhitespace(renderForProbes([message])).length + (index === 0 ? 0 : 1);
    ends.push(end);
  });
  return ends.map((value) => (end === 0 ? 1 : value / end));
}

/**
 * How many messages the prefix at `point` holds: every message whose content ends by the point, at least one,
 * and never a tool call without the tool messages answering it.
 */
export function prefixLength(
  messages: readonly Message[],
  point: number,
  shares = contentShares(messages),
): number {
  if (point >= 1) return messages.length;
  let count = 0;
  // A tiny tolerance so 0.5 of a session split exactly in half includes the first half.
  while (count < messages.length && shares[count]! <= point + 1e-12) count++;
  count = Math.max(count, Math.min(1, messages.length));
  while (count < messages.length && messages[count]!.role === 'tool') count++;
  return count;
}

export interface CompressAtPointsOptions {
  conversation: Conversation;
  compressor: Compressor;
  /** Ratios of the session's content, each in (0, 1]. @default defaultCompressionPoints */
  points?: readonly number[];
  /** Per point: a token count, or a share of the original prefix's tokens. */
  budget: EvalBudget;
  /** Probes to restrict per point; none by default. */
  probes?: readonly Probe[];
  /** @default createTokenAccountant() */
  accountant?: TokenAccountant;
  /** Read for `timeMs`. @default performance.now */
  clock?: () => number;
}

export interface CompressionPointResult {
  point: number;
  /** The share of the session's content the prefix actually holds (it is cut between messages). */
  reached: number;
  /** Messages of the original session in the prefix. */
  messageCount: number;
  /** Tokens of the original (uncompressed) prefix. */
  tokensBefore: number;
  /** Tokens of what was compressed: the previous point's output plus the messages since. */
  tokensIn: number;
  budgetTokens: number;
  /** The compressed context at this point. */
  messages: Message[];
  tokensAfter: number;
  /**
   * The probes answerable at this point: at least `minFacts` of their facts are in the original prefix (so
   * their `first_offset` lies before the point). Probes that need a later fact are left out. At the end of
   * the session (point 1) every probe is kept, so a fact the session lacks shows as lost, not as nothing.
   */
  probes: Probe[];
  /** Wall time of this point's `compress`. */
  timeMs: number;
}

function budgetFor(budget: EvalBudget, tokensBefore: number): number {
  return 'tokens' in budget ? budget.tokens : Math.floor(tokensBefore * budget.ratio);
}

/**
 * Evaluates re-compaction the way an agent lives it: the prefix up to the first point is compressed; for each
 * later point the previous point's compressed output plus the messages that came since is compressed again.
 * Whatever a summary keeps must therefore survive every later round, as it must in a real session.
 *
 * @throws InvalidMessageError naming the message index and field when the conversation is malformed
 * @throws InvalidArgumentError for bad points
 */
export function compressAtPoints(options: CompressAtPointsOptions): CompressionPointResult[] {
  const {
    conversation,
    compressor,
    points = defaultCompressionPoints,
    budget,
    probes = [],
    accountant = createTokenAccountant(),
    clock = () => performance.now(),
  } = options;
  const { messages } = parseConversation(conversation);
  const sorted = checkCompressionPoints(points);
  const shares = contentShares(messages);
  const count = (list: readonly Message[]) =>
    accountant.countConversation({ ...conversation, messages: [...list] }).totalTokens;

  const results: CompressionPointResult[] = [];
  let previous: Message[] = [];
  let previousCount = 0;
  for (const point of sorted) {
    const messageCount = prefixLength(messages, point, shares);
    const prefix = messages.slice(0, messageCount);
    const input = [...previous, ...messages.slice(previousCount, messageCount)];
    const tokensBefore = count(prefix);
    const budgetTokens = budgetFor(budget, tokensBefore);
    const started = clock();
    const output = compressor.compress({ ...conversation, messages: input }, budgetTokens, { accountant });
    const timeMs = clock() - started;
    const answerable = scoreProbesInText(probes, renderForProbes(prefix)).probes;
    results.push({
      point,
      reached: messageCount === 0 ? 0 : shares[messageCount - 1]!,
      messageCount,
      tokensBefore,
      tokensIn: count(input),
      budgetTokens,
      messages: output,
      tokensAfter: count(output),
      probes:
        messageCount === messages.length
          ? [...probes]
          : probes.filter((_, index) => answerable[index]!.passed),
      timeMs,
    });
    previous = output;
    previousCount = messageCount;
  }
  return results;
}
