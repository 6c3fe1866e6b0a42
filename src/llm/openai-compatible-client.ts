import { InvalidArgumentError } from '../errors/index.js';
import { isRecord } from '../internal/json-shapes.js';
import { toOpenAI } from '../messages/convert/openai.js';
import type { OpenAIChatMessage } from '../messages/convert/openai-types.js';
import type { JSONObject, JSONValue } from '../messages/types.js';
import {
  callLimits,
  checkPositiveInteger,
  createHttpTransport,
  type LlmTransportOptions,
} from './http-transport.js';
import type { LlmClient, LlmFinishReason, LlmUsage } from './llm-client.js';
import { buildLlmResponse, invalidResponse, joinUrl, prepareLlmRequest, tokenCount } from './llm-request.js';

export const openAIBaseUrl = 'https://api.openai.com/v1';

export const maxTokensFields = ['max_tokens', 'max_completion_tokens'] as const;
export type MaxTokensField = (typeof maxTokensFields)[number];

/**
 * How JSON mode asks for JSON: `json-schema` sends the schema as `response_format` (OpenAI, Ollama, vLLM,
 * llama.cpp, LM Studio), `json-object` sends `{ type: 'json_object' }` for servers that only know that, `none`
 * relies on the system-prompt instruction alone. The reply is checked against the schema in every case.
 */
export const jsonResponseFormats = ['json-schema', 'json-object', 'none'] as const;
export type JsonResponseFormat = (typeof jsonResponseFormats)[number];

export interface OpenAICompatibleClientOptions extends LlmTransportOptions {
  /** Model name as the endpoint knows it, e.g. `gpt-4o-mini` or `qwen2.5:7b`. */
  model: string;
  /**
   * Base URL of the Chat Completions API; `/chat/completions` is appended.
   * @default 'https://api.openai.com/v1'
   */
  baseURL?: string;
  /** Sent as `Authorization: Bearer <apiKey>`. Local servers (Ollama, llama.cpp) need none: no header then. */
  apiKey?: string;
  /**
   * Provider name in the client's `id` and in errors.
   * @default 'openai' for OpenAI's own endpoint, 'openai-compatible' otherwise
   */
  provider?: string;
  /**
   * The body field that caps the output. OpenAI's newer models refuse `max_tokens`; many compatible servers
   * only know `max_tokens`.
   * @default 'max_completion_tokens' for OpenAI's own endpoint, 'max_tokens' otherwise
   */
  maxTokensField?: MaxTokensField;
  /**
   * How JSON mode asks for JSON (see `jsonResponseFormats`).
   * @default 'json-schema'
   */
  jsonResponseFormat?: JsonResponseFormat;
  /** Output cap used when a request sets none; the endpoint's default when absent. */
  maxOutputTokens?: number;
  /** Temperature used when a request sets none; the endpoint's default when absent. */
  temperature?: number;
  /** Extra headers on every request (`OpenAI-Organization`, OpenRouter's `HTTP-Referer`, ...). */
  headers?: Record<string, string>;
}

/**
 * An `LlmClient` for the OpenAI Chat Completions API and every server that speaks it (OpenAI, Ollama, vLLM,
 * llama.cpp server, LM Studio, OpenRouter). Messages are written with `toOpenAI`; no tools are sent. In JSON
 * mode the request asks for `response_format: json_schema` (non-strict, so any schema is accepted) and also
 * says so in the system prompt, for servers that ignore `response_format`; the reply is checked against the
 * schema either way.
 */
