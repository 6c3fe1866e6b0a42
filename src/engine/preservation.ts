import type { ArchiveStore } from '../archive/archive-store.js';
import { isOriginalRequest, requestOnly, systemPromptLength } from '../messages/content.js';
import type { IdentifiedMessage, Message } from '../messages/types.js';
import { repairPlaceholders } from '../messages/validate/index.js';
import type { StrategyAction } from '../strategies/strategy.js';
import { recentTurnsStart } from '../strategies/strategy-support.js';
import type { TokenAccountant } from '../tokens/index.js';
import { trimLastTurnTexts } from './trim-last-turn.js';

/**
 * What compaction keeps byte-identical (the system prompt, the task, pinned messages, the recent turns) and how
 * it gives that up, step by step, when the budget cannot hold it: fewer recent turns when they would take more
 * than their share of the room, the last turn's long outputs trimmed, then the task, then the last turn itself.
 */

/** The messages kept byte-identical: how many recent turns, and whether the first user message (the task). */
export interface Preservation {
  keepRecentTurns: number;
  preserveFirstUserMessage: boolean;
}

/** What the preservation rules read of the compaction's settings. */
export interface PreservationSettings extends Preservation {
  budgetTokens: number;
  accountant: TokenAccountant;
  archive: ArchiveStore;
  strict: boolean;
  lastTurnCompressible: boolean;
  recentTurnsMaxShare: number;
  /**
   * Whether a strategy of the pipeline archives what stands in front of a request (`archivesRequestPreambles`):
   * then the room is measured without it, as the pipeline will leave the task (a short one may stay: the shares
   * are estimates).
   */
  preamblesArchived: boolean;
}

/**
 * Ids of the messages no strategy may touch: the system prompt (the system messages that open the
 * conversation; a later system message, such as an importer's session banner, is content), the first user
 * message (the task; markers, repair placeholders, in-context demonstrations and harness notes do not count,
 * so a second pass picks the same one), pinned messages and the last `keepRecentTurns` turns, the boundary
 * moved back so a tool call stays with its results.
 */
export function preservedMessageIds(
  messages: readonly IdentifiedMessage[],
  options: Preservation,
): Set<string> {
  const preserved = new Set<string>();
  let firstUserSeen = !options.preserveFirstUserMessage;
  const systemPrompt = systemPromptLength(messages);
  for (const [index, message] of messages.entries()) {
    // An anchored summary is rewritten only by the fold step (which merges into it), never by other strategies.
    if (index < systemPrompt || message.metadata?.pinned === true || message.metadata?.origin === 'summary')
      preserved.add(message.id);
    if (
      !firstUserSeen &&
      isOriginalRequest(message) &&
      message.content !== repairPlaceholders.conversationStart
    ) {
      preserved.add(message.id);
      firstUserSeen = true;
    }
  }
  let start = recentTurnsStart(messages, options.keepRecentTurns);
  while (start > 0 && start < messages.length && messages[start]?.role === 'tool') start--;
  for (let index = start; index < messages.length; index++) preserved.add(messages[index]!.id);
  return preserved;
}

/**
 * The room the system prompt, pinned messages and the task leave in the budget (negative when they alone exceed
 * it), and what the last `turns` recent turns take of it: their ids (beside those) and their tokens. When the
 * pipeline archives what stands in front of a request (an in-context example merged into the task), that is not
 * counted: the room is what the pipeline's result will have.
 */
function recentTurnsRoom(
  messages: readonly IdentifiedMessage[],
  settings: PreservationSettings,
  count: (messages: readonly Message[]) => number,
): {
  room: number;
  /** What the room is left beside, for a warning: the system prompt and the task, and the summary where one is. */
  beside: string;
  recentIds: (turns: number) => Set<string>;
  recentTokens: (turns: number) => number;
} {
  // Pinned messages are left whole by every strategy, their preamble too.
  const counted = settings.preamblesArchived
    ? messages.map((message) => (message.metadata?.pinned === true ? message : requestOnly(message)))
    : messages;
  const keptIds = new Map<number, Set<string>>();
  const kept = (turns: number) => {
    let ids = keptIds.get(turns);
    if (ids === undefined) {
      ids = preservedMessageIds(messages, { ...settings, keepRecentTurns: turns });
      keptIds.set(turns, ids);
    }
    return ids;
  };
  const keptTokens = (turns: number) => {
    const ids = kept(turns);
    return count(counted.filter((message) => ids.has(message.id)));
  };
  const anchorTokens = keptTokens(0);
  const summarised = messages.some(
    (message) => message.metadata?.origin === 'summary' && kept(0).has(message.id),
  );
  return {
    room: settings.budgetTokens - anchorTokens,
    beside: summarised ? 'the system prompt, the task and the summary' : 'the system prompt and the task',
    recentIds: (turns) => new Set([...kept(turns)].filter((id) => !kept(0).has(id))),
    recentTokens: (turns) => keptTokens(turns) - anchorTokens,
  };
}

