import {
  type ArchiveEntry,
  type ArchiveStore,
  handlePattern,
  putIndex,
} from '../../archive/archive-store.js';
import { hashText } from '../../internal/hash.js';
import { mapStringLeaves, someStringLeaf } from '../../internal/json-strings.js';
import { createLedger } from '../../ledger/create-ledger.js';
import type { Ledger } from '../../ledger/ledger-types.js';
import { isOriginalRequest, toolCallsOf, toolOutputText, typedRequest } from '../../messages/content.js';
import type { IdentifiedMessage, JSONValue, Message, Part, ToolResultOutput } from '../../messages/types.js';
import {
  type AnchoredSummary,
  anchoredSummaryToJson,
  buildAnchoredSummary,
  conversationLines,
  isTodoList,
  mergeAnchoredSummary,
  parseAnchoredSummary,
} from '../../summary/index.js';
import {
  type AnchoredSummaryRenderer,
  anchoredSummaryTokensUpTo,
  createAnchoredSummaryRenderer,
} from '../../summary/render-anchored-summary.js';
import { createDropPlanner, type DropPlanner, isDropMarker } from '../drop-oldest-turns/drop-oldest-turns.js';
import type { Strategy, StrategyAction, StrategyContext, StrategyResult } from '../strategy.js';
import { archivedSpanPattern, checkStrategyInput } from '../strategy-support.js';

const strategyName = 'fold-into-summary';

export interface FoldIntoSummaryOptions {
  /** Largest share of the budget the summary may take (0.65 passed the most probes at 10% on the DEV set). @default 0.65 */
  maxSummaryShare?: number;
  /** Characters of the first user task kept in the summary's intent. @default 1500 */
  maxIntentChars?: number;
}

/** What a strategy built on this one (`llmAnchored`) changes; kept apart from the JSON-serialisable options. */
export interface FoldIntoSummaryHooks {
  /** Name in the actions and the summary's metadata. @default 'fold-into-summary' */
  name?: string;
  /**
   * The record to merge for a newly folded span, given the span (originals restored) and its deterministic
   * record: e.g. that record extended with an LLM's prose. Synchronous; called once per fold round.
   * @default the deterministic record
   */
  extendRecord?: (span: readonly IdentifiedMessage[], record: AnchoredSummary) => AnchoredSummary;
}

/**
 * Characters of the intent shown while the task message itself is still in the conversation: none. The model sees
 * the task there (or its opening, where sentences of it were elided behind a handle); the record keeps it for a
 * later fold that takes the message away. A 200-character pointer spent room the other sections use better: on
 * the shared sessions and three held-out sets, leaving it out passed 13 more probes at 5/10/20% (and lost 1).
 */
export const keptTaskIntentChars = 0;

/** Rounds of "drop, summarise, measure": each round drops room for the summary the previous one built. */
const maxRounds = 10;

/**
 * Drops the oldest turns (`dropOldestTurns`) and folds what they held into ONE anchored summary message
 * (metadata origin `summary`, the structured record in `metadata.summary`), so paths, errors, commands,
 * decisions and the task survive as verbatim items instead of a bare marker. The summary takes the place of
 * the first new drop marker (so its role keeps user/assistant alternation); the other new markers stay (they are
 * short, and the turns kept around them for alternation would be dropped by a re-run otherwise, breaking
 * idempotence); their handles are listed in the summary. An existing summary (from an earlier compaction) is MERGED with the
 * newly dropped span, never regenerated, and stays where it is; this strategy owns summary messages and is the
 * only one that rewrites them (the engine preserves them from every other strategy).
 *
 * Budget: turns are dropped to leave the summary room of up to `maxSummaryShare` of the budget (a few rounds);
 * the summary then fills the room left (turns go whole, so a drop may free more than its share; a merge into
 * an existing summary of a conversation only a little over the budget leaves 4% of it free for the steps an
 * agent appends next) and is shrunk until the whole fits, before giving up. Does nothing within budget.
 */
