import { describe, expect, it } from 'vitest';
import { createMemoryArchive } from '../../archive/archive-store.js';
import { compactAsync } from '../../engine/compact.js';
import { InvalidMessageError, isPrecisError } from '../../errors/index.js';
import { messageText } from '../../messages/content.js';
import { assignIds } from '../../messages/ids.js';
import type { IdentifiedMessage, Message } from '../../messages/types.js';
import { validateMessages } from '../../messages/validate/index.js';
import { createConversationBuilder } from '../../testing/message-builders.js';
import { createScriptedLlmClient } from '../../testing/scripted-llm-client.js';
import { createTokenAccountant } from '../../tokens/index.js';
import { foldIntoSummary } from '../fold-into-summary/fold-into-summary.js';
import { filler } from '../llm-strategies.test-support.js';
import type { AsyncStrategyContext } from '../strategy.js';
import { llmProgressive } from './llm-progressive.js';

const accountant = createTokenAccountant();
const countOf = (messages: readonly Message[]) => accountant.countConversation(messages).totalTokens;

function session(turns: number): Message[] {
  const builder = createConversationBuilder()
    .system('You are a coding agent.')
    .user('Make the uploader retry on ECONNRESET.');
  for (let turn = 0; turn < turns; turn++) {
    builder.tools(
      [
        {
          name: 'Bash',
          input: { command: `npm test -- step-${turn}` },
          output: { type: 'error-text', value: `Error: step ${turn} failed\n${filler(`log ${turn}`, 30)}` },
        },
      ],
      `Step ${turn}: I will try attempt ${turn}.`,
    );
    builder.user(`Continue with step ${turn + 1}.`);
  }
  builder.assistant('Working on it.');
  return builder.build();
}

function contextFor(messages: readonly IdentifiedMessage[], budgetTokens: number): AsyncStrategyContext {
  return {
    budgetTokens,
    accountant,
    archive: createMemoryArchive(),
    preservedIds: new Set([messages[1]!.id]),
  };
}

const summaries = (messages: readonly Message[]) =>
  messages.filter((message) => message.metadata?.origin === 'summary');

describe('llmProgressive', () => {
  it('folds the oldest blocks into one running summary, each step building on the previous one', async () => {
    const messages = assignIds(session(8));
    const client = createScriptedLlmClient({
      script: [(_request, index) => JSON.stringify({ summary: `- summary after step ${index + 1}` })],
      whenExhausted: 'repeat-last',
    });
    const context = contextFor(messages, Math.floor(countOf(messages) * 0.35));
    const result = await llmProgressive({ client, blockTokens: 600, preserveRecentMessages: 3 }).apply(
      messages,
      context,
    );
    expect(client.calls.length).toBeGreaterThan(1);
    // The first request has no summary so far; every later one carries the previous summary as data.
    const requestText = (index: number) => client.calls[index]!.messages[0]!.content as string;
    expect(requestText(0)).not.toContain('```summary');
    for (let index = 1; index < client.calls.length; index++) {
      expect(requestText(index)).toContain(`\`\`\`summary\n- summary after step ${index}\n\`\`\``);
      expect(requestText(index)).toMatch(/ONE updated summary/);
    }
    const found = summaries(result.messages);
    expect(found).toHaveLength(1);
    const text = messageText(found[0]!);
    expect(text).toMatch(
      new RegExp(
        `^\\[PREVIOUS CONVERSATION SUMMARY - \\d+ messages\\]\\n\\n- summary after step ${client.calls.length}`,
      ),
    );
    // Facts of the first block survive every step, verbatim.
    expect(text).toContain('npm test -- step-0');
    expect(result.actions).toHaveLength(client.calls.length);
    const handles = found[0]!.metadata?.handles as string[];
    expect(handles).toHaveLength(client.calls.length);
    for (const handle of handles) expect(context.archive.has(handle)).toBe(true);
    expect(countOf(result.messages)).toBeLessThanOrEqual(context.budgetTokens);
    for (const provider of ['openai', 'anthropic'] as const)
      expect(validateMessages(result.messages, { provider }).issues).toEqual([]);
    expect(result.messages.slice(-3)).toEqual(messages.slice(-3));
  });

  it('keeps the steps already committed and stops with a warning when a later step fails', async () => {
    const messages = assignIds(session(8));
    const client = createScriptedLlmClient({
      script: [JSON.stringify({ summary: '- first block' }), { error: new Error('socket hang up') }],
    });
    const result = await llmProgressive({ client, blockTokens: 600 }).apply(
      messages,
      contextFor(messages, 300),
    );
    expect(client.calls).toHaveLength(2);
    expect(summaries(result.messages)).toHaveLength(1);
    expect(messageText(summaries(result.messages)[0]!)).toContain('- first block');
    expect(result.actions).toHaveLength(1);
    expect(result.warnings).toHaveLength(1);
    expect(result.warnings[0]!.message).toMatch(/socket hang up.*not committed/);
    expect(validateMessages(result.messages, { provider: 'anthropic' }).issues).toEqual([]);
  });

  it('asks for the preservation rules in every request', async () => {
    const messages = assignIds(session(3));
    const client = createScriptedLlmClient({
      script: [JSON.stringify({ summary: '- ok' })],
      whenExhausted: 'repeat-last',
    });
    await llmProgressive({ client }).apply(messages, contextFor(messages, 300));
    const system = client.calls[0]!.system!;
    expect(system).toMatch(/identifiers, file paths, .*numbers.* error\s+messages verbatim/s);
    expect(system).toMatch(/decisions taken and why/);
    expect(system).toMatch(/Never invent anything/);
  });

  it('ends valid and within budget behind foldIntoSummary when the endpoint is down', async () => {
    const input = session(8);
    const client = createScriptedLlmClient({
      script: [{ error: new Error('ECONNREFUSED') }],
      whenExhausted: 'repeat-last',
    });
    const result = await compactAsync(input, {
      budgetTokens: Math.floor(countOf(input) * 0.15),
      provider: 'anthropic',
      accountant,
      strategies: [llmProgressive({ client }), foldIntoSummary()],
    });
    expect(result.report.withinBudget).toBe(true);
    expect(validateMessages(result.messages, { provider: 'anthropic' }).issues).toEqual([]);
    expect(result.warnings.some((warning) => /ECONNREFUSED/.test(warning.message))).toBe(true);
    expect(result.messages.map((message) => messageText(message)).join('\n')).not.toContain('ECONNREFUSED');
  });

  it('refuses bad input and options with typed errors', async () => {
    const client = createScriptedLlmClient({ script: [] });
    const error = await llmProgressive({ client })
      .apply(
        [{ role: 'user', content: 'x' }] as unknown as IdentifiedMessage[],
        contextFor(assignIds(session(1)), 10),
      )
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidMessageError);
    expect(error).toMatchObject({ index: 0, path: 'id' });
    for (const [option, value] of [
      ['blockTokens', 0],
      ['maxSteps', 1.5],
    ] as const) {
      let caught: unknown;
      try {
        llmProgressive({ client, [option]: value });
      } catch (thrown) {
        caught = thrown;
      }
      expect(isPrecisError(caught) && (caught as { option?: string }).option).toBe(option);
    }
  });
});
