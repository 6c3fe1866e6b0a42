import { InvalidArgumentError } from '../../errors/index.js';
import { isRecord } from '../../internal/json-shapes.js';
import { offsetBuckets } from '../fact-score.js';
import { judgeDimensions } from '../judge.js';
import { type Probe, probeTypes } from '../probes.js';
import type { EvalBudget, EvalReport, SessionResult } from '../run-eval.js';
import { describeBudget, formatBudget } from './format-values.js';

/** What both renderers take: the reports of one run, one per budget. */
export interface ReportInput {
  /** One report per budget (see `evaluateSessions`), in the order to show them. At least one. */
  reports: readonly EvalReport[];
  /**
   * The probes of each session, by session name: adds the question, the reference answer and the kept
   * facts to the drill-down. Without them a report knows only the facts that were lost.
   */
  probes?: Readonly<Record<string, readonly Probe[]>>;
  /** @default 'precis eval' */
  title?: string;
  /** Printed as given, e.g. an ISO time. Left out by default so the same reports render byte-identical. */
  generatedAt?: string;
  /** Show each compressor's wall time, the one field of a report that differs between runs. @default false */
  includeTime?: boolean;
}

/** One report with what the renderers need to show its budget. */
export interface BudgetView {
  /** Position in `reports`. */
  index: number;
  report: EvalReport;
  /** `10%` or `8,000 tokens`. */
  label: string;
  /** `10% of each session` or `8,000 tokens`. */
  heading: string;
  /** Budget tokens over tokens before, summed over sessions: the x of the pass-rate-vs-budget curve. */
  share: number;
}

export interface ReportSummary {
  /** Every compressor of any report, in order of first appearance. */
  compressors: string[];
  /** Every session of any report, in order of first appearance. */
  sessions: string[];
  budgets: BudgetView[];
}

const describe = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;

function fail(path: string, reason: string): never {
  throw new InvalidArgumentError(path, reason);
}

function finite(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value))
    fail(path, `expected a finite number, got ${describe(value)}`);
  return value;
}

function array(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) fail(path, `expected an array, got ${describe(value)}`);
  return value;
}

function record(value: unknown, path: string): Record<string, unknown> {
  if (!isRecord(value)) fail(path, `expected an object, got ${describe(value)}`);
  return value;
}

function strings(value: unknown, path: string): string[] {
  return array(value, path).map((item, index) => {
    if (typeof item !== 'string') fail(`${path}[${index}]`, `expected a string, got ${describe(item)}`);
    return item;
  });
}

function checkTally(value: unknown, path: string): void {
  const tally = record(value, path);
  for (const key of ['passed', 'probes', 'passRate', 'factsKept', 'facts', 'factSurvival'])
    finite(tally[key], `${path}.${key}`);
}

function checkTallies(value: unknown, keys: readonly string[], path: string): void {
  const tallies = record(value, path);
  for (const key of keys) checkTally(tallies[key], `${path}.${key}`);
}

function checkBudget(value: unknown, path: string): EvalBudget {
  const budget = record(value, path);
  if ('tokens' in budget) {
    const tokens = finite(budget.tokens, `${path}.tokens`);
    if (!Number.isInteger(tokens) || tokens <= 0) fail(`${path}.tokens`, `expected a positive integer`);
    return { tokens };
  }
  const ratio = finite(budget.ratio, `${path}.ratio`);
  if (!(ratio > 0 && ratio <= 1)) fail(`${path}.ratio`, `expected a number in (0, 1], got ${ratio}`);
  return { ratio };
}