export function foldIntoSummary(
  options: FoldIntoSummaryOptions = {},
  hooks: FoldIntoSummaryHooks = {},
): Strategy {
  const { maxSummaryShare = 0.65, maxIntentChars = 1500 } = options;
  const { name = strategyName, extendRecord } = hooks;
  return {
    name,
    apply(messages, context) {
      checkStrategyInput(messages);
      const { accountant, budgetTokens } = context;
      const inputTokens = accountant.countTotal(messages);
      if (inputTokens <= budgetTokens) return { messages: [...messages], actions: [], warnings: [] };
      const summaryCap = Math.floor(budgetTokens * maxSummaryShare);
      const task = messages.find(isOriginalRequest);
      const settings: FoldSettings = {
        // The task as the user wrote it: where the budget made it compressible, a strategy may have stubbed it
        // (as a duplicate of a later copy, which folding may take away) or elided sentences; the archive has it.
        task:
          task === undefined
            ? undefined
            : {
                id: task.id,
                text: messageTextOf(typedRequest(restoreOriginals([task], context.archive, [])[0]!)),
              },
        summaryCap,
        mergeHeadroom:
          inputTokens <= budgetTokens * (1 + smallOverflowShare)
            ? Math.floor(budgetTokens * mergeHeadroomShare)
            : 0,
        maxIntentChars,
        name,
        extendRecord,
        ledger: undefined,
        record: undefined,
        renderer: undefined,
        lines: undefined,
        earlierIndex: undefined,
      };
      // Drop room for the summary: as big as the record wants, capped at its share; the record grows as more is
      // dropped, so a few rounds, the reserve only ever growing (each round drops under a lower budget).
      const planner = createDropPlanner(messages, context);
      let reserve = 0;
      let result = foldOnce(context, planner, reserve, settings, maxRounds > 1);
      for (let round = 1; round < maxRounds; round++) {
        let nextReserve: number;
        // Turns go whole, so the drop may have freed more than the reserve: any reserve up to the room it left
        // drops the same turns again, and the next round asks for more than that room.
        if (result.wanted > result.room && reserve < summaryCap)
          nextReserve = Math.min(
            summaryCap,
            Math.max(reserve + 1, reserve + result.wanted - result.room, result.room + 1),
          );
        // Even the shrunk summary does not fit: drop more until it does or nothing more can go, so that a
        // second run finds nothing left to do (idempotence).
        else if (result.over > 0 && result.summaryTokens > 0) nextReserve = reserve + result.over;
        else break;
        const candidate = foldOnce(context, planner, nextReserve, settings, round + 1 < maxRounds);
        const sameMessages =
          candidate.result.messages.length === result.result.messages.length &&
          candidate.result.messages.every(
            (message, index) => message.id === result.result.messages[index]?.id,
          );
        reserve = nextReserve;
        if (sameMessages && result.over > 0 && !(result.wanted > result.room)) break;
        result = candidate;
      }
      return result.result;
    },
  };
}

interface FoldSettings {
  /** The first user request (the same in every round) and its original text. */
  task: { id: string; text: string } | undefined;
  summaryCap: number;
  /** Tokens a merge into an existing summary leaves free (`mergeHeadroomShare`). */
  mergeHeadroom: number;
  maxIntentChars: number;
  name: string;
  extendRecord: FoldIntoSummaryHooks['extendRecord'];
  /**
   * The ledger of the span the previous round folded: when a round's span extends it (more dropped after the
   * same start), the ledger goes on from where it was rather than starting over.
   */
  ledger: { ledger: Ledger; messages: readonly IdentifiedMessage[] } | undefined;
  /** The previous round's span and deterministic record (the task is the same in every round). */
  record:
    | { originals: readonly IdentifiedMessage[]; handles: readonly string[]; record: AnchoredSummary }
    | undefined;
  /** The previous round's renderer, with the record, intent cap and conversation lines it renders for. */
  renderer:
    | {
        record: AnchoredSummary;
        taskKept: boolean;
        lines: ReadonlySet<string>;
        renderer: AnchoredSummaryRenderer;
        json: JSONValue;
      }
    | undefined;
  /** The lines of the messages around the previous round's summary, with those messages. */
  lines: { messages: readonly IdentifiedMessage[]; lines: ReadonlySet<string> } | undefined;
  /** The existing summary message and the handle that reaches what it folded (`summaryIndex`). */
  earlierIndex: { message: IdentifiedMessage; handle: string | undefined } | undefined;
}

