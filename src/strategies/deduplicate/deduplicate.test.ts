import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { strategyContext } from '../../../test/strategy-invariants.js';
import { propertyRuns } from '../../../test/support/property-runs.js';
import { isPrecisError } from '../../errors/index.js';
import { toolOutputText } from '../../messages/content.js';
import { assignIds } from '../../messages/ids.js';
import type { IdentifiedMessage, Message, ToolMessage, ToolResultOutput } from '../../messages/types.js';
import { validateMessages } from '../../messages/validate/index.js';
import { createConversationBuilder } from '../../testing/message-builders.js';
import { createTokenAccountant } from '../../tokens/index.js';
import { deduplicate } from './deduplicate.js';

const accountant = createTokenAccountant();

function fileContent(seed: number, lines = 60): string {
  return Array.from(
    { length: lines },
    (_, line) =>
      `${line + 1}\tconst value${seed}_${line} = compute(${(seed * 31 + line) % 97}, "item ${line}");`,
  ).join('\n');
}

function outputOf(message: IdentifiedMessage): string {
  const part = (message as ToolMessage).content[0];
  return part?.type === 'tool-result' ? toolOutputText(part.output) : '';
}

function session(): IdentifiedMessage[] {
  const file = fileContent(1);
  const edited = file.replace('compute(31, "item 0")', 'compute(32, "item 0")');
  return assignIds(
    createConversationBuilder()
      .system('You are a coding agent.')
      .user('Fix the bug in src/app.ts')
      .tools([{ name: 'read_file', input: { path: 'src/app.ts' }, output: file }])
      .tools([{ name: 'bash', input: { command: 'cat src/other.ts' }, output: fileContent(2) }])
      .tools([{ name: 'read_file', input: { path: 'src/app.ts' }, output: edited }])
      .tools([{ name: 'read_file', input: { path: 'src/other.ts' }, output: fileContent(2) }])
      .assistant('Done.')
      .build(),
  );
}

