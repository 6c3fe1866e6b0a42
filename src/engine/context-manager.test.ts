import { describe, expect, it } from 'vitest';
import { createMemoryArchive } from '../archive/archive-store.js';
import {
  InvalidArgumentError,
  InvalidMessageError,
  isPrecisError,
  UnknownModelError,
} from '../errors/index.js';
import { messageText } from '../messages/content.js';
import { assignIds } from '../messages/ids.js';
import type { IdentifiedMessage, Message, ToolDefinition } from '../messages/types.js';
import { validateMessages } from '../messages/validate/index.js';
import {
  assistantMessage,
  systemMessage,
  toolCall,
  toolMessage,
  toolResult,
  userMessage,
} from '../testing/message-builders.js';
import { createTokenAccountant } from '../tokens/index.js';
import {
  type CompactionEndEvent,
  type CompactionStartEvent,
  type ContextManager,
  type ContextManagerOptions,
  type ContextWarningEvent,
  createContextManager,
} from './context-manager.js';

const accountant = createTokenAccountant();

const tools: ToolDefinition[] = [
  {
    name: 'Bash',
    description: 'Run a shell command',
    inputSchema: { type: 'object', properties: { command: { type: 'string' } } },
  },
  {
    name: 'Edit',
    description: 'Replace text in a file',
    inputSchema: { type: 'object', properties: { file_path: { type: 'string' } } },
  },
];

function logOutput(step: number, lines: number): string {
  return Array.from(
    { length: lines },
    (_, line) =>
      `src/feature${step % 17}/module.ts:${line}: check ${line} of run ${step} passed in ${(line * 7) % 13} ms`,
  ).join('\n');
}

/** One agent step: an assistant message with one tool call and the tool message with its result. */
function step(index: number): [Message, Message] {
  const kind = index % 4;
  const call =
    kind === 0
      ? toolCall('Bash', { command: `npm test -- --run ${index}` }, `call_${index}`)
      : kind === 1
        ? toolCall('Read', { file_path: `src/feature${index % 17}/module.ts` }, `call_${index}`)
        : kind === 2
          ? toolCall(
              'Edit',
              {
                file_path: `src/feature${index % 5}/edit.ts`,
                old_string: `a${index}`,
                new_string: `b${index}`,
              },
              `call_${index}`,
            )
          : toolCall('Grep', { pattern: `TODO ${index}`, path: 'src' }, `call_${index}`);
  const lines = kind === 2 ? 1 : 10 + ((index * 37) % 60);
  const output = kind === 2 ? 'The file was updated.' : logOutput(index, lines);
  return [
    assistantMessage([{ type: 'text', text: `Step ${index}: next I check part ${index}.` }, call]),
    toolMessage(toolResult(call, output)),
  ];
}

const system = systemMessage('You are a coding agent. Use the tools to inspect and change the repository.');
const task = userMessage('Fix the flaky retry test in src/retry.ts and keep the public API unchanged.');
const pinned = userMessage('Never touch the generated files under src/gen/.', { metadata: { pinned: true } });

function manager(options: Partial<ContextManagerOptions> = {}): ContextManager {
  return createContextManager({
    contextWindow: 24_000,
    outputReserve: 2000,
    accountant,
    tools,
    messages: [system, task],
    ...options,
  });
}

interface Recorded {
  starts: CompactionStartEvent[];
  ends: CompactionEndEvent[];
  warnings: ContextWarningEvent[];
}

function record(context: ContextManager): Recorded {
  const recorded: Recorded = { starts: [], ends: [], warnings: [] };
  context.on('compaction-start', (event) => recorded.starts.push(event));
  context.on('compaction-end', (event) => recorded.ends.push(event));
  context.on('warning', (event) => recorded.warnings.push(event));
  return recorded;
}

const stripId = ({ id: _id, ...rest }: Message) => rest;