/**
 * The lines of the messages around the summary at `targetIndex` (`conversationLines`), the previous round's
 * set when they are the same messages (a round that dropped no more).
 */
function linesAround(
  output: readonly IdentifiedMessage[],
  targetIndex: number,
  settings: FoldSettings,
): ReadonlySet<string> {
  const around = output.filter((_, index) => index !== targetIndex);
  const previous = settings.lines;
  if (
    previous !== undefined &&
    previous.messages.length === around.length &&
    previous.messages.every((message, index) => around[index] === message)
  )
    return previous.lines;
  const lines = conversationLines(around);
  settings.lines = { messages: around, lines };
  return lines;
}

/** The ledger of `span`, continuing the previous round's when `span` extends what it has read. */
function ledgerOf(span: readonly IdentifiedMessage[], settings: FoldSettings) {
  const previous = settings.ledger;
  const continues =
    previous !== undefined &&
    previous.messages.length <= span.length &&
    previous.messages.every((message, index) => span[index] === message);
  const ledger = continues ? previous.ledger : createLedger();
  ledger.addAll(continues ? span.slice(previous.messages.length) : span);
  settings.ledger = { ledger, messages: span };
  return ledger.snapshot();
}

const recordsWithoutTasks = new WeakMap<AnchoredSummary, AnchoredSummary>();

/** `record` without its tasks, the same object for the same record (so a renderer made for it is reused). */
function withoutTasks(record: AnchoredSummary): AnchoredSummary {
  let view = recordsWithoutTasks.get(record);
  if (view === undefined) {
    view = { ...record, tasks: [] };
    recordsWithoutTasks.set(record, view);
  }
  return view;
}

/** The spans whose markers are text parts of `message` (a repair merged a marker with the message beside it). */
function markedSpans(message: Message): string[] {
  if (typeof message.content === 'string') return [];
  const handles: string[] = [];
  for (const part of message.content) {
    const handle = part.type === 'text' ? archivedSpanPattern.exec(part.text)?.[1] : undefined;
    if (handle !== undefined) handles.push(handle);
  }
  return handles;
}

/**
 * One round: drop room for `reserve` tokens of summary, fold what went into the record, render it into the
 * room left. With `roundFollows` (the loop has rounds left), a round whose summary wants more room than it got
 * (and whose reserve is below the cap) is followed by one that drops more, which replaces its result: its
 * text is not rendered (nor its renderer made: how much it wants is counted only up to the cap), and its
 * result holds only what the loop reads from it (`wanted`, `room`, the ids).
 */
