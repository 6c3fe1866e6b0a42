import { InvalidArgumentError } from '../../errors/index.js';
import { isDemonstration, isExpansion, isFormatComplaint, isHarnessNote, isUserRequest } from '../content.js';
import { parseMessages } from '../parse.js';
import type { Provider } from '../provider.js';
import type {
  AssistantContentPart,
  AssistantMessage,
  Message,
  MessageMetadata,
  Part,
  ProviderOptions,
  ToolContentPart,
  ToolMessage,
  ToolResultPart,
} from '../types.js';
import {
  type Repair,
  type RepairMessagesOptions,
  type RepairResult,
  type RepairType,
  type ValidationIssue,
  type ValidationIssueType,
  type ValidationTarget,
  validationTargets,
} from './validation-issue.js';

/** The only text repair ever writes. Everything else in a repaired conversation comes from its input. */
export const repairPlaceholders = {
  /** Output of the error result added for a tool call that has none. */
  missingToolResult: '[no result recorded]',
  /** Content of the user message put before a conversation that starts with the assistant. */
  conversationStart: '[conversation continues]',
} as const;

/**
 * Makes a conversation valid for `provider`, reporting every change. Never mutates the input: a message
 * that needs no change is returned as the same object, a changed one is a copy that keeps the message id
 * (a merge keeps the first message's id). A valid conversation comes back unchanged with no repairs, so
 * repairing twice changes nothing the second time.
 *
 * What it does, in order:
 * 1. drops empty messages;
 * 2. (Anthropic) moves system messages to the start, keeping their order: Anthropic takes one system
 *    prompt before the conversation, and turning a late instruction into a user message would change who
 *    says it;
 * 3. pairs tool results with tool calls: drops leading tool messages, orphaned and duplicate results;
 *    moves tool messages that a user or system message separates from their assistant message up to
 *    directly after it; renames reused tool call ids (`id-2`, `id-3`, ...) together with their results;
 *    adds an explicit `[no result recorded]` error result after the assistant turn for every call
 *    without a result (except pending calls, see `allowPendingToolCalls`);
 * 4. (Anthropic) puts a `[conversation continues]` user message before a first assistant message, and
 *    merges consecutive user or assistant messages (a tool message counts as the user side, so a tool
 *    message followed by a user message is fine).
 *
 * @throws InvalidMessageError when `messages` is not an array of messages
 * @throws InvalidArgumentError when an option is not one of its allowed values
 */
export function repairMessages(
  messages: readonly Message[],
  options: RepairMessagesOptions = {},
): RepairResult {
  const { messages: repaired, findings } = repairWithFindings(messages, options);
  return { messages: repaired, repairs: findings.map((finding) => finding.repair) };
}

/** A repair and, unless it only follows from another repair, the issue it fixes. */
export interface Finding {
  repair: Repair;
  issue: ValidationIssue | undefined;
}

/**
 * The engine behind `repairMessages` and `validateMessages`. Both use it so that a conversation is valid
 * exactly when repairing it would change nothing. Internal: not exported from the package.
 */
export function repairWithFindings(
  messages: readonly Message[],
  options: RepairMessagesOptions,
): { messages: Message[]; findings: Finding[] } {
  const { provider = 'any', allowPendingToolCalls = false } = options;
  if (!(validationTargets as readonly unknown[]).includes(provider)) {
    throw new InvalidArgumentError(
      'provider',
      `expected one of ${validationTargets.join(', ')}, got ${JSON.stringify(provider)}`,
    );
  }
  if (typeof allowPendingToolCalls !== 'boolean') {
    throw new InvalidArgumentError(
      'allowPendingToolCalls',
      `expected a boolean, got ${typeof allowPendingToolCalls}`,
    );
  }
  // The rules below read fields blindly; malformed input gets a typed error naming the message and field.
  parseMessages(messages);

  const rules = rulesFor(provider);
  const context: Context = { allowPendingToolCalls, findings: [] };
  let entries: Entry[] = messages.map((message, index) => ({ message, index }));
  entries = dropEmptyMessages(entries, context);
  if (!rules.systemMessagesAnywhere) entries = moveSystemMessagesFirst(entries, context);
  entries = pairToolResults(entries, context, messages);
  if (rules.userMessageFirst) entries = startWithUserMessage(entries, context);
  if (rules.alternatingRoles) entries = mergeConsecutiveRoles(entries, context);
  return {
    messages: entries.map((entry) => entry.message),
    findings: orderedByIndex(context.findings, messages.length),
  };
}

