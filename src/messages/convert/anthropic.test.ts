import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { anthropicConversation } from '../../../test/arbitraries/anthropic.js';
import { messageConversation } from '../../../test/arbitraries/messages.js';
import { propertyRuns } from '../../../test/support/property-runs.js';
import { InvalidMessageError } from '../../errors/index.js';
import type { Conversation, Message } from '../types.js';
import { fromAnthropic, toAnthropic } from './anthropic.js';
import type { AnthropicMessage, AnthropicMessagesRequest } from './anthropic-types.js';
import { unknownToolName } from './placeholders.js';

/** The parts of a request `toAnthropic` writes. */
function wireOf(input: AnthropicMessagesRequest | AnthropicMessage[]) {
  if (Array.isArray(input)) return { messages: input };
  const { system, messages, tools } = input;
  return {
    ...(system === undefined ? {} : { system }),
    messages,
    ...(tools === undefined ? {} : { tools }),
  };
}

function writtenOf(conversation: Conversation | Message[]) {
  const { warnings, ...written } = toAnthropic(conversation);
  return { written, warnings };
}

function roundTrip(input: AnthropicMessagesRequest | AnthropicMessage[]) {
  return writtenOf(fromAnthropic(input));
}

describe('fromAnthropic / toAnthropic: system and request fields', () => {
  it('reads a system string as one system message and writes it back as a string', () => {
    const request = { system: 'Be brief.', messages: [{ role: 'user', content: 'Hi' }] };
    const conversation = fromAnthropic(request);
    expect(conversation.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ]);
    expect(roundTrip(request as AnthropicMessagesRequest)).toEqual({ written: request, warnings: [] });
  });

  it('reads system blocks as one system message each, keeping cache_control', () => {
    const system = [
      { type: 'text', text: 'You are a coding agent.' },
      { type: 'text', text: 'Repository facts...', cache_control: { type: 'ephemeral', ttl: '1h' } },
    ];
    const conversation = fromAnthropic({ system, messages: [] });
    expect(conversation.messages).toEqual([
      { role: 'system', content: 'You are a coding agent.' },
      {
        role: 'system',
        content: 'Repository facts...',
        providerOptions: { anthropic: { cacheControl: { type: 'ephemeral', ttl: '1h' } } },
      },
    ]);
    expect(toAnthropic(conversation).system).toEqual(system);
  });

  it('marks a lone plain system block so it is written back as an array', () => {
    const system = [{ type: 'text', text: 'Only block' }];
    const conversation = fromAnthropic({ system, messages: [] });
    expect(conversation.messages[0]?.providerOptions).toEqual({ anthropic: { systemBlock: true } });
    expect(toAnthropic(conversation).system).toEqual(system);
  });

  it('keeps the model and request-level fields on the conversation', () => {
    const conversation = fromAnthropic({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      messages: [],
    });
    expect(conversation.model).toBe('claude-sonnet-4-5');
    expect(conversation.providerOptions).toEqual({
      anthropic: { max_tokens: 1024, thinking: { type: 'enabled', budget_tokens: 2048 } },
    });
  });

  it('maps client tools to tool definitions and keeps server tools verbatim', () => {
    const tools = [
      {
        name: 'get_weather',
        description: 'Weather by city',
        input_schema: { type: 'object', properties: { city: { type: 'string' } } },
        cache_control: { type: 'ephemeral' },
      },
      { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
    ];
    const conversation = fromAnthropic({ messages: [], tools });
    expect(conversation.tools).toEqual([
      {
        name: 'get_weather',
        description: 'Weather by city',
        inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
        providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } },
      },
      { name: 'web_search', inputSchema: {}, providerOptions: { anthropic: { rawTool: tools[1] } } },
    ]);
    expect(toAnthropic(conversation).tools).toEqual(tools);
  });
});

