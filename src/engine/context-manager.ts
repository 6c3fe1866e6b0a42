import type { ArchiveStore } from '../archive/archive-store.js';
import { createMemoryArchive } from '../archive/archive-store.js';
import { InvalidArgumentError, InvalidMessageError } from '../errors/index.js';
import { describeValue } from '../internal/json-shapes.js';
import { createLedger, type Ledger, type LedgerSnapshot } from '../ledger/index.js';
import { systemPromptLength, toolCallsOf, toolResultsOf } from '../messages/content.js';
import { derivedMessageId } from '../messages/ids.js';
import { parseMessages } from '../messages/parse.js';
import type { IdentifiedMessage, Message, ToolDefinition, ToolMessage } from '../messages/types.js';
import type { AnyStrategy, StrategyAction } from '../strategies/strategy.js';
import { startsTurn } from '../strategies/strategy-support.js';
import { createTokenAccountant, resolveModel, type TokenAccountant } from '../tokens/index.js';
import { type CompactAsyncOptions, type CompactProvider, compactAsync, compactProviders } from './compact.js';
import { type ContextOverflow, parseOverflowError } from './overflow-errors.js';

/** Reads a file's current contents for rehydration; undefined or null when it no longer exists. */
export type RehydrationReader = (
  path: string,
) => string | undefined | null | Promise<string | undefined | null>;

export interface RehydrationOptions {
  /** Called with paths exactly as the ledger recorded them (as the agent wrote them). */
  readFile: RehydrationReader;
  /** How many of the most recently created or modified files to re-attach. @default 3 */
  maxFiles?: number;
  /** Tokens all re-attached contents may take together; longer files are cut. @default 4000 */
  maxTokens?: number;
  /** Name of the synthetic tool call that carries the contents. @default 'rehydrate_files' */
  toolName?: string;
}

export interface ContextManagerOptions {
  /** A model id; its window comes from the models registry (`resolveModel`). Either this or `contextWindow`. */
  model?: string;
  /** The context window in tokens; overrides the registry's. */
  contextWindow?: number;
  /** Tokens kept free for the reply. @default as `resolveModel` (the model's maximum output, or a quarter of the window) */
  outputReserve?: number;
  /** The provider compacted conversations must be valid for. @default the model's provider when openai or anthropic, else 'any' */
  provider?: CompactProvider;
  /** @default createTokenAccountant({ provider }) (OpenAI framing for 'any') */
  accountant?: TokenAccountant;
  /** Where compacted originals go (expandable by handle). @default createMemoryArchive() */
  archive?: ArchiveStore;
  /** The compaction pipeline; may include LLM strategies (it runs under `compactAsync`). @default defaultStrategies() */
  strategies?: AnyStrategy[];
  /** Tool definitions sent with every request: counted off the effective window. */
  tools?: ToolDefinition[];
  /** The conversation so far (system prompt included). */
  messages?: Message[];
  /** Share of the effective window at which a `warning` fires. @default 0.6 */
  warnRatio?: number;
  /** Share of the effective window at which compaction runs (at the next turn boundary). @default 0.7 */
  compactRatio?: number;
  /** Share at which a `critical` warning fires and compaction accepts any saving. @default 0.9 */
  criticalRatio?: number;
  /** Share compaction aims for. @default 0.5 */
  targetRatio?: number;
  /** How far usage must fall below a warning level before that warning can fire again. @default 0.05 */
  hysteresisRatio?: number;
  /** No threshold compaction with fewer messages than this. @default 10 */
  minMessages?: number;
  /** The last this many messages are always kept byte-identical (more when a tool call needs its results). @default 5 */
  keepRecentMessages?: number;
  /**
   * A threshold compaction is applied only when it frees at least this share of the effective window: each one
   * breaks the provider's prompt cache, so small savings are not worth it. @default 0.1
   */
  minFreedRatio?: number;
  /** Each overflow recovery in a row aims at the previous target times this. @default 0.6 */
  overflowTargetFactor?: number;
  /** Overflow recoveries in a row (no message appended between them) before giving up. @default 2 */
  maxOverflowRecoveries?: number;
  /** Re-attach the current contents of recently modified files after a compaction. */
  rehydration?: RehydrationOptions;
  /** Milliseconds clock for durations. @default performance.now */
  now?: () => number;
}

export const compactionReasons = ['threshold', 'critical', 'overflow', 'manual'] as const;
export type CompactionReason = (typeof compactionReasons)[number];