interface ProviderRules {
  /** System messages may sit anywhere (OpenAI); otherwise only before every other message. */
  systemMessagesAnywhere: boolean;
  /** The first message after the system messages must be a user message. */
  userMessageFirst: boolean;
  /** No two user or two assistant messages in a row; a tool message counts as the user side. */
  alternatingRoles: boolean;
}

const providerRules: Record<Provider, ProviderRules> = {
  openai: { systemMessagesAnywhere: true, userMessageFirst: false, alternatingRoles: false },
  anthropic: { systemMessagesAnywhere: false, userMessageFirst: true, alternatingRoles: true },
};

function rulesFor(target: ValidationTarget): ProviderRules {
  if (target !== 'any') return providerRules[target];
  const all = Object.values(providerRules);
  return {
    systemMessagesAnywhere: all.every((rules) => rules.systemMessagesAnywhere),
    userMessageFirst: all.some((rules) => rules.userMessageFirst),
    alternatingRoles: all.some((rules) => rules.alternatingRoles),
  };
}

/** A message on its way through the stages, with the input index every report refers to. */
interface Entry {
  message: Message;
  index: number;
}

interface Context {
  allowPendingToolCalls: boolean;
  findings: Finding[];
}

interface Report {
  repair: RepairType;
  description: string;
  /** Absent when the repair only follows from another one (a message left empty by dropping its parts). */
  issue?: { type: ValidationIssueType; message: string };
  path?: string;
  toolCallId?: string;
}

function record(context: Context, entry: Entry, report: Report): void {
  const { index, message } = entry;
  const repair: Repair = { type: report.repair, index, description: report.description };
  if (message.id !== undefined) repair.id = message.id;
  if (report.toolCallId !== undefined) repair.toolCallId = report.toolCallId;
  let issue: ValidationIssue | undefined;
  if (report.issue !== undefined) {
    issue = { type: report.issue.type, index, message: report.issue.message };
    if (report.path !== undefined) issue.path = report.path;
    if (report.toolCallId !== undefined) issue.toolCallId = report.toolCallId;
  }
  context.findings.push({ repair, issue });
}

/** Stable bucket sort: findings come out of the stages in stage order, readers want them by message. */
function orderedByIndex(findings: Finding[], messageCount: number): Finding[] {
  if (findings.length < 2) return findings;
  const buckets: Finding[][] = Array.from({ length: messageCount }, () => []);
  for (const finding of findings) buckets[finding.repair.index]!.push(finding);
  return buckets.flat();
}

function label(entry: Entry): string {
  return `${entry.message.role} message ${entry.index}`;
}

// Stage 1 ---------------------------------------------------------------------------------------------

/**
 * True when the part shows the model nothing. Differs from `isEmptyMessage` in content.ts on purpose: an
 * empty text part is empty even with provider options (Anthropic rejects empty text blocks, cache control
 * or not), and a reasoning part is empty only when no provider attached data to it (a signature, redacted
 * or encrypted reasoning), since that data is what the provider needs back.
 */
function isEmptyPart(part: Part): boolean {
  if (part.type === 'text') return part.text === '';
  if (part.type === 'reasoning') return part.text === '' && !hasProviderData(part.providerOptions);
  return false;
}

function hasProviderData(providerOptions: ProviderOptions | undefined): boolean {
  return (
    providerOptions !== undefined &&
    Object.values(providerOptions).some((options) => Object.keys(options).length > 0)
  );
}

function isEmpty(message: Message): boolean {
  if (typeof message.content === 'string') return message.content === '';
  return (message.content as readonly Part[]).every(isEmptyPart);
}

