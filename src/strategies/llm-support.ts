import { archiveHandle, indexHandleOf, putIndex } from '../archive/archive-store.js';
import { InvalidArgumentError } from '../errors/index.js';
import { hashText } from '../internal/hash.js';
import { describeValue } from '../internal/json-shapes.js';
import { codeSpan, readCodeSpan } from '../ledger/index.js';
import { jsonOutputInstruction } from '../llm/json-output.js';
import type { LlmClient, LlmResponse } from '../llm/llm-client.js';
import { resolveRedact } from '../llm/llm-config.js';
import { isProviderError } from '../llm/provider-error.js';
import { mergeRedactions, type SecretRedaction } from '../llm/redact-secrets.js';
import {
  type BuildSummaryPromptOptions,
  buildSummaryPrompt,
  checkModeAndTopics,
  readSummaryOutput,
  renderSummaryFacts,
  renderTranscriptMessage,
  type SummaryFacts,
  type SummaryMode,
  type SummaryPromptKind,
} from '../llm/summary-prompt.js';
import { messageText } from '../messages/content.js';
import type { IdentifiedMessage, JSONValue, Message } from '../messages/types.js';
import { validateMessages } from '../messages/validate/index.js';
import {
  type AnchoredSummary,
  anchoredSummaryToJson,
  buildAnchoredSummary,
  emptyAnchoredSummary,
  mergeAnchoredSummary,
  parseAnchoredSummary,
} from '../summary/index.js';
import type { AsyncStrategyContext, StrategyAction, StrategyResult } from './strategy.js';
import {
  checkCount,
  checkPositive,
  type MessageGroup,
  markerMessage,
  markerRole,
  messageGroups,
} from './strategy-support.js';

/**
 * What the LLM summarization strategies (`llmSummarize`, `llmProgressive`) share: options, choosing the span,
 * placing the summary, calling the summarizer within its window (hierarchically when the span is larger), and
 * committing a summary only when it is usable. Internal to `strategies/`; not part of the public API.
 */

export interface LlmSummaryOptions {
  /** The summarizer. */
  client: LlmClient;
  /** @default 'concise' */
  mode?: SummaryMode;
  /** Topics the summary must cover. @default [] */
  topics?: string[];
  /** The last this many messages are never summarized (moved back so a tool call keeps its results). @default 4 */
  preserveRecentMessages?: number;
  /**
   * Context window of the summarizer, in tokens as the accountant counts them: every request (prompt plus
   * the output it may write) fits in it; a span that does not is summarized in parts, then the parts' summaries.
   * @default 32000
   */
  summarizerWindowTokens?: number;
  /** Cap on the summary's length, in tokens. @default 400 (brief), 1000 (concise), 2500 (detailed) */
  maxOutputTokens?: number;
  /** Time one summarizer call may take (passed to the client as `timeoutMs`). @default 60000 */
  timeoutMs?: number;
  /**
   * Replace secrets with `[REDACTED:<kind>]` before anything is sent.
   * @default true, unless `baseURL` is a local endpoint (see `isLocalEndpoint`)
   */
  redact?: boolean;
  /** The summarizer's base URL, when known: a loopback URL turns redaction off by default. */
  baseURL?: string;
  /** Summarizer calls one apply may make (parts, combinations and retries). @default 16 */
  maxCalls?: number;
  /** Tokens of verbatim ledger facts (files, errors, commands) appended to a summary. @default 1500 */
  maxFactTokens?: number;
}

export interface LlmSummarySettings {
  client: LlmClient;
  mode: SummaryMode;
  topics: string[];
  preserveRecentMessages: number;
  summarizerWindowTokens: number;
  maxOutputTokens: number;
  timeoutMs: number;
  redact: boolean;
  maxCalls: number;
  maxFactTokens: number;
}

const modeOutputTokens: Record<SummaryMode, number> = { brief: 400, concise: 1000, detailed: 2500 };
/** Share of the span a summary of each mode aims for. */
const modeRatio: Record<SummaryMode, number> = { brief: 0.1, concise: 0.2, detailed: 0.35 };
/** Spans whose text is shorter than this are left alone: a summary would not be shorter. */
const minimumSummarizableChars = 200;
/** The smallest window that leaves room for the prompt, some data and an answer. */
const minimumWindowTokens = 1024;

