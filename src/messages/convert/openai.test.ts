import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openAIConversation, openAIRequest } from '../../../test/arbitraries/openai.js';
import { propertyRuns } from '../../../test/support/property-runs.js';
import { InvalidArgumentError, InvalidMessageError } from '../../errors/index.js';
import type { AssistantMessage, Conversation, Message, ToolCallPart, UserMessage } from '../types.js';
import { fromOpenAI, toOpenAI } from './openai.js';
import { unknownToolName } from './placeholders.js';

function roundTrip(input: unknown): unknown {
  const result = toOpenAI(fromOpenAI(input));
  expect(result.warnings).toStrictEqual([]);
  return result.messages;
}

function thrownBy(action: () => unknown): InvalidMessageError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidMessageError);
    return error as InvalidMessageError;
  }
  throw new Error('expected an InvalidMessageError');
}

function assistantParts(conversation: Conversation, index: number) {
  const message = conversation.messages[index] as AssistantMessage;
  if (typeof message.content === 'string') throw new Error('expected parts');
  return message.content;
}

describe('fromOpenAI / toOpenAI: system and user messages', () => {
  it('keeps string content a string and carries name and unknown fields', () => {
    const input = [
      { role: 'system', content: 'Be brief.', name: 'setup' },
      { role: 'user', content: 'hi', name: 'alice', x_trace_id: 'abc', cache_control: { type: 'ephemeral' } },
    ];
    expect(fromOpenAI(input).messages).toStrictEqual([
      { role: 'system', content: 'Be brief.', providerOptions: { openai: { name: 'setup' } } },
      {
        role: 'user',
        content: 'hi',
        providerOptions: {
          openai: { name: 'alice', extra: { x_trace_id: 'abc', cache_control: { type: 'ephemeral' } } },
        },
      },
    ]);
    expect(roundTrip(input)).toStrictEqual(input);
  });

  it('reads a developer message as a marked system message', () => {
    const input = [{ role: 'developer', content: 'Use tools.' }];
    expect(fromOpenAI(input).messages).toStrictEqual([
      { role: 'system', content: 'Use tools.', providerOptions: { openai: { role: 'developer' } } },
    ]);
    expect(roundTrip(input)).toStrictEqual(input);
  });

  it('joins system content parts and re-emits them only while the text is unchanged', () => {
    const parts = [
      { type: 'text', text: 'You are precise.' },
      { type: 'text', text: 'Answer in French.' },
    ];
    const conversation = fromOpenAI([{ role: 'system', content: parts }]);
    expect(conversation.messages[0]).toStrictEqual({
      role: 'system',
      content: 'You are precise.\nAnswer in French.',
      providerOptions: { openai: { contentParts: parts } },
    });
    expect(toOpenAI(conversation).messages).toStrictEqual([{ role: 'system', content: parts }]);
    const edited = { ...conversation.messages[0]!, content: 'Answer in French.' } as Message;
    expect(toOpenAI([edited]).messages).toStrictEqual([{ role: 'system', content: 'Answer in French.' }]);
  });

  it('maps text, image, audio and file parts and back', () => {
    const input = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw==', detail: 'low' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
          { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
          { type: 'input_audio', input_audio: { data: 'SUQz', format: 'mp3' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
          { type: 'file', file: { file_id: 'file-abc123' } },
        ],
      },
    ];
    expect(fromOpenAI(input).messages[0]!.content).toStrictEqual([
      { type: 'text', text: 'look' },
      {
        type: 'image',
        image: 'iVBORw==',
        mediaType: 'image/png',
        providerOptions: { openai: { imageDetail: 'low' } },
      },
      { type: 'image', image: 'https://example.com/cat.png' },
      { type: 'file', data: 'UklGRg==', mediaType: 'audio/wav' },
      { type: 'file', data: 'SUQz', mediaType: 'audio/mpeg' },
      { type: 'file', data: 'JVBERi0=', mediaType: 'application/pdf', filename: 'a.pdf' },
      {
        type: 'file',
        data: 'file-abc123',
        mediaType: 'application/octet-stream',
        providerOptions: { openai: { fileId: 'file-abc123' } },
      },
    ]);
    expect(roundTrip(input)).toStrictEqual(input);
  });

  it('carries an unknown part type verbatim until the part is edited', () => {
    const video = { type: 'video_url', video_url: { url: 'https://example.com/v.mp4' } };
    const conversation = fromOpenAI([{ role: 'user', content: [video] }]);
    expect(conversation.messages[0]!.content).toStrictEqual([
      { type: 'text', text: '', providerOptions: { openai: { rawPart: video } } },
    ]);
    expect(toOpenAI(conversation).messages).toStrictEqual([{ role: 'user', content: [video] }]);

    const message = conversation.messages[0] as UserMessage;
    const edited: UserMessage = {
      ...message,
      content: [{ ...(message.content[0] as object), text: 'a video' }] as never,
    };
    expect(toOpenAI([edited]).messages).toStrictEqual([
      { role: 'user', content: [{ type: 'text', text: 'a video' }] },
    ]);
  });

  it('keeps a data URL it cannot split as a URL string', () => {
    const svg = { type: 'image_url', image_url: { url: 'data:image/svg+xml;utf8,<svg/>' } };
    expect(fromOpenAI([{ role: 'user', content: [svg] }]).messages[0]!.content).toStrictEqual([
      { type: 'image', image: 'data:image/svg+xml;utf8,<svg/>' },
    ]);
    expect(roundTrip([{ role: 'user', content: [svg] }])).toStrictEqual([{ role: 'user', content: [svg] }]);
  });
});