export const contextLevels = ['ok', 'warn', 'critical'] as const;
export type ContextLevel = (typeof contextLevels)[number];

export const contextWarningCodes = [
  'usage-warn',
  'usage-critical',
  'compaction-deferred',
  'compaction-skipped',
  'compaction-over-budget',
  'rehydration-failed',
] as const;
export type ContextWarningCode = (typeof contextWarningCodes)[number];

export interface CompactionStartEvent {
  type: 'compaction-start';
  reason: CompactionReason;
  tokensBefore: number;
  /** Total tokens the compaction aims for (system prompt and tool schemas included). */
  budgetTokens: number;
  usageRatio: number;
  messageCount: number;
}

export interface CompactionEndEvent {
  type: 'compaction-end';
  reason: CompactionReason;
  /** False when the result was discarded (it freed too little); the conversation is then unchanged. */
  applied: boolean;
  tokensBefore: number;
  /** Tokens held now (rehydrated files included); `tokensBefore` when not applied. */
  tokensAfter: number;
  /** What the compaction produced, applied or not. */
  resultTokens: number;
  budgetTokens: number;
  usageRatio: number;
  messagesBefore: number;
  messagesAfter: number;
  /** Leading messages left untouched: the part of the prompt a provider cache can still reuse. */
  prefixKeptMessages: number;
  actions: StrategyAction[];
  rehydratedFiles: string[];
  durationMs: number;
}

export interface ContextWarningEvent {
  type: 'warning';
  code: ContextWarningCode;
  message: string;
  usageRatio: number;
  totalTokens: number;
}

export interface ContextManagerEvents {
  'compaction-start': CompactionStartEvent;
  'compaction-end': CompactionEndEvent;
  warning: ContextWarningEvent;
}
export type ContextManagerEventType = keyof ContextManagerEvents;
export const contextManagerEventTypes = [
  'compaction-start',
  'compaction-end',
  'warning',
] as const satisfies readonly ContextManagerEventType[];

export interface ContextManagerStats {
  messageCount: number;
  /** The conversation as the accountant counts it: messages, tool schemas and reply priming. */
  totalTokens: number;
  systemTokens: number;
  toolSchemaTokens: number;
  contextWindow: number;
  outputReserve: number;
  /** Window minus output reserve, system prompt and tool schemas: what the thresholds are shares of. */
  effectiveWindowTokens: number;
  /** Share of the effective window the rest of the conversation takes. */
  usageRatio: number;
  level: ContextLevel;
  pendingToolCalls: number;
  /** Messages appended since creation (initial messages included). */
  appendedMessages: number;
  compactions: number;
  skippedCompactions: number;
  freedTokens: number;
  overflowRecoveries: number;
  /** Provider tokens per counted token, learnt from overflow errors that state a count (1 until then). */
  providerTokenRatio: number;
  lastCompaction: CompactionEndEvent | undefined;
}

export type OverflowRecovery =
  | { recovered: true; messages: IdentifiedMessage[]; overflow: ContextOverflow }
  | {
      recovered: false;
      /** `not-overflow`: some other error; the rest: an overflow this manager cannot get out of. */
      reason: 'not-overflow' | 'pending-tool-calls' | 'no-progress';
      overflow?: ContextOverflow;
    };

export interface ContextManager {
  /** Adds messages at the end. O(size of the new messages): counts, ids and the ledger are updated incrementally. */
  append(input: Message | readonly Message[]): void;
  /** What to send now: compacts first when a threshold is crossed at a turn boundary. */
  messages(): Promise<IdentifiedMessage[]>;
  /** What is held now, without compacting. */
  currentMessages(): IdentifiedMessage[];
  /** Compacts to the target now (at a turn boundary), whatever the usage. */
  compact(): Promise<CompactionEndEvent | undefined>;
  /**
   * For a failed model call: when `error` says the prompt did not fit, compacts harder and returns the messages
   * to retry with. Several overflows in a row each compact harder, up to `maxOverflowRecoveries`, and only while
   * each frees tokens; then `{ recovered: false }` so the caller stops instead of looping.
   */
  recoverFromOverflow(error: unknown): Promise<OverflowRecovery>;
  /** Replaces the tool definitions sent with each request. */
  setTools(tools: readonly ToolDefinition[]): void;
  /** Subscribes to an event; returns the unsubscribe function. */
  on<Type extends ContextManagerEventType>(
    type: Type,
    listener: (event: ContextManagerEvents[Type]) => void,
  ): () => void;
  stats(): ContextManagerStats;
  /** Files, commands, errors and tests of the whole session, compacted parts included. */
  ledger(): LedgerSnapshot;
}

