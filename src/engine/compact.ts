import type { ArchiveStore } from '../archive/archive-store.js';
import { createMemoryArchive } from '../archive/archive-store.js';
import { InvalidArgumentError, PrecisError } from '../errors/index.js';
import { describeValue } from '../internal/json-shapes.js';
import { systemPromptLength } from '../messages/content.js';
import { assignIds } from '../messages/ids.js';
import { parseConversation } from '../messages/parse.js';
import type { Conversation, IdentifiedMessage, Message } from '../messages/types.js';
import { type Repair, repairMessages } from '../messages/validate/index.js';
import {
  type AnyStrategy,
  isAsyncStrategy,
  type Strategy,
  type StrategyAction,
  type StrategyContext,
  type StrategyResult,
  type StrategyWarning,
} from '../strategies/strategy.js';
import { createTokenAccountant, type TokenAccountant } from '../tokens/index.js';
import { defaultStrategies } from './named-strategies.js';
import {
  type Preservation,
  preservedMessageIds,
  recentTurnsThatFit,
  relaxedPreservations,
  trimmedLastTurn,
} from './preservation.js';
import { recognitionAction, withRecognisedSummaries } from './recognise-summaries.js';

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
  /**
   * Keep the first user message (the task) byte-identical. What a framework put in front of its request (an
   * in-context example, harness notes: `metadata.requestPart`) may still be archived behind a stub, and so may
   * harness notes merged after it or between two of its requests (`metadata.harnessParts`: aider's output, an
   * @-mention's file), and the harness's instructions after it (`metadata.expansionPart`) when they would take
   * more than a fifth of the budget (`stubDemonstrations`' `maxExpansionShare`).
   * @default true
   */
  preserveFirstUserMessage?: boolean;
  /** The pipeline, run in order until the budget holds. @default defaultStrategies() */
  strategies?: Strategy[];
  /** Throw a `budget-exceeded` PrecisError instead of returning an over-budget result with a warning. @default false */
  strict?: boolean;
  /**
   * When the preserved messages alone exceed the budget, the last turn may be compressed too, as the last
   * relaxation (its outputs become stubs with handles; when even that fails, the current request and the last
   * step are folded into the summary, unless a tool call in it awaits its result); and over its share of the
   * room (`recentTurnsMaxShare`), its largest tool outputs and call arguments may be trimmed to their first and
   * last lines. Turn it
   * off where the budget is a target below a hard limit and the step the model is acting on must stay whole
   * (the ContextManager allows it only on overflow).
   * @default true
   */
  lastTurnCompressible?: boolean;
  /**
   * Over budget, the kept recent turns may take at most this share of the room that the system prompt, pinned
   * messages and the task leave; past it fewer turns are kept (never fewer than one), so that the summary of
   * everything before them has room too. Reported in `report.relaxedPreservation`. When the last turn alone
   * takes more (the step in flight read a long log or a large JSON result, or wrote a long file), its largest
   * tool outputs and tool-call string arguments keep their first and last lines (JSON as its text, images left
   * whole), the middle archived behind a marker (`trim-tool-output` and `trim-tool-input` actions, with a
   * warning; a later fold reads the originals), unless `lastTurnCompressible` is false. 1 (or `strict`) keeps
   * `keepRecentTurns` byte-identical whenever they fit the budget.
   * @default 1/3
   */
  recentTurnsMaxShare?: number;
  /**
   * Leave the tool calls of the last assistant message that have no result yet as they are (a tool still
   * running, a call awaiting the user's approval) instead of answering them with a `[no result recorded]`
   * placeholder: the result is then valid to store and to go on with once the results are appended, not to send
   * as it is. The step they are in is never dropped, folded or trimmed.
   * @default false
   */
  allowPendingToolCalls?: boolean;
}

// On the shared sessions, a third gave the summary the room that the most probe facts needed at 5% and 20% of
// each session (0.15 to 0.45 did about as well; keeping every configured turn did worst) and changed nothing at 10%.
const defaultRecentTurnsMaxShare = 1 / 3;

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
  /**
   * Set when a weaker preservation than the configured one was used (never in strict mode): fewer recent
   * turns because they would have taken more than `recentTurnsMaxShare` of the room, or, when the configured
   * preservation alone did not fit the budget, one recent turn, then the task message compressible, then the
   * last turn too (its outputs become stubs). System and pinned messages are always kept byte-identical.
   */
  relaxedPreservation?: Pick<CompactOptions, 'keepRecentTurns' | 'preserveFirstUserMessage'>;
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

