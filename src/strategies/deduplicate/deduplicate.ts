import { InvalidArgumentError } from '../../errors/index.js';
import { systemPromptLength, toolOutputText } from '../../messages/content.js';
import type {
  IdentifiedMessage,
  JSONValue,
  Part,
  TextPart,
  ToolResultOutput,
  ToolResultPart,
} from '../../messages/types.js';
import type { Strategy, StrategyAction, StrategyContext, StrategyResult } from '../strategy.js';
import { checkShare, recentTurnsStart } from '../strategy-support.js';
import { findNearDuplicates } from './find-near-duplicates.js';

export interface DeduplicateOptions {
  /** Tool outputs and text parts shorter than this are never candidates (a stub would save little). @default 200 */
  minTokens?: number;
  /** Estimated Jaccard similarity of word 5-shingles from which two outputs count as near-duplicates. @default 0.9 */
  similarity?: number;
  /**
   * Messages of the last this many turns (a turn starts at a user message or at an assistant message after
   * tool results) are never stubbed, though older copies may point at them. The latest copy is always kept,
   * so nothing is lost by default.
   * @default 0
   */
  keepRecentTurns?: number;
}

const strategyName = 'deduplicate';

/** A candidate: one tool output or text part of one message. */
interface Candidate {
  messageIndex: number;
  /** Index in the message's content array; -1 for string content. */
  partIndex: number;
  kind: 'tool-output' | 'text';
  text: string;
  /** What the text was read from: the message for string content, else the part. */
  source: object;
  group: string;
  toolName?: string;
}

/**
 * Near-duplicate tool outputs and long text parts (the same file read three times, the same test log re-run):
 * every earlier copy becomes a stub pointing at the latest copy, which is kept because it is the freshest state.
 * Exact copies (whitespace-normalised) match across tools; near copies only within the same tool (text parts
 * with text parts). Preserved and pinned messages and the last `keepRecentTurns` turns are never stubbed, but
 * older copies may point at them. Stubs are applied largest first and stop once the conversation fits the
 * budget.
 */
export function deduplicate(options: DeduplicateOptions = {}): Strategy {
  const { minTokens = 200, similarity = 0.9, keepRecentTurns = 0 } = options;
  if (!(Number.isFinite(minTokens) && minTokens >= 0))
    throw new InvalidArgumentError('minTokens', `must be a non-negative number, got ${minTokens}`);
  checkShare('similarity', similarity);
  if (!(Number.isInteger(keepRecentTurns) && keepRecentTurns >= 0))
    throw new InvalidArgumentError(
      'keepRecentTurns',
      `must be a non-negative integer, got ${keepRecentTurns}`,
    );
  return {
    name: strategyName,
    apply: (messages, context) =>
      applyDeduplicate(messages, context, { minTokens, similarity, keepRecentTurns }),
  };
}

function applyDeduplicate(
  messages: readonly IdentifiedMessage[],
  context: StrategyContext,
  options: Required<DeduplicateOptions>,
): StrategyResult {
  const unchanged: StrategyResult = { messages: [...messages], actions: [], warnings: [] };
  const candidates = collectCandidates(messages, options.minTokens);
  if (candidates.length < 2) return unchanged;

  const recentStart = recentTurnsStart(messages, options.keepRecentTurns);
  const protectedIndexes: number[] = [];
  candidates.forEach((candidate, index) => {
    const message = messages[candidate.messageIndex] as IdentifiedMessage;
    if (candidate.messageIndex >= recentStart || isPreserved(message, context)) protectedIndexes.push(index);
  });
  const found = findNearDuplicates(
    candidates.map((candidate) => candidate.text),
    {
      similarity: options.similarity,
      groups: candidates.map((candidate) => candidate.group),
      protectedIndexes,
      sources: candidates.map((candidate) => candidate.source),
    },
  );
  // The length filter is cheap; the exact token floor is checked only for what would be stubbed.
  const stubs = found
    .map((duplicate) => ({
      ...duplicate,
      tokens: context.accountant.countText((candidates[duplicate.index] as Candidate).text),
    }))
    .filter((duplicate) => duplicate.tokens >= options.minTokens)
    .sort((left, right) => right.tokens - left.tokens || left.index - right.index);
  if (stubs.length === 0) return unchanged;

  let total = context.accountant.countTotal(messages);
  const output = [...messages];
  const actions: StrategyAction[] = [];
  for (const stub of stubs) {
    if (total <= context.budgetTokens) break;
    const candidate = candidates[stub.index] as Candidate;
    const kept = candidates[stub.duplicateOf] as Candidate;
    const current = output[candidate.messageIndex] as IdentifiedMessage;
    const keptId = (messages[kept.messageIndex] as IdentifiedMessage).id;
    const percent = stub.similarity === 1 ? 100 : Math.min(99, Math.round(stub.similarity * 100));
    const original = originalOf(current, candidate);
    const handle = context.archive.put({
      kind: candidate.kind,
      content: original,
      messageIds: [current.id],
      strategy: strategyName,
    });
    const what = candidate.kind === 'tool-output' ? 'the tool output' : 'the text';
    const stubText = `[duplicate of ${what} in message ${keptId} (${percent}% similar, ${stub.tokens} tokens), archived: ${handle}]`;
    const replaced = replaceCandidate(current, candidate, stubText);
    const tokensBefore = context.accountant.countMessage(current);
    const tokensAfter = context.accountant.countMessage(replaced);
    if (tokensAfter >= tokensBefore) continue;
    output[candidate.messageIndex] = replaced;
    total += tokensAfter - tokensBefore;
    actions.push({
      type: 'stub-duplicate',
      strategy: strategyName,
      messageIds: [current.id],
      handle,
      tokensBefore,
      tokensAfter,
      description: `${candidate.toolName === undefined ? 'text' : `${candidate.toolName} output`} duplicates message ${keptId} (${percent}% similar): ${stub.tokens} tokens stubbed`,
    });
  }
  return { messages: output, actions, warnings: [] };
}