export function createOpenAICompatibleClient(options: OpenAICompatibleClientOptions): LlmClient {
  const {
    model,
    baseURL = openAIBaseUrl,
    apiKey,
    headers = {},
    jsonResponseFormat = 'json-schema',
    maxOutputTokens: defaultMaxOutputTokens,
    temperature: defaultTemperature,
    ...transportOptions
  } = options;
  if (typeof model !== 'string' || model.trim() === '') {
    throw new InvalidArgumentError('model', 'expected a model name');
  }
  checkPositiveInteger('maxOutputTokens', defaultMaxOutputTokens);
  if (!jsonResponseFormats.includes(jsonResponseFormat)) {
    throw new InvalidArgumentError(
      'jsonResponseFormat',
      `expected one of ${jsonResponseFormats.join(', ')}, got ${String(jsonResponseFormat)}`,
    );
  }
  const official = isOpenAIEndpoint(baseURL);
  const provider = options.provider ?? (official ? 'openai' : 'openai-compatible');
  const maxTokensField = options.maxTokensField ?? (official ? 'max_completion_tokens' : 'max_tokens');
  const url = joinUrl(baseURL, '/chat/completions');
  const transport = createHttpTransport({ ...transportOptions, provider });
  const authorization: Record<string, string> =
    apiKey === undefined || apiKey === '' ? {} : { authorization: `Bearer ${apiKey}` };

  return {
    id: `${provider}:${model}`,
    async complete(request) {
      const prepared = prepareLlmRequest(request);
      // Reasoning goes nowhere useful on a summarizer call and `reasoning_content` is not standard.
      const converted = toOpenAI(prepared.messages, { reasoning: 'drop' });
      const messages: OpenAIChatMessage[] = [
        ...(prepared.system === undefined ? [] : [{ role: 'system' as const, content: prepared.system }]),
        ...converted.messages,
      ];
      const body: JSONObject = { model, messages: messages as unknown as JSONValue[] };
      const maxOutputTokens = request.maxOutputTokens ?? defaultMaxOutputTokens;
      if (maxOutputTokens !== undefined) body[maxTokensField] = maxOutputTokens;
      const temperature = request.temperature ?? defaultTemperature;
      if (temperature !== undefined) body.temperature = temperature;
      if (request.jsonSchema !== undefined) {
        const format = responseFormat(jsonResponseFormat, request.jsonSchema);
        if (format !== undefined) body.response_format = format;
      }
      const reply = await transport.postJson({
        url,
        headers: { ...headers, ...authorization },
        body,
        ...callLimits(request),
      });
      const { requestId } = reply;
      const choice = firstChoice(reply.body);
      if (choice === undefined) {
        throw invalidResponse(provider, missingChoiceReason(reply.body), reply.body, requestId);
      }
      const text = messageText(choice.message);
      if (text === undefined) {
        throw invalidResponse(provider, 'choices[0].message.content is not text', reply.body, requestId);
      }
      const responseBody = reply.body as Record<string, unknown>;
      return buildLlmResponse({
        provider,
        text,
        jsonSchema: request.jsonSchema,
        model: typeof responseBody.model === 'string' ? responseBody.model : undefined,
        // A refusal comes with finish reason `stop` and no content.
        finishReason:
          typeof choice.message.refusal === 'string' && text === ''
            ? 'content-filter'
            : finishReasonOf(choice.finish_reason),
        usage: usageOf(responseBody.usage),
        requestId,
        warnings: converted.warnings,
      });
    },
  };
}

function isOpenAIEndpoint(baseURL: string): boolean {
  try {
    return new URL(baseURL).hostname === 'api.openai.com';
  } catch {
    throw new InvalidArgumentError('baseURL', `not a URL: ${baseURL}`);
  }
}

function responseFormat(format: JsonResponseFormat, schema: JSONValue): JSONObject | undefined {
  switch (format) {
    case 'json-schema':
      // Not strict: strict mode refuses schemas without additionalProperties:false on every object.
      return { type: 'json_schema', json_schema: { name: schemaName(schema), schema, strict: false } };
    case 'json-object':
      return { type: 'json_object' };
    case 'none':
      return undefined;
  }
}

/** OpenAI wants `^[a-zA-Z0-9_-]{1,64}$`; the schema's title when it fits. */
function schemaName(schema: JSONValue): string {
  const title = isRecord(schema) ? schema.title : undefined;
  return typeof title === 'string' && /^[a-zA-Z0-9_-]{1,64}$/.test(title) ? title : 'response';
}

function firstChoice(
  body: unknown,
): { message: Record<string, unknown>; finish_reason: unknown } | undefined {
  if (!isRecord(body) || !Array.isArray(body.choices)) return undefined;
  const [choice] = body.choices as unknown[];
  if (!isRecord(choice) || !isRecord(choice.message)) return undefined;
  return { message: choice.message, finish_reason: choice.finish_reason };
}

/** Some gateways (OpenRouter) report failures as a 2xx body with `error`. */
function missingChoiceReason(body: unknown): string {
  const error = isRecord(body) ? body.error : undefined;
  if (isRecord(error) && typeof error.message === 'string')
    return `error in a 2xx response: ${error.message}`;
  return 'no choices[0].message';
}

/** String content, or the text parts some compatible servers send as an array; `null` reads as ''. */
function messageText(message: Record<string, unknown>): string | undefined {
  const { content } = message;
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  if (!Array.isArray(content)) return undefined;
  return content.map((part) => (isRecord(part) && typeof part.text === 'string' ? part.text : '')).join('');
}

const finishReasons: Record<string, LlmFinishReason> = {
  stop: 'stop',
  length: 'length',
  content_filter: 'content-filter',
  tool_calls: 'tool-calls',
  function_call: 'tool-calls',
};

function finishReasonOf(value: unknown): LlmFinishReason | undefined {
  if (typeof value !== 'string') return undefined;
  return finishReasons[value] ?? 'other';
}

function usageOf(value: unknown): LlmUsage | undefined {
  if (!isRecord(value)) return undefined;
  const inputTokens = tokenCount(value.prompt_tokens);
  const outputTokens = tokenCount(value.completion_tokens);
  if (inputTokens === undefined || outputTokens === undefined) return undefined;
  const usage: LlmUsage = { inputTokens, outputTokens };
  const details = value.prompt_tokens_details;
  const cached = isRecord(details) ? tokenCount(details.cached_tokens) : undefined;
  if (cached !== undefined) usage.cachedInputTokens = cached;
  return usage;
}
