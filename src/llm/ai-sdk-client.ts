import { InvalidArgumentError } from '../errors/index.js';
import { describeValue, isRecord } from '../internal/json-shapes.js';
import type { JSONValue, Message } from '../messages/types.js';
import {
  type AttemptFailure,
  checkPositiveInteger,
  isRetryableStatus,
  type LlmTransportOptions,
  parseRetryAfter,
  retrySettings,
  waitBeforeRetry,
} from './http-transport.js';
import {
  type LlmClient,
  type LlmFinishReason,
  type LlmResponse,
  type LlmUsage,
  llmFinishReasons,
} from './llm-client.js';
import { buildLlmResponse, prepareLlmRequest, tokenCount } from './llm-request.js';
import { isProviderError, ProviderError } from './provider-error.js';

/**
 * The adapter over any Vercel AI SDK language model. Typed structurally, so `ai` stays an optional peer
 * dependency: nothing here imports it. The types below are the parts of `LanguageModelV2` / `LanguageModelV3`
 * (`@ai-sdk/provider`) this adapter reads and writes; a real model (`openai('gpt-4o-mini')`,
 * `MockLanguageModelV3`) satisfies them.
 */

/** One message of the provider-level prompt (`LanguageModelV3Message`): string content for system only. */
export type AiSdkPromptMessage =
  | { role: 'system'; content: string; providerOptions?: Record<string, unknown> }
  | { role: 'user' | 'assistant' | 'tool'; content: unknown[]; providerOptions?: Record<string, unknown> };

/** What `doGenerate` is called with (the subset of `LanguageModelV3CallOptions` precis sets). */
export interface AiSdkCallOptions {
  prompt: AiSdkPromptMessage[];
  maxOutputTokens?: number;
  temperature?: number;
  abortSignal?: AbortSignal;
  responseFormat?: { type: 'text' } | { type: 'json'; schema?: unknown; name?: string };
}

/** What `doGenerate` answers, as far as precis reads it (v2 and v3 shapes both). */
export interface AiSdkGenerateResult {
  content: ReadonlyArray<{ type: string; text?: string }>;
  /** v3: `{ unified, raw }`; v2: the unified string. */
  finishReason?: string | { unified: string; raw?: string | undefined };
  usage?: {
    /** v3: `{ total, cacheRead, ... }`; v2: a number. */
    inputTokens?: number | { total?: number | undefined; cacheRead?: number | undefined } | undefined;
    outputTokens?: number | { total?: number | undefined } | undefined;
    /** v2 only. */
    cachedInputTokens?: number | undefined;
  };
  response?: { id?: string; modelId?: string; headers?: Record<string, string> };
  warnings?: ReadonlyArray<unknown>;
}

/** An AI SDK `LanguageModel` object (specification v2 or v3), as far as this adapter uses it. */
export interface AiSdkLanguageModel {
  readonly specificationVersion: string;
  readonly provider: string;
  readonly modelId: string;
  doGenerate(options: AiSdkCallOptions): PromiseLike<AiSdkGenerateResult>;
}

export interface AiSdkClientOptions extends Omit<LlmTransportOptions, 'fetch'> {
  /** The model, e.g. `openai('gpt-4o-mini')` from `@ai-sdk/openai`. String model ids are not resolved here. */
  model: AiSdkLanguageModel;
  /** Shown in logs and reports. @default `<model.provider>:<model.modelId>` */
  id?: string;
}

const specificationVersions = ['v2', 'v3'];

/**
 * An `LlmClient` over an AI SDK language model: `createAiSdkClient({ model: openai('gpt-4o-mini') })`. Calls
 * `model.doGenerate` with the prompt (system prompt first), `maxOutputTokens`, `temperature`, the abort signal
 * and, in JSON mode, `responseFormat: { type: 'json', schema }` (the JSON instruction is in the system prompt
 * too, for models that ignore the format). Each attempt is bounded by `timeoutMs`; failures the model marks
 * retryable (AI SDK `APICallError.isRetryable`, 408/409/429/5xx) and timeouts are retried with backoff,
 * honouring `retry-after`. Every failure is a `ProviderError` (status, retryable, request id when the model
 * reports them); a reply without text, or JSON not matching the schema, is one of kind `invalid-output`.
 *
 * @throws InvalidArgumentError when `model` is not a v2/v3 language model or an option is out of range
 */
