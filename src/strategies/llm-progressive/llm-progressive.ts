import type { IdentifiedMessage } from '../../messages/types.js';
import {
  createBoundedMemory,
  isSummaryMessage,
  type LlmSummaryOptions,
  placeSpan,
  resolveLlmSummaryOptions,
  SummaryFailure,
  summarizableRuns,
  summarizableSpanKey,
  summarizeSpan,
} from '../llm-support.js';
import type { AsyncStrategy, StrategyAction, StrategyResult, StrategyWarning } from '../strategy.js';
import {
  checkPositive,
  checkStrategyInput,
  type MessageGroup,
  strategyWarning,
} from '../strategy-support.js';

const strategyName = 'llm-progressive';

export interface LlmProgressiveOptions extends LlmSummaryOptions {
  /** Tokens of new messages folded into the summary per step (at least one whole turn). @default 8000 */
  blockTokens?: number;
  /** Steps (summarizer rounds) one apply may take. @default 8 */
  maxSteps?: number;
}

/**
 * Sliding-window compression: the oldest block of messages (about `blockTokens`, whole turns, a tool call
 * never parted from its results) is folded into the running summary, each new summary written from the
 * previous one plus the block, step after step until the budget holds. The summary is ONE message headed
 * `[PREVIOUS CONVERSATION SUMMARY - N messages]` (metadata origin `summary`); the prompt's preservation rules
 * ask for identifiers, numbers and error strings verbatim, decisions kept and nothing invented, and the
 * ledger's files, errors and commands are appended verbatim after each answer. Every block is archived and
 * its handle listed.
 *
 * The same safe failure as `llmSummarize`: a failed, empty, unparsable (retried once) or not-smaller summary
 * is never committed. Steps already committed stay (each is a valid, smaller conversation); the failing step
 * ends the apply with a `strategy-warning`, so the next strategy runs.
 */
export function llmProgressive(options: LlmProgressiveOptions): AsyncStrategy {
  const settings = resolveLlmSummaryOptions(options);
  const { blockTokens = 8000, maxSteps = 8 } = options;
  checkPositive('blockTokens', blockTokens);
  checkPositive('maxSteps', maxSteps);
  // Spans the summarizer already failed on, and why.
  const failures = createBoundedMemory<string>();
  return {
    name: strategyName,
    async: true,
    async apply(input, context) {
      checkStrategyInput(input);
      const { accountant, budgetTokens } = context;
      let messages: IdentifiedMessage[] = [...input];
      const actions: StrategyAction[] = [];
      const warnings: StrategyWarning[] = [];
      const done = (): StrategyResult => ({ messages, actions, warnings });
      for (let step = 0; step < maxSteps; step++) {
        if (accountant.countTotal(messages) <= budgetTokens) return done();
        const run = summarizableRuns(messages, context, settings.preserveRecentMessages)[0];
        if (run === undefined) return done();
        const block = oldestBlock(messages, run, blockTokens, (message) => accountant.countMessage(message));
        const span = placeSpan(messages, block);
        if (span === undefined) {
          warnings.push(
            strategyWarning(
              strategyName,
              'no place for a summary message that keeps user/assistant alternation',
            ),
          );
          return done();
        }
        const key = summarizableSpanKey(messages, span);
        if (key === undefined) return done();
        const failed = failures.get(key);
        if (failed !== undefined) {
          warnings.push(
            strategyWarning(
              strategyName,
              `skipped: the summarizer already failed on this block (${failed}); the next strategy takes over`,
            ),
          );
          return done();
        }
        try {
          const result = await summarizeSpan({ strategy: strategyName, settings, context, messages, span });
          messages = result.messages;
          actions.push(...result.actions);
        } catch (error) {
          if (!(error instanceof SummaryFailure)) throw error;
          failures.set(key, error.message);
          warnings.push(
            strategyWarning(
              strategyName,
              `${error.message}; this block was not committed, the next strategy takes over`,
            ),
          );
          return done();
        }
      }
      if (accountant.countTotal(messages) > budgetTokens)
        warnings.push(
          strategyWarning(
            strategyName,
            `still over budget after ${maxSteps} steps: the next strategy takes over`,
          ),
        );
      return done();
    },
  };
}

/**
 * The run's oldest groups: an earlier summary at its start (always, it is what the block is folded into), then
 * whole groups up to `blockTokens` of new messages (at least one group).
 */
function oldestBlock(
  messages: readonly IdentifiedMessage[],
  run: readonly MessageGroup[],
  blockTokens: number,
  count: (message: IdentifiedMessage) => number,
): MessageGroup[] {
  const block: MessageGroup[] = [];
  let tokens = 0;
  let fresh = 0;
  for (const group of run) {
    const members = messages.slice(group.start, group.end);
    const summary = members.every(isSummaryMessage);
    const groupTokens = summary ? 0 : members.reduce((sum, message) => sum + count(message), 0);
    if (!summary && fresh > 0 && tokens + groupTokens > blockTokens) break;
    block.push(group);
    tokens += groupTokens;
    if (!summary) fresh++;
  }
  return block;
}
