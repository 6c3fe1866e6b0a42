import { type ArchiveEntry, archiveHandle } from '../../archive/archive-store.js';
import { isFormatComplaint, systemPromptLength, toolCallsOf, toolResultsOf } from '../../messages/content.js';
import type { IdentifiedMessage, Message } from '../../messages/types.js';
import { repairMessages, validateMessages } from '../../messages/validate/index.js';
import type {
  Strategy,
  StrategyAction,
  StrategyContext,
  StrategyResult,
  StrategyWarning,
} from '../strategy.js';
import {
  archivedSpanText,
  assistantThenUserFits,
  checkStrategyInput,
  type MessageGroup,
  markerMessage,
  markerRole,
  messageGroups,
  strategyWarning,
} from '../strategy-support.js';

const strategyName = 'drop-oldest-turns';

/**
 * The last resort: drops the oldest turns whole until the budget holds. A turn is a user message and
 * everything up to the next user message. A turn with a preserved message (the first task, a pinned message)
 * is dropped piecewise around it: its other user messages alone, and each assistant message together with
 * the tool messages that answer it, so a tool call never loses its result. Never dropped: the system prompt
 * (the system messages that open the conversation; a later one goes with its turn),
 * preserved messages and anchored summaries (metadata origin `summary`); an earlier marker goes only with groups
 * dropped around it, into the new span (its handle stays reachable through the new one). The last user
 * message (not a complaint about a reply's format) and the last assistant step (the current request and the
 * work in flight) go last, only when dropping everything else still leaves the budget unmet, and the last step
 * never while a tool call in it has no result.
 *
 * Each contiguous dropped span leaves one marker, `[N earlier messages archived: <handle>]` (metadata
 * origin `stub`), whose handle expands to the whole span; each turn's share of a span is archived too, as a
 * `messages` entry named in its `drop-turn` action. The marker is a user message, or an assistant message
 * where a user message would break the user/assistant alternation Anthropic requires. When neither fits
 * (between the task and the agent's next step), the span's oldest group and the rest go behind two markers, an
 * assistant one and a user one, when each is worth one; otherwise the span's oldest group is kept (so a user
 * request survives next to its marker; its newest step instead when the oldest would take over half the budget
 * and the step a quarter at most) and placement is tried again;
 * as a last resort the marker text is put at the start of the next message (or the end of the previous one)
 * when that message is not preserved. Below an earlier marker or summary, an agent step is not kept for a
 * marker's sake: the marker text goes into a neighbour first. The result is checked with `validateMessages`
 * for every provider; if the input was valid and the result is not, `repairMessages` fixes it and a warning
 * says so.
 *
 * Does nothing when the conversation is within budget.
 */
export function dropOldestTurns(): Strategy {
  return {
    name: strategyName,
    apply(messages, context) {
      return createDropPlanner(messages, context).drop(context.budgetTokens);
    },
  };
}

/**
 * `dropOldestTurns` over one conversation under one budget after another (folding asks for a lower budget
 * each round, to make room for its summary).
 */
export interface DropPlanner {
  /**
   * What `dropOldestTurns().apply(messages, { ...context, budgetTokens })` returns. With a `hardBudget` above
   * `budgetTokens` (a fold asks for room for its summary below the budget it must meet), the last request and the
   * last step go only when dropping everything else leaves the result over `hardBudget`.
   */
  drop(budgetTokens: number, hardBudget?: number): StrategyResult;
}

interface Group extends MessageGroup {
  turn: number;
  droppable: boolean;
  /** The last user message or the last step: dropped only after every droppable group. */
  lastResort: boolean;
}

/** Estimated cost of one marker message, used before the markers exist; the final count is exact. */
const markerTokenEstimate = 30;

/** A plan as `planSpans` made it, with the groups it dropped (not those kept for a marker) and its exact count. */
interface TriedPlan {
  plan: Plan;
  dropped: readonly number[];
  tokens: number;
  /** Whether the plan's messages pass `validateMessages`, once asked. */
  valid?: boolean;
}