export function createAiSdkClient(options: AiSdkClientOptions): LlmClient {
  if (!isRecord(options))
    throw new InvalidArgumentError('options', `expected an options object, got ${describeValue(options)}`);
  const { model, id } = options;
  const retry = retrySettings(options);
  const { timeoutMs, maxAttempts, now } = retry;
  if (!isRecord(model) || typeof (model as { doGenerate?: unknown }).doGenerate !== 'function')
    throw new InvalidArgumentError(
      'model',
      `expected an AI SDK language model (an object with doGenerate), got ${describeValue(model)}`,
    );
  if (!specificationVersions.includes(model.specificationVersion))
    throw new InvalidArgumentError(
      'model',
      `expected a language model of specification v2 or v3, got ${describeValue(model.specificationVersion)}`,
    );
  checkPositiveInteger('timeoutMs', timeoutMs);
  checkPositiveInteger('maxAttempts', maxAttempts);
  for (const [option, value] of [
    ['maxRetryAfterMs', retry.maxRetryAfterMs],
    ['initialBackoffMs', retry.initialBackoffMs],
    ['maxBackoffMs', retry.maxBackoffMs],
  ] as const)
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
      throw new InvalidArgumentError(option, `expected a non-negative number, got ${describeValue(value)}`);
  const provider = String(model.provider);

  return {
    id: id ?? `${provider}:${model.modelId}`,
    async complete(request) {
      const prepared = prepareLlmRequest(request);
      const { abortSignal, jsonSchema } = request;
      abortSignal?.throwIfAborted();
      const prompt: AiSdkPromptMessage[] = [
        ...(prepared.system === undefined ? [] : [{ role: 'system' as const, content: prepared.system }]),
        ...toAiSdkPrompt(prepared.messages),
      ];
      const attemptTimeoutMs = request.timeoutMs ?? timeoutMs;
      for (let attempt = 1; ; attempt++) {
        let result: AiSdkGenerateResult;
        try {
          result = await generateOnce(attemptTimeoutMs, (signal) =>
            model.doGenerate({
              prompt,
              abortSignal: signal,
              ...(request.maxOutputTokens === undefined ? {} : { maxOutputTokens: request.maxOutputTokens }),
              ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
              ...(jsonSchema === undefined
                ? {}
                : { responseFormat: { type: 'json' as const, schema: jsonSchema, name: 'response' } }),
            }),
          );
        } catch (error) {
          if (abortSignal?.aborted === true) throw abortSignal.reason;
          await waitBeforeRetry(
            retry,
            toProviderError(error, provider, attempt, now()),
            attempt,
            abortSignal,
          );
          continue;
        }
        return toLlmResponse(result, provider, jsonSchema, model.modelId);
      }

      /** One `doGenerate` call under its own timeout, linked to the caller's signal. */
      async function generateOnce(
        limitMs: number,
        call: (signal: AbortSignal) => PromiseLike<AiSdkGenerateResult>,
      ): Promise<AiSdkGenerateResult> {
        const controller = new AbortController();
        let timer: ReturnType<typeof setTimeout> | undefined;
        const onAbort = () => controller.abort(abortSignal?.reason);
        abortSignal?.addEventListener('abort', onAbort, { once: true });
        // A model that ignores its abort signal must not keep the caller waiting past the timeout.
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            const error = new TimeoutSignal(limitMs);
            controller.abort(error);
            reject(error);
          }, limitMs);
        });
        const aborted = new Promise<never>((_, reject) => {
          controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true });
        });
        try {
          return await Promise.race([Promise.resolve(call(controller.signal)), timeout, aborted]);
        } finally {
          clearTimeout(timer);
          abortSignal?.removeEventListener('abort', onAbort);
          // The losing promises reject later (or never); nothing may see those rejections as unhandled.
          timeout.catch(() => {});
          aborted.catch(() => {});
        }
      }
    },
  };
}