function foldOnce(
  context: StrategyContext,
  planner: DropPlanner,
  reserve: number,
  settings: FoldSettings,
  roundFollows: boolean,
): { result: StrategyResult; wanted: number; room: number; over: number; summaryTokens: number } {
  const { accountant, archive, budgetTokens } = context;
  const dropped = planner.drop(Math.max(0, budgetTokens - reserve), budgetTokens);
  const output = dropped.messages;
  const existingIndex = output.findIndex((message) => message.metadata?.origin === 'summary');
  const existingMessage = existingIndex === -1 ? undefined : output[existingIndex];
  const existing = parseAnchoredSummary(existingMessage?.metadata?.summary);
  const known = new Set(existing?.handles ?? []);
  let firstMarkerIndex: number | undefined;
  // Dropped spans by where they were: a marker message, or a marker put into a neighbouring message (when
  // no message fits between the span's neighbours, as when one step goes from a run of tool calls).
  const spans: Array<{ index: number; handle: string }> = [];
  output.forEach((message, index) => {
    const handle = message.metadata?.handle;
    if (isDropMarker(message) && typeof handle === 'string' && !known.has(handle)) {
      firstMarkerIndex ??= index;
      spans.push({ index, handle });
    }
  });
  // A span without a marker message (its marker went into a neighbour, by this drop or by a repair that merged
  // the marker with the message beside it) is taken in by a summary that exists or by the one a marker message
  // of this round makes; with neither, there is no place for its summary.
  if (existing !== undefined || firstMarkerIndex !== undefined) {
    for (const action of dropped.actions) {
      if (action.type !== 'fold-marker' || action.handle === undefined || known.has(action.handle)) continue;
      const index = output.findIndex((message) => message.id === action.messageIds[0]);
      if (index !== -1) spans.push({ index, handle: action.handle });
    }
    output.forEach((message, index) => {
      if (isDropMarker(message)) return;
      for (const handle of markedSpans(message))
        if (!known.has(handle) && !spans.some((span) => span.handle === handle))
          spans.push({ index, handle });
    });
  }
  spans.sort((a, b) => a.index - b.index);
  const done = (result: StrategyResult) => ({ result, wanted: 0, room: 0, over: 0, summaryTokens: 0 });
  if (existingMessage !== undefined && existing === undefined) return done(dropped);
  // Nothing new to fold on the engine's last pass, but the summary an earlier compaction rendered into the room it
  // had then no longer fits beside the steps appended since: it is rendered again from its record, unchanged,
  // into the room left (without this, an agent loop stayed over a budget its summary alone could meet). Not
  // before: while the engine may still free room by folding more (fewer recent turns, the task), the summary
  // keeps its room (giving it up first, agent-loop replays lost probes: shared 56/95/125 -> 54/95/125).
  const refit =
    context.finalPass === true &&
    spans.length === 0 &&
    existing !== undefined &&
    accountant.countTotal(output) > budgetTokens;
  if (spans.length === 0 && !refit) return done(dropped);

  const handles: string[] = [];
  const spanMessages: IdentifiedMessage[] = [];
  // A span may hold the marker of an earlier one (a later drop takes markers in): one this summary has not
  // folded (a drop without a fold made it) is folded with it, in its place.
  const addSpan = (handle: string) => {
    const entry = archive.get(handle);
    if (entry === undefined || entry.kind !== 'messages' || handles.includes(handle)) return;
    handles.push(handle);
    for (const message of entry.content as IdentifiedMessage[]) {
      const inner = message.metadata?.handle;
      if (isDropMarker(message) && typeof inner === 'string' && !known.has(inner)) addSpan(inner);
      else {
        for (const handle of markedSpans(message)) if (!known.has(handle)) addSpan(handle);
        spanMessages.push(message);
      }
    }
  };
  for (const { handle } of spans) addSpan(handle);
  if (handles.length === 0 && !refit) return done(dropped);
  const { record, recordHandles } = refit
    ? { record: existing!, recordHandles: [] }
    : foldedRecord(spanMessages, handles, existing, context, settings);
  // Where the summary goes: in place of the existing summary, or of the first new marker.
  const targetIndex = existingIndex !== -1 ? existingIndex : firstMarkerIndex!;
  const target = output[targetIndex]!;
  const id = existingMessage?.id ?? `summary-${hashText(handles[0]!, 12)}`;
  // The task still in the conversation: its message verbatim or shortened in place (extractive prose elides
  // sentences behind a handle, its opening stays), or, where it became a stub of a later copy (a restarted
  // session sent it again), that copy. The summary does not repeat it there (`keptTaskIntentChars`). The task
  // is the record's intent, not this round's first request: once an agent loop folded the task away, the first
  // request left is a later one, and taking it for the task hid the intent only the summary still held (held-out
  // sessions at 5%: 9 of 18 loop summaries showed neither).
  const { intent } = record;
  const taskKept =
    intent !== undefined && output.some((message) => message.role === 'user' && showsTask(message, intent));
  // One handle in the header: an index of the spans and of the outputs stubbed inside them (a refit folds none).
  const existingHandle = existingMessage?.metadata?.handle;
  const indexHandle =
    refit && typeof existingHandle === 'string'
      ? existingHandle
      : summaryIndex(
          archive,
          existingMessage,
          existing,
          recordHandles,
          record.handles,
          { messageIds: [id], strategy: settings.name },
          settings,
        );
  // A line the recent turns show (the same error again, a command rerun) is not repeated: its room goes to others.
  const lines = linesAround(output, targetIndex, settings);
  const rendererOptions = {
    conversationLines: lines,
    ...(taskKept ? { maxIntentChars: keptTaskIntentChars } : {}),
    ...(indexHandle === undefined ? {} : { indexHandle }),
  };
  // A todo list the agent wrote after the summary's place is the tasks' state now: the record's older one is
  // not shown (it stays in the record, for a later merge).
  const shown =
    record.tasks.length > 0 &&
    output.some(
      (message, index) => index > targetIndex && toolCallsOf(message).some((call) => isTodoList(call.input)),
    )
      ? withoutTasks(record)
      : record;
  // The same record (a round that dropped no more) renders the same texts: keep its renderer and JSON.
  const reused =
    settings.renderer?.record === shown &&
    settings.renderer.taskKept === taskKept &&
    settings.renderer.lines === lines
      ? settings.renderer
      : undefined;
  const summaryJson = reused?.json ?? anchoredSummaryToJson(record);
  const build = (text: string): IdentifiedMessage => {
    const metadata = {
      origin: 'summary',
      strategy: settings.name,
      handle: indexHandle ?? handles[0]!,
      summary: summaryJson,
    };
    return (
      target.role === 'assistant'
        ? { role: 'assistant', content: text, id, metadata }
        : { role: 'user', content: text, id, metadata }
    ) as IdentifiedMessage;
  };
  const place = (summaryMessage: IdentifiedMessage) =>
    output.map((message) => (message === target ? summaryMessage : message));
  // Room left for the summary once everything else is counted; shrunk until the whole fits (or only the header is left).
  const rest = accountant.countTotal(place(build('')));
  const room = Math.max(0, budgetTokens - rest);
  // How much room the record wants, up to the cap: a round that gets less (and may drop more) is followed by
  // one that drops more, so it needs no renderer, only to know that the record wants more than the room (it
  // cannot when the room holds the cap).
  if (roundFollows && reserve < settings.summaryCap && settings.summaryCap > room) {
    const wanted =
      reused === undefined
        ? anchoredSummaryTokensUpTo(shown, settings.summaryCap, rendererOptions)
        : Math.min(settings.summaryCap, reused.renderer.estimatedTokens);
    if (wanted > room)
      return { result: { ...dropped, messages: place(build('')) }, wanted, room, over: 0, summaryTokens: 0 };
  }
  const renderer =
    reused?.renderer ??
    createAnchoredSummaryRenderer(shown, {
      ...rendererOptions,
      // The previous renderer's record differs in a few sections at most: the others keep their rankings.
      ...(settings.renderer === undefined ? {} : { previous: settings.renderer.renderer }),
    });
  settings.renderer = { record: shown, taskKept, lines, renderer, json: summaryJson };
  const render = (maxTokens: number) => renderer.render(maxTokens);
  const wanted = Math.min(settings.summaryCap, renderer.estimatedTokens);
  // The cap decides how much to drop; what the drop freed beyond it (turns go whole) is the summary's too,
  // but for the headroom a merge leaves so that the next appended steps fit without another fold.
  const headroom = existing === undefined ? 0 : settings.mergeHeadroom;
  let maxTokens = Math.max(1, room - headroom);
  let summaryMessage = build(render(maxTokens));
  let final = place(summaryMessage);
  for (let attempt = 0; attempt < 6; attempt++) {
    const over = accountant.countTotal(final) - budgetTokens;
    if (over <= 0 || maxTokens <= 1) break;
    maxTokens = Math.max(1, maxTokens - over - 4);
    summaryMessage = build(render(maxTokens));
    final = place(summaryMessage);
  }
  const summaryTokens = accountant.countMessage(summaryMessage);
  const action: StrategyAction = {
    type: refit ? 'refit-summary' : existing === undefined ? 'fold-summary' : 'merge-summary',
    strategy: settings.name,
    messageIds: [summaryMessage.id, ...spanMessages.map((message) => message.id)],
    tokensBefore: accountant.countMessage(target),
    tokensAfter: summaryTokens,
    description: refit
      ? `rendered the anchored summary again into the ${maxTokens} tokens left beside the steps appended since (nothing new to fold; its record is unchanged)`
      : `${existing === undefined ? 'folded' : 'merged'} ${spanMessages.length} dropped messages into the anchored summary (${handles.join(', ')})`,
  };
  return {
    result: { messages: final, actions: [...dropped.actions, action], warnings: dropped.warnings },
    wanted,
    room,
    over: accountant.countTotal(final) - budgetTokens,
    summaryTokens,
  };
}

