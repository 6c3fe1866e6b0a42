import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it, vi } from 'vitest';
import { InvalidArgumentError } from '../../errors/index.js';
import { validateMessages } from '../../messages/validate/index.js';
import { createTokenAccountant } from '../../tokens/index.js';
import { expectEachMessageAboutOnce } from '../integrations.test-support.js';
import { compactStep } from './compact-step.js';
import { fromLanguageModelPrompt, toolDefinitionsOf } from './language-model-prompt.js';
import { promptCaches } from './prompt-key-cache.test-support.js';

// The real cache, kept at hand to read how much checking and hashing the integration did.
vi.mock('./prompt-key-cache.js', async (importOriginal) =>
  (await import('./prompt-key-cache.test-support.js')).recordingPromptKeyCacheModule(importOriginal),
);

type GenerateResult = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

const runTests = tool({
  description: 'Run the test suite.',
  inputSchema: jsonSchema<{ filter: string }>({
    type: 'object',
    properties: { filter: { type: 'string' } },
    required: ['filter'],
  }),
  execute: async ({ filter }) =>
    Array.from({ length: 30 }, (_, line) => `ok ${line} - ${filter} case ${line} passes in ${line}ms`).join(
      '\n',
    ),
});

function testRunningModel(steps: number) {
  let step = 0;
  return new MockLanguageModelV3({
    modelId: 'mock-model',
    doGenerate: async (): Promise<GenerateResult> => {
      if (step >= steps)
        return {
          content: [{ type: 'text', text: 'green' }],
          finishReason: { unified: 'stop', raw: undefined },
          usage,
          warnings: [],
        };
      const current = step++;
      return {
        content: [
          {
            type: 'tool-call',
            toolCallId: `call-${current}`,
            toolName: 'run_tests',
            input: JSON.stringify({ filter: `suite-${current}` }),
          },
        ],
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
}

describe('compactStep', () => {
  it('keeps a 200-step loop within the budget through prepareStep', async () => {
    const tools = { run_tests: runTests };
    const step = compactStep({ budget: 6000, tools });
    const model = testRunningModel(200);
    const result = await generateText({
      model,
      prompt: 'Make the suite green.',
      tools: { ...tools, ...step.tools },
      prepareStep: step,
      stopWhen: stepCountIs(201),
    });
    expect(result.text).toBe('green');
    const accountant = createTokenAccountant();
    let largest = 0;
    for (const call of model.doGenerateCalls) {
      const messages = fromLanguageModelPrompt(call.prompt);
      expect(validateMessages(messages).issues).toEqual([]);
      largest = Math.max(
        largest,
        accountant.countConversation({ messages, tools: toolDefinitionsOf(call.tools) }).totalTokens,
      );
    }
    expect(largest).toBeLessThanOrEqual(6000);
    expect(largest).toBeGreaterThan(3000);
    // Every step is handed the whole conversation (about 40,000 messages in all): each of its 401 messages is
    // checked and hashed about once.
    const { checkedMessages, hashedMessages } = promptCaches.at(-1)!.stats();
    expectEachMessageAboutOnce({ processed: checkedMessages, hashed: hashedMessages }, 401);
    // The step's archive holds what was compacted away.
    const handle = JSON.stringify(model.doGenerateCalls.at(-1)!.prompt).match(/h-[0-9a-f]{20}/)?.[0];
    expect(handle).toBeDefined();
    const original = await step.tools.expand_context.execute!(
      { handle: handle! },
      { toolCallId: 'x', messages: [] },
    );
    expect(original).toMatch(/^Archived /);
  });

  it('returns the messages as given while they fit', async () => {
    const step = compactStep({ contextWindow: 100_000 });
    const messages = [{ role: 'user' as const, content: 'hi' }];
    const result = await step({ messages, model: 'gpt-4o' });
    expect(result.messages).toBe(messages);
  });

  it('checks its options', () => {
    expect(() => compactStep({ tools: [] as never })).toThrow(InvalidArgumentError);
    expect(() => compactStep({ budget: -1 })).toThrow(InvalidArgumentError);
  });
});
