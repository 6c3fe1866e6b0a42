import { archiveHandle } from '../../archive/archive-store.js';
import { InvalidArgumentError } from '../../errors/index.js';
import { describeValue } from '../../internal/json-shapes.js';
import { toolCallsOf, toolOutputText } from '../../messages/content.js';
import type {
  IdentifiedMessage,
  JSONValue,
  Message,
  Part,
  ToolCallPart,
  ToolResultPart,
} from '../../messages/types.js';
import { validateMessages } from '../../messages/validate/index.js';
import { compressProse } from '../extractive-prose/compress-prose.js';
import type {
  AsyncStrategy,
  AsyncStrategyContext,
  Strategy,
  StrategyAction,
  StrategyContext,
  StrategyResult,
  StrategyWarning,
} from '../strategy.js';
import {
  archivedSpanText,
  checkShare,
  checkStrategyInput,
  type MessageGroup,
  markerMessage,
  markerRole,
  messageGroups,
  strategyWarning,
} from '../strategy-support.js';
import {
  toolOutputStubOf,
  toolOutputStubPrefix,
  trimmedOriginal,
} from '../stub-tool-outputs/stub-tool-outputs.js';
import {
  createHeuristicImportanceScorer,
  groupLevel,
  messageFeatures,
  recordFeatures,
} from './heuristic-scorer.js';
import {
  type HeuristicImportanceScorer,
  type ImportanceLevel,
  type ImportanceScorer,
  importanceRank,
  type LlmImportanceScorer,
  type MessageImportance,
} from './importance-levels.js';
import { checkImportanceScorer, importanceCandidates, importanceGoal } from './score-importance.js';

export interface DynamicImportanceOptions {
  /** The current task goal. @default the last user request (or the first user message) of each conversation */
  goal?: string;
  /** The heuristic scorer makes a `Strategy`, an LLM scorer an `AsyncStrategy`. @default createHeuristicImportanceScorer() */
  scorer?: ImportanceScorer;
  /** Share of a `medium` message's prose tokens `compressProse` keeps. @default 0.5 */
  keepRatio?: number;
  /** Texts and tool outputs with fewer tokens than this are not compressed or stubbed. @default 50 */
  minTokens?: number;
  /**
   * When the levels' own actions do not meet the budget, go one step further: drop `low` groups, stub `medium`
   * messages (critical and high stay verbatim whatever the budget). @default true
   */
  escalate?: boolean;
}

/** A report action of `dynamicImportance`, with the level and reason that decided it. */
export interface ImportanceAction extends StrategyAction {
  level: ImportanceLevel;
  reason: string;
}

const strategyName = 'dynamic-importance';
/** How a stubbed message's text starts; a message that already reads like this is never stubbed again. */
export const messageStubPrefix = '[message archived: ';
/** Estimated cost of one drop marker before it exists; the final count is exact. */
const markerTokenEstimate = 30;

interface Settings {
  goal: string | undefined;
  keepRatio: number;
  minTokens: number;
  escalate: boolean;
}

/**
 * Agent-driven importance: scores every message that is not preserved against the current goal (see
 * `scoreImportance`), then, only while the conversation is over budget, acts on the least important first
 * (the oldest first among equals) and stops as soon as the budget holds:
 * - `critical`, `high`: kept verbatim;
 * - `medium`: compressed: prose through `compressProse` (with a note naming the archived original), tool outputs
 *   replaced by a stub with a gist (`[tool output archived: <handle> · <tokens> tokens · <gist>]`);
 * - `low`: stubbed: the text becomes `[message archived: <handle> · <tokens> tokens · <first line>]`, tool calls
 *   stay (their ids pair with the results), tool outputs become stubs;
 * - `droppable`: dropped whole with its tool calls and results (a group drops only when all its messages are
 *   droppable), one marker `[N earlier messages archived: <handle>]` per contiguous span, as a user or assistant
 *   message where that keeps alternation (else the span is stubbed instead).
 * With `escalate` (the default), when that is not enough, `low` groups are dropped and `medium` messages stubbed.
 * Every original is archived (`messages`) and its handle is in the action, which carries the level and reason.
 * The result is valid for every provider when the input was (checked; drops are undone otherwise).
 *
 * Rewritten messages and markers record their level and what they referenced (`metadata.importance`), so a
 * second run scores the compacted conversation the same way and changes nothing (idempotent).
 *
 * Returns a synchronous `Strategy` with the heuristic scorer (the default) and an `AsyncStrategy` with an LLM
 * scorer (`createLlmImportanceScorer`, run it with `compactAsync`); the LLM's scores are remembered by message id
 * per strategy instance, so the engine's later passes do not ask again.
 *
 * @throws InvalidArgumentError naming the option that is out of range
 */