interface Settings {
  warnRatio: number;
  compactRatio: number;
  criticalRatio: number;
  targetRatio: number;
  hysteresisRatio: number;
  minMessages: number;
  keepRecentMessages: number;
  minFreedRatio: number;
  overflowTargetFactor: number;
  maxOverflowRecoveries: number;
}

function requireRatio(option: string, value: unknown, { allowZero = false } = {}): number {
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value > 1 ||
    value < 0 ||
    (!allowZero && value === 0)
  )
    throw new InvalidArgumentError(
      option,
      `expected a number ${allowZero ? 'from 0' : 'above 0'} up to 1, got ${describeValue(value)}`,
    );
  return value;
}

function requireCount(option: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    throw new InvalidArgumentError(option, `expected an integer of at least 0, got ${describeValue(value)}`);
  return value;
}

function checkSettings(options: ContextManagerOptions): Settings {
  const {
    warnRatio = 0.6,
    compactRatio = 0.7,
    criticalRatio = 0.9,
    targetRatio = 0.5,
    hysteresisRatio = 0.05,
    minMessages = 10,
    keepRecentMessages = 5,
    minFreedRatio = 0.1,
    overflowTargetFactor = 0.6,
    maxOverflowRecoveries = 2,
  } = options;
  const settings: Settings = {
    warnRatio: requireRatio('warnRatio', warnRatio),
    compactRatio: requireRatio('compactRatio', compactRatio),
    criticalRatio: requireRatio('criticalRatio', criticalRatio),
    targetRatio: requireRatio('targetRatio', targetRatio),
    hysteresisRatio: requireRatio('hysteresisRatio', hysteresisRatio, { allowZero: true }),
    minMessages: requireCount('minMessages', minMessages),
    keepRecentMessages: requireCount('keepRecentMessages', keepRecentMessages),
    minFreedRatio: requireRatio('minFreedRatio', minFreedRatio, { allowZero: true }),
    overflowTargetFactor: requireRatio('overflowTargetFactor', overflowTargetFactor),
    maxOverflowRecoveries: requireCount('maxOverflowRecoveries', maxOverflowRecoveries),
  };
  if (settings.targetRatio >= settings.compactRatio)
    throw new InvalidArgumentError(
      'targetRatio',
      `must be below compactRatio (${settings.compactRatio}), got ${settings.targetRatio}`,
    );
  if (settings.compactRatio > settings.criticalRatio)
    throw new InvalidArgumentError(
      'compactRatio',
      `must not exceed criticalRatio (${settings.criticalRatio}), got ${settings.compactRatio}`,
    );
  if (settings.warnRatio > settings.criticalRatio)
    throw new InvalidArgumentError(
      'warnRatio',
      `must not exceed criticalRatio (${settings.criticalRatio}), got ${settings.warnRatio}`,
    );
  return settings;
}

interface RehydrationSettings {
  readFile: RehydrationReader;
  maxFiles: number;
  maxTokens: number;
  toolName: string;
}

function checkRehydration(rehydration: RehydrationOptions | undefined): RehydrationSettings | undefined {
  if (rehydration === undefined) return undefined;
  if (typeof rehydration !== 'object' || rehydration === null)
    throw new InvalidArgumentError('rehydration', `expected an object, got ${describeValue(rehydration)}`);
  const { readFile, maxFiles = 3, maxTokens = 4000, toolName = 'rehydrate_files' } = rehydration;
  if (typeof readFile !== 'function')
    throw new InvalidArgumentError(
      'rehydration.readFile',
      `expected a function, got ${describeValue(readFile)}`,
    );
  if (typeof toolName !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(toolName))
    throw new InvalidArgumentError('rehydration.toolName', 'expected 1-64 letters, digits, _ or -');
  return {
    readFile,
    maxFiles: requireCount('rehydration.maxFiles', maxFiles),
    maxTokens: requireCount('rehydration.maxTokens', maxTokens),
    toolName,
  };
}

