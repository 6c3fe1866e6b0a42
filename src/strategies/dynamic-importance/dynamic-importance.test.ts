import { describe, expect, it } from 'vitest';
import { checkStrategyInvariants, richConversation } from '../../../test/strategy-invariants.js';
import { createMemoryArchive } from '../../archive/archive-store.js';
import { expand } from '../../archive/expand.js';
import { compactAsync } from '../../engine/compact.js';
import { InvalidArgumentError } from '../../errors/index.js';
import { messageText } from '../../messages/content.js';
import { assignIds } from '../../messages/ids.js';
import type {
  IdentifiedMessage,
  JSONValue,
  Message,
  ToolMessage,
  ToolResultPart,
} from '../../messages/types.js';
import { validateMessages } from '../../messages/validate/index.js';
import { createConversationBuilder } from '../../testing/message-builders.js';
import { createScriptedLlmClient } from '../../testing/scripted-llm-client.js';
import { createTokenAccountant } from '../../tokens/index.js';
import { keepHeadAndTail } from '../head-and-tail.js';
import type { StrategyContext } from '../strategy.js';
import { dynamicImportance, type ImportanceAction } from './dynamic-importance.js';
import { createLlmImportanceScorer } from './llm-importance-scorer.js';

const accountant = createTokenAccountant();
const countOf = (messages: readonly Message[]) => accountant.countConversation(messages).totalTokens;
const lines = (label: string, count = 80) =>
  Array.from({ length: count }, (_, index) => `${label} line ${index}: value ${index * 7}`).join('\n');
const prose = Array.from(
  { length: 12 },
  (_, index) => `Step ${index} looked at the upload queue and found nothing unusual in batch ${index}.`,
).join(' ');

function session(): IdentifiedMessage[] {
  return assignIds(
    createConversationBuilder()
      .system('You are a coding agent.')
      .user('Make the retry tests pass in src/retry.ts.')
      .tools([{ name: 'Read', input: { file_path: 'src/retry.ts' }, output: lines('retry') }])
      .tools([{ name: 'Read', input: { file_path: 'docs/notes.md' }, output: lines('notes') }])
      .assistant(prose)
      .user('Thanks!')
      .assistant('Sure, happy to help! Glad it works.')
      .user('Run the tests.')
      .tools([
        {
          name: 'Bash',
          input: { command: 'npm test' },
          output: { type: 'error-text', value: `FAIL src/retry.test.ts\n${lines('log', 40)}` },
        },
      ])
      .tools([
        {
          name: 'Edit',
          input: { file_path: 'src/retry.ts', old_string: 'a', new_string: 'b' },
          output: 'ok',
        },
      ])
      .tools([{ name: 'Bash', input: { command: 'npm test' }, output: 'Tests: 12 passed' }])
      .user('Now tidy up src/retry.ts.')
      .assistant('Done.')
      .build(),
  );
}

function contextFor(budgetTokens: number, preserved: readonly string[] = []): StrategyContext {
  return { budgetTokens, accountant, archive: createMemoryArchive(), preservedIds: new Set(preserved) };
}

const valid = (messages: readonly Message[]) => {
  for (const provider of ['openai', 'anthropic'] as const)
    expect(validateMessages(messages, { provider, allowPendingToolCalls: true }).issues).toEqual([]);
};

