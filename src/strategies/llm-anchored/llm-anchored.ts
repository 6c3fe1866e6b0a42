import { InvalidArgumentError } from '../../errors/index.js';
import { hashText } from '../../internal/hash.js';
import { describeValue } from '../../internal/json-shapes.js';
import { codeSpan } from '../../ledger/index.js';
import { messageText } from '../../messages/content.js';
import type { IdentifiedMessage } from '../../messages/types.js';
import {
  type AnchoredSummary,
  anchoredSummaryToJson,
  conversationLines,
  parseAnchoredSummary,
  renderAnchoredSummary,
} from '../../summary/index.js';
import {
  type FoldIntoSummaryOptions,
  foldIntoSummary,
  keptTaskIntentChars,
} from '../fold-into-summary/fold-into-summary.js';
import {
  callSummarizerJson,
  createBoundedMemory,
  describeRun,
  isSummaryMessage,
  type LlmSummaryOptions,
  packBlocks,
  promptTokens,
  resolveLlmSummaryOptions,
  type SummarizerRun,
  SummaryFailure,
  transcriptBlocks,
  usableWindow,
} from '../llm-support.js';
import type { AsyncStrategy, AsyncStrategyContext, StrategyAction, StrategyResult } from '../strategy.js';
import { checkShare, checkStrategyInput, strategyWarning } from '../strategy-support.js';
import {
  type AnchoredSections,
  buildAnchoredSectionsPrompt,
  combineAnchoredSections,
  readAnchoredSections,
  withAnchoredSections,
} from './anchored-sections.js';

const strategyName = 'llm-anchored';

export interface LlmAnchoredOptions
  extends FoldIntoSummaryOptions,
    Pick<
      LlmSummaryOptions,
      'client' | 'summarizerWindowTokens' | 'timeoutMs' | 'redact' | 'baseURL' | 'maxCalls'
    > {
  /** Cap on one reply (the sections of one span, as JSON), in tokens. @default 1500 */
  maxOutputTokens?: number;
}

/** Open tasks of the summary so far shown to the LLM, so it can report one finished under the same text. */
const maxKnownTasks = 30;
/** Spans whose sections are remembered, so the engine's repeated passes do not ask again. */
const rememberedSpans = 32;

/**
 * `foldIntoSummary` with an LLM writing the prose: the oldest turns are dropped and folded into the ONE anchored
 * summary exactly as there (the same span, the same deterministic record, the same archive entries), and the LLM
 * fills the prose sections (intent, constraints, decisions with their rationale, errors and their fixes, failed
 * approaches, current state, tasks done and pending, next steps) for the newly folded span only, as JSON
 * checked against `anchoredSectionsSchema`. Its items are merged into the record with `mergeAnchoredSummary`
 * (`withAnchoredSections`): earlier content stays first, and a task once done never turns back to open. Files,
 * errors, commands and code lines come from the ledger verbatim, never from the LLM.
 *
 * The summary text is rendered from the merged record in the room the fold's text had; when that would hide a
 * ledger line the deterministic text shows, the deterministic text is kept (the LLM's items stay in the record,
 * for later merges). So the LLM path never shows fewer ledger facts than `foldIntoSummary`.
 *
 * The span goes to the LLM as fenced data it is told not to follow, secrets redacted unless the endpoint is
 * local, in parts when it exceeds the summarizer's window (the parts' sections are concatenated). When the fold
 * does not reach the budget, the LLM is not asked (the engine relaxes preservation and runs the strategy again).
 *
 * Safe failure: when the LLM call fails or its reply is unusable (retried once), the result is the
 * deterministic fold, exactly as `foldIntoSummary` returns it, with a `strategy-warning`; a span that failed is
 * not sent again by the same instance.
 *
 * @throws InvalidArgumentError naming the option that is missing or out of range
 */
