import { describe, expect, it } from 'vitest';
import { isPrecisError } from '../errors/index.js';
import { createConversationBuilder } from './message-builders.js';
import { createScriptedLlmClient } from './scripted-llm-client.js';

describe('createScriptedLlmClient', () => {
  const request = { messages: createConversationBuilder().user('summarize').build() };

  it('answers in order, records calls and runs function steps', async () => {
    const client = createScriptedLlmClient({
      script: [
        'first',
        { text: 'second', usage: { inputTokens: 3, outputTokens: 1 } },
        (r, i) => `echo ${i} ${r.messages.length}`,
      ],
    });
    expect((await client.complete(request)).text).toBe('first');
    expect((await client.complete(request)).usage).toEqual({ inputTokens: 3, outputTokens: 1 });
    expect((await client.complete(request)).text).toBe('echo 2 1');
    expect(client.calls).toHaveLength(3);
  });

  it('throws scripted errors and a typed error when exhausted', async () => {
    const client = createScriptedLlmClient({ script: [{ error: new Error('boom') }] });
    await expect(client.complete(request)).rejects.toThrow('boom');
    const exhausted = await client.complete(request).catch((error: unknown) => error);
    expect(isPrecisError(exhausted) && exhausted.code).toBe('provider-error');
  });

  it('repeats the last step when asked and honours an aborted signal', async () => {
    const client = createScriptedLlmClient({ script: ['only'], whenExhausted: 'repeat-last' });
    await client.complete(request);
    expect((await client.complete(request)).text).toBe('only');
    const controller = new AbortController();
    controller.abort();
    await expect(client.complete({ ...request, abortSignal: controller.signal })).rejects.toThrow();
    expect(client.calls).toHaveLength(2);
  });
});

describe('createConversationBuilder', () => {
  it('builds parallel tool exchanges with deterministic ids', () => {
    const messages = createConversationBuilder()
      .system('sys')
      .user('read both')
      .tools(
        [
          { name: 'read_file', input: { path: 'a.ts' }, output: 'A' },
          { name: 'read_file', input: { path: 'b.ts' }, output: { type: 'error-text', value: 'ENOENT' } },
        ],
        'Reading.',
      )
      .build();
    expect(messages).toHaveLength(5);
    expect(messages[2]).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Reading.' },
        { type: 'tool-call', toolCallId: 'call_1', toolName: 'read_file', input: { path: 'a.ts' } },
        { type: 'tool-call', toolCallId: 'call_2', toolName: 'read_file', input: { path: 'b.ts' } },
      ],
    });
    expect(messages[4]).toEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'call_2',
          toolName: 'read_file',
          output: { type: 'error-text', value: 'ENOENT' },
        },
      ],
    });
  });
});