/**
 * A `DropPlanner` for `messages` (which must not change while it is in use; `context.budgetTokens` is not
 * read): what does not depend on the budget (the groups, their counts, whether the input is valid) is worked
 * out once, and every plan tried is remembered by the groups it was asked to drop and the hard budget, since a
 * lower budget tries the plans of a higher one again on its way past them.
 * @throws InvalidMessageError naming the message index and field
 */
export function createDropPlanner(
  messages: readonly IdentifiedMessage[],
  context: StrategyContext,
): DropPlanner {
  checkStrategyInput(messages);
  const { accountant } = context;
  const initialTokens = accountant.countTotal(messages);
  let prepared: ReturnType<typeof prepare> | undefined;
  const tried = new Map<string, TriedPlan>();
  let inputValid: boolean | undefined;
  const check = { provider: 'any', allowPendingToolCalls: true } as const;
  const tryPlan = (
    groups: readonly Group[],
    groupTokens: readonly number[],
    dropped: Set<number>,
    hardBudget: number,
  ): TriedPlan => {
    // A plan depends on the hard budget too (a long oldest group is measured against it); a fold passes the same
    // one in every round.
    const key = `${hardBudget}:${[...dropped].sort((a, b) => a - b).join(',')}`;
    let known = tried.get(key);
    if (known === undefined) {
      const plan = planSpans(messages, groups, groupTokens, dropped, context, hardBudget);
      known = {
        plan,
        dropped: [...dropped],
        tokens: accountant.countTotal(plan.messages),
      };
      tried.set(key, known);
    }
    return known;
  };
  return {
    drop(budgetTokens, hardBudget = budgetTokens) {
      if (initialTokens <= budgetTokens) return { messages: [...messages], actions: [], warnings: [] };
      prepared ??= prepare(messages, context);
      const { groups, groupTokens } = prepared;
      let units = prepared.units;
      // Every group of the units taken so far. Planning keeps some of them for a marker to fit, afresh each time:
      // a group kept beside the current request is not needed once the request goes too.
      const requested = new Set<number>();
      let nextUnit = 0;
      let current = tryPlan(groups, groupTokens, new Set(), hardBudget);
      for (;;) {
        let estimate = current.tokens;
        // Everything else is gone: the last request and step follow only when the hard budget still fails.
        if (nextUnit === units.length && units !== prepared.withLastResort && current.tokens > hardBudget)
          units = prepared.withLastResort;
        if (estimate <= budgetTokens || nextUnit >= units.length) break;
        // Drop units oldest first until the estimate fits, then build and count exactly.
        const planned = new Set(current.dropped);
        while (nextUnit < units.length && estimate > budgetTokens) {
          for (const groupIndex of units[nextUnit] ?? []) {
            requested.add(groupIndex);
            const startsSpan = !planned.has(groupIndex - 1);
            planned.add(groupIndex);
            estimate -= (groupTokens[groupIndex] ?? 0) - (startsSpan ? markerTokenEstimate : 0);
          }
          nextUnit++;
        }
        current = tryPlan(groups, groupTokens, new Set(requested), hardBudget);
      }
      const { plan } = current;
      for (const entry of plan.archiveEntries) context.archive.put(entry);

      const warnings: StrategyWarning[] = [...plan.warnings];
      let output = [...plan.messages];
      if (plan.actions.length > 0) {
        inputValid ??= validateMessages(messages, check).valid;
        if (inputValid) {
          current.valid ??= validateMessages(output, check).valid;
          if (!current.valid) {
            const repaired = repairMessages(output, check);
            output = repaired.messages as IdentifiedMessage[];
            warnings.push(
              strategyWarning(
                strategyName,
                `repaired the result after dropping turns: ${repaired.repairs.map((repair) => repair.description).join('; ')}`,
              ),
            );
          }
        }
      }
      return { messages: output, actions: [...plan.actions], warnings };
    },
  };
}

