import type { ProbeTally } from '../fact-score.js';
import type { JudgeSummary } from '../judge.js';
import type { EvalBudget } from '../run-eval.js';

/** `12,345`: grouping fixed to en-US so reports are byte-identical on every machine. */
export function formatInteger(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** A 0..1 rate as a percentage with one decimal, `17.6%`; `–` for a missing or non-finite rate. */
export function formatRate(rate: number | null | undefined): string {
  return rate === null || rate === undefined || !Number.isFinite(rate) ? '–' : `${(100 * rate).toFixed(1)}%`;
}

/** `17.6% (28/159)`, or `–` for a slice without probes (a rate of 0 there would read as a failure). */
export function formatPassRate(tally: ProbeTally): string {
  return tally.probes === 0 ? '–' : `${formatRate(tally.passRate)} (${tally.passed}/${tally.probes})`;
}

/** `24.8% (90/363)` facts kept, or `–` without facts. */
export function formatFactSurvival(tally: ProbeTally): string {
  return tally.facts === 0 ? '–' : `${formatRate(tally.factSurvival)} (${tally.factsKept}/${tally.facts})`;
}

/** Short label of a budget: `10%` or `8,000 tokens`. */
export function formatBudget(budget: EvalBudget): string {
  return 'tokens' in budget
    ? `${formatInteger(budget.tokens)} tokens`
    : `${+(budget.ratio * 100).toFixed(2)}%`;
}

/** Long label of a budget, for headings: `10% of each session` or `8,000 tokens`. */
export function describeBudget(budget: EvalBudget): string {
  return 'tokens' in budget ? formatBudget(budget) : `${formatBudget(budget)} of each session`;
}

/** A compression point as a share of the session: `25%`, `87.5%`. */
export function formatPoint(point: number): string {
  return `${+(point * 100).toFixed(1)}%`;
}

/** A summary's mean, or null when nothing was scored (its means are then 0, which would read as a verdict). */
export function scoredMean(
  summary: JudgeSummary | undefined,
  value: (summary: JudgeSummary) => number,
): number | null {
  return summary === undefined || summary.scored === 0 ? null : value(summary);
}

/** A judge score on 0–5 with two decimals, `3.75`; `–` when there is none (nothing was scored). */
export function formatScore(score: number | null | undefined): string {
  return score === null || score === undefined || !Number.isFinite(score) ? '–' : score.toFixed(2);
}
