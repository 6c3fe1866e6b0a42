import { InvalidArgumentError } from '../errors/index.js';
import { describeValue } from '../internal/json-shapes.js';
import { compactJsonOutputs } from '../strategies/compact-json-outputs/compact-json-outputs.js';
import { deduplicate } from '../strategies/deduplicate/deduplicate.js';
import { dropOldestTurns } from '../strategies/drop-oldest-turns/drop-oldest-turns.js';
import { dynamicImportance } from '../strategies/dynamic-importance/dynamic-importance.js';
import { elideBlobs } from '../strategies/elide-blobs/elide-blobs.js';
import { extractiveProse } from '../strategies/extractive-prose/extractive-prose.js';
import { foldIntoSummary } from '../strategies/fold-into-summary/fold-into-summary.js';
import { llmAnchored } from '../strategies/llm-anchored/llm-anchored.js';
import { llmProgressive } from '../strategies/llm-progressive/llm-progressive.js';
import { llmSummarize } from '../strategies/llm-summarize/llm-summarize.js';
import type { LlmSummaryOptions } from '../strategies/llm-support.js';
import { pruneCodeBodies } from '../strategies/prune-code-bodies/prune-code-bodies.js';
import { removeFiller } from '../strategies/remove-filler/remove-filler.js';
import type { AnyStrategy, AsyncStrategy, Strategy } from '../strategies/strategy.js';
import { stripReasoning } from '../strategies/strip-reasoning/strip-reasoning.js';
import { stubDemonstrations } from '../strategies/stub-demonstrations/stub-demonstrations.js';
import { stubToolOutputs } from '../strategies/stub-tool-outputs/stub-tool-outputs.js';

/**
 * The deterministic strategies by name, as the engine tunes them. They get `keepRecentTurns: 0`: recency is the
 * engine's job, carried by the preserved ids (which never split a tool call from its results), so a long agent
 * loop under a single user message is still compressible. Size thresholds are lower than the strategies' own
 * defaults because strategies handle candidates largest first and stop at the budget: a low threshold only
 * matters when the budget is tight.
 */
const factories = {
  'strip-reasoning': () => stripReasoning({ keepRecentTurns: 0 }),
  'remove-filler': () => removeFiller(),
  'compact-json-outputs': () => compactJsonOutputs({ minTokens: 50 }),
  'elide-blobs': () => elideBlobs(),
  'stub-demonstrations': () => stubDemonstrations(),
  'stub-tool-outputs': () => stubToolOutputs({ minTokens: 100, keepRecentTurns: 0 }),
  deduplicate: () => deduplicate({ minTokens: 100, keepRecentTurns: 0 }),
  'extractive-prose': () => extractiveProse({ minTokens: 200, keepRecentTurns: 0 }),
  'prune-code-bodies': () => pruneCodeBodies({ minTokens: 200, keepRecentTurns: 0 }),
  'fold-into-summary': () => foldIntoSummary(),
  'drop-oldest-turns': () => dropOldestTurns(),
  'dynamic-importance': () => dynamicImportance(),
} satisfies Record<string, () => Strategy>;

export type StrategyName = keyof typeof factories;
export const strategyNames = Object.keys(factories) as StrategyName[];

/** The summarizer and its call settings, for the strategies that need an LLM. */
export type NamedLlmOptions = Pick<
  LlmSummaryOptions,
  'client' | 'timeoutMs' | 'baseURL' | 'redact' | 'summarizerWindowTokens' | 'maxCalls'
>;

/**
 * The strategies that call an LLM, by name. Recency is the engine's job here too (`preserveRecentMessages: 0`).
 * `llm-summarize` and `llm-progressive` leave a span unchanged when the LLM fails, so a deterministic strategy
 * after them (`fold-into-summary`) should follow; `llm-anchored` falls back to the deterministic fold itself.
 */
const llmFactories = {
  'llm-summarize': (llm: NamedLlmOptions) => llmSummarize({ ...llm, preserveRecentMessages: 0 }),
  'llm-progressive': (llm: NamedLlmOptions) => llmProgressive({ ...llm, preserveRecentMessages: 0 }),
  'llm-anchored': (llm: NamedLlmOptions) => llmAnchored(llm),
} satisfies Record<string, (llm: NamedLlmOptions) => AsyncStrategy>;

