import { offsetBuckets } from '../fact-score.js';
import { type JudgeSummary, judgeDimensions } from '../judge.js';
import { probeTypes } from '../probes.js';
import type { EvalReport } from '../run-eval.js';
import {
  formatFactSurvival,
  formatInteger,
  formatPassRate,
  formatPoint,
  formatRate,
  formatScore,
  scoredMean,
} from './format-values.js';
import { hasSeveralPoints, pointTotals } from './point-totals.js';
import { type BudgetView, type ReportInput, summarizeReports } from './summarize-reports.js';

export interface RenderMarkdownOptions extends ReportInput {}

/**
 * Text as a code span that survives a GFM table: a backtick fence longer than any run inside it, pipes
 * escaped (GFM splits cells before it parses code spans), and line breaks flattened.
 */
export function markdownCode(text: string): string {
  const flat = text.replace(/\s*[\r\n]+\s*/g, ' ').replace(/\|/g, '\\|');
  const longestRun = Math.max(0, ...(flat.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longestRun + 1);
  const padding = flat.startsWith('`') || flat.endsWith('`') || flat === '' ? ' ' : '';
  return `${fence}${padding}${flat}${padding}${fence}`;
}

type Alignment = 'left' | 'right';

function table(
  header: readonly string[],
  rows: ReadonlyArray<readonly string[]>,
  align: Alignment[],
): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  const rule = header.map((_, column) => (align[column] === 'right' ? '---:' : '---'));
  return [line(header), line(rule), ...rows.map(line)].join('\n');
}

const leftThenRight = (count: number): Alignment[] => ['left', ...Array<Alignment>(count).fill('right')];

function totalsTable(report: EvalReport, includeTime: boolean): string {
  const header = ['compressor', 'pass rate', 'facts kept', 'tokens after / before', 'within budget'];
  if (includeTime) header.push('time');
  const rows = report.totals.map((total) => {
    const row = [
      markdownCode(total.compressor),
      formatPassRate(total.total),
      formatFactSurvival(total.total),
      `${formatRate(total.ratio)} (${formatInteger(total.tokensAfter)} / ${formatInteger(total.tokensBefore)})`,
      `${total.withinBudget}/${total.sessions}`,
    ];
    if (includeTime) row.push(`${formatInteger(total.timeMs)} ms`);
    return row;
  });
  return table(header, rows, leftThenRight(header.length - 1));
}

function breakdownTables(report: EvalReport): string[] {
  const compressors = report.totals.map((total) => markdownCode(total.compressor));
  const byType = probeTypes.map((type) => [
    type,
    ...report.totals.map((total) => formatPassRate(total.byType[type])),
  ]);
  const byOffset = offsetBuckets.map((bucket) => [
    markdownCode(bucket),
    ...report.totals.map((total) => formatPassRate(total.byOffset[bucket])),
  ]);
  return [
    '#### Pass rate by probe type',
    '',
    table(['type', ...compressors], byType, leftThenRight(compressors.length)),
    '',
    '#### Pass rate by where the earliest fact sits (`first_offset`)',
    '',
    table(['first_offset', ...compressors], byOffset, leftThenRight(compressors.length)),
  ];
}

function sessionTable(report: EvalReport): string {
  const rows = report.sessions.map((session) => {
    const own = report.results.filter((result) => result.session === session);
    const first = own[0];
    return [
      markdownCode(session),
      first === undefined ? '–' : formatInteger(first.tokensBefore),
      first === undefined ? '–' : formatInteger(first.budgetTokens),
      ...report.compressors.map((compressor) => {
        const result = own.find((candidate) => candidate.compressor === compressor);
        if (result === undefined) return '–';
        const probes =
          result.total.probes === 0 ? 'no probes' : `${result.total.passed}/${result.total.probes}`;
        return `${probes}, ${formatInteger(result.tokensAfter)} tokens${result.withinBudget ? '' : ' **over**'}`;
      }),
    ];
  });
  return table(
    ['session', 'tokens', 'budget', ...report.compressors.map((compressor) => markdownCode(compressor))],
    rows,
    leftThenRight(2 + report.compressors.length),
  );
}

