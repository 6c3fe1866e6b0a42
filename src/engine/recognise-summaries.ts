/**
 * Summaries precis wrote, known again by their text. A summary's record lives in its message's metadata, and
 * metadata does not survive a trip through OpenAI or Anthropic messages (an agent that stores its conversation
 * in its provider's format, the CLI's `--to openai`). Unrecognised, the next compaction took the summary for the
 * agent's prose: sentence selection cut it, then a fold summarised the summary, keeping only what its own
 * extraction found in it (on 60 sessions compacted to 20% and again to 10% after such a trip: 196 probes passed,
 * against 271 when the metadata stayed).
 */

import type { Message } from '../messages/types.js';
import { anchoredSummaryToJson, parseRenderedSummary } from '../summary/index.js';

/**
 * `messages` with every user or assistant message whose whole text is a rendered anchored summary marked as the
 * summary it is (`origin: 'summary'`, its handle, its record read back from the text); its content is left as it
 * is. The same array when there is none (the usual case costs one prefix check per message).
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
  if (text === undefined || !text.startsWith('[precis summary of ')) return undefined;
  const record = parseRenderedSummary(text);
  if (record === undefined) return undefined;
  const handle = record.handles[0];
  return {
    ...message,
    metadata: {
      ...message.metadata,
      origin: 'summary',
      ...(handle === undefined ? {} : { handle }),
      summary: anchoredSummaryToJson(record),
    },
  };
}