export type LlmStrategyName = keyof typeof llmFactories;
export const llmStrategyNames = Object.keys(llmFactories) as LlmStrategyName[];

export interface NamedStrategiesOptions {
  /** The LLM for the strategies that need one (`llmStrategyNames`); with it, the default pipeline uses `llm-anchored`. */
  llm?: NamedLlmOptions;
}

/** The default pipeline's names, cheapest and most faithful first (see ARCHITECTURE.md). */
export const defaultStrategyNames: readonly StrategyName[] = [
  'strip-reasoning',
  'remove-filler',
  'compact-json-outputs',
  'elide-blobs',
  'stub-demonstrations',
  'stub-tool-outputs',
  'deduplicate',
  'extractive-prose',
  'prune-code-bodies',
  'fold-into-summary',
];

/** The default pipeline's names with an LLM: `llm-anchored` in place of `fold-into-summary`. */
export const defaultLlmStrategyNames: readonly (StrategyName | LlmStrategyName)[] = defaultStrategyNames.map(
  (name) => (name === 'fold-into-summary' ? 'llm-anchored' : name),
);

/**
 * The default pipeline: strip old reasoning, remove filler, compact JSON outputs, elide encoded blobs (base64
 * images, hex dumps) in outputs and texts, archive in-context examples
 * and harness notes in front of the task, stub large tool outputs, stub
 * near-duplicates, shorten long prose, prune code bodies, and as a last resort drop the oldest turns, folding
 * them into one anchored summary (`foldIntoSummary`, which runs `dropOldestTurns` and gives the summary up to
 * 65% of the budget). Every strategy stops as soon as the budget holds.
 */
export function defaultStrategies(): Strategy[];
/** With `llm`, `llm-anchored` (the LLM writes the summary's prose) takes the place of `fold-into-summary`. */
export function defaultStrategies(options: NamedStrategiesOptions): AnyStrategy[];
export function defaultStrategies(options: NamedStrategiesOptions = {}): AnyStrategy[] {
  return strategiesByName(['default'], 'strategies', options);
}

/**
 * Strategies by name, in the given order (`default` stands for the default pipeline), for CLIs and config
 * files: `strategiesByName(['stub-tool-outputs', 'fold-into-summary'])`. The LLM strategies
 * (`llm-summarize`, `llm-progressive`, `llm-anchored`) need `options.llm`; with it, `default` is the pipeline
 * of `defaultLlmStrategyNames`.
 *
 * @throws InvalidArgumentError naming `option` and listing the known names when a name is unknown, or saying
 *   to pass an LLM when a name needs one and there is none
 */
export function strategiesByName(names: readonly string[], option?: string): Strategy[];
export function strategiesByName(
  names: readonly string[],
  option: string,
  options: NamedStrategiesOptions,
): AnyStrategy[];
export function strategiesByName(
  names: readonly string[],
  option = 'strategies',
  options: NamedStrategiesOptions = {},
): AnyStrategy[] {
  if (!Array.isArray(names) || names.length === 0)
    throw new InvalidArgumentError(
      option,
      `expected a non-empty list of strategy names, got ${describeValue(names)}`,
    );
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', `expected an options object, got ${describeValue(options)}`);
  const { llm } = options;
  if (llm !== undefined && (typeof llm !== 'object' || llm === null))
    throw new InvalidArgumentError('llm', `expected LLM options with a client, got ${describeValue(llm)}`);
  const build = (name: string): AnyStrategy => {
    if (Object.hasOwn(factories, name)) return factories[name as StrategyName]();
    if (!Object.hasOwn(llmFactories, name))
      throw new InvalidArgumentError(
        option,
        `unknown strategy ${JSON.stringify(name)}; expected default or one of ${[...strategyNames, ...llmStrategyNames].join(', ')}`,
      );
    if (llm === undefined)
      throw new InvalidArgumentError(
        option,
        `${name} needs an LLM: ${option.startsWith('--') ? 'pass --llm <spec> (or set PRECIS_LLM)' : 'pass the llm option'}`,
      );
    return llmFactories[name as LlmStrategyName](llm);
  };
  return names.flatMap((name) => {
    if (name !== 'default') return [build(name)];
    return (llm === undefined ? defaultStrategyNames : defaultLlmStrategyNames).map(build);
  });
}
