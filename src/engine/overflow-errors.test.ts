import { describe, expect, it } from 'vitest';
import { isOverflowError, parseOverflowError } from './overflow-errors.js';

/** The shape of an OpenAI / Anthropic SDK `APIError`: status, the parsed body under `error`, a message. */
class SdkError extends Error {
  constructor(
    readonly status: number,
    readonly error: unknown,
    message: string,
  ) {
    super(message);
  }
}

describe('parseOverflowError', () => {
  it('reads OpenAI chat completions errors: SDK object, raw body and message', () => {
    const body = {
      error: {
        message:
          "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens (128000 in the messages, 2532 in the functions). Please reduce the length of the messages or functions.",
        type: 'invalid_request_error',
        param: 'messages',
        code: 'context_length_exceeded',
      },
    };
    const sdkError = new SdkError(400, body.error, `400 ${body.error.message}`);
    for (const input of [sdkError, body, JSON.stringify(body), body.error.message]) {
      expect(parseOverflowError(input)).toEqual({
        provider: 'openai',
        message: expect.stringContaining('maximum context length is 128000 tokens'),
        maxTokens: 128_000,
        requestTokens: 130_532,
      });
    }
  });

  it('separates the completion share OpenAI states from the input', () => {
    const overflow = parseOverflowError(
      "This model's maximum context length is 8192 tokens, however you requested 9000 tokens (7000 in the messages, 2000 in the completion).",
    );
    expect(overflow).toMatchObject({ maxTokens: 8192, requestTokens: 7000, outputTokens: 2000 });
  });

  it('recognises the OpenAI code alone and the Responses API and GPT-5 wordings', () => {
    expect(parseOverflowError({ code: 'context_length_exceeded', message: 'Bad request' })).toEqual({
      provider: 'openai',
      message: 'Bad request',
    });
    expect(
      parseOverflowError({
        error: {
          code: 'context_length_exceeded',
          message: 'Your input exceeds the context window of this model.',
        },
      }),
    ).toMatchObject({ provider: 'openai', message: expect.stringContaining('context window') });
    expect(
      parseOverflowError(
        'Input tokens exceed the configured limit of 272000 tokens. Your messages resulted in 300123 tokens.',
      ),
    ).toMatchObject({ provider: 'openai', maxTokens: 272_000, requestTokens: 300_123 });
  });

  it('reads Anthropic errors: SDK error with the nested body, and the max_tokens variant', () => {
    const body = {
      type: 'error',
      error: { type: 'invalid_request_error', message: 'prompt is too long: 208310 tokens > 200000 maximum' },
    };
    const sdkError = new SdkError(400, body, `400 ${JSON.stringify(body)}`);
    expect(parseOverflowError(sdkError)).toEqual({
      provider: 'anthropic',
      message: 'prompt is too long: 208310 tokens > 200000 maximum',
      requestTokens: 208_310,
      maxTokens: 200_000,
    });
    expect(
      parseOverflowError({
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message:
            'input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000, decrease input length or `max_tokens` and try again',
        },
      }),
    ).toMatchObject({
      provider: 'anthropic',
      requestTokens: 197_000,
      outputTokens: 8192,
      maxTokens: 200_000,
    });
  });

  it('reads Google errors (Gemini API and Vertex wording)', () => {
    const body = {
      error: {
        code: 400,
        message: 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).',
        status: 'INVALID_ARGUMENT',
      },
    };
    expect(parseOverflowError(body)).toEqual({
      provider: 'google',
      message: body.error.message,
      requestTokens: 1_200_000,
      maxTokens: 1_048_576,
    });
    expect(
      parseOverflowError(
        'Unable to submit request because the input token count is 1,200,000 but model only supports up to 1,048,576. Reduce the input token count and try again.',
      ),
    ).toMatchObject({ provider: 'google', requestTokens: 1_200_000, maxTokens: 1_048_576 });
  });

  it('finds the body inside wrappers: AI SDK APICallError, retry errors, causes', () => {
    const apiCallError = Object.assign(new Error('Bad Request'), {
      statusCode: 400,
      responseBody: JSON.stringify({
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message: 'prompt is too long: 210000 tokens > 200000 maximum',
        },
      }),
    });
    expect(parseOverflowError(apiCallError)).toMatchObject({ provider: 'anthropic', requestTokens: 210_000 });
    const retryError = Object.assign(new Error('Failed after 3 attempts'), {
      errors: [new Error('socket hang up'), apiCallError],
      lastError: apiCallError,
    });
    expect(parseOverflowError(retryError)?.provider).toBe('anthropic');
    const wrapped = new Error('model call failed', {
      cause: {
        error: { message: 'The input token count (5) exceeds the maximum number of tokens allowed (4).' },
      },
    });
    expect(parseOverflowError(wrapped)).toMatchObject({ provider: 'google', maxTokens: 4 });
  });

  it('recognises generic wording of other servers', () => {
    for (const message of [
      'Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length',
      'Input is too long for requested model.',
      'context length exceeded',
      'the request exceeds the model context window',
    ])
      expect(parseOverflowError(new Error(message))?.provider, message).toBe('unknown');
  });

  it('does not mistake rate limits, output-size errors and other failures for overflows', () => {
    for (const error of [
      {
        status: 429,
        error: {
          message:
            'Request too large for gpt-4o on tokens per min (TPM): Limit 30000, Requested 45000. The input or output tokens must be reduced in order to run successfully.',
          type: 'tokens',
          code: 'rate_limit_exceeded',
        },
      },
      {
        error: {
          code: 429,
          message: 'Resource has been exhausted (e.g. check quota).',
          status: 'RESOURCE_EXHAUSTED',
        },
      },
      new Error('max_tokens is too large: 100000. This model supports at most 16384 completion tokens.'),
      { type: 'error', error: { type: 'invalid_request_error', message: 'messages: roles must alternate' } },
      { error: { code: 400, message: 'Invalid JSON payload received.', status: 'INVALID_ARGUMENT' } },
      new Error('fetch failed', { cause: new Error('ECONNRESET') }),
      '{ not json',
      '',
      42,
      null,
      undefined,
    ])
      expect(parseOverflowError(error)).toBeUndefined();
    expect(isOverflowError(new Error('prompt is too long: 3 tokens > 2 maximum'))).toBe(true);
    expect(isOverflowError(new Error('timeout'))).toBe(false);
  });

  it('survives cyclic and hostile objects', () => {
    const cyclic: Record<string, unknown> = { message: 'context_length_exceeded?' };
    cyclic.cause = cyclic;
    cyclic.error = { parent: cyclic };
    expect(() => parseOverflowError(cyclic)).not.toThrow();
    const hostile = {
      get message(): string {
        throw new Error('no');
      },
    };
    expect(parseOverflowError(hostile)).toBeUndefined();
  });
});
