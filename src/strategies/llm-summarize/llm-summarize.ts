import { hashText } from '../../internal/hash.js';
import type { IdentifiedMessage } from '../../messages/types.js';
import {
  commitSummary,
  createFailureMemory,
  isSummaryMessage,
  type LlmSummaryOptions,
  minimumSummarizableChars,
  placeSpan,
  previousSummaryText,
  resolveLlmSummaryOptions,
  type SummarizerRun,
  SummaryFailure,
  spanChars,
  spanHandleOf,
  spanRecord,
  strategyWarning,
  summarizableRuns,
  summarizeBlocks,
  summaryFacts,
  transcriptBlocks,
} from '../llm-support.js';
import type { AsyncStrategy, AsyncStrategyContext, StrategyResult } from '../strategy.js';
import { checkStrategyInput } from '../strategy-support.js';

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
  const failures = createFailureMemory();
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
      if (context.accountant.countConversation(messages).totalTokens <= context.budgetTokens)
        return unchanged();
      const runs = summarizableRuns(messages, context, settings.preserveRecentMessages);
      // The run holding the most tokens: one summary should free as much as it can.
      const tokensOf = (run: (typeof runs)[number]) =>
        context.accountant.countConversation(messages.slice(run[0]!.start, run.at(-1)!.end)).totalTokens;
      const best = [...runs].sort((a, b) => tokensOf(b) - tokensOf(a))[0];
      if (best === undefined) return unchanged();
      const span = placeSpan(messages, best);
      if (span === undefined)
        return unchanged('no place for a summary message that keeps user/assistant alternation');
      const spanMessages = messages.slice(span.start, span.end);
      // Nothing new since the last summary, or too little to gain from one.
      if (spanMessages.every(isSummaryMessage) || spanChars(spanMessages) < minimumSummarizableChars)
        return unchanged();
      const key = hashText(spanMessages.map((message) => message.id).join('\n'));
      const failed = failures.reasonFor(key);
      if (failed !== undefined)
        return unchanged(
          `skipped: the summarizer already failed on this span (${failed}); the next strategy takes over`,
        );
      return summarizeSpan(messages, context, span, spanMessages).catch((error: unknown) => {
        if (!(error instanceof SummaryFailure)) throw error;
        failures.add(key, error.message);
        return unchanged(`${error.message}; nothing was committed, the next strategy takes over`);
      });
    },
  };

  async function summarizeSpan(
    messages: readonly IdentifiedMessage[],
    context: AsyncStrategyContext,
    span: NonNullable<ReturnType<typeof placeSpan>>,
    spanMessages: readonly IdentifiedMessage[],
  ): Promise<StrategyResult> {
    const run: SummarizerRun = { settings, context, calls: 0, redactions: [] };
    const spanHandle = spanHandleOf(spanMessages);
    const record = spanRecord(spanMessages, spanHandle);
    const facts = summaryFacts(record, settings.maxFactTokens, run);
    const previousSummary = previousSummaryText(spanMessages);
    const summaryText = await summarizeBlocks(run, {
      blocks: transcriptBlocks(messages, span.start, span.end),
      kind: previousSummary === undefined ? 'summarize' : 'progressive',
      ...(previousSummary === undefined ? {} : { previousSummary }),
      facts,
    });
    const result = commitSummary({
      strategy: strategyName,
      messages,
      span,
      summaryText,
      record,
      facts,
      spanHandle,
      run,
    });
    const tokensAfter = context.accountant.countConversation(result.messages).totalTokens;
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
