import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { strategyContext } from '../../../test/strategy-invariants.js';
import { propertyRuns } from '../../../test/support/property-runs.js';
import { InvalidArgumentError } from '../../errors/index.js';
import type { IdentifiedMessage, Message } from '../../messages/types.js';
import { validateMessages } from '../../messages/validate/index.js';
import { assistantMessage, createConversationBuilder, userMessage } from '../../testing/message-builders.js';
import { createTokenAccountant } from '../../tokens/index.js';
import { elisionMarker } from './compress-prose.js';
import { extractiveProse } from './extractive-prose.js';

const accountant = createTokenAccountant();

const filler = [
  'The weather was pleasant for most of the afternoon.',
  'Everyone seemed to be in a fairly good mood today.',
  'It is worth saying that the coffee machine works again.',
  'There was some general chatter about the upcoming holidays.',
  'Nothing much else happened during the rest of the meeting.',
  'People talked about various unrelated topics for a while.',
  'The room was a little warm but otherwise comfortable.',
  'Someone mentioned that lunch would be slightly late.',
];

/** Long prose (about 50 tokens per repeat) with one decision in it. */
function longProse(topic: string, repeats = 8): string {
  const sentences: string[] = [
    `We decided to rewrite ${topic} because the old code failed in src/${topic}.ts.`,
  ];
  for (let index = 0; index < repeats; index++) sentences.push(...filler.map((line) => `${line} (${index})`));
  return sentences.join(' ');
}

function identify(messages: Message[]): IdentifiedMessage[] {
  return messages.map((message, index) => ({ ...message, id: `m${index}` }) as IdentifiedMessage);
}

function conversation(): IdentifiedMessage[] {
  return identify(
    createConversationBuilder()
      .system('You are a coding agent.')
      .user(longProse('parser'))
      .assistant([{ type: 'text', text: longProse('cache') }])
      .tools(
        [{ name: 'bash', input: { command: 'npm test' }, output: longProse('output') }],
        longProse('tools'),
      )
      .user('Short follow-up.')
      .assistant(longProse('recent'))
      .user('Latest request.')
      .assistant('Latest answer.')
      .build(),
  );
}