describe('fromAnthropic / toAnthropic: user content', () => {
  it('keeps cache_control under the AI SDK key and citations and unknown fields in extra', () => {
    const citations = [{ type: 'char_location', cited_text: 'x', document_index: 0 }];
    const messages = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Hi', cache_control: { type: 'ephemeral' }, citations, x_trace_id: 'a' },
        ],
        x_client: 7,
      },
    ];
    const conversation = fromAnthropic(messages);
    expect(conversation.messages).toEqual([
      {
        role: 'user',
        content: [
          {
            type: 'text',
            text: 'Hi',
            providerOptions: {
              anthropic: { cacheControl: { type: 'ephemeral' }, extra: { citations, x_trace_id: 'a' } },
            },
          },
        ],
        providerOptions: { anthropic: { extra: { x_client: 7 } } },
      },
    ]);
    expect(roundTrip(messages as AnthropicMessage[])).toEqual({ written: { messages }, warnings: [] });
  });

  it('reads base64 images with their media type and url images as URL strings', () => {
    const messages = [
      {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
        ],
      },
    ];
    expect(fromAnthropic(messages).messages[0]?.content).toEqual([
      { type: 'image', image: 'iVBORw0KGgo=', mediaType: 'image/png' },
      { type: 'image', image: 'https://example.com/cat.jpg' },
    ]);
    expect(roundTrip(messages as AnthropicMessage[])).toEqual({ written: { messages }, warnings: [] });
  });

  it('reads documents as file parts the way the AI SDK writes them', () => {
    const pdf = {
      type: 'document',
      source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' },
      title: 'report.pdf',
      context: 'Q3 numbers',
      citations: { enabled: true },
    };
    const plain = { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'héllo' } };
    const linked = { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } };
    const messages = [{ role: 'user', content: [pdf, plain, linked] }];
    expect(fromAnthropic(messages).messages[0]?.content).toEqual([
      {
        type: 'file',
        data: 'JVBERi0=',
        mediaType: 'application/pdf',
        filename: 'report.pdf',
        providerOptions: { anthropic: { context: 'Q3 numbers', citations: { enabled: true } } },
      },
      { type: 'file', data: Buffer.from('héllo').toString('base64'), mediaType: 'text/plain' },
      { type: 'file', data: 'https://example.com/a.pdf', mediaType: 'application/pdf' },
    ]);
    expect(roundTrip(messages as AnthropicMessage[])).toEqual({ written: { messages }, warnings: [] });
  });

  it('carries unknown block types and unmapped sources verbatim and writes them back unchanged', () => {
    const future = { type: 'future_block', payload: { a: [1, 2] } };
    const contentDocument = { type: 'document', source: { type: 'content', content: 'inline' } };
    const fileImage = { type: 'image', source: { type: 'file', file_id: 'file_1' } };
    const messages = [{ role: 'user', content: [future, contentDocument, fileImage] }];
    expect(fromAnthropic(messages).messages[0]?.content).toEqual([
      { type: 'text', text: '', providerOptions: { anthropic: { rawBlock: future } } },
      { type: 'text', text: '', providerOptions: { anthropic: { rawBlock: contentDocument } } },
      { type: 'text', text: '', providerOptions: { anthropic: { rawBlock: fileImage } } },
    ]);
    expect(roundTrip(messages as AnthropicMessage[])).toEqual({ written: { messages }, warnings: [] });
  });
});

