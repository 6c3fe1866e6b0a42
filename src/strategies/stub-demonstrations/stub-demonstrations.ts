import { archiveHandle } from '../../archive/archive-store.js';
import { aiderOutcomeLine } from '../../ledger/index.js';
import { isDemonstration, isExpansion } from '../../messages/content.js';
import type { IdentifiedMessage, Message, Part } from '../../messages/types.js';
import type { Strategy, StrategyAction, StrategyContext, StrategyResult } from '../strategy.js';
import { checkCount, checkShare, checkStrategyInput, rewriteOldestFirst } from '../strategy-support.js';

const strategyName = 'stub-demonstrations';

/**
 * Archives what an agent framework put in front of the task and what it showed as a worked example, oldest
 * first, until the budget holds:
 * - the parts before a user message's request (`metadata.requestPart`): OpenHands' in-context example, SWE-agent's
 *   demonstration or Claude Code's harness notes, merged into the first task. The request itself is the task and
 *   stays byte-identical; this is the one change a strategy makes to a preserved message. The parts become one
 *   stub text, and `requestPart` becomes 1;
 * - whole demonstration messages (`metadata.demo`) that are not preserved, when they hold only text: their
 *   content becomes the stub;
 * - the prompt a command expanded to (`metadata.expansion`), and the parts of a merged request from
 *   `metadata.expansionPart` on (that prompt, harness notes such as a file an @-mention read, mini-swe-agent's
 *   workflow and submission rules after the issue), when its message is not preserved, or when they take more
 *   than `maxExpansionShare` of the budget: an expansion instructs the agent, so it goes only where the budget
 *   has already given up keeping the task whole, before the words the user typed, or where keeping it would
 *   leave little room for the session's own work. Harness notes alone after the request (all
 *   `metadata.harnessParts`: aider's output, an @-mention's file) instruct nothing and go like a preamble,
 *   preserved or not;
 * - harness notes a repair merged between two requests (`metadata.harnessParts`: what aider printed after a
 *   request that got no reply), each run behind one stub, preserved or not.
 *
 * None of it is this session's work, so a stub loses nothing the summary would keep; the original message goes
 * to the archive and the stub names its handle. Pinned messages are left alone, and a stub is only used when
 * it saves tokens. Does nothing when the conversation is within budget.
 */
export function stubDemonstrations(options: StubDemonstrationsOptions = {}): Strategy {
  const { minTokens = 50, maxExpansionShare = 0.2 } = options;
  checkCount('minTokens', minTokens);
  checkShare('maxExpansionShare', maxExpansionShare);
  return {
    name: strategyName,
    archivesRequestPreambles: true,
    apply(messages, context) {
      checkStrategyInput(messages);
      return applyStubDemonstrations(messages, context, { minTokens, maxExpansionShare });
    },
  };
}

export interface StubDemonstrationsOptions {
  /**
   * Only what takes at least this many tokens is archived. A stub takes about 20: a note alone (Claude Code's
   * 38-token caveat) would save too little to lose its words, while the caveat with the command it ran and that
   * command's output (90 tokens in front of a task) saves half, which a small budget needs. On the shared and
   * held-out sessions, 50 kept two probes more than 200 at 5% and 10%, and none fewer (30 did the same as 50,
   * 100 the same as 200). @default 50
   */
  minTokens?: number;
  /**
   * The share of the budget the expansion of a preserved request may take (see above) before it is archived:
   * the words the user typed stay byte-identical either way. mini-swe-agent's ~1000 tokens of workflow rules
   * after each issue took 42% of a 20% budget; archiving them kept 13 held-out probes more at 20%, and on a
   * second blind set 4 more at 10% (0.1 did the same as 0.2, 0.35 two fewer). Budgets of real agent loops
   * (tens of thousands of tokens) rarely reach it. @default 0.2
   */
  maxExpansionShare?: number;
}

interface StubSettings {
  minTokens: number;
  maxExpansionShare: number;
}

function applyStubDemonstrations(
  messages: readonly IdentifiedMessage[],
  context: StrategyContext,
  settings: StubSettings,
): StrategyResult {
  const { minTokens } = settings;
  const actions: StrategyAction[] = [];
  const rewrite = (message: IdentifiedMessage): IdentifiedMessage | undefined => {
    if (message.metadata?.pinned === true) return undefined;
    const stubbed = withStub(message, context, settings);
    if (stubbed === undefined || stubbed.tokens < minTokens) return undefined;
    const tokensBefore = context.accountant.countMessage(message);
    const tokensAfter = context.accountant.countMessage(stubbed.message);
    if (tokensAfter >= tokensBefore) return undefined;
    context.archive.put({
      kind: 'messages',
      content: [message],
      messageIds: [message.id],
      strategy: strategyName,
    });
    actions.push({
      type: 'stub-demonstration',
      strategy: strategyName,
      messageIds: [message.id],
      handle: stubbed.handle,
      tokensBefore,
      tokensAfter,
      description: `archived ${stubbed.what} of message ${message.id} (${tokensBefore - tokensAfter} tokens saved)`,
    });
    return stubbed.message;
  };
  return { messages: rewriteOldestFirst(messages, context, rewrite), actions, warnings: [] };
}

