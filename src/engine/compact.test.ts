import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { richConversation } from '../../test/strategy-invariants.js';
import { propertyRuns } from '../../test/support/property-runs.js';
import { type ArchiveStore, createMemoryArchive } from '../archive/archive-store.js';
import { isPrecisError } from '../errors/index.js';
import { stringLeaves } from '../internal/json-strings.js';
import { messageText, requestOnly, toolOutputText } from '../messages/content.js';
import { fromAnthropic, toAnthropic } from '../messages/convert/anthropic.js';
import { fromOpenAI, toOpenAI } from '../messages/convert/openai.js';
import { assignIds } from '../messages/ids.js';
import type { Conversation, IdentifiedMessage, Message, Part, ToolResultOutput } from '../messages/types.js';
import { repairMessages, validateMessages } from '../messages/validate/index.js';
import { foldIntoSummary } from '../strategies/fold-into-summary/fold-into-summary.js';
import type { AsyncStrategy, Strategy } from '../strategies/strategy.js';
import {
  demonstrationStubPrefix,
  preambleStubPrefix,
} from '../strategies/stub-demonstrations/stub-demonstrations.js';
import { parseAnchoredSummary } from '../summary/index.js';
import { createConversationBuilder } from '../testing/message-builders.js';
import { createTokenAccountant } from '../tokens/index.js';
import { type CompactOptions, type CompactResult, compact, compactAsync } from './compact.js';
import { defaultStrategies } from './named-strategies.js';
import { preservedMessageIds, recentTurnsThatFit } from './preservation.js';
import { trimStrategyName } from './trim-last-turn.js';

/** The engine's trim of a long output in the last turn (stub-tool-outputs trims the output that meets the budget too). */
const isLastTurnTrim = (action: { type: string; strategy: string }) =>
  action.type === 'trim-tool-output' && action.strategy === trimStrategyName;

const accountant = createTokenAccountant();

const example: Conversation = fromOpenAI(
  JSON.parse(
    readFileSync(
      new URL('../../examples/transcripts/fix-retry-backoff.openai.json', import.meta.url),
      'utf8',
    ),
  ),
);

function logLines(seed: number, lines: number): string {
  return Array.from(
    { length: lines },
    (_, line) =>
      `src/module${seed}.ts:${line}: check ${line} of run ${seed} passed with value ${line * seed}`,
  ).join('\n');
}

/** An agent session: one task, many tool calls with large outputs, a few assistant notes. */
function agentSession(steps = 12): Message[] {
  const builder = createConversationBuilder()
    .system('You are a coding agent. Use the tools to inspect and change the repository.')
    .user('Fix the flaky retry test in src/retry.ts; keep the public API unchanged.');
  for (let step = 0; step < steps; step++) {
    builder.tools(
      [
        { name: 'bash', input: { command: `npm test -- --run ${step}` }, output: logLines(step, 60) },
        {
          name: 'read_file',
          input: { path: `src/module${step}.ts` },
          output:
            step % 3 === 0
              ? { type: 'error-text', value: `Error: ENOENT src/module${step}.ts` }
              : logLines(step + 100, 30),
        },
      ],
      `Step ${step}: checking the test output and the module source.`,
    );
  }
  builder.assistant('The retry loop exits one attempt early; I changed `<` to `<=` in src/retry.ts.');
  builder.user('Good. Now run the whole suite once more.');
  builder.tools([{ name: 'bash', input: { command: 'npm test' }, output: logLines(999, 20) }]);
  builder.assistant('All tests pass.');
  return builder.build();
}

const countOf = (messages: readonly Message[]) => accountant.countConversation(messages).totalTokens;

function run(input: Conversation | Message[], options: Partial<CompactOptions> & { budgetTokens: number }) {
  const archive = options.archive ?? createMemoryArchive();
  return { archive, result: compact(input, { accountant, ...options, archive }) };
}

/**
 * Every handle in the report is in the archive, and what it holds comes from the input (as the engine's first
 * repair left it: a placeholder result for a call without one) or an earlier original.
 */
function expectHandlesExpand(input: readonly Message[], result: CompactResult, archive: ArchiveStore): void {
  const originals = [...assignIds(input), ...assignIds(repairMessages(input).messages)];
  const byId = new Map(originals.map((message) => [message.id, JSON.stringify(message)]));
  const archived: string[] = [];
  for (const action of result.report.actions) {
    if (action.handle === undefined) continue;
    const entry = archive.get(action.handle);
    expect(entry, action.handle).toBeDefined();
    if (entry === undefined) continue;
    archived.push(JSON.stringify(entry.content));
  }
  for (const action of result.report.actions) {
    if (action.handle === undefined) continue;
    const entry = archive.get(action.handle)!;
    const sources = [...entry.messageIds.map((id) => byId.get(id) ?? ''), ...archived];
    if (entry.kind === 'messages') {
      for (const message of entry.content as IdentifiedMessage[]) {
        // The message is the input's, or an earlier strategy's version of it (whose original is archived).
        expect(byId.has(message.id) || message.metadata?.origin === 'stub').toBe(true);
      }
    } else {
      const content = JSON.stringify(entry.content);
      const inner = typeof entry.content === 'string' ? JSON.stringify(entry.content).slice(1, -1) : content;
      expect(sources.some((source) => source.includes(inner))).toBe(true);
    }
  }
}

/** Checks the preservation the result reports it used (the configured one unless it was relaxed). */
function expectPreservedIdentical(
  input: readonly Message[],
  result: CompactResult,
  keepRecentTurns = result.report.relaxedPreservation?.keepRecentTurns ?? 2,
  preserveFirstUserMessage = result.report.relaxedPreservation?.preserveFirstUserMessage ?? true,
): void {
  const originals = assignIds(input);
  const preserved = preservedMessageIds(originals, { keepRecentTurns, preserveFirstUserMessage });
  const output = new Map(result.messages.map((message) => [message.id, message]));
  const trimmed = new Set(
    result.report.actions
      .filter((action) => action.type === 'trim-tool-output' || action.type === 'trim-tool-input')
      .flatMap((action) => action.messageIds),
  );
  for (const message of originals) {
    if (!preserved.has(message.id)) continue;
    const kept = output.get(message.id)!;
    if (JSON.stringify(kept) === JSON.stringify(message)) continue;
    if (trimmed.has(message.id)) {
      expectTrimmedOutputsOf(message, kept);
      continue;
    }
    // Only what a framework put before the request (an example, notes) may be archived, behind one stub.
    expect(message.metadata?.requestPart).toBeGreaterThan(0);
    expect(kept.metadata?.requestPart).toBe(1);
    expect(JSON.stringify((kept.content as Part[])[0])).toContain(preambleStubPrefix);
    expect(JSON.stringify(requestOnly(kept).content)).toBe(JSON.stringify(requestOnly(message).content));
  }
}

/**
 * `kept` is `original` but for tool outputs and tool-call arguments of the last turn trimmed to their first and
 * last lines: each changed text (of an output, its text; of a JSON output, its JSON text; of a content output,
 * a text item; of a call, a string argument) is a prefix of the original's, the marker naming the archived
 * original, and a suffix of the original's.
 */