describe('createContextManager in a long tool-using loop', () => {
  it('stays under the window for 400 steps with valid messages, preserved messages and sane events', async () => {
    const context = manager();
    const events = record(context);
    const appended: Message[] = [system, task];
    let inputTokens = 0;
    let appendedTokens = 0;
    const compactionSteps: number[] = [];
    for (let index = 0; index < 400; index++) {
      const messages = step(index);
      if (index === 40) messages.unshift(pinned);
      if (index % 90 === 89) messages.unshift(userMessage(`Also check part ${index}, please.`));
      // The model's reply is appended first, then the tool results: the same order as a real loop.
      for (const message of messages) {
        context.append(message);
        appended.push(message);
      }
      appendedTokens += messages.reduce((sum, message) => sum + accountant.countMessage(message), 0);
      const compactionsBefore = events.starts.length;
      const sent = await context.messages();
      if (events.starts.length > compactionsBefore) compactionSteps.push(index);
      const stats = context.stats();
      inputTokens += stats.totalTokens;

      expect(stats.totalTokens).toBeLessThanOrEqual(24_000 - 2000);
      expect(stats.totalTokens).toBe(accountant.countConversation({ messages: sent, tools }).totalTokens);
      expect(validateMessages(sent).issues).toEqual([]);
      expect(sent[0]).toEqual({ ...system, id: sent[0]!.id });
      if (index >= 40) expect(sent.map(stripId)).toContainEqual(pinned);
      // The last five messages, byte-identical and in order.
      expect(sent.slice(-5).map(stripId)).toEqual(appended.slice(-5));
    }
    const stats = context.stats();
    expect(stats.compactions).toBeGreaterThan(3);
    // Hysteresis: each compaction frees about a fifth of the effective window, so it runs once per that much
    // growth, never on consecutive steps.
    const effective = stats.effectiveWindowTokens;
    expect(events.starts.length).toBeLessThanOrEqual(Math.ceil(appendedTokens / (0.15 * effective)));
    for (let position = 1; position < compactionSteps.length; position++)
      expect(compactionSteps[position]! - compactionSteps[position - 1]!).toBeGreaterThan(1);
    expect(events.ends).toHaveLength(events.starts.length);
    for (const [position, end] of events.ends.entries()) {
      const start = events.starts[position]!;
      expect(end.tokensBefore).toBe(start.tokensBefore);
      expect(start.usageRatio).toBeGreaterThanOrEqual(0.7);
      expect(end.durationMs).toBeGreaterThanOrEqual(0);
      if (!end.applied) continue;
      expect(end.tokensAfter).toBeLessThan(end.tokensBefore);
      expect(end.tokensBefore - end.tokensAfter).toBeGreaterThanOrEqual(0.1 * (24_000 - 2000) * 0.5);
      expect(end.usageRatio).toBeLessThan(0.7);
      expect(end.actions.length).toBeGreaterThan(0);
      expect(end.prefixKeptMessages).toBeGreaterThanOrEqual(2);
    }
    expect(stats.freedTokens).toBeGreaterThan(0);
    // The warning fired on the way up, not on every step above 60%.
    expect(events.warnings.filter((warning) => warning.code === 'usage-warn').length).toBeLessThanOrEqual(
      stats.compactions + 1,
    );
    expect(inputTokens / 400).toBeLessThan(22_000);
    // The ledger covers the whole session, compacted steps included.
    expect(context.ledger().commands.some((command) => command.command === 'npm test -- --run 0')).toBe(true);
  });

  it('gives appended messages the ids assignIds would give, keeping given ids', async () => {
    const messages = [
      system,
      task,
      ...step(0),
      ...step(1),
      userMessage('again', { id: 'given' }),
      ...step(2),
    ];
    const context = manager({ messages: [] });
    for (const message of messages) context.append(message);
    expect(await context.messages()).toEqual(assignIds(messages));
  });
});

