import { type OffsetBucket, offsetBuckets, type ProbeTally } from '../fact-score.js';
import { type JudgeDimension, type JudgeSummary, judgeDimensions } from '../judge.js';
import { type Probe, probeTypes } from '../probes.js';
import type {
  CompressorTotal,
  EvalReport,
  JudgedProbeResult,
  PointResult,
  ProbeJudgeResult,
} from '../run-eval.js';
import { chartColor } from './chart-series.js';
import { escapeHtml } from './escape-html.js';
import {
  formatFactSurvival,
  formatInteger,
  formatPassRate,
  formatPoint,
  formatRate,
  formatScore,
  scoredMean,
} from './format-values.js';
import { groupedBarChart } from './grouped-bar-chart.js';
import { lineChart } from './line-chart.js';
import { hasSeveralPoints, type PointTotal, pointTotals } from './point-totals.js';
import { radarChart } from './radar-chart.js';
import { type BudgetView, type ReportInput, summarizeReports } from './summarize-reports.js';

export interface RenderHtmlOptions extends ReportInput {}

/** Text content, escaped. */
const text = escapeHtml;

/** A quoted, escaped attribute: `attribute('data-compressor', name)` → ` data-compressor="…"`. */
const attribute = (name: string, value: string) => ` ${name}="${escapeHtml(value)}"`;

const offsetLabels: Record<OffsetBucket, string> = {
  '<0.35': 'earliest fact in the first 35%',
  '0.35-0.7': 'earliest fact at 35–70%',
  '>=0.7': 'earliest fact in the last 30%',
};

/** `35k`, `1.2M`: tick and bar labels; tooltips carry the exact counts. */
function formatCompact(value: number): string {
  if (value >= 1e6) return `${+(value / 1e6).toFixed(1)}M`;
  if (value >= 1e4) return `${Math.round(value / 1e3)}k`;
  if (value >= 1e3) return `${+(value / 1e3).toFixed(1)}k`;
  return String(Math.round(value));
}

const percentLabel = (value: number) => `${Math.round(100 * value)}%`;

const swatch = (color: string) =>
  `<span class="swatch" style="background:${color}" aria-hidden="true"></span>`;

interface Colors {
  of(compressor: string): string;
}

/** A table row headed by the compressor's swatch and name, marked for the compressor filter. */
function compressorRow(compressor: string, cells: readonly string[], colors: Colors): string {
  return `<tr${attribute('data-compressor', compressor)}><th scope="row">${swatch(colors.of(compressor))}${text(compressor)}</th>${cells.join('')}</tr>`;
}

function tallyTooltip(name: string, slice: string, tally: ProbeTally): string {
  if (tally.probes === 0) return `${name} · ${slice}: no probes`;
  return `${name} · ${slice}: ${formatPassRate(tally)} passed, ${formatFactSurvival(tally)} facts kept`;
}

/** `className`: classes besides `chart-figure`. */
function figure(caption: string, chart: string, className = ''): string {
  return `<figure class="${className === '' ? 'chart-figure' : `chart-figure ${className}`}"><figcaption>${text(caption)}</figcaption>${chart}</figure>`;
}

function budgetCurve(views: readonly BudgetView[], compressors: readonly string[], colors: Colors): string {
  const series = compressors.map((compressor) => ({
    name: compressor,
    color: colors.of(compressor),
    data: { compressor },
    points: views.flatMap((view) => {
      const total = view.report.totals.find((candidate) => candidate.compressor === compressor);
      if (total === undefined) return [];
      return [
        {
          x: view.share,
          y: total.total.passRate,
          tooltip: `${compressor} at ${view.label}: ${formatPassRate(total.total)} passed, ${formatFactSurvival(total.total)} facts kept`,
        },
      ];
    }),
  }));
  const chart = lineChart({
    label: 'Probe pass rate against the budget, one line per compressor',
    series,
    xTicks: views.map((view) => ({ value: view.share, label: view.label })),
    xLabel: 'budget (share of the session’s tokens)',
    yLabel: 'probes passed',
    formatY: percentLabel,
    width: 900,
  });
  return figure('Probes passed, one line per compressor', chart);
}

function budgetTable(views: readonly BudgetView[], compressors: readonly string[], colors: Colors): string {
  const head = views.map((view) => `<th>${text(view.label)}</th>`).join('');
  const rows = compressors.map((compressor) => {
    const cells = views.map((view) => {
      const total = view.report.totals.find((candidate) => candidate.compressor === compressor);
      return `<td>${text(total === undefined ? '–' : formatPassRate(total.total))}</td>`;
    });
    return compressorRow(compressor, cells, colors);
  });
  return `<div class="table-scroll"><table><caption>Probes passed by budget</caption><thead><tr><th>compressor</th>${head}</tr></thead><tbody>${rows.join('')}</tbody></table></div>`;
}

