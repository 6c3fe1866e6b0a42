import { existsSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { InvalidArgumentError, PrecisError } from '../../errors/index.js';
import {
  type Compressor,
  headTailCompressor,
  precisCompressor,
  truncationCompressor,
} from '../../eval/compressors.js';
import { offsetBuckets, type ProbeTally } from '../../eval/fact-score.js';
import { loadProbeFile, probeTypes } from '../../eval/probes.js';
import { formatBudget } from '../../eval/report/format-values.js';
import { renderHtml } from '../../eval/report/render-html.js';
import { renderMarkdown } from '../../eval/report/render-markdown.js';
import { type EvalBudget, type EvalReport, type EvalSession, evaluateSessions } from '../../eval/run-eval.js';
import { createTokenAccountant } from '../../tokens/index.js';
import type { CliIo } from '../cli-io.js';
import { formatInteger, formatTable } from '../format-table.js';
import { parseOptions } from '../parse-options.js';
import { inputOptions, readInput } from '../read-input.js';

/**
 * `precis eval <file...> --probes <dir> --budget <N%|tokens>[,...] [--json] [--markdown FILE] [--report FILE]`:
 * compresses every session with every compressor at the same budget and reports which probes' facts
 * survived, side by side. Several budgets (`--budget 5%,10%`) run the whole evaluation once per budget;
 * `--json` then prints an array of reports instead of one. `--markdown` and `--report` (HTML) write files.
 *
 * A session without a probe file is an error naming the paths that were tried: a run that silently skips
 * sessions would report a pass rate over a different set than the user asked for.
 */
export async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOptions(argv, {
    ...inputOptions,
    probes: { type: 'string' },
    budget: { type: 'string' },
    json: { type: 'boolean' },
    markdown: { type: 'string' },
    report: { type: 'string' },
  });
  if (positionals.length === 0)
    throw new InvalidArgumentError('<file>', 'eval takes at least one session file');
  if (values.probes === undefined)
    throw new InvalidArgumentError('--probes', 'required: the directory of <session>.probes.json files');
  if (values.budget === undefined)
    throw new InvalidArgumentError(
      '--budget',
      'required: a share like 10%, a token count like 8000, or a list like 5%,10%',
    );
  const budgets = parseBudgets(values.budget);
  const probesDir = values.probes;

  // Find every probe file before importing anything: a missing one should fail fast, not after minutes.
  const probePaths = positionals.map((file) => findProbeFile(probesDir, file));
  const sessions: EvalSession[] = [];
  for (const [index, file] of positionals.entries()) {
    const probeFile = loadProbeFile(probePaths[index]!);
    if (probeFile.session !== basename(file))
      io.stderr(`warning: ${probePaths[index]} is for session "${probeFile.session}", used for ${file}\n`);
    const { conversation } = await readInput(file, values, io);
    sessions.push({ name: basename(file), conversation, probes: probeFile.probes });
  }

  const compressors: Compressor[] = [truncationCompressor, headTailCompressor, precisCompressor];

  const accountant = createTokenAccountant();
  const reports = budgets.map((budget) => evaluateSessions({ sessions, compressors, budget, accountant }));
  const probes = Object.fromEntries(sessions.map((session) => [session.name, session.probes]));
  if (values.markdown !== undefined) writeReport(values.markdown, renderMarkdown({ reports, probes }), io);
  if (values.report !== undefined) writeReport(values.report, renderHtml({ reports, probes }), io);
  if (values.json) io.stdout(`${JSON.stringify(reports.length === 1 ? reports[0] : reports, null, 2)}\n`);
  else io.stdout(`${reports.map(renderReport).join('\n\n')}\n`);
  return 0;
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
  const percent = /^(\d+(?:\.\d+)?)%$/.exec(value.trim());
  if (percent !== null) {
    const ratio = Number(percent[1]) / 100;
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
  const budget =
    'tokens' in report.budget
      ? `${formatInteger(report.budget.tokens)} tokens`
      : `${+(report.budget.ratio * 100).toFixed(2)}% of each session`;
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
    ['ratio', ...totals.map((total) => `${(100 * total.ratio).toFixed(1)}%`)],
    ['within budget', ...totals.map((total) => `${total.withinBudget}/${total.sessions}`)],
    ['time', ...totals.map((total) => `${total.timeMs.toFixed(0)} ms`)],
  ];
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