describe('when createContextManager compacts', () => {
  /** Appends steps until usage crosses `ratio`, calling messages() after each step like a loop. */
  async function fillTo(context: ContextManager, ratio: number, from = 0): Promise<number> {
    let index = from;
    while (context.stats().usageRatio < ratio) {
      context.append(step(index++));
      await context.messages();
    }
    return index;
  }

  it('does not compact while a tool call waits for its result, and compacts once it arrives', async () => {
    const context = manager();
    const events = record(context);
    let index = 0;
    for (; context.stats().usageRatio < 0.6; index++) context.append(step(index));
    await context.messages();
    const [call, result] = step(index);
    context.append(call);
    // A huge call input pushes usage over the threshold while the call is pending.
    context.append(
      assistantMessage([
        toolCall('Bash', { command: `echo ${'x '.repeat(4000)}` }, 'call_big'),
        toolCall('Bash', { command: 'true' }, 'call_second'),
      ]),
    );
    expect(context.stats().usageRatio).toBeGreaterThan(0.7);
    await context.messages();
    expect(events.starts).toHaveLength(0);
    context.append(toolMessage(toolResult({ toolCallId: 'call_big', toolName: 'Bash' }, 'ok')));
    await context.messages();
    expect(events.starts).toHaveLength(0);
    expect(context.stats().pendingToolCalls).toBe(2);
    context.append(result);
    context.append(toolMessage(toolResult({ toolCallId: 'call_second', toolName: 'Bash' }, 'ok')));
    const sent = await context.messages();
    expect(events.starts).toHaveLength(1);
    expect(events.ends[0]!.applied).toBe(true);
    expect(validateMessages(sent).issues).toEqual([]);
  });

  it('waits for minMessages', async () => {
    const context = manager({ minMessages: 10 });
    const events = record(context);
    context.append(assistantMessage('x '.repeat(16_000)));
    context.append(userMessage('go on'));
    expect(context.stats().usageRatio).toBeGreaterThan(0.7);
    await context.messages();
    expect(events.starts).toHaveLength(0);
    expect(context.stats().messageCount).toBe(4);
  });

  it('discards a compaction that frees too little, and does not retry it on every step', async () => {
    // Everything is pinned: compaction can free nothing.
    const context = manager();
    const events = record(context);
    for (let index = 0; context.stats().usageRatio < 0.72; index++)
      context.append(
        userMessage(`${index}: ${logOutput(index, 12)}`, { metadata: { pinned: true } }),
        // Unpinned replies are tiny: there is nothing to gain.
      );
    const before = context.currentMessages();
    await context.messages();
    expect(events.starts).toHaveLength(1);
    expect(events.ends[0]!.applied).toBe(false);
    expect(context.currentMessages()).toEqual(before);
    expect(events.warnings.map((warning) => warning.code)).toContain('compaction-skipped');
    for (let index = 0; index < 5; index++) {
      context.append(userMessage(`short ${index}`, { metadata: { pinned: true } }));
      await context.messages();
    }
    expect(events.starts).toHaveLength(1);
    expect(context.stats().skippedCompactions).toBe(1);
  });

  it('fires warnings on the way up with hysteresis, and critical ones', async () => {
    const context = manager({ warnRatio: 0.3, compactRatio: 0.8, criticalRatio: 0.9, targetRatio: 0.2 });
    const events = record(context);
    const index = await fillTo(context, 0.35);
    expect(events.warnings.map((warning) => warning.code)).toEqual(['usage-warn']);
    await fillTo(context, 0.5, index);
    expect(events.warnings.map((warning) => warning.code)).toEqual(['usage-warn']);
    context.append(assistantMessage('y '.repeat(9000)));
    context.append(userMessage('continue'));
    expect(events.warnings.map((warning) => warning.code)).toEqual(['usage-warn', 'usage-critical']);
    expect(context.stats().level).toBe('critical');
    await context.messages();
    expect(events.ends.at(-1)).toMatchObject({ reason: 'critical', applied: true });
    expect(context.stats().level).toBe('ok');
  });

  /** Fills to `ratio`, then appends one step whose Bash output has `lines` lines; returns what the model gets. */
  async function bigLastStep(ratio: number, lines: number) {
    const context = manager();
    const index = await fillTo(context, ratio);
    const call = step(index)[0];
    const result = toolMessage(
      toolResult({ toolCallId: `call_${index}`, toolName: 'Bash' }, logOutput(index, lines)),
    );
    context.append([call, result]);
    return { context, step: [call, result], sent: await context.messages() };
  }

  it('keeps the in-flight turn and the last messages even when they are large', async () => {
    const { context, step: last, sent } = await bigLastStep(0.65, 120);
    expect(context.stats().compactions).toBe(1);
    expect(sent.slice(-2).map(stripId)).toEqual(last);
  });

  it('keeps a last tool output larger than the compaction target whole while the window holds it', async () => {
    const { context, step: last, sent } = await bigLastStep(0.3, 500);
    expect(accountant.countMessage(last[1]!)).toBeGreaterThan(context.stats().effectiveWindowTokens * 0.5);
    expect(context.stats().compactions).toBeGreaterThanOrEqual(1);
    expect(sent.slice(-2).map(stripId)).toEqual(last);
    expect(context.stats().usageRatio).toBeLessThan(1);
  });

  it('compacts on demand with compact()', async () => {
    const context = manager();
    await fillTo(context, 0.55);
    const event = await context.compact();
    expect(event).toMatchObject({ type: 'compaction-end', reason: 'manual', applied: true });
    expect(context.stats().usageRatio).toBeLessThan(0.55);
  });
});

