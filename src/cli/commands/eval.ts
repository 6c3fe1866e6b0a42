import { existsSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { InvalidArgumentError, PrecisError } from '../../errors/index.js';
import { checkCompressionPoints } from '../../eval/compression-points.js';
import { type Compressor, parseCompressorList, truncationCompressor } from '../../eval/compressors.js';
import { createEvalCache, type EvalCache } from '../../eval/eval-cache.js';
import { offsetBuckets, type ProbeTally } from '../../eval/fact-score.js';
import { generateProbes } from '../../eval/generate-probes.js';
import { createJudge, type Judge, judgeDimensions } from '../../eval/judge.js';
import { loadProbeFile, type Probe, probeTypes } from '../../eval/probes.js';
import { describeBudget, formatBudget, formatPoint, formatRate } from '../../eval/report/format-values.js';
import { pointTotals } from '../../eval/report/point-totals.js';
import { renderHtml } from '../../eval/report/render-html.js';
import { renderMarkdown } from '../../eval/report/render-markdown.js';
import {
  type EvalBudget,
  type EvalProgress,
  type EvalReport,
  type EvalSession,
  runEval,
} from '../../eval/run-eval.js';
import { createLlmClient } from '../../llm/create-llm-client.js';
import { createTokenAccountant } from '../../tokens/index.js';
import type { CliIo } from '../cli-io.js';
import { formatInteger, formatTable } from '../format-table.js';
import { parseOptions, positiveInteger } from '../parse-options.js';
import { inputOptions, readInput } from '../read-input.js';

/** Used when `--strategies` is not given. */
const defaultStrategyList = 'truncation,head+tail,precis';

/**
 * `precis eval <file...> (--probes DIR | --generate) --budget N%[,M%] [--strategies a,b,c] [--points 0.5,1]
 * [--judge SPEC] [--concurrency N] [--cache FILE] [--json] [--markdown FILE] [--report FILE] [--min-pass X]`:
 * compresses every session with every strategy at the same budget (and compression points) and reports which
 * probes' facts survived, side by side, plain truncation always among them as the baseline. Several budgets
 * run the whole evaluation once per budget; `--json` then prints an array of reports instead of one.
 *
 * `--judge` adds the LLM answerer and judge (Factory's rubric) on every probe, `--concurrency` calls at a time,
 * with scores kept in `--cache` so a re-run skips them. `--min-pass X` exits 1 when any strategy but
 * truncation passes less than X of the probes (fact check, last point) at any budget: a CI gate.
 *
 * A session without a probe file is an error naming the paths that were tried, and a file that is not a
 * session is an error naming it: a run that silently skips inputs would report over another set than asked.
 */
export async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOptions(argv, {
    ...inputOptions,
    probes: { type: 'string' },
    generate: { type: 'boolean' },
    budget: { type: 'string' },
    strategies: { type: 'string' },
    points: { type: 'string' },
    judge: { type: 'string' },
    concurrency: { type: 'string' },
    cache: { type: 'string' },
    'min-pass': { type: 'string' },
    json: { type: 'boolean' },
    markdown: { type: 'string' },
    report: { type: 'string' },
  });
  if (positionals.length === 0)
    throw new InvalidArgumentError('<file>', 'eval takes at least one session file');
  if (values.probes === undefined && values.generate !== true)
    throw new InvalidArgumentError(
      '--probes',
      'required: the directory of <session>.probes.json files (or --generate to derive probes from each session)',
    );
  if (values.probes !== undefined && values.generate === true)
    throw new InvalidArgumentError('--generate', 'give either --probes DIR or --generate, not both');
  if (values.budget === undefined)
    throw new InvalidArgumentError(
      '--budget',
      'required: a share like 10%, a token count like 8000, or a list like 5%,10%',
    );
  const budgets = parseBudgets(values.budget);
  const compressors = withBaseline(
    parseCompressorList(values.strategies ?? defaultStrategyList, '--strategies'),
  );
  const points = values.points === undefined ? [1] : parsePoints(values.points);
  const minPass = values['min-pass'] === undefined ? undefined : parseMinPass(values['min-pass']);
  const concurrency = positiveInteger('--concurrency', values.concurrency) ?? 4;
  // Build the judge before reading anything: a missing key should fail at once.
  const judge: Judge | undefined =
    values.judge === undefined
      ? undefined
      : createJudge({ client: createLlmClient({ llm: values.judge, env: io.env }) });
  const cache: EvalCache | undefined =
    values.cache === undefined ? undefined : createEvalCache({ path: values.cache });

  const probesDir = values.probes;
  // Find every probe file before importing anything: a missing one should fail fast, not after minutes.
  const probePaths = probesDir === undefined ? [] : positionals.map((file) => findProbeFile(probesDir, file));
  const sessions: EvalSession[] = [];
  for (const [index, file] of positionals.entries()) {
    const { conversation } = await readSession(file, values, io);
    let probes: Probe[];
    if (probesDir === undefined) probes = generateProbes(conversation, { session: basename(file) }).probes;
    else {
      const probeFile = loadProbeFile(probePaths[index]!);
      if (probeFile.session !== basename(file))
        io.stderr(`warning: ${probePaths[index]} is for session "${probeFile.session}", used for ${file}\n`);
      probes = probeFile.probes;
    }
    sessions.push({ name: basename(file), conversation, probes });
  }

  const accountant = createTokenAccountant();
  const progress = progressBar(io);
  const reports: EvalReport[] = [];
  for (const [index, budget] of budgets.entries()) {
    reports.push(
      await runEval({
        sessions,
        compressors,
        budget,
        points,
        accountant,
        concurrency,
        ...(judge === undefined ? {} : { judge }),
        ...(cache === undefined ? {} : { cache }),
        ...(progress === undefined
          ? {}
          : {
              onProgress: (event: EvalProgress) =>
                progress(event, `${formatBudget(budget)} (${index + 1}/${budgets.length})`),
            }),
      }),
    );
  }
  if (progress !== undefined) io.stderr('\r\x1b[2K');
  const probes = Object.fromEntries(sessions.map((session) => [session.name, session.probes]));
  if (values.markdown !== undefined) writeReport(values.markdown, renderMarkdown({ reports, probes }), io);
  if (values.report !== undefined) writeReport(values.report, renderHtml({ reports, probes }), io);
  if (values.json) io.stdout(`${JSON.stringify(reports.length === 1 ? reports[0] : reports, null, 2)}\n`);
  else io.stdout(`${reports.map(renderReport).join('\n\n')}\n`);

  if (minPass === undefined) return 0;
  const below = belowMinPass(reports, minPass);
  for (const line of below) io.stderr(`below --min-pass ${minPass}: ${line}\n`);
  return below.length === 0 ? 0 : 1;
}

