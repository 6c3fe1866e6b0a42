/**
 * Summaries precis wrote, known again by their text. A summary's record lives in its message's metadata, and
 * metadata does not survive a trip through OpenAI or Anthropic messages (an agent that stores its conversation
 * in its provider's format, the CLI's `--to openai`). Unrecognised, the next compaction took the summary for the
 * agent's prose: sentence selection cut it, then a fold summarised the summary, keeping only what its own
 * extraction found in it (on 60 sessions compacted to 20% and again to 10% after such a trip: 196 probes passed,
 * against 271 when the metadata stayed).
 */

import type { IdentifiedMessage, Message, MessageMetadata } from '../messages/types.js';
import { parseLlmSummaryText } from '../strategies/llm-support.js';
import type { StrategyAction } from '../strategies/strategy.js';
import { type AnchoredSummary, anchoredSummaryToJson, parseRenderedSummary } from '../summary/index.js';

/** The strategy name of the engine's `recognise-summary` actions. */
export const recogniseStrategyName = 'recognise-summaries';

/**
 * `messages` with every user or assistant message whose whole text is a summary precis wrote (a rendered anchored
 * summary, or an LLM strategy's) marked as the summary it is (`origin: 'summary'`, its handle, its record read
 * back from the text, and for an LLM's its text and message count); its content is left as it is. `recognised`
 * maps each marked message (a new object) to the record read back; `messages` is the same array when there is
 * none (the usual case costs each parser's header check per message).
 */
export function withRecognisedSummaries<T extends Message>(
  messages: readonly T[],
): { messages: readonly T[]; recognised: ReadonlyMap<T, AnchoredSummary> } {
  let output: T[] | undefined;
  const recognised = new Map<T, AnchoredSummary>();
  messages.forEach((message, index) => {
    const text = wholeText(message);
    const summary = text === undefined ? undefined : summaryOf(text);
    if (summary === undefined) return;
    const marked = { ...message, metadata: { ...message.metadata, ...summary.metadata } };
    output ??= [...messages];
    output[index] = marked;
    recognised.set(marked, summary.record);
  });
  return { messages: output ?? messages, recognised };
}

/**
 * The report's action for a summary `withRecognisedSummaries` marked, now `message` (with its id), whose `record`
 * it read back. It names no handle: it archived nothing (the handle the summary names is in its description).
 */
export function recognitionAction(
  message: IdentifiedMessage,
  record: AnchoredSummary,
  tokens: number,
): StrategyAction {
  const handle = message.metadata?.handle;
  const holds = [
    `${record.messageCount} earlier messages, ${record.files.length} files`,
    ...(typeof handle === 'string' ? [`archived: ${handle}`] : []),
  ];
  return {
    type: 'recognise-summary',
    strategy: recogniseStrategyName,
    messageIds: [message.id],
    tokensBefore: tokens,
    tokensAfter: tokens,
    description: `read a summary back from its text, its metadata gone (${holds.join('; ')}): later folds merge into it`,
  };
}

/** The text of a user or assistant message that is text alone and not a summary already. */
function wholeText(message: Message): string | undefined {
  if ((message.role !== 'user' && message.role !== 'assistant') || message.metadata?.origin === 'summary')
    return undefined;
  const { content } = message;
  if (typeof content === 'string') return content;
  return content.length === 1 && content[0]!.type === 'text' ? content[0]!.text : undefined;
}

/**
 * The summary `text` is, with the metadata the strategy that wrote it set; undefined when it is none. A rendered
 * summary must read back whole (a message that only starts like one is left alone); an LLM's text is free, so its
 * header alone says what it is.
 */
function summaryOf(text: string): { metadata: MessageMetadata; record: AnchoredSummary } | undefined {
  const rendered = parseRenderedSummary(text);
  if (rendered !== undefined) {
    const handle = rendered.handles[0];
    return {
      record: rendered,
      metadata: {
        origin: 'summary',
        ...(handle === undefined ? {} : { handle }),
        summary: anchoredSummaryToJson(rendered),
      },
    };
  }
  const written = parseLlmSummaryText(text);
  if (written === undefined) return undefined;
  const { handle, record } = written;
  return {
    record,
    metadata: {
      origin: 'summary',
      ...(handle === undefined ? {} : { handle, handles: [handle] }),
      summarizedMessageCount: written.messageCount,
      summaryText: written.summaryText,
      summary: anchoredSummaryToJson(record),
    },
  };
}