function expectTrimmedOutputsOf(original: Message, kept: Message): void {
  const keptParts = kept.content as Part[];
  const originalParts = original.content as Part[];
  expect(keptParts).toHaveLength(originalParts.length);
  keptParts.forEach((part, index) => {
    const before = originalParts[index]!;
    if (JSON.stringify(part) === JSON.stringify(before)) return;
    // The texts that changed, each beside the original it came from.
    let pairs: Array<[string, string]>;
    if (part.type === 'tool-result' && before.type === 'tool-result') {
      expect({ ...part, output: undefined }).toEqual({ ...before, output: undefined });
      if (part.output.type === 'content' && before.output.type === 'content') {
        const items = before.output.value;
        expect(part.output.value.map((item) => item.type)).toEqual(items.map((item) => item.type));
        pairs = part.output.value.flatMap((item, itemIndex): Array<[string, string]> => {
          const from = items[itemIndex]!;
          return item.type === 'text' && from.type === 'text' && item.text !== from.text
            ? [[item.text, from.text]]
            : [];
        });
      } else pairs = [[toolOutputText(part.output), toolOutputText(before.output)]];
    } else if (part.type === 'tool-call' && before.type === 'tool-call') {
      expect({ ...part, input: undefined }).toEqual({ ...before, input: undefined });
      // Strings of the input changed in place: the same leaves, at the same paths.
      const keptLeaves = stringLeaves(part.input);
      const originalLeaves = stringLeaves(before.input);
      expect(keptLeaves.map((leaf) => leaf.path)).toEqual(originalLeaves.map((leaf) => leaf.path));
      pairs = keptLeaves.flatMap(
        (leaf, leafIndex): Array<[string, string]> =>
          leaf.text === originalLeaves[leafIndex]!.text ? [] : [[leaf.text, originalLeaves[leafIndex]!.text]],
      );
    } else throw new Error('only tool outputs and tool-call arguments are trimmed');
    expect(pairs.length).toBeGreaterThan(0);
    for (const [value, originalValue] of pairs) {
      const match =
        /^([\s\S]*?)\n?\[… \d+ (?:lines?|characters?) of this (?:output|argument) archived: h-[0-9a-f]+ …\]\n?([\s\S]*)$/.exec(
          value,
        );
      expect(match, value).not.toBeNull();
      expect(originalValue.startsWith(match![1]!)).toBe(true);
      expect(originalValue.endsWith(match![2]!)).toBe(true);
    }
  });
}

/**
 * The agent is about to read a long test log (`log`): the last turn is one tool call and its output. The budget
 * is a little below that turn alone.
 */
function readingALongLog(log: string | ToolResultOutput): { input: Message[]; budgetTokens: number } {
  const input = createConversationBuilder()
    .system('You are a coding agent.')
    .user('Fix the flaky retry test in src/retry.ts.')
    .tools([{ name: 'bash', input: { command: 'npm test' }, output: logLines(7, 10) }], 'Running the tests.')
    .tools([{ name: 'bash', input: { command: 'npm test -- --verbose' }, output: log }])
    .build();
  const ids = assignIds(input);
  const lastTurn = preservedMessageIds(ids, { keepRecentTurns: 1, preserveFirstUserMessage: false });
  return { input, budgetTokens: countOf(ids.filter((message) => lastTurn.has(message.id))) - 10 };
}

/**
 * Compacts `input` under `budgetTokens` and checks what every last-turn trim must hold: the budget met with the
 * configured preservation, exactly one trim of `type`, the preserved messages identical but for it, handles that
 * expand, and nothing left to do on a second run. Returns the result, its archive and the trim.
 */
function compactWithOneTrim(
  input: Message[],
  budgetTokens: number,
  type: 'trim-tool-output' | 'trim-tool-input',
): { result: CompactResult; archive: ArchiveStore; trim: CompactResult['report']['actions'][number] } {
  const { result, archive } = run(input, { budgetTokens });
  expect(result.report.withinBudget).toBe(true);
  // The task and the last turn stay: only the long text's middle went.
  expect(result.report.relaxedPreservation).toBeUndefined();
  const trims = result.report.actions.filter(
    (action) => action.type === type && action.strategy === trimStrategyName,
  );
  expect(trims).toHaveLength(1);
  expectPreservedIdentical(input, result);
  expectHandlesExpand(input, result, archive);
  // Compacting again changes nothing (a trimmed text is not trimmed again).
  const again = compact(result.messages, { accountant, budgetTokens, archive });
  expect(again.messages).toEqual(result.messages);
  expect(again.report.actions).toEqual([]);
  return { result, archive, trim: trims[0]! };
}