function dropEmptyMessages(entries: Entry[], context: Context): Entry[] {
  const kept: Entry[] = [];
  for (const entry of entries) {
    if (!isEmpty(entry.message)) {
      kept.push(entry);
      continue;
    }
    record(context, entry, {
      repair: 'drop-empty-message',
      description: `dropped ${label(entry)}: it has no content`,
      issue: { type: 'empty-message', message: `${label(entry)} has no content` },
    });
  }
  return kept;
}

// Stage 2 ---------------------------------------------------------------------------------------------

function moveSystemMessagesFirst(entries: Entry[], context: Context): Entry[] {
  const systemEntries: Entry[] = [];
  const otherEntries: Entry[] = [];
  let moved = false;
  for (const entry of entries) {
    if (entry.message.role !== 'system') {
      otherEntries.push(entry);
      continue;
    }
    if (otherEntries.length > 0) {
      moved = true;
      record(context, entry, {
        repair: 'move-system-message',
        description: `moved ${label(entry)} to the start, after the system messages already there`,
        issue: {
          type: 'misplaced-system-message',
          message: `${label(entry)} comes after the conversation started; Anthropic takes system messages only at the start`,
        },
      });
    }
    systemEntries.push(entry);
  }
  return moved ? [...systemEntries, ...otherEntries] : entries;
}

// Stage 3 ---------------------------------------------------------------------------------------------

/** One tool call of the current assistant message. */
interface CallSlot {
  /** The id in the input. */
  inputId: string;
  /** The id in the output: the input id, or a fresh one when the input id was used before. */
  id: string;
  toolName: string;
  path: string;
  answered: boolean;
}

/** The calls of one assistant message sharing an input id, answered in order: the k-th result answers the k-th call. */
interface CallQueue {
  slots: CallSlot[];
  answered: number;
  approvalRequests: number;
}

/** An assistant message and what follows it up to the next assistant message. */
interface Turn {
  assistant: Entry;
  queues: Map<string, CallQueue>;
  slots: CallSlot[];
  /** Tool messages directly after the assistant message. */
  zone: Entry[];
  /** Tool messages after a user or system message, to be moved up into the zone. */
  moved: Entry[];
  /** User and system messages. */
  rest: Entry[];
}

/**
 * One pass over the messages in turns: each assistant message collects the messages up to the next one,
 * its tool messages answer its calls (the k-th result for an id answers the k-th call with that id), and
 * the turn is written out as: assistant message, tool messages that followed it directly, tool messages
 * that came later (moved up), placeholder results for unanswered calls, then the user and system messages.
 */
function pairToolResults(entries: Entry[], context: Context, input: readonly Message[]): Entry[] {
  const output: Entry[] = [];
  const usedCallIds = new Set<string>();
  const freshCallId = createFreshCallId(input);
  let turn: Turn | undefined;

  for (const entry of entries) {
    const { message } = entry;
    if (message.role === 'assistant') {
      const next = openTurn(entry, message, context, usedCallIds, freshCallId);
      if (next === undefined) continue;
      if (turn !== undefined) closeTurn(turn, false, output, context);
      turn = next;
    } else if (message.role === 'tool') {
      if (turn === undefined) {
        record(context, entry, {
          repair: 'drop-leading-tool-message',
          description: `dropped ${label(entry)}: no assistant message comes before it`,
          issue: {
            type: 'leading-tool-message',
            message: `${label(entry)} comes before any assistant message, so its results answer nothing`,
          },
        });
        continue;
      }
      const kept = answerToolCalls(entry, message, turn, context);
      if (kept === undefined) continue;
      if (turn.rest.length === 0) {
        turn.zone.push(kept);
        continue;
      }
      const between = turn.rest[0]!;
      record(context, entry, {
        repair: 'move-tool-message',
        description: `moved ${label(entry)} up to directly after assistant message ${turn.assistant.index}`,
        issue: {
          type: 'misplaced-tool-message',
          message: `${label(entry)} answers assistant message ${turn.assistant.index}, but ${label(between)} stands between them; tool results must directly follow their tool calls`,
        },
      });
      turn.moved.push(kept);
    } else if (turn === undefined) {
      output.push(entry);
    } else {
      turn.rest.push(entry);
    }
  }
  if (turn !== undefined) closeTurn(turn, true, output, context);
  return output;
}