interface Stubbed {
  message: IdentifiedMessage;
  handle: string;
  /** What was archived, for the action's description. */
  what: string;
  /** Tokens of what was archived. */
  tokens: number;
}

/**
 * The message with its preamble, its harness notes (between requests, or after the request), its expansion (when
 * not preserved, or over its share of the budget) or itself as a demonstration or an expansion replaced by a
 * stub; undefined when it has none.
 */
function withStub(
  message: IdentifiedMessage,
  context: StrategyContext,
  settings: StubSettings,
): Stubbed | undefined {
  if (message.role === 'user' && Array.isArray(message.content)) {
    const stubbed = withPartsStubbed(message, message.content as readonly Part[], context, settings);
    if (stubbed !== undefined) return stubbed;
  }
  const whole = isDemonstration(message) ? 'demonstration' : isExpansion(message) ? 'expansion' : undefined;
  if (whole === undefined || context.preservedIds.has(message.id) || !isTextOnly(message)) return undefined;
  if (typeof message.content === 'string' && message.content.startsWith(stubPrefixes[whole]))
    return undefined;
  const handle = archiveHandle('messages', [message]);
  const tokens = context.accountant.countMessage(message);
  return {
    message: { ...message, content: stubText(stubPrefixes[whole], handle, tokens) } as IdentifiedMessage,
    handle,
    what: whole === 'demonstration' ? 'the demonstration' : 'the expansion',
    tokens,
  };
}

/**
 * The parts before the request (`requestPart`) as one stub, those after it (`expansionPart`) as another when
 * the message is not preserved, they are harness notes only or they take more than `maxExpansionShare` of the
 * budget, and each run of harness notes merged between
 * requests (`harnessParts`) as one; the request's own parts unchanged, and so is a run its stub would not make
 * shorter. Undefined when none applies or all are stubs already.
 */
function withPartsStubbed(
  message: IdentifiedMessage,
  parts: readonly Part[],
  context: StrategyContext,
  settings: StubSettings,
): Stubbed | undefined {
  const { requestPart, expansionPart, harnessParts } = message.metadata ?? {};
  const requestStart = typeof requestPart === 'number' && requestPart > 0 ? requestPart : 0;
  const hasExpansion =
    typeof expansionPart === 'number' && expansionPart > requestStart && expansionPart < parts.length;
  const harness = new Set(
    (Array.isArray(harnessParts) ? harnessParts : []).filter(
      (index): index is number => typeof index === 'number' && index > requestStart && index < parts.length,
    ),
  );
  // An expansion is an instruction: it goes only once the budget has given up preserving the message, or when it
  // would take more than its share of the budget. Harness notes alone after the request (aider's output, an
  // @-mention's file) are not, and go like a preamble.
  const expansionStubbed =
    hasExpansion &&
    (!context.preservedIds.has(message.id) ||
      parts.every((_, index) => index < expansionPart || harness.has(index)) ||
      textTokens(parts.slice(expansionPart), context) > settings.maxExpansionShare * context.budgetTokens);
  const requestEnd = expansionStubbed ? expansionPart : parts.length;
  // Nothing before the request, after it to stub, or between requests: most user messages.
  if (
    requestStart >= parts.length ||
    (requestStart === 0 && requestEnd === parts.length && harness.size === 0)
  )
    return undefined;
  const between = new Set(
    [...harness].filter((index) => index < (hasExpansion ? expansionPart : parts.length)),
  );
  // Where each part goes: a stub of its kind, or kept. Runs of one kind become one stub.
  const kindOf = (index: number): StubKind | undefined =>
    index < requestStart
      ? 'before'
      : index >= requestEnd
        ? 'after'
        : between.has(index)
          ? 'between'
          : undefined;
  // The runs of parts of one kind, and whether one is still to be stubbed (most messages have none: no hashing).
  const runs: Array<{ start: number; end: number; kind: StubKind | undefined; stub: boolean }> = [];
  for (let start = 0; start < parts.length; ) {
    const kind = kindOf(start);
    let end = start + 1;
    if (kind !== undefined) while (end < parts.length && kindOf(end) === kind) end++;
    runs.push({
      start,
      end,
      kind,
      stub: kind !== undefined && !isStub(parts.slice(start, end), stubPrefixOf[kind]),
    });
    start = end;
  }
  if (!runs.some((run) => run.stub)) return undefined;
  const handle = archiveHandle('messages', [message]);
  const content: Part[] = [];
  const newIndex: number[] = [];
  const stubbedKinds: StubKind[] = [];
  let tokens = 0;
  for (const { start, end, kind, stub } of runs) {
    for (let covered = start; covered < end; covered++) newIndex[covered] = content.length;
    const run = parts.slice(start, end);
    if (!stub || kind === undefined) {
      content.push(...run);
      continue;
    }
    const runTokens = textTokens(run, context);
    const text = stubText(stubPrefixOf[kind], handle, runTokens, outcomeLines(run));
    // A short note (aider's `Added x to the chat`) stays: its stub would cost more than it does.
    if (context.accountant.countText(text) >= runTokens) content.push(...run);
    else {
      tokens += runTokens;
      stubbedKinds.push(kind);
      content.push({ type: 'text', text } as Part);
    }
  }
  if (stubbedKinds.length === 0) return undefined;
  const metadata = { ...message.metadata };
  if (requestStart > 0) metadata.requestPart = newIndex[requestStart]!;
  if (hasExpansion) metadata.expansionPart = newIndex[expansionPart]!;
  if (harness.size > 0) metadata.harnessParts = [...new Set([...harness].map((index) => newIndex[index]!))];
  const count = (kind: StubKind) => stubbedKinds.filter((stubbed) => stubbed === kind).length;
  const what = [
    count('before') > 0
      ? `${requestStart} part${requestStart === 1 ? '' : 's'} before the request`
      : undefined,
    count('between') > 0
      ? `${count('between')} harness note${count('between') === 1 ? '' : 's'} between requests`
      : undefined,
    count('after') > 0 ? 'the text after it' : undefined,
  ].filter((item) => item !== undefined);
  return {
    message: { ...message, content, metadata } as IdentifiedMessage,
    handle,
    what: what.join(' and '),
    tokens,
  };
}

