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
}

export interface LlmUsage {
  inputTokens: number;
  outputTokens: number;
}

export interface LlmResponse {
  text: string;
  json?: JSONValue;
  usage?: LlmUsage;
  /** The model that answered, as the provider reported it. */
  model?: string;
}

export interface LlmClient {
  /** Provider and model, e.g. `openai:gpt-4o-mini`; shown in logs and reports. */
  readonly id: string;
  complete(request: LlmRequest): Promise<LlmResponse>;
}