/** Fresh ids never collide with any tool call id of the input nor with each other. */
function createFreshCallId(input: readonly Message[]): (id: string) => string {
  let taken: Set<string> | undefined;
  const nextSuffix = new Map<string, number>();
  return (id) => {
    // Collected on first use only: valid conversations never pay for it.
    taken ??= collectToolCallIds(input);
    let suffix = nextSuffix.get(id) ?? 2;
    while (taken.has(`${id}-${suffix}`)) suffix++;
    const fresh = `${id}-${suffix}`;
    nextSuffix.set(id, suffix + 1);
    taken.add(fresh);
    return fresh;
  };
}

function collectToolCallIds(input: readonly Message[]): Set<string> {
  const ids = new Set<string>();
  for (const message of input) {
    if (typeof message.content === 'string') continue;
    for (const part of message.content as readonly Part[]) {
      if ('toolCallId' in part) ids.add(part.toolCallId);
    }
  }
  return ids;
}

/** Starts the turn of an assistant message, or returns undefined when dropping parts left the message empty. */
function openTurn(
  entry: Entry,
  message: AssistantMessage,
  context: Context,
  usedCallIds: Set<string>,
  freshCallId: (id: string) => string,
): Turn | undefined {
  const turn: Turn = { assistant: entry, queues: new Map(), slots: [], zone: [], moved: [], rest: [] };
  if (typeof message.content === 'string') return turn;
  const content = message.content;

  content.forEach((part, partIndex) => {
    if (part.type !== 'tool-call') return;
    const path = `content[${partIndex}]`;
    let id = part.toolCallId;
    if (usedCallIds.has(id)) {
      id = freshCallId(part.toolCallId);
      record(context, entry, {
        repair: 'rename-tool-call',
        description: `renamed tool call ${part.toolCallId} of ${label(entry)} to ${id} (with its results): an earlier tool call has the same id`,
        issue: {
          type: 'duplicate-tool-call-id',
          message: `tool call ${part.toolCallId} of ${label(entry)} reuses the id of an earlier tool call`,
        },
        path,
        toolCallId: part.toolCallId,
      });
    }
    usedCallIds.add(part.toolCallId);
    const slot: CallSlot = { inputId: part.toolCallId, id, toolName: part.toolName, path, answered: false };
    queueOf(turn, part.toolCallId).slots.push(slot);
    turn.slots.push(slot);
  });

  // Results of provider-executed tools sit in the assistant message itself and answer its own calls.
  let kept: AssistantContentPart[] | undefined;
  let callCount = 0;
  content.forEach((part, partIndex) => {
    let replacement: AssistantContentPart | undefined = part;
    if (part.type === 'tool-call') {
      const slot = turn.slots[callCount++]!;
      if (slot.id !== part.toolCallId) replacement = { ...part, toolCallId: slot.id };
    } else if (part.type === 'tool-result') {
      replacement = answer(turn, part, entry, `content[${partIndex}]`, context);
    } else if (part.type === 'tool-approval-request') {
      // Not interpreted, but it must keep pointing at its call when that call is renamed.
      const queue = turn.queues.get(part.toolCallId);
      const slot = queue === undefined ? undefined : queue.slots[queue.approvalRequests++];
      if (slot !== undefined && slot.id !== part.toolCallId) replacement = { ...part, toolCallId: slot.id };
    }
    if (replacement !== part) kept ??= content.slice(0, partIndex);
    if (kept !== undefined && replacement !== undefined) kept.push(replacement);
  });
  if (kept === undefined) return turn;

  const repaired: AssistantMessage = { ...message, content: kept };
  if (isEmpty(repaired)) {
    record(context, entry, {
      repair: 'drop-empty-message',
      description: `dropped ${label(entry)}: nothing is left after dropping its tool results`,
    });
    return undefined;
  }
  turn.assistant = { index: entry.index, message: repaired };
  return turn;
}

