import { describe, expect, it } from 'vitest';
import {
  checkStrategyInvariants,
  richConversation,
  strategyContext,
} from '../../../test/strategy-invariants.js';
import { InvalidMessageError } from '../../errors/index.js';
import { assignIds } from '../../messages/ids.js';
import { assistantMessage, toolCall, userMessage } from '../../testing/message-builders.js';
import { removeFiller, removeFillerText } from './remove-filler.js';

describe('removeFillerText', () => {
  it.each([
    ['Great question! The cache is keyed by path.', 'The cache is keyed by path.'],
    ["Sure! I'd be happy to help. Run `npm test` first.", 'Run `npm test` first.'],
    ['Absolutely! Certainly! It works.', 'It works.'],
    ["You're asking how to retry requests. Use backoff.", 'Use backoff.'],
    ['The fix is in src/a.ts. Let me know if you need anything else!', 'The fix is in src/a.ts.'],
    ['Done.\n\nHope this helps! Feel free to ask if you have more questions.', 'Done.'],
    ['Fixed it. Let me know if you have any questions. 😊', 'Fixed it.'],
  ])('removes whole filler sentences: %j', (text, expected) => {
    expect(removeFillerText(text)).toBe(expected);
  });

  it.each([
    'Absolutely. It is safe to delete the cache.',
    'Sure, I will fix the test.',
    'Great question marks are used in `regex?`.',
    '> Great question! said the user.\nI agree.',
    'See the quote:\n> Done. Let me know if you have any questions.',
    '```\nconsole.log("done")\n// Let me know if you need anything else!\n```',
    '```\nunclosed fence\nHope this helps!',
    'Let me know the path of the config file.',
    'I hope this helps us find the race in `retry()`?',
    'No filler here.',
  ])('leaves text that is not whole filler alone: %j', (text) => {
    expect(removeFillerText(text)).toBe(text);
  });

  it('returns an empty string for text that was nothing but filler', () => {
    expect(removeFillerText('Sure! Happy to help.')).toBe('');
  });
});

describe('removeFiller', () => {
  it('removes filler from older assistant messages, archives the original and keeps ids', () => {
    const messages = assignIds([
      userMessage('Great question! Why does it fail?'),
      assistantMessage('Great question! It fails because the timeout is 0. Hope this helps!'),
      assistantMessage([
        { type: 'text', text: 'Sure! Happy to help.' },
        toolCall('bash', { command: 'ls' }, 'c1'),
      ]),
      assistantMessage('Sure! Happy to help.'),
    ]);
    const context = strategyContext();
    const result = removeFiller().apply(messages, context);
    expect(result.messages[0]).toBe(messages[0]);
    expect(result.messages[1]).toMatchObject({
      id: messages[1]!.id,
      content: 'It fails because the timeout is 0.',
    });
    expect(result.messages[2]!.content).toEqual([toolCall('bash', { command: 'ls' }, 'c1')]);
    expect(result.messages[3]).toBe(messages[3]);
    for (const action of result.actions) {
      expect(context.archive.get(action.handle!)?.content).toEqual([
        messages.find((message) => message.id === action.messageIds[0]),
      ]);
    }
  });

  it('skips preserved messages and does nothing within budget', () => {
    const messages = assignIds([userMessage('hi'), assistantMessage('Great question! It is 4.')]);
    expect(
      removeFiller().apply(messages, strategyContext({ preservedIds: new Set([messages[1]!.id]) })).actions,
    ).toEqual([]);
    expect(removeFiller().apply(messages, strategyContext({ budgetTokens: 10_000 })).actions).toEqual([]);
  });

  it('rejects input that is not a message array', () => {
    expect(() => removeFiller().apply('nope' as never, strategyContext())).toThrow(InvalidMessageError);
  });

  it('keeps the invariants on generated conversations', () => {
    checkStrategyInvariants(removeFiller(), { conversations: richConversation() });
  });
});