/** The fewest recent turns (at least one: the current request) that cover the last `keepMessages` messages. */
function turnsCovering(messages: readonly Message[], keepMessages: number): number {
  const boundary = messages.length - keepMessages;
  let turns = 0;
  for (let index = messages.length - 1; index >= 0; index--) {
    if (!startsTurn(messages, index)) continue;
    turns++;
    if (index <= boundary) return turns;
  }
  return Math.max(1, turns);
}

/** Ids of the calls that wait for a tool message: provider-executed calls and calls answered inline do not. */
function toolCallIdsOf(message: Message): string[] {
  if (message.role !== 'assistant') return [];
  const answeredInline = new Set(toolResultsOf(message).map((part) => part.toolCallId));
  return toolCallsOf(message).flatMap((part) =>
    part.providerExecuted !== true && !answeredInline.has(part.toolCallId) ? [part.toolCallId] : [],
  );
}

function resultIdsOf(message: Message): string[] {
  if (message.role !== 'tool') return [];
  return toolResultsOf(message).map((part) => part.toolCallId);
}

/**
 * Holds the live conversation of an agent loop and keeps it inside the model's context window: `append` each
 * message as it happens, send `await messages()`. Usage is measured on the effective window (window minus
 * output reserve, system prompt and tool schemas): a `warning` fires at `warnRatio` and `criticalRatio`, and at
 * `compactRatio` the conversation is compacted down to `targetRatio` with `compact()` — only at a turn boundary
 * (no tool call waiting for its result), with at least `minMessages` messages, keeping the system prompt, pinned
 * messages, the first task and the last `keepRecentMessages` messages byte-identical.
 *
 * Cache-aware: between compactions the conversation only grows at the end, so a provider's prompt cache keeps
 * hitting; a compaction that would free less than `minFreedRatio` of the window is discarded, and is not retried
 * until the conversation has grown by that much again (with `targetRatio` well below `compactRatio`, this is the
 * hysteresis that keeps compaction from running on every step).
 *
 * @throws InvalidArgumentError naming the option when an option is missing or out of range
 * @throws UnknownModelError for a model the registry does not know and no `contextWindow`
 * @throws InvalidMessageError (index and field path) when an initial message is malformed
 */