/** Reads one session; a file precis cannot read as a session is named as such. */
async function readSession(file: string, values: Parameters<typeof readInput>[1], io: CliIo) {
  try {
    return await readInput(file, values, io);
  } catch (error) {
    if (PrecisError.isInstance(error) && error.code === 'unsupported-format')
      throw new PrecisError(
        'unsupported-format',
        `${file} is not a session transcript; eval takes session files only (${error.message})`,
        { cause: error },
      );
    throw error;
  }
}

/** Plain truncation first, added when the list lacks it: every comparison needs the baseline. */
function withBaseline(compressors: Compressor[]): Compressor[] {
  return compressors.some((compressor) => compressor.name === truncationCompressor.name)
    ? compressors
    : [truncationCompressor, ...compressors];
}

/** `50%` as a number (0.5); undefined when the value is not a percentage. */
function parsePercent(value: string): number | undefined {
  const percent = /^(\d+(?:\.\d+)?)%$/.exec(value.trim());
  return percent === null ? undefined : Number(percent[1]) / 100;
}

/** `0.5` or `50%` as a number (0.5); NaN for anything else, so a caller's range check rejects it. */
function parseShare(value: string): number {
  const text = value.trim();
  return parsePercent(text) ?? (/^\d*\.?\d+$/.test(text) ? Number(text) : Number.NaN);
}