function checkResult(value: unknown, path: string, compressors: string[], sessions: string[]): void {
  const result = record(value, path);
  if (typeof result.session !== 'string' || !sessions.includes(result.session))
    fail(`${path}.session`, `expected one of the report's sessions, got ${JSON.stringify(result.session)}`);
  if (typeof result.compressor !== 'string' || !compressors.includes(result.compressor))
    fail(
      `${path}.compressor`,
      `expected one of the report's compressors, got ${JSON.stringify(result.compressor)}`,
    );
  for (const key of ['tokensBefore', 'tokensAfter', 'budgetTokens', 'ratio', 'timeMs'])
    finite(result[key], `${path}.${key}`);
  if (typeof result.withinBudget !== 'boolean')
    fail(`${path}.withinBudget`, `expected a boolean, got ${describe(result.withinBudget)}`);
  checkTally(result.total, `${path}.total`);
  checkTallies(result.byType, probeTypes, `${path}.byType`);
  checkTallies(result.byOffset, offsetBuckets, `${path}.byOffset`);
  array(result.probes, `${path}.probes`).forEach((item, index) => {
    checkProbe(item, `${path}.probes[${index}]`);
  });
  if (result.judge !== undefined) checkJudgeSummary(result.judge, `${path}.judge`);
  // Reports written before compression points existed have none; the renderers then leave them out.
  if (result.points !== undefined)
    array(result.points, `${path}.points`).forEach((item, index) => {
      const at = `${path}.points[${index}]`;
      const point = record(item, at);
      checkPointValue(point.point, `${at}.point`);
      checkTally(point.total, `${at}.total`);
      array(point.probes, `${at}.probes`).forEach((probe, probeIndex) => {
        checkProbe(probe, `${at}.probes[${probeIndex}]`);
      });
      if (point.judge !== undefined) checkJudgeSummary(point.judge, `${at}.judge`);
    });
}

function checkPointValue(value: unknown, path: string): void {
  const point = finite(value, path);
  if (!(point > 0 && point <= 1)) fail(path, `expected a number in (0, 1], got ${point}`);
}

function checkProbe(value: unknown, path: string): void {
  const probe = record(value, path);
  if (typeof probe.id !== 'string') fail(`${path}.id`, `expected a string, got ${describe(probe.id)}`);
  if (!(probeTypes as readonly unknown[]).includes(probe.type))
    fail(`${path}.type`, `expected one of ${probeTypes.join(', ')}, got ${JSON.stringify(probe.type)}`);
  if (typeof probe.passed !== 'boolean')
    fail(`${path}.passed`, `expected a boolean, got ${describe(probe.passed)}`);
  for (const key of ['factsKept', 'facts', 'minFacts', 'firstOffset']) finite(probe[key], `${path}.${key}`);
  strings(probe.missing, `${path}.missing`);
  if (probe.judge !== undefined) checkProbeJudge(probe.judge, `${path}.judge`);
}

function text(value: unknown, path: string): string {
  if (typeof value !== 'string') fail(path, `expected a string, got ${describe(value)}`);
  return value;
}

function checkDimensions(value: unknown, path: string): void {
  const dimensions = record(value, path);
  for (const dimension of judgeDimensions) finite(dimensions[dimension], `${path}.${dimension}`);
}

function checkJudgeSummary(value: unknown, path: string): void {
  const summary = record(value, path);
  for (const key of ['scored', 'invalid', 'failed', 'overall']) finite(summary[key], `${path}.${key}`);
  checkDimensions(summary.dimensions, `${path}.dimensions`);
}

/** A probe's verdict: scored (with every criterion), invalid (with what was wrong) or failed (with why). */
function checkProbeJudge(value: unknown, path: string): void {
  const judge = record(value, path);
  if (judge.status === 'failed') {
    text(judge.error, `${path}.error`);
    return;
  }
  if (judge.status !== 'scored' && judge.status !== 'invalid')
    fail(`${path}.status`, `expected scored, invalid or failed, got ${JSON.stringify(judge.status)}`);
  text(judge.answer, `${path}.answer`);
  finite(judge.attempts, `${path}.attempts`);
  if (judge.status === 'invalid') {
    strings(judge.problems, `${path}.problems`);
    return;
  }
  finite(judge.overall, `${path}.overall`);
  checkDimensions(judge.dimensions, `${path}.dimensions`);
  array(judge.criteria, `${path}.criteria`).forEach((item, index) => {
    const at = `${path}.criteria[${index}]`;
    const criterion = record(item, at);
    text(criterion.id, `${at}.id`);
    if (!(judgeDimensions as readonly unknown[]).includes(criterion.dimension))
      fail(
        `${at}.dimension`,
        `expected one of ${judgeDimensions.join(', ')}, got ${JSON.stringify(criterion.dimension)}`,
      );
    for (const key of ['weight', 'score']) finite(criterion[key], `${at}.${key}`);
    text(criterion.reason, `${at}.reason`);
  });
}