describe('compact', () => {
  it('meets a feasible budget on an agent session with one task and keeps preserved messages', () => {
    const input = agentSession();
    const before = countOf(input);
    for (const ratio of [0.5, 0.25, 0.1]) {
      const budgetTokens = Math.floor(before * ratio);
      const { result, archive } = run(input, { budgetTokens });
      expect(result.report.tokensBefore).toBe(before);
      expect(result.report.withinBudget).toBe(true);
      expect(result.report.tokensAfter).toBe(countOf(result.messages));
      expect(result.report.tokensAfter).toBeLessThanOrEqual(budgetTokens);
      expect(result.warnings.filter((warning) => warning.type === 'compact-warning')).toEqual([]);
      expect(validateMessages(result.messages).issues).toEqual([]);
      expectPreservedIdentical(input, result);
      expectHandlesExpand(input, result, archive);
      expect(result.report.actions.length).toBeGreaterThan(0);
    }
  });

  it('does nothing to a conversation already within budget', () => {
    const input = agentSession(2);
    const { result } = run(input, { budgetTokens: countOf(input) });
    expect(result.messages).toEqual(assignIds(input));
    expect(result.report.strategies).toEqual([]);
    expect(result.report.actions).toEqual([]);
  });

  it('leaves a call awaiting its result alone with allowPendingToolCalls, within budget and over it', () => {
    const pendingStep: Message = {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Removing the stale build output (needs your approval).' },
        {
          type: 'tool-call',
          toolCallId: 'call-pending',
          toolName: 'bash',
          input: { command: 'rm -rf build' },
        },
      ],
    };
    const input: Message[] = [
      ...agentSession(),
      { role: 'user', content: 'Also clean the build output.' },
      pendingStep,
    ];
    const pending = { allowPendingToolCalls: true };
    const results = (messages: readonly Message[]) =>
      messages.flatMap((message) =>
        typeof message.content === 'string'
          ? []
          : (message.content as Part[]).filter((part) => part.type === 'tool-result'),
      );

    // By default the call is answered with a placeholder (the result is ready to send); allowed, nothing changes.
    const answered = run(input, { budgetTokens: countOf(input) + 100 }).result;
    expect(answered.report.repairs.map((repair) => repair.type)).toEqual(['add-missing-tool-result']);
    expect(results(answered.messages).some((part) => part.toolCallId === 'call-pending')).toBe(true);
    const within = run(input, { budgetTokens: countOf(input), ...pending }).result;
    expect(within.messages).toEqual(assignIds(input));
    expect(within.report.repairs).toEqual([]);

    for (const ratio of [0.25, 0.1]) {
      const budgetTokens = Math.floor(countOf(input) * ratio);
      const { result } = run(input, { budgetTokens, ...pending });
      expect(result.report.withinBudget).toBe(true);
      expect(result.report.repairs).toEqual([]);
      expect(result.messages.at(-1)).toEqual({ ...pendingStep, id: assignIds(input).at(-1)!.id });
      expect(results(result.messages).some((part) => part.toolCallId === 'call-pending')).toBe(false);
      expect(validateMessages(result.messages, { allowPendingToolCalls: true }).issues).toEqual([]);
    }
  });

  it('runs the strategies in order and stops once the budget holds', () => {
    const input = agentSession();
    const { result } = run(input, { budgetTokens: Math.floor(countOf(input) * 0.6) });
    const names = result.report.strategies.map((strategy) => strategy.name);
    expect(names.at(-1)).toBe('stub-tool-outputs');
    expect(names).not.toContain('drop-oldest-turns');
    for (const strategy of result.report.strategies)
      expect(strategy.tokensAfter).toBeLessThanOrEqual(strategy.tokensBefore);
  });

  it.each([0.1, 0.25])('compacts the example transcript to %s of its tokens, valid for OpenAI', (ratio) => {
    const before = accountant.countConversation(example).totalTokens;
    const budgetTokens = Math.floor(before * ratio);
    const { result, archive } = run(example, { budgetTokens, provider: 'openai' });
    expect(result.report.withinBudget).toBe(true);
    expect(accountant.countConversation(result.conversation).totalTokens).toBeLessThanOrEqual(budgetTokens);
    expect(validateMessages(result.messages, { provider: 'openai' }).issues).toEqual([]);
    expectPreservedIdentical(example.messages, result);
    expectHandlesExpand(example.messages, result, archive);
  });

  it('repairs for Anthropic and reports the repairs', () => {
    const input: Message[] = [
      { role: 'assistant', content: 'I will start by reading the file.' },
      ...agentSession(6).slice(1),
    ];
    const { result } = run(input, { budgetTokens: Math.floor(countOf(input) * 0.3), provider: 'anthropic' });
    expect(validateMessages(result.messages, { provider: 'anthropic' }).issues).toEqual([]);
    expect(result.report.repairs.length).toBeGreaterThan(0);
    expect(result.report.withinBudget).toBe(true);
  });

  it('preserves the system prompt, not a later system message (an importer banner goes with its turn)', () => {
    const banner = 'Session restarted at 11:43; model gpt-4o, repository with 6,158 files.';
    const builder = createConversationBuilder()
      .system('You are a coding agent.')
      .user('Fix the flaky retry test in src/retry.ts.');
    for (let attempt = 0; attempt < 4; attempt++) {
      builder.tools([
        { name: 'bash', input: { command: `npm test -- ${attempt}` }, output: logLines(attempt, 80) },
      ]);
      builder.assistant(`Attempt ${attempt} did not fix it.`);
      builder.system(`${banner} Attempt ${attempt + 1}.`);
      builder.user(`Try again, attempt ${attempt + 1}.`);
    }
    builder.tools([{ name: 'bash', input: { command: 'npm test' }, output: logLines(9, 20) }]);
    const input = builder.build();
    const ids = assignIds(input);
    const banners = ids.filter((message, index) => index > 0 && message.role === 'system');
    const preserved = preservedMessageIds(ids, { keepRecentTurns: 2, preserveFirstUserMessage: true });
    expect(preserved.has(ids[0]!.id)).toBe(true);
    expect(preserved.has(banners[0]!.id)).toBe(false);

    const budgetTokens = Math.floor(countOf(input) * 0.05);
    const { result, archive } = run(input, { budgetTokens, provider: 'openai' });
    expect(result.report.withinBudget).toBe(true);
    expect(result.messages[0]).toEqual(ids[0]);
    expect(validateMessages(result.messages, { provider: 'openai' }).issues).toEqual([]);
    expectHandlesExpand(input, result, archive);
    const droppedIds = new Set(result.report.actions.flatMap((action) => action.messageIds));
    expect(banners.some((message) => droppedIds.has(message.id))).toBe(true);
    expect(result.messages.filter((message) => message.role === 'system').length).toBeLessThan(
      banners.length + 1,
    );

    // Anthropic takes system messages only up front: moved there, the banners are the system prompt.
    const anthropic = run(input, { budgetTokens, provider: 'anthropic' }).result;
    expect(anthropic.messages.slice(0, 5).map((message) => message.role)).toEqual(Array(5).fill('system'));
  });

  it('takes the request after harness notes (a caveat, /clear) as the task, merged for Anthropic or not', () => {
    const [system, request, ...session] = agentSession();
    const note = (content: string): Message => ({ role: 'user', content, metadata: { harness: true } });
    const input: Message[] = [
      system!,
      note('Caveat: The messages below were generated by the user while running local commands.'),
      note('<command-name>/clear</command-name>'),
      note('<local-command-stdout></local-command-stdout>'),
      request!,
      ...session,
    ];
    // Low enough that steps are folded into a summary, not only stubbed.
    const budgetTokens = Math.floor(countOf(input) * 0.03);
    const intentOf = (result: CompactResult) =>
      parseAnchoredSummary(
        result.messages.find((message) => message.metadata?.origin === 'summary')?.metadata?.summary,
      )?.intent;
    const openai = run(input, { budgetTokens, provider: 'openai' }).result;
    expect(openai.report.withinBudget).toBe(true);
    const ids = assignIds(input);
    expect(openai.messages.find((message) => message.id === ids[4]!.id)).toEqual(ids[4]);
    expect(intentOf(openai)).toBe(request!.content);
    const anthropic = run(input, { budgetTokens, provider: 'anthropic' }).result;
    expect(anthropic.report.withinBudget).toBe(true);
    const merged = anthropic.messages.find((message) => message.role === 'user')!;
    expect(merged.metadata).toMatchObject({ requestPart: 3 });
    expect(merged.metadata).not.toHaveProperty('harness');
    expect(JSON.stringify(merged.content)).toContain(JSON.stringify(request!.content));
    expect(intentOf(anthropic)).toBe(request!.content);
  });

  it('preserves the task after an in-context demonstration, and keeps the demonstration out of the summary', () => {
    // SWE-agent's shape: a demonstration (is_demo) the model only read, then the real task.
    const task = 'Fix the flaky retry test in src/retry.ts; keep the public API unchanged.';
    const demonstration =
      'Here is a demonstration of how to correctly accomplish this task.\n' +
      `${'DISCUSSION\nLet me open the file.\n```\nopen demo/app.py\n```\n'.repeat(20)}` +
      "ModuleNotFoundError: No module named 'flask'\n";
    const [system, ...session] = agentSession();
    const input: Message[] = [
      system!,
      { role: 'user', content: demonstration, metadata: { demo: true } },
      { role: 'assistant', content: 'DISCUSSION\nA demo reply.\n```\nsubmit\n```', metadata: { demo: true } },
      ...session,
    ];
    expect(session[0]).toMatchObject({ role: 'user', content: task });
    const ids = assignIds(input);
    const preserved = preservedMessageIds(ids, { keepRecentTurns: 2, preserveFirstUserMessage: true });
    expect(preserved.has(ids[1]!.id)).toBe(false);
    expect(preserved.has(ids[3]!.id)).toBe(true);

    // Low enough that old steps are folded into a summary after the demonstration is archived.
    const budgetTokens = Math.floor(countOf(input) * 0.05);
    const { result, archive } = run(input, { budgetTokens, provider: 'openai' });
    expect(result.report.withinBudget).toBe(true);
    expectPreservedIdentical(input, result);
    expectHandlesExpand(input, result, archive);
    // The demonstration is archived behind a stub first (none of it is this session's); the summary holds
    // nothing of it.
    const demoAction = result.report.actions.find((action) => action.type === 'stub-demonstration');
    expect(demoAction?.messageIds).toEqual([ids[1]!.id]);
    expect(archive.get(demoAction!.handle!)?.content).toEqual([ids[1]]);
    const summary = result.messages.find((message) => message.metadata?.origin === 'summary');
    // The task stays in the conversation (preserved, checked above): the summary does not repeat it.
    expect(result.messages.some((message) => message.role === 'user' && message.content === task)).toBe(true);
    expect(summary?.content).not.toContain('## Session intent');
    expect(summary?.content).not.toContain('demo/app.py');
    expect(summary?.content).not.toContain('flask');
    const atTenth = run(input, { budgetTokens: Math.floor(countOf(input) * 0.1), provider: 'openai' }).result;
    const demo = atTenth.messages.find((message) => message.id === ids[1]!.id)!;
    expect(demo.content).toMatch(/^\[in-context demonstration archived: h-[0-9a-f]{20} · \d+ tokens\]$/);
    expect((demo.content as string).startsWith(demonstrationStubPrefix)).toBe(true);

    // Anthropic merges the demonstration with the task that follows it: the merged message is the task, and
    // the demonstration in front of its request is archived behind one stub part.
    const merged: Message[] = [system!, input[1]!, ...session];
    const anthropic = run(merged, { budgetTokens, provider: 'anthropic' });
    expect(anthropic.result.report.repairs.map((repair) => repair.type)).toContain('merge-messages');
    const first = anthropic.result.messages.find((message) => message.role === 'user')!;
    expect(first.metadata?.demo).toBeUndefined();
    expect(first.metadata?.requestPart).toBe(1);
    const [stub, ...request] = first.content as Part[];
    expect(stub).toMatchObject({ type: 'text', text: expect.stringContaining(preambleStubPrefix) });
    expect(request).toEqual([{ type: 'text', text: task }]);
    const archived = anthropic.archive.get(/h-[0-9a-f]{20}/.exec((stub as { text: string }).text)![0]);
    expect(JSON.stringify(archived?.content)).toContain('open demo/app.py');
  });

  it('is deterministic and idempotent', () => {
    const input = agentSession();
    for (const budgetTokens of [Math.floor(countOf(input) * 0.1), 50]) {
      const first = run(input, { budgetTokens });
      const second = run(input, { budgetTokens });
      expect(second.result).toEqual(first.result);
      const again = compact(first.result.messages, { accountant, budgetTokens, archive: first.archive });
      expect(again.messages).toEqual(first.result.messages);
      expect(again.report.actions).toEqual([]);
      expect(again.report.repairs).toEqual([]);
    }
  });

  it('merges into a summary that came back through OpenAI or Anthropic messages without its metadata', () => {
    const input = agentSession(12);
    const first = run(input, { budgetTokens: Math.floor(countOf(input) * 0.05) }).result;
    const firstSummary = first.messages.find((message) => message.metadata?.origin === 'summary')!;
    const firstRecord = parseAnchoredSummary(firstSummary.metadata?.summary)!;
    const firstPaths = firstRecord.files.map((file) => file.path);
    expect(firstPaths).toContain('src/module1.ts');
    const trips: Array<[string, (conversation: Conversation) => Conversation]> = [
      ['openai', (conversation) => fromOpenAI(toOpenAI(conversation).messages)],
      ['anthropic', (conversation) => fromAnthropic(toAnthropic(conversation))],
    ];
    for (const [provider, trip] of trips) {
      const back = trip(first.conversation);
      const returned = back.messages.find((message) => messageText(message) === firstSummary.content)!;
      expect(returned.metadata, provider).toBeUndefined();
      // Under the same budget it stays as it is, and is known for the summary it is.
      const again = compact(back, { accountant, budgetTokens: first.report.tokensAfter });
      expect(again.messages.map(messageText), provider).toEqual(back.messages.map(messageText));
      const known = again.messages.find((m) => m.metadata?.origin === 'summary')!;
      expect(parseAnchoredSummary(known.metadata?.summary)).toBeDefined();
      // The report says so, once.
      expect(again.report.actions, provider).toEqual([
        expect.objectContaining({
          type: 'recognise-summary',
          messageIds: [known.id],
          description: expect.stringContaining(`archived: ${firstSummary.metadata?.handle}`),
        }),
      ]);
      // More steps, then a smaller budget: the next fold merges into the summary, whose files stay listed.
      const more = createConversationBuilder();
      for (let step = 50; step < 56; step++)
        more.tools([
          { name: 'read_file', input: { path: `src/late${step}.ts` }, output: logLines(step, 40) },
        ]);
      more.assistant('Done reading.');
      const grown = [...back.messages, ...more.build()];
      const next = compact(grown, { accountant, budgetTokens: Math.floor(countOf(grown) * 0.04) });
      const summaries = next.messages.filter((message) => message.metadata?.origin === 'summary');
      expect(summaries, provider).toHaveLength(1);
      const record = parseAnchoredSummary(summaries[0]!.metadata?.summary)!;
      expect(record.messageCount, provider).toBeGreaterThan(firstRecord.messageCount);
      expect(
        record.files.map((file) => file.path),
        provider,
      ).toEqual(expect.arrayContaining(firstPaths));
      expect(
        record.files.map((file) => file.path),
        provider,
      ).toContain('src/late50.ts');
      expect(messageText(summaries[0]!), provider).toContain('`src/module1.ts` read');
      // A summary that kept its metadata is not read again.
      const kept = compact(next.conversation, { accountant, budgetTokens: next.report.tokensAfter });
      expect(kept.report.actions.filter((action) => action.type === 'recognise-summary')).toEqual([]);
    }
  });

  it('keeps the current tool exchange whole at the recency boundary', () => {
    const input = agentSession(4);
    const ids = assignIds(input);
    const preserved = preservedMessageIds(ids, { keepRecentTurns: 1, preserveFirstUserMessage: true });
    const firstRecent = ids.findIndex((message, index) => index > 1 && preserved.has(message.id));
    expect(ids[firstRecent]?.role).not.toBe('tool');
    for (let index = firstRecent; index < ids.length; index++)
      expect(preserved.has(ids[index]!.id)).toBe(true);
    // Pinned and system messages, the first user message.
    expect(preserved.has(ids[0]!.id)).toBe(true);
    expect(preserved.has(ids[1]!.id)).toBe(true);
    expect(preserved.has(ids[2]!.id)).toBe(false);
    const pinned = assignIds(
      input.map((message, index) => (index === 3 ? { ...message, metadata: { pinned: true } } : message)),
    );
    expect(
      preservedMessageIds(pinned, { keepRecentTurns: 1, preserveFirstUserMessage: false }).has(pinned[3]!.id),
    ).toBe(true);
  });

  it('throws budget-exceeded in strict mode when the preserved messages alone exceed the budget', () => {
    const input = agentSession(3);
    let caught: unknown;
    try {
      run(input, { budgetTokens: 100, strict: true });
    } catch (error) {
      caught = error;
    }
    expect(isPrecisError(caught) && caught.code).toBe('budget-exceeded');
    expect((caught as Error).message).toMatch(
      /budget of 100 tokens: the smallest valid result has \d+ tokens/,
    );
  });

  it('names the system prompt when it alone is over the budget, which no strategy changes', () => {
    const input = [
      { role: 'system', content: `You are a CTF player. ${'Follow the rules of the game. '.repeat(40)}` },
      ...agentSession(3).slice(1),
    ] as Message[];
    const { result } = run(input, { budgetTokens: 100 });
    expect(result.report.withinBudget).toBe(false);
    expect(result.messages[0]).toEqual(expect.objectContaining({ content: input[0]!.content }));
    const warning = result.warnings.find((entry) => entry.message.startsWith('could not compact'));
    expect(warning?.message).toMatch(
      /\(the system prompt and tool schemas alone: \d+ tokens, which no strategy changes; raise the budget\)$/,
    );
    // A small system prompt: the preserved messages are named instead.
    const small = run(agentSession(3), { budgetTokens: 30 }).result.warnings;
    expect(small.map((entry) => entry.message).join('\n')).toMatch(
      /the preserved messages alone: \d+ tokens/,
    );
  });

  it('returns the smallest valid result with a warning when the budget cannot be met', () => {
    const input = agentSession(3);
    const { result } = run(input, { budgetTokens: 30 });
    expect(result.report.withinBudget).toBe(false);
    expect(result.report.tokensAfter).toBeLessThan(countOf(input));
    expect(result.warnings).toContainEqual(expect.objectContaining({ type: 'compact-warning' }));
    expect(validateMessages(result.messages).issues).toEqual([]);
    // Nothing fits, so the smallest result comes back (no relaxation does better than the one chosen).
    expect(result.report.relaxedPreservation).toBeDefined();
    const mostRelaxed = run(input, {
      budgetTokens: 30,
      keepRecentTurns: 0,
      preserveFirstUserMessage: false,
    });
    expect(result.report.tokensAfter).toBeLessThanOrEqual(mostRelaxed.result.report.tokensAfter);
    const system = input.filter((message) => message.role === 'system');
    expect(result.messages.filter((message) => message.role === 'system')).toMatchObject(system);
    // A second run finds nothing left to do.
    const again = compact(result.messages, { accountant, budgetTokens: 30 });
    expect(again.messages).toEqual(result.messages);
    expect(again.report.actions).toEqual([]);
  });

  it("trims the last turn's largest output to its first and last lines when the turn takes more than its share", () => {
    const log = `${logLines(8, 120)}\nexit code 1`;
    const { input, budgetTokens } = readingALongLog(log);
    const { result, archive, trim } = compactWithOneTrim(input, budgetTokens, 'trim-tool-output');
    const output = (result.messages.at(-1)!.content as Part[])[0]!;
    const value = output.type === 'tool-result' ? (output.output as { value: string }).value : '';
    // What the command printed first and how it ended are kept; the whole log is in the archive.
    expect(value.startsWith(log.split('\n').slice(0, 3).join('\n'))).toBe(true);
    expect(value.endsWith('exit code 1')).toBe(true);
    expect(value).toContain(`of this output archived: ${trim.handle} …]`);
    expect(archive.get(trim.handle!)?.content).toEqual({ type: 'text', value: log });
    expect(result.warnings).toContainEqual(
      expect.objectContaining({
        message: expect.stringMatching(/^the last turn \(\d+ tokens\) would take more/),
      }),
    );
    // Strict mode and a last turn that must stay whole are not trimmed.
    for (const options of [{ strict: true }, { lastTurnCompressible: false }]) {
      const whole = (() => {
        try {
          return run(input, { budgetTokens, ...options }).result;
        } catch (error) {
          if (isPrecisError(error) && error.code === 'budget-exceeded') return undefined;
          throw error;
        }
      })();
      expect(whole?.report.actions.some((action) => isLastTurnTrim(action)) ?? false).toBe(false);
    }
  });

  it("measures the last turn's share beside the task as the pipeline leaves it (its in-context example archived)", () => {
    // OpenHands' shape: a long worked example merged in front of the request. The pipeline archives it, so the
    // room beside the task is the request's; counted with the example, the room would read as none and the
    // last turn would be trimmed to its floor.
    const exampleText = `--- START OF EXAMPLE ---\n${logLines(3, 150)}\n--- END OF EXAMPLE ---`;
    const request = 'Fix the flaky retry test in src/retry.ts.';
    const builder = createConversationBuilder().system('You are a coding agent.').user(request);
    for (let step = 0; step < 6; step++)
      builder.tools([
        { name: 'bash', input: { command: `npm test -- --run ${step}` }, output: logLines(step, 40) },
      ]);
    const [system, , ...session] = builder
      .tools([{ name: 'bash', input: { command: 'npm test -- --verbose' }, output: logLines(9, 30) }])
      .build();
    const input: Message[] = [
      system!,
      {
        role: 'user',
        content: [
          { type: 'text', text: exampleText },
          { type: 'text', text: request },
        ],
        metadata: { requestPart: 1 },
      },
      ...session,
    ];
    const ids = assignIds(input);
    const lastTurn = preservedMessageIds(ids, { keepRecentTurns: 1, preserveFirstUserMessage: false });
    const lastTurnTokens = countOf(
      ids.filter((message) => lastTurn.has(message.id) && message.role !== 'system'),
    );
    // The last turn is well within a third of the room beside the request, and above a third of what the
    // example would leave.
    const budgetTokens = countOf([system!, { role: 'user', content: request }]) + 4 * lastTurnTokens;
    expect(budgetTokens).toBeLessThan(countOf(input.slice(0, 2)) + 3 * lastTurnTokens);
    const { result } = run(input, { budgetTokens, keepRecentTurns: 1 });
    expect(result.report.withinBudget).toBe(true);
    expect(result.report.actions.map((action) => action.type)).toContain('stub-demonstration');
    expect(result.report.actions.some((action) => isLastTurnTrim(action))).toBe(false);
    expectPreservedIdentical(input, result, 1);
    // A pipeline that keeps the example leaves the room the example leaves: there the last turn is trimmed.
    const strategies = defaultStrategies().filter((strategy) => strategy.name !== 'stub-demonstrations');
    const keeping = run(input, { budgetTokens, keepRecentTurns: 1, strategies }).result;
    expect(keeping.report.actions.some((action) => isLastTurnTrim(action))).toBe(true);
    // What the engine reads is the strategy's declaration, not its name: the same strategy wrapped under another.
    const wrapped = defaultStrategies().map(
      (strategy): Strategy =>
        strategy.archivesRequestPreambles === true
          ? { name: 'timed-demonstrations', archivesRequestPreambles: true, apply: strategy.apply }
          : strategy,
    );
    const declared = run(input, { budgetTokens, keepRecentTurns: 1, strategies: wrapped }).result;
    expect(declared.report.actions.map((action) => action.strategy)).toContain('stub-demonstrations');
    expect(declared.report.actions.some((action) => isLastTurnTrim(action))).toBe(false);
  });

  it("trims a long argument of the last turn's call (a file written) and folds the original later", () => {
    const lines = Array.from({ length: 900 }, (_, line) => `export const setting${line} = ${line};`);
    const content = lines.join('\n');
    const input = createConversationBuilder()
      .system('You are a coding agent.')
      .user('Write the settings module.')
      .tools([{ name: 'bash', input: { command: 'ls src' }, output: logLines(7, 10) }], 'Looking first.')
      .tools([{ name: 'Write', input: { file_path: 'src/settings.ts', content }, output: 'File created.' }])
      .build();
    const { result, archive, trim } = compactWithOneTrim(input, 3000, 'trim-tool-input');
    const call = (result.messages.at(-2)!.content as Part[]).find((part) => part.type === 'tool-call')!;
    const written =
      call.type === 'tool-call' ? (call.input as { file_path: string; content: string }) : undefined;
    expect(written?.file_path).toBe('src/settings.ts');
    expect(written?.content.startsWith(lines.slice(0, 5).join('\n'))).toBe(true);
    expect(written?.content.endsWith(lines.at(-1)!)).toBe(true);
    expect(written?.content).toContain(`of this argument archived: ${trim.handle} …]`);
    expect(archive.get(trim.handle!)?.content).toBe(content);

    // Later steps push the write out of the recent turns: the summary reads the whole file, not the trimmed one.
    const later = createConversationBuilder()
      .tools([{ name: 'bash', input: { command: 'npm test' }, output: logLines(8, 40) }], 'Testing.')
      .tools([{ name: 'bash', input: { command: 'npm run lint' }, output: logLines(9, 40) }], 'Linting.')
      .build();
    const folded = compact([...result.messages, ...later], { accountant, budgetTokens: 1200, archive });
    const summary = folded.messages.find((message) => message.metadata?.origin === 'summary');
    const record = parseAnchoredSummary(summary?.metadata?.summary);
    const file = record?.files.find((entry) => entry.path === 'src/settings.ts');
    expect(file?.detail).toContain(`create ${lines.length} lines`);
    expect(JSON.stringify(summary?.content)).not.toContain('of this argument archived');
  });

  it('trims a large JSON output of the last turn as its JSON text instead of archiving it whole', () => {
    const rows = Array.from({ length: 300 }, (_, id) => ({
      id,
      email: `user${id}@example.com`,
      active: id % 2 === 0,
    }));
    const json: ToolResultOutput = { type: 'json', value: { rows, next: null } };
    const { input, budgetTokens } = readingALongLog(json);
    const { result, archive, trim } = compactWithOneTrim(input, budgetTokens, 'trim-tool-output');
    const output = (result.messages.at(-1)!.content as Part[])[0]!;
    expect(output.type === 'tool-result' && output.output.type).toBe('text');
    const value = output.type === 'tool-result' ? toolOutputText(output.output) : '';
    expect(value.startsWith('{"rows":[{"id":0,"email":"user0@example.com","active":true}')).toBe(true);
    expect(value.endsWith('"next":null}')).toBe(true);
    expect(archive.get(trim.handle!)?.content).toEqual(json);
  });

  it('trims the texts of a content output in place, and a later fold reads the output whole', () => {
    // An MCP tool's result: a caption, an image and a long log as content items; the error is in the middle of
    // the log of a failed run.
    const lines = logLines(8, 240).split('\n');
    lines[120] = 'Error: ENOSPC: no space left on device, write cache/part-137.bin';
    const log = `${lines.join('\n')}\nexit code 1`;
    const output: ToolResultOutput = {
      type: 'content',
      value: [
        { type: 'text', text: 'Build log:' },
        { type: 'image-url', url: 'https://example.com/build.png' },
        { type: 'text', text: log },
      ],
    };
    const { input, budgetTokens } = readingALongLog(output);
    const { result, archive, trim } = compactWithOneTrim(input, budgetTokens, 'trim-tool-output');
    expect(JSON.stringify(result.messages.at(-1))).not.toContain('ENOSPC');
    expect(archive.get(trim.handle!)?.content).toEqual(output);

    const later = createConversationBuilder()
      .tools([{ name: 'bash', input: { command: 'df -h' }, output: logLines(9, 40) }], 'Checking the disk.')
      .tools([{ name: 'bash', input: { command: 'npm run clean' }, output: logLines(10, 40) }], 'Cleaning.')
      .build();
    // Folded from the archive's original: straight away, and after the default pipeline stubbed the trimmed
    // output (its stub names the original, not the trimmed text).
    const stubbed = compact([...result.messages, ...later], { accountant, budgetTokens: 450, archive });
    expect(
      stubbed.report.actions.some(
        (action) => action.type === 'stub-tool-output' && action.handle === trim.handle,
      ),
    ).toBe(true);
    for (const [messages, budgetTokens] of [
      [[...result.messages, ...later], 700],
      [stubbed.messages, 350],
    ] as const) {
      const folded = compact(messages, {
        accountant,
        budgetTokens,
        archive,
        strategies: [foldIntoSummary()],
      });
      const summary = folded.messages.find((message) => message.metadata?.origin === 'summary');
      // The record holds the error (the smaller summary has no room to show it).
      const record = parseAnchoredSummary(summary?.metadata?.summary);
      expect(record?.errors.join('\n')).toContain('ENOSPC: no space left on device');
      expect(JSON.stringify(summary?.content)).not.toContain('of this output archived');
    }
  });

  it('says once when both share rules act: fewer turns kept, the last one with its long output trimmed', () => {
    const builder = createConversationBuilder()
      .system('You are a coding agent.')
      .user('Fix the flaky retry test in src/retry.ts.');
    for (let step = 0; step < 8; step++)
      builder.tools(
        [{ name: 'bash', input: { command: `npm test ${step}` }, output: logLines(step, 40) }],
        `Step ${step}.`,
      );
    builder.tools([{ name: 'bash', input: { command: 'npm test -- --verbose' }, output: logLines(9, 200) }]);
    const input = builder.build();
    const { result } = run(input, { budgetTokens: Math.floor(countOf(input) * 0.2) });
    expect(result.report.withinBudget).toBe(true);
    expect(result.report.relaxedPreservation).toEqual({ keepRecentTurns: 1, preserveFirstUserMessage: true });
    expect(result.report.actions.filter((action) => isLastTurnTrim(action))).toHaveLength(1);
    const shareWarnings = result.warnings.filter((warning) =>
      warning.message.includes('recentTurnsMaxShare'),
    );
    expect(shareWarnings).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(
          /^the last 2 turns .* kept the last turn \(its largest tool outputs or arguments trimmed\)/,
        ),
      }),
    ]);
  });

  it('gives up the last turn (stubbed, expandable) only when nothing else makes the budget hold', () => {
    // With no share rule for recent turns, the last turn stays whole until nothing else makes the budget hold.
    const { input, budgetTokens } = readingALongLog(logLines(8, 120));
    const { result, archive } = run(input, { budgetTokens, recentTurnsMaxShare: 1 });
    expect(result.report.withinBudget).toBe(true);
    expect(result.report.relaxedPreservation).toEqual({
      keepRecentTurns: 0,
      preserveFirstUserMessage: false,
    });
    expect(result.warnings).toContainEqual(
      expect.objectContaining({
        message: expect.stringMatching(/keepRecentTurns 0 .*\(the last turn too\)/),
      }),
    );
    expectHandlesExpand(input, result, archive);
    expect(validateMessages(result.messages).issues).toEqual([]);
    // Where the budget is only a target, the last turn can be kept whole at the budget's expense.
    const kept = run(input, { budgetTokens, lastTurnCompressible: false, recentTurnsMaxShare: 1 }).result;
    expect(kept.report.withinBudget).toBe(false);
    expect(kept.report.relaxedPreservation?.keepRecentTurns).toBe(1);
    expectPreservedIdentical(input, kept, 1, false);
  });

  it('folds the current request and the last reply too when nothing else makes a feasible budget hold', () => {
    // A chat without tools whose last reply is long prose: even shortened, the last request and reply do not fit.
    const prose = (topic: string, sentences: number) =>
      Array.from(
        { length: sentences },
        (_, index) =>
          `The ${topic} section ${index} explains step ${index * 7} of the release checklist in detail.`,
      ).join(' ');
    const input = createConversationBuilder()
      .system('You are a documentation assistant.')
      .user(`Write docs/release.md for the release process. ${prose('draft', 12)}`)
      .assistant(prose('answer', 30))
      .user('Now review docs/release.md and docs/process.md for duplicated sections.')
      .assistant(prose('review', 60))
      .build();
    const budgetTokens = Math.floor(countOf(input) * 0.15);
    for (const provider of ['openai', 'anthropic'] as const) {
      const { result, archive } = run(input, { budgetTokens, provider });
      expect(result.report.withinBudget).toBe(true);
      expect(result.report.relaxedPreservation).toEqual({
        keepRecentTurns: 0,
        preserveFirstUserMessage: false,
      });
      expect(validateMessages(result.messages, { provider }).issues).toEqual([]);
      expectHandlesExpand(input, result, archive);
      // The request and the reply are in the summary's span, expandable from the archive.
      const { metadata } = result.messages.find((message) => message.metadata?.origin === 'summary')!;
      const handles = parseAnchoredSummary(metadata?.summary)!.handles;
      const archived = handles.flatMap((handle) => archive.get(handle)?.messageIds ?? []);
      for (const id of assignIds(input)
        .slice(-2)
        .map((message) => message.id))
        expect(archived).toContain(id);
      const again = compact(result.messages, { accountant, budgetTokens, provider });
      expect(again.report.actions).toEqual([]);
    }
  });

  it('relaxes the preservation (never the last turn) before giving up the budget', () => {
    const input = agentSession(3);
    const ids = assignIds(input);
    const preserved = preservedMessageIds(ids, { keepRecentTurns: 2, preserveFirstUserMessage: true });
    const preservedTokens = countOf(ids.filter((message) => preserved.has(message.id)));
    const lastTurn = preservedMessageIds(ids, { keepRecentTurns: 1, preserveFirstUserMessage: true });
    const lastTurnTokens = countOf(ids.filter((message) => lastTurn.has(message.id)));
    const budgetTokens = Math.floor((preservedTokens + lastTurnTokens) / 2) + 150;
    expect(budgetTokens).toBeLessThan(preservedTokens);

    // The recent turns' share of the room is tested on its own below.
    const { result } = run(input, { budgetTokens, recentTurnsMaxShare: 1 });
    expect(result.report.withinBudget).toBe(true);
    expect(result.report.relaxedPreservation).toEqual({ keepRecentTurns: 1, preserveFirstUserMessage: true });
    expect(result.warnings).toContainEqual(
      expect.objectContaining({
        type: 'compact-warning',
        message: expect.stringMatching(/did not fit the budget .*keepRecentTurns 1/),
      }),
    );
    expectPreservedIdentical(input, result, 1);
    expect(validateMessages(result.messages).issues).toEqual([]);
    // Strict mode keeps the contract instead.
    expect(() => run(input, { budgetTokens, strict: true })).toThrow(
      expect.objectContaining({ code: 'budget-exceeded' }),
    );
    // Within the budget now, so compacting again changes nothing.
    const again = compact(result.messages, { accountant, budgetTokens });
    expect(again.messages).toEqual(result.messages);
  });

  it('keeps fewer recent turns when they would crowd out the summary (recentTurnsMaxShare)', () => {
    const input = agentSession();
    const ids = assignIds(input);
    const tokensKept = (keepRecentTurns: number) => {
      const kept = preservedMessageIds(ids, { keepRecentTurns, preserveFirstUserMessage: true });
      return countOf(ids.filter((message) => kept.has(message.id)));
    };
    const anchors = tokensKept(0);
    const lastTwo = tokensKept(2) - anchors;
    // The last two turns fit, but would take half of what the system prompt and the task leave.
    const budgetTokens = anchors + 2 * lastTwo;
    expect(budgetTokens).toBeLessThan(countOf(input));
    // What the rest of the conversation leaves the summary (it takes less when its record wants less).
    const summaryRoom = (result: CompactResult) =>
      budgetTokens - countOf(result.messages.filter((message) => message.metadata?.origin !== 'summary'));

    const { result, archive } = run(input, { budgetTokens });
    expect(result.report.withinBudget).toBe(true);
    expect(result.report.relaxedPreservation).toEqual({ keepRecentTurns: 1, preserveFirstUserMessage: true });
    expect(result.warnings).toContainEqual({
      type: 'compact-warning',
      message: expect.stringMatching(
        new RegExp(
          `^the last 2 turns \\(${lastTwo} tokens\\) would take more than 33% .*kept the last turn `,
        ),
      ),
    });
    expectPreservedIdentical(input, result, 1);
    expectHandlesExpand(input, result, archive);
    expect(validateMessages(result.messages).issues).toEqual([]);
    expect(compact(result.messages, { accountant, budgetTokens }).messages).toEqual(result.messages);

    // A share of 1, or strict mode, keeps both turns whole because they fit; the summary gets less room.
    for (const options of [{ recentTurnsMaxShare: 1 }, { strict: true }]) {
      const whole = run(input, { budgetTokens, ...options }).result;
      expect(whole.report.withinBudget).toBe(true);
      expect(whole.report.relaxedPreservation).toBeUndefined();
      expect(whole.warnings.filter((warning) => warning.type === 'compact-warning')).toEqual([]);
      expectPreservedIdentical(input, whole, 2);
      expect(summaryRoom(whole)).toBeLessThan(summaryRoom(result));
    }
    // When even the last turn does not fit beside a long task, the budget's relaxations follow, and say so.
    const longTask = input.map((message, index) =>
      index === 1
        ? {
            role: 'user' as const,
            content: Array.from(
              { length: 30 },
              (_, sentence) => `Background note ${sentence} on the retry module and its history.`,
            ).join(' '),
          }
        : message,
    );
    const longIds = assignIds(longTask);
    const kept = (keepRecentTurns: number) => {
      const ids = preservedMessageIds(longIds, { keepRecentTurns, preserveFirstUserMessage: true });
      return countOf(longIds.filter((message) => ids.has(message.id)));
    };
    const tight = run(longTask, { budgetTokens: kept(1) - 5 }).result;
    expect(tight.report.withinBudget).toBe(true);
    expect(tight.report.relaxedPreservation).toEqual({ keepRecentTurns: 1, preserveFirstUserMessage: false });
    const said = tight.warnings.map((warning) => warning.message).join('\n');
    expect(said).toMatch(/did not fit the budget .*first user message compressible/);
    expect(said).not.toMatch(/recentTurnsMaxShare/);
    // Within the share, nothing is relaxed.
    const within = run(input, { budgetTokens, recentTurnsMaxShare: 0.5 }).result;
    expect(within.report.relaxedPreservation).toBeUndefined();
    expectPreservedIdentical(input, within, 2);
  });

  it('names a summary among what the recent turns share the room with', () => {
    const ids = assignIds(agentSession());
    const summary: IdentifiedMessage = {
      role: 'assistant',
      content:
        '[precis summary of 9 earlier messages — archived: h-0123456789abcdef0123]\n\n## Files\n- `src/retry.ts` read',
      id: 'summary-1',
      metadata: { origin: 'summary' },
    };
    const reason = (messages: IdentifiedMessage[]) => {
      const kept = (keepRecentTurns: number) => {
        const preserved = preservedMessageIds(messages, { keepRecentTurns, preserveFirstUserMessage: true });
        return countOf(messages.filter((message) => preserved.has(message.id)));
      };
      // The last two turns would take half of the room.
      const budgetTokens = kept(0) + 2 * (kept(2) - kept(0));
      const settings = {
        budgetTokens,
        accountant,
        archive: createMemoryArchive(),
        strict: false,
        lastTurnCompressible: true,
        recentTurnsMaxShare: 1 / 3,
        preamblesArchived: false,
        keepRecentTurns: 2,
        preserveFirstUserMessage: true,
      };
      return recentTurnsThatFit(messages, settings, countOf, false)?.reason;
    };
    expect(reason(ids)).toMatch(/tokens left beside the system prompt and the task: kept the last turn/);
    expect(reason([ids[0]!, ids[1]!, summary, ...ids.slice(2)])).toMatch(
      /tokens left beside the system prompt, the task and the summary: kept the last turn/,
    );
  });

  it('does not blame recent turns that are only the system prompt and the task', () => {
    const input: Message[] = [
      { role: 'system', content: 'You are a careful coding agent. '.repeat(40) },
      { role: 'user', content: 'Fix the retry backoff in src/retry.ts.' },
    ];
    const { result } = run(input, { budgetTokens: 20 });
    expect(result.report.withinBudget).toBe(false);
    const said = result.warnings.map((warning) => warning.message).join('\n');
    expect(said).not.toMatch(/recentTurnsMaxShare/);
    expect(said).toMatch(/could not compact to the budget of 20 tokens/);
  });

  it('reports the weakest preservation any of its passes used (a fast-check counterexample)', () => {
    const output = Array.from(
      { length: 20 },
      (_, line) => `line ${line} of output 0: value=${line % 13}`,
    ).join('\n');
    const read = (toolCallId: string, path: string) => ({
      type: 'tool-call' as const,
      toolCallId,
      toolName: 'read_file',
      input: { path },
    });
    const result = (
      toolCallId: string,
      toolName: string,
      value: string,
      type: 'text' | 'error-text' = 'text',
    ): Message => ({
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId, toolName, output: { type, value } }],
    });
    const input: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'run the tests' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Great question! ok' }] },
      { role: 'user', content: ' ' },
      { role: 'assistant', content: [read('call-1', ' '), read('call-2', 'run the tests')] },
      result('call-1', 'read_file', output),
      result('call-2', 'read_file', output, 'error-text'),
      {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: 'call-3', toolName: 'bash', input: { path: 'ls' } }],
      },
      result('call-3', 'bash', 'README.md'),
      { role: 'assistant', content: [read('call-4', ' ')] },
      result('call-4', 'read_file', output),
    ];
    const budgetTokens = Math.floor(countOf(input) * 0.02);
    const { result: compacted } = run(input, { budgetTokens });
    const relaxed = compacted.report.relaxedPreservation;
    expect(relaxed).toBeDefined();
    expectPreservedIdentical(input, compacted, relaxed?.keepRecentTurns, relaxed?.preserveFirstUserMessage);
  });

  it('counts tool schemas against the budget', () => {
    const input: Conversation = {
      messages: agentSession(),
      tools: [
        {
          name: 'bash',
          description: 'Run a shell command in the repository and return its output. '.repeat(20),
          inputSchema: { type: 'object', properties: { command: { type: 'string' } } },
        },
      ],
    };
    const budgetTokens = Math.floor(accountant.countConversation(input).totalTokens * 0.2);
    const { result } = run(input, { budgetTokens });
    expect(result.conversation.tools).toEqual(input.tools);
    expect(accountant.countConversation(result.conversation).totalTokens).toBeLessThanOrEqual(budgetTokens);
  });

  it('rejects bad input and options with typed errors', () => {
    expect(() => compact([{ role: 'robot', content: 'x' }] as never, { budgetTokens: 10 })).toThrow(
      expect.objectContaining({ code: 'invalid-message' }),
    );
    for (const options of [
      { budgetTokens: -1 },
      { budgetTokens: 1.5 },
      { budgetTokens: 10, keepRecentTurns: -1 },
      { budgetTokens: 10, provider: 'x' },
      { budgetTokens: 10, allowPendingToolCalls: 'yes' },
      ...[0, -0.5, 1.5, Number.NaN, '0.5'].map((share) => ({ budgetTokens: 10, recentTurnsMaxShare: share })),
    ])
      expect(() => compact([], options as CompactOptions)).toThrow(
        expect.objectContaining({ code: 'invalid-argument' }),
      );
    expect(() => compact([], { budgetTokens: 10, recentTurnsMaxShare: 0 })).toThrow(/recentTurnsMaxShare/);
  });

  it('keeps its invariants on generated conversations', () => {
    const providers = ['any', 'openai', 'anthropic'] as const;
    let acting = 0;
    let metBudget = 0;
    let examplesArchived = 0;
    let lastTurnsTrimmed = 0;
    let argumentsTrimmed = 0;
    let severalInOneCall = 0;
    fc.assert(
      fc.property(
        richConversation(6),
        fc.double({ min: 0.02, max: 1.1, noNaN: true }),
        fc.constantFrom(...providers),
        fc.nat(3),
        (input, ratio, provider, keepRecentTurns) => {
          const budgetTokens = Math.floor(countOf(input) * ratio);
          const options = { budgetTokens, provider, keepRecentTurns };
          const { result, archive } = run(input, options);
          if (result.report.actions.length > 0) acting++;
          if (result.report.actions.some((action) => action.type === 'stub-demonstration'))
            examplesArchived++;
          if (result.report.actions.some((action) => isLastTurnTrim(action))) lastTurnsTrimmed++;
          const argumentTrims = result.report.actions.filter((action) => action.type === 'trim-tool-input');
          if (argumentTrims.length > 0) argumentsTrimmed++;
          const trimmedCalls = argumentTrims.map(
            (action) => /\(([^()]+)\) in the last turn/.exec(action.description)?.[1],
          );
          if (new Set(trimmedCalls).size < trimmedCalls.length) severalInOneCall++;
          expect(validateMessages(result.messages, { provider }).issues).toEqual([]);
          expect(result.report.tokensAfter).toBe(countOf(result.messages));
          expect(result.report.withinBudget).toBe(result.report.tokensAfter <= budgetTokens);
          if (result.report.withinBudget) metBudget++;
          else expect(result.warnings.some((warning) => warning.type === 'compact-warning')).toBe(true);
          if (validateMessages(input, { provider }).valid) {
            const relaxed = result.report.relaxedPreservation;
            expectPreservedIdentical(
              input,
              result,
              relaxed?.keepRecentTurns ?? keepRecentTurns,
              relaxed?.preserveFirstUserMessage ?? true,
            );
            // Feasible: what is never given up (the system prompt, pinned messages) leaves room for a summary
            // and markers. The preservation relaxes down to that, the task and the work in flight included.
            const ids = assignIds(input);
            const preserved = preservedMessageIds(ids, {
              keepRecentTurns: 0,
              preserveFirstUserMessage: false,
            });
            const kept = countOf(ids.filter((message) => preserved.has(message.id)));
            if (kept * 1.5 + 400 <= budgetTokens) expect(result.report.withinBudget).toBe(true);
          }
          expectHandlesExpand(input, result, archive);
          expect(run(input, options).result).toEqual(result);
          const again = compact(result.messages, { accountant, ...options, archive });
          expect(again.messages).toEqual(result.messages);
          expect(again.report.actions).toEqual([]);
        },
      ),
      { numRuns: propertyRuns(1000) },
    );
    expect(acting).toBeGreaterThan(20);
    expect(metBudget).toBeGreaterThan(20);
    // The preserved task's example was archived in some runs: the exception to byte-identical preservation ran.
    expect(examplesArchived).toBeGreaterThan(20);
    // The share rule trims the last turn's outputs in a good part of them (about a fifth).
    expect(lastTurnsTrimmed).toBeGreaterThan(20);
    // And the long arguments of its calls (a file it wrote) in some, two of one call in a few.
    expect(argumentsTrimmed).toBeGreaterThan(10);
    expect(severalInOneCall).toBeGreaterThan(0);
  });
});

