import { InvalidArgumentError } from '../errors/index.js';
import type { Conversation } from '../messages/types.js';
import { createTokenAccountant, type TokenAccountant } from '../tokens/index.js';
import {
  checkCompressionPoints,
  compressPreparedPoints,
  prepareCompressionPoints,
} from './compression-points.js';
import type { Compressor } from './compressors.js';
import { type EvalCache, evalCacheKey } from './eval-cache.js';
import {
  type OffsetBucket,
  offsetBuckets,
  type ProbeResult,
  type ProbeTally,
  scoreProbes,
  sumTallies,
} from './fact-score.js';
import {
  type Judge,
  type JudgeSummary,
  judgementsOf,
  type ProbeJudgement,
  renderContext,
  summarizeJudgements,
} from './judge.js';
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
  /**
   * Compression points, shares of each session's content in (0, 1]: the prefix up to the first is compressed,
   * then each point re-compresses the previous output plus the messages since (see `compressAtPoints`). The
   * top-level numbers of a result are those of the last point. @default [1]
   */
  points?: readonly number[];
}

export interface RunEvalOptions extends EvaluateSessionsOptions {
  /** Answers and scores every probe at every point with an LLM; fact checks only without one. */
  judge?: Judge;
  /** Judge calls (answer + score of one probe) in flight at once. @default 4 */
  concurrency?: number;
  /** Scores already made are read from here instead of asking the judge again; new ones are added. */
  cache?: EvalCache;
  /** Called after each compression and each judged probe. */
  onProgress?: (progress: EvalProgress) => void;
  abortSignal?: AbortSignal;
}

export interface EvalProgress {
  phase: 'compress' | 'judge';
  done: number;
  total: number;
  /** Judged probes read from the cache so far. */
  cached: number;
}

/** The judge's verdict on one probe, or why there is none (the calls failed: network, provider errors). */
export type ProbeJudgeResult = ProbeJudgement | { status: 'failed'; error: string };

/** A probe's fact check, with the judge's verdict when a judge ran. */
export interface JudgedProbeResult extends ProbeResult {
  judge?: ProbeJudgeResult;
}

/** What one compression of one session measured: sizes, the budget, and the probes' fate. */
interface CompressionMeasures {
  /** Messages of the original (prefix). */
  messagesBefore: number;
  messagesAfter: number;
  /** Tokens of the original (prefix). */
  tokensBefore: number;
  tokensAfter: number;
  budgetTokens: number;
  withinBudget: boolean;
  total: ProbeTally;
  byType: Record<ProbeType, ProbeTally>;
  byOffset: Record<OffsetBucket, ProbeTally>;
  probes: JudgedProbeResult[];
  /** The judge's scores, when a judge ran. */
  judge?: JudgeSummary;
  timeMs: number;
}

/** One compressor on one session at one compression point; its probes are those answerable at this point only. */
export interface PointResult extends CompressionMeasures {
  point: number;
  /** Share of the session's content the prefix really holds (it is cut between messages). */
  reached: number;
  /** Tokens of what this round compressed: the previous output plus the messages since. */
  tokensIn: number;
}

/**
 * One compressor on one session: the last point's measures, `timeMs` the wall time of `compress` over all points
 * (the only field that is not deterministic).
 */
export interface SessionResult extends CompressionMeasures {
  session: string;
  compressor: string;
  /** `tokensAfter / tokensBefore`. */
  ratio: number;
  /** Every compression point, in order. */
  points: PointResult[];
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
  /** The judge's scores at the last point over all sessions (means over scored probes), when a judge ran. */
  judge?: JudgeSummary;
}