/** A summary's score, or `–` when it scored nothing (see `scoredMean`). */
const judgeScore = (summary: JudgeSummary | undefined, value: (summary: JudgeSummary) => number) =>
  formatScore(scoredMean(summary, value));

const judgeCounts = (summary: JudgeSummary | undefined) =>
  summary === undefined ? '–' : `${summary.scored} / ${summary.invalid} / ${summary.failed}`;

/** The judge's overall and per-dimension means per compressor, at the last compression point. */
function judgeTable(report: EvalReport): string {
  const header = ['compressor', 'overall', ...judgeDimensions, 'scored / invalid / failed'];
  const rows = report.totals.map((total) => [
    markdownCode(total.compressor),
    judgeScore(total.judge, (summary) => summary.overall),
    ...judgeDimensions.map((dimension) =>
      judgeScore(total.judge, (summary) => summary.dimensions[dimension]),
    ),
    judgeCounts(total.judge),
  ]);
  return table(header, rows, leftThenRight(header.length - 1));
}

/** Every verdict that is not a score, at every point: what the judge got wrong, or why its call failed. */
function judgeProblemsTable(report: EvalReport): string | undefined {
  const several = hasSeveralPoints(report);
  const rows = report.results.flatMap((result) =>
    // Without points (older reports) the top-level probes are the only round.
    (Array.isArray(result.points) ? result.points : [{ point: 1, probes: result.probes }]).flatMap((point) =>
      point.probes.flatMap((probe) => {
        const judge = probe.judge;
        if (judge === undefined || judge.status === 'scored') return [];
        const problem =
          judge.status === 'failed'
            ? judge.error
            : judge.problems.map((entry, index) => `attempt ${index + 1}: ${entry}`).join('; ');
        return [
          [
            markdownCode(result.session),
            markdownCode(result.compressor),
            ...(several ? [formatPoint(point.point)] : []),
            markdownCode(probe.id),
            judge.status,
            markdownCode(problem),
          ],
        ];
      }),
    ),
  );
  if (rows.length === 0) return undefined;
  const header = [
    'session',
    'compressor',
    ...(several ? ['point'] : []),
    'probe',
    'verdict',
    'what was wrong',
  ];
  return table(header, rows, Array<Alignment>(header.length).fill('left'));
}

function judgeSection(report: EvalReport): string[] {
  if (report.judge === undefined && report.totals.every((total) => total.judge === undefined)) return [];
  const problems = judgeProblemsTable(report);
  const lines = [
    '### LLM judge',
    '',
    `Scores 0–5${report.judge === undefined ? '' : ` by ${markdownCode(report.judge)}`}, means over the scored probes` +
      `${hasSeveralPoints(report) ? ' at the end of the session' : ''}: overall is the mean of the six dimensions. ` +
      'Invalid and failed verdicts are counted, never scored.',
    '',
    judgeTable(report),
  ];
  if (problems !== undefined) lines.push('', '#### Verdicts without a score', '', problems);
  return ['', ...lines];
}

/** Pass rate (and judge overall) per compressor at each compression point: survival of re-compaction. */
function pointSection(report: EvalReport): string[] {
  if (!hasSeveralPoints(report)) return [];
  const header = ['compressor', ...report.points.map(formatPoint)];
  const perCompressor = report.compressors.map((compressor) => ({
    compressor,
    totals: pointTotals(report, compressor),
  }));
  const passRows = perCompressor.map(({ compressor, totals }) => [
    markdownCode(compressor),
    ...totals.map((entry) => formatPassRate(entry.total)),
  ]);
  const lines = [
    '',
    '### Pass rate by compression point',
    '',
    'The session compressed up to each point, re-compressing the previous output; only the probes ' +
      'answerable by then count.',
    '',
    table(header, passRows, leftThenRight(report.points.length)),
  ];
  if (report.judge !== undefined) {
    const judgeRows = perCompressor.map(({ compressor, totals }) => [
      markdownCode(compressor),
      ...totals.map((entry) => judgeScore(entry.judge, (summary) => summary.overall)),
    ]);
    lines.push(
      '',
      '#### Judge overall by compression point',
      '',
      table(header, judgeRows, leftThenRight(report.points.length)),
    );
  }
  return lines;
}

