import { APICallError, generateText, jsonSchema, stepCountIs, streamText, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it, vi } from 'vitest';
import { InvalidArgumentError, InvalidMessageError, UnknownModelError } from '../../errors/index.js';
import { validateMessages } from '../../messages/validate/index.js';
import { createTokenAccountant } from '../../tokens/index.js';
import type { ContextManagerEvent } from '../conversation-sessions.js';
import {
  expectEachMessageAboutOnce,
  fileContents,
  readFileSchema,
  toolCountingAccountant,
} from '../integrations.test-support.js';
import {
  fromLanguageModelPrompt,
  type LanguageModelPrompt,
  toolDefinitionsOf,
} from './language-model-prompt.js';
import { precisMiddleware } from './precis-middleware.js';
import { promptCaches } from './prompt-key-cache.test-support.js';

// The real cache, kept at hand to read how much checking and hashing the integration did.
vi.mock('./prompt-key-cache.js', async (importOriginal) =>
  (await import('./prompt-key-cache.test-support.js')).recordingPromptKeyCacheModule(importOriginal),
);

type GenerateResult = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;
type CallOptions = MockLanguageModelV3['doGenerateCalls'][number];

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

function toolCallResult(step: number): GenerateResult {
  return {
    content: [
      { type: 'text', text: `Reading the next file (step ${step}).` },
      {
        type: 'tool-call',
        toolCallId: `call-${step}`,
        toolName: 'read_file',
        input: JSON.stringify({ path: `src/module-${step}.ts` }),
      },
    ],
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage,
    warnings: [],
  };
}

const finalResult: GenerateResult = {
  content: [{ type: 'text', text: 'All files read.' }],
  finishReason: { unified: 'stop', raw: 'stop' },
  usage,
  warnings: [],
};

const readFile = tool({
  description: 'Read a file of the repository.',
  inputSchema: jsonSchema<{ path: string }>(readFileSchema),
  execute: async ({ path }) => fileContents(path),
});

/** A mock model that reads one file per step for `steps` steps, then answers. */
function fileReadingModel(steps: number, failAt?: { call: number; error: unknown }) {
  // Steps are counted by the model: compaction folds earlier tool results out of the prompt.
  let calls = 0;
  let step = 0;
  return new MockLanguageModelV3({
    modelId: 'mock-model',
    doGenerate: async () => {
      const call = calls++;
      if (failAt !== undefined && call === failAt.call) throw failAt.error;
      return step < steps ? toolCallResult(step++) : finalResult;
    },
  });
}

const accountant = createTokenAccountant();

function promptTokens(options: CallOptions): number {
  return accountant.countConversation({
    messages: fromLanguageModelPrompt(options.prompt),
    tools: toolDefinitionsOf(options.tools),
  }).totalTokens;
}

function promptText(prompt: LanguageModelPrompt): string {
  return JSON.stringify(prompt);
}