/**
 * The record of a fold: the spans' originals (`spanMessages`, their stubbed outputs restored from the archive)
 * built into a deterministic record and merged into the existing summary's, and the handles the record names
 * (the spans first, then the restored outputs, each expandable alone).
 */
function foldedRecord(
  spanMessages: readonly IdentifiedMessage[],
  handles: readonly string[],
  existing: AnchoredSummary | undefined,
  { archive }: StrategyContext,
  settings: FoldSettings,
): { record: AnchoredSummary; recordHandles: string[] } {
  const { task } = settings;
  const restoredHandles: string[] = [];
  const originals = restoreOriginals(spanMessages, archive, restoredHandles);
  const recordHandles = [...handles, ...restoredHandles];
  const previous = settings.record;
  // A round that drops no more than the one before folds the same span into the same record: reuse it
  // (not when a hook may extend it in place).
  const sameSpan =
    previous !== undefined &&
    settings.extendRecord === undefined &&
    previous.originals.length === originals.length &&
    previous.originals.every((message, index) => originals[index] === message) &&
    previous.handles.length === recordHandles.length &&
    previous.handles.every((handle, index) => recordHandles[index] === handle);
  const deterministic = sameSpan
    ? previous.record
    : buildAnchoredSummary(originals, {
        handles: recordHandles,
        maxIntentChars: settings.maxIntentChars,
        ledger: ledgerOf(originals, settings),
        // A span that extends the previous round's carries on with what its record worked out.
        ...(previous === undefined ? {} : { previous: previous.record }),
        ...(task === undefined ? {} : { task: task.text }),
        ...(existing === undefined ? {} : { mergesInto: existing }),
      });
  settings.record = { originals, handles: recordHandles, record: deterministic };
  const update = settings.extendRecord?.(originals, deterministic) ?? deterministic;
  const record: AnchoredSummary = existing === undefined ? update : mergeAnchoredSummary(existing, update);
  return { record, recordHandles };
}