function budgetSection(view: BudgetView, includeTime: boolean): string[] {
  const { report } = view;
  const probes = report.totals[0]?.total.probes ?? 0;
  return [
    `## Budget: ${view.heading}`,
    '',
    `${report.sessions.length} sessions, ${probes} probes.`,
    '',
    '### Totals',
    '',
    totalsTable(report, includeTime),
    ...judgeSection(report),
    ...pointSection(report),
    '',
    ...breakdownTables(report),
    '',
    '### Per session',
    '',
    'Probes passed and tokens after compression; **over** marks an output above the budget.',
    '',
    sessionTable(report),
  ];
}

/** Pass rate per compressor (rows) and budget (columns): the curve of the HTML report as a table. */
function budgetCurveTable(views: readonly BudgetView[], compressors: readonly string[]): string {
  const rows = compressors.map((compressor) => [
    markdownCode(compressor),
    ...views.map((view) => {
      const total = view.report.totals.find((candidate) => candidate.compressor === compressor);
      return total === undefined ? '–' : formatPassRate(total.total);
    }),
  ]);
  return table(['compressor', ...views.map((view) => view.label)], rows, leftThenRight(views.length));
}

/** The judge's overall score per compressor (rows) and budget (columns). */
function budgetJudgeTable(views: readonly BudgetView[], compressors: readonly string[]): string {
  const rows = compressors.map((compressor) => [
    markdownCode(compressor),
    ...views.map((view) => {
      const total = view.report.totals.find((candidate) => candidate.compressor === compressor);
      return judgeScore(total?.judge, (summary) => summary.overall);
    }),
  ]);
  return table(['compressor', ...views.map((view) => view.label)], rows, leftThenRight(views.length));
}

/**
 * A markdown report of one evaluation run at one or more budgets: per budget the totals per compressor
 * (pass rate, facts kept, token ratio, sessions within budget), the LLM judge's overall and per-dimension
 * scores with every invalid or failed verdict (when a judge ran), pass rate (and judge overall) by
 * compression point (when there are several), pass rates by probe type and by `first_offset` bucket, and a
 * per-session table; with several budgets, pass rate (and judge overall) by budget first.
 * Deterministic: the same reports give the same bytes (no time unless `generatedAt`/`includeTime` ask).
 *
 * @throws InvalidArgumentError naming the field when a report has the wrong shape (see `summarizeReports`)
 */
export function renderMarkdown(options: RenderMarkdownOptions): string {
  const { reports, title = 'precis eval', generatedAt, includeTime = false } = options;
  const summary = summarizeReports(reports);
  const lines = [`# ${title.replace(/\s+/g, ' ')}`, ''];
  if (generatedAt !== undefined) lines.push(`Generated ${generatedAt}.`, '');
  lines.push(
    `${summary.sessions.length} sessions; compressors ${summary.compressors.map((name) => markdownCode(name)).join(', ')}; ` +
      `budgets ${summary.budgets.map((view) => view.label).join(', ')}. A probe passes when enough of its ` +
      'verbatim facts survive in the compressed context.',
    '',
  );
  if (summary.budgets.length > 1) {
    lines.push('## Pass rate by budget', '', budgetCurveTable(summary.budgets, summary.compressors), '');
    if (summary.budgets.some((view) => view.report.judge !== undefined))
      lines.push(
        '## Judge overall by budget (0–5)',
        '',
        budgetJudgeTable(summary.budgets, summary.compressors),
        '',
      );
  }
  for (const view of summary.budgets) lines.push(...budgetSection(view, includeTime), '');
  return `${lines.join('\n').trimEnd()}\n`;
}