describe('fromOpenAI / toOpenAI: assistant and tool messages', () => {
  const weather = [
    { role: 'user', content: 'Weather in Paris?' },
    {
      role: 'assistant',
      content: 'Checking.',
      reasoning_content: 'The user wants the weather.',
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_1', content: '18°C' },
    { role: 'assistant', content: 'It is 18°C.' },
  ];

  it('splits an assistant message with reasoning and tool calls into parts, and answers with named results', () => {
    const { messages } = fromOpenAI(weather);
    expect(messages[1]).toStrictEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'The user wants the weather.' },
        { type: 'text', text: 'Checking.' },
        { type: 'tool-call', toolCallId: 'call_1', toolName: 'get_weather', input: { city: 'Paris' } },
      ],
    });
    expect(messages[2]).toStrictEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'call_1',
          toolName: 'get_weather',
          output: { type: 'text', value: '18°C' },
        },
      ],
    });
    expect(messages[3]).toStrictEqual({ role: 'assistant', content: 'It is 18°C.' });
    expect(roundTrip(weather)).toStrictEqual(weather);
  });

  it('gives no ids to messages', () => {
    expect(fromOpenAI(weather).messages.every((message) => message.id === undefined)).toBe(true);
  });

  it('remembers reasoning sent as "reasoning"', () => {
    const input = [{ role: 'assistant', content: 'Yes.', reasoning: 'Easy one.' }];
    const conversation = fromOpenAI(input);
    expect(conversation.messages[0]).toStrictEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'Easy one.' },
        { type: 'text', text: 'Yes.' },
      ],
      providerOptions: { openai: { reasoningField: 'reasoning' } },
    });
    expect(roundTrip(input)).toStrictEqual(input);
  });

  it('keeps non-canonical arguments text only while it still parses to the input', () => {
    const text = '{ "city" : "Paris", "days": 2.0 }';
    const input = [
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: text } }],
      },
    ];
    const conversation = fromOpenAI(input);
    const call = assistantParts(conversation, 0)[0] as ToolCallPart;
    expect(call.input).toStrictEqual({ city: 'Paris', days: 2 });
    expect(call.providerOptions).toStrictEqual({ openai: { arguments: text } });
    expect(roundTrip(input)).toStrictEqual(input);

    const edited: AssistantMessage = {
      role: 'assistant',
      content: [{ ...call, input: { city: 'Rome', days: 2 } }],
    };
    const emitted = toOpenAI([edited]).messages[0] as { tool_calls: { function: { arguments: string } }[] };
    expect(emitted.tool_calls[0]!.function.arguments).toBe('{"city":"Rome","days":2}');
  });

  it('keeps invalid JSON arguments as the raw input string', () => {
    const input = [
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"city": "Par' } }],
      },
    ];
    const call = assistantParts(fromOpenAI(input), 0)[0] as ToolCallPart;
    expect(call.input).toBe('{"city": "Par');
    expect(call.providerOptions).toBeUndefined();
    expect(roundTrip(input)).toStrictEqual(input);
  });

  it('tells null, absent and empty assistant content apart', () => {
    const calls = [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }];
    const nullContent = { role: 'assistant', content: null, tool_calls: calls };
    const absent = { role: 'assistant', tool_calls: calls };
    const empty = { role: 'assistant', content: '', tool_calls: calls };
    const [fromNull, fromAbsent, fromEmpty] = fromOpenAI([nullContent, absent, empty]).messages;
    const call = { type: 'tool-call', toolCallId: 'c', toolName: 'f', input: {} };
    expect(fromNull).toStrictEqual({ role: 'assistant', content: [call] });
    expect(fromAbsent).toStrictEqual({
      role: 'assistant',
      content: [call],
      providerOptions: { openai: { contentShape: 'absent' } },
    });
    expect(fromEmpty).toStrictEqual({ role: 'assistant', content: [{ type: 'text', text: '' }, call] });
    expect(roundTrip([nullContent, absent, empty])).toStrictEqual([nullContent, absent, empty]);
  });

  it('carries refusals, audio references and an empty tool_calls list', () => {
    const input = [
      { role: 'assistant', content: null, refusal: 'I cannot help with that.', audio: { id: 'audio_1' } },
      { role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }] },
      { role: 'assistant', content: 'Done.', tool_calls: [] },
    ];
    const { messages } = fromOpenAI(input);
    expect(messages[0]).toStrictEqual({
      role: 'assistant',
      content: [],
      providerOptions: { openai: { refusal: 'I cannot help with that.', audio: { id: 'audio_1' } } },
    });
    expect(messages[1]).toStrictEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'No.', providerOptions: { openai: { partType: 'refusal' } } }],
    });
    expect(messages[2]).toStrictEqual({
      role: 'assistant',
      content: 'Done.',
      providerOptions: { openai: { toolCalls: [] } },
    });
    expect(roundTrip(input)).toStrictEqual(input);
  });

  it('reads array tool content as a content output and names unmatched results "unknown"', () => {
    const input = [{ role: 'tool', tool_call_id: 'gone', content: [{ type: 'text', text: 'a' }] }];
    expect(fromOpenAI(input).messages).toStrictEqual([
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'gone',
            toolName: unknownToolName,
            output: { type: 'content', value: [{ type: 'text', text: 'a' }] },
          },
        ],
      },
    ]);
    expect(roundTrip(input)).toStrictEqual(input);
  });

  it('round-trips custom tool calls and legacy function calls', () => {
    const input = [
      {
        role: 'assistant',
        tool_calls: [{ id: 'p', type: 'custom', custom: { name: 'apply_patch', input: '*** Begin' } }],
      },
      { role: 'tool', tool_call_id: 'p', content: 'applied' },
      { role: 'assistant', content: null, function_call: { name: 'lookup', arguments: '{"id": 7}' } },
      { role: 'function', name: 'lookup', content: null },
    ];
    const conversation = fromOpenAI(input);
    expect(assistantParts(conversation, 2)).toStrictEqual([
      {
        type: 'tool-call',
        toolCallId: 'function-call-2',
        toolName: 'lookup',
        input: { id: 7 },
        providerOptions: { openai: { legacyFunctionCall: true, arguments: '{"id": 7}' } },
      },
    ]);
    expect(conversation.messages[3]).toStrictEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'function-call-2',
          toolName: 'lookup',
          output: { type: 'text', value: '' },
        },
      ],
      providerOptions: { openai: { role: 'function', nullContent: true } },
    });
    expect(roundTrip(input)).toStrictEqual(input);
  });
});