function queueOf(turn: Turn, inputId: string): CallQueue {
  let queue = turn.queues.get(inputId);
  if (queue === undefined) {
    queue = { slots: [], answered: 0, approvalRequests: 0 };
    turn.queues.set(inputId, queue);
  }
  return queue;
}

/** The result as it answers the next unanswered call with its id, or undefined (reported) when it answers none. */
function answer(
  turn: Turn,
  part: ToolResultPart,
  entry: Entry,
  path: string,
  context: Context,
): ToolResultPart | undefined {
  const queue = turn.queues.get(part.toolCallId);
  const slot = queue?.slots[queue.answered];
  if (queue !== undefined && slot !== undefined) {
    queue.answered++;
    slot.answered = true;
    return slot.id === part.toolCallId ? part : { ...part, toolCallId: slot.id };
  }
  const assistant = `assistant message ${turn.assistant.index}`;
  if (queue === undefined) {
    record(context, entry, {
      repair: 'drop-orphaned-tool-result',
      description: `dropped the result for tool call ${part.toolCallId} from ${label(entry)}: ${assistant} makes no such call`,
      issue: {
        type: 'orphaned-tool-result',
        message: `${label(entry)} has a result for tool call ${part.toolCallId}, which ${assistant} does not make`,
      },
      path,
      toolCallId: part.toolCallId,
    });
  } else {
    record(context, entry, {
      repair: 'drop-duplicate-tool-result',
      description: `dropped a second result for tool call ${part.toolCallId} from ${label(entry)}`,
      issue: {
        type: 'duplicate-tool-result',
        message: `${label(entry)} has another result for tool call ${part.toolCallId}, which already has one`,
      },
      path,
      toolCallId: part.toolCallId,
    });
  }
  return undefined;
}

/** The tool message as it answers the turn's calls, or undefined when none of its parts is left. */
function answerToolCalls(
  entry: Entry,
  message: ToolMessage,
  turn: Turn,
  context: Context,
): Entry | undefined {
  let kept: ToolContentPart[] | undefined;
  message.content.forEach((part, partIndex) => {
    const replacement =
      part.type === 'tool-result' ? answer(turn, part, entry, `content[${partIndex}]`, context) : part;
    if (replacement !== part) kept ??= message.content.slice(0, partIndex);
    if (kept !== undefined && replacement !== undefined) kept.push(replacement);
  });
  if (kept === undefined) return entry;
  if (kept.length === 0) {
    record(context, entry, {
      repair: 'drop-empty-message',
      description: `dropped ${label(entry)}: nothing is left after dropping its tool results`,
    });
    return undefined;
  }
  return { index: entry.index, message: { ...message, content: kept } };
}

function closeTurn(turn: Turn, isLast: boolean, output: Entry[], context: Context): void {
  output.push(turn.assistant);
  append(output, turn.zone);
  append(output, turn.moved);
  // Pending: the tools of the last assistant message may still be running, as long as no other message
  // followed it. (Tool messages after a user message were moved into the zone, so `rest` is what counts.)
  const pending = isLast && context.allowPendingToolCalls && turn.rest.length === 0;
  const missing = pending ? [] : turn.slots.filter((slot) => !slot.answered);
  if (missing.length > 0) {
    const { assistant } = turn;
    const content = missing.map((slot): ToolResultPart => {
      record(context, assistant, {
        repair: 'add-missing-tool-result',
        description: `added an error result "${repairPlaceholders.missingToolResult}" for tool call ${slot.inputId}${slot.id === slot.inputId ? '' : ` (renamed ${slot.id})`} of ${label(assistant)}`,
        issue: {
          type: 'missing-tool-result',
          message: `tool call ${slot.inputId} of ${label(assistant)} has no result`,
        },
        path: slot.path,
        toolCallId: slot.inputId,
      });
      return {
        type: 'tool-result',
        toolCallId: slot.id,
        toolName: slot.toolName,
        output: { type: 'error-text', value: repairPlaceholders.missingToolResult },
      };
    });
    output.push({ index: assistant.index, message: { role: 'tool', content } });
  }
  append(output, turn.rest);
}