/**
 * The one handle that reaches every original a summary folded: the existing summary's index (or its one handle)
 * followed by this fold's new handles, so each fold stores only what it adds (an index of every handle would
 * grow with the session on every fold) and handles the record no longer lists (it keeps 300) stay reachable.
 * A summary from before indexes (its handle is its first span's) gets an index of its handles first.
 */
function summaryIndex(
  archive: ArchiveStore,
  existingMessage: IdentifiedMessage | undefined,
  existing: AnchoredSummary | undefined,
  foldHandles: readonly string[],
  allHandles: readonly string[],
  from: Pick<ArchiveEntry, 'messageIds' | 'strategy'>,
  settings: FoldSettings,
): string | undefined {
  if (existing === undefined) return putIndex(archive, allHandles, from);
  // Every round finds the same summary: its handle is looked up (an archive read) once per compaction.
  let earlier =
    settings.earlierIndex?.message === existingMessage ? settings.earlierIndex?.handle : undefined;
  if (earlier === undefined) {
    const named = existingMessage?.metadata?.handle;
    const reachesExisting =
      typeof named === 'string' &&
      ((existing.handles.length === 1 && existing.handles[0] === named) ||
        archive.get(named)?.kind === 'index');
    earlier = reachesExisting ? named : putIndex(archive, existing.handles, from);
    if (existingMessage !== undefined) settings.earlierIndex = { message: existingMessage, handle: earlier };
  }
  const known = new Set(existing.handles);
  const added = foldHandles.filter((handle) => !known.has(handle));
  return putIndex(archive, earlier === undefined ? added : [earlier, ...added], from);
}