describe('recoverFromOverflow', () => {
  const overflow = {
    status: 400,
    error: {
      type: 'error',
      error: { type: 'invalid_request_error', message: 'prompt is too long: 30000 tokens > 24000 maximum' },
    },
  };

  async function busyManager(): Promise<ContextManager> {
    const context = manager({ compactRatio: 0.85, criticalRatio: 0.95, targetRatio: 0.5 });
    for (let index = 0; context.stats().usageRatio < 0.8; index++) context.append(step(index));
    await context.messages();
    return context;
  }

  it('compacts harder on a context-length error, once per overflow, and stops when it cannot progress', async () => {
    const context = await busyManager();
    const events = record(context);
    const before = context.stats().totalTokens;
    const first = await context.recoverFromOverflow(overflow);
    expect(first.recovered).toBe(true);
    if (!first.recovered) return;
    expect(first.overflow).toMatchObject({ provider: 'anthropic', requestTokens: 30_000, maxTokens: 24_000 });
    expect(validateMessages(first.messages).issues).toEqual([]);
    const stats = context.stats();
    expect(stats.totalTokens).toBeLessThan(before);
    // It learnt that the provider counts more than we do, and plans with that from now on.
    expect(stats.providerTokenRatio).toBeCloseTo(30_000 / before, 5);
    expect(stats.usageRatio).toBeLessThan(0.5);
    expect(events.ends).toHaveLength(1);
    expect(events.ends[0]).toMatchObject({ reason: 'overflow', applied: true });

    // The retry overflowed again: one harder try, then no more until the conversation moves on.
    const second = await context.recoverFromOverflow(overflow);
    const third = await context.recoverFromOverflow(overflow);
    expect(third).toEqual({ recovered: false, reason: 'no-progress', overflow: expect.anything() });
    expect(context.stats().overflowRecoveries).toBe(second.recovered ? 2 : 1);
    expect(events.ends.length).toBeLessThanOrEqual(2);

    // Once the conversation has moved on (more than the last messages it always keeps), an overflow is
    // recoverable again.
    for (let index = 1000; index < 1006; index++) context.append(step(index));
    const last = await context.recoverFromOverflow(overflow);
    expect(last.recovered).toBe(true);
  });

  it('reports no progress when nothing can be freed', async () => {
    const context = manager({ messages: [system, task, ...step(0)] });
    const result = await context.recoverFromOverflow(new Error('context_length_exceeded'));
    expect(result).toMatchObject({ recovered: false, reason: 'no-progress' });
  });

  it('leaves other errors alone and refuses while a tool call is pending', async () => {
    const context = await busyManager();
    const tokens = context.stats().totalTokens;
    expect(await context.recoverFromOverflow(new Error('rate limited'))).toEqual({
      recovered: false,
      reason: 'not-overflow',
    });
    context.append(step(500)[0]);
    expect(await context.recoverFromOverflow(overflow)).toMatchObject({
      recovered: false,
      reason: 'pending-tool-calls',
    });
    expect(context.stats().totalTokens).toBeGreaterThan(tokens);
  });
});