/** `push(...source)` overflows the stack on very long arrays. */
function append<T>(target: T[], source: readonly T[]): void {
  for (const item of source) target.push(item);
}

// Stage 4 ---------------------------------------------------------------------------------------------

function startWithUserMessage(entries: Entry[], context: Context): Entry[] {
  const first = entries.findIndex((entry) => entry.message.role !== 'system');
  const entry = entries[first];
  // Stage 3 dropped leading tool messages, so what is not a user message here is an assistant message.
  if (entry === undefined || entry.message.role === 'user') return entries;
  record(context, entry, {
    repair: 'insert-user-message',
    description: `inserted a user message "${repairPlaceholders.conversationStart}" before ${label(entry)}`,
    issue: {
      type: 'first-message-not-user',
      message: `the conversation starts with ${label(entry)}; Anthropic needs a user message first`,
    },
  });
  const inserted: Entry = {
    index: entry.index,
    message: { role: 'user', content: repairPlaceholders.conversationStart },
  };
  return [...entries.slice(0, first), inserted, ...entries.slice(first)];
}

function mergeConsecutiveRoles(entries: Entry[], context: Context): Entry[] {
  const output: Entry[] = [];
  let start = 0;
  while (start < entries.length) {
    const first = entries[start]!;
    const { role } = first.message;
    let end = start + 1;
    if (role === 'user' || role === 'assistant') {
      while (end < entries.length && entries[end]!.message.role === role) end++;
    }
    if (end - start === 1) {
      output.push(first);
    } else {
      const run = entries.slice(start, end);
      for (const merged of run.slice(1)) {
        record(context, merged, {
          repair: 'merge-messages',
          description: `merged ${label(merged)} into ${label(first)}`,
          issue: {
            type: 'consecutive-same-role',
            message: `${label(merged)} follows ${label(first)} with no ${role === 'user' ? 'assistant' : 'user or tool'} message between; Anthropic needs user and assistant turns to alternate`,
          },
        });
      }
      output.push({ index: first.index, message: mergeMessages(run.map((entry) => entry.message)) });
    }
    start = end;
  }
  return output;
}

/** How many parts the harness notes and demonstrations that open `run` add in front of its first request. */
function partsBeforeRequest(run: readonly Message[]): number {
  let parts = 0;
  for (const message of run) {
    if (isUserRequest(message)) {
      const own = message.metadata?.requestPart;
      return parts + (typeof own === 'number' ? own : 0);
    }
    parts += partCount(message);
  }
  return parts;
}

/**
 * How many parts come before the expansions and harness notes that close `run` (a command's prompt after the
 * command, a file an @-mention read, aider's output after the request): the parts of the messages before them;
 * where none closes it, the last message's own `expansionPart`.
 */
function partsBeforeExpansion(run: readonly Message[]): number | undefined {
  const partsOf = (messages: readonly Message[]) =>
    messages.reduce((sum, message) => sum + partCount(message), 0);
  const start = closingStart(run);
  if (start < run.length) return partsOf(run.slice(0, start));
  const own = run.at(-1)!.metadata?.expansionPart;
  return typeof own === 'number' ? partsOf(run.slice(0, -1)) + own : undefined;
}

/**
 * The parts of the merged `run` from its request's start (`requestPart`) on that harness notes brought in
 * (between two requests, or after the request), with those a message of the run had marked already.
 */
function harnessPartsOf(run: readonly Message[], requestPart: number): number[] {
  const indices: number[] = [];
  let offset = 0;
  for (const message of run) {
    const count = partCount(message);
    const own = message.metadata?.harnessParts;
    if (isHarnessNote(message) && !isExpansion(message))
      for (let index = 0; index < count; index++) indices.push(offset + index);
    else if (Array.isArray(own))
      for (const index of own) if (typeof index === 'number') indices.push(offset + index);
    offset += count;
  }
  return indices.filter((index) => index >= requestPart);
}

