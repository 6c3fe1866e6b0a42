import { AIMessage, type BaseMessage, HumanMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { tool } from '@langchain/core/tools';
import { createAgent } from 'langchain';
import { describe, expect, it, vi } from 'vitest';
import { expandTool } from '../../archive/expand.js';
import { InvalidArgumentError, InvalidMessageError } from '../../errors/index.js';
import type { ToolDefinition } from '../../messages/types.js';
import { validateMessages } from '../../messages/validate/index.js';
import type { Strategy } from '../../strategies/strategy.js';
import { createTokenAccountant } from '../../tokens/index.js';
import type { ContextManagerEvent } from '../conversation-sessions.js';
import {
  expectEachMessageAboutOnce,
  fileContents,
  readFileSchema,
  toolCountingAccountant,
} from '../integrations.test-support.js';
import { createExpandTool } from './expand-tool.js';
import type { LangChainMessageCache } from './langchain-message-cache.js';
import { fromLangChainMessages } from './langchain-messages.js';
import { precisMiddleware } from './precis-middleware.js';

// The real cache, kept at hand to read how much converting and hashing the middleware did.
const { messageCaches } = vi.hoisted(() => ({ messageCaches: [] as LangChainMessageCache[] }));
vi.mock('./langchain-message-cache.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('./langchain-message-cache.js')>();
  return {
    ...original,
    createLangChainMessageCache: () => {
      const cache = original.createLangChainMessageCache();
      messageCaches.push(cache);
      return cache;
    },
  };
});

const readFile = tool(async ({ path }: { path: string }) => fileContents(path), {
  name: 'read_file',
  description: 'Read a file of the repository.',
  schema: readFileSchema,
});

const toolDefinitions: ToolDefinition[] = [
  { name: 'read_file', description: 'Read a file of the repository.', inputSchema: readFileSchema },
  expandTool,
];

function readCall(step: number): AIMessage {
  return new AIMessage({
    content: `Reading module ${step}.`,
    tool_calls: [
      { type: 'tool_call', id: `call-${step}`, name: 'read_file', args: { path: `src/module-${step}.ts` } },
    ],
  });
}

/** A fake model scripted to read `steps` files, then answer; `error` is thrown at the given call instead. */
function fileReadingModel(steps: number, error?: { call: number; error: Error }) {
  const model = fakeModel();
  for (let step = 0; step < steps; step++) {
    if (error !== undefined && error.call === step) model.respond(error.error);
    model.respond(readCall(step));
  }
  model.respond(new AIMessage('All files read.'));
  return model;
}

const accountant = createTokenAccountant();
const tokensOf = (messages: BaseMessage[]) =>
  accountant.countConversation({ messages: fromLangChainMessages(messages), tools: toolDefinitions })
    .totalTokens;

const systemPrompt = 'You are a careful coding agent.';
const task = 'Read every module of the repository and report.';

/** Runs an agent on the task that reads `steps` files, then answers, under a precis middleware with `budget`. */
async function runReadingAgent(steps: number, budget: number) {
  const model = fileReadingModel(steps);
  const middleware = precisMiddleware({ budget });
  const agent = createAgent({ model, tools: [readFile], systemPrompt, middleware: [middleware] });
  const result = await agent.invoke({ messages: [new HumanMessage(task)] }, { recursionLimit: 2000 });
  return { model, middleware, result };
}