/**
 * The groups of `messages`, the units they are dropped in (and the same followed by the last request and the last
 * step, as a last resort), and their token counts.
 */
function prepare(messages: readonly IdentifiedMessage[], context: StrategyContext) {
  const groups = groupMessages(messages, context);
  const units = dropUnits(groups);
  const withLastResort = [...units];
  groups.forEach((group, groupIndex) => {
    if (group.lastResort) withLastResort.push([groupIndex]);
  });
  const groupTokens = groups.map((group) => {
    let tokens = 0;
    for (let index = group.start; index < group.end; index++)
      tokens += context.accountant.countMessage(messages[index]!);
    return tokens;
  });
  return { groups, units, withLastResort, groupTokens };
}

/** A marker of an earlier drop, or an anchored summary (which folds dropped spans in). */
function isMarker(message: Message): boolean {
  return isSummary(message) || isDropMarker(message);
}

/** An anchored summary: never dropped (the fold merges into it). */
function isSummary(message: Message): boolean {
  return message.metadata?.origin === 'summary';
}

/**
 * The marker of an earlier drop: it goes with the groups dropped around it, into the new span (whose archive
 * entry holds it, so its handle stays reachable), never alone. Kept, each later compaction of an agent loop
 * would leave one more marker (and the request or step kept beside it for alternation) for good: a replay of
 * the shared sessions compacting before every step kept dozens, and their summaries shrank to the header.
 */
export function isDropMarker(message: Message): boolean {
  return message.metadata?.origin === 'stub' && message.metadata.strategy === strategyName;
}

function groupMessages(messages: readonly IdentifiedMessage[], context: StrategyContext): Group[] {
  const groups: Group[] = [];
  let turn = -1;
  let lastUser = -1;
  messages.forEach((message, index) => {
    // The harness's complaint about a reply's format (mini-swe-agent) is neither the request in flight nor what
    // a step saw: kept last, it outlived the steps that came after it.
    if (message.role === 'user' && !isMarker(message) && !isFormatComplaint(message)) lastUser = index;
  });
  const systemPrompt = systemPromptLength(messages);
  for (const { start, end } of messageGroups(messages)) {
    const first = messages[start]!;
    if (first.role === 'user') turn++;
    let eligible = start >= systemPrompt;
    for (let index = start; index < end && eligible; index++) {
      const message = messages[index]!;
      if (context.preservedIds.has(message.id) || isSummary(message)) eligible = false;
    }
    // A group kept so that the summary after it could fit stays kept (and a re-run changes nothing). Not the task
    // opening the conversation: kept while it was preserved, it may go once it is not (an agent loop's later
    // compaction under a budget it no longer fits), a user marker taking its place before the summary.
    const followedBy = messages[end];
    if (
      followedBy !== undefined &&
      isSummary(followedBy) &&
      !(start === systemPrompt && first.role === 'user')
    )
      eligible = false;
    const lastResort = eligible && start === lastUser;
    groups.push({ start, end, turn, droppable: eligible && !lastResort, lastResort });
  }
  const last = groups.at(-1);
  if (last !== undefined && (last.droppable || last.lastResort)) {
    last.droppable = false;
    last.lastResort = !awaitsToolResult(messages, last);
  }
  return groups;
}

/** Whether a tool call of the group's assistant message has no result in the group (its tool still runs). */
function awaitsToolResult(messages: readonly IdentifiedMessage[], group: MessageGroup): boolean {
  const answered = new Set<string>();
  for (let index = group.start; index < group.end; index++)
    for (const result of toolResultsOf(messages[index]!)) answered.add(result.toolCallId);
  return toolCallsOf(messages[group.start]!).some((call) => !answered.has(call.toolCallId));
}

