import type { IdentifiedMessage } from '../../messages/types.js';
import {
  createBoundedMemory,
  type LlmSummaryOptions,
  type PlacedSpan,
  placeSpan,
  resolveLlmSummaryOptions,
  SummaryFailure,
  summarizableRuns,
  summarizableSpanKey,
  summarizeSpan,
} from '../llm-support.js';
import type { AsyncStrategy, AsyncStrategyContext, StrategyResult } from '../strategy.js';
import { checkStrategyInput, strategyWarning } from '../strategy-support.js';

const strategyName = 'llm-summarize';

export type LlmSummarizeOptions = LlmSummaryOptions;

/**
 * The classic compaction agent: an LLM summarizes the older part of the conversation into ONE clearly marked
 * message (`[PREVIOUS CONVERSATION SUMMARY - N messages]`, metadata origin `summary`). System messages,
 * preserved and pinned messages and the last `preserveRecentMessages` messages stay; the span is the largest
 * run of whole turns between them (a tool call is never parted from its results), and an earlier summary in
 * it is incorporated. Spans under 200 characters are left alone. A span larger than the summarizer's window
 * is summarized in parts, then the parts' summaries are combined; every request fits the window.
 *
 * The transcript goes to the summarizer as fenced data it is told not to follow, with secrets redacted (by
 * default unless the endpoint is local). After it answers, the ledger's files, errors and commands are
 * appended verbatim, so they cannot be paraphrased away; the originals are archived and their handles listed.
 *
 * Safe failure: a failed call, an empty or unparsable reply (retried once), or a summary not smaller than
 * the span is never committed; the messages come back unchanged with a `strategy-warning`, so the next
 * (deterministic) strategy runs: put `foldIntoSummary()` after this one. One summary per apply: when it does
 * not bring the conversation under budget, the strategy returns (with a warning) instead of summarizing
 * again, and a span it already failed on is not sent again by the same instance.
 */
export function llmSummarize(options: LlmSummarizeOptions): AsyncStrategy {
  const settings = resolveLlmSummaryOptions(options);
  // Spans the summarizer already failed on, and why.
  const failures = createBoundedMemory<string>();
  return {
    name: strategyName,
    async: true,
    async apply(messages, context) {
      checkStrategyInput(messages);
      const unchanged = (warning?: string): StrategyResult => ({
        messages: [...messages],
        actions: [],
        warnings: warning === undefined ? [] : [strategyWarning(strategyName, warning)],
      });
      if (context.accountant.countTotal(messages) <= context.budgetTokens) return unchanged();
      const runs = summarizableRuns(messages, context, settings.preserveRecentMessages);
      // The run holding the most tokens (the first of equals): one summary should free as much as it can.
      let best: (typeof runs)[number] | undefined;
      let bestTokens = -1;
      for (const run of runs) {
        const tokens = context.accountant.countTotal(messages.slice(run[0]!.start, run.at(-1)!.end));
        if (tokens > bestTokens) {
          best = run;
          bestTokens = tokens;
        }
      }
      if (best === undefined) return unchanged();
      const span = placeSpan(messages, best);
      if (span === undefined)
        return unchanged('no place for a summary message that keeps user/assistant alternation');
      const key = summarizableSpanKey(messages, span);
      if (key === undefined) return unchanged();
      const failed = failures.get(key);
      if (failed !== undefined)
        return unchanged(
          `skipped: the summarizer already failed on this span (${failed}); the next strategy takes over`,
        );
      return summarizeOnce(messages, context, span).catch((error: unknown) => {
        if (!(error instanceof SummaryFailure)) throw error;
        failures.set(key, error.message);
        return unchanged(`${error.message}; nothing was committed, the next strategy takes over`);
      });
    },
  };

  async function summarizeOnce(
    messages: readonly IdentifiedMessage[],
    context: AsyncStrategyContext,
    span: PlacedSpan,
  ): Promise<StrategyResult> {
    const result = await summarizeSpan({ strategy: strategyName, settings, context, messages, span });
    const tokensAfter = context.accountant.countTotal(result.messages);
    // Loop guard: one summary per apply; what is still over budget is the next strategy's.
    if (tokensAfter > context.budgetTokens)
      result.warnings.push(
        strategyWarning(
          strategyName,
          `still over budget after the summary (${tokensAfter} > ${context.budgetTokens} tokens): not summarizing again, the next strategy takes over`,
        ),
      );
    return result;
  }
}