function isPreserved(message: IdentifiedMessage, context: StrategyContext): boolean {
  return context.preservedIds.has(message.id) || message.metadata?.pinned === true;
}

/** Outputs whose whole content is text the model reads; media and denials are left alone. */
function isTextualOutput(output: ToolResultOutput): boolean {
  if (output.type === 'execution-denied') return false;
  if (output.type === 'content') return output.value.every((item) => item.type === 'text');
  return true;
}

function collectCandidates(messages: readonly IdentifiedMessage[], minTokens: number): Candidate[] {
  const candidates: Candidate[] = [];
  // A token is at least one character for nearly all text: shorter texts cannot reach the token floor.
  const long = (text: string) => text.length >= minTokens && text.trim() !== '';
  const systemPrompt = systemPromptLength(messages);
  messages.forEach((message, messageIndex) => {
    if (messageIndex < systemPrompt) return;
    if (typeof message.content === 'string') {
      // A later system message (a session banner) is compared with other system messages only.
      const group = message.role === 'system' ? 'system' : 'text';
      if (long(message.content))
        candidates.push({
          messageIndex,
          partIndex: -1,
          kind: 'text',
          text: message.content,
          source: message,
          group,
        });
      return;
    }
    (message.content as readonly Part[]).forEach((part, partIndex) => {
      if (part.type === 'tool-result' && isTextualOutput(part.output)) {
        const text = toolOutputText(part.output);
        if (long(text))
          candidates.push({
            messageIndex,
            partIndex,
            kind: 'tool-output',
            text,
            source: part,
            group: `tool:${part.toolName}`,
            toolName: part.toolName,
          });
      } else if (part.type === 'text' && message.role !== 'tool' && long(part.text)) {
        candidates.push({
          messageIndex,
          partIndex,
          kind: 'text',
          text: part.text,
          source: part,
          group: 'text',
        });
      }
    });
  });
  return candidates;
}

function originalOf(message: IdentifiedMessage, candidate: Candidate): JSONValue {
  if (candidate.partIndex < 0) return message.content as string;
  const part = (message.content as readonly Part[])[candidate.partIndex] as TextPart | ToolResultPart;
  return part.type === 'text' ? part.text : (part.output as unknown as JSONValue);
}

function replaceCandidate(
  message: IdentifiedMessage,
  candidate: Candidate,
  stubText: string,
): IdentifiedMessage {
  if (candidate.partIndex < 0) return { ...message, content: stubText } as IdentifiedMessage;
  const content = [...(message.content as readonly Part[])];
  const part = content[candidate.partIndex] as TextPart | ToolResultPart;
  if (part.type === 'text') content[candidate.partIndex] = { ...part, text: stubText };
  else {
    const isError = part.output.type === 'error-text' || part.output.type === 'error-json';
    content[candidate.partIndex] = {
      ...part,
      output: { type: isError ? 'error-text' : 'text', value: stubText },
    };
  }
  return { ...message, content } as IdentifiedMessage;
}
