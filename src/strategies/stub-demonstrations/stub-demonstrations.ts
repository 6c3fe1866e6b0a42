import { archiveHandle } from '../../archive/archive-store.js';
import { isDemonstration } from '../../messages/content.js';
import type { IdentifiedMessage, Message, Part } from '../../messages/types.js';
import type { Strategy, StrategyAction, StrategyContext, StrategyResult } from '../strategy.js';
import { checkCount, checkStrategyInput, createRunningTotal } from '../strategy-support.js';

const strategyName = 'stub-demonstrations';

/**
 * Archives what an agent framework put in front of the task and what it showed as a worked example, oldest
 * first, until the budget holds:
 * - the parts before a user message's request (`metadata.requestPart`): OpenHands' in-context example, SWE-agent's
 *   demonstration or Claude Code's harness notes, merged into the first task. The request itself is the task and
 *   stays byte-identical; this is the one change a strategy makes to a preserved message. The parts become one
 *   stub text, and `requestPart` becomes 1;
 * - whole demonstration messages (`metadata.demo`) that are not preserved, when they hold only text: their
 *   content becomes the stub.
 *
 * None of it is this session's work, so a stub loses nothing the summary would keep; the original message goes
 * to the archive and the stub names its handle. Pinned messages are left alone, and a stub is only used when
 * it saves tokens. Does nothing when the conversation is within budget.
 */
export function stubDemonstrations(options: StubDemonstrationsOptions = {}): Strategy {
  const { minTokens = 200 } = options;
  checkCount('minTokens', minTokens);
  return {
    name: strategyName,
    apply(messages, context) {
      checkStrategyInput(messages);
      return applyStubDemonstrations(messages, context, minTokens);
    },
  };
}

export interface StubDemonstrationsOptions {
  /**
   * Only what takes at least this many tokens is archived: a short harness note (Claude Code's caveat) costs
   * about what its stub would. @default 200
   */
  minTokens?: number;
}

function applyStubDemonstrations(
  messages: readonly IdentifiedMessage[],
  context: StrategyContext,
  minTokens: number,
): StrategyResult {
  const output = [...messages];
  const actions: StrategyAction[] = [];
  const total = createRunningTotal(messages, context);
  for (let index = 0; index < messages.length && !total.withinBudget(); index++) {
    const message = messages[index]!;
    if (message.metadata?.pinned === true) continue;
    const stubbed = withStub(message, context);
    if (stubbed === undefined || stubbed.tokens < minTokens) continue;
    const tokensBefore = context.accountant.countMessage(message);
    const tokensAfter = context.accountant.countMessage(stubbed.message);
    if (tokensAfter >= tokensBefore) continue;
    context.archive.put({
      kind: 'messages',
      content: [message],
      messageIds: [message.id],
      strategy: strategyName,
    });
    output[index] = stubbed.message;
    total.replace(message, stubbed.message);
    actions.push({
      type: 'stub-demonstration',
      strategy: strategyName,
      messageIds: [message.id],
      handle: stubbed.handle,
      tokensBefore,
      tokensAfter,
      description: `archived ${stubbed.what} of message ${message.id} (${tokensBefore - tokensAfter} tokens saved)`,
    });
  }
  return { messages: output, actions, warnings: [] };
}

interface Stubbed {
  message: IdentifiedMessage;
  handle: string;
  /** What was archived, for the action's description. */
  what: string;
  /** Tokens of what was archived. */
  tokens: number;
}

/** The message with its preamble or demonstration replaced by a stub; undefined when it has neither. */
function withStub(message: IdentifiedMessage, context: StrategyContext): Stubbed | undefined {
  const requestPart = message.metadata?.requestPart;
  if (
    message.role === 'user' &&
    typeof requestPart === 'number' &&
    requestPart > 0 &&
    Array.isArray(message.content) &&
    requestPart < message.content.length
  ) {
    const parts = message.content as readonly Part[];
    const preamble = parts.slice(0, requestPart);
    // Already a stub: the first pass left exactly one text part naming a handle.
    if (
      preamble.length === 1 &&
      preamble[0]!.type === 'text' &&
      preamble[0]!.text.startsWith(preambleStubPrefix)
    )
      return undefined;
    const handle = archiveHandle('messages', [message]);
    const tokens = preambleTokens(preamble, context);
    const stub: Part = { type: 'text', text: `${preambleStubPrefix}${handle} · ${tokens} tokens]` };
    return {
      message: {
        ...message,
        content: [stub, ...parts.slice(requestPart)],
        metadata: { ...message.metadata, requestPart: 1 },
      } as IdentifiedMessage,
      handle,
      what: `${requestPart} part${requestPart === 1 ? '' : 's'} before the request`,
      tokens,
    };
  }
  if (!isDemonstration(message) || context.preservedIds.has(message.id) || !isTextOnly(message))
    return undefined;
  if (typeof message.content === 'string' && message.content.startsWith(demonstrationStubPrefix))
    return undefined;
  const handle = archiveHandle('messages', [message]);
  const tokens = context.accountant.countMessage(message);
  const stub = `${demonstrationStubPrefix}${handle} · ${tokens} tokens]`;
  return {
    message: { ...message, content: stub } as IdentifiedMessage,
    handle,
    what: 'the demonstration',
    tokens,
  };
}

/** Stub of the parts before a request: an in-context example or harness notes, which the archive keeps. */
export const preambleStubPrefix = '[text before the request archived: ';
/** Stub of a demonstration message. */
export const demonstrationStubPrefix = '[in-context demonstration archived: ';

function preambleTokens(parts: readonly Part[], context: StrategyContext): number {
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
