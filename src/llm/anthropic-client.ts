import { InvalidArgumentError } from '../errors/index.js';
import { isRecord } from '../internal/json-shapes.js';
import { toAnthropic } from '../messages/convert/anthropic.js';
import type { AnthropicTextBlock } from '../messages/convert/anthropic-types.js';
import type { JSONObject, JSONValue } from '../messages/types.js';
import {
  callLimits,
  checkPositiveInteger,
  createHttpTransport,
  type LlmTransportOptions,
} from './http-transport.js';
import type { LlmClient, LlmFinishReason, LlmUsage } from './llm-client.js';
import { buildLlmResponse, invalidResponse, joinUrl, prepareLlmRequest, tokenCount } from './llm-request.js';

export const anthropicBaseUrl = 'https://api.anthropic.com';
export const anthropicVersion = '2023-06-01';

export interface AnthropicClientOptions extends LlmTransportOptions {
  /** e.g. `claude-haiku-4-5`. */
  model: string;
  /** Sent as `x-api-key`. */
  apiKey: string;
  /**
   * Base URL of the API, as the Anthropic SDK and `ANTHROPIC_BASE_URL` write it; `/v1/messages` is appended
   * (only `/messages` when the URL already ends in `/v1`).
   * @default 'https://api.anthropic.com'
   */
  baseURL?: string;
  /**
   * Output cap used when a request sets none; the Messages API requires one.
   * @default 4096
   */
  maxOutputTokens?: number;
  /** Temperature used when a request sets none; the API's default when absent. */
  temperature?: number;
  /** Extra headers on every request (`anthropic-beta`, ...). */
  headers?: Record<string, string>;
}

/**
 * An `LlmClient` for the Anthropic Messages API. Messages are written with `toAnthropic` (system messages go to
 * `system`); no tools are sent. In JSON mode the system prompt asks for JSON only, and the first JSON value in
 * the reply is taken and checked against the schema: no assistant prefill, which newer models refuse.
 */
export function createAnthropicClient(options: AnthropicClientOptions): LlmClient {
  const {
    model,
    apiKey,
    baseURL = anthropicBaseUrl,
    maxOutputTokens: defaultMaxOutputTokens = 4096,
    temperature: defaultTemperature,
    headers = {},
    ...transportOptions
  } = options;
  if (typeof model !== 'string' || model.trim() === '') {
    throw new InvalidArgumentError('model', 'expected a model name');
  }
  if (typeof apiKey !== 'string' || apiKey === '')
    throw new InvalidArgumentError('apiKey', 'expected an API key');
  checkPositiveInteger('maxOutputTokens', defaultMaxOutputTokens);
  const provider = 'anthropic';
  const url = messagesUrl(baseURL);
  const transport = createHttpTransport({ ...transportOptions, provider });

  return {
    id: `${provider}:${model}`,
    async complete(request) {
      const prepared = prepareLlmRequest(request);
      const converted = toAnthropic(prepared.messages);
      if (converted.messages.length === 0) {
        throw new InvalidArgumentError(
          'messages',
          'the Messages API needs at least one user or assistant message',
        );
      }
      const body: JSONObject = {
        model,
        max_tokens: request.maxOutputTokens ?? defaultMaxOutputTokens,
        messages: converted.messages as unknown as JSONValue[],
      };
      const system = joinSystem(prepared.system, converted.system);
      if (system !== undefined) body.system = system as JSONValue;
      const temperature = request.temperature ?? defaultTemperature;
      if (temperature !== undefined) body.temperature = temperature;
      const reply = await transport.postJson({
        url,
        headers: { ...headers, 'x-api-key': apiKey, 'anthropic-version': anthropicVersion },
        body,
        ...callLimits(request),
      });
      const { requestId } = reply;
      const responseBody = reply.body;
      if (!isRecord(responseBody) || !Array.isArray(responseBody.content)) {
        throw invalidResponse(provider, 'no content array', responseBody, requestId);
      }
      const text = responseBody.content
        .map((block) =>
          isRecord(block) && block.type === 'text' && typeof block.text === 'string' ? block.text : '',
        )
        .join('');
      return buildLlmResponse({
        provider,
        text,
        jsonSchema: request.jsonSchema,
        model: typeof responseBody.model === 'string' ? responseBody.model : undefined,
        finishReason: finishReasonOf(responseBody.stop_reason),
        usage: usageOf(responseBody.usage),
        requestId,
        warnings: converted.warnings,
      });
    },
  };
}

function messagesUrl(baseURL: string): string {
  try {
    new URL(baseURL);
  } catch {
    throw new InvalidArgumentError('baseURL', `not a URL: ${baseURL}`);
  }
  const base = baseURL.replace(/\/+$/, '');
  return joinUrl(base, base.endsWith('/v1') ? '/messages' : '/v1/messages');
}

/** The request's system prompt first, then the conversation's system messages (kept as blocks when they are). */
function joinSystem(
  requestSystem: string | undefined,
  conversationSystem: string | AnthropicTextBlock[] | undefined,
): string | AnthropicTextBlock[] | undefined {
  if (requestSystem === undefined) return conversationSystem;
  if (conversationSystem === undefined) return requestSystem;
  if (typeof conversationSystem === 'string') return `${requestSystem}\n\n${conversationSystem}`;
  return [{ type: 'text', text: requestSystem }, ...conversationSystem];
}

const finishReasons: Record<string, LlmFinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool-calls',
  refusal: 'content-filter',
};

function finishReasonOf(value: unknown): LlmFinishReason | undefined {
  if (typeof value !== 'string') return undefined;
  return finishReasons[value] ?? 'other';
}

/** Anthropic's `input_tokens` leaves out cache reads and writes; `inputTokens` counts them all. */
function usageOf(value: unknown): LlmUsage | undefined {
  if (!isRecord(value)) return undefined;
  const input = tokenCount(value.input_tokens);
  const outputTokens = tokenCount(value.output_tokens);
  if (input === undefined || outputTokens === undefined) return undefined;
  const cacheRead = tokenCount(value.cache_read_input_tokens) ?? 0;
  const cacheWrite = tokenCount(value.cache_creation_input_tokens) ?? 0;
  const usage: LlmUsage = { inputTokens: input + cacheRead + cacheWrite, outputTokens };
  if (tokenCount(value.cache_read_input_tokens) !== undefined) usage.cachedInputTokens = cacheRead;
  return usage;
}