/** Group indexes to drop together, oldest first: whole turns where every group may go, single groups otherwise. */
function dropUnits(groups: readonly Group[]): number[][] {
  const units: number[][] = [];
  let index = 0;
  while (index < groups.length) {
    const turn = groups[index]!.turn;
    const members: number[] = [];
    while (index < groups.length && groups[index]!.turn === turn) members.push(index++);
    if (members.every((member) => groups[member]!.droppable)) units.push(members);
    else for (const member of members) if (groups[member]!.droppable) units.push([member]);
  }
  return units;
}

interface Plan {
  messages: IdentifiedMessage[];
  /** What to archive once the plan is final. */
  archiveEntries: Array<Omit<ArchiveEntry, 'handle'>>;
  actions: StrategyAction[];
  warnings: StrategyWarning[];
}

/**
 * Builds the conversation without the dropped groups, one marker per contiguous span. Groups that had to stay
 * for a marker to fit are taken out of `dropped`.
 */
function planSpans(
  messages: readonly IdentifiedMessage[],
  groups: readonly Group[],
  /** Each group's tokens, as `prepare` counted them. */
  groupTokens: readonly number[],
  dropped: Set<number>,
  context: StrategyContext,
  /** The budget the result must meet (a drop's hard budget): what "half the budget" is measured against. */
  budgetTokens: number,
): Plan {
  const output: IdentifiedMessage[] = [];
  const actions: StrategyAction[] = [];
  const warnings: StrategyWarning[] = [];
  const archiveEntries: Plan['archiveEntries'] = [];
  const foldActions: StrategyAction[] = [];
  const pendingFolds = new Map<number, IdentifiedMessage>();
  /**
   * Puts the marker of the span `[spanStart, spanEnd)` as a `role` message, or into a neighbour where no role
   * fits; keeps the span where a marker would cost as much as the span, or has nowhere to go.
   */
  const placeSpan = (spanStart: number, spanEnd: number, role: 'user' | 'assistant' | undefined) => {
    const spanMessages = messages.slice(groups[spanStart]!.start, groups[spanEnd - 1]!.end);
    const keepSpan = () => {
      for (let index = spanStart; index < spanEnd; index++)
        pushGroup(output, messages, groups[index]!, pendingFolds);
    };
    // Earlier markers alone: a new marker would only rename them.
    if (spanMessages.every(isDropMarker)) return keepSpan();
    const spanHandle = archiveHandle('messages', spanMessages);
    const markerText = archivedSpanText(spanMessages.length, spanHandle);
    const spanTokens = spanMessages.reduce(
      (sum, message) => sum + context.accountant.countMessage(message),
      0,
    );
    if (spanTokens <= context.accountant.countMessage(dropMarker('user', markerText, spanHandle))) {
      // Not worth a marker (yet): keep the span; a later pass may extend it.
      return keepSpan();
    }
    const previous = output.at(-1);
    const next = messages[groups[spanEnd]?.start ?? messages.length];
    let markerTokens = 0;
    if (role !== undefined) {
      const marker = dropMarker(role, markerText, spanHandle);
      output.push(marker);
      markerTokens = context.accountant.countMessage(marker);
    } else if (next !== undefined && canFold(next, context)) {
      const folded = foldMarker(next, markerText, 'start');
      pendingFolds.set(groups[spanEnd]!.start, folded);
      foldActions.push(foldAction(next, folded, spanHandle, context));
    } else if (previous !== undefined && canFold(previous, context)) {
      const folded = foldMarker(previous, markerText, 'end');
      output[output.length - 1] = folded;
      foldActions.push(foldAction(previous, folded, spanHandle, context));
    } else {
      for (let index = spanStart; index < spanEnd; index++) {
        dropped.delete(index);
        pushGroup(output, messages, groups[index]!, pendingFolds);
      }
      warnings.push(
        strategyWarning(
          strategyName,
          `kept messages ${spanMessages[0]?.id} to ${spanMessages.at(-1)?.id}: no marker could be placed between their preserved neighbours without breaking role alternation`,
        ),
      );
      return;
    }
    archiveEntries.push({
      kind: 'messages',
      content: spanMessages,
      messageIds: spanMessages.map((message) => message.id),
      strategy: strategyName,
    });
    actions.push(
      ...turnActions(
        messages,
        groups,
        { spanStart, spanEnd, spanHandle, markerTokens },
        archiveEntries,
        context,
      ),
    );
  };
  let groupIndex = 0;
  while (groupIndex < groups.length) {
    if (!dropped.has(groupIndex)) {
      pushGroup(output, messages, groups[groupIndex]!, pendingFolds);
      groupIndex++;
      continue;
    }
    let spanEnd = groupIndex;
    while (spanEnd < groups.length && dropped.has(spanEnd)) spanEnd++;
    let spanStart = groupIndex;
    // Keep the span's oldest groups until a marker fits between its neighbours. Once a marker or summary is
    // above (it names the earlier spans), a step is not kept only to make room for another marker message
    // when a neighbour can carry the marker text: keeping steps can leave a feasible budget unmet.
    const next = messages[groups[spanEnd]?.start ?? messages.length];
    let role = markerRole(output.at(-1), next);
    const markerAbove = output.some(isMarker);
    while (role === undefined && spanStart < spanEnd - 1) {
      const oldest = messages[groups[spanStart]!.start]!;
      if (
        markerAbove &&
        oldest.role !== 'user' &&
        neighbourTakesMarker(output, messages, groups[spanEnd], context)
      )
        break;
      // Two markers where one does not fit (between the task and the agent's next step): the span's oldest group
      // and the rest, each behind its own marker, cost less than keeping that group, when both are worth one.
      // Not a user marker first (before an assistant marker and a user request): that pair would let a last
      // request that is only a harness note (aider's lint output) stay at the summary's expense (held-out aider
      // session at 5%: summary 539 -> 165 tokens).
      if (
        assistantThenUserFits(output.at(-1), next) &&
        groupTokens[spanStart]! > 2 * markerTokenEstimate &&
        groupTokens.slice(spanStart + 1, spanEnd).reduce((sum, tokens) => sum + tokens, 0) >
          2 * markerTokenEstimate
      ) {
        placeSpan(spanStart, spanStart + 1, 'assistant');
        spanStart++;
        role = 'user';
        break;
      }
      // Where the oldest group would take over half the budget (a long task the budget no longer preserves),
      // keeping the span's newest step instead (an assistant message and its results, a quarter of the budget at
      // most) lets a user marker open the span. A step, not an earlier marker: kept in a step's place, the
      // marker a previous run put beside the kept task would let this run drop the task it kept (a re-run would
      // not leave the result as it is).
      const newest = groups[spanEnd - 1]!;
      const newestRole = markerRole(output.at(-1), messages[newest.start]);
      if (
        messages[newest.start]!.role === 'assistant' &&
        !isDropMarker(messages[newest.start]!) &&
        newestRole !== undefined &&
        groupTokens[spanStart]! > budgetTokens / 2 &&
        groupTokens[spanEnd - 1]! <= budgetTokens / 4
      ) {
        dropped.delete(spanEnd - 1);
        spanEnd--;
        role = newestRole;
        break;
      }
      dropped.delete(spanStart);
      pushGroup(output, messages, groups[spanStart]!, pendingFolds);
      spanStart++;
      role = markerRole(output.at(-1), next);
    }
    placeSpan(spanStart, spanEnd, role);
    groupIndex = spanEnd;
  }
  return { messages: output, archiveEntries, actions: [...actions, ...foldActions], warnings };
}