export function createContextManager(options: ContextManagerOptions): ContextManager {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', `expected an options object, got ${describeValue(options)}`);
  const settings = checkSettings(options);
  const rehydration = checkRehydration(options.rehydration);
  const resolved = resolveModel({
    ...(options.model === undefined ? {} : { model: options.model }),
    ...(options.contextWindow === undefined ? {} : { contextWindow: options.contextWindow }),
    ...(options.outputReserve === undefined ? {} : { outputReserve: options.outputReserve }),
  });
  const modelProvider = resolved.provider;
  const {
    provider = modelProvider === 'openai' || modelProvider === 'anthropic' ? modelProvider : 'any',
    archive = createMemoryArchive(),
    strategies,
    now = () => performance.now(),
  } = options;
  if (!(compactProviders as readonly unknown[]).includes(provider))
    throw new InvalidArgumentError(
      'provider',
      `expected one of ${compactProviders.join(', ')}, got ${describeValue(provider)}`,
    );
  if (strategies !== undefined && !Array.isArray(strategies))
    throw new InvalidArgumentError('strategies', 'expected an array of strategies');
  if (typeof now !== 'function') throw new InvalidArgumentError('now', 'expected a function');
  const accountant = options.accountant ?? createTokenAccountant(provider === 'any' ? {} : { provider });

  let contextWindow = resolved.contextWindow;
  let outputReserve = resolved.outputReserve;
  let tools: ToolDefinition[] | undefined;
  let toolSchemaTokens = 0;
  // The reply primer: a per-request constant the accountant adds to every non-empty conversation.
  const probe: Message = { role: 'user', content: '' };
  const replyPrimingTokens = accountant.countTotal([probe]) - accountant.countMessage(probe);

  let list: IdentifiedMessage[] = [];
  let messageTokens = 0;
  let systemTokens = 0;
  const pending = new Set<string>();
  const idOccurrences = new Map<string, number>();
  const takenIds = new Set<string>();
  const ledger: Ledger = createLedger();
  /** Append order of every message id ever seen, for "most recently modified". */
  const sequence = new Map<string, number>();
  let appended = 0;
  let sequenceNumber = 0;

  let level: ContextLevel = 'ok';
  /** After a discarded compaction: not again until the total reaches this (or the level turns critical). */
  let retryGate: { tokens: number; critical: boolean } | undefined;
  let consecutiveRecoveries = 0;
  let providerTokenRatio = 1;
  let compactions = 0;
  let skippedCompactions = 0;
  let freedTokens = 0;
  let overflowRecoveries = 0;
  let lastCompaction: CompactionEndEvent | undefined;
  let inFlight: Promise<unknown> | undefined;

  const listeners: { [Type in ContextManagerEventType]: Set<(event: ContextManagerEvents[Type]) => void> } = {
    'compaction-start': new Set(),
    'compaction-end': new Set(),
    warning: new Set(),
  };
  function emit<Type extends ContextManagerEventType>(type: Type, event: ContextManagerEvents[Type]): void {
    for (const listener of [...listeners[type]]) listener(event);
  }

  const totalTokens = () => messageTokens + toolSchemaTokens + (list.length > 0 ? replyPrimingTokens : 0);
  const fixedTokens = () => systemTokens + toolSchemaTokens;
  /** In provider tokens: counts are scaled by what overflow errors taught us. */
  const effectiveWindow = () => contextWindow - outputReserve - fixedTokens() * providerTokenRatio;
  const usageRatio = (total = totalTokens()): number => {
    const effective = effectiveWindow();
    const used = (total - fixedTokens()) * providerTokenRatio;
    return effective > 0 ? used / effective : Number.POSITIVE_INFINITY;
  };
  /** The counted total at which usage reaches `ratio`. */
  const budgetFor = (ratio: number) =>
    fixedTokens() + Math.max(0, Math.floor((ratio * effectiveWindow()) / providerTokenRatio));

  function warn(code: ContextWarningCode, message: string): void {
    emit('warning', { type: 'warning', code, message, usageRatio: usageRatio(), totalTokens: totalTokens() });
  }

  function updateLevel(): void {
    const ratio = usageRatio();
    const { warnRatio, criticalRatio, hysteresisRatio } = settings;
    let next: ContextLevel = level;
    if (ratio >= criticalRatio) next = 'critical';
    else if (level === 'critical' && ratio >= criticalRatio - hysteresisRatio) next = 'critical';
    else if (ratio >= warnRatio || (level !== 'ok' && ratio >= warnRatio - hysteresisRatio)) next = 'warn';
    else next = 'ok';
    const rising = contextLevels.indexOf(next) > contextLevels.indexOf(level);
    level = next;
    if (!rising) return;
    const percent = (ratio * 100).toFixed(1);
    if (next === 'critical')
      warn(
        'usage-critical',
        `context at ${percent}% of the effective window (critical at ${criticalRatio * 100}%)`,
      );
    else
      warn('usage-warn', `context at ${percent}% of the effective window (warning at ${warnRatio * 100}%)`);
  }

  function commit(message: Message, tokens: number): void {
    const identified = (
      message.id === undefined
        ? { ...message, id: derivedMessageId(message, idOccurrences, takenIds) }
        : message
    ) as IdentifiedMessage;
    takenIds.add(identified.id);
    list.push(identified);
    messageTokens += tokens;
    // Only the system prompt (system messages before anything else) is a fixed cost; a later one can be compacted.
    if (identified.role === 'system' && systemPromptLength(list) === list.length) systemTokens += tokens;
    for (const id of toolCallIdsOf(identified)) pending.add(id);
    for (const id of resultIdsOf(identified)) pending.delete(id);
    ledger.add(identified);
    sequence.set(identified.id, ++sequenceNumber);
  }

  function append(input: Message | readonly Message[]): void {
    const batch: unknown[] = Array.isArray(input) ? [...input] : [input];
    parseMessages(batch);
    const batchIds = new Set<string>();
    const counts = batch.map((value, index) => {
      const message = value as Message;
      if (message.id !== undefined) {
        if (typeof message.id !== 'string' || message.id === '')
          throw new InvalidMessageError(`expected a non-empty string id, got ${describeValue(message.id)}`, {
            index,
            path: 'id',
          });
        if (takenIds.has(message.id) || batchIds.has(message.id))
          throw new InvalidMessageError(`id ${JSON.stringify(message.id)} is already in the conversation`, {
            index,
            path: 'id',
          });
        batchIds.add(message.id);
      }
      try {
        return accountant.countMessage(message);
      } catch (error) {
        if (error instanceof InvalidMessageError)
          throw new InvalidMessageError(error.reason, {
            index,
            ...(error.path === undefined ? {} : { path: error.path }),
          });
        throw error;
      }
    });
    // Checked in full before anything changes, so a bad batch leaves the manager as it was.
    batch.forEach((message, index) => {
      commit(message as Message, counts[index]!);
    });
    appended += batch.length;
    if (batch.length > 0) consecutiveRecoveries = 0;
    updateLevel();
  }

  function dueReason(): CompactionReason | undefined {
    const ratio = usageRatio();
    if (ratio < settings.compactRatio || list.length < settings.minMessages) return undefined;
    if (pending.size > 0) {
      if (ratio >= settings.criticalRatio)
        warn(
          'compaction-deferred',
          `${pending.size} tool call(s) still wait for results; compacting after them`,
        );
      return undefined;
    }
    const critical = ratio >= settings.criticalRatio;
    if (retryGate !== undefined && totalTokens() < retryGate.tokens && !(critical && !retryGate.critical))
      return undefined;
    return critical ? 'critical' : 'threshold';
  }

  async function runCompaction(reason: CompactionReason, targetRatio: number): Promise<CompactionEndEvent> {
    const started = now();
    const before = list;
    const tokensBefore = totalTokens();
    const ratioBefore = usageRatio();
    const budgetTokens = budgetFor(targetRatio);
    emit('compaction-start', {
      type: 'compaction-start',
      reason,
      tokensBefore,
      budgetTokens,
      usageRatio: ratioBefore,
      messageCount: before.length,
    });
    const compactOptions: CompactAsyncOptions = {
      budgetTokens,
      provider,
      accountant,
      archive,
      keepRecentTurns: turnsCovering(before, settings.keepRecentMessages),
      // The budget is a target below the window: the step the model acts on stays whole unless the provider
      // has already refused the request as too long.
      lastTurnCompressible: reason === 'overflow',
      // The manager promises its last `keepRecentMessages` messages whole whenever they fit.
      recentTurnsMaxShare: 1,
      ...(strategies === undefined ? {} : { strategies }),
    };
    const result = await compactAsync(
      tools === undefined ? { messages: before } : { messages: before, tools },
      compactOptions,
    );
    const resultTokens = result.report.tokensAfter;
    const freed = tokensBefore - resultTokens;
    const required =
      reason === 'threshold'
        ? Math.max(1, Math.ceil((settings.minFreedRatio * effectiveWindow()) / providerTokenRatio))
        : 1;
    const end = (fields: Partial<CompactionEndEvent>): CompactionEndEvent => {
      const event: CompactionEndEvent = {
        type: 'compaction-end',
        reason,
        applied: false,
        tokensBefore,
        tokensAfter: totalTokens(),
        resultTokens,
        budgetTokens,
        usageRatio: usageRatio(),
        messagesBefore: before.length,
        messagesAfter: list.length,
        prefixKeptMessages: list.length,
        actions: [],
        rehydratedFiles: [],
        durationMs: 0,
        ...fields,
      };
      event.durationMs = now() - started;
      return event;
    };

    if (freed < required) {
      skippedCompactions++;
      retryGate = { tokens: tokensBefore + required, critical: reason === 'critical' };
      warn(
        'compaction-skipped',
        `compaction would free ${freed} tokens, less than the ${required} required; keeping the conversation as is`,
      );
      const event = end({ actions: result.report.actions });
      emit('compaction-end', event);
      return event;
    }

    list = result.messages;
    messageTokens = 0;
    systemTokens = 0;
    const systemPrompt = systemPromptLength(list);
    for (const [index, message] of list.entries()) {
      const tokens = accountant.countMessage(message);
      messageTokens += tokens;
      if (index < systemPrompt) systemTokens += tokens;
      takenIds.add(message.id);
    }
    pending.clear();
    retryGate = undefined;
    let prefixKeptMessages = 0;
    while (prefixKeptMessages < list.length && list[prefixKeptMessages] === before[prefixKeptMessages])
      prefixKeptMessages++;
    if (!result.report.withinBudget)
      warn(
        'compaction-over-budget',
        `compaction reached ${resultTokens} tokens, above its budget of ${budgetTokens}: the preserved messages are too large`,
      );
    const rehydratedFiles = await rehydrate(budgetFor(settings.compactRatio) - totalTokens());
    compactions++;
    freedTokens += tokensBefore - totalTokens();
    updateLevel();
    const event = end({ applied: true, actions: result.report.actions, prefixKeptMessages, rehydratedFiles });
    lastCompaction = event;
    emit('compaction-end', event);
    return event;
  }

  /** The paths of the most recently created or modified files, newest first. */
  function recentlyModifiedFiles(count: number): string[] {
    const ranked: Array<{ path: string; at: number }> = [];
    for (const file of ledger.snapshot().files) {
      if (file.status === 'deleted' || file.status === 'read') continue;
      let at = 0;
      for (const change of file.changes)
        if (change.failed !== true) at = Math.max(at, sequence.get(change.messageId) ?? 0);
      ranked.push({ path: file.path, at });
    }
    return ranked
      .sort((left, right) => right.at - left.at)
      .slice(0, count)
      .map((file) => file.path);
  }

  async function rehydrate(roomTokens: number): Promise<string[]> {
    if (rehydration === undefined || rehydration.maxFiles === 0) return [];
    const last = list.at(-1);
    // Only where the model speaks next: after a user message or tool results, a tool exchange is valid everywhere.
    if (last === undefined || (last.role !== 'user' && last.role !== 'tool')) return [];
    let room = Math.min(rehydration.maxTokens, roomTokens);
    const paths = recentlyModifiedFiles(rehydration.maxFiles);
    if (paths.length === 0 || room <= 0) return [];
    const lengthAtStart = list.length;
    const found: Array<{ path: string; text: string; tokens: number; allotted: number }> = [];
    for (const path of paths) {
      let text: string | undefined | null;
      try {
        text = await rehydration.readFile(path);
      } catch (error) {
        warn(
          'rehydration-failed',
          `could not read ${path}: ${error instanceof Error ? error.message : String(error)}`,
        );
        continue;
      }
      if (typeof text === 'string')
        found.push({ path, text, tokens: accountant.counter.count(text), allotted: 0 });
    }
    // What the message adds around the contents: framing, the intro line, a path and fences per file.
    room -= 40 + 16 * found.length;
    // Small files whole, the room left shared evenly among the large ones (smallest first).
    let left = found.length;
    for (const file of [...found].sort((first, second) => first.tokens - second.tokens)) {
      file.allotted = Math.max(0, Math.min(file.tokens, Math.floor(room / left--)));
      room -= file.allotted;
    }
    const sections: string[] = [];
    const included: string[] = [];
    for (const { path, text, tokens, allotted } of found) {
      const fence = '`'.repeat(
        Math.max(3, ...[...text.matchAll(/`{3,}/g)].map((match) => match[0].length + 1)),
      );
      let body = text;
      // Cut proportionally until it fits; a couple of rounds settle it.
      for (
        let round = 0, bodyTokens = tokens;
        bodyTokens > allotted && round < 4 && body.length > 0;
        round++
      ) {
        body = body.slice(0, Math.floor((body.length * allotted) / bodyTokens));
        bodyTokens = accountant.counter.count(body);
      }
      if (body.trim() === '') continue;
      sections.push(`${path}${body === text ? '' : ' (cut to fit)'}\n${fence}\n${body}\n${fence}`);
      included.push(path);
    }
    if (included.length === 0) return [];
    if (list.length !== lengthAtStart) {
      warn('rehydration-failed', 'messages were appended while files were being read; not re-attaching them');
      return [];
    }
    const serial = compactions + 1;
    let toolCallId = `precis_rehydrate_${serial}`;
    for (let suffix = 1; pending.has(toolCallId) || takenIds.has(`${toolCallId}-call`); suffix++)
      toolCallId = `precis_rehydrate_${serial}_${suffix}`;
    const metadata = { origin: 'rehydration' };
    const call: IdentifiedMessage = {
      role: 'assistant',
      id: `${toolCallId}-call`,
      content: [
        { type: 'tool-call', toolCallId, toolName: rehydration.toolName, input: { paths: included } },
      ],
      metadata,
    };
    const output: ToolMessage & { id: string } = {
      role: 'tool',
      id: `${toolCallId}-result`,
      content: [
        {
          type: 'tool-result',
          toolCallId,
          toolName: rehydration.toolName,
          output: {
            type: 'text',
            value: `Current contents of the files changed most recently (re-read after the conversation was compacted):\n\n${sections.join('\n\n')}`,
          },
        },
      ],
      metadata,
    };
    commit(call, accountant.countMessage(call));
    commit(output, accountant.countMessage(output));
    return included;
  }

  /** Runs one compaction at a time: a second caller waits for the first. */
  async function exclusive<Result>(task: () => Promise<Result>): Promise<Result> {
    while (inFlight !== undefined) await inFlight.catch(() => undefined);
    const running = task();
    inFlight = running;
    try {
      return await running;
    } finally {
      inFlight = undefined;
    }
  }

  // Tools first: the first usage check (and any warning it fires) counts their schemas too.
  if (options.tools !== undefined) setTools(options.tools);
  append(options.messages === undefined ? [] : options.messages);
  if (effectiveWindow() <= 0)
    throw new InvalidArgumentError(
      'contextWindow',
      `${contextWindow} tokens minus the output reserve (${outputReserve}), system prompt and tool schemas (${fixedTokens()}) leave no room for the conversation`,
    );

  function setTools(next: readonly ToolDefinition[]): void {
    if (!Array.isArray(next))
      throw new InvalidArgumentError('tools', `expected an array, got ${describeValue(next)}`);
    toolSchemaTokens = accountant.countTools(next);
    tools = next.length === 0 ? undefined : [...next];
    updateLevel();
  }

  return {
    append,
    async messages() {
      return exclusive(async () => {
        const reason = dueReason();
        if (reason !== undefined) await runCompaction(reason, settings.targetRatio);
        return [...list];
      });
    },
    currentMessages: () => [...list],
    async compact() {
      return exclusive(async () => {
        if (pending.size > 0) {
          warn('compaction-deferred', `${pending.size} tool call(s) still wait for results; not compacting`);
          return undefined;
        }
        if (list.length === 0) return undefined;
        return runCompaction('manual', settings.targetRatio);
      });
    },
    async recoverFromOverflow(error) {
      const overflow = parseOverflowError(error);
      if (overflow === undefined) return { recovered: false, reason: 'not-overflow' };
      return exclusive(async (): Promise<OverflowRecovery> => {
        if (pending.size > 0) return { recovered: false, reason: 'pending-tool-calls', overflow };
        if (consecutiveRecoveries >= settings.maxOverflowRecoveries)
          return { recovered: false, reason: 'no-progress', overflow };
        // Learn from the numbers the provider stated: its count of our prompt, its real limit and reserve.
        const counted = totalTokens();
        if (overflow.requestTokens !== undefined && counted > 0)
          providerTokenRatio = Math.max(providerTokenRatio, overflow.requestTokens / counted);
        if (
          overflow.maxTokens !== undefined &&
          overflow.maxTokens < contextWindow &&
          overflow.maxTokens > outputReserve
        )
          contextWindow = overflow.maxTokens;
        if (
          overflow.outputTokens !== undefined &&
          overflow.outputTokens > outputReserve &&
          overflow.outputTokens < contextWindow
        )
          outputReserve = overflow.outputTokens;
        consecutiveRecoveries++;
        const target = settings.targetRatio * settings.overflowTargetFactor ** consecutiveRecoveries;
        const event = await runCompaction('overflow', target);
        if (!event.applied) return { recovered: false, reason: 'no-progress', overflow };
        overflowRecoveries++;
        return { recovered: true, messages: [...list], overflow };
      });
    },
    setTools,
    on(type, listener) {
      if (!(contextManagerEventTypes as readonly unknown[]).includes(type))
        throw new InvalidArgumentError(
          'event',
          `expected one of ${contextManagerEventTypes.join(', ')}, got ${describeValue(type)}`,
        );
      if (typeof listener !== 'function')
        throw new InvalidArgumentError('listener', `expected a function, got ${describeValue(listener)}`);
      const set = listeners[type] as Set<typeof listener>;
      set.add(listener);
      return () => {
        set.delete(listener);
      };
    },
    stats() {
      return {
        messageCount: list.length,
        totalTokens: totalTokens(),
        systemTokens,
        toolSchemaTokens,
        contextWindow,
        outputReserve,
        effectiveWindowTokens: Math.max(0, Math.floor(effectiveWindow())),
        usageRatio: usageRatio(),
        level,
        pendingToolCalls: pending.size,
        appendedMessages: appended,
        compactions,
        skippedCompactions,
        freedTokens,
        overflowRecoveries,
        providerTokenRatio,
        lastCompaction,
      };
    },
    ledger: () => ledger.snapshot(),
  };
}
