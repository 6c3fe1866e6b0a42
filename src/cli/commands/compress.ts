import { resolve } from 'node:path';
import { createMemoryArchive } from '../../archive/archive-store.js';
import { createSqliteArchive, type SqliteArchive } from '../../archive/sqlite-archive.js';
import { type CompactResult, compactAsync } from '../../engine/compact.js';
import { defaultStrategies, type NamedLlmOptions, strategiesByName } from '../../engine/named-strategies.js';
import { recogniseStrategyName } from '../../engine/recognise-summaries.js';
import { InvalidArgumentError, PrecisError } from '../../errors/index.js';
import { createLlmClient } from '../../llm/create-llm-client.js';
import { type LlmConfig, parseLlmSpec, resolveLlmConfig } from '../../llm/llm-config.js';
import type { AnyStrategy } from '../../strategies/strategy.js';
import { createTokenAccountant } from '../../tokens/index.js';
import type { CliIo } from '../cli-io.js';
import { formatInteger, formatPercent, formatTable } from '../format-table.js';
import { oneOf, parseOptions } from '../parse-options.js';
import { inputOptions, readInput } from '../read-input.js';
import { formatConversionWarning, outputFormats, renderOutput } from '../render-output.js';

/** Where the CLI keeps archived originals unless told otherwise, relative to the working directory. */
export const defaultStorePath = '.precis/archive.db';

/**
 * `precis compress <file> --budget <tokens|N%>`: compacts any supported transcript to the budget, writes the
 * result in the `--to` format on stdout and a short report on stderr (`--report`: the full report as JSON).
 * `--keep-recent N` turns stay byte-identical, as long as they take at most `--recent-share` (default a third)
 * of the room the system prompt and the task leave.
 * Originals go to a SQLite archive (`.precis/archive.db`, `--store PATH`) so `precis expand <handle>` can read
 * them back; `--no-store` keeps them in memory only. `--strict` stops at the first bad record and fails
 * (exit 1, `budget-exceeded`) when the budget cannot be met.
 *
 * With an LLM (`--llm <spec>`, or `PRECIS_LLM`; keys from the environment), the default pipeline folds old
 * turns with `llm-anchored` (the LLM writes the summary's prose) and `--strategy` accepts the LLM strategies;
 * `--llm-timeout <ms>` bounds each HTTP attempt. The report names the LLM; when it fails, the result is still
 * valid and within budget (the deterministic fold takes over) and the warning says so.
 */
export async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOptions(argv, {
    ...inputOptions,
    budget: { type: 'string', short: 'b' },
    to: { type: 'string' },
    'keep-recent': { type: 'string' },
    'recent-share': { type: 'string' },
    strategy: { type: 'string' },
    report: { type: 'boolean' },
    store: { type: 'string' },
    'no-store': { type: 'boolean' },
    llm: { type: 'string' },
    'llm-timeout': { type: 'string' },
  });
  const [file, ...extra] = positionals;
  if (file === undefined || extra.length > 0)
    throw new PrecisError('invalid-argument', 'compress takes exactly one input file');
  if (values.budget === undefined)
    throw new InvalidArgumentError(
      '--budget',
      'is required: a token count (8000) or a share of the input (10%)',
    );
  const to = oneOf('--to', values.to, outputFormats) ?? 'precis';
  const keepRecentTurns = nonNegativeInteger('--keep-recent', values['keep-recent']);
  const recentTurnsMaxShare = parseShare('--recent-share', values['recent-share']);
  const llmConfig = resolveCliLlm(values.llm, values['llm-timeout'], io.env);
  const llm: NamedLlmOptions | undefined =
    llmConfig === undefined
      ? undefined
      : {
          client: createLlmClient({ config: llmConfig }),
          baseURL: llmConfig.baseURL,
          ...(llmConfig.timeoutMs === undefined ? {} : { timeoutMs: llmConfig.timeoutMs }),
        };
  const names = values.strategy?.split(',').map((name) => name.trim());
  let strategies: AnyStrategy[] | undefined;
  if (llm === undefined) strategies = names === undefined ? undefined : strategiesByName(names, '--strategy');
  else
    strategies =
      names === undefined ? defaultStrategies({ llm }) : strategiesByName(names, '--strategy', { llm });
  if (values.store !== undefined && values['no-store'] === true)
    throw new InvalidArgumentError('--no-store', 'cannot be combined with --store');

  const loaded = await readInput(file, values, io);
  const provider = to === 'openai' || to === 'anthropic' ? to : 'any';
  const accountant = createTokenAccountant(provider === 'any' ? {} : { provider });
  const tokensBefore = accountant.countTotal(loaded.conversation);
  const budgetTokens = parseBudget(values.budget, tokensBefore);

  const storePath = values['no-store'] === true ? undefined : resolve(values.store ?? defaultStorePath);
  const archive: SqliteArchive | undefined =
    storePath === undefined ? undefined : createSqliteArchive({ path: storePath });
  let result: CompactResult;
  try {
    result = await compactAsync(loaded.conversation, {
      budgetTokens,
      provider,
      accountant,
      archive: archive ?? createMemoryArchive(),
      strict: values.strict === true,
      ...(keepRecentTurns === undefined ? {} : { keepRecentTurns }),
      ...(recentTurnsMaxShare === undefined ? {} : { recentTurnsMaxShare }),
      ...(strategies === undefined ? {} : { strategies }),
    });
  } finally {
    archive?.close();
  }

  const { output, warnings } = renderOutput(result.conversation, to);
  io.stdout(`${JSON.stringify(output, null, 2)}\n`);
  for (const repair of result.report.repairs)
    io.stderr(`repair: message ${repair.index}: ${repair.description}\n`);
  for (const warning of warnings) io.stderr(formatConversionWarning(warning));
  for (const warning of result.warnings) io.stderr(`warning: ${warning.message}\n`);
  if (llm !== undefined) io.stderr(`llm: ${llm.client.id} (${llmUse(result)})\n`);
  io.stderr(`${summary(result, storePath, values.store ?? defaultStorePath)}\n`);
  if (values.report === true) io.stderr(`${JSON.stringify(result.report, null, 2)}\n`);
  return 0;
}