describe('dynamicImportance', () => {
  it('does nothing within budget', () => {
    const messages = session();
    const result = dynamicImportance().apply(messages, contextFor(countOf(messages)));
    expect(result.actions).toEqual([]);
    expect(result.messages).toEqual(messages);
  });

  it('acts least important first, meets the budget, and every handle expands to the original', () => {
    const messages = session();
    const total = countOf(messages);
    const preserved = [messages[0]!.id, messages[1]!.id, ...messages.slice(-2).map((message) => message.id)];
    const context = contextFor(Math.floor(total * 0.6), preserved);
    const result = dynamicImportance().apply(messages, context);
    expect(countOf(result.messages)).toBeLessThanOrEqual(context.budgetTokens);
    valid(result.messages);
    for (const id of preserved)
      expect(result.messages.find((message) => message.id === id)).toBe(
        messages.find((message) => message.id === id),
      );
    const actions = result.actions as ImportanceAction[];
    expect(actions.length).toBeGreaterThan(0);
    for (const action of actions) {
      expect(action.level).toMatch(/^(medium|low|droppable)$/);
      expect(action.reason).not.toBe('');
      const entry = expand(context.archive, action.handle!);
      const originals = entry.content as IdentifiedMessage[];
      for (const original of originals)
        expect(original).toEqual(messages.find((message) => message.id === original.id));
    }
    // The unrelated read goes before the read of the file edited later, which stays verbatim.
    const notesAction = actions.find((action) => action.messageIds.includes(messages[5]!.id));
    expect(notesAction?.level).toBe('low');
    expect(result.messages).toContain(messages[3]);
    // A second run changes nothing.
    const again = dynamicImportance().apply(result.messages, context);
    expect(again.actions).toEqual([]);
  });

  it('stubs an output trimmed already as its archived original', () => {
    const messages = session();
    const total = countOf(messages);
    const preserved = [messages[0]!.id, messages[1]!.id, ...messages.slice(-2).map((message) => message.id)];
    const context = contextFor(Math.floor(total * 0.6), preserved);
    // The unrelated read, trimmed to its head and tail as the engine's last-turn trim leaves it.
    const notes = messages[5] as IdentifiedMessage & ToolMessage;
    const part = notes.content[0] as ToolResultPart;
    const handle = context.archive.put({
      kind: 'tool-output',
      content: part.output as unknown as JSONValue,
      messageIds: [notes.id],
      strategy: 'recent-turns-share',
    });
    const trimmed = keepHeadAndTail(lines('notes'), 120, handle, (text) => accountant.countText(text))!;
    messages[5] = {
      ...notes,
      content: [{ ...part, output: { type: 'text', value: trimmed } }],
    } as IdentifiedMessage;
    const result = dynamicImportance().apply(messages, context);
    const stubbed = result.messages.find((message) => message.id === notes.id) as ToolMessage | undefined;
    const output = (stubbed?.content[0] as ToolResultPart | undefined)?.output;
    expect(output).toEqual({
      type: 'text',
      value: `[tool output archived: ${handle} · ${accountant.countText(lines('notes'))} tokens · docs/notes.md · 80 lines]`,
    });
  });

  it('drops droppable messages whole, tool pairs intact, under a tight budget', () => {
    const messages = session();
    const preserved = [messages[0]!.id, messages[1]!.id, ...messages.slice(-2).map((message) => message.id)];
    const context = contextFor(200, preserved);
    const result = dynamicImportance().apply(messages, context);
    valid(result.messages);
    const types = new Set(result.actions.map((action) => action.type));
    expect(types).toContain('stub-message');
    expect(types).toContain('drop-messages');
    const dropped = result.actions.filter((action) => action.type === 'drop-messages') as ImportanceAction[];
    for (const action of dropped) expect(action.level).toMatch(/^(droppable|low)$/);
    // Dropped whole behind a marker whose handle expands to the dropped messages.
    const marker = result.messages.find((message) => message.id.startsWith('dropped-'));
    expect(marker?.metadata?.origin).toBe('stub');
    const handle = /archived: (h-[0-9a-f]+)/.exec(messageText(marker!))![1]!;
    const droppedIds = dropped.flatMap((action) => action.messageIds);
    const spanIds = expand(context.archive, handle).messageIds;
    expect(spanIds.length).toBeGreaterThan(0);
    for (const id of spanIds) expect(droppedIds).toContain(id);
    // High messages (the read of the edited file, the edit) stay verbatim whatever the budget.
    expect(result.messages).toContain(messages[3]);
    expect(result.messages).toContain(messages[12]);
  });

  it('refuses bad options and bad input', () => {
    expect(() => dynamicImportance({ keepRatio: 0 })).toThrow(InvalidArgumentError);
    expect(() => dynamicImportance({ minTokens: -1 })).toThrow(/minTokens/);
    expect(() => dynamicImportance({ scorer: { type: 'x' } as never })).toThrow(/scorer/);
    expect(() => dynamicImportance().apply([{ role: 'user', content: 'x' }] as never, contextFor(0))).toThrow(
      /message 0, field id/,
    );
  });

  it('keeps the strategy invariants on generated conversations', () => {
    checkStrategyInvariants(dynamicImportance(), { conversations: richConversation(), numRuns: 60 });
    // Regression: a second apply used to drop a group the first could not place a marker for.
    checkStrategyInvariants(dynamicImportance(), {
      conversations: richConversation(),
      numRuns: 60,
      seed: 406768615,
    });
    checkStrategyInvariants(dynamicImportance({ minTokens: 5, escalate: false }), {
      conversations: richConversation(4),
      numRuns: 40,
    });
  }, 60_000);
});

describe('dynamicImportance with an LLM scorer', () => {
  it('is asynchronous, uses the LLM levels, and falls back with a warning', async () => {
    const messages = session();
    const client = createScriptedLlmClient({
      script: [
        (request) => {
          const ids = [...JSON.stringify(request.messages).matchAll(/id: (m-[\w-]+)/g)].map(
            (match) => match[1]!,
          );
          return JSON.stringify({
            scores: ids.map((id) => ({ id, level: 'droppable', reason: 'scripted drop' })),
          });
        },
      ],
    });
    const strategy = dynamicImportance({ scorer: createLlmImportanceScorer({ client }) });
    expect(strategy.async).toBe(true);
    const result = await compactAsync(messages, {
      budgetTokens: Math.floor(countOf(messages) * 0.5),
      strategies: [strategy],
    });
    expect(result.report.withinBudget).toBe(true);
    valid(result.messages);
    const actions = result.report.actions as ImportanceAction[];
    expect(actions.some((action) => action.reason === 'scripted drop')).toBe(true);
    // The engine's later passes reuse the remembered scores instead of asking again.
    expect(client.calls).toHaveLength(1);

    const failing = createScriptedLlmClient({ script: ['not json'] });
    const fallback = await compactAsync(messages, {
      budgetTokens: Math.floor(countOf(messages) * 0.5),
      strategies: [dynamicImportance({ scorer: createLlmImportanceScorer({ client: failing }) })],
    });
    expect(fallback.report.withinBudget).toBe(true);
    expect(fallback.warnings.map((warning) => warning.message).join('\n')).toMatch(
      /invalid reply .* heuristic scores used/,
    );
    valid(fallback.messages);
  });
});