class TimeoutSignal extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no response within ${timeoutMs} ms (timeoutMs)`);
    this.name = 'TimeoutError';
  }
}

/** Precis messages as the provider-level prompt: string content as a text part, images as file parts. */
export function toAiSdkPrompt(messages: readonly Message[]): AiSdkPromptMessage[] {
  return messages.map((message): AiSdkPromptMessage => {
    const providerOptions =
      message.providerOptions === undefined ? {} : { providerOptions: message.providerOptions };
    if (message.role === 'system') return { role: 'system', content: message.content, ...providerOptions };
    if (message.role === 'tool') return { role: 'tool', content: [...message.content], ...providerOptions };
    const parts =
      typeof message.content === 'string'
        ? message.content === ''
          ? []
          : [{ type: 'text' as const, text: message.content }]
        : message.content;
    const content: unknown[] = [];
    for (const part of parts) {
      if (part.type === 'image')
        content.push({
          type: 'file',
          data: part.image instanceof ArrayBuffer ? new Uint8Array(part.image) : part.image,
          mediaType: part.mediaType ?? 'image/*',
          ...(part.providerOptions === undefined ? {} : { providerOptions: part.providerOptions }),
        });
      else if (part.type === 'file')
        content.push({
          ...part,
          data: part.data instanceof ArrayBuffer ? new Uint8Array(part.data) : part.data,
        });
      // Approval requests have no place in the provider prompt.
      else if (part.type !== 'tool-approval-request') content.push(part);
    }
    return { role: message.role, content, ...providerOptions };
  });
}

/** The one place AI SDK errors become `ProviderError`s. */
function toProviderError(error: unknown, provider: string, attempt: number, nowMs: number): AttemptFailure {
  if (isProviderError(error)) return { error };
  if (error instanceof TimeoutSignal)
    return {
      error: new ProviderError(
        error.message,
        { provider, kind: 'timeout', retryable: true, attempts: attempt },
        { cause: error },
      ),
    };
  const fields = isRecord(error) ? (error as Record<string, unknown>) : {};
  const message = error instanceof Error ? error.message : String(error);
  const status = typeof fields.statusCode === 'number' ? fields.statusCode : undefined;
  const headers = isRecord(fields.responseHeaders)
    ? new Headers(
        Object.entries(fields.responseHeaders).filter(
          (entry): entry is [string, string] => typeof entry[1] === 'string',
        ),
      )
    : undefined;
  const requestId = headers?.get('x-request-id') ?? headers?.get('request-id') ?? undefined;
  const retryable =
    typeof fields.isRetryable === 'boolean'
      ? fields.isRetryable
      : status !== undefined && isRetryableStatus(status);
  const name = error instanceof Error ? error.name : '';
  const kind =
    status !== undefined
      ? 'http-status'
      : /InvalidResponse|TypeValidation|JSONParse|EmptyResponseBody|NoContentGenerated/.test(name)
        ? 'invalid-response'
        : 'network';
  const providerError = new ProviderError(
    status === undefined ? message : `HTTP ${status}: ${message}`,
    {
      provider,
      kind,
      retryable: kind === 'invalid-response' ? false : retryable,
      attempts: attempt,
      ...(status === undefined ? {} : { status }),
      ...(requestId === undefined ? {} : { requestId }),
      ...(typeof fields.responseBody === 'string' ? { bodyExcerpt: fields.responseBody.slice(0, 500) } : {}),
    },
    { cause: error },
  );
  const retryAfterMs = headers === undefined ? undefined : parseRetryAfter(headers, nowMs);
  return retryAfterMs === undefined ? { error: providerError } : { error: providerError, retryAfterMs };
}

function toLlmResponse(
  result: AiSdkGenerateResult,
  provider: string,
  jsonSchema: JSONValue | undefined,
  modelId: string,
): LlmResponse {
  if (!isRecord(result) || !Array.isArray(result.content))
    throw new ProviderError('unexpected result: doGenerate returned no content array', {
      provider,
      kind: 'invalid-response',
      retryable: false,
    });
  const text = result.content
    .filter((part) => part.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text)
    .join('');
  const headers = result.response?.headers;
  const requestId = headers?.['x-request-id'] ?? headers?.['request-id'];
  const response = buildLlmResponse({
    provider,
    text,
    jsonSchema,
    model: result.response?.modelId ?? modelId,
    finishReason: finishReasonOf(result.finishReason),
    usage: usageOf(result.usage),
    requestId,
    warnings: [],
  });
  const warnings = (result.warnings ?? []).map(describeWarning);
  if (warnings.length > 0) response.warnings = [...(response.warnings ?? []), ...warnings];
  return response;
}

function finishReasonOf(value: AiSdkGenerateResult['finishReason']): LlmFinishReason | undefined {
  const unified = typeof value === 'string' ? value : value?.unified;
  if (unified === undefined) return undefined;
  return (llmFinishReasons as readonly string[]).includes(unified) ? (unified as LlmFinishReason) : 'other';
}

function usageOf(usage: AiSdkGenerateResult['usage']): LlmUsage | undefined {
  if (usage === undefined) return undefined;
  const { inputTokens: input, outputTokens: output } = usage;
  const inputTokens = tokenCount(typeof input === 'object' ? input.total : input);
  const outputTokens = tokenCount(typeof output === 'object' ? output.total : output);
  if (inputTokens === undefined || outputTokens === undefined) return undefined;
  const cached = tokenCount(typeof input === 'object' ? input.cacheRead : usage.cachedInputTokens);
  return cached === undefined
    ? { inputTokens, outputTokens }
    : { inputTokens, outputTokens, cachedInputTokens: cached };
}

/** An AI SDK call warning (v2 `unsupported-setting`, v3 `unsupported`, `other`, ...) as one line. */
function describeWarning(warning: unknown): string {
  if (!isRecord(warning)) return String(warning);
  const { type, feature, setting, message, details } = warning as Record<string, unknown>;
  const subject = [feature, setting, message].find((value) => typeof value === 'string');
  const parts = [typeof type === 'string' ? type : 'warning', subject, details].filter(
    (value): value is string => typeof value === 'string' && value !== '',
  );
  return parts.join(': ');
}
