import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { InvalidMessageError } from '../../errors/index.js';
import { validateMessages } from '../../messages/validate/index.js';
import { fromLangChainMessages, toLangChainMessages } from './langchain-messages.js';

const conversation = () => [
  new SystemMessage({ content: 'Be brief.', id: 's' }),
  new HumanMessage({
    content: [
      { type: 'text', text: 'What is in this picture?' },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
    ],
    id: 'u',
  }),
  new AIMessage({
    content: 'Looking.',
    tool_calls: [
      { type: 'tool_call', id: 'call_a', name: 'zoom', args: { factor: 2 } },
      { type: 'tool_call', id: 'call_b', name: 'crop', args: { x: 1 } },
    ],
    id: 'a',
  }),
  new ToolMessage({ content: 'zoomed', tool_call_id: 'call_a', name: 'zoom', id: 't1' }),
  new ToolMessage({ content: 'out of bounds', tool_call_id: 'call_b', status: 'error', id: 't2' }),
  new AIMessage({ content: 'A cat.', id: 'a2' }),
];

describe('LangChain message conversion', () => {
  it('converts to precis messages keeping ids and tool call ids', () => {
    const messages = fromLangChainMessages(conversation());
    expect(messages.map((message) => message.id)).toEqual(['s', 'u', 'a', 't1', 't2', 'a2']);
    expect(messages[1]).toEqual({
      role: 'user',
      id: 'u',
      content: [
        { type: 'text', text: 'What is in this picture?' },
        { type: 'image', image: 'https://example.com/cat.png' },
      ],
    });
    expect(messages[2]).toEqual({
      role: 'assistant',
      id: 'a',
      content: [
        { type: 'text', text: 'Looking.' },
        { type: 'tool-call', toolCallId: 'call_a', toolName: 'zoom', input: { factor: 2 } },
        { type: 'tool-call', toolCallId: 'call_b', toolName: 'crop', input: { x: 1 } },
      ],
    });
    // The result without a name takes its call's name; an error status is an error result.
    expect(messages[4]).toMatchObject({
      content: [
        { toolCallId: 'call_b', toolName: 'crop', output: { type: 'error-text', value: 'out of bounds' } },
      ],
    });
    expect(validateMessages(messages).valid).toBe(true);
  });

  it('converts back to equivalent LangChain messages', () => {
    const back = toLangChainMessages(fromLangChainMessages(conversation()));
    expect(back.map((message) => [message.type, message.id, message.text])).toEqual(
      conversation().map((message) => [message.type, message.id, message.text]),
    );
    expect((back[2] as AIMessage).tool_calls).toEqual([
      { type: 'tool_call', id: 'call_a', name: 'zoom', args: { factor: 2 } },
      { type: 'tool_call', id: 'call_b', name: 'crop', args: { x: 1 } },
    ]);
    expect(back[4]).toMatchObject({ tool_call_id: 'call_b', status: 'error', name: 'crop' });
    expect(fromLangChainMessages(back)).toEqual(fromLangChainMessages(conversation()));
  });

  it('splits a precis tool message with several results into one ToolMessage each', () => {
    const back = toLangChainMessages([
      {
        role: 'tool',
        id: 'results',
        content: [
          { type: 'tool-result', toolCallId: 'x', toolName: 'a', output: { type: 'text', value: '1' } },
          {
            type: 'tool-result',
            toolCallId: 'y',
            toolName: 'b',
            output: { type: 'json', value: { ok: true } },
          },
        ],
      },
    ]);
    expect(back.map((message) => [message.id, (message as ToolMessage).tool_call_id, message.text])).toEqual([
      ['results', 'x', '1'],
      ['results-1', 'y', '{"ok":true}'],
    ]);
  });

  it('names the message and field of bad input', () => {
    const missingId = new AIMessage({ content: '', tool_calls: [{ name: 'zoom', args: {} }] });
    expect(() => fromLangChainMessages([new HumanMessage('hi'), missingId])).toThrow(
      expect.objectContaining({ index: 1, path: 'tool_calls[0].id' }),
    );
    expect(() => fromLangChainMessages([{ type: 'banana' } as never])).toThrow(InvalidMessageError);
    expect(() => fromLangChainMessages([{ type: 'banana' } as never])).toThrow(
      expect.objectContaining({ index: 0, path: 'type' }),
    );
    expect(() => fromLangChainMessages('nope' as never)).toThrow(InvalidMessageError);
  });
});