describe('toOpenAI from conversations of other origins', () => {
  it('writes an AI SDK conversation with binary media, parallel calls and several results', () => {
    const bytes = new Uint8Array([1, 2, 3]);
    const conversation: Conversation = {
      messages: [
        { role: 'system', content: 'sys' },
        {
          role: 'user',
          content: [
            { type: 'image', image: bytes, mediaType: 'image/png' },
            { type: 'image', image: bytes.buffer, mediaType: 'image/gif' },
            { type: 'image', image: new URL('https://example.com/a.png') },
            { type: 'image', image: 'AQID' },
            { type: 'file', data: bytes, mediaType: 'audio/wav' },
            { type: 'file', data: 'JVBERi0=', mediaType: 'application/pdf', filename: 'r.pdf' },
            { type: 'file', data: bytes, mediaType: 'image/jpeg' },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'first', providerOptions: { anthropic: { signature: 'sig' } } },
            { type: 'text', text: 'Let me look.' },
            { type: 'reasoning', text: 'second' },
            { type: 'tool-call', toolCallId: 't1', toolName: 'search', input: { q: 'x' } },
            { type: 'tool-call', toolCallId: 't2', toolName: 'read', input: { path: 'a' } },
          ],
        },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 't1',
              toolName: 'search',
              output: { type: 'json', value: { hits: 2 } },
            },
            {
              type: 'tool-result',
              toolCallId: 't2',
              toolName: 'read',
              output: { type: 'error-text', value: 'ENOENT' },
            },
          ],
        },
      ],
    };
    const result = toOpenAI(conversation);
    expect(result.warnings).toStrictEqual([]);
    expect(result.messages).toStrictEqual([
      { role: 'system', content: 'sys' },
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AQID' } },
          { type: 'image_url', image_url: { url: 'data:image/gif;base64,AQID' } },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,AQID' } },
          { type: 'input_audio', input_audio: { data: 'AQID', format: 'wav' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'r.pdf' } },
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,AQID' } },
        ],
      },
      {
        role: 'assistant',
        content: 'Let me look.',
        reasoning_content: 'first\nsecond',
        tool_calls: [
          { id: 't1', type: 'function', function: { name: 'search', arguments: '{"q":"x"}' } },
          { id: 't2', type: 'function', function: { name: 'read', arguments: '{"path":"a"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 't1', content: '{"hits":2}' },
      { role: 'tool', tool_call_id: 't2', content: 'ENOENT' },
    ]);
  });

  it('writes error-json, denial and content outputs as text, and warns about media it cannot send', () => {
    const tool: Message = {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'a',
          toolName: 'f',
          output: { type: 'error-json', value: { code: 1 } },
        },
        {
          type: 'tool-result',
          toolCallId: 'b',
          toolName: 'f',
          output: { type: 'execution-denied', reason: 'no' },
        },
        { type: 'tool-result', toolCallId: 'c', toolName: 'f', output: { type: 'execution-denied' } },
        {
          type: 'tool-result',
          toolCallId: 'd',
          toolName: 'screenshot',
          output: {
            type: 'content',
            value: [
              { type: 'text', text: 'Here:' },
              { type: 'media', data: 'AQID', mediaType: 'image/png' },
            ],
          },
        },
        { type: 'tool-approval-response', approvalId: 'x', approved: true },
      ],
    };
    const result = toOpenAI([tool]);
    expect(result.messages).toStrictEqual([
      { role: 'tool', tool_call_id: 'a', content: '{"code":1}' },
      { role: 'tool', tool_call_id: 'b', content: 'no' },
      { role: 'tool', tool_call_id: 'c', content: 'Tool execution denied.' },
      { role: 'tool', tool_call_id: 'd', content: [{ type: 'text', text: 'Here:' }] },
    ]);
    expect(result.warnings.map(({ index, path }) => ({ index, path }))).toStrictEqual([
      { index: 0, path: 'content[3].output.value[1]' },
      { index: 0, path: 'content[4]' },
    ]);
  });

  it('renders provider-executed tools as assistant text with warnings', () => {
    const message: Message = {
      role: 'assistant',
      content: [
        {
          type: 'tool-call',
          toolCallId: 's',
          toolName: 'web_search',
          input: { query: 'tides' },
          providerExecuted: true,
        },
        {
          type: 'tool-result',
          toolCallId: 's',
          toolName: 'web_search',
          output: { type: 'text', value: 'High at 6.' },
        },
        { type: 'text', text: 'High tide is at 6.' },
      ],
    };
    const result = toOpenAI([{ role: 'user', content: 'tides?' }, message]);
    expect(result.messages[1]).toStrictEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: '[web_search call] {"query":"tides"}' },
        { type: 'text', text: '[web_search result] High at 6.' },
        { type: 'text', text: 'High tide is at 6.' },
      ],
    });
    expect(result.warnings.map(({ index, path }) => ({ index, path }))).toStrictEqual([
      { index: 1, path: 'content[0]' },
      { index: 1, path: 'content[1]' },
    ]);
  });

  it("drops reasoning with one warning per message under reasoning: 'drop'", () => {
    const message: Message = {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'a' },
        { type: 'reasoning', text: 'b' },
        { type: 'text', text: 'Answer.' },
      ],
    };
    const result = toOpenAI([message, message], { reasoning: 'drop' });
    expect(result.messages).toStrictEqual([
      { role: 'assistant', content: 'Answer.' },
      { role: 'assistant', content: 'Answer.' },
    ]);
    expect(result.warnings).toHaveLength(2);
    expect(result.warnings[0]).toMatchObject({ type: 'conversion-warning', index: 0, path: 'content[0]' });
    expect(toOpenAI([message]).messages).toStrictEqual([
      { role: 'assistant', content: 'Answer.', reasoning_content: 'a\nb' },
    ]);
  });

  it('warns about parts OpenAI has no place for', () => {
    const result = toOpenAI([
      {
        role: 'assistant',
        content: [
          { type: 'file', data: 'AQID', mediaType: 'image/png' },
          { type: 'tool-approval-request', approvalId: 'x', toolCallId: 'y' },
        ],
      },
      {
        role: 'user',
        content: [{ type: 'file', data: new URL('https://example.com/a.pdf'), mediaType: 'application/pdf' }],
      },
      {
        role: 'user',
        content: [{ type: 'file', data: 'https://example.com/a.mp3', mediaType: 'audio/mpeg' }],
      },
    ]);
    expect(result.messages).toStrictEqual([
      { role: 'assistant', content: null },
      { role: 'user', content: [] },
      { role: 'user', content: [] },
    ]);
    expect(result.warnings.map(({ index, path }) => ({ index, path }))).toStrictEqual([
      { index: 0, path: 'content[0]' },
      { index: 0, path: 'content[1]' },
      { index: 1, path: 'content[0]' },
      { index: 2, path: 'content[0]' },
    ]);
  });

  it('rejects an unknown reasoning mode', () => {
    expect(() => toOpenAI([], { reasoning: 'keep' as never })).toThrow(InvalidArgumentError);
  });
});