describe('fromAnthropic / toAnthropic: assistant content', () => {
  it('keeps thinking signatures and redacted thinking under the AI SDK keys', () => {
    const messages = [
      { role: 'user', content: 'Think.' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Let me see', signature: 'c2ln' },
          { type: 'redacted_thinking', data: 'b3BhcXVl' },
          { type: 'text', text: 'Done.' },
        ],
      },
    ];
    expect(fromAnthropic(messages).messages[1]?.content).toEqual([
      { type: 'reasoning', text: 'Let me see', providerOptions: { anthropic: { signature: 'c2ln' } } },
      { type: 'reasoning', text: '', providerOptions: { anthropic: { redactedData: 'b3BhcXVl' } } },
      { type: 'text', text: 'Done.' },
    ]);
    expect(roundTrip(messages as AnthropicMessage[])).toEqual({ written: { messages }, warnings: [] });
  });

  it('keeps an unsigned thinking block raw so it goes back exactly as it came', () => {
    const thinking = { type: 'thinking', thinking: 'no signature' };
    const messages = [{ role: 'assistant', content: [thinking] }];
    expect(fromAnthropic(messages).messages[0]?.content).toEqual([
      { type: 'reasoning', text: '', providerOptions: { anthropic: { rawBlock: thinking } } },
    ]);
    expect(roundTrip(messages as AnthropicMessage[])).toEqual({ written: { messages }, warnings: [] });
  });

  it('reads tool_use as tool calls and server tools as provider-executed calls with inline results', () => {
    const results = [
      { type: 'web_search_result', url: 'https://a.test', title: 'A', encrypted_content: 'eA==' },
    ];
    const error = { type: 'web_search_tool_result_error', error_code: 'max_uses_exceeded' };
    const messages = [
      { role: 'user', content: 'Search and read.' },
      {
        role: 'assistant',
        content: [
          { type: 'server_tool_use', id: 'srv_1', name: 'web_search', input: { query: 'a' } },
          { type: 'web_search_tool_result', tool_use_id: 'srv_1', content: results },
          { type: 'server_tool_use', id: 'srv_2', name: 'web_search', input: { query: 'b' } },
          { type: 'web_search_tool_result', tool_use_id: 'srv_2', content: error },
          { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a.ts' } },
        ],
      },
    ];
    expect(fromAnthropic(messages).messages[1]?.content).toEqual([
      {
        type: 'tool-call',
        toolCallId: 'srv_1',
        toolName: 'web_search',
        input: { query: 'a' },
        providerExecuted: true,
      },
      {
        type: 'tool-result',
        toolCallId: 'srv_1',
        toolName: 'web_search',
        output: { type: 'json', value: results },
      },
      {
        type: 'tool-call',
        toolCallId: 'srv_2',
        toolName: 'web_search',
        input: { query: 'b' },
        providerExecuted: true,
      },
      {
        type: 'tool-result',
        toolCallId: 'srv_2',
        toolName: 'web_search',
        output: { type: 'error-json', value: error },
      },
      { type: 'tool-call', toolCallId: 'toolu_1', toolName: 'read_file', input: { path: 'a.ts' } },
    ]);
    expect(roundTrip(messages as AnthropicMessage[])).toEqual({ written: { messages }, warnings: [] });
  });

  it('records the block type of a server result whose call is not in the conversation', () => {
    const block = {
      type: 'web_fetch_tool_result',
      tool_use_id: 'srv_9',
      content: { type: 'web_fetch_result' },
    };
    const messages = [{ role: 'assistant', content: [block] }];
    expect(fromAnthropic(messages).messages[0]?.content).toEqual([
      {
        type: 'tool-result',
        toolCallId: 'srv_9',
        toolName: unknownToolName,
        output: { type: 'json', value: { type: 'web_fetch_result' } },
        providerOptions: { anthropic: { resultType: 'web_fetch_tool_result' } },
      },
    ]);
    expect(roundTrip(messages as AnthropicMessage[])).toEqual({ written: { messages }, warnings: [] });
  });
});

