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

export interface PrepareCompressionPointsOptions {
  conversation: Conversation;
  /** Ratios of the session's content, each in (0, 1]. @default defaultCompressionPoints */
  points?: readonly number[];
  /** Per point: a token count, or a share of the original prefix's tokens. */
  budget: EvalBudget;
  /** Probes to restrict per point; none by default. */
  probes?: readonly Probe[];
  /** Counts the prefixes here, and the compressed contexts later. @default createTokenAccountant() */
  accountant?: TokenAccountant;
}

/** One compression point of a session: the same for every compressor. */
export interface PreparedPoint {
  point: number;
  /** The share of the session's content the prefix actually holds (it is cut between messages). */
  reached: number;
  /** Messages of the original session in the prefix. */
  messageCount: number;
  /** Tokens of the original (uncompressed) prefix. */
  tokensBefore: number;
  budgetTokens: number;
  /**
   * The probes answerable at this point: at least `minFacts` of their facts are in the original prefix (so
   * their `first_offset` lies before the point). Probes that need a later fact are left out. At the end of
   * the session (point 1) every probe is kept, so a fact the session lacks shows as lost, not as nothing.
   */
  probes: readonly Probe[];
}

/** A session cut at its compression points, ready for any number of compressors (`compressPreparedPoints`). */
export interface PreparedCompressionPoints {
  /** The conversation as given: its tools and model frame every compressor call and token count. */
  conversation: Conversation;
  /** The conversation's messages, checked. */
  messages: readonly Message[];
  accountant: TokenAccountant;
  /** Ascending. */
  points: readonly PreparedPoint[];
}

export interface CompressPreparedPointsOptions {
  prepared: PreparedCompressionPoints;
  compressor: Compressor;
  /** Read for `timeMs`. @default performance.now */
  clock?: () => number;
}

export interface CompressAtPointsOptions
  extends PrepareCompressionPointsOptions,
    Omit<CompressPreparedPointsOptions, 'prepared'> {}

export interface CompressionPointResult extends Omit<PreparedPoint, 'probes'> {
  /** Tokens of what was compressed: the previous point's output plus the messages since. */
  tokensIn: number;
  /** The compressed context at this point. */
  messages: Message[];
  tokensAfter: number;
  /** See `PreparedPoint.probes`. */
  probes: Probe[];
  /** Wall time of this point's `compress`. */
  timeMs: number;
}

function budgetFor(budget: EvalBudget, tokensBefore: number): number {
  return 'tokens' in budget ? budget.tokens : Math.floor(tokensBefore * budget.ratio);
}

/** Tokens of `messages` sent in the frame of `conversation` (its tools and model). */
function countIn(
  conversation: Conversation,
  messages: readonly Message[],
  accountant: TokenAccountant,
): number {
  return accountant.countTotal({ ...conversation, messages: [...messages] });
}

/**
 * The part of `compressAtPoints` that does not depend on the compressor, done once per session: the messages
 * checked, each point's prefix, its tokens and budget, and the probes answerable there.
 *
 * @throws InvalidMessageError naming the message index and field when the conversation is malformed
 * @throws InvalidArgumentError for bad points
 */
export function prepareCompressionPoints(
  options: PrepareCompressionPointsOptions,
): PreparedCompressionPoints {
  const {
    conversation,
    points = defaultCompressionPoints,
    budget,
    probes = [],
    accountant = createTokenAccountant(),
  } = options;
  const { messages } = parseConversation(conversation);
  const sorted = checkCompressionPoints(points);
  const shares = contentShares(messages);
  const prepared = sorted.map((point): PreparedPoint => {
    const messageCount = prefixLength(messages, point, shares);
    const prefix = messages.slice(0, messageCount);
    const tokensBefore = countIn(conversation, prefix, accountant);
    let answerable: readonly Probe[] = probes;
    if (messageCount < messages.length) {
      const score = scoreProbesInText(probes, renderForProbes(prefix));
      answerable = probes.filter((_, index) => score.probes[index]!.passed);
    }
    return {
      point,
      reached: messageCount === 0 ? 0 : shares[messageCount - 1]!,
      messageCount,
      tokensBefore,
      budgetTokens: budgetFor(budget, tokensBefore),
      probes: answerable,
    };
  });
  return { conversation, messages, accountant, points: prepared };
}

/**
 * The part of `compressAtPoints` that runs the compressor, over a session prepared once with
 * `prepareCompressionPoints`.
 */
export function compressPreparedPoints(options: CompressPreparedPointsOptions): CompressionPointResult[] {
  const { prepared, compressor, clock = () => performance.now() } = options;
  const { conversation, messages, accountant } = prepared;
  const results: CompressionPointResult[] = [];
  let previous: Message[] = [];
  let previousCount = 0;
  for (const { point, reached, messageCount, tokensBefore, budgetTokens, probes } of prepared.points) {
    const input = [...previous, ...messages.slice(previousCount, messageCount)];
    const started = clock();
    const output = compressor.compress({ ...conversation, messages: input }, budgetTokens, { accountant });
    const timeMs = clock() - started;
    results.push({
      point,
      reached,
      messageCount,
      tokensBefore,
      tokensIn: countIn(conversation, input, accountant),
      budgetTokens,
      messages: output,
      tokensAfter: countIn(conversation, output, accountant),
      probes: [...probes],
      timeMs,
    });
    previous = output;
    previousCount = messageCount;
  }
  return results;
}

/**
 * Evaluates re-compaction the way an agent lives it: the prefix up to the first point is compressed; for each
 * later point the previous point's compressed output plus the messages that came since is compressed again.
 * Whatever a summary keeps must therefore survive every later round, as it must in a real session. To run
 * several compressors on one session, prepare it once (`prepareCompressionPoints`) and call
 * `compressPreparedPoints` per compressor instead.
 *
 * @throws InvalidMessageError naming the message index and field when the conversation is malformed
 * @throws InvalidArgumentError for bad points
 */
export function compressAtPoints(options: CompressAtPointsOptions): CompressionPointResult[] {
  const { compressor, clock, ...preparation } = options;
  return compressPreparedPoints({
    prepared: prepareCompressionPoints(preparation),
    compressor,
    ...(clock === undefined ? {} : { clock }),
  });
}
