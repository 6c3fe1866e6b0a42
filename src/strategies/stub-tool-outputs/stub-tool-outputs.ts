import { type ArchiveStore, archiveHandle } from '../../archive/archive-store.js';
import { toolCallsOf, toolOutputText } from '../../messages/content.js';
import type {
  IdentifiedMessage,
  JSONValue,
  Part,
  ToolCallPart,
  ToolResultOutput,
  ToolResultPart,
} from '../../messages/types.js';
import { keepHeadAndTail, trimmedTextHandle, trimmedTextMarkerPattern } from '../head-and-tail.js';
import type { Strategy, StrategyAction, StrategyContext, StrategyResult } from '../strategy.js';
import { checkCount, checkStrategyInput, createRunningTotal, recentTurnsStart } from '../strategy-support.js';
import { toolOutputGist } from './tool-output-gist.js';

export interface StubToolOutputsOptions {
  /** Outputs with fewer tokens than this stay whole. @default 500 */
  minTokens?: number;
  /** Turns at the end of the conversation whose outputs stay whole. @default 2 */
  keepRecentTurns?: number;
}

const strategyName = 'stub-tool-outputs';
/** How every stub starts; outputs that already read like this are never stubbed again. */
export const toolOutputStubPrefix = '[tool output archived: ';

/**
 * Replaces large tool outputs older than the last `keepRecentTurns` turns with a stub,
 * `[tool output archived: <handle> · <tokens> tokens · <gist>]` (see `toolOutputGist`), archiving the
 * original output (`tool-output`). The tool result keeps its call id and tool name; an error output stays an
 * error (`error-text`), anything else becomes `text`. Execution-denied outputs are left alone (they are short).
 *
 * Does nothing when the conversation is within budget; otherwise stubs the largest outputs first (the oldest
 * first among equals) and stops as soon as the budget holds. The text output that brings the conversation within
 * budget keeps its first and last lines in the room its stub would leave, when that is 150 tokens or more (a
 * `trim-tool-output` action; the middle is a marker naming the archived original). Preserved messages are
 * skipped. Output size is counted on the output's text, so an output of images alone is never a candidate.
 */
export function stubToolOutputs(options: StubToolOutputsOptions = {}): Strategy {
  const { minTokens = 500, keepRecentTurns = 2 } = options;
  checkCount('minTokens', minTokens);
  checkCount('keepRecentTurns', keepRecentTurns);
  return {
    name: strategyName,
    apply(messages, context) {
      checkStrategyInput(messages);
      return applyStubToolOutputs(messages, context, minTokens, keepRecentTurns);
    },
  };
}

interface Candidate {
  messageIndex: number;
  partIndex: number;
  part: ToolResultPart;
  tokens: number;
}

function applyStubToolOutputs(
  messages: readonly IdentifiedMessage[],
  context: StrategyContext,
  minTokens: number,
  keepRecentTurns: number,
): StrategyResult {
  const output = [...messages];
  const actions: StrategyAction[] = [];
  const total = createRunningTotal(messages, context);
  if (total.withinBudget()) return { messages: output, actions, warnings: [] };

  const calls = new Map<string, ToolCallPart>();
  for (const message of messages) {
    for (const call of toolCallsOf(message))
      if (!calls.has(call.toolCallId)) calls.set(call.toolCallId, call);
  }
  const candidates: Candidate[] = [];
  const end = recentTurnsStart(messages, keepRecentTurns);
  for (let messageIndex = 0; messageIndex < end; messageIndex++) {
    const message = messages[messageIndex];
    if (message === undefined || typeof message.content === 'string') continue;
    if (message.role !== 'tool' && message.role !== 'assistant') continue;
    if (context.preservedIds.has(message.id)) continue;
    (message.content as readonly Part[]).forEach((part, partIndex) => {
      if (part.type !== 'tool-result' || part.output.type === 'execution-denied') return;
      const text = toolOutputText(part.output);
      if (text.startsWith(toolOutputStubPrefix)) return;
      const tokens = context.accountant.countText(text);
      if (tokens >= minTokens && tokens > 0) candidates.push({ messageIndex, partIndex, part, tokens });
    });
  }
  candidates.sort(
    (a, b) => b.tokens - a.tokens || a.messageIndex - b.messageIndex || a.partIndex - b.partIndex,
  );

  for (const candidate of candidates) {
    if (total.withinBudget()) break;
    const { messageIndex, partIndex, part, tokens } = candidate;
    const current = output[messageIndex];
    if (current === undefined || typeof current.content === 'string') continue;
    const { stub, handle, gist, archived } = toolOutputStubOf(
      part,
      current.id,
      calls.get(part.toolCallId),
      tokens,
      context,
    );
    const stubTokens = context.accountant.countText(stub.value);
    if (stubTokens >= tokens) continue;
    const withOutput = (replacement: ToolResultOutput) => {
      const content = [...(current.content as Part[])];
      content[partIndex] = { ...part, output: replacement };
      return { ...current, content } as IdentifiedMessage;
    };
    // The output that brings the conversation within budget keeps its first and last lines in the room a stub
    // would leave unused.
    const trimmed = trimmedWithin(part.output, tokens, handle, context, (replacement) => {
      if (replacement === undefined) return total.totalTokens;
      const replaced = withOutput(replacement);
      return (
        total.totalTokens -
        context.accountant.countMessage(current) +
        context.accountant.countMessage(replaced)
      );
    });
    const replacement = trimmed?.output ?? stub;
    const replaced = withOutput(replacement);
    if (!archived)
      context.archive.put({
        kind: 'tool-output',
        content: part.output as unknown as JSONValue,
        messageIds: [current.id],
        strategy: strategyName,
      });
    output[messageIndex] = replaced;
    total.replace(current, replaced);
    actions.push(
      trimmed === undefined
        ? {
            type: 'stub-tool-output',
            strategy: strategyName,
            messageIds: [current.id],
            handle,
            tokensBefore: tokens,
            tokensAfter: stubTokens,
            description: `stubbed the ${tokens}-token output of ${part.toolName} (${part.toolCallId}): ${gist}`,
          }
        : {
            type: 'trim-tool-output',
            strategy: strategyName,
            messageIds: [current.id],
            handle,
            tokensBefore: tokens,
            tokensAfter: trimmed.tokens,
            description: `kept the first and last lines of the ${tokens}-token output of ${part.toolName} (${part.toolCallId}) in the room left: ${tokens} → ${trimmed.tokens} tokens`,
          },
    );
  }
  return { messages: output, actions, warnings: [] };
}

