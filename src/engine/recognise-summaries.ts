/**
 * Summaries precis wrote, known again by their text. A summary's record lives in its message's metadata, and
 * metadata does not survive a trip through OpenAI or Anthropic messages (an agent that stores its conversation
 * in its provider's format, the CLI's `--to openai`). Unrecognised, the next compaction took the summary for the
 * agent's prose: sentence selection cut it, then a fold summarised the summary, keeping only what its own
 * extraction found in it (on 60 sessions compacted to 20% and again to 10% after such a trip: 196 probes passed,
 * against 271 when the metadata stayed).
 */

import type { Message, MessageMetadata } from '../messages/types.js';
import { parseLlmSummaryText } from '../strategies/llm-support.js';
import { anchoredSummaryToJson, parseRenderedSummary } from '../summary/index.js';

/**
 * `messages` with every user or assistant message whose whole text is a summary precis wrote (a rendered anchored
 * summary, or an LLM strategy's) marked as the summary it is (`origin: 'summary'`, its handle, its record read
 * back from the text, and for an LLM's its text and message count); its content is left as it is. The same array
 * when there is none (the usual case costs a prefix check or two per message).
 */
export function withRecognisedSummaries<T extends Message>(messages: readonly T[]): readonly T[] {
  let output: T[] | undefined;
  messages.forEach((message, index) => {
    const recognised = recognisedSummary(message);
    if (recognised === undefined) return;
    output ??= [...messages];
    output[index] = recognised;
  });
  return output ?? messages;
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