const archivedHandle = /archived: (h-[0-9a-f]+)/;

/**
 * Share of the budget a merge into an existing summary leaves free, when the conversation came in only a little
 * over the budget (`smallOverflowShare`): an agent compacting at its limit after every step. A summary whose
 * record wants more than the room fills it to the last token, and then every step it appends needs another fold
 * (~17 ms at 250k tokens); with a few steps' worth of headroom, most appends need none.
 */
const mergeHeadroomShare = 0.04;

/**
 * Past this share over the budget, the caller compacts ahead of its limit (a context manager compacts at 70% of
 * its window down to 50%): its own target leaves the room, and headroom would only take it from the summary.
 * Replaying the sessions so (`precis-loop`), leaving none there passed 24 more probes on four sets at 5/10/20%
 * (none after any merge: 32, but then an agent compacting at its limit folds again at every step).
 */
const smallOverflowShare = 0.1;

/**
 * Restored tool messages by the message they restore, with the archive entries they were restored from: a
 * round restores the same messages as the round before, and giving back the same object lets what the summary
 * memoises per message (and the incremental ledger) carry over.
 */
const restoredMessages = new WeakMap<
  IdentifiedMessage,
  { entries: Array<ArchiveEntry | undefined>; message: IdentifiedMessage; handles: string[] }
>();

/**
 * The dropped messages with what earlier strategies archived put back where the archive has it: a message
 * whose reasoning was stripped, a tool output that was stubbed. The summary is built from originals, so
 * errors and paths cut from a stub's gist still count. The handles of restored tool outputs go to `restoredHandles`.
 */