/**
 * The LLM configuration from `--llm` (named in its errors), else `PRECIS_LLM` in `env`; undefined when neither
 * names one. `--llm-timeout` needs one of them.
 */
function resolveCliLlm(
  spec: string | undefined,
  timeout: string | undefined,
  env: Record<string, string | undefined>,
): LlmConfig | undefined {
  let timeoutMs: number | undefined;
  if (timeout !== undefined) {
    timeoutMs = Number(timeout);
    if (!(/^\d+$/.test(timeout.trim()) && Number.isSafeInteger(timeoutMs) && timeoutMs > 0))
      throw new InvalidArgumentError(
        '--llm-timeout',
        `expected a positive number of milliseconds, got "${timeout}"`,
      );
  }
  const config = resolveLlmConfig({
    ...(spec === undefined ? {} : { llm: parseLlmSpec(spec, '--llm') }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    env,
  });
  if (config === undefined && timeoutMs !== undefined)
    throw new InvalidArgumentError('--llm-timeout', 'needs an LLM: pass --llm <spec> or set PRECIS_LLM');
  return config;
}

/** What the LLM did, from the report: the actions it wrote or took part in, and its fallbacks. */
function llmUse(result: CompactResult): string {
  const used = result.report.actions.filter(
    (action) => action.type === 'llm-summary' || action.description.includes('prose sections by'),
  ).length;
  const fallbacks = result.warnings.filter(
    (warning) => warning.type === 'strategy-warning' && warning.strategy.startsWith('llm-'),
  ).length;
  return `${used} ${used === 1 ? 'summary' : 'summaries'} written with it, ${fallbacks} ${fallbacks === 1 ? 'warning' : 'warnings'}`;
}

/** `8000` tokens, or `10%` / `12.5%` of the input's tokens (rounded down). */
export function parseBudget(value: string, tokensBefore: number): number {
  const share = /^(\d+(?:\.\d+)?)%$/.exec(value.trim());
  if (share !== null) {
    const percent = Number(share[1]);
    if (!(percent > 0 && percent <= 100))
      throw new InvalidArgumentError('--budget', `a share must be in (0%, 100%], got "${value}"`);
    return Math.floor((tokensBefore * percent) / 100);
  }
  const tokens = Number(value);
  if (!(/^\d+$/.test(value.trim()) && Number.isSafeInteger(tokens) && tokens > 0))
    throw new InvalidArgumentError(
      '--budget',
      `expected a token count (8000) or a share (10%), got "${value}"`,
    );
  return tokens;
}

/** A share above 0 and at most 1, as `0.5` or `50%`. */
function parseShare(option: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d+(?:\.\d+)?)(%?)$/.exec(value.trim());
  const share = match === null ? Number.NaN : Number(match[1]) / (match[2] === '%' ? 100 : 1);
  if (!(share > 0 && share <= 1))
    throw new InvalidArgumentError(
      option,
      `expected a share above 0 and at most 1 (0.5 or 50%), got "${value}"`,
    );
  return share;
}

function nonNegativeInteger(option: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!(/^\d+$/.test(value.trim()) && Number.isSafeInteger(number)))
    throw new InvalidArgumentError(option, `expected a non-negative integer, got "${value}"`);
  return number;
}

function summary(result: CompactResult, storePath: string | undefined, shownPath: string): string {
  const { report } = result;
  const handles = new Set(
    report.actions.flatMap((action) => (action.handle === undefined ? [] : [action.handle])),
  );
  const lines = [
    `compressed ${formatInteger(report.tokensBefore)} → ${formatInteger(report.tokensAfter)} tokens ` +
      `(${formatPercent(report.tokensAfter, report.tokensBefore)}; budget ${formatInteger(report.budgetTokens)}: ` +
      `${report.withinBudget ? 'met' : 'NOT met'}), ${result.messages.length} messages, ${report.actions.length} actions`,
  ];
  if (report.strategies.length > 0) {
    lines.push(
      formatTable(
        ['strategy', 'before', 'after', 'actions'],
        report.strategies.map((strategy) => [
          strategy.name,
          formatInteger(strategy.tokensBefore),
          formatInteger(strategy.tokensAfter),
          formatInteger(strategy.actions),
        ]),
        ['left', 'right', 'right', 'right'],
      ),
    );
  }
  const recognised = report.actions.filter((action) => action.strategy === recogniseStrategyName).length;
  if (recognised > 0)
    lines.push(
      `${recognised === 1 ? 'a summary' : `${recognised} summaries`} read back from the text (no precis metadata): merged into, not summarised again`,
    );
  if (handles.size === 0) lines.push('nothing archived');
  else if (storePath === undefined)
    lines.push(
      `${handles.size} originals archived in memory only (--no-store): their handles cannot be expanded later`,
    );
  else {
    const store = shownPath === defaultStorePath ? '' : ` --store ${shownPath}`;
    lines.push(`${handles.size} originals archived in ${storePath} (precis expand <handle>${store})`);
  }
  return lines.join('\n');
}
