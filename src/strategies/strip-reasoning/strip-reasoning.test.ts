import { describe, expect, it } from 'vitest';
import {
  checkStrategyInvariants,
  richConversation,
  strategyContext,
} from '../../../test/strategy-invariants.js';
import { InvalidArgumentError, InvalidMessageError } from '../../errors/index.js';
import { assignIds } from '../../messages/ids.js';
import type { IdentifiedMessage, Message } from '../../messages/types.js';
import { assistantMessage, userMessage } from '../../testing/message-builders.js';
import { createTokenAccountant } from '../../tokens/index.js';
import { stripReasoning, stripThinkingTags } from './strip-reasoning.js';

const accountant = createTokenAccountant();
const thought = Array.from({ length: 40 }, (_, index) => `Step ${index}: consider option ${index}.`).join(
  ' ',
);

function conversation(): IdentifiedMessage[] {
  const messages: Message[] = [
    userMessage('Fix the bug in src/retry.ts'),
    assistantMessage([
      { type: 'reasoning', text: thought, providerOptions: { anthropic: { signature: 'sig' } } },
      { type: 'text', text: 'The backoff is wrong.' },
    ]),
    userMessage('And the tests?'),
    assistantMessage(`<thinking>${thought}</thinking>\n\nThey pass now.`),
    userMessage('Thanks'),
    assistantMessage([
      { type: 'reasoning', text: thought },
      { type: 'text', text: 'Done.' },
    ]),
  ];
  return assignIds(messages);
}

describe('stripThinkingTags', () => {
  it('removes think and thinking spans of any case with attributes, and the whitespace after them', () => {
    expect(stripThinkingTags('<think>a\nb</think>\n\nAnswer')?.text).toBe('Answer');
    expect(stripThinkingTags('Before <THINKING mode="x">hidden</THINKING> after')?.text).toBe('Before after');
    expect(stripThinkingTags('<think>one</think>X<thinking>two</thinking>Y')?.removed).toEqual([
      '<think>one</think>',
      '<thinking>two</thinking>',
    ]);
  });

  it('removes a leading span that only has its closing tag', () => {
    expect(stripThinkingTags('reasoning here</think>\nAnswer')?.text).toBe('Answer');
  });

  it('leaves tags in code, unclosed tags and text without tags alone', () => {
    expect(stripThinkingTags('Use `<think>x</think>` tags')).toBeUndefined();
    expect(stripThinkingTags('```xml\n<think>x</think>\n```')).toBeUndefined();
    expect(stripThinkingTags('<think>never closed')).toBeUndefined();
    expect(stripThinkingTags('plain text')).toBeUndefined();
  });
});

describe('stripReasoning', () => {
  it('strips reasoning parts and tags older than the recent turns, with a stub naming the handle', () => {
    const messages = conversation();
    const context = strategyContext();
    const result = stripReasoning({ keepRecentTurns: 1 }).apply(messages, context);
    const first = result.messages[1]!;
    expect(first.id).toBe(messages[1]!.id);
    expect(first.content).toEqual([
      { type: 'text', text: expect.stringMatching(/^\[reasoning archived: h-\w+ · \d+ tokens\]$/) },
      { type: 'text', text: 'The backoff is wrong.' },
    ]);
    expect(result.messages[3]!.content).toMatch(
      /^\[reasoning archived: h-\w+ · \d+ tokens\]\n\nThey pass now\.$/,
    );
    expect(result.messages[5]).toBe(messages[5]);
    expect(result.actions.map((action) => action.messageIds)).toEqual([[messages[1]!.id], [messages[3]!.id]]);
    for (const action of result.actions) {
      expect(action.tokensAfter).toBeLessThan(action.tokensBefore);
      expect(context.archive.get(action.handle!)?.content).toEqual([
        messages.find((message) => message.id === action.messageIds[0]),
      ]);
      const stubbed = result.messages.find((message) => message.id === action.messageIds[0])!;
      expect(JSON.stringify(stubbed.content)).toContain(action.handle);
    }
  });

  it('keeps the last turn even with keepRecentTurns 0, and keeps the default 2 turns', () => {
    const messages = conversation();
    const none = stripReasoning({ keepRecentTurns: 0 }).apply(messages, strategyContext());
    expect(none.messages[5]).toBe(messages[5]);
    const byDefault = stripReasoning().apply(messages, strategyContext());
    expect(byDefault.actions.map((action) => action.messageIds[0])).toEqual([messages[1]!.id]);
  });

  it('skips preserved messages, and does nothing within budget', () => {
    const messages = conversation();
    const preserved = stripReasoning({ keepRecentTurns: 1 }).apply(
      messages,
      strategyContext({ preservedIds: new Set([messages[1]!.id]) }),
    );
    expect(preserved.messages[1]).toBe(messages[1]);
    const within = stripReasoning().apply(messages, strategyContext({ budgetTokens: 1_000_000 }));
    expect(within.actions).toEqual([]);
    expect(within.messages).toEqual(messages);
  });

  it('stops once the budget holds, oldest first', () => {
    const messages = conversation();
    const total = accountant.countConversation(messages).totalTokens;
    const result = stripReasoning({ keepRecentTurns: 1 }).apply(
      messages,
      strategyContext({ budgetTokens: total - 50 }),
    );
    expect(result.actions).toHaveLength(1);
    expect(result.actions[0]!.messageIds).toEqual([messages[1]!.id]);
  });

  it('rejects bad options and messages without ids', () => {
    expect(() => stripReasoning({ keepRecentTurns: -1 })).toThrow(InvalidArgumentError);
    const apply = () => stripReasoning().apply([{ role: 'user', content: 'x' }] as never, strategyContext());
    expect(apply).toThrow(InvalidMessageError);
    expect(apply).toThrow(/message 0, field id/);
  });

  it('keeps the invariants on generated conversations', () => {
    checkStrategyInvariants(stripReasoning(), { conversations: richConversation() });
    checkStrategyInvariants(stripReasoning({ keepRecentTurns: 0 }), {
      conversations: richConversation(),
      numRuns: 60,
    });
  });
});
