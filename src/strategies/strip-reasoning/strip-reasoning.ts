import { archiveHandle } from '../../archive/archive-store.js';
import type { AssistantContentPart, IdentifiedMessage } from '../../messages/types.js';
import type { Strategy, StrategyAction, StrategyContext, StrategyResult } from '../strategy.js';
import {
  checkCount,
  checkStrategyInput,
  codeRanges,
  overlapsAny,
  recentTurnsStart,
  rewriteOldestFirst,
} from '../strategy-support.js';

export interface StripReasoningOptions {
  /** Turns at the end of the conversation whose reasoning is kept. The last turn is always kept. @default 2 */
  keepRecentTurns?: number;
}

const strategyName = 'strip-reasoning';

/**
 * Removes reasoning from assistant messages older than the last `keepRecentTurns` turns: reasoning parts
 * (signed and redacted Anthropic thinking included) and `<think>…</think>` / `<thinking>…</thinking>` spans
 * in text, outside code. Each changed message gets one short stub text, `[reasoning archived: <handle> ·
 * <tokens> tokens]`, in place of the first removed piece, and its original is archived whole.
 *
 * Never touches the last turn (the assistant messages after the last user message): Anthropic requires the
 * thinking blocks of the latest assistant turn of an active tool loop to come back unchanged, and drops
 * the thinking of older turns itself, so stripping signed thinking there is safe.
 *
 * Does nothing when the conversation is within budget. Otherwise handles messages oldest first and stops
 * as soon as the budget holds; a message is only changed when that saves tokens.
 */
export function stripReasoning(options: StripReasoningOptions = {}): Strategy {
  const { keepRecentTurns = 2 } = options;
  checkCount('keepRecentTurns', keepRecentTurns);
  return {
    name: strategyName,
    apply(messages, context) {
      checkStrategyInput(messages);
      return applyStripReasoning(messages, context, Math.max(keepRecentTurns, 1));
    },
  };
}

function applyStripReasoning(
  messages: readonly IdentifiedMessage[],
  context: StrategyContext,
  keepRecentTurns: number,
): StrategyResult {
  const actions: StrategyAction[] = [];
  // Without a user message the whole conversation is the current turn.
  const hasTurns = messages.some((message) => message.role === 'user');
  const end = hasTurns ? recentTurnsStart(messages, keepRecentTurns) : 0;
  const rewrite = (message: IdentifiedMessage): IdentifiedMessage | undefined => {
    if (message.role !== 'assistant' || context.preservedIds.has(message.id)) return undefined;
    const stripped = stripMessageReasoning(message.content);
    if (stripped === undefined) return undefined;
    const handle = archiveHandle('messages', [message]);
    const tokensBefore = context.accountant.countMessage(message);
    const removedTokens = context.accountant.countText(stripped.removed);
    const stub = `[reasoning archived: ${handle} · ${removedTokens} tokens]`;
    const candidate: IdentifiedMessage = { ...message, content: stripped.build(stub) };
    const tokensAfter = context.accountant.countMessage(candidate);
    if (tokensAfter >= tokensBefore) return undefined;
    context.archive.put({
      kind: 'messages',
      content: [message],
      messageIds: [message.id],
      strategy: strategyName,
    });
    actions.push({
      type: 'strip-reasoning',
      strategy: strategyName,
      messageIds: [message.id],
      handle,
      tokensBefore,
      tokensAfter,
      description: `stripped ${removedTokens} tokens of reasoning from assistant message ${message.id}`,
    });
    return candidate;
  };
  return { messages: rewriteOldestFirst(messages, context, rewrite, end), actions, warnings: [] };
}

interface StrippedContent {
  /** The removed reasoning, joined, for counting. */
  removed: string;
  /** The new content with `stub` in place of the first removed piece. */
  build(stub: string): string | AssistantContentPart[];
}

/** The content without its reasoning, or undefined when it has none. */
export function stripMessageReasoning(content: string | AssistantContentPart[]): StrippedContent | undefined {
  if (typeof content === 'string') {
    const result = stripThinkingTags(content);
    if (result === undefined) return undefined;
    return {
      removed: result.removed.join('\n'),
      build: (stub) => (result.text === '' ? stub : `${stub}\n\n${result.text}`),
    };
  }
  const removed: string[] = [];
  const kept: Array<AssistantContentPart | undefined> = [];
  let stubAt = -1;
  for (const part of content) {
    if (part.type === 'reasoning') {
      removed.push(part.text);
      if (stubAt === -1) stubAt = kept.length;
      continue;
    }
    if (part.type === 'text') {
      const result = stripThinkingTags(part.text);
      if (result !== undefined) {
        removed.push(...result.removed);
        if (stubAt === -1) stubAt = kept.length;
        if (result.text !== '') kept.push({ ...part, text: result.text });
        continue;
      }
    }
    kept.push(part);
  }
  if (stubAt === -1) return undefined;
  return {
    removed: removed.join('\n'),
    build: (stub) => {
      const parts = kept.filter((part): part is AssistantContentPart => part !== undefined);
      parts.splice(stubAt, 0, { type: 'text', text: stub });
      return parts;
    },
  };
}

const thinkingSpan = /<(think|thinking)(?:\s[^<>]*)?>[\s\S]*?<\/\1\s*>/gi;
const closingTag = /<\/(?:think|thinking)\s*>/i;

/**
 * Removes `<think>…</think>` and `<thinking>…</thinking>` spans (any case, attributes allowed) outside code,
 * plus a leading span that has only its closing tag (models whose template opens the tag in the prompt).
 * Unclosed opening tags are left alone. Whitespace after a removed span goes with it.
 */
export function stripThinkingTags(text: string): { text: string; removed: string[] } | undefined {
  if (!/<\/?think/i.test(text)) return undefined;
  const code = codeRanges(text);
  const removed: string[] = [];
  const keptPieces: string[] = [];
  let cursor = 0;
  const orphan = closingTag.exec(text);
  if (orphan !== null && !/<think/i.test(text.slice(0, orphan.index))) {
    const end = orphan.index + orphan[0].length;
    if (!overlapsAny(code, 0, end)) {
      removed.push(text.slice(0, end));
      cursor = skipWhitespace(text, end);
    }
  }
  for (const match of text.matchAll(thinkingSpan)) {
    const start = match.index;
    const end = start + match[0].length;
    if (start < cursor || overlapsAny(code, start, end)) continue;
    keptPieces.push(text.slice(cursor, start));
    removed.push(match[0]);
    cursor = skipWhitespace(text, end);
  }
  if (removed.length === 0) return undefined;
  keptPieces.push(text.slice(cursor));
  return { text: keptPieces.join('').trim(), removed };
}

function skipWhitespace(text: string, from: number): number {
  let index = from;
  while (index < text.length && /\s/.test(text[index] ?? '')) index++;
  return index;
}