describe('compact, again and again (an agent loop)', () => {
  /** Every message the archive reaches from the handles `messages` name (summary indexes, markers, stubs). */
  function reachableMessages(messages: readonly Message[], archive: ArchiveStore): Message[] {
    const found: Message[] = [];
    const seen = new Set<string>();
    const handlesIn = (value: unknown) =>
      [...JSON.stringify(value).matchAll(/h-[0-9a-f]{20}/g)].map((match) => match[0]);
    const pending = messages.flatMap((message) => handlesIn(message));
    for (let handle = pending.pop(); handle !== undefined; handle = pending.pop()) {
      if (seen.has(handle)) continue;
      seen.add(handle);
      const entry = archive.get(handle);
      if (entry === undefined) continue;
      if (entry.kind === 'messages') found.push(...(entry.content as Message[]));
      pending.push(...handlesIn(entry.content));
    }
    return found;
  }

  it('stays valid, meets feasible budgets and loses nothing, compacting before each step', () => {
    let compactions = 0;
    let loops = 0;
    fc.assert(
      fc.property(
        richConversation(8),
        fc.double({ min: 0.05, max: 0.6, noNaN: true }),
        fc.constantFrom('any', 'openai', 'anthropic'),
        fc.constantFrom(1, 1.4),
        (conversation, ratio, provider, trigger) => {
          const input = assignIds(repairMessages(conversation, { provider }).messages);
          const budgetTokens = Math.floor(countOf(input) * ratio);
          const archive = createMemoryArchive();
          let current: Message[] = [];
          let rounds = 0;
          const compactOver = (limit: number) => {
            if (countOf(current) <= limit) return;
            rounds++;
            current = compact(current, { accountant, budgetTokens, provider, archive }).messages;
            expect(validateMessages(current, { provider, allowPendingToolCalls: true }).issues).toEqual([]);
          };
          for (const message of input) {
            if (message.role === 'assistant' && current.length > 0) compactOver(budgetTokens * trigger);
            current.push(message);
          }
          compactOver(budgetTokens);
          compactions += rounds;
          if (rounds > 1) loops++;
          // Feasible as for one compaction: what is never given up leaves room for a summary and markers.
          const preserved = preservedMessageIds(input, {
            keepRecentTurns: 0,
            preserveFirstUserMessage: false,
          });
          const kept = countOf(input.filter((message) => preserved.has(message.id)));
          if (kept * 1.5 + 400 <= budgetTokens) expect(countOf(current)).toBeLessThanOrEqual(budgetTokens);
          // Every message that left is reachable from what stayed, through the archive: by its id, or each of its
          // parts inside a message a repair merged it into (which keeps the first one's id).
          const known = [...current, ...reachableMessages(current, archive)];
          const ids = new Set(known.map((message) => (message as IdentifiedMessage).id));
          const text = JSON.stringify(known);
          const lost = input.filter(
            (message) =>
              !ids.has(message.id) &&
              (typeof message.content === 'string'
                ? !text.includes(JSON.stringify(message.content).slice(1, -1))
                : message.content.some((part) => !text.includes(JSON.stringify(part)))),
          );
          expect(lost).toEqual([]);
        },
      ),
      { numRuns: propertyRuns(200) },
    );
    expect(loops).toBeGreaterThan(20);
    expect(compactions).toBeGreaterThan(100);
  });

  it('merges into its one summary when the conversation goes out as OpenAI messages between compactions', () => {
    let merges = 0;
    fc.assert(
      fc.property(
        richConversation(8),
        fc.double({ min: 0.05, max: 0.6, noNaN: true }),
        (conversation, ratio) => {
          const input = assignIds(repairMessages(conversation, { provider: 'openai' }).messages);
          const budgetTokens = Math.floor(countOf(input) * ratio);
          let current: Message[] = [];
          let folded = 0;
          const compactOver = (limit: number) => {
            if (countOf(current) <= limit) return;
            const result = compact(current, { accountant, budgetTokens, provider: 'openai' });
            expect(
              validateMessages(result.messages, { provider: 'openai', allowPendingToolCalls: true }).issues,
            ).toEqual([]);
            const summaries = result.messages.filter((message) => message.metadata?.origin === 'summary');
            expect(summaries.length).toBeLessThanOrEqual(1);
            // Read back and merged into, the summary's count only grows: summarised again, it would restart.
            const count = parseAnchoredSummary(summaries[0]?.metadata?.summary)?.messageCount ?? 0;
            expect(count).toBeGreaterThanOrEqual(folded);
            if (folded > 0 && count > folded) merges++;
            folded = count;
            current = fromOpenAI(toOpenAI(result.messages).messages).messages;
          };
          for (const message of input) {
            if (message.role === 'assistant' && current.length > 0) compactOver(budgetTokens * 1.4);
            current.push(message);
          }
          compactOver(budgetTokens);
        },
      ),
      { numRuns: propertyRuns(100) },
    );
    expect(merges).toBeGreaterThan(10);
  });
});