function totalsTable(report: EvalReport, colors: Colors, includeTime: boolean): string {
  const rows = report.totals.map((total) => {
    const cells = [
      `<td><span class="meter"><span style="width:${(100 * total.total.passRate).toFixed(1)}%;background:${colors.of(total.compressor)}"></span></span>${text(formatPassRate(total.total))}</td>`,
      `<td>${text(formatFactSurvival(total.total))}</td>`,
      `<td>${text(formatRate(total.ratio))} <span class="muted">(${text(formatInteger(total.tokensAfter))} / ${text(formatInteger(total.tokensBefore))})</span></td>`,
      `<td>${total.withinBudget}/${total.sessions}</td>`,
      ...(includeTime ? [`<td>${text(formatInteger(total.timeMs))} ms</td>`] : []),
    ];
    return compressorRow(total.compressor, cells, colors);
  });
  const head = ['compressor', 'probes passed', 'facts kept', 'tokens after / before', 'within budget'];
  if (includeTime) head.push('time');
  return `<div class="table-scroll"><table class="totals"><caption>Totals over all sessions</caption><thead><tr>${head.map((cell) => `<th>${text(cell)}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table></div>`;
}

function typeBars(report: EvalReport, colors: Colors): string {
  const chart = groupedBarChart({
    label: 'Probe pass rate per probe type, one bar per compressor',
    categories: probeTypes.map((type) => ({ label: type, data: { type } })),
    series: report.totals.map((total) => ({
      name: total.compressor,
      color: colors.of(total.compressor),
      data: { compressor: total.compressor },
      values: probeTypes.map((type) =>
        total.byType[type].probes === 0 ? null : total.byType[type].passRate,
      ),
      tooltips: probeTypes.map((type) => tallyTooltip(total.compressor, type, total.byType[type])),
    })),
    maxValue: 1,
    formatValue: percentLabel,
    width: 480,
  });
  return figure('Pass rate by probe type', chart);
}

function offsetBars(report: EvalReport, colors: Colors): string {
  const chart = groupedBarChart({
    label: 'Probe pass rate by where the earliest fact sits in the session, one bar per compressor',
    categories: offsetBuckets.map((bucket) => ({ label: offsetLabels[bucket] })),
    series: report.totals.map((total) => ({
      name: total.compressor,
      color: colors.of(total.compressor),
      data: { compressor: total.compressor },
      values: offsetBuckets.map((bucket) =>
        total.byOffset[bucket].probes === 0 ? null : total.byOffset[bucket].passRate,
      ),
      tooltips: offsetBuckets.map((bucket) =>
        tallyTooltip(total.compressor, offsetLabels[bucket], total.byOffset[bucket]),
      ),
    })),
    maxValue: 1,
    formatValue: percentLabel,
    width: 480,
  });
  return figure('Pass rate by position of the earliest fact', chart);
}

function radars(report: EvalReport, colors: Colors): string {
  const figures = report.totals.map((total) => {
    const chart = radarChart({
      label: `${total.compressor}: pass rate per probe type`,
      axes: probeTypes.map((type) => ({ label: type })),
      series: [
        {
          name: total.compressor,
          color: colors.of(total.compressor),
          values: probeTypes.map((type) =>
            total.byType[type].probes === 0 ? null : total.byType[type].passRate,
          ),
          tooltips: probeTypes.map((type) => tallyTooltip(total.compressor, type, total.byType[type])),
        },
      ],
      formatValue: percentLabel,
    });
    return `<figure class="radar"${attribute('data-compressor', total.compressor)}><figcaption>${swatch(colors.of(total.compressor))}${text(total.compressor)} <span class="muted">${text(formatPassRate(total.total))}</span></figcaption>${chart}</figure>`;
  });
  return `<div class="radars">${figures.join('')}</div>`;
}

const scoreLabel = (value: number) => value.toFixed(1);

const judgeCounts = (summary: JudgeSummary | undefined) =>
  summary === undefined
    ? 'not judged'
    : `${summary.scored} scored, ${summary.invalid} invalid, ${summary.failed} failed`;

function judgeTable(report: EvalReport, colors: Colors): string {
  const rows = report.totals.map((total) => {
    const overall = scoredMean(total.judge, (summary) => summary.overall);
    const cells = [
      `<td class="judge-total"><span class="meter"><span style="width:${overall === null ? 0 : ((100 * overall) / 5).toFixed(1)}%;background:${colors.of(total.compressor)}"></span></span>${text(formatScore(overall))}</td>`,
      ...judgeDimensions.map(
        (dimension) =>
          `<td>${text(formatScore(scoredMean(total.judge, (summary) => summary.dimensions[dimension])))}</td>`,
      ),
      `<td class="judge-counts" title="${text(judgeCounts(total.judge))}">${text(total.judge === undefined ? '–' : `${total.judge.scored} / ${total.judge.invalid} / ${total.judge.failed}`)}</td>`,
    ];
    return compressorRow(total.compressor, cells, colors);
  });
  const head = ['compressor', 'overall', ...judgeDimensions, 'scored / invalid / failed'];
  return `<div class="table-scroll"><table class="judge-totals"><caption>Judge scores (0–5), means over the scored probes</caption><thead><tr>${head.map((cell) => `<th>${text(cell)}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table></div>`;
}

function judgeTooltip(name: string, slice: string, summary: JudgeSummary | undefined, value: number | null) {
  if (value === null) return `${name} · ${slice}: nothing scored (${judgeCounts(summary)})`;
  return `${name} · ${slice}: ${formatScore(value)} / 5 over ${summary?.scored ?? 0} scored probes`;
}

/** A compressor's mean judge score per rubric dimension, as one chart series (bars or a radar). */
function dimensionSeries(total: CompressorTotal, colors: Colors) {
  const values = judgeDimensions.map((dimension) =>
    scoredMean(total.judge, (summary) => summary.dimensions[dimension]),
  );
  return {
    name: total.compressor,
    color: colors.of(total.compressor),
    values,
    tooltips: judgeDimensions.map((dimension, index) =>
      judgeTooltip(total.compressor, dimension, total.judge, values[index] ?? null),
    ),
  };
}

function dimensionBars(report: EvalReport, colors: Colors): string {
  const chart = groupedBarChart({
    label: 'Judge score per rubric dimension, one bar per compressor',
    categories: judgeDimensions.map((dimension) => ({ label: dimension, data: { dimension } })),
    series: report.totals.map((total) => ({
      ...dimensionSeries(total, colors),
      data: { compressor: total.compressor },
    })),
    maxValue: 5,
    ticks: 5,
    formatValue: scoreLabel,
    width: 960,
  });
  return figure('Judge score per dimension', chart, 'wide');
}

/** Short axis labels: the full names of neighbouring axes run into each other at this size. */
const radarLabels: Record<JudgeDimension, string> = {
  accuracy: 'accuracy',
  'context-awareness': 'context',
  'artifact-trail': 'artifacts',
  completeness: 'completeness',
  continuity: 'continuity',
  'instruction-following': 'instructions',
};

function judgeRadars(report: EvalReport, colors: Colors): string {
  const figures = report.totals.map((total) => {
    const chart = radarChart({
      label: `${total.compressor}: judge score per rubric dimension`,
      axes: judgeDimensions.map((dimension) => ({ label: radarLabels[dimension], title: dimension })),
      series: [dimensionSeries(total, colors)],
      maxValue: 5,
      rings: 5,
      formatValue: scoreLabel,
    });
    const overall = formatScore(scoredMean(total.judge, (summary) => summary.overall));
    return `<figure class="radar judge-radar"${attribute('data-compressor', total.compressor)}><figcaption>${swatch(colors.of(total.compressor))}${text(total.compressor)} <span class="muted">overall ${text(overall)}</span></figcaption>${chart}</figure>`;
  });
  return `<div class="radars">${figures.join('')}</div>`;
}

function judgeCard(report: EvalReport, colors: Colors): string {
  if (report.judge === undefined && report.totals.every((total) => total.judge === undefined)) return '';
  const by = report.judge === undefined ? '' : ` Judged by <code>${text(report.judge)}</code>.`;
  const when = hasSeveralPoints(report) ? ' at the end of the session' : '';
  return (
    `<div class="card judge"><h3>LLM judge: the six dimensions of the rubric</h3>` +
    `<p class="muted">An answerer replies to each probe from the compressed context${when}; the judge, blind to the compressor, scores the reply 0–5 per criterion. Overall is the mean of the dimensions. Invalid and failed verdicts are counted, never scored.${by}</p>` +
    `${judgeTable(report, colors)}${dimensionBars(report, colors)}${judgeRadars(report, colors)}</div>`
  );
}

/** Pass rate per compressor at each compression point: what survives re-compaction round after round. */
function pointCard(report: EvalReport, colors: Colors): string {
  if (!hasSeveralPoints(report)) return '';
  const perCompressor = report.compressors.map((compressor) => ({
    compressor,
    totals: pointTotals(report, compressor),
  }));
  const judgeOf = (entry: PointTotal) =>
    entry.judge === undefined
      ? undefined
      : formatScore(scoredMean(entry.judge, (summary) => summary.overall));
  const series = perCompressor.map(({ compressor, totals }) => ({
    name: compressor,
    color: colors.of(compressor),
    data: { compressor },
    points: totals.map((entry) => {
      const judge = judgeOf(entry);
      return {
        x: entry.point,
        y: entry.total.passRate,
        tooltip: `${compressor} at ${formatPoint(entry.point)} of the session: ${formatPassRate(entry.total)} passed, ${formatFactSurvival(entry.total)} facts kept${judge === undefined ? '' : `, judge overall ${judge}`}`,
      };
    }),
  }));
  const chart = lineChart({
    label: 'Probe pass rate at each compression point, one line per compressor',
    series,
    xTicks: report.points.map((point) => ({ value: point, label: formatPoint(point) })),
    xMax: 1,
    xLabel: 'compression point (share of the session)',
    yLabel: 'probes passed',
    formatY: percentLabel,
    width: 600,
  });
  const rows = perCompressor.map(({ compressor, totals }) => {
    const cells = totals.map((entry) => {
      const judge = judgeOf(entry);
      return `<td>${text(formatPassRate(entry.total))}${judge === undefined ? '' : `<br><span class="muted">judge ${text(judge)}</span>`}</td>`;
    });
    return compressorRow(compressor, cells, colors);
  });
  const head = report.points.map((point) => `<th>${text(formatPoint(point))}</th>`).join('');
  const table = `<div class="table-scroll"><table class="point-totals"><caption>Probes passed${report.judge === undefined ? '' : ' (and judge overall)'} by compression point</caption><thead><tr><th>compressor</th>${head}</tr></thead><tbody>${rows.join('')}</tbody></table></div>`;
  return (
    '<div class="card points"><div class="charts">' +
    figure('Probes passed by compression point, one line per compressor', chart, 'point-chart') +
    `<div>${table}<p class="muted">The session is compressed up to each point, re-compressing the previous output; only the probes answerable by then count, so earlier points have fewer.</p></div></div></div>`
  );
}

function tokenBars(report: EvalReport, colors: Colors): string {
  const resultOf = (session: string, compressor: string) =>
    report.results.find((result) => result.session === session && result.compressor === compressor);
  const firstOf = (session: string) => report.results.find((result) => result.session === session);
  const before = {
    name: 'before',
    color: '#A7AFBC',
    values: report.sessions.map((session) => firstOf(session)?.tokensBefore ?? null),
    tooltips: report.sessions.map((session) => {
      const first = firstOf(session);
      return first === undefined ? undefined : `before: ${formatInteger(first.tokensBefore)} tokens`;
    }),
  };
  const after = report.compressors.map((compressor) => ({
    name: compressor,
    color: colors.of(compressor),
    data: { compressor },
    values: report.sessions.map((session) => resultOf(session, compressor)?.tokensAfter ?? null),
    tooltips: report.sessions.map((session) => {
      const result = resultOf(session, compressor);
      if (result === undefined) return undefined;
      return `${compressor}: ${formatInteger(result.tokensAfter)} tokens, ${formatRate(result.ratio)} of ${formatInteger(result.tokensBefore)} (${result.withinBudget ? 'within' : 'over'} the budget of ${formatInteger(result.budgetTokens)})`;
    }),
  }));
  const chart = groupedBarChart({
    label: 'Tokens before and after compression per session',
    orientation: 'horizontal',
    categories: report.sessions.map((session) => ({ label: session })),
    series: [before, ...after],
    markers: {
      name: 'budget',
      values: report.sessions.map((session) => firstOf(session)?.budgetTokens ?? null),
    },
    formatValue: formatCompact,
    width: 960,
  });
  return figure('Tokens before and after, per session (dashed: the budget)', chart, 'wide');
}

/** The judge's word on a probe in a few characters: its overall score, or why there is none. */
function judgeBadge(judge: ProbeJudgeResult | undefined): string {
  if (judge === undefined) return '';
  const label = judge.status === 'scored' ? formatScore(judge.overall) : judge.status;
  return `<span class="verdict-judge judge-${judge.status}">${text(label)}</span>`;
}

function judgeTitle(judge: ProbeJudgeResult | undefined): string {
  if (judge === undefined) return '';
  if (judge.status === 'scored') return `; judge overall ${formatScore(judge.overall)} / 5`;
  return judge.status === 'invalid' ? '; judge verdict invalid' : '; judge call failed';
}

function verdict(compressor: string, result: JudgedProbeResult | undefined, colors: Colors): string {
  if (result === undefined)
    return `<span class="verdict none"${attribute('data-compressor', compressor)} title="${text(`${compressor}: not run`)}">${swatch(colors.of(compressor))}–<span class="verdict-name">${text(compressor)}</span></span>`;
  const title = `${compressor}: ${result.passed ? 'passed' : 'failed'}, ${result.factsKept} of ${result.facts} facts kept (needs ${result.minFacts})${judgeTitle(result.judge)}`;
  return `<span class="verdict ${result.passed ? 'pass' : 'fail'}"${attribute('data-compressor', compressor)} title="${text(title)}">${swatch(colors.of(compressor))}${result.passed ? '✓' : '✗'}<span class="verdict-name">${text(compressor)}</span>${judgeBadge(result.judge)}</span>`;
}

/** How the probe fared at each compression point: facts passed or not, and the judge's score. */
function pointTrail(id: string, rounds: readonly PointResult[]): string {
  const steps = rounds.flatMap((round) => {
    const probe = round.probes.find((candidate) => candidate.id === id);
    if (probe === undefined) return [];
    const judge =
      probe.judge === undefined
        ? ''
        : ` ${probe.judge.status === 'scored' ? formatScore(probe.judge.overall) : probe.judge.status}`;
    return [`${formatPoint(round.point)} ${probe.passed ? '✓' : '✗'}${judge}`];
  });
  if (steps.length < 2) return '';
  return `<p class="judge-points muted">By compression point: ${text(steps.join(' · '))}</p>`;
}

/**
 * The judge's verdict on one compressor's context: the answer, then the scores (dimensions, and every
 * criterion with its reason), or what made the verdict invalid, or why the call failed.
 */
function judgement(
  compressor: string,
  judge: ProbeJudgeResult,
  rounds: readonly PointResult[],
  id: string,
  colors: Colors,
): string {
  const status =
    judge.status === 'scored'
      ? `<span class="judge-overall">overall <strong>${text(formatScore(judge.overall))}</strong> / 5</span>`
      : judge.status === 'invalid'
        ? `<span class="judge-status">invalid verdict: no usable reply in ${judge.attempts} ${judge.attempts === 1 ? 'attempt' : 'attempts'}, not scored</span>`
        : '<span class="judge-status">judge call failed, not scored</span>';
  const head = `<p class="judgement-head">${swatch(colors.of(compressor))}<strong>${text(compressor)}</strong> ${status}</p>`;
  const answer =
    judge.status === 'failed'
      ? ''
      : `<div class="judge-answer"><span class="label">Answer</span>${judge.answer === '' ? '<p class="muted">(empty)</p>' : `<p>${text(judge.answer)}</p>`}</div>`;
  let body: string;
  if (judge.status === 'failed') {
    body = `<p class="judge-error"><code>${text(judge.error)}</code></p>`;
  } else if (judge.status === 'invalid') {
    const problems = judge.problems.map(
      (problem, index) =>
        `<li><span class="label">attempt ${index + 1}</span> <code>${text(problem)}</code></li>`,
    );
    body = `<ul class="judge-problems">${problems.join('')}</ul>`;
  } else {
    const dimensions = judgeDimensions.map(
      (dimension) =>
        `<li${attribute('data-dimension', dimension)}>${text(dimension)} <strong>${text(formatScore(judge.dimensions[dimension]))}</strong></li>`,
    );
    const criteria = judge.criteria.map(
      (criterion) =>
        `<tr class="criterion"><td><code>${text(criterion.id)}</code></td><td>${text(String(criterion.weight))}</td><td class="criterion-score">${text(String(criterion.score))}</td><td class="reason">${text(criterion.reason)}</td></tr>`,
    );
    body =
      `<ul class="dimension-scores">${dimensions.join('')}</ul>` +
      `<div class="table-scroll"><table class="criteria"><thead><tr><th>criterion</th><th>weight</th><th>score</th><th class="reason">reason</th></tr></thead><tbody>${criteria.join('')}</tbody></table></div>`;
  }
  return `<div class="judgement ${judge.status}"${attribute('data-compressor', compressor)}>${head}${answer}${body}${pointTrail(id, rounds)}</div>`;
}

function probeDetails(
  id: string,
  definition: Probe | undefined,
  results: ReadonlyArray<{
    compressor: string;
    probe: JudgedProbeResult | undefined;
    rounds: readonly PointResult[];
  }>,
  colors: Colors,
): string {
  const known = results.find((entry) => entry.probe !== undefined)?.probe;
  const type = definition?.type ?? known?.type ?? 'recall';
  // Without the probe file only the lost facts are known; kept ones are then missing from this list.
  const facts = definition?.facts ?? [...new Set(results.flatMap((entry) => entry.probe?.missing ?? []))];
  const factRows = facts.map((fact) => {
    const cells = results.map(({ compressor, probe }) => {
      if (probe === undefined) return `<td class="not-run"${attribute('data-compressor', compressor)}>–</td>`;
      const kept = !probe.missing.includes(fact);
      return `<td class="${kept ? 'kept' : 'lost'}"${attribute('data-compressor', compressor)}>${kept ? '✓ kept' : '✗ lost'}</td>`;
    });
    return `<tr><td class="fact"><code>${text(fact)}</code></td>${cells.join('')}</tr>`;
  });
  const head = results
    .map(
      ({ compressor }) =>
        `<th${attribute('data-compressor', compressor)}>${swatch(colors.of(compressor))}${text(compressor)}</th>`,
    )
    .join('');
  const minFacts = definition?.minFacts ?? known?.minFacts;
  const factCount = definition?.facts.length ?? known?.facts;
  const firstOffset = definition?.firstOffset ?? known?.firstOffset;
  const meta = [
    `<code>${text(id)}</code>`,
    minFacts === undefined ? '' : `passes with ${minFacts} of ${factCount} facts`,
    firstOffset === undefined ? '' : `earliest fact at ${text(formatRate(firstOffset))} of the session`,
  ].filter((part) => part !== '');
  const answer =
    definition === undefined
      ? '<p class="muted">Only the lost facts are known: the probe file was not given to the report.</p>'
      : `<p class="answer"><strong>Reference answer.</strong> ${text(definition.answer)}</p>`;
  const judgements = results.flatMap(({ compressor, probe, rounds }) =>
    probe?.judge === undefined ? [] : [judgement(compressor, probe.judge, rounds, id, colors)],
  );
  const judged =
    judgements.length === 0
      ? ''
      : `<div class="judgements"><h4>The answerer and the judge</h4>${judgements.join('')}</div>`;
  return (
    `<details class="probe"${attribute('data-type', type)}>` +
    `<summary><span class="probe-type type-${text(type)}">${text(type)}</span><span class="probe-question">${text(definition?.question ?? id)}</span><span class="verdicts">${results.map(({ compressor, probe }) => verdict(compressor, probe, colors)).join('')}</span></summary>` +
    `<div class="probe-body"><p class="probe-meta">${meta.join(' · ')}</p>${answer}` +
    `<div class="table-scroll"><table class="facts"><thead><tr><th>fact</th>${head}</tr></thead><tbody>${factRows.join('')}</tbody></table></div>${judged}</div>` +
    '</details>'
  );
}

function drillDown(report: EvalReport, probes: ReportInput['probes'], colors: Colors): string {
  const sessions = report.sessions.map((session) => {
    const own = report.compressors.map((compressor) => ({
      compressor,
      result: report.results.find((result) => result.session === session && result.compressor === compressor),
    }));
    const definitions = probes !== undefined && Object.hasOwn(probes, session) ? probes[session] : undefined;
    const ids = [
      ...new Set([
        ...(definitions ?? []).map((probe) => probe.id),
        ...own.flatMap(({ result }) => result?.probes.map((probe) => probe.id) ?? []),
      ]),
    ];
    const first = own.find((entry) => entry.result !== undefined)?.result;
    const badges = own
      .map(({ compressor, result }) =>
        result === undefined
          ? ''
          : `<span class="session-score"${attribute('data-compressor', compressor)} title="${text(`${compressor}: ${formatPassRate(result.total)} probes passed, ${formatInteger(result.tokensAfter)} tokens after`)}">${swatch(colors.of(compressor))}${result.total.passed}/${result.total.probes}</span>`,
      )
      .join('');
    const rows = ids.map((id) =>
      probeDetails(
        id,
        definitions?.find((probe) => probe.id === id),
        own.map(({ compressor, result }) => ({
          compressor,
          probe: result?.probes.find((probe) => probe.id === id),
          // Absent from reports written before compression points existed.
          rounds: result?.points ?? [],
        })),
        colors,
      ),
    );
    const size =
      first === undefined
        ? ''
        : `<span class="muted">${text(formatInteger(first.tokensBefore))} tokens, budget ${text(formatInteger(first.budgetTokens))}</span>`;
    return `<details class="session"><summary><span class="session-name">${text(session)}</span>${size}<span class="session-scores">${badges}</span></summary><div class="probes">${rows.join('')}</div></details>`;
  });
  const judged =
    report.judge === undefined
      ? ''
      : ' and, at the end of the session, what the answerer replied and how the judge scored it';
  return `<div class="drill-down"><h3>Probes, session by session</h3><p class="muted">Open a session, then a probe, to see which of its verbatim facts each compressor kept${judged}.</p>${sessions.join('')}</div>`;
}

function budgetSection(
  view: BudgetView,
  options: { probes: ReportInput['probes']; colors: Colors; includeTime: boolean },
): string {
  const { report } = view;
  const { colors } = options;
  const probes = report.totals[0]?.total.probes ?? 0;
  return (
    `<section class="budget"${attribute('data-budget', String(view.index))} aria-labelledby="budget-${view.index}">` +
    `<h2 id="budget-${view.index}">Budget: ${text(view.heading)}</h2>` +
    `<p class="muted">${report.sessions.length} sessions, ${probes} probes.</p>` +
    `<div class="card">${totalsTable(report, colors, options.includeTime)}</div>` +
    judgeCard(report, colors) +
    pointCard(report, colors) +
    `<div class="card charts">${typeBars(report, colors)}${offsetBars(report, colors)}</div>` +
    `<div class="card"><h3>Pass rate per probe type, one radar per compressor</h3>${radars(report, colors)}</div>` +
    `<div class="card">${tokenBars(report, colors)}</div>` +
    `<div class="card">${drillDown(report, options.probes, colors)}</div>` +
    '</section>'
  );
}

function filters(views: readonly BudgetView[], compressors: readonly string[], colors: Colors): string {
  const compressorBoxes = compressors
    .map(
      (compressor) =>
        `<label class="toggle"><input type="checkbox" name="compressor"${attribute('value', compressor)} checked>${swatch(colors.of(compressor))}${text(compressor)}</label>`,
    )
    .join('');
  const typeBoxes = probeTypes
    .map(
      (type) =>
        `<label class="toggle"><input type="checkbox" name="type"${attribute('value', type)} checked>${text(type)}</label>`,
    )
    .join('');
  const budgetSelect =
    views.length < 2
      ? ''
      : `<fieldset><legend>Budget</legend><select name="budget" aria-label="budget"><option value="all">all budgets</option>${views
          .map((view) => `<option${attribute('value', String(view.index))}>${text(view.label)}</option>`)
          .join('')}</select></fieldset>`;
  return `<form id="filters" class="filters" aria-label="Filters"><fieldset><legend>Compressors</legend>${compressorBoxes}</fieldset><fieldset><legend>Probe types</legend>${typeBoxes}</fieldset>${budgetSelect}</form>`;
}

const styles = `
:root{--text:#1c2230;--muted:#5d6678;--line:#e2e6ed;--surface:#fff;--page:#f5f6f8;--pass:#0072B2;--pass-bg:#e3f0f8;--fail:#B84A00;--fail-bg:#fbebe2;
font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK JP","Hiragino Sans",sans-serif;color:var(--text);background:var(--page)}
*{box-sizing:border-box}
body{margin:0;line-height:1.5;font-size:15px}
header.page{background:var(--surface);border-bottom:1px solid var(--line)}
header.page .inner,main{max-width:1140px;margin:0 auto;padding:20px 24px}
h1{font-size:1.6rem;margin:0 0 4px;letter-spacing:-.01em}
h2{font-size:1.3rem;margin:32px 0 4px;padding-top:8px}
h3{font-size:1.02rem;margin:0 0 8px}
.muted{color:var(--muted);font-size:.9em}
.card{background:var(--surface);border:1px solid var(--line);border-radius:10px;padding:16px 20px;margin:14px 0}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,420px),1fr));gap:20px}
.chart-figure{margin:0}
figcaption{font-weight:600;font-size:.95rem;margin-bottom:6px}
.radars{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,300px),1fr));gap:8px}
.radar{margin:0;text-align:center}
svg.chart{display:block;width:100%;height:auto;font-size:11px;overflow:visible}
svg.line-chart{max-width:900px;min-width:520px}
svg.bar-chart-horizontal{min-width:600px}
.chart-figure{overflow-x:auto}
svg .grid{stroke:#e6e9ef;stroke-width:1}
svg .axis{stroke:#8b94a5;stroke-width:1}
svg .tick,svg .bar-label,svg .category,svg .axis-label{fill:var(--muted)}
svg .bar-label{paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}
svg .axis-label{font-size:12px}
svg .legend text{fill:var(--text);font-size:12px}
svg .bar{shape-rendering:crispEdges}
svg .marker{stroke:var(--text);stroke-width:1.5;stroke-dasharray:3 2}
svg .radar-ring{fill:none;stroke:#dfe3ea}
svg .radar-spoke{stroke:#dfe3ea}
svg .radar-axis{fill:var(--text);font-size:12px}
svg .radar-value{fill:var(--muted);font-size:11px}
svg .radar-area{fill-opacity:.2;stroke-width:2;stroke-linejoin:round}
svg .radar-point,svg .point{stroke:#fff;stroke-width:1.5}
svg .line{fill:none;stroke-width:2.5;stroke-linejoin:round}
.filters{position:sticky;top:0;z-index:2;display:flex;flex-wrap:wrap;gap:6px 22px;align-items:center;background:rgba(255,255,255,.96);border-bottom:1px solid var(--line);padding:8px 24px;backdrop-filter:blur(4px)}
.filters fieldset{border:0;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:4px 12px;align-items:center}
.filters legend{float:left;font-weight:600;font-size:.85rem;color:var(--muted);margin-right:4px}
.toggle{display:inline-flex;align-items:center;gap:5px;font-size:.9rem;cursor:pointer}
.swatch{display:inline-block;width:11px;height:11px;border-radius:3px;margin-right:5px;vertical-align:-1px;flex:none}
.table-scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums;font-size:.92rem}
caption{text-align:left;font-weight:600;margin-bottom:6px}
th,td{padding:6px 10px;border-bottom:1px solid var(--line);text-align:right;vertical-align:top}
th:first-child,td:first-child{text-align:left}
th[scope=row]{white-space:nowrap}
thead th{font-weight:600;color:var(--muted);font-size:.85rem;white-space:nowrap}
.meter{display:inline-block;width:70px;height:8px;background:#eef0f4;border-radius:4px;margin-right:8px;vertical-align:1px;overflow:hidden}
.meter span{display:block;height:100%}
details.session{border-top:1px solid var(--line)}
details.session>summary{display:flex;flex-wrap:wrap;gap:4px 14px;align-items:baseline;padding:10px 2px;cursor:pointer}
.session-name{font-weight:600;overflow-wrap:anywhere}
.session-scores{display:inline-flex;flex-wrap:wrap;gap:10px;margin-left:auto;font-variant-numeric:tabular-nums;font-size:.9rem}
.probes{padding:0 0 10px 14px}
details.probe{border-left:3px solid var(--line);margin:6px 0;padding:2px 0 2px 10px}
details.probe>summary{cursor:pointer;display:flex;flex-wrap:wrap;gap:4px 10px;align-items:baseline}
.probe-type{font-size:.75rem;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);border:1px solid var(--line);border-radius:4px;padding:0 5px}
.probe-question{flex:1 1 320px;overflow-wrap:anywhere}
.verdicts{display:inline-flex;flex-wrap:wrap;gap:6px}
.verdict{display:inline-flex;align-items:center;font-size:.8rem;border-radius:4px;padding:0 6px;font-weight:600}
.verdict .swatch{width:8px;height:8px}
.verdict-name{font-weight:400;margin-left:4px}
.verdict.pass{background:var(--pass-bg);color:var(--pass)}
.verdict.fail{background:var(--fail-bg);color:var(--fail)}
.probe-body{padding:6px 0 4px}
.probe-meta{margin:0 0 4px;color:var(--muted);font-size:.85rem}
.answer{margin:4px 0 8px}
td.fact{text-align:left;width:60%}
td.kept{color:var(--pass);background:var(--pass-bg)}
td.lost{color:var(--fail);background:var(--fail-bg);font-weight:600}
td.kept,td.lost{white-space:nowrap;text-align:center}
.verdict-judge{font-weight:400;margin-left:6px;padding-left:6px;border-left:1px solid currentColor}
.verdict-judge.judge-invalid,.verdict-judge.judge-failed{font-style:italic}
.judgements{margin-top:12px}
h4{font-size:.92rem;margin:0 0 6px}
.judgement{border:1px solid var(--line);border-radius:8px;padding:8px 12px;margin:8px 0}
.judgement.invalid,.judgement.failed{border-color:#efc7ad;background:var(--fail-bg)}
.judgement-head{margin:0 0 4px}
.judge-status{color:var(--fail);font-weight:600}
.label{font-size:.75rem;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);margin-right:4px}
.judge-answer p{margin:2px 0 6px;white-space:pre-wrap;overflow-wrap:anywhere}
.dimension-scores{list-style:none;display:flex;flex-wrap:wrap;gap:2px 16px;padding:0;margin:4px 0 6px;font-size:.88rem;color:var(--muted)}
.dimension-scores strong{color:var(--text);font-variant-numeric:tabular-nums}
table.judge-totals td{white-space:nowrap}
table.judge-totals .meter{width:48px}
table.judge-totals thead th{white-space:normal}
table.criteria th.reason{text-align:left}
table.criteria td.reason{text-align:left;white-space:pre-wrap;overflow-wrap:anywhere;width:55%}
td.criterion-score{font-weight:600}
.judge-problems{margin:4px 0;padding-left:20px}
.judge-error{margin:4px 0}
.judge-points{margin:6px 0 0}
.point-chart svg.line-chart{min-width:380px;max-width:640px}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Noto Sans Mono",monospace;font-size:.86em;white-space:pre-wrap;overflow-wrap:anywhere}
.is-hidden{display:none!important}
@media (max-width:640px){header.page .inner,main{padding:14px}.filters{padding:8px 14px}.card{padding:12px}}
@media print{.filters{display:none}.card{break-inside:avoid}}
`;

// Plain ES5 on purpose: it has to run wherever the file is opened, and never throw on odd names.
const script = `
(function () {
  'use strict';
  var form = document.getElementById('filters');
  if (!form) return;
  function chosen(name) {
    var values = Object.create(null);
    var inputs = form.querySelectorAll('input[name="' + name + '"]');
    for (var i = 0; i < inputs.length; i++) values[inputs[i].value] = inputs[i].checked;
    return values;
  }
  function apply() {
    var compressors = chosen('compressor');
    var types = chosen('type');
    var select = form.querySelector('select[name="budget"]');
    var budget = select ? select.value : 'all';
    var marked = document.querySelectorAll('[data-compressor],[data-type],[data-budget]');
    for (var i = 0; i < marked.length; i++) {
      var element = marked[i];
      var compressor = element.getAttribute('data-compressor');
      var type = element.getAttribute('data-type');
      var own = element.getAttribute('data-budget');
      var hidden = (compressor !== null && compressors[compressor] === false) ||
        (type !== null && types[type] === false) ||
        (own !== null && budget !== 'all' && own !== budget);
      element.classList.toggle('is-hidden', hidden);
    }
  }
  form.addEventListener('change', apply);
  form.addEventListener('submit', function (event) { event.preventDefault(); });
  apply();
})();
`;

function judgesOf(views: readonly BudgetView[]): string[] {
  return [...new Set(views.flatMap((view) => (view.report.judge === undefined ? [] : [view.report.judge])))];
}

/**
 * A self-contained HTML report of one evaluation run at one or more budgets: no network, no external
 * scripts, fonts or styles (a Content-Security-Policy enforces it). Inline SVG charts: pass rate vs budget
 * (one line per compressor), and per budget the LLM judge's scores (a table, bars per rubric dimension and
 * one radar per compressor) when a judge ran, pass rate by compression point when there are several, the
 * pass rate per probe type (grouped bars and one radar per compressor), by position of the earliest fact,
 * tokens before and after per session, and a drill-down session → probe → facts kept and lost per
 * compressor, with the answerer's answer and the judge's verdict (scores and reasons per criterion, or
 * what made it invalid, or why it failed). A small script filters by compressor, probe type
 * and budget; without it everything shows. All text is escaped; the same input gives the same bytes.
 *
 * @throws InvalidArgumentError naming the field when a report has the wrong shape (see `summarizeReports`)
 */
export function renderHtml(options: RenderHtmlOptions): string {
  const { reports, probes, title = 'precis eval', generatedAt, includeTime = false } = options;
  const summary = summarizeReports(reports);
  const palette = new Map(summary.compressors.map((compressor, index) => [compressor, chartColor(index)]));
  const colors: Colors = { of: (compressor) => palette.get(compressor) ?? chartColor(0) };
  const budgets = summary.budgets.map((view) => view.label).join(', ');
  const probeCount = summary.budgets[0]?.report.totals[0]?.total.probes ?? 0;
  const facts = [
    `${summary.sessions.length} sessions`,
    `${probeCount} probes`,
    `${summary.compressors.length} compressors`,
    `${summary.budgets.length === 1 ? 'budget' : 'budgets'} ${budgets}`,
    ...judgesOf(summary.budgets).map((judge) => `judged by ${judge}`),
    ...(generatedAt === undefined ? [] : [`generated ${generatedAt}`]),
  ];
  const overview =
    `<section class="overview" aria-labelledby="overview"><h2 id="overview">Pass rate vs budget</h2>` +
    '<p class="muted">A probe passes when enough of its verbatim facts survive in the compressed context.</p>' +
    `<div class="card">${budgetCurve(summary.budgets, summary.compressors, colors)}${budgetTable(summary.budgets, summary.compressors, colors)}</div></section>`;
  const sections = summary.budgets.map((view) => budgetSection(view, { probes, colors, includeTime }));
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">`,
    '<link rel="icon" href="data:,">',
    `<title>${text(`${title} · ${budgets}`)}</title>`,
    `<style>${styles}</style>`,
    '</head>',
    '<body>',
    `<header class="page"><div class="inner"><h1>${text(title)}</h1><p class="muted">${facts.map(text).join(' · ')}</p></div></header>`,
    filters(summary.budgets, summary.compressors, colors),
    `<main>${overview}${sections.join('')}</main>`,
    `<script>${script}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
