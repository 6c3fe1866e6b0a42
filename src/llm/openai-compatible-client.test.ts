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
import {
  providerFailure as failure,
  openAIReply,
  recordingSleep,
  useLoopbackServer,
} from './loopback-server.test-support.js';
import {
  createOpenAICompatibleClient,
  type OpenAICompatibleClientOptions,
} from './openai-compatible-client.js';

const server = useLoopbackServer();

function client(options: Partial<OpenAICompatibleClientOptions> = {}) {
  const { sleep, delays } = recordingSleep();
  const created = createOpenAICompatibleClient({
    model: 'qwen2.5:7b',
    baseURL: `${server.url}/v1`,
    sleep,
    random: () => 0,
    ...options,
  });
  return { client: created, delays };
}

function sentBody(index = 0): Record<string, unknown> {
  return server.requests[index]?.body as Record<string, unknown>;
}

const question: Message[] = [userMessage('Summarise: the test in src/retry.ts fails with ETIMEDOUT.')];

const summarySchema = {
  type: 'object',
  properties: {
    goal: { type: 'string' },
    files: { type: 'array', items: { type: 'string' } },
    status: { enum: ['done', 'pending'] },
  },
  required: ['goal', 'files', 'status'],
  additionalProperties: false,
} satisfies JSONValue;