function pushGroup(
  output: IdentifiedMessage[],
  messages: readonly IdentifiedMessage[],
  group: Group,
  pendingFolds: ReadonlyMap<number, IdentifiedMessage>,
): void {
  for (let index = group.start; index < group.end; index++)
    output.push(pendingFolds.get(index) ?? messages[index]!);
}

/** One `drop-turn` action (and archive entry) per turn the span covers. */
function turnActions(
  messages: readonly IdentifiedMessage[],
  groups: readonly Group[],
  span: { spanStart: number; spanEnd: number; spanHandle: string; markerTokens: number },
  archiveEntries: Plan['archiveEntries'],
  context: StrategyContext,
): StrategyAction[] {
  const { spanStart, spanEnd, spanHandle, markerTokens } = span;
  const actions: StrategyAction[] = [];
  let index = spanStart;
  while (index < spanEnd) {
    const turn = groups[index]!.turn;
    const first = index;
    while (index < spanEnd && groups[index]!.turn === turn) index++;
    const dropped = messages.slice(groups[first]!.start, groups[index - 1]!.end);
    const entry = {
      kind: 'messages',
      content: dropped,
      messageIds: dropped.map((message) => message.id),
      strategy: strategyName,
    } as const;
    archiveEntries.push(entry);
    const handle = archiveHandle(entry.kind, entry.content);
    const tokensBefore = dropped.reduce((sum, message) => sum + context.accountant.countMessage(message), 0);
    const isFirst = actions.length === 0;
    actions.push({
      type: 'drop-turn',
      strategy: strategyName,
      messageIds: dropped.map((message) => message.id),
      handle,
      tokensBefore,
      tokensAfter: isFirst ? markerTokens : 0,
      description: `dropped ${dropped.length} ${dropped.length === 1 ? 'message' : 'messages'} of turn ${turn + 1}${turn < 0 ? ' (before the first user message)' : ''}; marker ${spanHandle}`,
    });
  }
  return actions;
}