describe('tools and request bodies', () => {
  it('maps function tools to tool definitions and back, recording a missing parameters schema', () => {
    const body = {
      model: 'gpt-4o',
      temperature: 0.2,
      tool_choice: 'auto',
      messages: [{ role: 'user', content: 'hi' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'search',
            description: 'Search the web',
            parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
            strict: true,
          },
        },
        { type: 'function', function: { name: 'now' } },
      ],
    };
    const conversation = fromOpenAI(body);
    expect(conversation).toStrictEqual({
      messages: [{ role: 'user', content: 'hi' }],
      model: 'gpt-4o',
      tools: [
        {
          name: 'search',
          description: 'Search the web',
          inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
          providerOptions: { openai: { strict: true } },
        },
        {
          name: 'now',
          inputSchema: { type: 'object', properties: {} },
          providerOptions: { openai: { parametersAbsent: true } },
        },
      ],
      providerOptions: { openai: { temperature: 0.2, tool_choice: 'auto' } },
    });
    const result = toOpenAI(conversation);
    expect(result.tools).toStrictEqual(body.tools);
    expect(result.request).toStrictEqual({ temperature: 0.2, tool_choice: 'auto' });
    expect(result.warnings).toStrictEqual([]);
  });

  it('writes tool definitions of other origins as function tools', () => {
    const result = toOpenAI({
      messages: [],
      tools: [
        { name: 'f', inputSchema: { type: 'object' }, providerOptions: { anthropic: { cacheControl: 'x' } } },
      ],
    });
    expect(result.tools).toStrictEqual([
      { type: 'function', function: { name: 'f', parameters: { type: 'object' } } },
    ]);
    expect(result.request).toBeUndefined();
  });
});