describe('fromAnthropic / toAnthropic: tool results', () => {
  const call = (id: string, name: string) => ({ type: 'tool_use', id, name, input: {} });

  it('splits a user turn into a tool message and a user message, and joins them again', () => {
    const messages = [
      { role: 'user', content: 'Weather in Paris and Oslo?' },
      { role: 'assistant', content: [call('t1', 'get_weather'), call('t2', 'get_weather')] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: '18°C' },
          { type: 'tool_result', tool_use_id: 't2', content: 'timeout', is_error: true },
          { type: 'text', text: 'Thanks!' },
        ],
      },
    ];
    const conversation = fromAnthropic(messages);
    expect(conversation.messages.slice(2)).toEqual([
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 't1',
            toolName: 'get_weather',
            output: { type: 'text', value: '18°C' },
          },
          {
            type: 'tool-result',
            toolCallId: 't2',
            toolName: 'get_weather',
            output: { type: 'error-text', value: 'timeout' },
          },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'Thanks!' }] },
    ]);
    expect(roundTrip(messages as AnthropicMessage[])).toEqual({ written: { messages }, warnings: [] });
  });

  it('keeps block content, is_error false versus absent, missing content and unmatched calls', () => {
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBO' } };
    const messages = [
      { role: 'assistant', content: [call('t1', 'screenshot'), call('t2', 'ls')] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 't1',
            content: [{ type: 'text', text: 'see' }, image],
            is_error: false,
          },
          { type: 'tool_result', tool_use_id: 't2', content: 'a.ts', is_error: false },
          { type: 'tool_result', tool_use_id: 'gone', is_error: true },
        ],
      },
    ];
    expect(fromAnthropic(messages).messages[1]?.content).toEqual([
      {
        type: 'tool-result',
        toolCallId: 't1',
        toolName: 'screenshot',
        output: {
          type: 'content',
          value: [
            { type: 'text', text: 'see' },
            { type: 'image-data', data: 'iVBO', mediaType: 'image/png' },
          ],
        },
        providerOptions: { anthropic: { isError: false } },
      },
      {
        type: 'tool-result',
        toolCallId: 't2',
        toolName: 'ls',
        output: { type: 'text', value: 'a.ts' },
        providerOptions: { anthropic: { isError: false } },
      },
      {
        type: 'tool-result',
        toolCallId: 'gone',
        toolName: unknownToolName,
        output: { type: 'error-text', value: '' },
        providerOptions: { anthropic: { contentOmitted: true } },
      },
    ]);
    expect(roundTrip(messages as AnthropicMessage[])).toEqual({ written: { messages }, warnings: [] });
  });

  it('remembers tool results that were not at the start of the turn', () => {
    const messages = [
      { role: 'assistant', content: [call('t1', 'ls')] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'before' },
          { type: 'tool_result', tool_use_id: 't1', content: 'ok' },
        ],
      },
    ];
    const conversation = fromAnthropic(messages);
    expect(conversation.messages[1]?.providerOptions).toEqual({ anthropic: { toolResultIndexes: [1] } });
    expect(roundTrip(messages as AnthropicMessage[])).toEqual({ written: { messages }, warnings: [] });
  });

  it('remembers that a results-only user turn was followed by a separate user message', () => {
    const messages = [
      { role: 'assistant', content: [call('t1', 'ls')] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] },
      { role: 'user', content: 'and now?' },
    ];
    const conversation = fromAnthropic(messages);
    expect(conversation.messages[1]?.providerOptions).toEqual({ anthropic: { turnEnd: true } });
    expect(roundTrip(messages as AnthropicMessage[])).toEqual({ written: { messages }, warnings: [] });
  });
});

