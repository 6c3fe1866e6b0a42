import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, InvalidMessageError } from '../errors/index.js';
import type { JSONValue, Message } from '../messages/types.js';
import {
  assistantMessage,
  systemMessage,
  toolCall,
  toolMessage,
  toolResult,
  userMessage,
} from '../testing/message-builders.js';
import { type AnthropicClientOptions, createAnthropicClient } from './anthropic-client.js';
import {
  anthropicReply,
  providerFailure as failure,
  recordingSleep,
  useLoopbackServer,
} from './loopback-server.test-support.js';

const server = useLoopbackServer();

function client(options: Partial<AnthropicClientOptions> = {}) {
  const { sleep, delays } = recordingSleep();
  const created = createAnthropicClient({
    model: 'claude-haiku-4-5',
    apiKey: 'sk-ant-test',
    baseURL: server.url,
    sleep,
    random: () => 0,
    ...options,
  });
  return { client: created, delays };
}

function sentBody(index = 0): Record<string, unknown> {
  return server.requests[index]?.body as Record<string, unknown>;
}

const question: Message[] = [userMessage('What failed in build 812?')];

const decisionSchema = {
  type: 'object',
  properties: { decisions: { type: 'array', items: { type: 'string' }, minItems: 1 } },
  required: ['decisions'],
} satisfies JSONValue;

