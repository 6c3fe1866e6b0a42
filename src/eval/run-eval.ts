import { InvalidArgumentError } from '../errors/index.js';
import type { Conversation } from '../messages/types.js';
import { createTokenAccountant, type TokenAccountant } from '../tokens/index.js';
import type { Compressor } from './compressors.js';
import {
  type OffsetBucket,
  offsetBuckets,
  type ProbeResult,
  type ProbeTally,
  scoreProbes,
  sumTallies,
} from './fact-score.js';
import { type Probe, type ProbeType, probeTypes } from './probes.js';

/** A budget in tokens, or as a share of each session's own token count (0.1 = 10%). */
export type EvalBudget = { tokens: number } | { ratio: number };

export interface EvalSession {
  name: string;
  conversation: Conversation;
  probes: readonly Probe[];
}

export interface EvaluateSessionsOptions {
  sessions: readonly EvalSession[];
  compressors: readonly Compressor[];
  budget: EvalBudget;
  /** Counts tokens before and after, and is handed to the compressors. @default createTokenAccountant() */
  accountant?: TokenAccountant;
  /** Read for `timeMs`; injectable so reports can be made byte-identical in tests. @default performance.now */
  clock?: () => number;
}

/** One compressor on one session. */
export interface SessionResult {
  session: string;
  compressor: string;
  tokensBefore: number;
  tokensAfter: number;
  budgetTokens: number;
  /** `tokensAfter / tokensBefore`. */
  ratio: number;
  withinBudget: boolean;
  messagesBefore: number;
  messagesAfter: number;
  total: ProbeTally;
  byType: Record<ProbeType, ProbeTally>;
  byOffset: Record<OffsetBucket, ProbeTally>;
  probes: ProbeResult[];
  /** Wall time of `compress`: the only field that is not deterministic. */
  timeMs: number;
}

/** One compressor over all sessions: probe tallies summed, tokens summed. */
export interface CompressorTotal {
  compressor: string;
  sessions: number;
  tokensBefore: number;
  tokensAfter: number;
  ratio: number;
  /** Sessions whose output fit the budget. */
  withinBudget: number;
  total: ProbeTally;
  byType: Record<ProbeType, ProbeTally>;
  byOffset: Record<OffsetBucket, ProbeTally>;
  timeMs: number;
}

export interface EvalReport {
  budget: EvalBudget;
  compressors: string[];
  sessions: string[];
  results: SessionResult[];
  totals: CompressorTotal[];
}

function budgetFor(budget: EvalBudget, tokensBefore: number): number {
  if ('tokens' in budget) return budget.tokens;
  return Math.floor(tokensBefore * budget.ratio);
}

function checkBudget(budget: EvalBudget): void {
  if ('tokens' in budget) {
    if (!Number.isInteger(budget.tokens) || budget.tokens <= 0)
      throw new InvalidArgumentError('budget.tokens', `expected a positive integer, got ${budget.tokens}`);
  } else if (!(budget.ratio > 0 && budget.ratio <= 1)) {
    throw new InvalidArgumentError('budget.ratio', `expected a number in (0, 1], got ${budget.ratio}`);
  }
}

function sumBy<K extends string>(
  keys: readonly K[],
  records: ReadonlyArray<Record<K, ProbeTally>>,
): Record<K, ProbeTally> {
  return Object.fromEntries(
    keys.map((key) => [key, sumTallies(records.map((record) => record[key]))]),
  ) as Record<K, ProbeTally>;
}

/**
 * Runs every compressor on every session at the same budget and scores the probes' facts in each output.
 * Everything but `timeMs` is deterministic for the same input.
 *
 * @throws InvalidArgumentError when the budget or a compressor list is unusable
 */
export function evaluateSessions(options: EvaluateSessionsOptions): EvalReport {
  const {
    sessions,
    compressors,
    budget,
    accountant = createTokenAccountant(),
    clock = () => performance.now(),
  } = options;
  checkBudget(budget);
  if (compressors.length === 0)
    throw new InvalidArgumentError('compressors', 'expected at least one compressor');
  const names = new Set<string>();
  for (const compressor of compressors) {
    if (names.has(compressor.name))
      throw new InvalidArgumentError('compressors', `two compressors are named "${compressor.name}"`);
    names.add(compressor.name);
  }

  const results: SessionResult[] = [];
  for (const session of sessions) {
    const tokensBefore = accountant.countConversation(session.conversation).totalTokens;
    const budgetTokens = budgetFor(budget, tokensBefore);
    for (const compressor of compressors) {
      const started = clock();
      const messages = compressor.compress(session.conversation, budgetTokens, { accountant });
      const timeMs = clock() - started;
      const tokensAfter = accountant.countConversation({ ...session.conversation, messages }).totalTokens;
      const score = scoreProbes(session.probes, messages);
      results.push({
        session: session.name,
        compressor: compressor.name,
        tokensBefore,
        tokensAfter,
        budgetTokens,
        ratio: tokensBefore === 0 ? 0 : tokensAfter / tokensBefore,
        withinBudget: tokensAfter <= budgetTokens,
        messagesBefore: session.conversation.messages.length,
        messagesAfter: messages.length,
        total: score.total,
        byType: score.byType,
        byOffset: score.byOffset,
        probes: score.probes,
        timeMs,
      });
    }
  }

  const totals = compressors.map((compressor): CompressorTotal => {
    const own = results.filter((result) => result.compressor === compressor.name);
    const tokensBefore = own.reduce((sum, result) => sum + result.tokensBefore, 0);
    const tokensAfter = own.reduce((sum, result) => sum + result.tokensAfter, 0);
    return {
      compressor: compressor.name,
      sessions: own.length,
      tokensBefore,
      tokensAfter,
      ratio: tokensBefore === 0 ? 0 : tokensAfter / tokensBefore,
      withinBudget: own.filter((result) => result.withinBudget).length,
      total: sumTallies(own.map((result) => result.total)),
      byType: sumBy(
        probeTypes,
        own.map((result) => result.byType),
      ),
      byOffset: sumBy(
        offsetBuckets,
        own.map((result) => result.byOffset),
      ),
      timeMs: own.reduce((sum, result) => sum + result.timeMs, 0),
    };
  });

  return {
    budget,
    compressors: compressors.map((compressor) => compressor.name),
    sessions: sessions.map((session) => session.name),
    results,
    totals,
  };
}
