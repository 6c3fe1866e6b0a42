import type { ArchiveStore } from '../archive/archive-store.js';
import { createMemoryArchive } from '../archive/archive-store.js';
import { InvalidArgumentError, PrecisError } from '../errors/index.js';
import { describeValue } from '../internal/json-shapes.js';
import { assignIds } from '../messages/ids.js';
import { parseConversation } from '../messages/parse.js';
import type { Conversation, IdentifiedMessage, Message } from '../messages/types.js';
import { type Repair, repairMessages, repairPlaceholders } from '../messages/validate/index.js';
import { compactJsonOutputs } from '../strategies/compact-json-outputs/compact-json-outputs.js';
import { deduplicate } from '../strategies/deduplicate/deduplicate.js';
import { extractiveProse } from '../strategies/extractive-prose/extractive-prose.js';
import { foldIntoSummary } from '../strategies/fold-into-summary/fold-into-summary.js';
import { pruneCodeBodies } from '../strategies/prune-code-bodies/prune-code-bodies.js';
import { removeFiller } from '../strategies/remove-filler/remove-filler.js';
import type { Strategy, StrategyAction, StrategyContext, StrategyWarning } from '../strategies/strategy.js';
import { recentTurnsStart } from '../strategies/strategy-support.js';
import { stripReasoning } from '../strategies/strip-reasoning/strip-reasoning.js';
import { stubToolOutputs } from '../strategies/stub-tool-outputs/stub-tool-outputs.js';
import { createTokenAccountant, type TokenAccountant } from '../tokens/index.js';

export const compactProviders = ['openai', 'anthropic', 'any'] as const;
export type CompactProvider = (typeof compactProviders)[number];

export interface CompactOptions {
  /** Total tokens the result should fit in, tool schemas included (as counted by `accountant.countConversation`). */
  budgetTokens: number;
  /** The provider the result must be valid for. @default 'any' */
  provider?: CompactProvider;
  /** Counts tokens. @default createTokenAccountant({ provider }) (OpenAI framing for 'any') */
  accountant?: TokenAccountant;
  /** Where every stubbed, shortened or dropped original goes. @default createMemoryArchive() */
  archive?: ArchiveStore;
  /**
   * The last this many turns are kept byte-identical. A turn starts at a user message or at an assistant
   * message that follows tool results, so a long agent loop under one user message is many turns.
   * @default 2
   */
  keepRecentTurns?: number;
  /** Keep the first user message (the task) byte-identical. @default true */
  preserveFirstUserMessage?: boolean;
  /** The pipeline, run in order until the budget holds. @default defaultStrategies() */
  strategies?: Strategy[];
  /** Throw a `budget-exceeded` PrecisError instead of returning an over-budget result with a warning. @default false */
  strict?: boolean;
}

export interface CompactStrategyReport {
  name: string;
  tokensBefore: number;
  tokensAfter: number;
  actions: number;
}

export interface CompactReport {
  tokensBefore: number;
  tokensAfter: number;
  budgetTokens: number;
  withinBudget: boolean;
  /** One entry per strategy that ran (strategies after the budget held do not run). */
  strategies: CompactStrategyReport[];
  actions: StrategyAction[];
  /** What was repaired so the result is valid for the provider (before and after the strategies). */
  repairs: Repair[];
}

export interface CompactWarning {
  type: 'compact-warning';
  message: string;
}

export interface CompactResult {
  messages: IdentifiedMessage[];
  /** The input conversation (tools, model, request options) with the compacted messages. */
  conversation: Conversation;
  report: CompactReport;
  warnings: Array<StrategyWarning | CompactWarning>;
}

/**
 * The default pipeline, cheapest and most faithful first (see ARCHITECTURE.md): strip old reasoning, remove
 * filler, compact JSON outputs, stub large tool outputs, stub near-duplicates, shorten long prose, prune code
 * bodies, and as a last resort drop the oldest turns, folding them into one anchored summary (`foldIntoSummary`,
 * which runs `dropOldestTurns` and gives the summary up to 65% of the budget). Every strategy stops as soon as
 * the budget holds.
 *
 * The strategies get `keepRecentTurns: 0`: recency is the engine's job, carried by the preserved ids (which
 * never split a tool call from its results), so a long agent loop under a single user message is still
 * compressible. Size thresholds are lower than the strategies' own defaults because strategies handle
 * candidates largest first and stop at the budget: a low threshold only matters when the budget is tight.
 */