type StubKind = 'before' | 'between' | 'after';

/** A stub's text: what it stands for (`prefix`), the handle of the original message, its size and outcomes. */
function stubText(prefix: string, handle: string, tokens: number, outcomes: readonly string[] = []): string {
  return `${prefix}${handle} · ${tokens} tokens${outcomes.map((line) => ` · ${line}`).join('')}]`;
}

const maxOutcomeChars = 160;

/**
 * The outcomes a harness note reports (aider's `Applied edit to x`, `Commit 1a2b3c4 feat: …`): what the step
 * before it did, which its stub keeps in view (the first two, each cut at `maxOutcomeChars`).
 */
function outcomeLines(parts: readonly Part[]): string[] {
  const lines: string[] = [];
  for (const part of parts) {
    if (part.type !== 'text') continue;
    for (const match of part.text.matchAll(aiderOutcomeLine)) {
      const line = match[0].trim();
      lines.push(line.length > maxOutcomeChars ? `${line.slice(0, maxOutcomeChars - 1)}…` : line);
      if (lines.length === 2) return lines;
    }
  }
  return lines;
}

/** Whether `parts` are one stub text with `prefix`: a pass before left them so. */
function isStub(parts: readonly Part[], prefix: string): boolean {
  return parts.length === 1 && parts[0]!.type === 'text' && parts[0]!.text.startsWith(prefix);
}

/** Stub of the parts before a request: an in-context example or harness notes, which the archive keeps. */
export const preambleStubPrefix = '[text before the request archived: ';
/** Stub of a demonstration message. */
export const demonstrationStubPrefix = '[in-context demonstration archived: ';
/** Stub of a prompt a command expanded to, a whole message. */
export const expansionStubPrefix = '[expanded command prompt archived: ';
/** Stub of the parts after a request: what a command expanded to, harness notes (a file an @-mention read). */
export const afterRequestStubPrefix = '[text after the request archived: ';
/** Stub of harness notes merged between two requests (aider's output after a request that got no reply). */
export const betweenRequestsStubPrefix = '[harness output archived: ';
const stubPrefixOf: Record<StubKind, string> = {
  before: preambleStubPrefix,
  between: betweenRequestsStubPrefix,
  after: afterRequestStubPrefix,
};
const stubPrefixes = { demonstration: demonstrationStubPrefix, expansion: expansionStubPrefix };

function textTokens(parts: readonly Part[], context: StrategyContext): number {
  let tokens = 0;
  for (const part of parts)
    if (part.type === 'text' || part.type === 'reasoning') tokens += context.accountant.countText(part.text);
  return tokens;
}

function isTextOnly(message: Message): boolean {
  return (
    typeof message.content === 'string' ||
    (message.content as readonly Part[]).every((part) => part.type === 'text' || part.type === 'reasoning')
  );
}