describe('createOpenAICompatibleClient', () => {
  it('sends a well-formed Chat Completions request and reads text, usage and request id', async () => {
    server.script({
      body: openAIReply('The retry test times out.', {
        usage: { prompt_tokens: 30, completion_tokens: 6, prompt_tokens_details: { cached_tokens: 10 } },
      }),
      headers: { 'x-request-id': 'req-oai-1' },
    });
    const { client: llm } = client({ apiKey: 'sk-test' });
    expect(llm.id).toBe('openai-compatible:qwen2.5:7b');
    const response = await llm.complete({
      system: 'You summarise conversations.',
      messages: [systemMessage('Be terse.'), ...question],
      maxOutputTokens: 256,
      temperature: 0,
    });
    expect(response).toEqual({
      text: 'The retry test times out.',
      model: 'test-model-2024',
      finishReason: 'stop',
      usage: { inputTokens: 30, outputTokens: 6, cachedInputTokens: 10 },
      requestId: 'req-oai-1',
    });
    const [received] = server.requests;
    expect(received?.path).toBe('/v1/chat/completions');
    expect(received?.headers.authorization).toBe('Bearer sk-test');
    expect(received?.headers['content-type']).toBe('application/json');
    expect(received?.body).toEqual({
      model: 'qwen2.5:7b',
      messages: [
        { role: 'system', content: 'You summarise conversations.' },
        { role: 'system', content: 'Be terse.' },
        { role: 'user', content: 'Summarise: the test in src/retry.ts fails with ETIMEDOUT.' },
      ],
      max_tokens: 256,
      temperature: 0,
    });
  });

  it('sends no Authorization header without a key, and no optional fields unless set', async () => {
    server.script({ body: openAIReply('ok') });
    await client().client.complete({ messages: question });
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
    expect(Object.keys(sentBody()).sort()).toEqual(['messages', 'model']);
  });

  it('uses max_completion_tokens when told to, and the client defaults', async () => {
    server.script({ body: openAIReply('ok') });
    const { client: llm } = client({
      maxTokensField: 'max_completion_tokens',
      maxOutputTokens: 99,
      temperature: 0.2,
    });
    await llm.complete({ messages: question });
    expect(sentBody()).toMatchObject({ max_completion_tokens: 99, temperature: 0.2 });
    expect(sentBody().max_tokens).toBeUndefined();
  });

  it('writes tool calls and results with the OpenAI converter and sends no tools', async () => {
    server.script({ body: openAIReply('ok') });
    const call = toolCall('read_file', { path: 'src/a.ts' }, 'call_1');
    await client().client.complete({
      messages: [
        userMessage('read it'),
        assistantMessage([{ type: 'reasoning', text: 'thinking' }, call]),
        toolMessage(toolResult(call, 'export const a = 1;')),
      ],
    });
    const body = sentBody();
    expect(body.tools).toBeUndefined();
    expect(body.messages).toEqual([
      { role: 'user', content: 'read it' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'read_file', arguments: '{"path":"src/a.ts"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'export const a = 1;' },
    ]);
  });

  it('reports what the conversion left out as warnings', async () => {
    server.script({ body: openAIReply('ok') });
    const response = await client().client.complete({
      messages: [
        userMessage('hi'),
        assistantMessage([
          { type: 'reasoning', text: 'private' },
          { type: 'text', text: 'yo' },
        ]),
      ],
    });
    expect(response.warnings).toHaveLength(1);
    expect(response.warnings?.[0]).toMatch(/^message 1/);
  });

  it('asks for JSON with response_format and an instruction, and returns the validated JSON', async () => {
    const answer = { goal: 'fix retry', files: ['src/retry.ts'], status: 'pending' };
    server.script({ body: openAIReply(JSON.stringify(answer)) });
    const response = await client().client.complete({ messages: question, jsonSchema: summarySchema });
    expect(response.json).toEqual(answer);
    const body = sentBody();
    expect(body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'response', schema: summarySchema, strict: false },
    });
    const [system] = body.messages as { role: string; content: string }[];
    expect(system?.role).toBe('system');
    expect(system?.content).toContain('JSON');
    expect(system?.content).toContain(JSON.stringify(summarySchema));
  });

  it('asks for a json_object, or only in the prompt, when the server knows no json_schema', async () => {
    server.script(
      { body: openAIReply('{"goal": "g", "files": [], "status": "done"}') },
      { body: openAIReply('[] {"goal": "g", "files": [], "status": "done"}') },
    );
    await client({ jsonResponseFormat: 'json-object' }).client.complete({
      messages: question,
      jsonSchema: summarySchema,
    });
    expect(sentBody(0).response_format).toEqual({ type: 'json_object' });
    const response = await client({ jsonResponseFormat: 'none' }).client.complete({
      messages: question,
      jsonSchema: summarySchema,
    });
    expect(sentBody(1).response_format).toBeUndefined();
    expect(response.json).toEqual({ goal: 'g', files: [], status: 'done' });
  });

  it('takes the JSON out of prose and code fences', async () => {
    const text =
      'Sure! Here it is:\n```json\n{"goal": "g", "files": [], "status": "done"}\n```\nAnything else?';
    server.script({ body: openAIReply(text) });
    const response = await client().client.complete({ messages: question, jsonSchema: summarySchema });
    expect(response.json).toEqual({ goal: 'g', files: [], status: 'done' });
    expect(response.text).toBe(text);
  });

  it('refuses JSON that does not match the schema, not retryable, listing the issues', async () => {
    server.script({ body: openAIReply('{"goal": 3, "files": ["a"], "status": "maybe", "extra": true}') });
    const error = await failure(client().client.complete({ messages: question, jsonSchema: summarySchema }));
    expect(error).toMatchObject({ code: 'provider-error', kind: 'invalid-output', retryable: false });
    expect(error.issues).toEqual([
      'goal: expected string, got number 3',
      'status: expected one of "done", "pending", got string "maybe"',
      'extra: not an allowed property',
    ]);
    expect(server.requests).toHaveLength(1);
  });

  it('refuses a JSON-mode reply without JSON', async () => {
    server.script({ body: openAIReply('I cannot produce JSON for this {oops') });
    const error = await failure(client().client.complete({ messages: question, jsonSchema: summarySchema }));
    expect(error).toMatchObject({ kind: 'invalid-output', retryable: false });
    expect(error.message).toContain('no parsable JSON');
  });

  it('treats empty text as unusable output', async () => {
    server.script({
      body: openAIReply('   ', { choices: [{ message: { content: '  ' }, finish_reason: 'length' }] }),
    });
    const error = await failure(client().client.complete({ messages: question }));
    expect(error).toMatchObject({ kind: 'invalid-output', retryable: false });
    expect(error.message).toContain('no text (finish reason: length)');
  });

  it('treats a refusal as unusable output', async () => {
    server.script({
      body: openAIReply(null, {
        choices: [
          { message: { role: 'assistant', content: null, refusal: 'I can’t help.' }, finish_reason: 'stop' },
        ],
      }),
    });
    const error = await failure(client().client.complete({ messages: question }));
    expect(error.message).toContain('finish reason: content-filter');
  });

  it('reads content sent as text parts', async () => {
    server.script({
      body: openAIReply(null, {
        choices: [
          {
            message: {
              content: [
                { type: 'text', text: 'a' },
                { type: 'text', text: 'b' },
              ],
            },
          },
        ],
      }),
    });
    expect((await client().client.complete({ messages: question })).text).toBe('ab');
  });

  it('reports a malformed body without retrying', async () => {
    server.script({ rawBody: '{"choices": [', headers: { 'x-request-id': 'r9' } });
    const error = await failure(client().client.complete({ messages: question }));
    expect(error).toMatchObject({ kind: 'invalid-response', retryable: false, requestId: 'r9' });
    expect(server.requests).toHaveLength(1);
  });

  it('reports a 2xx body without choices, with the gateway error it carries', async () => {
    server.script({ body: { error: { message: 'upstream overloaded', code: 502 } } });
    const error = await failure(client().client.complete({ messages: question }));
    expect(error.kind).toBe('invalid-response');
    expect(error.message).toContain('upstream overloaded');
  });

  it('retries a 429 after retry-after, then answers', async () => {
    server.script(
      {
        status: 429,
        headers: { 'retry-after': '3' },
        body: { error: { message: 'Rate limit', type: 'requests' } },
      },
      { body: openAIReply('done') },
    );
    const { client: llm, delays } = client();
    expect((await llm.complete({ messages: question })).text).toBe('done');
    expect(delays).toEqual([3000]);
    expect(server.requests.map((request) => request.body)).toEqual([sentBody(0), sentBody(0)]);
  });

  it('retries a 500, then answers', async () => {
    server.script({ status: 500, body: { error: { message: 'boom' } } }, { body: openAIReply('after 500') });
    const { client: llm, delays } = client();
    expect((await llm.complete({ messages: question })).text).toBe('after 500');
    expect(delays).toHaveLength(1);
  });

  it('fails with a retryable timeout naming the request timeout', async () => {
    server.script({ hang: true }, { hang: true });
    const { client: llm } = client({ maxAttempts: 2 });
    const error = await failure(llm.complete({ messages: question, timeoutMs: 120 }));
    expect(error).toMatchObject({
      kind: 'timeout',
      retryable: true,
      provider: 'openai-compatible',
      attempts: 2,
    });
    expect(error.message).toContain('120 ms');
  });

  it('does not retry a 401 and says why', async () => {
    server.script({
      status: 401,
      body: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } },
    });
    const error = await failure(client({ apiKey: 'bad' }).client.complete({ messages: question }));
    expect(error).toMatchObject({ status: 401, retryable: false });
    expect(error.message).toBe(
      'openai-compatible: HTTP 401 Unauthorized: Incorrect API key provided (invalid_request_error)',
    );
  });

  it('names the message index and field of bad input, and sends nothing', async () => {
    const bad = [userMessage('ok'), { role: 'assistant', content: [{ type: 'tool-call', toolName: 'x' }] }];
    const error = await client()
      .client.complete({ messages: bad as Message[] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidMessageError);
    expect(error).toMatchObject({ index: 1 });
    expect((error as InvalidMessageError).path).toMatch(/^content\[0\]/);
    expect(server.requests).toHaveLength(0);
  });

  it('refuses bad request fields, naming them', async () => {
    const llm = client().client;
    await expect(llm.complete({ messages: question, jsonSchema: { type: 'text' } })).rejects.toThrow(
      InvalidArgumentError,
    );
    await expect(llm.complete({ messages: question, jsonSchema: { anyOf: [] } })).rejects.toThrow(
      'jsonSchema',
    );
    await expect(llm.complete({ messages: question, maxOutputTokens: 0 })).rejects.toThrow('maxOutputTokens');
    await expect(llm.complete({ messages: question, temperature: -1 })).rejects.toThrow('temperature');
    expect(server.requests).toHaveLength(0);
  });

  it('defaults to OpenAI: its URL, max_completion_tokens and the openai id', async () => {
    server.script({ body: openAIReply('ok') });
    // A real fetch, redirected to the loopback server: what goes to api.openai.com arrives here.
    const redirect: typeof fetch = (input, init) =>
      fetch(String(input).replace('https://api.openai.com', server.url), init);
    const llm = createOpenAICompatibleClient({ model: 'gpt-4o-mini', apiKey: 'k', fetch: redirect });
    expect(llm.id).toBe('openai:gpt-4o-mini');
    await llm.complete({ messages: question, maxOutputTokens: 50 });
    expect(server.requests[0]?.path).toBe('/v1/chat/completions');
    expect(sentBody()).toMatchObject({ model: 'gpt-4o-mini', max_completion_tokens: 50 });
    expect(sentBody().max_tokens).toBeUndefined();
  });

  it('refuses bad options, naming them', () => {
    expect(() => createOpenAICompatibleClient({ model: '' })).toThrow('model');
    expect(() => createOpenAICompatibleClient({ model: 'm', baseURL: 'not a url' })).toThrow('baseURL');
    expect(() => createOpenAICompatibleClient({ model: 'm', maxOutputTokens: 1.5 })).toThrow(
      'maxOutputTokens',
    );
  });
});