/** Passes of the heuristic strategy over its own output, at most (it stops as soon as one changes nothing). */
const maxFixedPointPasses = 4;

export function dynamicImportance(
  options?: DynamicImportanceOptions & { scorer?: HeuristicImportanceScorer },
): Strategy;
export function dynamicImportance(
  options: DynamicImportanceOptions & { scorer: LlmImportanceScorer },
): AsyncStrategy;
export function dynamicImportance(options?: DynamicImportanceOptions): Strategy | AsyncStrategy;
export function dynamicImportance(options: DynamicImportanceOptions = {}): Strategy | AsyncStrategy {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', `expected an options object, got ${describeValue(options)}`);
  const {
    goal,
    scorer = createHeuristicImportanceScorer(),
    keepRatio = 0.5,
    minTokens = 50,
    escalate = true,
  } = options;
  if (goal !== undefined && typeof goal !== 'string')
    throw new InvalidArgumentError('goal', `expected a string, got ${describeValue(goal)}`);
  checkShare('keepRatio', keepRatio);
  if (!(typeof minTokens === 'number' && Number.isInteger(minTokens) && minTokens >= 0))
    throw new InvalidArgumentError(
      'minTokens',
      `expected a non-negative integer, got ${describeValue(minTokens)}`,
    );
  if (typeof escalate !== 'boolean')
    throw new InvalidArgumentError('escalate', `expected a boolean, got ${describeValue(escalate)}`);
  checkImportanceScorer(scorer);
  const settings: Settings = { goal, keepRatio, minTokens, escalate };

  if (scorer.type === 'heuristic') {
    const strategy: Strategy = {
      name: strategyName,
      apply(messages, context) {
        checkStrategyInput(messages);
        if (context.accountant.countTotal(messages) <= context.budgetTokens)
          return { messages: [...messages], actions: [], warnings: [] };
        const pass = (input: readonly IdentifiedMessage[]): StrategyResult => {
          const goalText = settings.goal ?? importanceGoal(input);
          const candidates = importanceCandidates(input, context.preservedIds);
          const scoring = scorer.score({ messages: input, candidates, goal: goalText });
          return applyLevels(input, context, scoring.scores, settings, scoring.warnings);
        };
        // A pass changes the neighbourhoods it scored (markers replace spans, recency shifts), so a second pass
        // can find more to do: repeat to a fixed point (bounded), which keeps the strategy idempotent.
        let result = pass(messages);
        for (let round = 1; round < maxFixedPointPasses && result.actions.length > 0; round++) {
          if (context.accountant.countTotal(result.messages) <= context.budgetTokens) break;
          const next = pass(result.messages);
          if (next.actions.length === 0) break;
          result = {
            messages: next.messages,
            actions: [...result.actions, ...next.actions],
            warnings: [...result.warnings, ...next.warnings],
          };
        }
        return result;
      },
    };
    return strategy;
  }

  const remembered = new Map<string, Pick<MessageImportance, 'level' | 'reason' | 'source'>>();
  const asyncStrategy: AsyncStrategy = {
    name: strategyName,
    async: true,
    async apply(messages, context: AsyncStrategyContext) {
      checkStrategyInput(messages);
      if (context.accountant.countTotal(messages) <= context.budgetTokens)
        return { messages: [...messages], actions: [], warnings: [] };
      const goalText = settings.goal ?? importanceGoal(messages);
      const candidates = importanceCandidates(messages, context.preservedIds);
      const unknown = candidates.filter((index) => !remembered.has(messages[index]!.id));
      const scoring =
        unknown.length === 0
          ? { scores: [], warnings: [] }
          : await scorer.score(
              { messages, candidates: unknown, goal: goalText },
              {
                countTokens: (text) => context.accountant.countText(text),
                ...(context.abortSignal === undefined ? {} : { abortSignal: context.abortSignal }),
              },
            );
      for (const score of scoring.scores)
        remembered.set(score.id, { level: score.level, reason: score.reason, source: score.source });
      const scores = candidates.map((index): MessageImportance => {
        const id = messages[index]!.id;
        return { id, index, ...remembered.get(id)! };
      });
      return applyLevels(messages, context, scores, settings, scoring.warnings);
    },
  };
  return asyncStrategy;
}