describe('rehydration', () => {
  function editStep(index: number, path: string): Message[] {
    const call = toolCall(
      'Edit',
      { file_path: path, old_string: `v${index}`, new_string: `v${index + 1}` },
      `edit_${index}`,
    );
    return [assistantMessage([call]), toolMessage(toolResult(call, 'The file was updated.'))];
  }

  async function compactedWith(readFile: (path: string) => string | undefined | Promise<string | undefined>) {
    const archive = createMemoryArchive();
    const context = manager({ archive, rehydration: { readFile, maxFiles: 2, maxTokens: 600 } });
    const events = record(context);
    context.append(editStep(1, 'src/old.ts'));
    context.append(editStep(2, 'src/retry.ts'));
    context.append(editStep(3, 'src/backoff.ts'));
    for (let index = 0; events.ends.length === 0; index++) {
      context.append(step(index * 4 + 1)); // reads only: the edited files stay the most recent changes
      await context.messages();
    }
    return { context, events, sent: await context.messages() };
  }

  it('re-attaches the most recently modified files after a compaction, capped in tokens', async () => {
    const reads: string[] = [];
    const { context, events, sent } = await compactedWith(async (path) => {
      reads.push(path);
      return path === 'src/backoff.ts'
        ? `export const backoff = 2;\n${'// filler\n'.repeat(400)}`
        : 'export {};';
    });
    expect(reads).toEqual(['src/backoff.ts', 'src/retry.ts']);
    expect(events.ends[0]!.rehydratedFiles).toEqual(['src/backoff.ts', 'src/retry.ts']);
    const [call, result] = sent.slice(-2) as [IdentifiedMessage, IdentifiedMessage];
    expect(call.metadata?.origin).toBe('rehydration');
    const text = messageText(result);
    expect(text).toContain('src/backoff.ts (cut to fit)');
    expect(text).toContain('export const backoff = 2;');
    expect(text).toContain('src/retry.ts');
    expect(accountant.countMessage(result)).toBeLessThanOrEqual(600 + 40);
    expect(validateMessages(sent).issues).toEqual([]);
    expect(context.stats().totalTokens).toBe(
      accountant.countConversation({ messages: sent, tools }).totalTokens,
    );
  });

  it('skips files that are gone or cannot be read, with a warning for failures', async () => {
    const { events, sent } = await compactedWith((path) => {
      if (path === 'src/backoff.ts') throw new Error('EACCES');
      return undefined;
    });
    expect(events.warnings.map((warning) => warning.message)).toContain(
      'could not read src/backoff.ts: EACCES',
    );
    expect(events.ends[0]!.rehydratedFiles).toEqual([]);
    expect(sent.at(-1)?.metadata?.origin).not.toBe('rehydration');
  });
});