export function defaultStrategies(): Strategy[] {
  return [
    stripReasoning({ keepRecentTurns: 0 }),
    removeFiller(),
    compactJsonOutputs({ minTokens: 50 }),
    stubToolOutputs({ minTokens: 100, keepRecentTurns: 0 }),
    deduplicate({ minTokens: 100, keepRecentTurns: 0 }),
    extractiveProse({ minTokens: 200, keepRecentTurns: 0 }),
    pruneCodeBodies({ minTokens: 200, keepRecentTurns: 0 }),
    foldIntoSummary(),
  ];
}

/** Rounds of strategies + repair: a repair can add a few tokens (placeholder results) that the next round takes back. */
const maxRounds = 3;

/**
 * Compacts a conversation to `budgetTokens`: assigns ids, keeps the system messages, the first user message,
 * pinned messages and the last `keepRecentTurns` turns byte-identical, runs the strategies in order until
 * the budget holds, then repairs the result for `provider` and checks the budget again (repairs are
 * reported). Deterministic for the same input and options, and idempotent: compacting the result again under
 * the same options changes nothing.
 *
 * When the budget cannot be met (what must be kept is larger than the budget), the smallest valid result
 * comes back with a `compact-warning`, or, with `strict`, a `budget-exceeded` PrecisError is thrown.
 *
 * @throws InvalidMessageError when the input is not a conversation or a message array
 * @throws InvalidArgumentError when an option is out of range
 * @throws PrecisError `budget-exceeded` in strict mode when the result does not fit the budget
 */
export function compact(input: Conversation | readonly Message[], options: CompactOptions): CompactResult {
  const settings = checkOptions(options);
  const { budgetTokens, provider, accountant, archive, strategies, strict } = settings;
  const conversation = parseConversation(Array.isArray(input) ? [...input] : input);

  const count = (messages: readonly Message[]) =>
    accountant.countConversation({ ...conversation, messages: [...messages] }).totalTokens;
  // Strategies count messages only; tool schemas are a fixed cost taken off their budget.
  const fixedTokens = count([]) - accountant.countConversation([]).totalTokens;
  const tokensBefore = count(conversation.messages);

  const repairs: Repair[] = [];
  const initial = repairMessages(conversation.messages, { provider });
  repairs.push(...initial.repairs);
  let messages = assignIds(initial.messages);
  const preservedIds = preservedMessageIds(messages, settings);

  const strategyReports: CompactStrategyReport[] = [];
  const actions: StrategyAction[] = [];
  const warnings: CompactResult['warnings'] = [];
  let strategyBudget = budgetTokens - fixedTokens;
  for (let round = 0; round < maxRounds; round++) {
    for (const strategy of strategies) {
      const before = count(messages);
      if (before <= budgetTokens) break;
      const context: StrategyContext = {
        budgetTokens: Math.max(0, strategyBudget),
        accountant,
        archive,
        preservedIds,
      };
      const result = strategy.apply(messages, context);
      messages = result.messages;
      const after = count(messages);
      strategyReports.push({
        name: strategy.name,
        tokensBefore: before,
        tokensAfter: after,
        actions: result.actions.length,
      });
      actions.push(...result.actions);
      warnings.push(...result.warnings);
    }
    const repaired = repairMessages(messages, { provider });
    repairs.push(...repaired.repairs);
    messages = assignIds(repaired.messages);
    const overshoot = count(messages) - budgetTokens;
    // Strategies are idempotent, so another round only helps when this round's repairs added tokens.
    if (overshoot <= 0 || repaired.repairs.length === 0) break;
    strategyBudget -= overshoot;
  }

  const tokensAfter = count(messages);
  const withinBudget = tokensAfter <= budgetTokens;
  if (!withinBudget) {
    const preservedTokens = count(messages.filter((message) => preservedIds.has(message.id)));
    const message =
      `could not compact to the budget of ${budgetTokens} tokens: the smallest valid result has ${tokensAfter} tokens ` +
      `(the preserved messages alone: ${preservedTokens} tokens; lower keepRecentTurns or raise the budget)`;
    if (strict) throw new PrecisError('budget-exceeded', message);
    warnings.push({ type: 'compact-warning', message });
  }
  return {
    messages,
    conversation: { ...conversation, messages },
    report: {
      tokensBefore,
      tokensAfter,
      budgetTokens,
      withinBudget,
      strategies: strategyReports,
      actions,
      repairs,
    },
    warnings,
  };
}