// ------------------------------------------------------------------------------------------- plan

type MessageState = 'keep' | 'compress' | 'stub' | 'drop';
const severity: Record<MessageState, number> = { keep: 0, compress: 1, stub: 2, drop: 3 };

interface Group extends MessageGroup {
  level: ImportanceLevel;
  /** Every member is a candidate and the group starts with a user or assistant message. */
  droppable: boolean;
}

type Step =
  | { kind: 'compress' | 'stub'; index: number; level: ImportanceLevel }
  | { kind: 'drop'; group: number; level: ImportanceLevel };

function applyLevels(
  messages: readonly IdentifiedMessage[],
  context: StrategyContext,
  scores: readonly MessageImportance[],
  settings: Settings,
  scorerWarnings: readonly string[],
): StrategyResult {
  const { accountant, budgetTokens } = context;
  const warnings: StrategyWarning[] = scorerWarnings.map((message) => strategyWarning(strategyName, message));
  const scoreAt = new Map(scores.map((score) => [score.index, score]));
  const features = messageFeatures(messages);
  const calls = new Map<string, ToolCallPart>();
  for (const message of messages)
    for (const call of toolCallsOf(message))
      if (!calls.has(call.toolCallId)) calls.set(call.toolCallId, call);

  const groups: Group[] = [];
  for (const { start, end } of messageGroups(messages)) {
    const levels: ImportanceLevel[] = [];
    let droppable = messages[start]!.role === 'user' || messages[start]!.role === 'assistant';
    for (let index = start; index < end; index++) {
      const score = scoreAt.get(index);
      if (score === undefined) droppable = false;
      else levels.push(score.level);
    }
    groups.push({ start, end, level: droppable ? groupLevel(levels) : 'critical', droppable });
  }
  // The last group is the work in flight: never dropped.
  const lastGroup = groups.at(-1);
  if (lastGroup !== undefined) lastGroup.droppable = false;

  const steps: Step[] = [];
  const round = (
    messageLevels: Record<'compress' | 'stub', ImportanceLevel[]>,
    dropLevels: ImportanceLevel[],
  ) => {
    const roundSteps: Step[] = [];
    // Drops first: among equals, dropping a whole group beats stubbing its messages one by one.
    groups.forEach((group, groupIndex) => {
      if (group.droppable && dropLevels.includes(group.level))
        roundSteps.push({ kind: 'drop', group: groupIndex, level: group.level });
    });
    for (const score of scores) {
      if (messageLevels.compress.includes(score.level))
        roundSteps.push({ kind: 'compress', index: score.index, level: score.level });
      if (messageLevels.stub.includes(score.level))
        roundSteps.push({ kind: 'stub', index: score.index, level: score.level });
    }
    const position = (step: Step) => (step.kind === 'drop' ? groups[step.group]!.start : step.index);
    roundSteps.sort((a, b) => importanceRank(a.level) - importanceRank(b.level) || position(a) - position(b));
    steps.push(...roundSteps);
  };
  round({ compress: ['medium'], stub: ['low', 'droppable'] }, ['droppable']);
  if (settings.escalate) round({ compress: [], stub: ['medium'] }, ['low']);

  const state: MessageState[] = messages.map(() => 'keep');
  const blocked = new Set<number>();
  const variants = new Map<string, IdentifiedMessage | null>();
  const variant = (index: number, kind: 'compress' | 'stub'): IdentifiedMessage | undefined => {
    const key = `${kind}:${index}`;
    if (!variants.has(key)) {
      const score = scoreAt.get(index)!;
      const built = buildVariant(messages[index]!, kind, score, features[index]!, calls, settings, context);
      variants.set(key, built ?? null);
    }
    return variants.get(key) ?? undefined;
  };

  let estimate = accountant.countTotal(messages);
  let plan = buildOutput(messages, groups, state, blocked, variant, scoreAt, features, context);
  for (const step of steps) {
    if (plan.tokens <= budgetTokens) break;
    if (step.kind === 'drop') {
      if (blocked.has(step.group)) continue;
      const group = groups[step.group]!;
      let saved = 0;
      for (let index = group.start; index < group.end; index++) {
        saved += currentTokens(index, state, variant, messages, context);
        state[index] = 'drop';
      }
      const joins = state[group.start - 1] === 'drop' || state[group.end] === 'drop';
      estimate -= saved - (joins ? 0 : markerTokenEstimate);
    } else {
      const { index, kind } = step;
      if (severity[state[index]!] >= severity[kind]) continue;
      const built = variant(index, kind);
      if (built === undefined) continue;
      const before = currentTokens(index, state, variant, messages, context);
      state[index] = kind;
      estimate += accountant.countMessage(built) - before;
    }
    if (estimate <= budgetTokens) {
      plan = buildOutput(messages, groups, state, blocked, variant, scoreAt, features, context);
      estimate = plan.tokens;
    }
  }
  if (plan.tokens > budgetTokens)
    plan = buildOutput(messages, groups, state, blocked, variant, scoreAt, features, context);

  const check = { provider: 'any', allowPendingToolCalls: true } as const;
  if (
    plan.actions.length > 0 &&
    validateMessages(messages, check).valid &&
    !validateMessages(plan.messages, check).valid
  ) {
    // Safety net: without the drops (stubs keep every message and pairing), else nothing at all.
    for (let groupIndex = 0; groupIndex < groups.length; groupIndex++) blocked.add(groupIndex);
    for (let index = 0; index < state.length; index++)
      if (state[index] === 'drop') state[index] = variant(index, 'stub') === undefined ? 'keep' : 'stub';
    plan = buildOutput(messages, groups, state, blocked, variant, scoreAt, features, context);
    if (!validateMessages(plan.messages, check).valid)
      return {
        messages: [...messages],
        actions: [],
        warnings: [
          ...warnings,
          strategyWarning(strategyName, 'the result would not be valid: nothing was changed'),
        ],
      };
  }
  for (const entry of plan.archiveEntries) context.archive.put(entry);
  return { messages: plan.messages, actions: plan.actions, warnings };
}