/** @throws InvalidArgumentError naming the option that is missing or out of range */
export function resolveLlmSummaryOptions(options: LlmSummaryOptions): LlmSummarySettings {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', `expected an options object, got ${describeValue(options)}`);
  const {
    client,
    mode = 'concise',
    topics = [],
    preserveRecentMessages = 4,
    summarizerWindowTokens = 32_000,
    maxOutputTokens,
    timeoutMs = 60_000,
    redact,
    baseURL,
    maxCalls = 16,
    maxFactTokens = 1500,
  } = options;
  if (typeof client !== 'object' || client === null || typeof client.complete !== 'function')
    throw new InvalidArgumentError('client', `expected an LlmClient, got ${describeValue(client)}`);
  checkModeAndTopics(mode, topics);
  checkCount('preserveRecentMessages', preserveRecentMessages);
  if (checkPositive('summarizerWindowTokens', summarizerWindowTokens) < minimumWindowTokens)
    throw new InvalidArgumentError(
      'summarizerWindowTokens',
      `expected at least ${minimumWindowTokens} tokens, got ${summarizerWindowTokens}`,
    );
  if (maxOutputTokens !== undefined) checkPositive('maxOutputTokens', maxOutputTokens);
  checkPositive('timeoutMs', timeoutMs);
  checkPositive('maxCalls', maxCalls);
  checkCount('maxFactTokens', maxFactTokens);
  const shouldRedact = resolveRedact(redact, baseURL);
  return {
    client,
    mode,
    topics: [...topics],
    preserveRecentMessages,
    summarizerWindowTokens,
    // An answer never takes more than a quarter of the window: the rest is for the data.
    maxOutputTokens: Math.min(
      maxOutputTokens ?? modeOutputTokens[mode],
      Math.floor(summarizerWindowTokens / 4),
    ),
    timeoutMs,
    redact: shouldRedact,
    maxCalls,
    maxFactTokens,
  };
}

/** The header every LLM summary starts with. */
export function summaryHeader(messageCount: number): string {
  return `[PREVIOUS CONVERSATION SUMMARY - ${messageCount} ${messageCount === 1 ? 'message' : 'messages'}]`;
}

/** Matches a summary header and captures the message count. */
export const summaryHeaderPattern = /^\[PREVIOUS CONVERSATION SUMMARY - (\d+) messages?\]/;

export function isSummaryMessage(message: Message): boolean {
  return message.metadata?.origin === 'summary';
}

/**
 * The runs of whole groups a summary may replace, oldest first: contiguous groups before the last
 * `preserveRecentMessages` messages with no system, pinned or preserved message in them. Earlier summaries
 * (metadata origin `summary`) belong to a run although the engine preserves them: summarizing strategies own
 * them and fold them into the new summary.
 */
