import type { Provider } from '../messages/provider.js';

/** Tokens a provider's chat format adds around the text of a request. */
export interface ProviderFraming {
  /** Per message: role marker and turn delimiters. */
  messageTokens: number;
  /** Extra per message that carries a name (`providerOptions.openai.name`), plus the name's own tokens. */
  nameTokens: number;
  /** Per tool call, on top of its name and arguments. */
  toolCallTokens: number;
  /** Per tool result, on top of its output. */
  toolResultTokens: number;
  /** Per `tool` message, on top of its results' framing. */
  toolMessageTokens: number;
  /** Once per request: the primer of the assistant's reply. */
  replyPrimingTokens: number;
  /** Per tool definition, on top of its name, description and JSON schema. */
  toolDefinitionTokens: number;
  /** Once per request that defines tools. */
  toolDefinitionsTokens: number;
}

/**
 * OpenAI (Chat Completions, o200k models), from the OpenAI cookbook "How to count tokens with tiktoken":
 * every message is `<|start|>{role}<|message|>{content}<|end|>`, 3 tokens plus 1 for the role, +1 with a
 * name, and every reply is primed with `<|start|>assistant<|message|>` (3). A tool call costs 3 beyond its name
 * and arguments (gpt-tokenizer's `function_call` overhead). Each tool result travels as its own `tool`
 * message, so it pays the message framing and the `tool` message itself adds nothing. Tool definitions: 7 per
 * function and 12 per request, the cookbook's `num_tokens_for_tools` constants for gpt-4o. Call ids are not
 * counted: the model is not shown them as text.
 *
 * Anthropic publishes no chat template. The per-message, tool call and tool result numbers are estimates
 * (assumed close to OpenAI's, with more for the `tool_use` / `tool_result` block markup); 346 is the tool-use
 * system prompt Anthropic documents for Claude 4.x and 3.7 with `tool_choice` auto or none (313 for any or
 * tool). Calibrate against reported usage or override per accountant.
 */
export const providerFraming = {
  openai: {
    messageTokens: 4,
    nameTokens: 1,
    toolCallTokens: 3,
    toolResultTokens: 4,
    toolMessageTokens: 0,
    replyPrimingTokens: 3,
    toolDefinitionTokens: 7,
    toolDefinitionsTokens: 12,
  },
  anthropic: {
    messageTokens: 4,
    nameTokens: 0,
    toolCallTokens: 12,
    toolResultTokens: 8,
    toolMessageTokens: 4,
    replyPrimingTokens: 3,
    toolDefinitionTokens: 8,
    toolDefinitionsTokens: 346,
  },
} as const satisfies Record<Provider, ProviderFraming>;
