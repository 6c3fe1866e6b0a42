/**
 * What the framework integrations share: options that pick the window (a fixed budget, a model id or a window),
 * and the sessions that keep one `ContextManager` per live conversation. Frameworks hand us the whole
 * conversation on every model call; a session recognises a call that continues a conversation it has seen
 * (its keys are a prefix of the call's) and appends only the new messages, so counts, ledger and compactions
 * stay incremental and the compacted prefix stays stable for the provider's prompt cache.
 */

import { type ArchiveStore, createMemoryArchive } from '../archive/archive-store.js';
import type { ExpandToolOptions } from '../archive/expand.js';
import type {
  ContextManager,
  ContextManagerEvents,
  ContextManagerEventType,
  ContextManagerOptions,
  ContextWarningCode,
} from '../engine/context-manager.js';
import { contextManagerEventTypes, createContextManager } from '../engine/context-manager.js';
import { InvalidArgumentError } from '../errors/index.js';
import { describeValue } from '../internal/json-shapes.js';
import type { IdentifiedMessage, Message, ToolDefinition } from '../messages/types.js';

/** Any event a `ContextManager` emits. */
export type ContextManagerEvent = ContextManagerEvents[ContextManagerEventType];

export interface IntegrationOptions
  extends Omit<ContextManagerOptions, 'messages' | 'tools' | 'model' | 'contextWindow' | 'outputReserve'> {
  /**
   * Most tokens any prompt may have, tool schemas included: the window is this budget with no output reserve.
   * Instead of `model` / `contextWindow`.
   */
  budget?: number;
  /** A model id whose window comes from the models registry. @default the wrapped model's id, when none of `budget`, `model` and `contextWindow` is given */
  model?: string;
  /** The context window in tokens (overrides the registry's). */
  contextWindow?: number;
  /** Tokens kept free for the reply. @default as `resolveModel` */
  outputReserve?: number;
  /** Conversations followed at once (least recently used first out). @default 16 */
  maxConversations?: number;
  /** Every `compaction-start`, `compaction-end` and `warning` event of every conversation. */
  onEvent?: (event: ContextManagerEvent) => void;
}

/** The window settings of a manager: exactly what was configured, or the model id learnt from the framework. */
type WindowSettings = Pick<ContextManagerOptions, 'model' | 'contextWindow' | 'outputReserve'>;

export interface CheckedIntegrationOptions {
  /** Options for `createContextManager` minus the window and the messages; the archive is always set. */
  managerOptions: Omit<ContextManagerOptions, 'messages' | 'model' | 'contextWindow' | 'outputReserve'> & {
    archive: ArchiveStore;
  };
  /** Undefined when the window is to come from the framework's model id. */
  window: WindowSettings | undefined;
  /** The hard ceiling of a prompt when a budget was given. */
  budget: number | undefined;
  maxConversations: number;
  onEvent: ((event: ContextManagerEvent) => void) | undefined;
  /**
   * The expand tool's options: pages of at most the prompt ceiling in characters (about a quarter of it in
   * tokens), 1,000 to 20,000, when the window is known up front; the tool's default otherwise.
   */
  expandOptions: ExpandToolOptions;
}

/**
 * Checks the options shared by the integrations and fills the defaults (an archive shared by every
 * conversation, so the expand tool can read what any of them archived).
 * @throws InvalidArgumentError naming the option
 */
export function checkIntegrationOptions(options: IntegrationOptions): CheckedIntegrationOptions {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', `expected an options object, got ${describeValue(options)}`);
  const {
    budget,
    model,
    contextWindow,
    outputReserve,
    maxConversations = 16,
    onEvent,
    archive = createMemoryArchive(),
    ...rest
  } = options;
  if (budget !== undefined) {
    if (typeof budget !== 'number' || !Number.isInteger(budget) || budget < 1)
      throw new InvalidArgumentError('budget', `expected a positive integer, got ${describeValue(budget)}`);
    if (model !== undefined || contextWindow !== undefined || outputReserve !== undefined)
      throw new InvalidArgumentError(
        'budget',
        'give either a budget or a model / contextWindow / outputReserve, not both',
      );
  }
  if (typeof maxConversations !== 'number' || !Number.isInteger(maxConversations) || maxConversations < 1)
    throw new InvalidArgumentError(
      'maxConversations',
      `expected a positive integer, got ${describeValue(maxConversations)}`,
    );
  if (onEvent !== undefined && typeof onEvent !== 'function')
    throw new InvalidArgumentError('onEvent', `expected a function, got ${describeValue(onEvent)}`);
  let window: WindowSettings | undefined;
  if (budget !== undefined) window = { contextWindow: budget, outputReserve: 0 };
  else if (model !== undefined || contextWindow !== undefined)
    window = {
      ...(model === undefined ? {} : { model }),
      ...(contextWindow === undefined ? {} : { contextWindow }),
      ...(outputReserve === undefined ? {} : { outputReserve }),
    };
  const checked: CheckedIntegrationOptions = {
    managerOptions: { ...rest, archive },
    window,
    budget,
    maxConversations,
    onEvent,
    expandOptions: {},
  };
  // Fail now rather than on the first model call: a throwaway manager checks every option.
  if (window !== undefined) {
    const ceiling = promptCeiling(checked, createManager(checked, window, []));
    // An expanded original comes back into the same window: a page of a small budget's quarter, not 5k tokens.
    checked.expandOptions = { pageChars: Math.min(20_000, Math.max(1_000, ceiling)) };
  }
  return checked;
}