interface CompactSettings {
  budgetTokens: number;
  provider: CompactProvider;
  accountant: TokenAccountant;
  archive: ArchiveStore;
  keepRecentTurns: number;
  preserveFirstUserMessage: boolean;
  strategies: readonly Strategy[];
  strict: boolean;
}

function checkOptions(options: CompactOptions): CompactSettings {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', `expected an options object, got ${describeValue(options)}`);
  const {
    budgetTokens,
    provider = 'any',
    accountant,
    archive = createMemoryArchive(),
    keepRecentTurns = 2,
    preserveFirstUserMessage = true,
    strategies = defaultStrategies(),
    strict = false,
  } = options;
  if (!(Number.isInteger(budgetTokens) && budgetTokens >= 0))
    throw new InvalidArgumentError(
      'budgetTokens',
      `expected a non-negative integer, got ${describeValue(budgetTokens)}`,
    );
  if (!(compactProviders as readonly unknown[]).includes(provider))
    throw new InvalidArgumentError(
      'provider',
      `expected one of ${compactProviders.join(', ')}, got ${describeValue(provider)}`,
    );
  if (!(Number.isInteger(keepRecentTurns) && keepRecentTurns >= 0))
    throw new InvalidArgumentError(
      'keepRecentTurns',
      `expected a non-negative integer, got ${describeValue(keepRecentTurns)}`,
    );
  if (!Array.isArray(strategies) || strategies.some((strategy) => typeof strategy?.apply !== 'function'))
    throw new InvalidArgumentError('strategies', 'expected an array of strategies (objects with apply)');
  return {
    budgetTokens,
    provider,
    accountant: accountant ?? createTokenAccountant(provider === 'any' ? {} : { provider }),
    archive,
    keepRecentTurns,
    preserveFirstUserMessage,
    strategies,
    strict,
  };
}

/**
 * Ids of the messages no strategy may touch: system messages, the first user message (the task; markers
 * and repair placeholders do not count, so a second pass picks the same one), pinned messages and the last
 * `keepRecentTurns` turns, the boundary moved back so a tool call stays with its results.
 */
export function preservedMessageIds(
  messages: readonly IdentifiedMessage[],
  options: Pick<CompactSettings, 'keepRecentTurns' | 'preserveFirstUserMessage'>,
): Set<string> {
  const preserved = new Set<string>();
  let firstUserSeen = !options.preserveFirstUserMessage;
  for (const message of messages) {
    // An anchored summary is rewritten only by the fold step (which merges into it), never by other strategies.
    if (
      message.role === 'system' ||
      message.metadata?.pinned === true ||
      message.metadata?.origin === 'summary'
    )
      preserved.add(message.id);
    if (!firstUserSeen && message.role === 'user' && isOriginalUserMessage(message)) {
      preserved.add(message.id);
      firstUserSeen = true;
    }
  }
  let start = recentTurnsStart(messages, options.keepRecentTurns);
  while (start > 0 && start < messages.length && messages[start]?.role === 'tool') start--;
  for (let index = start; index < messages.length; index++) preserved.add(messages[index]!.id);
  return preserved;
}

function isOriginalUserMessage(message: IdentifiedMessage): boolean {
  if (message.metadata?.origin === 'stub' || message.metadata?.origin === 'summary') return false;
  return message.content !== repairPlaceholders.conversationStart;
}
