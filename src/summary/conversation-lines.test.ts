import { describe, expect, it } from 'vitest';
import {
  assistantMessage,
  toolCall,
  toolMessage,
  toolResult,
  userMessage,
} from '../testing/message-builders.js';
import { conversationLines } from './conversation-lines.js';

describe('conversationLines', () => {
  it("gives the trimmed lines of texts, tool inputs' strings and tool outputs, not reasoning or short lines", () => {
    const call = toolCall(
      'Bash',
      { command: 'npx vitest run src/retry', options: { cwd: '/repo/app' } },
      'c1',
    );
    const lines = conversationLines([
      userMessage('Fix the retry backoff.\n  It never caps the delay.  \nok'),
      assistantMessage([
        { type: 'reasoning', text: 'The maxDelay option is ignored somewhere.' },
        { type: 'text', text: 'Running the retry tests.' },
        call,
      ]),
      toolMessage(
        toolResult(call, { type: 'text', value: ' FAIL  src/retry/backoff.test.ts\n }\nTests  1 failed' }),
      ),
    ]);
    expect([...lines]).toEqual([
      'Fix the retry backoff.',
      'It never caps the delay.',
      'Running the retry tests.',
      'npx vitest run src/retry',
      '/repo/app',
      'FAIL  src/retry/backoff.test.ts',
      'Tests  1 failed',
    ]);
  });

  it('gives a line once however many messages show it', () => {
    const lines = conversationLines([
      userMessage('npm run build'),
      userMessage('npm run build\nnpm test -- --run'),
    ]);
    expect([...lines]).toEqual(['npm run build', 'npm test -- --run']);
  });
});
