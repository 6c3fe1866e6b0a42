import { offsetBuckets } from '../fact-score.js';
import { probeTypes } from '../probes.js';
import type { EvalReport } from '../run-eval.js';
import { formatFactSurvival, formatInteger, formatPassRate, formatRate } from './format-values.js';
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

/**
 * A markdown report of one evaluation run at one or more budgets: per budget the totals per compressor
 * (pass rate, facts kept, token ratio, sessions within budget), pass rates by probe type and by
 * `first_offset` bucket, and a per-session table; with several budgets, pass rate by budget first.
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
  if (summary.budgets.length > 1)
    lines.push('## Pass rate by budget', '', budgetCurveTable(summary.budgets, summary.compressors), '');
  for (const view of summary.budgets) lines.push(...budgetSection(view, includeTime), '');
  return `${lines.join('\n').trimEnd()}\n`;
}