describe('fromOpenAI rejects bad input with the index and path', () => {
  const cases: { name: string; input: unknown; index?: number; path: string }[] = [
    {
      name: 'an unknown role',
      input: [
        { role: 'user', content: 'a' },
        { role: 'robot', content: 'b' },
      ],
      index: 1,
      path: 'role',
    },
    {
      name: 'non-string text',
      input: [{ role: 'user', content: [{ type: 'text', text: 42 }] }],
      index: 0,
      path: 'content[0].text',
    },
    {
      name: 'a tool message without tool_call_id',
      input: [{ role: 'tool', content: 'x' }],
      index: 0,
      path: 'tool_call_id',
    },
    {
      name: 'tool_calls that are not an array',
      input: [{ role: 'assistant', content: null, tool_calls: { id: 'x' } }],
      index: 0,
      path: 'tool_calls',
    },
    {
      name: 'tool call arguments that are not a string',
      input: [
        { role: 'user', content: 'x' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: { a: 1 } } }],
        },
      ],
      index: 1,
      path: 'tool_calls[0].function.arguments',
    },
    {
      name: 'a tool call of unknown type',
      input: [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'magic' }] }],
      index: 0,
      path: 'tool_calls[0].type',
    },
    {
      name: 'an image without a URL',
      input: [{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }],
      index: 0,
      path: 'content[0].image_url.url',
    },
    { name: 'a message that is not an object', input: ['hello'], index: 0, path: '' },
    {
      name: 'a tool without a name',
      input: { messages: [], tools: [{ type: 'function', function: {} }] },
      path: 'tools[0].function.name',
    },
    { name: 'messages that are not an array', input: { messages: 'hi' }, path: 'messages' },
  ];

  it.each(cases)('$name', ({ input, index, path }) => {
    const error = thrownBy(() => fromOpenAI(input, { file: 'chat.json' }));
    expect(error.code).toBe('invalid-message');
    expect(error.file).toBe('chat.json');
    expect(error.index).toBe(index);
    expect(error.path ?? '').toBe(path);
    expect(error.message).toContain('chat.json');
  });

  it('rejects input that is neither an array nor a request body', () => {
    expect(thrownBy(() => fromOpenAI('messages')).index).toBeUndefined();
  });
});