/**
 * How many recent turns to keep when they would take more than `recentTurnsMaxShare` of the room that the
 * system prompt, pinned messages and the task leave: the most turns within the share, and at least one.
 * Undefined when the configured turns are within it.
 */
export function recentTurnsThatFit(
  messages: readonly IdentifiedMessage[],
  settings: PreservationSettings,
  count: (messages: readonly Message[]) => number,
  lastTurnTrimmed: boolean,
): { keepRecentTurns: number; reason: string } | undefined {
  const { keepRecentTurns, recentTurnsMaxShare } = settings;
  // Strict mode keeps the configured preservation or throws.
  if (keepRecentTurns <= 1 || recentTurnsMaxShare >= 1 || settings.strict) return undefined;
  const { room, beside, recentTokens } = recentTurnsRoom(messages, settings, count);
  const configuredTokens = recentTokens(keepRecentTurns);
  // Recent turns that are the system prompt and the task alone take nothing of the room.
  if (configuredTokens === 0 || configuredTokens <= recentTurnsMaxShare * room) return undefined;
  let turns = keepRecentTurns - 1;
  while (turns > 1 && recentTokens(turns) > recentTurnsMaxShare * room) turns--;
  return {
    keepRecentTurns: turns,
    reason:
      `the last ${keepRecentTurns} turns (${configuredTokens} tokens) would take more than ` +
      `${Math.round(recentTurnsMaxShare * 100)}% of the ${Math.max(0, room)} tokens left beside ${beside}: ` +
      `kept ${turns === 1 ? 'the last turn' : `the last ${turns}`} ` +
      (lastTurnTrimmed
        ? `(${turns === 1 ? 'its' : "the last one's"} largest tool outputs or arguments trimmed) `
        : 'byte-identical ') +
      '(recentTurnsMaxShare; originals are in the archive)',
  };
}

/**
 * Over budget, the last turn too may take at most `recentTurnsMaxShare` of the room that the system prompt,
 * pinned messages and the task leave: past it, its largest tool outputs and call arguments keep their first and
 * last lines (see `trimLastTurnTexts`), so that the summary keeps some room when the step in flight read a long
 * output or wrote a long file.
 * Undefined when it is within its share, in strict mode, or where the last turn must stay whole
 * (`lastTurnCompressible: false`, `keepRecentTurns: 0` or `recentTurnsMaxShare: 1`).
 */
export function trimmedLastTurn(
  messages: readonly IdentifiedMessage[],
  settings: PreservationSettings,
  count: (messages: readonly Message[]) => number,
): { messages: IdentifiedMessage[]; actions: StrategyAction[]; reason: string } | undefined {
  const { keepRecentTurns, recentTurnsMaxShare } = settings;
  if (settings.strict || !settings.lastTurnCompressible || recentTurnsMaxShare >= 1 || keepRecentTurns === 0)
    return undefined;
  const recent = recentTurnsRoom(messages, settings, count);
  const room = Math.max(0, recent.room);
  const lastTurnTokens = recent.recentTokens(1);
  const allowedTokens = Math.floor(recentTurnsMaxShare * room);
  if (lastTurnTokens <= allowedTokens) return undefined;
  const lastTurnIds = recent.recentIds(1);
  const trimmed = trimLastTurnTexts(messages, lastTurnIds, lastTurnTokens - allowedTokens, settings);
  const trims = trimmed.actions.length;
  if (trims === 0) return undefined;
  const outputs = trimmed.actions.filter((action) => action.type === 'trim-tool-output').length;
  const noun =
    outputs === trims ? 'tool output' : outputs === 0 ? 'tool-call argument' : 'tool output or argument';
  return {
    ...trimmed,
    reason:
      `the last turn (${lastTurnTokens} tokens) would take more than ${Math.round(recentTurnsMaxShare * 100)}% ` +
      `of the ${room} tokens left beside ${recent.beside}: kept the first and last lines of ` +
      (trims === 1 ? `its largest ${noun}` : `its ${trims} largest ${noun}s`) +
      ' (recentTurnsMaxShare; the whole texts are in the archive)',
  };
}

/**
 * Weaker preservations to try, in order, when the configured one leaves no room: one turn, then no task, then
 * (when allowed) not even the last turn.
 */
export function relaxedPreservations(
  settings: Preservation & Pick<PreservationSettings, 'lastTurnCompressible'>,
): Preservation[] {
  const lastTurn = Math.min(1, settings.keepRecentTurns);
  const relaxed: Preservation[] = [];
  if (lastTurn < settings.keepRecentTurns)
    relaxed.push({ keepRecentTurns: lastTurn, preserveFirstUserMessage: settings.preserveFirstUserMessage });
  if (settings.preserveFirstUserMessage)
    relaxed.push({ keepRecentTurns: lastTurn, preserveFirstUserMessage: false });
  if (lastTurn > 0 && settings.lastTurnCompressible)
    relaxed.push({ keepRecentTurns: 0, preserveFirstUserMessage: false });
  return relaxed;
}