/** Rounds of strategies + repair: a repair can add a few tokens (placeholder results) that the next round takes back. */
const maxRounds = 3;

/**
 * Compacts a conversation to `budgetTokens`: assigns ids, keeps the system prompt, the first user message (its
 * request: an example in front of it may be archived), pinned messages and the last `keepRecentTurns` turns
 * byte-identical, runs the strategies in order until
 * the budget holds, then repairs the result for `provider` and checks the budget again (repairs are
 * reported). Deterministic for the same input and options, and idempotent: compacting the result again under
 * the same options changes nothing.
 *
 * Over budget, the recent turns are kept only while they take at most `recentTurnsMaxShare` of the room (at
 * least the last one is). When what must be kept is larger than the budget, `strict` throws a
 * `budget-exceeded` PrecisError; otherwise the preservation is relaxed until the budget holds (one recent
 * turn, then the task message compressible, then the last turn unless `lastTurnCompressible` is false;
 * reported in `report.relaxedPreservation` with a `compact-warning`), and if even that cannot fit (the system
 * prompt and pinned messages are never compressed), the smallest valid result comes back with a
 * `compact-warning`.
 *
 * @throws InvalidMessageError when the input is not a conversation or a message array
 * @throws InvalidArgumentError when an option is out of range
 * @throws PrecisError `budget-exceeded` in strict mode when the result does not fit the budget
 */
export function compact(input: Conversation | readonly Message[], options: CompactOptions): CompactResult {
  const steps = compactSteps(input, options, 'sync');
  let next = steps.next();
  while (!next.done) {
    const { strategy, messages, context } = next.value;
    // checkOptions has refused asynchronous strategies for this entry point.
    next = steps.next((strategy as Strategy).apply(messages, context));
  }
  return next.value;
}

export interface CompactAsyncOptions extends Omit<CompactOptions, 'strategies'> {
  /** The pipeline; may include asynchronous (LLM) strategies. @default defaultStrategies() */
  strategies?: AnyStrategy[];
  /** Handed to asynchronous strategies, which stop their calls when it aborts. */
  abortSignal?: AbortSignal;
}

/**
 * `compact` for pipelines with asynchronous strategies (LLM summarizers): the same engine, rules and report,
 * awaiting each strategy in turn. Synchronous strategies run as they do under `compact`.
 *
 * @throws the same errors as `compact`, and an abort error when `abortSignal` aborts
 */
export async function compactAsync(
  input: Conversation | readonly Message[],
  options: CompactAsyncOptions,
): Promise<CompactResult> {
  const { abortSignal, ...rest } = options;
  const steps = compactSteps(input, rest, 'async');
  let next = steps.next();
  while (!next.done) {
    abortSignal?.throwIfAborted();
    const { strategy, messages, context } = next.value;
    const result = await strategy.apply(messages, {
      ...context,
      ...(abortSignal === undefined ? {} : { abortSignal }),
    });
    next = steps.next(result);
  }
  return next.value;
}

/** One strategy run the engine asks its driver (`compact` or `compactAsync`) to perform. */
interface StrategyCall {
  strategy: AnyStrategy;
  messages: readonly IdentifiedMessage[];
  context: StrategyContext;
}

type EngineSteps<T> = Generator<StrategyCall, T, StrategyResult>;

function* compactSteps(
  input: Conversation | readonly Message[],
  options: CompactOptions | Omit<CompactAsyncOptions, 'abortSignal'>,
  mode: 'sync' | 'async',
): EngineSteps<CompactResult> {
  const first = yield* compactOnce(input, options, mode);
  if (first.report.withinBudget) return first;
  // Over budget, the drop and fold steps can leave work that a second pass over their own output would do
  // (markers and turns kept for role alternation become droppable). Pass again until nothing changes, so
  // compacting the result again is a no-op.
  let result = first;
  for (let pass = 0; pass < maxFixedPointPasses; pass++) {
    const next = yield* compactOnce({ ...result.conversation, messages: result.messages }, options, mode);
    if (sameMessages(next.messages, result.messages)) break;
    const relaxedPreservation = weakestPreservation(
      result.report.relaxedPreservation,
      next.report.relaxedPreservation,
    );
    result = {
      ...next,
      report: {
        ...next.report,
        ...(relaxedPreservation === undefined ? {} : { relaxedPreservation }),
        tokensBefore: first.report.tokensBefore,
        strategies: [...result.report.strategies, ...next.report.strategies],
        actions: [...result.report.actions, ...next.report.actions],
        repairs: [...result.report.repairs, ...next.report.repairs],
      },
      warnings: [
        ...result.warnings.filter((warning) => warning.type !== 'compact-warning'),
        ...next.warnings,
      ],
    };
  }
  return result;
}

