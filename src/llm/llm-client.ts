import type { JSONValue, Message } from '../messages/types.js';

/**
 * The one interface every LLM adapter implements. Deliberately small: messages in, text (or JSON validated
 * against a schema) out. Strategies depend on this, never on a vendor adapter.
 */
export interface LlmRequest {
  messages: Message[];
  /** System prompt, when the caller keeps it apart from `messages`. */
  system?: string;
  maxOutputTokens?: number;
  /** When set, the response must be JSON matching this schema; the adapter fills `LlmResponse.json`. */
  jsonSchema?: JSONValue;
  abortSignal?: AbortSignal;
  /** Sampling temperature; the client's (or the provider's) default when absent. */
  temperature?: number;
  /** Time one HTTP attempt of this call may take; the client's `timeoutMs` when absent. */
  timeoutMs?: number;
}

export interface LlmUsage {
  /** Every input token of the request, cached ones included. */
  inputTokens: number;
  outputTokens: number;
  /** The part of `inputTokens` read from the provider's prompt cache, when it says. */
  cachedInputTokens?: number;
}

/** Why the model stopped, in the AI SDK's terms. `length` means the output was cut at the token limit. */
export const llmFinishReasons = ['stop', 'length', 'content-filter', 'tool-calls', 'other'] as const;
export type LlmFinishReason = (typeof llmFinishReasons)[number];

export interface LlmResponse {
  text: string;
  json?: JSONValue;
  usage?: LlmUsage;
  /** The model that answered, as the provider reported it. */
  model?: string;
  finishReason?: LlmFinishReason;
  /** The provider's request id, for support tickets and logs. */
  requestId?: string;
  /** What the request conversion could not carry to the provider (it was left out of the request). */
  warnings?: string[];
}

export interface LlmClient {
  /** Provider and model, e.g. `openai:gpt-4o-mini`; shown in logs and reports. */
  readonly id: string;
  complete(request: LlmRequest): Promise<LlmResponse>;
}
