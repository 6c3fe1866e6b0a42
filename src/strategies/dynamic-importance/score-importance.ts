import { InvalidArgumentError, InvalidMessageError } from '../../errors/index.js';
import { describeValue, isRecord } from '../../internal/json-shapes.js';
import { messageText } from '../../messages/content.js';
import { assignIds } from '../../messages/ids.js';
import { type IdentifiedMessage, type Message, roles } from '../../messages/types.js';
import { createO200kCounter, type TokenCounter } from '../../tokens/index.js';
import { createHeuristicImportanceScorer, goalSourceIndex } from './heuristic-scorer.js';
import type {
  HeuristicImportanceScorer,
  ImportanceScorer,
  ImportanceScoring,
  LlmImportanceScorer,
} from './importance-levels.js';

export interface ScoreImportanceOptions {
  /** The current task goal. @default the last user request (or the first user message) */
  goal?: string;
  /** @default createHeuristicImportanceScorer() */
  scorer?: ImportanceScorer;
  /** Ids of messages not to score (they stay verbatim whatever their importance). @default none */
  preservedIds?: ReadonlySet<string>;
  /** Counts tokens for the LLM scorer's batches. @default the o200k counter */
  countTokens?: (text: string) => number;
  /** Stops the LLM scorer's calls. */
  abortSignal?: AbortSignal;
}

export interface ImportanceReport extends ImportanceScoring {
  /** The goal the messages were scored against. */
  goal: string;
  /** The scorer's name: `heuristic` or `llm:<client id>`. */
  scorer: string;
}

/**
 * @throws InvalidMessageError naming the message index and field when the input is not a message array
 */
function checkMessages(messages: unknown): asserts messages is readonly Message[] {
  if (!Array.isArray(messages))
    throw new InvalidMessageError(`expected an array of messages, got ${describeValue(messages)}`);
  messages.forEach((message: unknown, index) => {
    if (!isRecord(message))
      throw new InvalidMessageError(`expected a message object, got ${describeValue(message)}`, { index });
    if (!(roles as readonly unknown[]).includes(message.role))
      throw new InvalidMessageError(
        `expected a role (${roles.join(', ')}), got ${describeValue(message.role)}`,
        { index, path: 'role' },
      );
    if (typeof message.content !== 'string' && !Array.isArray(message.content))
      throw new InvalidMessageError(
        `expected string or array content, got ${describeValue(message.content)}`,
        {
          index,
          path: 'content',
        },
      );
    if (message.id !== undefined && (typeof message.id !== 'string' || message.id === ''))
      throw new InvalidMessageError(`expected a non-empty string id, got ${describeValue(message.id)}`, {
        index,
        path: 'id',
      });
  });
}

/** @throws InvalidArgumentError unless `scorer` is a heuristic or LLM importance scorer */
export function checkImportanceScorer(scorer: ImportanceScorer): void {
  if (
    typeof scorer !== 'object' ||
    scorer === null ||
    (scorer.type !== 'heuristic' && scorer.type !== 'llm') ||
    typeof scorer.score !== 'function'
  )
    throw new InvalidArgumentError(
      'scorer',
      `expected a heuristic or LLM importance scorer, got ${describeValue(scorer)}`,
    );
}

/**
 * The goal messages are scored against when none is given: the text of the last user request (acknowledgements
 * and go-aheads like "continue" do not count), else of the first user message; empty without user messages.
 */
export function importanceGoal(messages: readonly IdentifiedMessage[]): string {
  const index = goalSourceIndex(messages);
  return index === undefined ? '' : messageText(messages[index]!).trim();
}

/** Messages that are scored: not preserved, not system, not pinned, and not a stub, marker or summary. */
export function importanceCandidates(
  messages: readonly IdentifiedMessage[],
  preservedIds: ReadonlySet<string>,
): number[] {
  const candidates: number[] = [];
  messages.forEach((message, index) => {
    const origin = message.metadata?.origin;
    if (
      message.role === 'system' ||
      message.metadata?.pinned === true ||
      origin === 'summary' ||
      origin === 'stub' ||
      preservedIds.has(message.id)
    )
      return;
    candidates.push(index);
  });
  return candidates;
}

let sharedCounter: TokenCounter | undefined;

/**
 * Scores each message that is not preserved (nor a system message, pinned, a stub or a summary) as critical /
 * high / medium / low / droppable with a reason, against the current goal. With the heuristic scorer (the
 * default) the result comes back synchronously; with an LLM scorer (`createLlmImportanceScorer`) it is a promise,
 * and whatever the LLM could not score is scored by the heuristic, with a warning. Messages without ids get
 * them as `assignIds` does.
 *
 * @throws InvalidMessageError naming the message index and field when the input is not a message array
 * @throws InvalidArgumentError when `goal` or `scorer` is malformed
 */
export function scoreImportance(
  messages: readonly Message[],
  options?: ScoreImportanceOptions & { scorer?: HeuristicImportanceScorer },
): ImportanceReport;
export function scoreImportance(
  messages: readonly Message[],
  options: ScoreImportanceOptions & { scorer: LlmImportanceScorer },
): Promise<ImportanceReport>;
export function scoreImportance(
  messages: readonly Message[],
  options?: ScoreImportanceOptions,
): ImportanceReport | Promise<ImportanceReport>;
export function scoreImportance(
  messages: readonly Message[],
  options: ScoreImportanceOptions = {},
): ImportanceReport | Promise<ImportanceReport> {
  checkMessages(messages);
  const { goal, scorer = createHeuristicImportanceScorer(), preservedIds = new Set(), abortSignal } = options;
  if (goal !== undefined && typeof goal !== 'string')
    throw new InvalidArgumentError('goal', `expected a string, got ${describeValue(goal)}`);
  checkImportanceScorer(scorer);
  const identified = assignIds(messages);
  const resolvedGoal = goal ?? importanceGoal(identified);
  const input = {
    messages: identified,
    candidates: importanceCandidates(identified, preservedIds),
    goal: resolvedGoal,
  };
  const report = (scoring: ImportanceScoring): ImportanceReport => ({
    ...scoring,
    goal: resolvedGoal,
    scorer: scorer.name,
  });
  if (scorer.type === 'heuristic') return report(scorer.score(input));
  const countTokens =
    options.countTokens ??
    ((text: string) => {
      sharedCounter ??= createO200kCounter();
      return sharedCounter.count(text);
    });
  return scorer
    .score(input, { countTokens, ...(abortSignal === undefined ? {} : { abortSignal }) })
    .then(report);
}