const maxFixedPointPasses = 3;

/** What a result made of several passes kept: the weaker of two passes' relaxed preservations. */
function weakestPreservation(
  left: CompactReport['relaxedPreservation'],
  right: CompactReport['relaxedPreservation'],
): CompactReport['relaxedPreservation'] {
  if (left === undefined || right === undefined) return left ?? right;
  return {
    keepRecentTurns: Math.min(left.keepRecentTurns ?? 0, right.keepRecentTurns ?? 0),
    preserveFirstUserMessage:
      (left.preserveFirstUserMessage ?? true) && (right.preserveFirstUserMessage ?? true),
  };
}

function sameMessages(left: readonly Message[], right: readonly Message[]): boolean {
  // Strategies keep unchanged messages as the same objects, so identity settles almost every pair.
  return (
    left.length === right.length &&
    left.every(
      (message, index) =>
        message === right[index] || JSON.stringify(message) === JSON.stringify(right[index]),
    )
  );
}

function* compactOnce(
  input: Conversation | readonly Message[],
  options: CompactOptions | Omit<CompactAsyncOptions, 'abortSignal'>,
  mode: 'sync' | 'async',
): EngineSteps<CompactResult> {
  const settings = checkOptions(options, mode);
  const { budgetTokens, provider, accountant, strict, allowPendingToolCalls } = settings;
  const conversation = parseConversation(Array.isArray(input) ? [...input] : input);

  const count = (messages: readonly Message[]) =>
    accountant.countTotal({ ...conversation, messages: [...messages] });
  // Strategies count messages only; tool schemas are a fixed cost taken off their budget.
  const fixedTokens = count([]) - accountant.countTotal([]);
  const tokensBefore = count(conversation.messages);

  const repairs: Repair[] = [];
  // A summary that came back through a provider's format without its metadata is merged into again.
  const recognition = withRecognisedSummaries(conversation.messages);
  const initial = repairMessages(recognition.messages, { provider, allowPendingToolCalls });
  repairs.push(...initial.repairs);
  let messages = assignIds(initial.messages);
  // A repair keeps the messages it leaves alone as they are, and ids go one to one.
  const recognised = messages.flatMap((message, index) => {
    const record = recognition.recognised.get(initial.messages[index]!);
    return record === undefined ? [] : [{ message, record }];
  });
  // Over budget, the recent turns may take only their share of the room, so the summary keeps some too: the
  // last turn's largest tool outputs are trimmed to it, then fewer turns are kept.
  const lastTurn = count(messages) > budgetTokens ? trimmedLastTurn(messages, settings, count) : undefined;
  if (lastTurn !== undefined) messages = lastTurn.messages;
  const recentTurns =
    count(messages) > budgetTokens
      ? recentTurnsThatFit(messages, settings, count, lastTurn !== undefined)
      : undefined;
  const configured =
    recentTurns === undefined ? settings : { ...settings, keepRecentTurns: recentTurns.keepRecentTurns };
  const preservedIds = preservedMessageIds(messages, configured);

  const relaxations = strict ? [] : relaxedPreservations(configured);
  const run = (preserved: ReadonlySet<string>, finalPass: boolean) =>
    runPipeline(messages, { ...settings, preservedIds: preserved, finalPass, count, fixedTokens });
  let attempt = yield* run(preservedIds, relaxations.length === 0);
  const fewerTurns: CompactReport['relaxedPreservation'] =
    recentTurns === undefined
      ? undefined
      : {
          keepRecentTurns: configured.keepRecentTurns,
          preserveFirstUserMessage: settings.preserveFirstUserMessage,
        };
  let relaxedPreservation = fewerTurns;
  let keptIds = preservedIds;
  if (attempt.tokens > budgetTokens && !strict) {
    // The budget is what keeps the next request from failing, so it outranks recency: give up the older
    // preserved turns, then the task message (the summary's intent still carries it), then the last turn (its
    // outputs become stubs with handles), stopping at the first that makes the budget hold. When none does,
    // the smallest result is the one closest to fitting. The system prompt and pinned messages are never given up.
    let smallest: { run: PipelineRun; relaxed: Preservation; ids: Set<string> } | undefined;
    for (const [index, relaxed] of relaxations.entries()) {
      const ids = preservedMessageIds(messages, relaxed);
      const retry = yield* run(ids, index === relaxations.length - 1);
      if (retry.tokens <= budgetTokens) {
        smallest = { run: retry, relaxed, ids };
        break;
      }
      if (retry.tokens < (smallest?.run ?? attempt).tokens) smallest = { run: retry, relaxed, ids };
    }
    if (smallest !== undefined) {
      attempt = smallest.run;
      relaxedPreservation = smallest.relaxed;
      keptIds = smallest.ids;
    }
  }
  const { strategyReports, warnings } = attempt;
  // Steps whose net effect is nothing (an idempotent re-run) are not reported as actions.
  const actions = [
    ...recognised.map(({ message, record }) =>
      recognitionAction(message, record, accountant.countMessage(message)),
    ),
    ...(lastTurn?.actions ?? []),
    ...(sameMessages(attempt.messages, messages) ? [] : attempt.actions),
  ];
  repairs.push(...attempt.repairs);
  messages = attempt.messages;
  const fewerTurnsKept = recentTurns !== undefined && relaxedPreservation === fewerTurns;
  // One warning per decision: the one on fewer turns kept names the trim of the last turn's outputs too.
  if (lastTurn !== undefined && !fewerTurnsKept)
    warnings.push({ type: 'compact-warning', message: lastTurn.reason });
  if (fewerTurnsKept) warnings.push({ type: 'compact-warning', message: recentTurns.reason });
  else if (relaxedPreservation !== undefined)
    warnings.push({
      type: 'compact-warning',
      message:
        `the preserved messages did not fit the budget of ${budgetTokens} tokens: compacted with ` +
        `keepRecentTurns ${relaxedPreservation.keepRecentTurns}` +
        (relaxedPreservation.preserveFirstUserMessage ? '' : ' and the first user message compressible') +
        (relaxedPreservation.keepRecentTurns === 0 ? ' (the last turn too)' : '') +
        // The fold gives an existing summary's room up only on the last pass: say so, as it may be what fitted.
        (attempt.actions.some((action) => action.type === 'refit-summary')
          ? ', and the existing summary rendered again, from its unchanged record, into the room left'
          : '') +
        ' (originals are in the archive; strict mode throws instead)',
    });

  const tokensAfter = attempt.tokens;
  const withinBudget = tokensAfter <= budgetTokens;
  if (!withinBudget) {
    const preservedTokens = count(messages.filter((message) => keptIds.has(message.id)));
    // The system prompt (with the tool schemas) is never compressed: when it alone is over, say so.
    const systemTokens = count(messages.slice(0, systemPromptLength(messages)));
    const message =
      `could not compact to the budget of ${budgetTokens} tokens: the smallest valid result has ${tokensAfter} tokens ` +
      (systemTokens > budgetTokens
        ? `(the system prompt and tool schemas alone: ${systemTokens} tokens, which no strategy changes; raise the budget)`
        : `(the preserved messages alone: ${preservedTokens} tokens; ` +
          (relaxedPreservation?.keepRecentTurns === 0
            ? 'raise the budget)'
            : 'lower keepRecentTurns or raise the budget)'));
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
      ...(relaxedPreservation === undefined ? {} : { relaxedPreservation }),
    },
    warnings,
  };
}

