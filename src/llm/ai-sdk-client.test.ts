import { APICallError } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, InvalidMessageError } from '../errors/index.js';
import { type AiSdkGenerateResult, type AiSdkLanguageModel, createAiSdkClient } from './ai-sdk-client.js';
import { jsonOutputInstruction } from './json-output.js';
import { recordingSleep } from './loopback-server.test-support.js';
import { isProviderError, type ProviderError } from './provider-error.js';

type V3Result = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;

function v3Result(text: string, extra: Partial<V3Result> = {}): V3Result {
  return {
    content: text === '' ? [] : [{ type: 'text', text }],
    finishReason: { unified: 'stop', raw: 'stop' },
    usage: {
      inputTokens: { total: 30, noCache: 20, cacheRead: 10, cacheWrite: undefined },
      outputTokens: { total: 7, text: 7, reasoning: undefined },
    },
    warnings: [],
    response: { id: 'resp-1', modelId: 'mock-model-2025', headers: { 'x-request-id': 'req-42' } },
    ...extra,
  };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

const question = [{ role: 'user' as const, content: 'What is 2 + 2?' }];

describe('createAiSdkClient with MockLanguageModelV3 from ai/test', () => {
  it('sends the system prompt, messages and settings through doGenerate and reads text, usage and ids', async () => {
    const model = new MockLanguageModelV3({ provider: 'mock-provider', doGenerate: v3Result('4') });
    const client = createAiSdkClient({ model });
    expect(client.id).toBe('mock-provider:mock-model-id');
    const response = await client.complete({
      system: 'Answer briefly.',
      messages: [
        ...question,
        { role: 'assistant', content: 'Thinking.' },
        { role: 'user', content: 'Well?' },
      ],
      maxOutputTokens: 50,
      temperature: 0,
    });
    expect(response).toEqual({
      text: '4',
      usage: { inputTokens: 30, outputTokens: 7, cachedInputTokens: 10 },
      model: 'mock-model-2025',
      finishReason: 'stop',
      requestId: 'req-42',
    });
    expect(model.doGenerateCalls).toHaveLength(1);
    const call = model.doGenerateCalls[0]!;
    expect(call.prompt).toEqual([
      { role: 'system', content: 'Answer briefly.' },
      { role: 'user', content: [{ type: 'text', text: 'What is 2 + 2?' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Thinking.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Well?' }] },
    ]);
    expect(call.maxOutputTokens).toBe(50);
    expect(call.temperature).toBe(0);
    expect(call.responseFormat).toBeUndefined();
    expect(call.abortSignal).toBeInstanceOf(AbortSignal);
  });

  it('asks for JSON with responseFormat and the instruction, and checks the reply against the schema', async () => {
    const schema = { type: 'object', properties: { summary: { type: 'string' } }, required: ['summary'] };
    const model = new MockLanguageModelV3({
      doGenerate: [
        v3Result('Sure: {"summary": "all good"}'),
        v3Result('{"summary": 5}'),
        v3Result('no JSON here'),
      ],
    });
    const client = createAiSdkClient({ model, maxAttempts: 1 });
    const response = await client.complete({ messages: question, jsonSchema: schema });
    expect(response.json).toEqual({ summary: 'all good' });
    const call = model.doGenerateCalls[0]!;
    expect(call.responseFormat).toEqual({ type: 'json', schema, name: 'response' });
    expect(call.prompt[0]).toEqual({ role: 'system', content: jsonOutputInstruction(schema) });

    for (const expected of [/does not match the schema: summary: expected string/, /no parsable JSON/]) {
      const error = (await rejection(
        client.complete({ messages: question, jsonSchema: schema }),
      )) as ProviderError;
      expect(isProviderError(error)).toBe(true);
      expect(error.kind).toBe('invalid-output');
      expect(error.retryable).toBe(false);
      expect(error.message).toMatch(expected);
    }
    // Invalid output is not retried by the client (the strategies decide).
    expect(model.doGenerateCalls).toHaveLength(3);
  });

  it('turns an empty reply into an invalid-output error, and a cut-off one reports finish reason length', async () => {
    const model = new MockLanguageModelV3({
      doGenerate: [
        v3Result('', { finishReason: { unified: 'length', raw: 'max_tokens' } }),
        v3Result('partial', { finishReason: { unified: 'length', raw: 'max_tokens' } }),
      ],
    });
    const client = createAiSdkClient({ model });
    const error = (await rejection(client.complete({ messages: question }))) as ProviderError;
    expect(error.kind).toBe('invalid-output');
    expect(error.message).toContain('the model returned no text (finish reason: length)');
    expect((await client.complete({ messages: question })).finishReason).toBe('length');
  });

  it('retries retryable API call errors, honouring retry-after, and maps status and request id', async () => {
    const overloaded = new APICallError({
      message: 'Rate limited',
      url: 'https://api.example.com/v1/chat',
      requestBodyValues: {},
      statusCode: 429,
      responseHeaders: { 'retry-after': '2', 'x-request-id': 'req-429' },
      responseBody: '{"error":"slow down"}',
    });
    const { sleep, delays } = recordingSleep();
    let calls = 0;
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        calls++;
        if (calls === 1) throw overloaded;
        return v3Result('done');
      },
    });
    const client = createAiSdkClient({ model, sleep });
    expect((await client.complete({ messages: question })).text).toBe('done');
    expect(delays).toEqual([2000]);

    const badRequest = new APICallError({
      message: 'Bad request: unknown field',
      url: 'https://api.example.com/v1/chat',
      requestBodyValues: {},
      statusCode: 400,
      responseHeaders: { 'request-id': 'req-400' },
    });
    const failing = new MockLanguageModelV3({
      doGenerate: async () => {
        throw badRequest;
      },
    });
    const error = (await rejection(
      createAiSdkClient({ model: failing, sleep }).complete({ messages: question }),
    )) as ProviderError;
    expect(error).toMatchObject({
      code: 'provider-error',
      provider: 'mock-provider',
      kind: 'http-status',
      status: 400,
      retryable: false,
      requestId: 'req-400',
      attempts: 1,
    });
    expect(error.message).toBe('mock-provider: HTTP 400: Bad request: unknown field');
    expect(error.cause).toBe(badRequest);
    expect(failing.doGenerateCalls).toHaveLength(1);

    // Retryable failures stop after maxAttempts with the last error.
    const down = new MockLanguageModelV3({
      doGenerate: async () => {
        throw new APICallError({ message: 'boom', url: 'u', requestBodyValues: {}, statusCode: 503 });
      },
    });
    const last = (await rejection(
      createAiSdkClient({ model: down, sleep, maxAttempts: 2 }).complete({ messages: question }),
    )) as ProviderError;
    expect(last).toMatchObject({ status: 503, retryable: true, attempts: 2 });
    expect(down.doGenerateCalls).toHaveLength(2);
  });

  it('times out a model that does not answer, and passes a caller abort through untouched', async () => {
    let signal: AbortSignal | undefined;
    const hanging = new MockLanguageModelV3({
      doGenerate: (options) => {
        signal = options.abortSignal;
        return new Promise(() => {});
      },
    });
    const error = (await rejection(
      createAiSdkClient({ model: hanging, timeoutMs: 30, maxAttempts: 1 }).complete({ messages: question }),
    )) as ProviderError;
    expect(error).toMatchObject({ kind: 'timeout', retryable: true });
    expect(signal?.aborted).toBe(true);

    const controller = new AbortController();
    const pending = createAiSdkClient({ model: hanging }).complete({
      messages: question,
      abortSignal: controller.signal,
    });
    const reason = new Error('caller gave up');
    controller.abort(reason);
    expect(await rejection(pending)).toBe(reason);
  });

  it('converts images and files to file parts and leaves out precis ids and metadata', async () => {
    const model = new MockLanguageModelV3({ doGenerate: v3Result('a cat') });
    await createAiSdkClient({ model }).complete({
      messages: [
        {
          role: 'user',
          id: 'm-1',
          metadata: { origin: 'test' },
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', image: 'https://example.com/cat.png' },
          ],
        },
      ],
    });
    expect(model.doGenerateCalls[0]!.prompt).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'file', data: 'https://example.com/cat.png', mediaType: 'image/*' },
        ],
      },
    ]);
  });
});

