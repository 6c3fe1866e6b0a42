import { InvalidArgumentError } from '../errors/index.js';
import { isRecord } from '../internal/json-shapes.js';
import type { ConversionWarning } from '../messages/convert/conversion-warning.js';
import { parseMessages } from '../messages/parse.js';
import type { JSONValue, Message } from '../messages/types.js';
import { checkPositiveInteger } from './http-transport.js';
import { jsonOutputInstruction, setCheckedJson } from './json-output.js';
import { checkJsonSchemaDefinition } from './json-schema-check.js';
import type { LlmFinishReason, LlmRequest, LlmResponse, LlmUsage } from './llm-client.js';
import { ProviderError } from './provider-error.js';

/** What every adapter needs from a request, checked once. */
export interface PreparedLlmRequest {
  messages: Message[];
  /** `request.system`, followed by the JSON instruction in JSON mode; undefined when there is neither. */
  system: string | undefined;
}

/**
 * Checks a request before anything is sent.
 *
 * @throws InvalidMessageError naming the message index and field path for a malformed message
 * @throws InvalidArgumentError naming the field for a bad `jsonSchema`, `maxOutputTokens`, `temperature`, ...
 */
export function prepareLlmRequest(request: LlmRequest): PreparedLlmRequest {
  if (!isRecord(request)) throw new InvalidArgumentError('request', 'expected an object');
  const messages = parseMessages(request.messages);
  if (request.system !== undefined && typeof request.system !== 'string') {
    throw new InvalidArgumentError('system', 'expected a string');
  }
  checkPositiveInteger('maxOutputTokens', request.maxOutputTokens);
  checkPositiveInteger('timeoutMs', request.timeoutMs);
  const { temperature } = request;
  if (
    temperature !== undefined &&
    (typeof temperature !== 'number' || !Number.isFinite(temperature) || temperature < 0)
  ) {
    throw new InvalidArgumentError(
      'temperature',
      `expected a non-negative number, got ${String(temperature)}`,
    );
  }
  const pieces: string[] = [];
  if (request.system !== undefined && request.system !== '') pieces.push(request.system);
  if (request.jsonSchema !== undefined) {
    checkJsonSchemaDefinition(request.jsonSchema);
    pieces.push(jsonOutputInstruction(request.jsonSchema));
  }
  return { messages, system: pieces.length === 0 ? undefined : pieces.join('\n\n') };
}

export interface ReplyParts {
  provider: string;
  text: string;
  jsonSchema: JSONValue | undefined;
  model: string | undefined;
  finishReason: LlmFinishReason | undefined;
  usage: LlmUsage | undefined;
  requestId: string | undefined;
  warnings: readonly ConversionWarning[];
}

/**
 * The response from a parsed reply.
 *
 * @throws ProviderError of kind `invalid-output` when there is no text, or JSON was asked for and the text is
 *   not JSON matching the schema
 */
export function buildLlmResponse(parts: ReplyParts): LlmResponse {
  const { provider, text, jsonSchema, model, finishReason, usage, requestId, warnings } = parts;
  if (text.trim() === '') {
    // Nothing a caller could use; an error makes every caller take its fallback instead of committing ''.
    const reason = finishReason === undefined ? '' : ` (finish reason: ${finishReason})`;
    throw new ProviderError(`the model returned no text${reason}`, {
      provider,
      kind: 'invalid-output',
      retryable: false,
      ...(requestId === undefined ? {} : { requestId }),
    });
  }
  const response: LlmResponse = { text };
  if (jsonSchema !== undefined) setCheckedJson(response, jsonSchema, { provider, requestId });
  if (usage !== undefined) response.usage = usage;
  if (model !== undefined) response.model = model;
  if (finishReason !== undefined) response.finishReason = finishReason;
  if (requestId !== undefined) response.requestId = requestId;
  if (warnings.length > 0) {
    response.warnings = warnings.map((warning) =>
      warning.path === undefined || warning.path === ''
        ? `message ${warning.index}: ${warning.message}`
        : `message ${warning.index}, ${warning.path}: ${warning.message}`,
    );
  }
  return response;
}

/** A `ProviderError` for a 2xx body that is not the expected wire format. */
export function invalidResponse(
  provider: string,
  reason: string,
  body: unknown,
  requestId: string | undefined,
): ProviderError {
  return new ProviderError(`unexpected response: ${reason}`, {
    provider,
    kind: 'invalid-response',
    retryable: false,
    bodyExcerpt: JSON.stringify(body).slice(0, 500),
    ...(requestId === undefined ? {} : { requestId }),
  });
}

/** A non-negative integer token count, or undefined. */
export function tokenCount(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

/** `base` without trailing slashes, then `suffix`. */
export function joinUrl(base: string, suffix: string): string {
  return base.replace(/\/+$/, '') + suffix;
}