interface PipelineRun {
  messages: IdentifiedMessage[];
  tokens: number;
  strategyReports: CompactStrategyReport[];
  actions: StrategyAction[];
  warnings: CompactResult['warnings'];
  repairs: Repair[];
}

interface PipelineSettings extends CompactSettings {
  preservedIds: ReadonlySet<string>;
  finalPass: boolean;
  count: (messages: readonly Message[]) => number;
  fixedTokens: number;
}

/** Runs the strategies in order until the budget holds, then repairs; repeats while repairs add tokens. */
function* runPipeline(input: IdentifiedMessage[], settings: PipelineSettings): EngineSteps<PipelineRun> {
  const {
    budgetTokens,
    provider,
    allowPendingToolCalls,
    accountant,
    archive,
    strategies,
    preservedIds,
    finalPass,
    count,
    fixedTokens,
  } = settings;
  let messages = input;
  const run: PipelineRun = {
    messages,
    tokens: 0,
    strategyReports: [],
    actions: [],
    warnings: [],
    repairs: [],
  };
  let strategyBudget = budgetTokens - fixedTokens;
  // Each state of the conversation is counted once: a strategy's "after" is the next one's "before".
  let tokens = count(messages);
  for (let round = 0; round < maxRounds; round++) {
    for (const strategy of strategies) {
      if (tokens <= budgetTokens) break;
      const context: StrategyContext = {
        budgetTokens: Math.max(0, strategyBudget),
        accountant,
        archive,
        preservedIds,
        finalPass,
      };
      const result: StrategyResult = yield { strategy, messages, context };
      messages = result.messages;
      const before = tokens;
      tokens = count(messages);
      run.strategyReports.push({
        name: strategy.name,
        tokensBefore: before,
        tokensAfter: tokens,
        actions: result.actions.length,
      });
      run.actions.push(...result.actions);
      run.warnings.push(...result.warnings);
    }
    const repaired = repairMessages(messages, { provider, allowPendingToolCalls });
    run.repairs.push(...repaired.repairs);
    messages = assignIds(repaired.messages);
    tokens = count(messages);
    const overshoot = tokens - budgetTokens;
    // Strategies are idempotent, so another round only helps when this round's repairs added tokens.
    if (overshoot <= 0 || repaired.repairs.length === 0) break;
    strategyBudget -= overshoot;
  }
  run.messages = messages;
  run.tokens = tokens;
  return run;
}