export function llmAnchored(options: LlmAnchoredOptions): AsyncStrategy {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', `expected an options object, got ${describeValue(options)}`);
  const {
    client,
    summarizerWindowTokens,
    timeoutMs,
    redact,
    baseURL,
    maxCalls,
    maxOutputTokens = 1500,
    ...foldOptions
  } = options;
  const settings = resolveLlmSummaryOptions({
    client,
    maxOutputTokens,
    ...(summarizerWindowTokens === undefined ? {} : { summarizerWindowTokens }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(redact === undefined ? {} : { redact }),
    ...(baseURL === undefined ? {} : { baseURL }),
    ...(maxCalls === undefined ? {} : { maxCalls }),
  });
  checkFoldOptions(foldOptions);
  const { maxSummaryShare = 0.65 } = foldOptions;
  // Spans the LLM already failed on, and why.
  const failures = createBoundedMemory<string>();
  const remembered = createBoundedMemory<AnchoredSections>(rememberedSpans);

  return {
    name: strategyName,
    async: true,
    async apply(messages, context) {
      checkStrategyInput(messages);
      const { accountant, budgetTokens } = context;
      if (accountant.countTotal(messages) <= budgetTokens)
        return { messages: [...messages], actions: [], warnings: [] };
      // The deterministic fold, for real: its span, record and archive entries are the LLM path's too.
      const spans = new Map<string, IdentifiedMessage[]>();
      const fold = foldIntoSummary(foldOptions, {
        name: strategyName,
        extendRecord: (span, record) => {
          spans.set(idsKey(span), [...span]);
          return record;
        },
      });
      const result = fold.apply(messages, context);
      const action = foldAction(result);
      const span = action === undefined ? undefined : spans.get(action.messageIds.slice(1).join('\n'));
      const summaryIndex =
        action === undefined
          ? -1
          : result.messages.findIndex((message) => message.id === action.messageIds[0]);
      if (action === undefined || span === undefined || span.length === 0 || summaryIndex === -1)
        return result;
      const warn = (reason: string): StrategyResult => {
        result.warnings.push(
          strategyWarning(
            strategyName,
            `${reason}; folded the span with the deterministic record instead (nothing from the LLM was committed)`,
          ),
        );
        return result;
      };
      // Over budget even after the fold, the engine relaxes preservation and folds again, or gives up: prose
      // for a span that will not be committed is not worth a call.
      if (accountant.countTotal(result.messages) > budgetTokens)
        return warn('the fold does not reach the budget here, so the LLM was not asked');

      const key = hashText(idsKey(span));
      let sections = remembered.get(key);
      let run: SummarizerRun | undefined;
      if (sections === undefined) {
        const failed = failures.get(key);
        if (failed !== undefined) return warn(`the LLM already failed on this span (${failed})`);
        run = { settings, context, calls: 0, redactions: [] };
        try {
          sections = await sectionsOf(run, span, knownTasks(messages));
        } catch (error) {
          if (!(error instanceof SummaryFailure)) throw error;
          failures.set(key, error.message);
          return warn(error.message);
        }
        remembered.set(key, sections);
      }

      const summaryMessage = result.messages[summaryIndex]!;
      const record = parseAnchoredSummary(summaryMessage.metadata?.summary);
      if (record === undefined) return warn('the folded summary has no record to extend');
      const merged = withAnchoredSections(record, sections);
      const taskKept = firstTaskKept(messages, result.messages);
      const text = summaryText({
        record,
        sections,
        deterministicText: messageText(summaryMessage),
        messages: result.messages,
        summaryIndex,
        context,
        summaryCap: Math.floor(budgetTokens * maxSummaryShare),
        taskKept,
        // The one handle the fold's header names (its index).
        indexHandle:
          typeof summaryMessage.metadata?.handle === 'string' ? summaryMessage.metadata.handle : undefined,
      });
      const replaced = {
        ...summaryMessage,
        content: text.text,
        metadata: { ...summaryMessage.metadata, summary: anchoredSummaryToJson(merged) },
      } as IdentifiedMessage;
      result.messages[summaryIndex] = replaced;
      action.tokensAfter = accountant.countMessage(replaced);
      const calls = run === undefined ? 'sections remembered from an earlier pass' : describeRun(run);
      action.description += `; prose sections by ${client.id} (${calls})${
        text.shown ? '' : '; kept in the record only: shown, they would have hidden ledger facts'
      }`;
      return result;
    },
  };
}

function idsKey(messages: readonly IdentifiedMessage[]): string {
  return messages.map((message) => message.id).join('\n');
}

/** Whether the first user task, whose intent the summary does not repeat while it is still there, was kept. */
function firstTaskKept(input: readonly IdentifiedMessage[], output: readonly IdentifiedMessage[]): boolean {
  const firstTask = input.find(
    (message) =>
      message.role === 'user' &&
      message.metadata?.origin !== 'stub' &&
      message.metadata?.origin !== 'summary',
  );
  return firstTask !== undefined && output.some((message) => message.id === firstTask.id);
}

interface SummaryTextInput {
  /** The deterministic record, as the fold committed it. */
  record: AnchoredSummary;
  sections: AnchoredSections;
  deterministicText: string;
  messages: readonly IdentifiedMessage[];
  summaryIndex: number;
  context: AsyncStrategyContext;
  summaryCap: number;
  taskKept: boolean;
  /** The handle the header names (see `putIndex`). */
  indexHandle: string | undefined;
}

/** Items per section of the LLM's shown in the text, most first: fewer leave more room for the ledger's. */
const shownItemLimits = [Number.POSITIVE_INFINITY, 3, 1];

/**
 * The record with the LLM's sections rendered in the room the deterministic text had (at most `summaryCap`,
 * the conversation within budget), with as many of the LLM's items per section as hide no ledger fact the
 * deterministic text shows; the deterministic text when even one item each would.
 */
function summaryText(input: SummaryTextInput): { text: string; shown: boolean } {
  for (const limit of shownItemLimits) {
    const text = renderWithin(
      input,
      withAnchoredSections(input.record, limitSections(input.sections, limit)),
    );
    if (text !== undefined) return { text, shown: true };
  }
  return { text: input.deterministicText, shown: false };
}

function limitSections(sections: AnchoredSections, limit: number): AnchoredSections {
  return {
    intent: sections.intent,
    constraints: sections.constraints.slice(0, limit),
    decisions: sections.decisions.slice(0, limit),
    errorsAndFixes: sections.errorsAndFixes.slice(0, limit),
    failedApproaches: sections.failedApproaches.slice(0, limit),
    currentState: sections.currentState.slice(0, limit),
    tasks: sections.tasks.slice(0, limit),
    nextSteps: sections.nextSteps.slice(0, limit),
  };
}

/** `merged` rendered to fit, or undefined when that does not fit or hides a ledger fact the deterministic text shows. */
function renderWithin(input: SummaryTextInput, merged: AnchoredSummary): string | undefined {
  const { deterministicText, messages, summaryIndex, context, summaryCap, taskKept, indexHandle } = input;
  const { accountant, budgetTokens } = context;
  const target = messages[summaryIndex]!;
  const withText = (content: string) =>
    messages.map((message, index) =>
      index === summaryIndex ? ({ ...target, content } as IdentifiedMessage) : message,
    );
  const rest = accountant.countTotal(withText(''));
  let maxTokens = Math.max(1, Math.min(summaryCap, budgetTokens - rest));
  // As the fold rendered it: without the lines the messages around the summary show.
  const lines = conversationLines(messages.filter((_, index) => index !== summaryIndex));
  const render = () =>
    renderAnchoredSummary(merged, {
      maxTokens,
      conversationLines: lines,
      ...(taskKept ? { maxIntentChars: keptTaskIntentChars } : {}),
      ...(indexHandle === undefined ? {} : { indexHandle }),
    });
  let text = render();
  for (let attempt = 0; attempt < 6; attempt++) {
    const over = accountant.countTotal(withText(text)) - budgetTokens;
    if (over <= 0 || maxTokens <= 1) break;
    maxTokens = Math.max(1, maxTokens - over - 4);
    text = render();
  }
  const fits = accountant.countTotal(withText(text)) <= budgetTokens;
  const hidden = ledgerLines(merged).some((line) => deterministicText.includes(line) && !text.includes(line));
  return fits && !hidden ? text : undefined;
}

/**
 * The record's ledger facts (files, errors, commands) as they appear in a rendered summary. Code lines and
 * excerpts are left out: they are verbatim too, but the room the LLM's prose takes comes from them.
 */
function ledgerLines(record: AnchoredSummary): string[] {
  return [
    ...record.files.map((file) => `- ${codeSpan(file.path)} ${file.status}`),
    ...[...record.errors, ...record.commands].map((item) => `- ${item}`),
  ];
}

function checkFoldOptions(options: FoldIntoSummaryOptions): void {
  const { maxSummaryShare, maxIntentChars } = options;
  if (maxSummaryShare !== undefined) checkShare('maxSummaryShare', maxSummaryShare);
  if (
    maxIntentChars !== undefined &&
    !(typeof maxIntentChars === 'number' && Number.isInteger(maxIntentChars) && maxIntentChars > 0)
  )
    throw new InvalidArgumentError(
      'maxIntentChars',
      `expected a positive integer, got ${describeValue(maxIntentChars)}`,
    );
}

/** The fold's own action (the summary built or merged), which lists the summary and the folded messages. */
function foldAction(result: StrategyResult): StrategyAction | undefined {
  return result.actions.find(
    (action) =>
      action.strategy === strategyName && (action.type === 'fold-summary' || action.type === 'merge-summary'),
  );
}

/** Open tasks of the existing summary, newest last, at most `maxKnownTasks`. */
function knownTasks(messages: readonly IdentifiedMessage[]): string[] {
  const existing = messages.find(isSummaryMessage);
  const record = parseAnchoredSummary(existing?.metadata?.summary);
  if (record === undefined) return [];
  return record.tasks
    .filter((task) => !task.done)
    .map((task) => task.text)
    .slice(-maxKnownTasks);
}

/**
 * The LLM's sections for `span`: one call when the transcript fits the summarizer's window, otherwise one per
 * part that fits, concatenated.
 *
 * @throws SummaryFailure when a call fails, a reply is unusable twice, or more than `maxCalls` calls are needed
 */
async function sectionsOf(
  run: SummarizerRun,
  span: readonly IdentifiedMessage[],
  tasks: readonly string[],
): Promise<AnchoredSections> {
  const { settings } = run;
  const blocks = transcriptBlocks(span, 0, span.length);
  if (blocks.length === 0) throw new SummaryFailure('the span holds no transcript to describe');
  const output = settings.maxOutputTokens;
  const empty = buildAnchoredSectionsPrompt({
    transcript: '',
    knownTasks: tasks,
    part: { index: 99, count: 99 },
    redact: false,
  });
  const room = usableWindow(settings) - promptTokens(run, empty) - output - 8;
  if (room < 64) throw new SummaryFailure("the summarizer's window leaves no room for the transcript");
  const packs = packBlocks(blocks, room, run);
  let sections: AnchoredSections | undefined;
  for (const [index, pack] of packs.entries()) {
    const prompt = buildAnchoredSectionsPrompt({
      transcript: pack.join('\n\n'),
      knownTasks: tasks,
      redact: settings.redact,
      ...(packs.length === 1 ? {} : { part: { index: index + 1, count: packs.length } }),
    });
    const part = await callSummarizerJson(
      run,
      prompt,
      output,
      readAnchoredSections,
      'the reply held no anchored sections',
    );
    sections = sections === undefined ? part : combineAnchoredSections(sections, part);
  }
  return sections!;
}