describe('createAiSdkClient with a v2 model and bad input', () => {
  it('reads v2 results (string finish reason, numeric usage)', async () => {
    const model: AiSdkLanguageModel = {
      specificationVersion: 'v2',
      provider: 'legacy',
      modelId: 'old-model',
      doGenerate: async (): Promise<AiSdkGenerateResult> => ({
        content: [
          { type: 'reasoning', text: 'hmm' },
          { type: 'text', text: 'hello' },
        ],
        finishReason: 'unknown',
        usage: { inputTokens: 11, outputTokens: 3, cachedInputTokens: 4 },
        warnings: [{ type: 'unsupported-setting', setting: 'temperature', details: 'ignored' }],
      }),
    };
    const response = await createAiSdkClient({ model, id: 'legacy:custom' }).complete({
      messages: question,
      temperature: 0.5,
    });
    expect(response).toEqual({
      text: 'hello',
      usage: { inputTokens: 11, outputTokens: 3, cachedInputTokens: 4 },
      model: 'old-model',
      finishReason: 'other',
      warnings: ['unsupported-setting: temperature: ignored'],
    });
  });

  it('rejects what is not a language model, bad options and malformed messages with typed errors', async () => {
    expect(() => createAiSdkClient({ model: {} as AiSdkLanguageModel })).toThrow(InvalidArgumentError);
    const v1 = {
      specificationVersion: 'v1',
      provider: 'p',
      modelId: 'm',
      doGenerate: async () => v3Result(''),
    };
    expect(() => createAiSdkClient({ model: v1 })).toThrow(
      /model: expected a language model of specification v2 or v3/,
    );
    const model = new MockLanguageModelV3({ doGenerate: v3Result('x') });
    expect(() => createAiSdkClient({ model, maxAttempts: 0 })).toThrow(/maxAttempts/);
    const error = await rejection(
      createAiSdkClient({ model }).complete({
        messages: [{ role: 'user', content: [{ type: 'text', text: 42 }] }] as never,
      }),
    );
    expect(error).toBeInstanceOf(InvalidMessageError);
    expect(error).toMatchObject({ index: 0, path: 'content[0].text' });
    expect(model.doGenerateCalls).toHaveLength(0);
  });
});