function dropMarker(role: 'user' | 'assistant', text: string, handle: string): IdentifiedMessage {
  return markerMessage(role, text, {
    id: `archived-${handle}`,
    metadata: { origin: 'stub', handle, strategy: strategyName },
  });
}

function foldAction(
  message: IdentifiedMessage,
  folded: IdentifiedMessage,
  spanHandle: string,
  context: StrategyContext,
): StrategyAction {
  return {
    type: 'fold-marker',
    strategy: strategyName,
    messageIds: [message.id],
    // The span whose marker this is: a summary that takes the span in finds it here.
    handle: spanHandle,
    tokensBefore: context.accountant.countMessage(message),
    tokensAfter: context.accountant.countMessage(folded),
    description: `put the marker of ${spanHandle} into ${message.role} message ${message.id}: no separate marker fits there`,
  };
}

/** Whether the message before a span (in the output so far) or the one after it can carry its marker text. */
function neighbourTakesMarker(
  output: readonly IdentifiedMessage[],
  messages: readonly IdentifiedMessage[],
  after: Group | undefined,
  context: StrategyContext,
): boolean {
  const next = messages[after?.start ?? messages.length];
  const previous = output.at(-1);
  return (
    (next !== undefined && canFold(next, context)) || (previous !== undefined && canFold(previous, context))
  );
}

function canFold(message: IdentifiedMessage, context: StrategyContext): boolean {
  return (message.role === 'user' || message.role === 'assistant') && !context.preservedIds.has(message.id);
}

/** `message` (user or assistant) with the marker text as its first or last text. Keeps the id. */
function foldMarker(message: IdentifiedMessage, text: string, where: 'start' | 'end'): IdentifiedMessage {
  if (typeof message.content === 'string') {
    const content = where === 'start' ? `${text}\n\n${message.content}` : `${message.content}\n\n${text}`;
    return { ...message, content } as IdentifiedMessage;
  }
  const part = { type: 'text' as const, text };
  const content = where === 'start' ? [part, ...message.content] : [...message.content, part];
  return { ...message, content } as IdentifiedMessage;
}