/** `0.5,1` or `25%,100%`: compression points in (0, 1]. */
export function parsePoints(value: string): number[] {
  const points = value.split(',').map((item) => {
    const point = parseShare(item);
    if (!(point > 0 && point <= 1))
      throw new InvalidArgumentError(
        '--points',
        `expected shares in (0, 1] like 0.5,1 or 50%,100%, got "${item}"`,
      );
    return point;
  });
  return checkCompressionPoints(points);
}

/** `0.5` or `50%`. */
export function parseMinPass(value: string): number {
  const share = parseShare(value);
  if (!(share >= 0 && share <= 1))
    throw new InvalidArgumentError('--min-pass', `expected a share from 0 to 1 (or 0-100%), got "${value}"`);
  return share;
}

/** Each strategy other than truncation below `minPass` at some budget, described. */
export function belowMinPass(reports: readonly EvalReport[], minPass: number): string[] {
  return reports.flatMap((report) =>
    report.totals
      .filter((total) => total.compressor !== truncationCompressor.name && total.total.passRate < minPass)
      .map(
        (total) =>
          `${total.compressor} passed ${total.total.passed}/${total.total.probes} (${formatRate(total.total.passRate)}) at ${formatBudget(report.budget)}`,
      ),
  );
}

/** `[#####-----] 12/40 judge 10%`, fitting `width` cells for the bar. */
export function renderProgressBar(progress: EvalProgress, label: string, width = 24): string {
  const share = progress.total === 0 ? 1 : progress.done / progress.total;
  const filled = Math.round(share * width);
  const cached = progress.phase === 'judge' && progress.cached > 0 ? `, ${progress.cached} cached` : '';
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${progress.done}/${progress.total} ${progress.phase} ${label}${cached}`;
}

/** A bar redrawn in place on stderr, only when stderr is a terminal (never in logs or pipes). */
function progressBar(io: CliIo): ((progress: EvalProgress, label: string) => void) | undefined {
  if (io.stderrIsTerminal !== true) return undefined;
  return (progress, label) => io.stderr(`\r\x1b[2K${renderProgressBar(progress, label)}`);
}

function writeReport(path: string, content: string, io: CliIo): void {
  try {
    writeFileSync(path, content);
  } catch (error) {
    throw new PrecisError('io-error', `${path}: ${(error as Error).message}`, { cause: error });
  }
  io.stderr(`wrote ${path}\n`);
}

/** `10%`, `8000`, or a comma-separated list of them (`5%,10%`), each budget once. */
export function parseBudgets(value: string): EvalBudget[] {
  const budgets = value.split(',').map(parseBudget);
  const labels = budgets.map(formatBudget);
  const repeated = labels.find((label, index) => labels.indexOf(label) !== index);
  if (repeated !== undefined) throw new InvalidArgumentError('--budget', `${repeated} is given twice`);
  return budgets;
}

/** `10%` (a share of each session's tokens) or `8000` (tokens). */
export function parseBudget(value: string): EvalBudget {
  const ratio = parsePercent(value);
  if (ratio !== undefined) {
    if (ratio > 0 && ratio <= 1) return { ratio };
  } else if (/^\d+$/.test(value.trim()) && Number(value) > 0) {
    return { tokens: Number(value) };
  }
  throw new InvalidArgumentError(
    '--budget',
    `expected a share like 10% (0-100%) or a token count, got "${value}"`,
  );
}

/**
 * `<dir>/<name>.probes.json`, where name is the session's file name and then that name with one extension
 * less at a time: `a.openai.json` finds `a.openai.json.probes.json`, `a.openai.probes.json` or `a.probes.json`.
 */
export function findProbeFile(probesDir: string, sessionFile: string): string {
  const name = basename(sessionFile);
  const tried: string[] = [];
  for (let stem = name; stem !== ''; ) {
    const candidate = join(probesDir, `${stem}.probes.json`);
    if (existsSync(candidate)) return candidate;
    tried.push(candidate);
    const dot = stem.lastIndexOf('.');
    stem = dot <= 0 ? '' : stem.slice(0, dot);
  }
  throw new PrecisError('io-error', `${sessionFile}: no probe file (tried ${tried.join(', ')})`);
}

const percent = (tally: ProbeTally) =>
  tally.probes === 0 ? '-' : `${tally.passed}/${tally.probes} ${(100 * tally.passRate).toFixed(0)}%`;

function renderReport(report: EvalReport): string {
  const { compressors } = report;
  const budget = describeBudget(report.budget);
  const align = (count: number) => ['left', ...Array<'right'>(count).fill('right')] as const;
  const sessionRows = report.sessions.map((session) => {
    const own = report.results.filter((result) => result.session === session);
    const first = own[0]!;
    return [
      session,
      formatInteger(first.tokensBefore),
      formatInteger(first.budgetTokens),
      ...compressors.map((name) => {
        const result = own.find((candidate) => candidate.compressor === name)!;
        return `${percent(result.total)}${result.withinBudget ? '' : ' (over)'}`;
      }),
    ];
  });
  const totals = report.totals;
  const before = totals[0]?.tokensBefore ?? 0;
  sessionRows.push(['total', formatInteger(before), '', ...totals.map((total) => percent(total.total))]);
  const breakdown: string[][] = [
    ...probeTypes.map((type) => [type, ...totals.map((total) => percent(total.byType[type]))]),
    ...offsetBuckets.map((bucket) => [
      `first_offset ${bucket}`,
      ...totals.map((total) => percent(total.byOffset[bucket])),
    ]),
    [
      'fact survival',
      ...totals.map(
        (total) =>
          `${total.total.factsKept}/${total.total.facts} ${(100 * total.total.factSurvival).toFixed(0)}%`,
      ),
    ],
    ['tokens after', ...totals.map((total) => formatInteger(total.tokensAfter))],
    ['ratio', ...totals.map((total) => formatRate(total.ratio))],
    ['within budget', ...totals.map((total) => `${total.withinBudget}/${total.sessions}`)],
    ['time', ...totals.map((total) => `${total.timeMs.toFixed(0)} ms`)],
  ];
  if (report.points.length > 1) {
    const byCompressor = report.compressors.map((compressor) => pointTotals(report, compressor));
    report.points.forEach((point, index) => {
      breakdown.push([
        `at ${formatPoint(point)} of the session`,
        ...byCompressor.map((totals) => percent(totals[index]!.total)),
      ]);
    });
  }
  if (report.judge !== undefined) {
    const score = (value: number | undefined) => (value === undefined ? '-' : value.toFixed(2));
    breakdown.push(
      ['judge overall (0-5)', ...totals.map((total) => score(total.judge?.overall))],
      ...judgeDimensions.map((dimension) => [
        `  ${dimension}`,
        ...totals.map((total) => score(total.judge?.dimensions[dimension])),
      ]),
      [
        'judged (scored/invalid/failed)',
        ...totals.map((total) =>
          total.judge === undefined
            ? '-'
            : `${total.judge.scored}/${total.judge.invalid}/${total.judge.failed}`,
        ),
      ],
    );
  }
  return [
    `Probes passed at a budget of ${budget} (o200k tokens, openai framing)`,
    '',
    formatTable(['session', 'tokens', 'budget', ...compressors], sessionRows, [
      ...align(2 + compressors.length),
    ]),
    '',
    'All sessions',
    formatTable(['', ...compressors], breakdown, [...align(compressors.length)]),
  ].join('\n');
}