describe('deduplicate', () => {
  it('stubs earlier copies with a pointer at the latest copy, its similarity, size and handle', () => {
    const messages = session();
    const context = strategyContext();
    const result = deduplicate().apply(messages, context);
    expect(result.actions.map((action) => action.messageIds[0])).toEqual(
      expect.arrayContaining([messages[3]?.id, messages[5]?.id]),
    );
    expect(result.actions).toHaveLength(2);
    const nearStub = outputOf(result.messages[3] as IdentifiedMessage);
    expect(nearStub).toMatch(
      new RegExp(
        `^\\[duplicate of the tool output in message ${messages[7]?.id} \\(9\\d% similar, \\d+ tokens\\), archived: h-[0-9a-f]+\\]$`,
      ),
    );
    // The bash output is an exact copy of a later read_file output: exact copies match across tools.
    expect(outputOf(result.messages[5] as IdentifiedMessage)).toContain(
      `in message ${messages[9]?.id} (100% similar`,
    );
    // Kept copies and untouched messages are the same objects.
    for (const index of [0, 1, 2, 4, 6, 7, 8, 9, 10]) expect(result.messages[index]).toBe(messages[index]);
    for (const action of result.actions) {
      const index = messages.findIndex((message) => message.id === action.messageIds[0]);
      expect(context.archive.get(action.handle as string)?.content).toEqual(
        (messages[index] as ToolMessage).content[0]?.type === 'tool-result'
          ? ((messages[index] as ToolMessage).content[0] as { output: unknown }).output
          : undefined,
      );
      expect(action.tokensAfter).toBeLessThan(action.tokensBefore);
    }
    expect(validateMessages(result.messages, { provider: 'any' }).valid).toBe(true);
  });

  it('stubs the same whether it read the messages before or not, and reads a part edited in place again', () => {
    const messages = session();
    const first = deduplicate().apply(messages, strategyContext());
    // New objects: nothing about them is remembered.
    const fresh = () => deduplicate().apply(structuredClone(messages), strategyContext());
    expect(deduplicate().apply(messages, strategyContext())).toEqual(first);
    expect(fresh()).toEqual(first);
    // A caller's part given another output (the latest read of src/app.ts is now another file).
    const latestRead = (messages[7] as ToolMessage).content[0] as { output: ToolResultOutput };
    latestRead.output = { type: 'text', value: fileContent(9) };
    const edited = deduplicate().apply(messages, strategyContext());
    expect(edited).toEqual(fresh());
    expect(edited.actions.map((action) => action.messageIds[0])).toEqual([messages[5]?.id]);
  });

  it('does not match near copies across different tools', () => {
    const base = fileContent(3);
    const messages = assignIds(
      createConversationBuilder()
        .user('go')
        .tools([{ name: 'bash', input: 'x', output: base }])
        .tools([{ name: 'read_file', input: 'y', output: base.replace('item 5"', 'item 6"') }])
        .build(),
    );
    expect(deduplicate().apply(messages, strategyContext()).actions).toEqual([]);
  });

  it('never stubs preserved or pinned messages, nor the last keepRecentTurns turns', () => {
    const messages = session();
    const preserved = deduplicate().apply(
      messages,
      strategyContext({ preservedIds: new Set([messages[3]?.id as string]) }),
    );
    expect(preserved.messages[3]).toBe(messages[3]);
    expect(preserved.actions).toHaveLength(1);
    const pinned = messages.map((message, index) =>
      index === 5 ? { ...message, metadata: { pinned: true } } : message,
    );
    expect(deduplicate().apply(pinned, strategyContext()).messages[5]).toBe(pinned[5]);
    const recent = deduplicate({ keepRecentTurns: 4 }).apply(messages, strategyContext());
    expect(recent.actions.map((action) => action.messageIds[0])).toEqual([messages[3]?.id]);
    expect(deduplicate({ keepRecentTurns: 5 }).apply(messages, strategyContext()).actions).toEqual([]);
  });

  it('stubs long duplicated text parts, but not texts under minTokens', () => {
    const note = `Plan: ${fileContent(4, 30)}`;
    const messages = assignIds([
      { role: 'user', content: note },
      { role: 'assistant', content: 'ok' },
      { role: 'user', content: [{ type: 'text', text: note }] },
    ] satisfies Message[]);
    const result = deduplicate().apply(messages, strategyContext());
    expect(result.messages[0]?.content).toMatch(/^\[duplicate of the text in message /);
    expect(deduplicate({ minTokens: 100_000 }).apply(messages, strategyContext()).actions).toEqual([]);
  });

  it('stops once the conversation fits the budget, largest duplicates first', () => {
    const messages = session();
    const total = accountant.countConversation(messages).totalTokens;
    const result = deduplicate().apply(messages, strategyContext({ budgetTokens: total - 10 }));
    expect(result.actions).toHaveLength(1);
    expect(deduplicate().apply(messages, strategyContext({ budgetTokens: total })).actions).toEqual([]);
  });

  it('rejects bad options with a typed error', () => {
    const similarityAsText = { similarity: '0.9' as unknown as number };
    for (const options of [
      { similarity: 2 },
      similarityAsText,
      { minTokens: -1 },
      { keepRecentTurns: 1.5 },
    ]) {
      let caught: unknown;
      try {
        deduplicate(options);
      } catch (error) {
        caught = error;
      }
      expect(isPrecisError(caught) && caught.code).toBe('invalid-argument');
    }
  });

  it('properties: valid, preserved intact, handles expand, deterministic, idempotent, never grows', () => {
    const outputs = [
      fileContent(5),
      fileContent(5).replace('item 3"', 'item 4"'),
      fileContent(6),
      'ok',
      fileContent(7, 20),
    ];
    const exchange = fc.record({
      name: fc.constantFrom('read_file', 'bash'),
      output: fc.oneof(
        fc.constantFrom(...outputs),
        fc.constantFrom(...outputs).map((value) => ({ type: 'error-text' as const, value })),
      ),
    });
    const conversation = fc
      .array(fc.array(exchange, { minLength: 1, maxLength: 2 }), { minLength: 1, maxLength: 6 })
      .map((turns) => {
        const builder = createConversationBuilder().system('sys').user('task');
        turns.forEach((exchanges, turn) => {
          builder.tools(exchanges.map((item) => ({ ...item, input: { turn } })));
          if (turn % 2 === 1)
            builder.assistant('next').user(turn % 4 === 1 ? (outputs[2] as string) : 'continue');
        });
        return assignIds(builder.build());
      });
    fc.assert(
      fc.property(
        conversation,
        fc.nat(),
        fc.integer({ min: 0, max: 2 }),
        (messages, pick, keepRecentTurns) => {
          const preservedIds = new Set([messages[pick % messages.length]?.id as string]);
          const strategy = deduplicate({ keepRecentTurns });
          const context = strategyContext({ preservedIds });
          const result = strategy.apply(messages, context);
          expect(validateMessages(result.messages, { provider: 'any' }).valid).toBe(true);
          result.messages.forEach((message, index) => {
            expect(message.id).toBe(messages[index]?.id);
            if (preservedIds.has(message.id)) expect(message).toBe(messages[index]);
          });
          for (const action of result.actions) {
            const original = messages.find((message) => message.id === action.messageIds[0]) as Message;
            const outputs =
              typeof original.content === 'string'
                ? [original.content]
                : original.content.map((part) => (part.type === 'tool-result' ? part.output : undefined));
            expect(outputs).toContainEqual(context.archive.get(action.handle as string)?.content);
          }
          expect(strategy.apply(messages, strategyContext({ preservedIds }))).toEqual(result);
          const again = strategy.apply(result.messages, context);
          expect(again.actions).toEqual([]);
          for (const [index, message] of again.messages.entries())
            expect(message).toBe(result.messages[index]);
          expect(accountant.countConversation(result.messages).totalTokens).toBeLessThanOrEqual(
            accountant.countConversation(messages).totalTokens,
          );
        },
      ),
      { numRuns: propertyRuns(150) },
    );
  });
});