function restoreOriginals(
  messages: readonly IdentifiedMessage[],
  archive: ArchiveStore,
  restoredHandles: string[],
): IdentifiedMessage[] {
  return messages.map((message) => {
    if (typeof message.content === 'string') return restoreTexts(message, archive);
    let restored = message;
    for (const part of message.content) {
      if (part.type !== 'text') continue;
      const handle = archivedHandle.exec(part.text)?.[1];
      const entry = handle === undefined ? undefined : archive.get(handle);
      if (entry?.kind !== 'messages' || !Array.isArray(entry.content)) continue;
      const original = (entry.content as IdentifiedMessage[]).find(
        (candidate) => candidate.id === message.id,
      );
      if (original !== undefined) restored = original;
    }
    if (typeof restored.content === 'string' || restored.role !== 'tool')
      return restoreTexts(restored, archive);
    const entries = restored.content.map((part) => {
      if (part.type !== 'tool-result') return undefined;
      const handle = archivedHandle.exec(outputText(part.output))?.[1];
      const entry = handle === undefined ? undefined : archive.get(handle);
      if (entry?.kind !== 'tool-output' || typeof entry.content !== 'object' || entry.content === null)
        return undefined;
      return entry;
    });
    const known = restoredMessages.get(restored);
    if (known?.entries.every((entry, index) => entry === entries[index])) {
      restoredHandles.push(...known.handles);
      return known.message;
    }
    const handles: string[] = [];
    const content = restored.content.map((part, index) => {
      const entry = entries[index];
      if (part.type !== 'tool-result' || entry === undefined) return part;
      // JSON outputs may have been minified before the stub archived them: list only text the transcript had as is.
      const original = entry.content as { type?: unknown; value?: unknown };
      if (typeof original.value === 'string' && !/^\s*[[{]/.test(original.value)) handles.push(entry.handle);
      return { ...part, output: entry.content as unknown as typeof part.output };
    });
    const result = { ...restored, content } as IdentifiedMessage;
    restoredMessages.set(restored, { entries, message: result, handles });
    restoredHandles.push(...handles);
    return result;
  });
}

/**
 * The text of an output that can name its archived original: a text output's (a stub, a trimmed output), or the
 * text items of a content output (trimmed in place beside its images); a JSON output is never a stub.
 */
function outputText(output: ToolResultOutput): string {
  return output.type === 'json' || output.type === 'error-json' ? '' : toolOutputText(output);
}

/** A text shortened by one strategy can be shortened again by another: at most this many layers are undone. */
const maxTextLayers = 3;

/**
 * Messages with their shortened texts put back, per archive and by the message they restore: a fold's rounds
 * get the same object back, so what the summary memoises per message carries over.
 */
const restoredTexts = new WeakMap<ArchiveStore, WeakMap<IdentifiedMessage, IdentifiedMessage>>();

/**
 * `message` with each text that a strategy shortened (extractive prose, pruned code bodies) put back from the
 * archive: an archived text of this message that the shortened text names by its handle. Without the
 * originals, a sentence or a pasted error line elided before the fold would never reach the summary.
 */
function restoreTexts(message: IdentifiedMessage, archive: ArchiveStore): IdentifiedMessage {
  let restoredOf = restoredTexts.get(archive);
  if (restoredOf === undefined) {
    restoredOf = new WeakMap();
    restoredTexts.set(archive, restoredOf);
  }
  const known = restoredOf.get(message);
  if (known !== undefined) return known;
  const restored = withTexts(message, (text) => originalText(text, message.id, archive));
  restoredOf.set(message, restored);
  return restored;
}

/**
 * `message` with `map` applied to its texts (string content, text parts, the string arguments of its tool calls,
 * which the last-turn trim shortens): itself when no text changes.
 */
function withTexts(message: IdentifiedMessage, map: (text: string) => string): IdentifiedMessage {
  if (typeof message.content === 'string') {
    const text = map(message.content);
    return text === message.content ? message : ({ ...message, content: text } as IdentifiedMessage);
  }
  const mayName = (part: Part) =>
    part.type === 'text'
      ? part.text.includes('h-')
      : part.type === 'tool-call' && someStringLeaf(part.input, (text) => text.includes('h-'));
  if (!message.content.some(mayName)) return message;
  const content = message.content.map((part) => {
    if (part.type === 'tool-call' && mayName(part)) {
      const input = mapStringLeaves(part.input, map);
      return input === part.input ? part : { ...part, input };
    }
    if (part.type !== 'text') return part;
    const text = map(part.text);
    return text === part.text ? part : { ...part, text };
  });
  return content.every((part, index) => part === (message.content as typeof content)[index])
    ? message
    : ({ ...message, content } as IdentifiedMessage);
}

/**
 * The text a shortened text of message `messageId` was made from: a shortened text names its original by the
 * handle in its note (`full text: h-…`, `// … 14 lines elided [h-…]`); `text` itself when it names none.
 */
function originalText(text: string, messageId: string, archive: ArchiveStore): string {
  let current = text;
  for (let layer = 0; layer < maxTextLayers && current.includes('h-'); layer++) {
    const entry = current
      .match(handlePattern)
      ?.map((handle) => archive.get(handle))
      .find((candidate) => candidate?.kind === 'text' && candidate.messageIds.includes(messageId));
    if (typeof entry?.content !== 'string') break;
    current = entry.content;
  }
  return current;
}

/**
 * Whether a user message, as the conversation now has it, shows the task: whole, shortened with its opening
 * (extractive prose keeps a message's first sentence), or a later copy merged after another request. The
 * opening must start a line: a message that quotes it mid-sentence does not show the task. A stub does not
 * show it, nor a summary (whose intent section quotes it).
 */
export function showsTask(message: IdentifiedMessage, taskText: string): boolean {
  const origin = message.metadata?.origin;
  if (origin === 'stub' || origin === 'summary') return false;
  const text = messageTextOf(typedRequest(message));
  if (text === taskText) return true;
  const opening = taskText.trim().split('\n')[0]!.trim().slice(0, 80);
  if (opening === '') return false;
  for (let at = text.indexOf(opening); at !== -1; at = text.indexOf(opening, at + 1))
    if (/^\s*$/.test(text.slice(text.lastIndexOf('\n', at - 1) + 1, at))) return true;
  return false;
}

function messageTextOf(message: IdentifiedMessage): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}