/**
 * The stub of tool result `part` of message `messageId` (`tokens`: its output's count), with its handle and gist.
 * An output trimmed already (its middle archived behind a marker) is stubbed as its original: the stub names the
 * original's handle and size, so expanding it, or a fold restoring it, gets the whole output back, and `archived`
 * says the original is in the archive already (nothing to put).
 */
export function toolOutputStubOf(
  part: ToolResultPart,
  messageId: string,
  call: ToolCallPart | undefined,
  tokens: number,
  context: StrategyContext,
): { stub: ReturnType<typeof toolOutputStub>; handle: string; gist: string; archived: boolean } {
  const trimmedFrom = trimmedOriginal(part.output, messageId, context.archive);
  const original = trimmedFrom?.content ?? part.output;
  const handle = trimmedFrom?.handle ?? archiveHandle('tool-output', part.output as unknown as JSONValue);
  const gist = toolOutputGist(call, original);
  const originalTokens =
    trimmedFrom === undefined ? tokens : context.accountant.countText(toolOutputText(original));
  return {
    stub: toolOutputStub(handle, originalTokens, gist, part.output),
    handle,
    gist,
    archived: trimmedFrom !== undefined,
  };
}

/**
 * The archived original of an output of message `messageId` trimmed already (its middle behind a marker), when
 * the archive has it: a stub of the output names that original, not the trimmed text.
 */
export function trimmedOriginal(
  output: ToolResultOutput,
  messageId: string,
  archive: ArchiveStore,
): { handle: string; content: ToolResultOutput } | undefined {
  if (output.type === 'json' || output.type === 'error-json') return undefined;
  const handle = trimmedTextHandle(toolOutputText(output));
  const entry = handle === undefined ? undefined : archive.get(handle);
  // A marker the output only quotes (a file holding a compacted transcript, say) names another message's original.
  if (entry?.kind !== 'tool-output' || !entry.messageIds.includes(messageId)) return undefined;
  return { handle: entry.handle, content: entry.content as unknown as ToolResultOutput };
}

/** Tokens of an output's head and tail worth keeping instead of a stub: fewer say little more than its gist. */
const minTrimmedOutputTokens = 150;

/**
 * A text output cut to its first and last lines so that the conversation just meets the budget
 * (`totalWith(output)` is the conversation's total with it, `totalWith(undefined)` as it stands), or undefined
 * when the room left is too small to be worth it or the output is not plain text (JSON and content outputs are
 * stubbed whole).
 */
function trimmedWithin(
  output: ToolResultOutput,
  tokens: number,
  handle: string,
  context: StrategyContext,
  totalWith: (output: ToolResultOutput | undefined) => number,
): { output: ToolResultOutput; tokens: number } | undefined {
  if (output.type !== 'text' && output.type !== 'error-text') return undefined;
  // The message around the output costs what it did: the room is what the budget leaves of the output's tokens.
  let room = tokens - (totalWith(undefined) - context.budgetTokens);
  // A text trimmed already (the engine's last-turn trim) is stubbed whole: markers do not nest.
  if (room < minTrimmedOutputTokens || trimmedTextMarkerPattern.test(output.value)) return undefined;
  const count = (text: string) => context.accountant.countText(text);
  // The pieces' counts only estimate the cut text's: aim lower until the whole fits.
  for (let attempt = 0; attempt < 3 && room >= minTrimmedOutputTokens; attempt++) {
    const text = keepHeadAndTail(output.value, room, handle, count);
    if (text === undefined) return undefined;
    const trimmed = { type: output.type, value: text } as const;
    const over = totalWith(trimmed) - context.budgetTokens;
    if (over <= 0) return { output: trimmed, tokens: count(text) };
    room -= over + 8;
  }
  return undefined;
}

/** The stub output: `error-text` for an error output, `text` otherwise. */
export function toolOutputStub(
  handle: string,
  tokens: number,
  gist: string,
  original: ToolResultOutput,
): { type: 'text' | 'error-text'; value: string } {
  const isError = original.type === 'error-text' || original.type === 'error-json';
  return {
    type: isError ? 'error-text' : 'text',
    value: `${toolOutputStubPrefix}${handle} · ${tokens} tokens · ${gist}]`,
  };
}