export interface EvalReport {
  budget: EvalBudget;
  /** The compression points, ascending. */
  points: number[];
  compressors: string[];
  sessions: string[];
  results: SessionResult[];
  totals: CompressorTotal[];
  /** `Judge.id` of the judge that scored the answers, when one ran. */
  judge?: string;
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

function checkCompressors(compressors: readonly Compressor[]): void {
  if (compressors.length === 0)
    throw new InvalidArgumentError('compressors', 'expected at least one compressor');
  const names = new Set<string>();
  for (const compressor of compressors) {
    if (names.has(compressor.name))
      throw new InvalidArgumentError('compressors', `two compressors are named "${compressor.name}"`);
    names.add(compressor.name);
  }
}

/** Compressed contexts kept beside a result until the judge has read them; not part of the report. */
interface Compressed {
  session: EvalSession;
  compressor: string;
  result: SessionResult;
  contexts: string[];
}

function compressEverything(
  options: EvaluateSessionsOptions,
  onCompressed: (done: number, total: number) => void = () => {},
): { points: number[]; compressed: Compressed[] } {
  const {
    sessions,
    compressors,
    budget,
    accountant = createTokenAccountant(),
    clock = () => performance.now(),
    points = [1],
  } = options;
  checkBudget(budget);
  checkCompressors(compressors);
  const sorted = checkCompressionPoints(points);
  const compressed: Compressed[] = [];
  const total = sessions.length * compressors.length;
  for (const session of sessions) {
    // Parsing, prefixes, their token counts and answerable probes: the same for every compressor.
    const prepared = prepareCompressionPoints({
      conversation: session.conversation,
      points: sorted,
      budget,
      probes: session.probes,
      accountant,
    });
    for (const compressor of compressors) {
      const rounds = compressPreparedPoints({ prepared, compressor, clock });
      const pointResults = rounds.map((round): PointResult => {
        const score = scoreProbes(round.probes, round.messages);
        return {
          point: round.point,
          reached: round.reached,
          messagesBefore: round.messageCount,
          messagesAfter: round.messages.length,
          tokensBefore: round.tokensBefore,
          tokensIn: round.tokensIn,
          tokensAfter: round.tokensAfter,
          budgetTokens: round.budgetTokens,
          withinBudget: round.tokensAfter <= round.budgetTokens,
          total: score.total,
          byType: score.byType,
          byOffset: score.byOffset,
          probes: score.probes,
          timeMs: round.timeMs,
        };
      });
      const last = pointResults.at(-1)!;
      compressed.push({
        session,
        compressor: compressor.name,
        contexts: rounds.map((round) => renderContext(round.messages)),
        result: {
          session: session.name,
          compressor: compressor.name,
          tokensBefore: last.tokensBefore,
          tokensAfter: last.tokensAfter,
          budgetTokens: last.budgetTokens,
          ratio: last.tokensBefore === 0 ? 0 : last.tokensAfter / last.tokensBefore,
          withinBudget: last.withinBudget,
          messagesBefore: last.messagesBefore,
          messagesAfter: last.messagesAfter,
          total: last.total,
          byType: last.byType,
          byOffset: last.byOffset,
          probes: last.probes,
          timeMs: pointResults.reduce((sum, point) => sum + point.timeMs, 0),
          points: pointResults,
        },
      });
      onCompressed(compressed.length, total);
    }
  }
  return { points: sorted, compressed };
}

function buildReport(
  options: EvaluateSessionsOptions,
  points: number[],
  results: SessionResult[],
  judge: string | undefined,
): EvalReport {
  const { sessions, compressors, budget } = options;
  const totals = compressors.map((compressor): CompressorTotal => {
    const own = results.filter((result) => result.compressor === compressor.name);
    const tokensBefore = own.reduce((sum, result) => sum + result.tokensBefore, 0);
    const tokensAfter = own.reduce((sum, result) => sum + result.tokensAfter, 0);
    const total: CompressorTotal = {
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
    if (judge !== undefined)
      total.judge = summarizeJudgements(judgementsOf(own.flatMap((result) => result.probes)));
    return total;
  });
  const report: EvalReport = {
    budget,
    points,
    compressors: compressors.map((compressor) => compressor.name),
    sessions: sessions.map((session) => session.name),
    results,
    totals,
  };
  if (judge !== undefined) report.judge = judge;
  return report;
}

/**
 * Runs every compressor on every session at the same budget (at each compression point) and scores the
 * probes' facts in each output. Everything but `timeMs` is deterministic for the same input.
 *
 * @throws InvalidArgumentError when the budget, the points or the compressor list is unusable
 */
export function evaluateSessions(options: EvaluateSessionsOptions): EvalReport {
  const { points, compressed } = compressEverything(options);
  return buildReport(
    options,
    points,
    compressed.map((entry) => entry.result),
    undefined,
  );
}

/**
 * Runs `f` over the items with at most `limit` calls in flight, results in input order. The first rejection
 * rejects the whole run once the calls in flight have settled (no new ones start).
 */
export async function mapWithConcurrency<Item, Result>(
  items: readonly Item[],
  limit: number,
  f: (item: Item, index: number) => Promise<Result>,
): Promise<Result[]> {
  const results = new Array<Result>(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        results[index] = await f(items[index]!, index);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  const workers = Array.from({ length: Math.min(limit, items.length) }, worker);
  const settled = await Promise.allSettled(workers);
  const rejection = settled.find((outcome) => outcome.status === 'rejected');
  if (rejection !== undefined) throw (rejection as PromiseRejectedResult).reason;
  return results;
}

function isCachedJudgement(value: unknown): value is ProbeJudgement {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return (
    record.status === 'scored' && typeof record.overall === 'number' && typeof record.answer === 'string'
  );
}

/**
 * `evaluateSessions`, plus an LLM answerer and judge on every probe at every point when `judge` is given:
 * the judge calls run `concurrency` at a time, scores come from (and go to) `cache`, and each result, point
 * and total gets a judge summary. Only scored verdicts are cached, so a re-run asks again for the invalid
 * and failed ones. A call that fails (network, provider error) is recorded as `failed`, not thrown.
 *
 * @throws InvalidArgumentError when an option is unusable
 */
export async function runEval(options: RunEvalOptions): Promise<EvalReport> {
  const { judge, concurrency = 4, cache, onProgress, abortSignal } = options;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new InvalidArgumentError('concurrency', `expected a positive integer, got ${concurrency}`);
  let cached = 0;
  const { points, compressed } = compressEverything(options, (done, total) =>
    onProgress?.({ phase: 'compress', done, total, cached }),
  );
  const results = compressed.map((entry) => entry.result);
  if (judge === undefined) return buildReport(options, points, results, undefined);

  const tasks = compressed.flatMap((entry) =>
    entry.result.points.flatMap((point, pointIndex) =>
      point.probes.map((probe) => ({ entry, point, pointIndex, probe })),
    ),
  );
  let done = 0;
  await mapWithConcurrency(tasks, concurrency, async ({ entry, point, pointIndex, probe }) => {
    abortSignal?.throwIfAborted();
    const definition = entry.session.probes.find((candidate) => candidate.id === probe.id)!;
    const context = entry.contexts[pointIndex]!;
    const key =
      cache === undefined
        ? undefined
        : evalCacheKey({
            session: entry.session.conversation,
            compressor: entry.compressor,
            budget: options.budget,
            point: point.point,
            probe: definition,
            judge: judge.id,
            context,
          });
    const hit = key === undefined ? undefined : cache!.get(key);
    if (isCachedJudgement(hit)) {
      probe.judge = hit;
      cached++;
    } else {
      try {
        probe.judge = await judge.evaluate({
          probe: definition,
          context,
          ...(abortSignal === undefined ? {} : { abortSignal }),
        });
        if (key !== undefined && probe.judge.status === 'scored') cache!.set(key, probe.judge);
      } catch (error) {
        if (abortSignal?.aborted) throw error;
        probe.judge = { status: 'failed', error: error instanceof Error ? error.message : String(error) };
      }
    }
    done++;
    onProgress?.({ phase: 'judge', done, total: tasks.length, cached });
  });
  for (const { result } of compressed) {
    for (const point of result.points) point.judge = summarizeJudgements(judgementsOf(point.probes));
    result.judge = result.points.at(-1)!.judge!;
  }
  return buildReport(options, points, results, judge.id);
}
