import { describe, expect, it } from 'vitest';
import { InvalidMessageError } from '../errors/index.js';
import { parseConversation, parseMessages } from './parse.js';

function errorOf(run: () => unknown): InvalidMessageError {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidMessageError) return error;
    throw error;
  }
  throw new Error('expected an InvalidMessageError');
}

describe('parseMessages', () => {
  it('accepts AI SDK ModelMessage arrays as they are, extra fields included', () => {
    const messages = [
      { role: 'system', content: 'be terse' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'hi' },
          { type: 'image', image: new URL('https://x.test/a.png') },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'think', providerOptions: { anthropic: { signature: 'sig' } } },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'read', input: { path: 'a' } },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c1',
            toolName: 'read',
            output: { type: 'json', value: { ok: 1 } },
          },
        ],
        unknownExtra: true,
      },
    ];
    expect(parseMessages(messages)).toBe(messages);
  });

  it('names the message index and field of an unknown role', () => {
    const error = errorOf(() =>
      parseMessages(
        [
          { role: 'user', content: 'a' },
          { role: 'human', content: 'b' },
        ],
        { file: 'x.json' },
      ),
    );
    expect(error.code).toBe('invalid-message');
    expect([error.file, error.index, error.path]).toEqual(['x.json', 1, 'role']);
    expect(error.message).toBe(
      'x.json, message 1, field role: unknown role "human" (expected system, user, assistant or tool)',
    );
  });

  it('rejects non-string text with its path', () => {
    const error = errorOf(() => parseMessages([{ role: 'user', content: [{ type: 'text', text: 42 }] }]));
    expect([error.index, error.path]).toEqual([0, 'content[0].text']);
    expect(error.reason).toMatch(/"text" must be a string, got number 42/);
  });

  it('rejects a tool result without a call id', () => {
    const error = errorOf(() =>
      parseMessages([
        {
          role: 'tool',
          content: [{ type: 'tool-result', toolName: 'x', output: { type: 'text', value: '' } }],
        },
      ]),
    );
    expect(error.path).toBe('content[0].toolCallId');
  });

  it('rejects parts that do not belong to the role, bad outputs and bad containers', () => {
    expect(errorOf(() => parseMessages([{ role: 'user', content: [{ type: 'tool-call' }] }])).path).toBe(
      'content[0].type',
    );
    expect(
      errorOf(() =>
        parseMessages([
          {
            role: 'tool',
            content: [{ type: 'tool-result', toolCallId: 'a', toolName: 'x', output: 'plain' }],
          },
        ]),
      ).path,
    ).toBe('content[0].output');
    expect(errorOf(() => parseMessages([{ role: 'system', content: [] }])).path).toBe('content');
    expect(errorOf(() => parseMessages([{ role: 'tool', content: 'text' }])).path).toBe('content');
    expect(errorOf(() => parseMessages({ messages: [] })).message).toMatch(
      /expected an array of messages, got an object/,
    );
    expect(errorOf(() => parseMessages([null])).index).toBe(0);
  });
});

describe('parseConversation', () => {
  it('reads a document with messages, tools and model', () => {
    const document = {
      messages: [{ role: 'user', content: 'x' }],
      tools: [{ name: 'read', inputSchema: { type: 'object' } }],
      model: 'gpt-4o',
    };
    expect(parseConversation(document)).toEqual(document);
    expect(parseConversation([{ role: 'user', content: 'x' }])).toEqual({
      messages: [{ role: 'user', content: 'x' }],
    });
  });

  it('names a tool without a schema', () => {
    expect(errorOf(() => parseConversation({ messages: [], tools: [{ name: 'read' }] })).path).toBe(
      'tools[0].inputSchema',
    );
  });
});
