import { describe, expect, it } from 'vitest';
import {
  base64Blob,
  checkStrategyInvariants,
  richConversation,
  strategyContext,
} from '../../../test/strategy-invariants.js';
import { expand } from '../../archive/expand.js';
import { InvalidArgumentError } from '../../errors/index.js';
import { assignIds } from '../../messages/ids.js';
import type { Part, ToolResultPart } from '../../messages/types.js';
import { createConversationBuilder, userMessage } from '../../testing/message-builders.js';
import { elideBlobs, isEncoded } from './elide-blobs.js';

const image = base64Blob(7, 3000);
const output = [
  'Rendered chart.png (3000 bytes):',
  `<img src="data:image/png;base64,${image}">`,
  'exit code 0',
].join('\n');

function session(toolOutput: string) {
  return assignIds(
    createConversationBuilder()
      .user('Render the chart and show it.')
      .tools([{ name: 'render', input: { file: 'chart.png', data: image }, output: toolOutput }])
      .assistant('The chart is rendered.')
      .build(),
  );
}

function resultOf(messages: ReturnType<typeof session>): ToolResultPart {
  const tool = messages.find((message) => message.role === 'tool')!;
  return (tool.content as Part[]).find((part) => part.type === 'tool-result') as ToolResultPart;
}

describe('isEncoded', () => {
  it('takes base64 and hex runs, not identifiers, words or short hashes', () => {
    expect(isEncoded(image, 256)).toBe(true);
    expect(isEncoded('0123456789abcdef'.repeat(20), 256)).toBe(true);
    expect(isEncoded(image.slice(0, 200), 256)).toBe(false);
    // A long identifier or word: too few digits, or one case.
    expect(isEncoded('handleIncomingRequestAndRetryWithBackoff'.repeat(8), 256)).toBe(false);
    expect(isEncoded('word1'.repeat(80), 256)).toBe(false);
    expect(isEncoded('991883df4d5910851130e3dc0e21fcbce604ea7d', 256)).toBe(false);
  });
});

describe('elideBlobs', () => {
  it('elides the middle of a base64 image in a tool output, keeping its readable lines, and archives it', () => {
    const messages = session(output);
    const context = strategyContext();
    const result = elideBlobs().apply(messages, context);
    const value = (resultOf(result.messages).output as { value: string }).value;
    const [action] = result.actions;
    expect(action).toMatchObject({ type: 'elide-blobs', strategy: 'elide-blobs' });
    expect(value).toBe(
      [
        'Rendered chart.png (3000 bytes):',
        `<img src="data:image/png;base64,${image.slice(0, 16)}…[${image.length - 24} characters of encoded data archived: ${action!.handle}]…${image.slice(-8)}">`,
        'exit code 0',
      ].join('\n'),
    );
    expect(action!.tokensAfter).toBeLessThan(action!.tokensBefore / 10);
    expect(expand(context.archive, action!.handle!).content).toEqual(resultOf(messages).output);
    // The call's input is what the agent sent: left alone.
    expect(result.messages[1]).toBe(messages[1]);
    // Again, nothing is left to elide.
    expect(elideBlobs().apply(result.messages, context).actions).toEqual([]);
  });

  it('elides a blob pasted into a user message, archiving the text', () => {
    const text = `Why does this key fail to load?\n${base64Blob(3, 1200)}\nIt came from the vault.`;
    const messages = assignIds([userMessage(text), { role: 'assistant', content: 'Let me look.' }]);
    const context = strategyContext();
    const result = elideBlobs().apply(messages, context);
    const elided = result.messages[0]!.content as string;
    expect(elided).toMatch(
      /^Why does this key fail to load\?\n.{16}…\[\d+ characters of encoded data archived: h-/,
    );
    expect(elided).toMatch(/It came from the vault\.$/);
    expect(expand(context.archive, result.actions[0]!.handle!)).toMatchObject({
      kind: 'text',
      content: text,
    });
  });

  it('leaves preserved messages, outputs without blobs and conversations within budget alone', () => {
    const messages = session(output);
    const tool = messages.find((message) => message.role === 'tool')!;
    expect(
      elideBlobs().apply(messages, strategyContext({ preservedIds: new Set([tool.id]) })).actions,
    ).toEqual([]);
    const plain = session(
      'src/retry.ts:12 handleIncomingRequestAndRetryWithBackoff\nhttps://example.com/a/b?c=d&e=f\n991883df4d5910851130e3dc0e21fcbce604ea7d',
    );
    expect(elideBlobs().apply(plain, strategyContext()).actions).toEqual([]);
    const within = elideBlobs().apply(messages, strategyContext({ budgetTokens: 1_000_000 }));
    expect(within.actions).toEqual([]);
    expect(within.messages).toEqual(messages);
  });

  it('keeps its invariants on generated conversations (some with pasted images and data URIs)', () => {
    checkStrategyInvariants(elideBlobs(), { conversations: richConversation() });
  });

  it('rejects a bad minChars, naming the option', () => {
    for (const minChars of [-1, 1.5, Number.NaN])
      expect(() => elideBlobs({ minChars })).toThrow(InvalidArgumentError);
    expect(() => elideBlobs({ minChars: -1 })).toThrow(/minChars/);
  });
});