interface CompactSettings {
  budgetTokens: number;
  provider: CompactProvider;
  accountant: TokenAccountant;
  archive: ArchiveStore;
  keepRecentTurns: number;
  preserveFirstUserMessage: boolean;
  strategies: readonly AnyStrategy[];
  strict: boolean;
  lastTurnCompressible: boolean;
  recentTurnsMaxShare: number;
  allowPendingToolCalls: boolean;
  preamblesArchived: boolean;
}

function checkOptions(
  options: CompactOptions | Omit<CompactAsyncOptions, 'abortSignal'>,
  mode: 'sync' | 'async' = 'sync',
): CompactSettings {
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
    lastTurnCompressible = true,
    recentTurnsMaxShare = defaultRecentTurnsMaxShare,
    allowPendingToolCalls = false,
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
  if (!(typeof recentTurnsMaxShare === 'number' && recentTurnsMaxShare > 0 && recentTurnsMaxShare <= 1))
    throw new InvalidArgumentError(
      'recentTurnsMaxShare',
      `expected a number above 0 and at most 1, got ${describeValue(recentTurnsMaxShare)}`,
    );
  if (typeof allowPendingToolCalls !== 'boolean')
    throw new InvalidArgumentError(
      'allowPendingToolCalls',
      `expected a boolean, got ${describeValue(allowPendingToolCalls)}`,
    );
  if (!Array.isArray(strategies) || strategies.some((strategy) => typeof strategy?.apply !== 'function'))
    throw new InvalidArgumentError('strategies', 'expected an array of strategies (objects with apply)');
  const asynchronous = strategies.findIndex((strategy: AnyStrategy) => isAsyncStrategy(strategy));
  if (mode === 'sync' && asynchronous !== -1)
    throw new InvalidArgumentError(
      `strategies[${asynchronous}]`,
      `${strategies[asynchronous]!.name} is asynchronous (it calls an LLM): use compactAsync`,
    );
  return {
    budgetTokens,
    provider,
    accountant: accountant ?? createTokenAccountant(provider === 'any' ? {} : { provider }),
    archive,
    keepRecentTurns,
    preserveFirstUserMessage,
    strategies,
    strict,
    lastTurnCompressible: lastTurnCompressible !== false,
    recentTurnsMaxShare,
    allowPendingToolCalls,
    preamblesArchived: strategies.some((strategy: AnyStrategy) => strategy.archivesRequestPreambles === true),
  };
}