describe('precisMiddleware', () => {
  it('keeps every prompt of a 300-step tool loop within the budget, valid, and expandable', async () => {
    const precis = precisMiddleware({ budget: 8000 });
    const inner = fileReadingModel(300);
    const result = await generateText({
      model: wrapLanguageModel({ model: inner, middleware: precis }),
      system: 'You are a careful coding agent.',
      prompt: 'Read every module of the repository and report.',
      tools: { read_file: readFile, ...precis.tools },
      stopWhen: stepCountIs(301),
    });
    expect(result.text).toBe('All files read.');
    expect(result.steps).toHaveLength(301);
    expect(inner.doGenerateCalls).toHaveLength(301);

    let largest = 0;
    for (const call of inner.doGenerateCalls) {
      largest = Math.max(largest, promptTokens(call));
      const validation = validateMessages(fromLanguageModelPrompt(call.prompt));
      expect(validation.issues).toEqual([]);
      // The task and the system prompt are never compacted away.
      expect(call.prompt[0]).toEqual({ role: 'system', content: 'You are a careful coding agent.' });
    }
    expect(largest).toBeLessThanOrEqual(8000);
    // Without compaction the last prompt would hold 300 files: far beyond the budget.
    expect(largest).toBeGreaterThan(4000);

    // Step k resends the whole conversation, rebuilt: 2 + 2k messages, 90,902 over the loop. Each of its 602
    // messages is checked and hashed about once.
    const { checkedMessages, hashedMessages } = promptCaches.at(-1)!.stats();
    expectEachMessageAboutOnce({ processed: checkedMessages, hashed: hashedMessages }, 602);

    // The first file was compacted out of the last prompt; its handle brings the original back.
    const last = inner.doGenerateCalls.at(-1)!;
    const lastText = promptText(last.prompt);
    expect(lastText).not.toContain(fileContents('src/module-0.ts').split('\n')[5]);
    const handles = [...new Set(lastText.match(/h-[0-9a-f]{20}/g) ?? [])];
    expect(handles.length).toBeGreaterThan(0);
    const expand = (handle: string) =>
      precis.tools.expand_context.execute!(
        { handle },
        { toolCallId: 'expand', messages: [] },
      ) as Promise<string>;
    const expanded = await Promise.all(handles.map(expand));
    // The summary names one handle, an index: a line per original with its handle and first line, as an agent
    // reads it to pick the file's.
    const index = expanded.find((text) => text.startsWith('Archived index'));
    const line = index?.split('\n').find((candidate) => / tool output .*src\/module-0\.ts$/.test(candidate));
    const original = await expand(/h-[0-9a-f]{20}/.exec(line ?? '')?.[0] ?? 'no line names the file');
    expect(original).toContain(fileContents('src/module-0.ts').split('\n')[5]);
  });

  it('counts the tool schemas once when a conversation starts', async () => {
    const { accountant: counting, counted } = toolCountingAccountant();
    await generateText({
      model: wrapLanguageModel({
        model: fileReadingModel(0),
        middleware: precisMiddleware({ budget: 8000, accountant: counting }),
      }),
      prompt: 'Read nothing.',
      tools: { read_file: readFile },
    });
    expect(counted).toEqual([['read_file']]);
  });

  it('sends a prompt untouched while it fits', async () => {
    const inner = fileReadingModel(2);
    await generateText({
      model: wrapLanguageModel({ model: inner, middleware: precisMiddleware({ budget: 100_000 }) }),
      prompt: 'Read two modules.',
      tools: { read_file: readFile },
      stopWhen: stepCountIs(5),
    });
    const direct = fileReadingModel(2);
    await generateText({
      model: direct,
      prompt: 'Read two modules.',
      tools: { read_file: readFile },
      stopWhen: stepCountIs(5),
    });
    expect(inner.doGenerateCalls.map((call) => call.prompt)).toEqual(
      direct.doGenerateCalls.map((call) => call.prompt),
    );
  });

  it('recovers from an injected context-length error with one retry', async () => {
    const overflow = new APICallError({
      message:
        "This model's maximum context length is 6000 tokens. However, your messages resulted in 7100 tokens.",
      url: 'https://api.openai.com/v1/chat/completions',
      requestBodyValues: {},
      statusCode: 400,
      responseBody: JSON.stringify({
        error: {
          message:
            "This model's maximum context length is 6000 tokens. However, your messages resulted in 7100 tokens.",
          type: 'invalid_request_error',
          code: 'context_length_exceeded',
        },
      }),
      isRetryable: false,
    });
    const events: ContextManagerEvent[] = [];
    const precis = precisMiddleware({ budget: 8000, onEvent: (event) => events.push(event) });
    const inner = fileReadingModel(40, { call: 12, error: overflow });
    const result = await generateText({
      model: wrapLanguageModel({ model: inner, middleware: precis }),
      prompt: 'Read forty modules.',
      tools: { read_file: readFile },
      stopWhen: stepCountIs(41),
    });
    expect(result.text).toBe('All files read.');
    // 41 steps, one of them sent twice.
    expect(inner.doGenerateCalls).toHaveLength(42);
    const failed = inner.doGenerateCalls[12]!;
    const retried = inner.doGenerateCalls[13]!;
    expect(promptTokens(retried)).toBeLessThan(promptTokens(failed));
    expect(validateMessages(fromLanguageModelPrompt(retried.prompt)).valid).toBe(true);
    const recoveries = events.filter(
      (event) => event.type === 'compaction-end' && event.reason === 'overflow',
    );
    expect(recoveries).toHaveLength(1);
  });

  it('rethrows an error that is not a context overflow, without retrying', async () => {
    const inner = fileReadingModel(3, { call: 1, error: new Error('socket hang up') });
    await expect(
      generateText({
        model: wrapLanguageModel({ model: inner, middleware: precisMiddleware({ budget: 8000 }) }),
        prompt: 'Read three modules.',
        tools: { read_file: readFile },
        stopWhen: stepCountIs(4),
        maxRetries: 0,
      }),
    ).rejects.toThrow('socket hang up');
    expect(inner.doGenerateCalls).toHaveLength(2);
  });

  it('compacts streamed calls too', async () => {
    const precis = precisMiddleware({ budget: 3000 });
    let calls = 0;
    const inner = new MockLanguageModelV3({
      doStream: async () => {
        const results = calls++;
        const parts =
          results < 30
            ? [
                {
                  type: 'tool-call' as const,
                  toolCallId: `call-${results}`,
                  toolName: 'read_file',
                  input: JSON.stringify({ path: `src/module-${results}.ts` }),
                },
                {
                  type: 'finish' as const,
                  finishReason: { unified: 'tool-calls' as const, raw: undefined },
                  usage,
                },
              ]
            : [
                { type: 'text-start' as const, id: 't' },
                { type: 'text-delta' as const, id: 't', delta: 'done' },
                { type: 'text-end' as const, id: 't' },
                {
                  type: 'finish' as const,
                  finishReason: { unified: 'stop' as const, raw: undefined },
                  usage,
                },
              ];
        return {
          stream: new ReadableStream({
            start(controller) {
              for (const part of parts) controller.enqueue(part);
              controller.close();
            },
          }),
        };
      },
    });
    const result = streamText({
      model: wrapLanguageModel({ model: inner, middleware: precis }),
      prompt: 'Read thirty modules.',
      tools: { read_file: readFile },
      stopWhen: stepCountIs(31),
    });
    expect(await result.text).toBe('done');
    expect(calls).toBe(31);
    for (const call of inner.doStreamCalls) expect(promptTokens(call)).toBeLessThanOrEqual(3000);
  });

  it('takes the window from the wrapped model id when no budget is given', async () => {
    const unknown = new MockLanguageModelV3({ modelId: 'my-local-model', doGenerate: finalResult });
    await expect(
      generateText({
        model: wrapLanguageModel({ model: unknown, middleware: precisMiddleware() }),
        prompt: 'Hi',
      }),
    ).rejects.toThrow(UnknownModelError);
    const known = new MockLanguageModelV3({ modelId: 'gpt-4o', doGenerate: finalResult });
    const result = await generateText({
      model: wrapLanguageModel({ model: known, middleware: precisMiddleware() }),
      prompt: 'Hi',
    });
    expect(result.text).toBe('All files read.');
  });

  it('checks its options and the prompt', async () => {
    expect(() => precisMiddleware({ budget: 0 })).toThrow(InvalidArgumentError);
    expect(() => precisMiddleware({ budget: 8000, model: 'gpt-4o' })).toThrow(InvalidArgumentError);
    expect(() => precisMiddleware({ model: 'no-such-model' })).toThrow(UnknownModelError);
    expect(() => precisMiddleware({ budget: 8000, compactRatio: 2 })).toThrow(/compactRatio/);
    const precis = precisMiddleware({ budget: 8000 });
    const model = new MockLanguageModelV3();
    const bad = [
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 1, toolName: 'x', input: {} }] },
    ] as unknown as LanguageModelPrompt;
    const error = await Promise.resolve(
      precis.transformParams!({ type: 'generate', params: { prompt: bad }, model }),
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidMessageError);
    expect(error).toMatchObject({ index: 1, path: 'content[0].toolCallId' });
  });
});