/** Checks one report's shape, as far as the renderers read it: reports may come back from a JSON file. */
function checkReport(value: unknown, path: string): EvalReport {
  const report = record(value, path);
  checkBudget(report.budget, `${path}.budget`);
  const compressors = strings(report.compressors, `${path}.compressors`);
  if (compressors.length === 0) fail(`${path}.compressors`, 'expected at least one compressor');
  if (new Set(compressors).size !== compressors.length)
    fail(`${path}.compressors`, 'expected distinct compressor names');
  const sessions = strings(report.sessions, `${path}.sessions`);
  if (report.points !== undefined)
    array(report.points, `${path}.points`).forEach((point, index) => {
      checkPointValue(point, `${path}.points[${index}]`);
    });
  if (report.judge !== undefined) text(report.judge, `${path}.judge`);
  array(report.results, `${path}.results`).forEach((result, index) => {
    checkResult(result, `${path}.results[${index}]`, compressors, sessions);
  });
  const totals = array(report.totals, `${path}.totals`);
  totals.forEach((item, index) => {
    const at = `${path}.totals[${index}]`;
    const total = record(item, at);
    if (total.compressor !== compressors[index])
      fail(`${at}.compressor`, `expected ${JSON.stringify(compressors[index])}, the compressors' order`);
    for (const key of ['sessions', 'tokensBefore', 'tokensAfter', 'ratio', 'withinBudget', 'timeMs'])
      finite(total[key], `${at}.${key}`);
    checkTally(total.total, `${at}.total`);
    checkTallies(total.byType, probeTypes, `${at}.byType`);
    checkTallies(total.byOffset, offsetBuckets, `${at}.byOffset`);
    if (total.judge !== undefined) checkJudgeSummary(total.judge, `${at}.judge`);
  });
  if (totals.length !== compressors.length)
    fail(`${path}.totals`, `expected one total per compressor (${compressors.length}), got ${totals.length}`);
  return value as unknown as EvalReport;
}

function union(lists: ReadonlyArray<readonly string[]>): string[] {
  return [...new Set(lists.flat())];
}

/** Budget tokens over tokens before, each session counted once (every compressor shares its budget). */
function shareOf(report: EvalReport): number {
  if ('ratio' in report.budget) return report.budget.ratio;
  const bySession = new Map<string, SessionResult>();
  for (const result of report.results)
    if (!bySession.has(result.session)) bySession.set(result.session, result);
  let budgetTokens = 0;
  let tokensBefore = 0;
  for (const result of bySession.values()) {
    budgetTokens += result.budgetTokens;
    tokensBefore += result.tokensBefore;
  }
  return tokensBefore === 0 ? 0 : budgetTokens / tokensBefore;
}

/**
 * Checks the reports and lines them up for rendering: compressors and sessions of all reports, and each
 * report's budget as a label and as a share of the tokens.
 *
 * @throws InvalidArgumentError naming the field, e.g. `reports[1].results[4].compressor`, when a report has
 *   the wrong shape, when there is none, or when two have the same budget (a curve cannot have both)
 */
export function summarizeReports(reports: readonly EvalReport[]): ReportSummary {
  if (!Array.isArray(reports) || reports.length === 0)
    fail('reports', 'expected at least one report (one per budget)');
  const seen = new Map<string, number>();
  const budgets = reports.map((value, index): BudgetView => {
    const report = checkReport(value, `reports[${index}]`);
    const label = formatBudget(report.budget);
    const earlier = seen.get(label);
    if (earlier !== undefined)
      fail(`reports[${index}].budget`, `same budget as reports[${earlier}]: ${label}`);
    seen.set(label, index);
    return { index, report, label, heading: describeBudget(report.budget), share: shareOf(report) };
  });
  return {
    compressors: union(reports.map((report) => report.compressors)),
    sessions: union(reports.map((report) => report.sessions)),
    budgets,
  };
}