describe('toAnthropic from any precis conversation', () => {
  it('hoists a late system message into system with a warning', () => {
    const { written, warnings } = writtenOf([
      { role: 'system', content: 'A' },
      { role: 'user', content: 'hi' },
      { role: 'system', content: 'B' },
    ]);
    expect(written.system).toEqual([
      { type: 'text', text: 'A' },
      { type: 'text', text: 'B' },
    ]);
    expect(written.messages).toEqual([{ role: 'user', content: 'hi' }]);
    expect(warnings).toEqual([
      { type: 'conversion-warning', index: 2, message: expect.stringContaining('system') },
    ]);
  });

  it('merges consecutive tool messages and the user message after them into one user turn', () => {
    const messages: Message[] = [
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 'c1', toolName: 'a', input: {} },
          { type: 'tool-call', toolCallId: 'c2', toolName: 'b', input: '{"x":' },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c1', toolName: 'a', output: { type: 'json', value: { n: 1 } } },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c2',
            toolName: 'b',
            output: { type: 'error-json', value: { e: 'bad' } },
          },
        ],
      },
      { role: 'user', content: 'next' },
    ];
    const { written, warnings } = writtenOf(messages);
    expect(written.messages).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'c1', name: 'a', input: {} },
          { type: 'tool_use', id: 'c2', name: 'b', input: '{"x":' },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'c1', content: '{"n":1}' },
          { type: 'tool_result', tool_use_id: 'c2', content: '{"e":"bad"}', is_error: true },
          { type: 'text', text: 'next' },
        ],
      },
    ]);
    expect(warnings).toEqual([
      {
        type: 'conversion-warning',
        index: 0,
        path: 'content[1].input',
        message: expect.stringContaining('object'),
      },
    ]);
  });

  it('writes a denied execution as an error result and drops approval parts with warnings', () => {
    const { written, warnings } = writtenOf([
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 'c1', toolName: 'rm', input: {} },
          { type: 'tool-approval-request', approvalId: 'a1', toolCallId: 'c1' },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-approval-response', approvalId: 'a1', approved: false },
          { type: 'tool-result', toolCallId: 'c1', toolName: 'rm', output: { type: 'execution-denied' } },
        ],
      },
    ]);
    expect(written.messages[1]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'c1', content: 'Tool execution denied.', is_error: true },
      ],
    });
    expect(warnings.map(({ index, path }) => ({ index, path }))).toEqual([
      { index: 0, path: 'content[1]' },
      { index: 1, path: 'content[0]' },
    ]);
  });

  it('drops reasoning without a signature with a warning and ignores OpenAI options', () => {
    const { written, warnings } = writtenOf([
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'private', providerOptions: { openai: { itemId: 'rs_1' } } },
          { type: 'text', text: 'Answer', providerOptions: { openai: { itemId: 'msg_1' } } },
        ],
      },
    ]);
    expect(written.messages).toEqual([{ role: 'assistant', content: [{ type: 'text', text: 'Answer' }] }]);
    expect(warnings).toEqual([
      {
        type: 'conversion-warning',
        index: 0,
        path: 'content[0]',
        message: expect.stringContaining('signature'),
      },
    ]);
  });

  it('does not send an assistant message with nothing sendable, and says so', () => {
    const { written, warnings } = writtenOf([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: [{ type: 'file', data: 'AAAA', mediaType: 'image/png' }] },
    ]);
    expect(written.messages).toEqual([{ role: 'user', content: 'q' }]);
    expect(warnings.map(({ index, path }) => ({ index, path }))).toEqual([
      { index: 1, path: 'content[0]' },
      { index: 1, path: undefined },
    ]);
  });

  it('writes images from data URLs, bytes and URLs, detecting a missing media type', () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const { written, warnings } = writtenOf([
      {
        role: 'user',
        content: [
          { type: 'image', image: 'data:image/gif;base64,R0lGODlh' },
          { type: 'image', image: new Uint8Array(png) },
          { type: 'image', image: new URL('https://example.com/a.png'), mediaType: 'image/png' },
          { type: 'file', data: png.toString('base64'), mediaType: 'image/png' },
        ],
      },
    ]);
    expect(written.messages[0]?.content).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/gif', data: 'R0lGODlh' } },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png.toString('base64') } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png.toString('base64') } },
    ]);
    expect(warnings).toEqual([]);
  });

  it('warns when an image media type is neither given nor detectable', () => {
    const { written, warnings } = writtenOf([{ role: 'user', content: [{ type: 'image', image: 'AAAA' }] }]);
    expect(written.messages[0]?.content).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: 'AAAA' } },
    ]);
    expect(warnings).toHaveLength(1);
  });

  it('writes file parts with AI SDK document options and warns about unsupported media types', () => {
    const { written, warnings } = writtenOf([
      {
        role: 'user',
        content: [
          {
            type: 'file',
            data: 'JVBERi0=',
            mediaType: 'application/pdf',
            filename: 'a.pdf',
            providerOptions: { anthropic: { title: 'Report', citations: { enabled: true } } },
          },
          { type: 'file', data: 'UEsDBA==', mediaType: 'application/zip' },
        ],
      },
    ]);
    expect(written.messages[0]?.content).toEqual([
      {
        type: 'document',
        source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' },
        title: 'Report',
        citations: { enabled: true },
      },
      { type: 'document', source: { type: 'base64', media_type: 'application/zip', data: 'UEsDBA==' } },
    ]);
    expect(warnings.map(({ path }) => path)).toEqual(['content[1]']);
  });

  it('applies a message-level cacheControl to the last block, as the AI SDK does', () => {
    const { written } = writtenOf([
      {
        role: 'user',
        content: 'long context',
        providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } },
      },
    ]);
    expect(written.messages).toEqual([
      {
        role: 'user',
        content: [{ type: 'text', text: 'long context', cache_control: { type: 'ephemeral' } }],
      },
    ]);
  });

  it('warns about Anthropic options it has no place for', () => {
    const { warnings } = writtenOf([
      {
        role: 'user',
        content: [{ type: 'text', text: 'x', providerOptions: { anthropic: { signature: 's' } } }],
      },
    ]);
    expect(warnings).toEqual([
      {
        type: 'conversion-warning',
        index: 0,
        path: 'content[0].providerOptions.anthropic.signature',
        message: expect.any(String),
      },
    ]);
  });

  it('writes tool definitions with input_schema', () => {
    const { written, warnings } = writtenOf({
      messages: [],
      tools: [{ name: 'ls', description: 'List files', inputSchema: { type: 'object' } }],
    });
    expect(written.tools).toEqual([
      { name: 'ls', description: 'List files', input_schema: { type: 'object' } },
    ]);
    expect(warnings).toEqual([]);
  });

  it('throws instead of warning when strict', () => {
    const messages: Message[] = [{ role: 'assistant', content: [{ type: 'reasoning', text: 'hmm' }] }];
    expect(() => toAnthropic(messages, { strict: true })).toThrow(InvalidMessageError);
  });
});