function currentTokens(
  index: number,
  state: readonly MessageState[],
  variant: (index: number, kind: 'compress' | 'stub') => IdentifiedMessage | undefined,
  messages: readonly IdentifiedMessage[],
  context: StrategyContext,
): number {
  const current = state[index]!;
  if (current === 'drop') return 0;
  const message = current === 'keep' ? messages[index]! : (variant(index, current) ?? messages[index]!);
  return context.accountant.countMessage(message);
}

// ------------------------------------------------------------------------------------------- variants

function shorten(text: string, maxLength: number): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length <= maxLength ? oneLine : `${oneLine.slice(0, maxLength - 1)}…`;
}

/** The message compressed (`compress`) or stubbed (`stub`); undefined when that would not make it smaller. */
function buildVariant(
  message: IdentifiedMessage,
  kind: 'compress' | 'stub',
  score: MessageImportance,
  feature: ReturnType<typeof messageFeatures>[number],
  calls: ReadonlyMap<string, ToolCallPart>,
  settings: Settings,
  context: StrategyContext,
): IdentifiedMessage | undefined {
  const { accountant } = context;
  const handle = archiveHandle('messages', [message]);
  const tokensBefore = accountant.countMessage(message);
  const stubOutput = (part: ToolResultPart, always: boolean): ToolResultPart => {
    if (part.output.type === 'execution-denied') return part;
    const text = toolOutputText(part.output);
    if (text.startsWith(toolOutputStubPrefix)) return part;
    const tokens = accountant.countText(text);
    if (!always && tokens < settings.minTokens) return part;
    const { stub } = toolOutputStubOf(part, message.id, calls.get(part.toolCallId), tokens, context);
    return accountant.countText(stub.value) < tokens ? { ...part, output: stub } : part;
  };
  let content: Message['content'];
  if (typeof message.content === 'string') {
    if (message.content.startsWith(messageStubPrefix)) return undefined;
    content =
      kind === 'compress'
        ? compressText(message.content, handle, settings)
        : stubText(message.content, handle, tokensBefore);
  } else {
    const parts = message.content as readonly Part[];
    if (kind === 'compress') {
      let compressedAny = false;
      const next = parts.map((part): Part => {
        if (part.type === 'tool-result') return stubOutput(part, false);
        if (part.type !== 'text' || accountant.countText(part.text) < settings.minTokens) return part;
        const text = compressProse(part.text, { keepRatio: settings.keepRatio });
        if (text === part.text) return part;
        compressedAny = true;
        return { ...part, text };
      });
      // The note goes once, after the last text part, so the original is one expand away.
      if (compressedAny) {
        let last = -1;
        next.forEach((part, index) => {
          if (part.type === 'text') last = index;
        });
        const part = next[last] as { type: 'text'; text: string };
        next[last] = { ...part, text: `${part.text}\n[compressed; original archived: ${handle}]` };
      }
      content = next as Message['content'];
    } else {
      const texts = parts.filter((part): part is Extract<Part, { type: 'text' }> => part.type === 'text');
      if (texts.some((part) => part.text.startsWith(messageStubPrefix))) return undefined;
      const prose = texts.map((part) => part.text).join('\n');
      const next: Part[] = [];
      if (prose.trim() !== '' && message.role !== 'tool')
        next.push({ type: 'text', text: stubText(prose, handle, tokensBefore) });
      for (const part of parts) {
        if (part.type === 'text' || part.type === 'reasoning') continue;
        next.push(part.type === 'tool-result' ? stubOutput(part, true) : part);
      }
      if (next.length === 0) next.push({ type: 'text', text: stubText(prose, handle, tokensBefore) });
      content = next as Message['content'];
    }
  }
  const importance = recordFeatures([feature], score.level, score.reason) as unknown as JSONValue;
  const metadata = {
    ...message.metadata,
    handle,
    ...(kind === 'stub' ? { origin: 'stub', strategy: strategyName } : {}),
    importance,
  };
  const built = { ...message, content, metadata } as IdentifiedMessage;
  if (JSON.stringify(built.content) === JSON.stringify(message.content)) return undefined;
  return accountant.countMessage(built) < tokensBefore ? built : undefined;
}

