import { type ProbeTally, sumTallies } from '../fact-score.js';
import { type JudgeSummary, judgementsOf, summarizeJudgements } from '../judge.js';
import type { EvalReport } from '../run-eval.js';

/** One compressor at one compression point, over all sessions. */
export interface PointTotal {
  point: number;
  /** The probes answerable at this point (fewer at earlier points), summed over sessions. */
  total: ProbeTally;
  /** Means over the probes scored at this point, when a judge ran. */
  judge?: JudgeSummary;
}

/** Whether the report was evaluated at several compression points (reports from older JSON have none). */
export function hasSeveralPoints(report: EvalReport): boolean {
  return Array.isArray(report.points) && report.points.length > 1;
}

/**
 * A compressor's probe tallies (and judge scores) at each of the report's compression points, summed over
 * sessions: how well what it keeps survives re-compaction. Empty for a report without points (older JSON).
 */
export function pointTotals(report: EvalReport, compressor: string): PointTotal[] {
  if (!Array.isArray(report.points)) return [];
  const own = report.results.filter((result) => result.compressor === compressor);
  return report.points.map((point) => {
    const rounds = own.flatMap((result) => (result.points ?? []).filter((entry) => entry.point === point));
    const total: PointTotal = { point, total: sumTallies(rounds.map((round) => round.total)) };
    if (report.judge !== undefined) {
      total.judge = summarizeJudgements(judgementsOf(rounds.flatMap((round) => round.probes)));
    }
    return total;
  });
}