describe('round-trip properties', () => {
  it('OpenAI → precis → OpenAI gives back the input, without warnings', () => {
    fc.assert(
      fc.property(openAIConversation(), (messages) => {
        const result = toOpenAI(fromOpenAI(messages));
        expect(result.messages).toStrictEqual(messages);
        expect(result.warnings).toStrictEqual([]);
      }),
      { numRuns: propertyRuns(5000) },
    );
  });

  it('precis → OpenAI → precis gives back the canonical conversation', () => {
    fc.assert(
      fc.property(openAIConversation(), (messages) => {
        const conversation = fromOpenAI(messages);
        expect(fromOpenAI(toOpenAI(conversation).messages)).toStrictEqual(conversation);
      }),
      { numRuns: propertyRuns(5000) },
    );
  });

  it('request bodies with tools round-trip', () => {
    fc.assert(
      fc.property(openAIRequest({ maxTurns: 2 }), (body) => {
        const conversation = fromOpenAI(body);
        const result = toOpenAI(conversation);
        const rebuilt = {
          ...(conversation.model === undefined ? {} : { model: conversation.model }),
          ...result.request,
          messages: result.messages,
          ...(result.tools === undefined ? {} : { tools: result.tools }),
        };
        expect(rebuilt).toStrictEqual(body);
        expect(fromOpenAI(rebuilt)).toStrictEqual(conversation);
      }),
      { numRuns: propertyRuns(1000) },
    );
  });

  it('keeps the raw wire part only for part types it does not know', () => {
    const knownTypes = new Set(['text', 'image_url', 'input_audio', 'file', 'refusal']);
    fc.assert(
      fc.property(openAIConversation(), (messages) => {
        const rawParts = JSON.stringify(fromOpenAI(messages), (key, value) =>
          key === 'rawPart' && knownTypes.has((value as { type: string }).type) ? 'KNOWN' : value,
        );
        expect(rawParts).not.toContain('"rawPart":"KNOWN"');
      }),
      { numRuns: propertyRuns(1000) },
    );
  });
});