describe('precisMiddleware for createAgent', () => {
  it('keeps every request of a 200-step agent within the budget, valid, with tool calls paired', async () => {
    const { model, middleware, result } = await runReadingAgent(200, 8000);

    expect(result.messages.at(-1)?.text).toBe('All files read.');
    expect(model.calls).toHaveLength(201);
    let largest = 0;
    for (const call of model.calls) {
      largest = Math.max(largest, tokensOf(call.messages));
      expect(validateMessages(fromLangChainMessages(call.messages)).issues).toEqual([]);
      expect(call.messages[0]?.text).toBe(systemPrompt);
    }
    expect(largest).toBeLessThanOrEqual(8000);
    expect(largest).toBeGreaterThan(4000);
    // The latest tool exchange reaches the model whole: the call and its result, with the same id.
    const lastRequest = model.calls.at(-1)!.messages;
    const lastCall = lastRequest.findLast((message) => message.type === 'ai') as AIMessage;
    expect(lastCall.tool_calls?.[0]?.id).toBe('call-199');
    expect(lastRequest.at(-1)).toMatchObject({ type: 'tool', tool_call_id: 'call-199' });
    // The agent's state itself was compacted (committed), the task kept.
    // Uncompacted it would hold two messages per call (403); compactions land at the target, leaving stubs.
    expect(result.messages.length).toBeLessThan(model.calls.length);
    expect(result.messages.some((message) => message.text === task)).toBe(true);
    // Each of the 401 messages of the loop is converted and hashed about once; the messages of each committed
    // compaction are new objects, converted once too.
    const { convertedMessages, hashedMessages } = messageCaches.at(-1)!.stats();
    expectEachMessageAboutOnce({ processed: convertedMessages, hashed: hashedMessages }, 401);

    // A handle in the last request brings back the first file.
    const lastText = JSON.stringify(model.calls.at(-1)!.messages.map((message) => message.content));
    const handles = [...new Set(lastText.match(/h-[0-9a-f]{20}/g) ?? [])];
    expect(handles.length).toBeGreaterThan(0);
    const expand = createExpandTool({ archive: middleware.archive });
    const expanded: string[] = await Promise.all(handles.map((handle) => expand.invoke({ handle })));
    const firstFileLine = fileContents('src/module-0.ts').split('\n')[5]!;
    expect(lastText).not.toContain(firstFileLine);
    // The summary names one handle, an index: a line per original with its handle and first line.
    const index = expanded.find((text) => text.startsWith('Archived index'));
    const line = index?.split('\n').find((candidate) => / tool output .*src\/module-0\.ts$/.test(candidate));
    const original: string = await expand.invoke({
      handle: /h-[0-9a-f]{20}/.exec(line ?? '')?.[0] ?? 'no line names the file',
    });
    expect(original).toContain(firstFileLine);
  });

  it('converts and hashes each message once over a 200-step agent loop, not the whole history per step', async () => {
    const { model, result } = await runReadingAgent(200, 1_000_000);
    expect(model.calls).toHaveLength(201);
    // Nothing compacted: the history grows to 401 messages; converting it whole at every step would convert
    // 40,401 messages.
    const fullConversions = model.calls.reduce((sum, call) => sum + call.messages.length - 1, 0);
    expect(fullConversions).toBe(40_401);
    expect(result.messages).toHaveLength(402);
    const { convertedMessages, hashedMessages } = messageCaches.at(-1)!.stats();
    expectEachMessageAboutOnce({ processed: convertedMessages, hashed: hashedMessages }, 401);
  });

  it('counts the tool schemas once when a conversation starts', async () => {
    const { accountant: counting, counted } = toolCountingAccountant();
    const middleware = precisMiddleware({ budget: 8000, accountant: counting });
    const model = fakeModel().respond(new AIMessage('first')).respond(new AIMessage('second'));
    const agent = createAgent({ model, tools: [readFile], middleware: [middleware] });
    // The first call teaches the middleware the tools; the second conversation starts with them.
    await agent.invoke({ messages: [new HumanMessage('one')] });
    expect(counted).toEqual([]);
    await agent.invoke({ messages: [new HumanMessage('two')] });
    expect(counted).toEqual([['read_file', 'expand_context']]);
  });

  it('gives the agent the expand tool', async () => {
    const model = fakeModel()
      .respondWithTools([
        { name: 'expand_context', args: { handle: 'h-00000000000000000000' }, id: 'expand-1' },
      ])
      .respond(new AIMessage('ok'));
    const agent = createAgent({ model, tools: [readFile], middleware: [precisMiddleware({ budget: 8000 })] });
    const result = await agent.invoke({ messages: [new HumanMessage('hi')] });
    const answer = result.messages.find((message) => message.type === 'tool');
    expect(answer?.text).toMatch(/^Error: no archived content has the handle "h-00000000000000000000"/);
  });

  it('recovers from an injected context-length error with one retry and commits the compaction', async () => {
    const overflow = Object.assign(
      new Error(
        "This model's maximum context length is 6000 tokens. However, your messages resulted in 7100 tokens.",
      ),
      { status: 400, code: 'context_length_exceeded' },
    );
    const events: ContextManagerEvent[] = [];
    const model = fileReadingModel(30, { call: 12, error: overflow });
    const agent = createAgent({
      model,
      tools: [readFile],
      middleware: [precisMiddleware({ budget: 8000, onEvent: (event) => events.push(event) })],
    });
    const result = await agent.invoke({ messages: [new HumanMessage(task)] }, { recursionLimit: 500 });
    expect(result.messages.at(-1)?.text).toBe('All files read.');
    // 31 answers and one failed call.
    expect(model.calls).toHaveLength(32);
    const failed = model.calls[12]!.messages;
    const retried = model.calls[13]!.messages;
    expect(tokensOf(retried)).toBeLessThan(tokensOf(failed));
    expect(validateMessages(fromLangChainMessages(retried)).valid).toBe(true);
    const recoveries = events.filter(
      (event) => event.type === 'compaction-end' && event.reason === 'overflow',
    );
    expect(recoveries).toHaveLength(1);
    // The next request continues from the recovered (committed) conversation, not the overflowing one.
    const texts = (messages: BaseMessage[]) => messages.map((message) => message.text);
    expect(texts(model.calls[14]!.messages).slice(0, retried.length)).toEqual(texts(retried));
  });

  it('rethrows errors that are not context overflows', async () => {
    const model = fileReadingModel(3, { call: 1, error: new Error('socket hang up') });
    const agent = createAgent({ model, tools: [readFile], middleware: [precisMiddleware({ budget: 8000 })] });
    await expect(agent.invoke({ messages: [new HumanMessage(task)] })).rejects.toThrow('socket hang up');
  });

  it('never commits a failed compaction', async () => {
    const failing: Strategy = {
      name: 'failing-summary',
      apply() {
        throw new Error('summarizer unavailable');
      },
    };
    const events: ContextManagerEvent[] = [];
    const model = fileReadingModel(20);
    const agent = createAgent({
      model,
      tools: [readFile],
      middleware: [
        precisMiddleware({ budget: 8000, strategies: [failing], onEvent: (event) => events.push(event) }),
      ],
    });
    const result = await agent.invoke({ messages: [new HumanMessage(task)] }, { recursionLimit: 500 });
    expect(result.messages.at(-1)?.text).toBe('All files read.');
    // Every message is still there, untouched: 1 task + 20 calls + 20 results + the answer.
    expect(result.messages).toHaveLength(42);
    expect(result.messages.map((message) => message.text)).toContain(fileContents('src/module-0.ts'));
    expect(
      events.some((event) => event.type === 'warning' && event.message.includes('summarizer unavailable')),
    ).toBe(true);
  });

  it('checks its options and the messages', async () => {
    expect(() => precisMiddleware({ budget: 1.5 })).toThrow(InvalidArgumentError);
    expect(() => precisMiddleware({ contextWindow: 8000, targetRatio: 0.9 })).toThrow(/targetRatio/);
    const middleware = precisMiddleware({ budget: 8000 });
    const hook = middleware.beforeModel as (
      state: { messages: BaseMessage[] },
      runtime: unknown,
    ) => Promise<unknown>;
    const bad = new AIMessage({ content: '', tool_calls: [{ name: 'read_file', args: {} }] });
    const error = await hook({ messages: [new HumanMessage('hi'), bad] }, {}).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(InvalidMessageError);
    expect(error).toMatchObject({ index: 1, path: 'tool_calls[0].id' });
  });
});