export function summarizableRuns(
  messages: readonly IdentifiedMessage[],
  context: AsyncStrategyContext,
  preserveRecentMessages: number,
): MessageGroup[][] {
  let tailStart = Math.max(0, messages.length - preserveRecentMessages);
  while (tailStart > 0 && tailStart < messages.length && messages[tailStart]?.role === 'tool') tailStart--;
  const runs: MessageGroup[][] = [];
  let run: MessageGroup[] = [];
  for (const { start, end } of messageGroups(messages)) {
    if (start >= tailStart) break;
    let summarizable = end <= tailStart;
    for (let index = start; index < end && summarizable; index++) {
      const message = messages[index]!;
      if (isSummaryMessage(message)) continue;
      if (
        message.role === 'system' ||
        message.metadata?.pinned === true ||
        context.preservedIds.has(message.id)
      )
        summarizable = false;
    }
    if (summarizable) run.push({ start, end });
    else if (run.length > 0) {
      runs.push(run);
      run = [];
    }
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

export interface PlacedSpan {
  start: number;
  /** Exclusive. */
  end: number;
  role: 'user' | 'assistant';
}

/**
 * The span of `groups` (contiguous) a summary message can replace, trimmed by as few groups as possible at
 * either end until a role fits between its neighbours. Undefined when no trim of up to four groups fits.
 */
export function placeSpan(
  messages: readonly Message[],
  groups: readonly MessageGroup[],
): PlacedSpan | undefined {
  for (let trim = 0; trim <= Math.min(4, groups.length - 1); trim++)
    for (let fromStart = 0; fromStart <= trim; fromStart++) {
      const first = groups[fromStart];
      const last = groups[groups.length - 1 - (trim - fromStart)];
      if (first === undefined || last === undefined || last.end <= first.start) continue;
      const role = markerRole(messages[first.start - 1], messages[last.end]);
      if (role !== undefined) return { start: first.start, end: last.end, role };
    }
  return undefined;
}

/** Why a summary was not committed; becomes the strategy's warning. */
export class SummaryFailure extends Error {
  override name = 'SummaryFailure';
}

export interface SummarizerRun {
  settings: LlmSummarySettings;
  context: AsyncStrategyContext;
  calls: number;
  redactions: SecretRedaction[];
}

/** Tokens the summarizer reads for a prompt, as the accountant counts them (the JSON instruction included). */
export function promptTokens(run: SummarizerRun, prompt: SummarizerPrompt): number {
  const system = `${prompt.system}\n\n${jsonOutputInstruction(prompt.jsonSchema)}`;
  return run.context.accountant.countTotal([{ role: 'system', content: system }, ...prompt.messages]);
}

/** The window less a margin for the summarizer's own tokenizer counting a little differently. */
export function usableWindow(settings: LlmSummarySettings): number {
  return settings.summarizerWindowTokens - Math.max(32, Math.ceil(settings.summarizerWindowTokens * 0.03));
}

/** `text` cut in the middle to about `maxTokens`, with a note saying how much was left out. */
function truncateMiddle(text: string, maxTokens: number, run: SummarizerRun): string {
  const count = (value: string) => run.context.accountant.counter.count(value);
  if (count(text) <= maxTokens) return text;
  let keep = Math.max(0, Math.min(text.length, maxTokens * 3));
  for (let attempt = 0; attempt < 12; attempt++) {
    const head = text.slice(0, Math.ceil(keep / 2));
    const tail = text.slice(text.length - Math.floor(keep / 2));
    const cut = `${head}\n[... ${text.length - head.length - tail.length} characters left out here; the original is in the archive ...]\n${tail}`;
    if (count(cut) <= maxTokens || keep === 0) return cut;
    keep = Math.floor(keep * 0.7);
  }
  return text.slice(0, maxTokens);
}

/** What is sent to the summarizer, transport fields aside. */
export interface SummarizerPrompt {
  system: string;
  messages: Message[];
  jsonSchema: JSONValue;
  /** Secrets replaced before the prompt was built; reported with the result. */
  redactions?: SecretRedaction[];
}

/** One summarizer call, retried once when the reply is empty or not the expected JSON. */
async function callSummarizer(
  run: SummarizerRun,
  options: BuildSummaryPromptOptions,
  maxOutputTokens: number,
): Promise<string> {
  const { settings } = run;
  const prompt = buildSummaryPrompt({
    ...options,
    redact: settings.redact,
    mode: settings.mode,
    topics: settings.topics,
  });
  return callSummarizerJson(run, prompt, maxOutputTokens, readSummaryOutput, 'the reply held no summary');
}

/**
 * One call with any JSON prompt, read by `read` (undefined: the reply is unusable), retried once when the
 * reply is empty or unusable. The request is checked against the summarizer's window and `maxCalls` first.
 *
 * @throws SummaryFailure when the call fails, the reply is unusable twice, or a limit would be passed
 */
export async function callSummarizerJson<T>(
  run: SummarizerRun,
  prompt: SummarizerPrompt,
  maxOutputTokens: number,
  read: (response: LlmResponse) => T | undefined,
  unusable = 'the reply held nothing usable',
): Promise<T> {
  const { settings, context } = run;
  const tokens = promptTokens(run, prompt) + maxOutputTokens;
  // Callers size the data first; this is the last check that nothing oversized is ever sent.
  if (tokens > settings.summarizerWindowTokens)
    throw new SummaryFailure(`the request (${tokens} tokens) does not fit the summarizer's window`);
  run.redactions = mergeRedactions(run.redactions, prompt.redactions ?? []);
  let problem = '';
  for (let attempt = 0; attempt < 2; attempt++) {
    if (run.calls >= settings.maxCalls)
      throw new SummaryFailure(
        `the summary needs more than maxCalls (${settings.maxCalls}) summarizer calls`,
      );
    run.calls++;
    try {
      const response = await settings.client.complete({
        system: prompt.system,
        messages: prompt.messages,
        jsonSchema: prompt.jsonSchema,
        maxOutputTokens,
        temperature: 0,
        timeoutMs: settings.timeoutMs,
        ...(context.abortSignal === undefined ? {} : { abortSignal: context.abortSignal }),
      });
      const value = read(response);
      if (value !== undefined) return value;
      problem =
        response.finishReason === 'length'
          ? 'the summary was cut off at the output limit'
          : `${unusable} (empty or not the expected JSON)`;
    } catch (error) {
      if (context.abortSignal?.aborted === true) throw error;
      // Invalid output may come out right a second time; transport errors were retried by the client already.
      if (isProviderError(error) && error.kind === 'invalid-output') {
        problem = `unusable reply: ${error.message}`;
        continue;
      }
      const message = error instanceof Error ? error.message : String(error);
      throw new SummaryFailure(`the summarizer failed: ${message}`);
    }
  }
  throw new SummaryFailure(`${problem} (twice)`);
}

/** Output tokens to ask for when summarizing about `dataTokens` tokens. */
function outputTokensFor(settings: LlmSummarySettings, dataTokens: number): number {
  return Math.max(
    64,
    Math.min(settings.maxOutputTokens, Math.ceil(dataTokens * modeRatio[settings.mode]) + 64),
  );
}

/** Blocks packed greedily, in order, into groups of at most `roomTokens` (a block larger alone is cut). */
export function packBlocks(blocks: readonly string[], roomTokens: number, run: SummarizerRun): string[][] {
  const count = (value: string) => run.context.accountant.counter.count(value) + 2;
  const packs: string[][] = [];
  let current: string[] = [];
  let used = 0;
  for (const original of blocks) {
    const block = truncateMiddle(original, roomTokens - 2, run);
    const tokens = count(block);
    if (current.length > 0 && used + tokens > roomTokens) {
      packs.push(current);
      current = [];
      used = 0;
    }
    current.push(block);
    used += tokens;
  }
  if (current.length > 0) packs.push(current);
  return packs;
}

interface SummarizeBlocksInput {
  /** The span as transcript blocks, one per group, oldest first. */
  blocks: string[];
  kind: Extract<SummaryPromptKind, 'summarize' | 'progressive'>;
  previousSummary?: string;
  facts?: SummaryFacts;
}

/**
 * The summary of `blocks`: one call when everything fits the window; otherwise the blocks are packed into
 * parts that fit, each part is summarized, and the parts' summaries are combined (in groups, level by level,
 * while they do not fit at once). The summary so far and the ledger facts go into the final call, cut to a
 * share of the window when they are large.
 *
 * @throws SummaryFailure when the summarizer fails, answers unusably twice, or more than `maxCalls` calls are needed
 */
async function summarizeBlocks(run: SummarizerRun, input: SummarizeBlocksInput): Promise<string> {
  const { settings } = run;
  const window = usableWindow(settings);
  const previousSummary =
    input.previousSummary === undefined
      ? undefined
      : truncateMiddle(input.previousSummary, Math.floor(window * 0.25), run);
  let facts = input.facts;
  if (facts !== undefined && run.context.accountant.counter.count(renderSummaryFacts(facts)) > window * 0.15)
    facts = undefined;
  const finalOptions = {
    ...(previousSummary === undefined ? {} : { previousSummary }),
    ...(facts === undefined ? {} : { facts }),
  };
  const count = (text: string) => run.context.accountant.counter.count(text);
  // Room for data in a prompt of `kind` with `extra`, once the prompt itself and the answer are counted.
  const roomFor = (kind: SummaryPromptKind, extra: Partial<BuildSummaryPromptOptions>, output: number) => {
    const empty = buildSummaryPrompt({
      transcript: '',
      kind,
      ...extra,
      redact: false,
      mode: settings.mode,
      topics: settings.topics,
    });
    return window - promptTokens(run, empty) - output - 8;
  };

  const whole = input.blocks.join('\n\n');
  const wholeTokens = count(whole);
  const finalOutput = outputTokensFor(settings, wholeTokens);
  const finalKind = input.kind;
  if (wholeTokens <= roomFor(finalKind, finalOptions, finalOutput))
    return callSummarizer(run, { transcript: whole, kind: finalKind, ...finalOptions }, finalOutput);

  // Too large for one call: summarize parts, then combine the parts' summaries.
  const chunkOutput = Math.min(settings.maxOutputTokens, Math.max(256, Math.floor(window / 8)));
  const chunkRoom = roomFor('chunk', { part: { index: 99, count: 99 } }, chunkOutput);
  if (chunkRoom < 64) throw new SummaryFailure("the summarizer's window leaves no room for the transcript");
  const packs = packBlocks(input.blocks, chunkRoom, run);
  let parts: string[] = [];
  for (const [index, pack] of packs.entries()) {
    const transcript = pack.join('\n\n');
    parts.push(
      await callSummarizer(
        run,
        { transcript, kind: 'chunk', part: { index: index + 1, count: packs.length } },
        Math.min(chunkOutput, outputTokensFor(settings, count(transcript))),
      ),
    );
  }
  for (let level = 0; level < 6; level++) {
    const labelled = parts.map((part, index) => `Part ${index + 1} of ${parts.length}:\n${part}`);
    const combined = labelled.join('\n\n');
    const output = settings.maxOutputTokens;
    if (count(combined) <= roomFor('combine', finalOptions, output))
      return callSummarizer(run, { transcript: combined, kind: 'combine', ...finalOptions }, output);
    const combineRoom = roomFor('combine', {}, output);
    const groups = packBlocks(labelled, combineRoom, run);
    // No progress possible (every part alone fills the room): cut the parts instead of looping.
    if (groups.length >= parts.length)
      parts = parts.map((part) => truncateMiddle(part, Math.floor(combineRoom / parts.length) - 16, run));
    else {
      const next: string[] = [];
      for (const group of groups)
        next.push(await callSummarizer(run, { transcript: group.join('\n\n'), kind: 'combine' }, output));
      parts = next;
    }
  }
  throw new SummaryFailure('the parts of the span could not be combined within the summarizer window');
}

/** The span's groups as transcript blocks (earlier summaries are left out: they go in as the summary so far). */
export function transcriptBlocks(
  messages: readonly IdentifiedMessage[],
  start: number,
  end: number,
): string[] {
  const blocks: string[] = [];
  let current: string[] = [];
  let position = 1;
  for (let index = start; index < end; index++) {
    const message = messages[index]!;
    if (isSummaryMessage(message)) continue;
    // A new block starts at each user message and at each assistant message (a tool call with its results).
    if (message.role !== 'tool' && current.length > 0) {
      blocks.push(current.join('\n\n'));
      current = [];
    }
    current.push(renderTranscriptMessage(message, position++));
  }
  if (current.length > 0) blocks.push(current.join('\n\n'));
  return blocks;
}

/** An earlier summary in a span, with its anchored record read from the metadata once. */
interface EarlierSummary {
  message: IdentifiedMessage;
  record: AnchoredSummary | undefined;
}

/** The span's earlier summaries, in order. */
function earlierSummaries(span: readonly IdentifiedMessage[]): EarlierSummary[] {
  return span
    .filter(isSummaryMessage)
    .map((message) => ({ message, record: parseAnchoredSummary(message.metadata?.summary) }));
}

/** The text of earlier summaries, without their headers and appended facts. */
function previousSummaryText(earlier: readonly EarlierSummary[]): string | undefined {
  const texts = earlier
    .map(({ message }) => {
      const text = messageText(message);
      const body = typeof message.metadata?.summaryText === 'string' ? message.metadata.summaryText : text;
      return body.replace(summaryHeaderPattern, '').trim();
    })
    .filter((text) => text !== '');
  return texts.length === 0 ? undefined : texts.join('\n\n');
}

/** Messages an earlier summary stood for (its header count, or its anchored record's). */
function summarizedCount({ message, record }: EarlierSummary): number {
  const count = message.metadata?.summarizedMessageCount;
  if (typeof count === 'number') return count;
  if (record !== undefined) return record.messageCount;
  const header = summaryHeaderPattern.exec(messageText(message));
  return header === null ? 1 : Number(header[1]);
}

function handlesOf({ message, record }: EarlierSummary): string[] {
  const handles = message.metadata?.handles;
  if (Array.isArray(handles)) return handles.filter((handle): handle is string => typeof handle === 'string');
  if (record !== undefined) return record.handles;
  return typeof message.metadata?.handle === 'string' ? [message.metadata.handle] : [];
}

/** The span's anchored record: earlier summaries' records merged, extended with the span's new messages. */
function spanRecord(
  span: readonly IdentifiedMessage[],
  earlier: readonly EarlierSummary[],
  spanHandle: string,
): AnchoredSummary {
  let record: AnchoredSummary | undefined;
  for (const { record: earlierRecord } of earlier)
    if (earlierRecord !== undefined)
      record = record === undefined ? earlierRecord : mergeAnchoredSummary(record, earlierRecord);
  const fresh = span.filter((message) => !isSummaryMessage(message));
  const update = buildAnchoredSummary(fresh, { handles: [spanHandle] });
  return record === undefined ? update : mergeAnchoredSummary(record, update);
}

/** The record's files, errors and commands, verbatim, up to `maxTokens` (taken in turn from each list). */
function summaryFacts(record: AnchoredSummary, maxTokens: number, run: SummarizerRun): SummaryFacts {
  const lists: Array<[keyof SummaryFacts, string[]]> = [
    ['files', record.files.map((file) => `${codeSpan(file.path)} (${file.status})`)],
    ['errors', [...record.errors]],
    ['commands', [...record.commands]],
  ];
  const facts: SummaryFacts = { files: [], errors: [], commands: [] };
  let used = 0;
  for (let index = 0; lists.some(([, items]) => index < items.length); index++)
    for (const [key, items] of lists) {
      const item = items[index];
      if (item === undefined) continue;
      const tokens = run.context.accountant.counter.count(item) + 2;
      if (used + tokens > maxTokens) continue;
      facts[key].push(item);
      used += tokens;
    }
  // Shown in their original order.
  for (const [key, items] of lists) facts[key].sort((a, b) => items.indexOf(a) - items.indexOf(b));
  return facts;
}

interface CommitInput {
  strategy: string;
  messages: readonly IdentifiedMessage[];
  span: PlacedSpan;
  /** The span's earlier summaries (`earlierSummaries`). */
  earlier: readonly EarlierSummary[];
  summaryText: string;
  record: AnchoredSummary;
  facts: SummaryFacts;
  spanHandle: string;
  run: SummarizerRun;
}

/**
 * The conversation with the span replaced by ONE summary message: the header, the LLM's text, the ledger's
 * verbatim facts and the archive handles. The span is archived (kind `messages`) only here, once the summary
 * is known to be usable.
 *
 * @throws SummaryFailure when the summary is not smaller than the span, or the result would not be valid
 */
function commitSummary(input: CommitInput): StrategyResult {
  const { strategy, messages, span, earlier, summaryText, record, facts, spanHandle, run } = input;
  const { accountant, archive } = run.context;
  const spanMessages = messages.slice(span.start, span.end);
  const messageCount = earlier.reduce(
    (sum, summary) => sum + summarizedCount(summary),
    spanMessages.length - earlier.length,
  );
  const handles = [spanHandle];
  for (const summary of earlier)
    for (const handle of handlesOf(summary)) if (!handles.includes(handle)) handles.push(handle);
  const factsText = renderSummaryFacts(facts);
  // One handle names them all: an index (oldest first), stored with the span once the summary is usable.
  const indexed = [...handles].reverse();
  const named = indexHandleOf(indexed)!;
  const text = [
    summaryHeader(messageCount),
    summaryText,
    ...(factsText === '' ? [] : [`${recordedVerbatimHeading}\n${factsText}`]),
    `Originals archived: ${named} (expand_context ${indexed.length === 1 ? 'restores them' : 'lists them'})`,
  ].join('\n\n');
  const metadata = {
    origin: 'summary',
    strategy,
    handle: spanHandle,
    handles,
    summarizedMessageCount: messageCount,
    summarizer: run.settings.client.id,
    summaryText,
    summary: anchoredSummaryToJson({ ...record, messageCount, handles }),
  };
  const id = `summary-${hashText(spanHandle, 12)}`;
  const summaryMessage = markerMessage(span.role, text, { id, metadata });
  const spanTokens = spanMessages.reduce((sum, message) => sum + accountant.countMessage(message), 0);
  const summaryTokens = accountant.countMessage(summaryMessage);
  if (summaryTokens >= spanTokens)
    throw new SummaryFailure(
      `the summary (${summaryTokens} tokens) is not smaller than the ${spanMessages.length} messages it would replace (${spanTokens} tokens)`,
    );
  const output = [...messages.slice(0, span.start), summaryMessage, ...messages.slice(span.end)];
  const check = { provider: 'any', allowPendingToolCalls: true } as const;
  if (validateMessages(messages, check).valid && !validateMessages(output, check).valid)
    throw new SummaryFailure('the conversation with the summary would not be valid');
  archive.put({
    kind: 'messages',
    content: spanMessages,
    messageIds: spanMessages.map((message) => message.id),
    strategy,
  });
  putIndex(archive, indexed, { messageIds: [id], strategy });
  const action: StrategyAction = {
    type: 'llm-summary',
    strategy,
    messageIds: [id, ...spanMessages.map((message) => message.id)],
    handle: spanHandle,
    tokensBefore: spanTokens,
    tokensAfter: summaryTokens,
    description: `summarized ${spanMessages.length} messages (${messageCount} original) with ${run.settings.client.id} in ${describeRun(run)}`,
  };
  return { messages: output, actions: [action], warnings: [] };
}

/** The line before the facts a summary's text records verbatim (`renderSummaryFacts`). */
const recordedVerbatimHeading = 'Recorded verbatim:';

/** The line closing a summary's text: the handle of its archived originals (an index when several). */
const originalsArchivedLine =
  /\n\nOriginals archived: (h-[0-9a-f]+) \(expand_context (?:restores|lists) them\)$/;

/** A summary an LLM strategy committed, as `parseLlmSummaryText` reads it back from its text. */
export interface ParsedLlmSummary {
  messageCount: number;
  /** The LLM's text, without the header, the recorded facts and the closing line. */
  summaryText: string;
  /** The facts the text records verbatim (files, errors, commands), the message count and the handle. */
  record: AnchoredSummary;
  /** The handle the closing line names, when there is one. */
  handle?: string;
}

/**
 * A summary an LLM strategy committed (`[PREVIOUS CONVERSATION SUMMARY - N messages]`, the LLM's text, the facts
 * recorded verbatim, the handle of the originals), read back from its text: for a summary whose metadata a trip
 * through a provider's format dropped. Undefined when `text` does not start with the header.
 */
export function parseLlmSummaryText(text: string): ParsedLlmSummary | undefined {
  const header = summaryHeaderPattern.exec(text);
  if (header === null) return undefined;
  let body = text.slice(header[0].length).replace(/^\n\n/, '');
  const archived = originalsArchivedLine.exec(body);
  if (archived !== null) body = body.slice(0, archived.index);
  const record = emptyAnchoredSummary();
  record.messageCount = Number(header[1]);
  if (archived !== null) record.handles.push(archived[1]!);
  const factsAt = body.lastIndexOf(`\n\n${recordedVerbatimHeading}\n`);
  const facts =
    factsAt === -1 ? undefined : summaryFactsIn(body.slice(factsAt + recordedVerbatimHeading.length + 3));
  if (facts !== undefined) {
    body = body.slice(0, factsAt);
    record.files.push(...facts.files);
    record.errors.push(...facts.errors);
    record.commands.push(...facts.commands);
  }
  return {
    messageCount: record.messageCount,
    summaryText: body.trim(),
    record,
    ...(archived === null ? {} : { handle: archived[1]! }),
  };
}

/** The facts `renderSummaryFacts` wrote (`Files:` then `- item` lines, and so on), or undefined. */
function summaryFactsIn(text: string): Pick<AnchoredSummary, 'files' | 'errors' | 'commands'> | undefined {
  const facts: Pick<AnchoredSummary, 'files' | 'errors' | 'commands'> = {
    files: [],
    errors: [],
    commands: [],
  };
  const lists = { 'Files:': 'files', 'Errors:': 'errors', 'Commands:': 'commands' } as const;
  let list: (typeof lists)[keyof typeof lists] | undefined;
  for (const line of text.split('\n')) {
    if (Object.hasOwn(lists, line)) list = lists[line as keyof typeof lists];
    else if (list === undefined || !line.startsWith('- ')) return undefined;
    else if (list !== 'files') facts[list].push(line.slice(2));
    else {
      // `path` (status)
      const span = readCodeSpan(line, 2);
      const status = span === undefined ? null : /^ \((.+)\)$/.exec(line.slice(span.end));
      if (span === undefined || status === null) return undefined;
      facts.files.push({ path: span.text, status: status[1]! });
    }
  }
  return facts;
}

/** The run's calls and the secrets redacted before sending, for an action's description. */
export function describeRun(run: SummarizerRun): string {
  const redacted =
    run.redactions.length === 0
      ? ''
      : `; redacted ${run.redactions.map((entry) => `${entry.count} ${entry.kind}`).join(', ')} before sending`;
  return `${run.calls} ${run.calls === 1 ? 'call' : 'calls'}${redacted}`;
}

/**
 * The key a span's summarizer failures are remembered under; undefined when the span is not worth summarizing:
 * nothing new in it since the last summary, or too little text to gain from one.
 */
export function summarizableSpanKey(
  messages: readonly IdentifiedMessage[],
  span: PlacedSpan,
): string | undefined {
  const spanMessages = messages.slice(span.start, span.end);
  if (spanMessages.every(isSummaryMessage) || spanChars(spanMessages) < minimumSummarizableChars)
    return undefined;
  return hashText(spanMessages.map((message) => message.id).join('\n'));
}

export interface SummarizeSpanInput {
  strategy: string;
  settings: LlmSummarySettings;
  context: AsyncStrategyContext;
  messages: readonly IdentifiedMessage[];
  span: PlacedSpan;
}

/**
 * The conversation with `span` replaced by its summary: the span's record and ledger facts, the summary so far
 * (from earlier summaries in the span), the summarizer's text, committed with `commitSummary`.
 *
 * @throws SummaryFailure when the summarizer fails or the summary is not usable
 */
export async function summarizeSpan(input: SummarizeSpanInput): Promise<StrategyResult> {
  const { strategy, settings, context, messages, span } = input;
  const spanMessages = messages.slice(span.start, span.end);
  const run: SummarizerRun = { settings, context, calls: 0, redactions: [] };
  const spanHandle = spanHandleOf(spanMessages);
  const earlier = earlierSummaries(spanMessages);
  const record = spanRecord(spanMessages, earlier, spanHandle);
  const facts = summaryFacts(record, settings.maxFactTokens, run);
  const previousSummary = previousSummaryText(earlier);
  const summaryText = await summarizeBlocks(run, {
    blocks: transcriptBlocks(messages, span.start, span.end),
    kind: previousSummary === undefined ? 'summarize' : 'progressive',
    ...(previousSummary === undefined ? {} : { previousSummary }),
    facts,
  });
  return commitSummary({
    strategy,
    messages,
    span,
    earlier,
    summaryText,
    record,
    facts,
    spanHandle,
    run,
  });
}

/** The handle the span will be archived under (known before it is archived). */
function spanHandleOf(span: readonly IdentifiedMessage[]): string {
  return archiveHandle('messages', [...span]);
}

/** Characters of model-visible text in a span, earlier summaries left out. */
function spanChars(span: readonly IdentifiedMessage[]): number {
  return span.reduce(
    (sum, message) => sum + (isSummaryMessage(message) ? 0 : messageText(message).length),
    0,
  );
}

/** A map that keeps only its `limit` most recently set keys. */
export interface BoundedMemory<Value> {
  get(key: string): Value | undefined;
  /** Sets `key` as the newest entry, forgetting the oldest one past the limit. */
  set(key: string, value: Value): void;
}

/**
 * What a strategy instance remembers between the engine's passes over the same conversation (spans the
 * summarizer already failed on and why, replies already received), bounded so a long-lived instance does not grow
 * without end.
 */
export function createBoundedMemory<Value>(limit = 64): BoundedMemory<Value> {
  const entries = new Map<string, Value>();
  return {
    get: (key) => entries.get(key),
    set(key, value) {
      entries.delete(key);
      entries.set(key, value);
      // Maps iterate in insertion order: the first key is the oldest.
      if (entries.size > limit) entries.delete(entries.keys().next().value as string);
    },
  };
}
