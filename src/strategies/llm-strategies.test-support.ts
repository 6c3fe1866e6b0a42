import { expect } from 'vitest';
import type { IdentifiedMessage, Message } from '../messages/types.js';
import { type AnchoredSummary, parseAnchoredSummary } from '../summary/index.js';
import { createConversationBuilder } from '../testing/message-builders.js';

/** `lines` numbered lines that hold no fact, labelled with `label`: the bulk of a tool output. */
export function filler(label: string, lines: number, line = 'nothing interesting happens here'): string {
  return Array.from({ length: lines }, (_, index) => `${label} line ${index}: ${line}`).join('\n');
}

/** Options of {@link uploadSession}. */
export interface UploadSessionOptions {
  /**
   * The number of the first turn; above 0 the session continues an earlier one and leaves out the task.
   * @default 0
   */
  offset?: number;
  /**
   * Text put before every file the agent reads (a prompt injection, say).
   * @default no text
   */
  readOutputPrefix?: string;
}

/**
 * A coding session whose every turn holds facts a summary must keep: a decision with its reason, a file path,
 * a command with its error string, a constraint. Each turn's tool outputs are bulky, so folding them pays off.
 */
export function uploadSession(
  turns: number,
  { offset = 0, readOutputPrefix = '' }: UploadSessionOptions = {},
): Message[] {
  const bulk = (label: string) => filler(label, 60, 'nothing interesting happens here at all');
  const builder = createConversationBuilder().system('You are a coding agent.');
  if (offset === 0) builder.user('Fix the flaky upload in src/upload/chunker.ts.');
  for (let turn = offset; turn < offset + turns; turn++) {
    builder.assistant(
      `I decided to use a fixed chunk size of ${turn + 1} MiB because the server rejects larger parts.`,
    );
    builder.tools([
      {
        name: 'Read',
        input: { file_path: `src/upload/part-${turn}.ts` },
        output: `${readOutputPrefix}${bulk(`part ${turn}`)}`,
      },
    ]);
    builder.tools([
      {
        name: 'Bash',
        input: { command: `npm test -- upload-${turn}` },
        output: {
          type: 'error-text',
          value: `Error: ECONNRESET while uploading chunk ${turn}\n${bulk('log')}`,
        },
      },
    ]);
    builder.user(`Keep the retry count at ${turn + 3}.`);
  }
  builder.assistant('Next I will rerun the whole suite.');
  return builder.build();
}

/** The one summary message among `messages` and its anchored record; fails the test unless there is exactly one. */
export function soleSummary(messages: readonly IdentifiedMessage[]): {
  message: IdentifiedMessage;
  record: AnchoredSummary;
} {
  const summaries = messages.filter((message) => message.metadata?.origin === 'summary');
  expect(summaries).toHaveLength(1);
  const record = parseAnchoredSummary(summaries[0]!.metadata?.summary);
  expect(record).toBeDefined();
  return { message: summaries[0]!, record: record! };
}