describe('createContextManager input checks', () => {
  it('names the option that is wrong', () => {
    const cases: Array<[Partial<ContextManagerOptions>, string]> = [
      [{ warnRatio: 1.5 }, 'warnRatio'],
      [{ compactRatio: 0 }, 'compactRatio'],
      [{ criticalRatio: Number.NaN }, 'criticalRatio'],
      [{ targetRatio: 0.8 }, 'targetRatio'],
      [{ compactRatio: 0.95 }, 'compactRatio'],
      [{ warnRatio: 0.95 }, 'warnRatio'],
      [{ hysteresisRatio: -0.1 }, 'hysteresisRatio'],
      [{ minMessages: 2.5 }, 'minMessages'],
      [{ keepRecentMessages: -1 }, 'keepRecentMessages'],
      [{ minFreedRatio: 2 }, 'minFreedRatio'],
      [{ maxOverflowRecoveries: -1 }, 'maxOverflowRecoveries'],
      [{ contextWindow: 0 }, 'contextWindow'],
      [{ contextWindow: 1000, outputReserve: 1000 }, 'outputReserve'],
      [{ contextWindow: 50, outputReserve: 10 }, 'contextWindow'],
      [{ provider: 'google' as never }, 'provider'],
      [{ tools: {} as never }, 'tools'],
      [{ rehydration: { readFile: 'no' as never } }, 'rehydration.readFile'],
      [{ rehydration: { readFile: () => '', maxTokens: -5 } }, 'rehydration.maxTokens'],
    ];
    for (const [options, option] of cases) {
      let caught: unknown;
      try {
        manager(options);
      } catch (error) {
        caught = error;
      }
      expect(caught, option).toBeInstanceOf(InvalidArgumentError);
      expect((caught as InvalidArgumentError).option, JSON.stringify(options)).toBe(option);
    }
    expect(() => createContextManager({})).toThrow(InvalidArgumentError);
    expect(() => createContextManager(null as never)).toThrow(InvalidArgumentError);
  });

  it('takes the window from a model id, or throws for an unknown model without a window', () => {
    const context = createContextManager({ model: 'openai/gpt-4o-2024-08-06', messages: [system] });
    expect(context.stats()).toMatchObject({ contextWindow: 128_000, outputReserve: 16_384 });
    expect(() => createContextManager({ model: 'my-local-model' })).toThrow(UnknownModelError);
    expect(createContextManager({ model: 'my-local-model', contextWindow: 8000 }).stats().contextWindow).toBe(
      8000,
    );
  });

  it('rejects bad messages with their index and field, leaving the conversation unchanged', () => {
    const context = manager();
    const before = context.stats();
    const bad: Array<[unknown, number, string | undefined]> = [
      [[userMessage('fine'), { role: 'robot', content: 'x' }], 1, 'role'],
      [[userMessage('fine'), userMessage('fine too'), { role: 'user', content: 42 }], 2, 'content'],
      [
        [{ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'a', toolName: 'b' }] }],
        0,
        'content[0].output',
      ],
      [[userMessage('x', { id: 'same' }), userMessage('y', { id: 'same' })], 1, 'id'],
      [userMessage('x', { id: 7 as never }), 0, 'id'],
    ];
    for (const [input, index, path] of bad) {
      let caught: unknown;
      try {
        context.append(input as Message[]);
      } catch (error) {
        caught = error;
      }
      expect(caught, JSON.stringify(input)).toBeInstanceOf(InvalidMessageError);
      expect(isPrecisError(caught)).toBe(true);
      expect((caught as InvalidMessageError).index).toBe(index);
      expect((caught as InvalidMessageError).path).toBe(path);
    }
    expect(context.stats()).toEqual(before);
    context.append(userMessage('x', { id: 'taken' }));
    expect(() => context.append(userMessage('y', { id: 'taken' }))).toThrow(InvalidMessageError);
  });

  it('subscribes and unsubscribes listeners, and rejects unknown events', async () => {
    const context = manager({ warnRatio: 0.01, compactRatio: 0.8, criticalRatio: 0.9 });
    const seen: string[] = [];
    const unsubscribe = context.on('warning', (event) => seen.push(event.code));
    unsubscribe();
    context.append(step(0));
    expect(seen).toEqual([]);
    expect(() => context.on('compaction' as never, () => undefined)).toThrow(InvalidArgumentError);
    expect(() => context.on('warning', 'no' as never)).toThrow(InvalidArgumentError);
  });

  it('counts only the system prompt (the leading system messages) as a fixed cost', () => {
    const context = manager({ tools: [] });
    const prompt = context.stats().systemTokens;
    expect(prompt).toBe(accountant.countMessage(system));
    const note = systemMessage('Session restarted: the repository was re-cloned at commit 4f2a9c1.');
    context.append(note);
    const after = context.stats();
    expect(after.systemTokens).toBe(prompt);
    expect(after.effectiveWindowTokens).toBe(24_000 - 2000 - prompt);
    const leading = createContextManager({
      contextWindow: 24_000,
      accountant,
      messages: [system, note, task],
    });
    expect(leading.stats().systemTokens).toBe(prompt + accountant.countMessage(note));
  });

  it('counts tool schemas off the effective window and follows setTools', () => {
    const context = manager({ tools: [] });
    const bare = context.stats();
    context.setTools(tools);
    const withTools = context.stats();
    expect(withTools.toolSchemaTokens).toBe(accountant.countTools(tools));
    expect(withTools.effectiveWindowTokens).toBe(bare.effectiveWindowTokens - withTools.toolSchemaTokens);
    expect(withTools.totalTokens).toBe(
      accountant.countConversation({ messages: context.currentMessages(), tools }).totalTokens,
    );
  });
});