describe('compactAsync', () => {
  /** An asynchronous strategy that replaces every non-preserved assistant text with a short note, after a tick. */
  function noteTaker(calls: string[]): AsyncStrategy {
    return {
      name: 'note-taker',
      async: true,
      async apply(messages, context) {
        calls.push(`budget ${context.budgetTokens}`);
        await new Promise((resolve) => setTimeout(resolve, 1));
        return { messages: [...messages], actions: [], warnings: [] };
      },
    };
  }

  it('runs the same engine as compact, awaiting asynchronous strategies in pipeline order', async () => {
    const input = agentSession();
    const budgetTokens = Math.floor(countOf(input) * 0.2);
    const calls: string[] = [];
    const strategies = [noteTaker(calls), ...defaultStrategies()];
    const result = await compactAsync(input, { accountant, budgetTokens, strategies });
    expect(calls.length).toBeGreaterThan(0);
    const sync = compact(input, { accountant, budgetTokens });
    expect(result.messages).toEqual(sync.messages);
    expect(result.report.withinBudget).toBe(true);
    expect(result.report.strategies[0]?.name).toBe('note-taker');
  });

  it('refuses asynchronous strategies in compact, naming the option', () => {
    expect(() =>
      compact(agentSession(2), { budgetTokens: 10, strategies: [noteTaker([]) as never] }),
    ).toThrow(
      expect.objectContaining({
        code: 'invalid-argument',
        message: expect.stringMatching(/strategies\[0\].*compactAsync/),
      }),
    );
  });

  it('stops when the abort signal aborts', async () => {
    const controller = new AbortController();
    controller.abort(new Error('caller gave up'));
    await expect(
      compactAsync(agentSession(), { budgetTokens: 100, abortSignal: controller.signal }),
    ).rejects.toThrow('caller gave up');
  });
});
