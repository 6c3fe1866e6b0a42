import { InvalidArgumentError } from '../errors/index.js';
import { describeValue } from '../internal/json-shapes.js';
import { compactJsonOutputs } from '../strategies/compact-json-outputs/compact-json-outputs.js';
import { deduplicate } from '../strategies/deduplicate/deduplicate.js';
import { dropOldestTurns } from '../strategies/drop-oldest-turns/drop-oldest-turns.js';
import { extractiveProse } from '../strategies/extractive-prose/extractive-prose.js';
import { foldIntoSummary } from '../strategies/fold-into-summary/fold-into-summary.js';
import { pruneCodeBodies } from '../strategies/prune-code-bodies/prune-code-bodies.js';
import { removeFiller } from '../strategies/remove-filler/remove-filler.js';
import type { Strategy } from '../strategies/strategy.js';
import { stripReasoning } from '../strategies/strip-reasoning/strip-reasoning.js';
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
  'stub-tool-outputs': () => stubToolOutputs({ minTokens: 100, keepRecentTurns: 0 }),
  deduplicate: () => deduplicate({ minTokens: 100, keepRecentTurns: 0 }),
  'extractive-prose': () => extractiveProse({ minTokens: 200, keepRecentTurns: 0 }),
  'prune-code-bodies': () => pruneCodeBodies({ minTokens: 200, keepRecentTurns: 0 }),
  'fold-into-summary': () => foldIntoSummary(),
  'drop-oldest-turns': () => dropOldestTurns(),
} satisfies Record<string, () => Strategy>;

export type StrategyName = keyof typeof factories;
export const strategyNames = Object.keys(factories) as StrategyName[];

/** The default pipeline's names, cheapest and most faithful first (see ARCHITECTURE.md). */
export const defaultStrategyNames: readonly StrategyName[] = [
  'strip-reasoning',
  'remove-filler',
  'compact-json-outputs',
  'stub-tool-outputs',
  'deduplicate',
  'extractive-prose',
  'prune-code-bodies',
  'fold-into-summary',
];

/**
 * The default pipeline: strip old reasoning, remove filler, compact JSON outputs, stub large tool outputs, stub
 * near-duplicates, shorten long prose, prune code bodies, and as a last resort drop the oldest turns, folding
 * them into one anchored summary (`foldIntoSummary`, which runs `dropOldestTurns` and gives the summary up to
 * 65% of the budget). Every strategy stops as soon as the budget holds.
 */
export function defaultStrategies(): Strategy[] {
  return strategiesByName(defaultStrategyNames);
}

/**
 * Strategies by name, in the given order (`default` stands for the default pipeline), for CLIs and config
 * files: `strategiesByName(['stub-tool-outputs', 'fold-into-summary'])`.
 *
 * @throws InvalidArgumentError naming `option` and listing the known names when a name is unknown
 */
export function strategiesByName(names: readonly string[], option = 'strategies'): Strategy[] {
  if (!Array.isArray(names) || names.length === 0)
    throw new InvalidArgumentError(
      option,
      `expected a non-empty list of strategy names, got ${describeValue(names)}`,
    );
  return names.flatMap((name) => {
    if (name === 'default') return defaultStrategies();
    if (!Object.hasOwn(factories, name))
      throw new InvalidArgumentError(
        option,
        `unknown strategy ${JSON.stringify(name)}; expected default or one of ${strategyNames.join(', ')}`,
      );
    return [factories[name as StrategyName]()];
  });
}