function compressText(text: string, handle: string, settings: Settings): string {
  const compressed = compressProse(text, { keepRatio: settings.keepRatio });
  return compressed === text ? text : `${compressed}\n[compressed; original archived: ${handle}]`;
}

function stubText(text: string, handle: string, tokens: number): string {
  const first = text.trim().split('\n')[0] ?? '';
  const gist = shorten(first, 120);
  return `${messageStubPrefix}${handle} · ${tokens} tokens${gist === '' ? '' : ` · ${gist}`}]`;
}

// ------------------------------------------------------------------------------------------- output

interface Plan {
  messages: IdentifiedMessage[];
  tokens: number;
  actions: ImportanceAction[];
  archiveEntries: Array<{
    kind: 'messages' | 'tool-output';
    content: JSONValue | Message[];
    messageIds: string[];
    strategy: string;
  }>;
}

/**
 * The conversation the states describe, with one marker per contiguous dropped span. A span whose marker does
 * not fit (alternation) loses its oldest groups until it does; one not worth a marker is kept. Groups kept
 * that way are blocked from dropping again, and their messages are stubbed instead when they can be.
 */
function buildOutput(
  messages: readonly IdentifiedMessage[],
  groups: readonly Group[],
  state: MessageState[],
  blocked: Set<number>,
  variant: (index: number, kind: 'compress' | 'stub') => IdentifiedMessage | undefined,
  scoreAt: ReadonlyMap<number, MessageImportance>,
  features: ReturnType<typeof messageFeatures>,
  context: StrategyContext,
): Plan {
  const { accountant } = context;
  const output: IdentifiedMessage[] = [];
  const actions: ImportanceAction[] = [];
  const archiveEntries: Plan['archiveEntries'] = [];
  const undrop = (groupIndex: number) => {
    blocked.add(groupIndex);
    const group = groups[groupIndex]!;
    for (let index = group.start; index < group.end; index++)
      if (state[index] === 'drop') state[index] = variant(index, 'stub') === undefined ? 'keep' : 'stub';
  };
  const pushGroup = (groupIndex: number) => {
    const group = groups[groupIndex]!;
    for (let index = group.start; index < group.end; index++) {
      const current = state[index]!;
      const original = messages[index]!;
      if (current === 'keep' || current === 'drop') {
        output.push(original);
        continue;
      }
      const built = variant(index, current);
      if (built === undefined) {
        output.push(original);
        continue;
      }
      output.push(built);
      const score = scoreAt.get(index)!;
      archiveEntries.push({
        kind: 'messages',
        content: [original],
        messageIds: [original.id],
        strategy: strategyName,
      });
      // String content has no tool outputs to archive besides the message.
      if (Array.isArray(built.content))
        (built.content as readonly Part[]).forEach((part, partIndex) => {
          const before = (original.content as readonly Part[])[partIndex];
          if (
            part.type === 'tool-result' &&
            before?.type === 'tool-result' &&
            part.output !== before.output &&
            trimmedOriginal(before.output, original.id, context.archive) === undefined
          )
            archiveEntries.push({
              kind: 'tool-output',
              content: before.output as unknown as JSONValue,
              messageIds: [original.id],
              strategy: strategyName,
            });
        });
      actions.push({
        type: current === 'compress' ? 'compress-message' : 'stub-message',
        strategy: strategyName,
        messageIds: [original.id],
        handle: archiveHandle('messages', [original]),
        tokensBefore: accountant.countMessage(original),
        tokensAfter: accountant.countMessage(built),
        description: `${current === 'compress' ? 'compressed' : 'stubbed'} ${original.role} message ${original.id} (${score.level}: ${score.reason})`,
        level: score.level,
        reason: score.reason,
      });
    }
  };
  const isDropped = (groupIndex: number) => {
    const group = groups[groupIndex]!;
    return state[group.start] === 'drop';
  };

  let groupIndex = 0;
  while (groupIndex < groups.length) {
    if (!isDropped(groupIndex)) {
      pushGroup(groupIndex++);
      continue;
    }
    let spanEnd = groupIndex;
    while (spanEnd < groups.length && isDropped(spanEnd)) spanEnd++;
    let spanStart = groupIndex;
    const nextMessage = () => messages[groups[spanEnd]?.start ?? messages.length];
    let role = markerRole(output.at(-1), nextMessage());
    while (role === undefined && spanStart < spanEnd) {
      undrop(spanStart);
      pushGroup(spanStart++);
      role = markerRole(output.at(-1), nextMessage());
    }
    if (spanStart >= spanEnd || role === undefined) {
      groupIndex = spanEnd;
      continue;
    }
    const spanMessages = messages.slice(groups[spanStart]!.start, groups[spanEnd - 1]!.end);
    const spanHandle = archiveHandle('messages', spanMessages);
    const { level, reason } = spanLevel(groups[spanStart]!.start, groups[spanEnd - 1]!.end, scoreAt);
    const text = archivedSpanText(spanMessages.length, spanHandle);
    const importance = recordFeatures(
      features.slice(groups[spanStart]!.start, groups[spanEnd - 1]!.end),
      level,
      reason,
    ) as unknown as JSONValue;
    const marker = markerMessage(role, text, {
      id: `dropped-${spanHandle}`,
      metadata: { origin: 'stub', handle: spanHandle, strategy: strategyName, importance },
    });
    const markerTokens = accountant.countMessage(marker);
    const spanTokens = spanMessages.reduce((sum, message) => sum + accountant.countMessage(message), 0);
    if (spanTokens <= markerTokens) {
      // Not worth a marker: kept (stubbed where possible), and not tried again.
      for (let index = spanStart; index < spanEnd; index++) {
        undrop(index);
        pushGroup(index);
      }
      groupIndex = spanEnd;
      continue;
    }
    output.push(marker);
    archiveEntries.push({
      kind: 'messages',
      content: spanMessages,
      messageIds: spanMessages.map((message) => message.id),
      strategy: strategyName,
    });
    for (let index = spanStart; index < spanEnd; index++) {
      const group = groups[index]!;
      const dropped = messages.slice(group.start, group.end);
      const { level: groupLevelValue, reason: groupReason } = spanLevel(group.start, group.end, scoreAt);
      archiveEntries.push({
        kind: 'messages',
        content: dropped,
        messageIds: dropped.map((message) => message.id),
        strategy: strategyName,
      });
      actions.push({
        type: 'drop-messages',
        strategy: strategyName,
        messageIds: dropped.map((message) => message.id),
        handle: archiveHandle('messages', dropped),
        tokensBefore: dropped.reduce((sum, message) => sum + accountant.countMessage(message), 0),
        tokensAfter: index === spanStart ? markerTokens : 0,
        description: `dropped ${dropped.length} ${dropped.length === 1 ? 'message' : 'messages'} (${groupLevelValue}: ${groupReason}); marker ${spanHandle}`,
        level: groupLevelValue,
        reason: groupReason,
      });
    }
    groupIndex = spanEnd;
  }
  return {
    messages: output,
    tokens: accountant.countTotal(output),
    actions,
    archiveEntries,
  };
}

/** The level of the messages `start` to `end` (see `groupLevel`), with the reason of the first at that level. */
function spanLevel(
  start: number,
  end: number,
  scoreAt: ReadonlyMap<number, MessageImportance>,
): { level: ImportanceLevel; reason: string } {
  const scores: MessageImportance[] = [];
  for (let index = start; index < end; index++) scores.push(scoreAt.get(index)!);
  const level = groupLevel(scores.map((score) => score.level));
  return { level, reason: scores.find((score) => score.level === level)?.reason ?? '' };
}