describe('fromAnthropic: invalid input', () => {
  function errorOf(input: unknown): InvalidMessageError {
    try {
      fromAnthropic(input, { file: 'chat.json' });
    } catch (error) {
      if (error instanceof InvalidMessageError) return error;
      throw error;
    }
    throw new Error('expected fromAnthropic to throw');
  }

  it.each([
    [
      'an unknown role',
      [
        { role: 'user', content: 'a' },
        { role: 'robot', content: 'b' },
      ],
      1,
      'role',
    ],
    [
      'a non-string text',
      [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 5 },
          ],
        },
      ],
      0,
      'content[1].text',
    ],
    [
      'a tool_result without tool_use_id',
      [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }],
      0,
      'content[0].tool_use_id',
    ],
    ['a block without type', [{ role: 'assistant', content: [{ text: 'x' }] }], 0, 'content[0].type'],
    [
      'a non-boolean is_error',
      [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', is_error: 'yes' }] }],
      0,
      'content[0].is_error',
    ],
    [
      'a tool_use without input',
      [{ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'x' }] }],
      0,
      'content[0].input',
    ],
    ['content that is not a string or array', [{ role: 'user', content: 3 }], 0, 'content'],
    ['an image without a source', [{ role: 'user', content: [{ type: 'image' }] }], 0, 'content[0].source'],
    [
      'a bad nested tool result block',
      [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text' }] }] }],
      0,
      'content[0].content[0].text',
    ],
  ])('names the message and field of %s', (_name, input, index, path) => {
    const error = errorOf(input);
    expect(error).toMatchObject({ code: 'invalid-message', file: 'chat.json', index, path });
    expect(error.message).toContain(`message ${index}`);
  });

  it('names the field of a bad system prompt, tool list or request', () => {
    expect(errorOf({ system: [{ type: 'text', text: null }], messages: [] })).toMatchObject({
      index: undefined,
      path: 'system[0].text',
    });
    expect(errorOf({ messages: [], tools: [{ name: 'x' }] })).toMatchObject({
      path: 'tools[0].input_schema',
    });
    expect(errorOf({ messages: 'hi' })).toMatchObject({ path: 'messages' });
    expect(errorOf('hello')).toMatchObject({ path: '' });
  });
});

describe('properties', () => {
  it('Anthropic → precis → Anthropic gives back system, messages and tools exactly, without warnings', () => {
    fc.assert(
      fc.property(anthropicConversation(), (input) => {
        const { written, warnings } = roundTrip(input);
        expect(warnings).toEqual([]);
        expect(written).toStrictEqual(wireOf(input));
      }),
      { numRuns: propertyRuns(5000) },
    );
  });

  it('precis → Anthropic → precis is lossless on what fromAnthropic produces', () => {
    fc.assert(
      fc.property(anthropicConversation(), (input) => {
        const conversation = fromAnthropic(input);
        const { warnings, ...written } = toAnthropic(conversation);
        const again = fromAnthropic(written);
        expect(again.messages).toStrictEqual(conversation.messages);
        expect(again.tools).toStrictEqual(conversation.tools);
        expect(warnings).toEqual([]);
      }),
      { numRuns: propertyRuns(5000) },
    );
  });

  it('writes any precis conversation without throwing, and what it writes reads back and writes the same', () => {
    fc.assert(
      fc.property(messageConversation(), (messages) => {
        const { warnings: _warnings, ...written } = toAnthropic(messages);
        const rewritten = writtenOf(fromAnthropic(written)).written;
        expect(rewritten).toStrictEqual(written);
      }),
      { numRuns: propertyRuns(500) },
    );
  });
});