/** Where the expansions and harness notes that close `run` start (`run.length` when none does). */
function closingStart(run: readonly Message[]): number {
  let start = run.length;
  while (start > 0 && (isExpansion(run[start - 1]!) || isHarnessNote(run[start - 1]!))) start--;
  return start;
}

function partCount(message: Message): number {
  return typeof message.content === 'string' ? 1 : message.content.length;
}

/**
 * One message with the parts of all, in order (string content becomes a text part). Id and other fields
 * come from the first message; metadata of later ones fills gaps, and the result is pinned when any
 * message was. It is a demonstration or a harness note only when all were: SWE-agent's demonstration, or
 * Claude Code's caveat and `/clear`, merged with the request that follows is that request. Message-level
 * provider options of later messages win: they describe the end of the merged message (an Anthropic cache
 * breakpoint sits on a message's last part).
 */
function mergeMessages(run: readonly Message[]): Message {
  const first = run[0]!;
  const content: Part[] = [];
  let metadata: MessageMetadata | undefined;
  let pinned = false;
  let providerOptions: ProviderOptions | undefined;
  for (const message of run) {
    if (typeof message.content === 'string') content.push({ type: 'text', text: message.content });
    else append(content, message.content as readonly Part[]);
    if (message.metadata !== undefined) {
      metadata = { ...message.metadata, ...metadata };
      pinned ||= message.metadata.pinned === true;
    }
    if (message.providerOptions !== undefined) {
      providerOptions ??= {};
      for (const [provider, options] of Object.entries(message.providerOptions)) {
        providerOptions[provider] = { ...providerOptions[provider], ...options };
      }
    }
  }
  const merged = { ...first, content } as Message;
  if (metadata !== undefined) {
    merged.metadata = pinned ? { ...metadata, pinned: true } : metadata;
    if (!run.every(isDemonstration)) delete merged.metadata.demo;
    if (!run.every(isHarnessNote)) delete merged.metadata.harness;
    // A rejection of the agent's reply only while the message is nothing else: the ledger reads its first line.
    if (!run.every(isFormatComplaint)) delete merged.metadata.formatError;
    if (!run.every(isExpansion)) delete merged.metadata.expansion;
    // A stub (a drop marker, an output's stand-in) only when all were: merged with a message's content, it is that
    // message (its id too), and says where it came from (a marker passed for one would hide the content from a
    // summary).
    if (merged.metadata.origin === 'stub' && !run.every((message) => message.metadata?.origin === 'stub')) {
      const content = run.find((message) => message.metadata?.origin !== 'stub')!;
      const own = content.metadata;
      for (const key of ['origin', 'strategy', 'handle']) {
        const value = own?.[key];
        if (value === undefined) delete merged.metadata[key];
        else merged.metadata[key] = value;
      }
      const { id } = content as { id?: unknown };
      if (typeof id === 'string') (merged as { id?: string }).id = id;
    }
    // Every file a merged message put into the context, not only the first message's.
    const contextFiles = [...new Set(run.flatMap((message) => message.metadata?.contextFiles ?? []))];
    if (contextFiles.length > 0) merged.metadata.contextFiles = contextFiles;
    const requestPart = partsBeforeRequest(run);
    if (requestPart > 0 && requestPart < content.length) merged.metadata.requestPart = requestPart;
    else delete merged.metadata.requestPart;
    const expansionPart = partsBeforeExpansion(run);
    if (expansionPart !== undefined && expansionPart > requestPart && expansionPart < content.length)
      merged.metadata.expansionPart = expansionPart;
    else delete merged.metadata.expansionPart;
    const harnessParts = harnessPartsOf(run, requestPart);
    if (harnessParts.length > 0 && !run.every(isHarnessNote)) merged.metadata.harnessParts = harnessParts;
    else delete merged.metadata.harnessParts;
  }
  if (providerOptions !== undefined) merged.providerOptions = providerOptions;
  return merged;
}