describe('createAnthropicClient', () => {
  it('sends a well-formed Messages request and reads text, usage and request id', async () => {
    server.script({
      body: anthropicReply('', {
        content: [
          { type: 'text', text: 'Build 812 failed ' },
          { type: 'text', text: 'on a lint error.' },
        ],
        usage: {
          input_tokens: 20,
          output_tokens: 7,
          cache_read_input_tokens: 100,
          cache_creation_input_tokens: 5,
        },
      }),
      headers: { 'request-id': 'req_011' },
    });
    const { client: llm } = client();
    expect(llm.id).toBe('anthropic:claude-haiku-4-5');
    const response = await llm.complete({
      system: 'You summarise.',
      messages: [systemMessage('Keep error strings verbatim.'), ...question],
    });
    expect(response).toEqual({
      text: 'Build 812 failed on a lint error.',
      model: 'claude-test',
      finishReason: 'stop',
      usage: { inputTokens: 125, outputTokens: 7, cachedInputTokens: 100 },
      requestId: 'req_011',
    });
    const [received] = server.requests;
    expect(received?.path).toBe('/v1/messages');
    expect(received?.headers['x-api-key']).toBe('sk-ant-test');
    expect(received?.headers['anthropic-version']).toBe('2023-06-01');
    expect(received?.headers.authorization).toBeUndefined();
    expect(received?.body).toEqual({
      model: 'claude-haiku-4-5',
      max_tokens: 4096,
      system: 'You summarise.\n\nKeep error strings verbatim.',
      messages: [{ role: 'user', content: 'What failed in build 812?' }],
    });
  });

  it('uses the request max tokens and temperature, and a base URL that already ends in /v1', async () => {
    server.script({ body: anthropicReply('ok') });
    const { client: llm } = client({ baseURL: `${server.url}/v1/` });
    await llm.complete({ messages: question, maxOutputTokens: 300, temperature: 0 });
    expect(server.requests[0]?.path).toBe('/v1/messages');
    expect(sentBody()).toMatchObject({ max_tokens: 300, temperature: 0 });
    expect(sentBody().system).toBeUndefined();
  });

  it('writes tool turns with the Anthropic converter and sends no tools', async () => {
    server.script({ body: anthropicReply('ok') });
    const call = toolCall('bash', { command: 'npm test' }, 'toolu_1');
    await client().client.complete({
      messages: [
        userMessage('run tests'),
        assistantMessage([call]),
        toolMessage(toolResult(call, '3 failed')),
      ],
    });
    const body = sentBody();
    expect(body.tools).toBeUndefined();
    expect(body.messages).toEqual([
      { role: 'user', content: 'run tests' },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'npm test' } }],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '3 failed' }] },
    ]);
  });

  it('asks for JSON in the system prompt without prefill, and extracts and validates it', async () => {
    server.script({
      body: anthropicReply('Here you go:\n{"decisions": ["use exponential backoff"]}\nDone.'),
    });
    const response = await client().client.complete({ messages: question, jsonSchema: decisionSchema });
    expect(response.json).toEqual({ decisions: ['use exponential backoff'] });
    const body = sentBody();
    expect(body.system).toContain(JSON.stringify(decisionSchema));
    const messages = body.messages as { role: string }[];
    expect(messages.at(-1)?.role).toBe('user');
    expect(body.response_format).toBeUndefined();
  });

  it('refuses JSON that breaks the schema as invalid output', async () => {
    server.script({ body: anthropicReply('{"decisions": []}') });
    const error = await failure(client().client.complete({ messages: question, jsonSchema: decisionSchema }));
    expect(error).toMatchObject({ kind: 'invalid-output', retryable: false, provider: 'anthropic' });
    expect(error.issues).toEqual(['decisions: expected at least 1 items, got 0']);
  });

  it('refuses a reply whose JSON does not parse', async () => {
    server.script({ body: anthropicReply('{"decisions": ["unterminated}') });
    const error = await failure(client().client.complete({ messages: question, jsonSchema: decisionSchema }));
    expect(error.kind).toBe('invalid-output');
  });

  it('treats a reply without text as unusable output', async () => {
    server.script({ body: anthropicReply('', { stop_reason: 'max_tokens' }) });
    const error = await failure(client().client.complete({ messages: question }));
    expect(error).toMatchObject({ kind: 'invalid-output', retryable: false });
    expect(error.message).toContain('finish reason: length');
  });

  it('reports a malformed body and a body of the wrong shape without retrying', async () => {
    server.script({ rawBody: 'upstream connect error' }, { body: { type: 'message' } });
    const llm = client().client;
    expect((await failure(llm.complete({ messages: question }))).kind).toBe('invalid-response');
    const error = await failure(llm.complete({ messages: question }));
    expect(error.kind).toBe('invalid-response');
    expect(error.message).toContain('no content array');
    expect(server.requests).toHaveLength(2);
  });

  it('waits out a 429 retry-after, then answers', async () => {
    server.script(
      {
        status: 429,
        headers: { 'retry-after': '12', 'request-id': 'req_limited' },
        body: { type: 'error', error: { type: 'rate_limit_error', message: 'Number of requests exceeded' } },
      },
      { body: anthropicReply('fine now') },
    );
    const { client: llm, delays } = client();
    expect((await llm.complete({ messages: question })).text).toBe('fine now');
    expect(delays).toEqual([12_000]);
  });

  it('retries an overloaded 529 and a 500, then answers', async () => {
    server.script(
      { status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } },
      { status: 500 },
      { body: anthropicReply('third time') },
    );
    const { client: llm, delays } = client();
    expect((await llm.complete({ messages: question })).text).toBe('third time');
    expect(delays).toHaveLength(2);
    expect(server.requests).toHaveLength(3);
  });

  it('gives up on a server that never answers with a retryable timeout', async () => {
    server.script({ hang: true });
    const error = await failure(
      client({ maxAttempts: 1, timeoutMs: 100 }).client.complete({ messages: question }),
    );
    expect(error).toMatchObject({ kind: 'timeout', retryable: true, provider: 'anthropic', attempts: 1 });
    expect(error.message).toContain('100 ms (timeoutMs)');
  });

  it('does not retry an authentication error and keeps its type', async () => {
    server.script({
      status: 401,
      body: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } },
    });
    const error = await failure(client().client.complete({ messages: question }));
    expect(error).toMatchObject({ status: 401, retryable: false, attempts: 1 });
    expect(error.message).toContain('invalid x-api-key (authentication_error)');
  });

  it('refuses bad input before sending anything', async () => {
    const llm = client().client;
    const bad = [{ role: 'user', content: [{ type: 'text' }] }] as unknown as Message[];
    const error = await llm.complete({ messages: bad }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidMessageError);
    expect(error).toMatchObject({ index: 0, path: 'content[0].text' });
    await expect(llm.complete({ messages: [systemMessage('only a system prompt')] })).rejects.toThrow(
      InvalidArgumentError,
    );
    expect(server.requests).toHaveLength(0);
  });

  it('refuses bad options, naming them', () => {
    expect(() => createAnthropicClient({ model: 'm', apiKey: '' })).toThrow('apiKey');
    expect(() => createAnthropicClient({ model: ' ', apiKey: 'k' })).toThrow('model');
    expect(() => createAnthropicClient({ model: 'm', apiKey: 'k', baseURL: '::' })).toThrow('baseURL');
  });
});