/** A manager with the checked options, forwarding its events to `onEvent`. */
export function createManager(
  options: CheckedIntegrationOptions,
  window: WindowSettings,
  messages: readonly Message[],
  tools: readonly ToolDefinition[] = [],
): ContextManager {
  const manager = createContextManager({
    ...options.managerOptions,
    ...window,
    messages: [...messages],
    ...(tools.length === 0 ? {} : { tools: [...tools] }),
  });
  const { onEvent } = options;
  if (onEvent !== undefined) for (const type of contextManagerEventTypes) manager.on(type, onEvent);
  return manager;
}

/** The largest prompt a manager may send: the budget, or the window minus the output reserve. */
function promptCeiling(options: CheckedIntegrationOptions, manager: ContextManager): number {
  const stats = manager.stats();
  return options.budget ?? stats.contextWindow - stats.outputReserve;
}

/**
 * `manager.messages()`, then, if the prompt is still above the ceiling (one step added more than the
 * thresholds leave room for), a compaction right away; if even that cannot fit, a `compaction-over-budget`
 * warning goes to `onEvent` and the prompt is sent as it is (the provider's overflow error is then recovered).
 */
export async function messagesWithinCeiling(
  options: CheckedIntegrationOptions,
  manager: ContextManager,
): Promise<IdentifiedMessage[]> {
  let messages = await manager.messages();
  const ceiling = promptCeiling(options, manager);
  if (manager.stats().totalTokens <= ceiling) return messages;
  await manager.compact();
  messages = manager.currentMessages();
  const { totalTokens } = manager.stats();
  if (totalTokens > ceiling)
    emitWarning(
      options,
      manager,
      'compaction-over-budget',
      `the prompt has ${totalTokens} tokens, above the ceiling of ${ceiling}: the messages that must be kept do not fit`,
    );
  return messages;
}

/** A `warning` event of the integration to `onEvent`, with the manager's usage (0 without a manager). */
export function emitWarning(
  options: CheckedIntegrationOptions,
  manager: ContextManager | undefined,
  code: ContextWarningCode,
  message: string,
): void {
  if (options.onEvent === undefined) return;
  const stats = manager?.stats();
  options.onEvent({
    type: 'warning',
    code,
    message,
    usageRatio: stats?.usageRatio ?? 0,
    totalTokens: stats?.totalTokens ?? 0,
  });
}

export interface ConversationSession {
  readonly manager: ContextManager;
  /** Keys of the conversation as the framework holds it; the next call of this conversation starts with them. */
  keys: string[];
}

export interface ConversationSessions {
  /**
   * The session whose keys are the longest prefix of `keys`, with the messages after that prefix appended;
   * a new session (from `create`) when no session's keys are a prefix.
   */
  resolve(
    keys: readonly string[],
    messages: readonly Message[],
    create: (messages: readonly Message[]) => ContextManager,
  ): ConversationSession;
  /** Forgets a session (its manager no longer mirrors the framework's conversation). */
  drop(session: ConversationSession): void;
  readonly size: number;
}

export function createConversationSessions(maxSessions: number): ConversationSessions {
  /** Most recently used first. */
  const sessions: ConversationSession[] = [];

  function isPrefix(prefix: readonly string[], keys: readonly string[]): boolean {
    if (prefix.length > keys.length) return false;
    // The last key first: a different conversation almost always differs there.
    if (prefix.length > 0 && prefix[prefix.length - 1] !== keys[prefix.length - 1]) return false;
    for (let index = 0; index < prefix.length; index++) if (prefix[index] !== keys[index]) return false;
    return true;
  }

  return {
    resolve(keys, messages, create) {
      let best: ConversationSession | undefined;
      for (const session of sessions)
        if (isPrefix(session.keys, keys) && (best === undefined || session.keys.length > best.keys.length))
          best = session;
      if (best === undefined || best.keys.length === 0) {
        best = { manager: create(messages), keys: [...keys] };
        sessions.unshift(best);
        if (sessions.length > maxSessions) sessions.length = maxSessions;
        return best;
      }
      // Appended before the keys move on: a bad message leaves the session as it was.
      if (keys.length > best.keys.length) best.manager.append(messages.slice(best.keys.length));
      best.keys = [...keys];
      sessions.splice(sessions.indexOf(best), 1);
      sessions.unshift(best);
      return best;
    },
    drop(session) {
      const index = sessions.indexOf(session);
      if (index !== -1) sessions.splice(index, 1);
    },
    get size() {
      return sessions.length;
    },
  };
}
