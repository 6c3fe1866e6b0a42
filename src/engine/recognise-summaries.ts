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
import { anchoredSummaryToJson, parseAnchoredSummary, parseRenderedSummary } from '../summary/index.js';

/** The strategy name of the engine's `recognise-summary` actions. */
export const recogniseStrategyName = 'recognise-summaries';

/**
 * `messages` with every user or assistant message whose whole text is a summary precis wrote (a rendered anchored
 * summary, or an LLM strategy's) marked as the summary it is (`origin: 'summary'`, its handle, its record read
 * back from the text, and for an LLM's its text and message count); its content is left as it is. `recognised`
 * holds the marked messages (new objects); `messages` is the same array when there is none (the usual case costs
 * a prefix check or two per message).
 */
export function withRecognisedSummaries<T extends Message>(
  messages: readonly T[],
): { messages: readonly T[]; recognised: ReadonlySet<T> } {
  let output: T[] | undefined;
  const recognised = new Set<T>();
  messages.forEach((message, index) => {
    const summary = recognisedSummary(message);
    if (summary === undefined) return;
    output ??= [...messages];
    output[index] = summary;
    recognised.add(summary);
  });
  return { messages: output ?? messages, recognised };
}

/**
 * The report's action for a summary `withRecognisedSummaries` marked, now `message` (with its id). It names no
 * handle: it archived nothing (the handle the summary names is in its description).
 */
export function recognitionAction(message: IdentifiedMessage, tokens: number): StrategyAction {
  const handle = message.metadata?.handle;
  const record = parseAnchoredSummary(message.metadata?.summary);
  const holds = [
    ...(record === undefined
      ? []
      : [`${record.messageCount} earlier messages, ${record.files.length} files`]),
    ...(typeof handle === 'string' ? [`archived: ${handle}`] : []),
  ];
  return {
    type: 'recognise-summary',
    strategy: recogniseStrategyName,
    messageIds: [message.id],
    tokensBefore: tokens,
    tokensAfter: tokens,
    description: `read a summary back from its text, its metadata gone${holds.length === 0 ? '' : ` (${holds.join('; ')})`}: later folds merge into it`,
  };
}

function recognisedSummary<T extends Message>(message: T): T | undefined {
  if ((message.role !== 'user' && message.role !== 'assistant') || message.metadata?.origin === 'summary')
    return undefined;
  const { content } = message;
  const text =
    typeof content === 'string'
      ? content
      : content.length === 1 && content[0]!.type === 'text'
        ? content[0]!.text
        : undefined;
  if (text === undefined) return undefined;
  const metadata = summaryMetadataOf(text);
  return metadata === undefined ? undefined : { ...message, metadata: { ...message.metadata, ...metadata } };
}

/** The metadata of the summary `text` is, as the strategy that wrote it set it; undefined when it is none. */
function summaryMetadataOf(text: string): MessageMetadata | undefined {
  // A rendered summary must read back whole (a message that only starts like one is left alone); an LLM's text
  // is free, so its header alone says what it is.
  if (text.startsWith('[precis summary of ')) {
    const record = parseRenderedSummary(text);
    if (record === undefined) return undefined;
    const handle = record.handles[0];
    return {
      origin: 'summary',
      ...(handle === undefined ? {} : { handle }),
      summary: anchoredSummaryToJson(record),
    };
  }
  const written = text.startsWith('[PREVIOUS CONVERSATION SUMMARY - ')
    ? parseLlmSummaryText(text)
    : undefined;
  if (written === undefined) return undefined;
  const { handle } = written;
  return {
    origin: 'summary',
    ...(handle === undefined ? {} : { handle, handles: [handle] }),
    summarizedMessageCount: written.messageCount,
    summaryText: written.summaryText,
    summary: anchoredSummaryToJson(written.record),
  };
}