describe('extractiveProse', () => {
  it('compresses old long user and assistant text, archives the originals and reports the handles', () => {
    const messages = conversation();
    const context = strategyContext();
    const result = extractiveProse().apply(messages, context);
    const changed = result.messages.filter((message, index) => message !== messages[index]);
    expect(changed.map((message) => message.id)).toEqual(['m1', 'm2', 'm3']);
    expect(result.actions).toHaveLength(3);
    for (const action of result.actions) {
      const entry = context.archive.get(action.handle!);
      expect(entry?.kind).toBe('text');
      const index = messages.findIndex((message) => message.id === action.messageIds[0]);
      const original = messages[index]!;
      const originalText =
        typeof original.content === 'string'
          ? original.content
          : (original.content.find((part) => part.type === 'text') as { text: string }).text;
      expect(entry?.content).toBe(originalText);
      expect(action.tokensAfter).toBeLessThan(action.tokensBefore);
      const newText = JSON.stringify(result.messages[index]!.content);
      expect(newText).toContain(action.handle!);
      expect(newText).toContain(elisionMarker);
      expect(newText).toContain('We decided to rewrite');
    }
    // The tool output and the tool call are untouched; the tool message is the same object.
    expect(result.messages[4]).toBe(messages[4]);
    const call = result.messages[3]!.content as Array<{ type: string }>;
    expect(call.map((part) => part.type)).toEqual(['text', 'tool-call']);
    expect(validateMessages(result.messages, { provider: 'any' })).toEqual(
      validateMessages(messages, { provider: 'any' }),
    );
  });

  it('never touches preserved messages, reasoning, short texts or the recent turns', () => {
    const messages = identify([
      userMessage(longProse('first')),
      assistantMessage([
        { type: 'reasoning', text: longProse('thinking') },
        { type: 'text', text: 'Short text.' },
      ]),
      userMessage(longProse('pinned'), { metadata: { pinned: true } }),
      userMessage('Next.'),
      assistantMessage(longProse('recent')),
    ]);
    const result = extractiveProse({ keepRecentTurns: 1 }).apply(
      messages,
      strategyContext({ preservedIds: new Set(['m0']) }),
    );
    expect(result.actions).toEqual([]);
    for (const [index, message] of result.messages.entries()) expect(message).toBe(messages[index]);
  });

  it('stops as soon as the budget holds, oldest first', () => {
    const messages = conversation();
    const total = accountant.countConversation(messages).totalTokens;
    const result = extractiveProse().apply(messages, strategyContext({ budgetTokens: total - 50 }));
    expect(result.actions.map((action) => action.messageIds[0])).toEqual(['m1']);
    expect(accountant.countConversation(result.messages).totalTokens).toBeLessThanOrEqual(total - 50);
  });

  it('does nothing when the conversation already fits', () => {
    const messages = conversation();
    const result = extractiveProse().apply(messages, strategyContext({ budgetTokens: 1_000_000 }));
    expect(result.actions).toEqual([]);
    for (const [index, message] of result.messages.entries()) expect(message).toBe(messages[index]);
  });

  it('is idempotent: applying it to its own output changes nothing', () => {
    const context = strategyContext();
    const strategy = extractiveProse({ minTokens: 50, keepRecentTurns: 1 });
    const once = strategy.apply(conversation(), context);
    const twice = strategy.apply(once.messages, context);
    expect(twice.actions).toEqual([]);
    for (const [index, message] of twice.messages.entries()) expect(message).toBe(once.messages[index]);
  });

  it('rejects bad options with typed errors', () => {
    expect(() => extractiveProse({ minTokens: -1 })).toThrow(InvalidArgumentError);
    expect(() => extractiveProse({ keepRatio: 0 })).toThrow(InvalidArgumentError);
    expect(() => extractiveProse({ keepRecentTurns: 1.5 })).toThrow(InvalidArgumentError);
  });

  it('properties: valid, deterministic, never grows, handles expand, preserved untouched, idempotent', () => {
    const text = fc.oneof(
      fc.constantFrom('Short.', 'OK, done.'),
      fc.constantFrom('parser', 'cache', 'queue').map((topic) => longProse(topic, 3)),
    );
    const turn = fc.tuple(text, text, fc.boolean());
    fc.assert(
      fc.property(
        fc.array(turn, { minLength: 1, maxLength: 6 }),
        fc.nat(3),
        fc.nat(),
        (turns, keepRecentTurns, preserveSeed) => {
          const builder = createConversationBuilder().system('System prompt.');
          for (const [user, assistant, withTool] of turns) {
            builder.user(user);
            if (withTool)
              builder.tools([{ name: 'read', input: { path: 'a.ts' }, output: assistant }], assistant);
            else builder.assistant(assistant);
          }
          const messages = identify(builder.build());
          const preservedIds = new Set(
            messages.filter((_, index) => (preserveSeed >> index) % 3 === 0).map((m) => m.id),
          );
          const context = strategyContext({ preservedIds });
          const strategy = extractiveProse({ minTokens: 100, keepRecentTurns });
          const result = strategy.apply(messages, context);
          expect(validateMessages(result.messages, { provider: 'any' }).valid).toBe(
            validateMessages(messages, { provider: 'any' }).valid,
          );
          expect(result.messages.map((message) => message.id)).toEqual(messages.map((message) => message.id));
          for (const [index, message] of messages.entries()) {
            if (preservedIds.has(message.id)) expect(result.messages[index]).toBe(message);
          }
          expect(accountant.countConversation(result.messages).totalTokens).toBeLessThanOrEqual(
            accountant.countConversation(messages).totalTokens,
          );
          for (const action of result.actions) expect(context.archive.has(action.handle!)).toBe(true);
          const again = strategy.apply(messages, strategyContext({ preservedIds }));
          expect(again.messages).toEqual(result.messages);
          const twice = strategy.apply(result.messages, context);
          expect(twice.actions).toEqual([]);
        },
      ),
      { numRuns: propertyRuns(40) },
    );
  });
});
