import type {
  AssistantContentPart,
  AssistantMessage,
  JSONValue,
  SystemMessage,
  ToolCallPart,
  ToolMessage,
  ToolResultOutput,
  ToolResultPart,
  UserMessage,
} from '../messages/types.js';

/**
 * Small builders for tests, exported as `precis/testing` so users can write their own tests with the same
 * helpers. Each returns a plain message object; nothing here has state except the call-id counter of
 * `createConversationBuilder`.
 */
export function systemMessage(
  content: string,
  fields: Partial<Omit<SystemMessage, 'role' | 'content'>> = {},
): SystemMessage {
  return { role: 'system', content, ...fields };
}

export function userMessage(
  content: UserMessage['content'],
  fields: Partial<Omit<UserMessage, 'role' | 'content'>> = {},
): UserMessage {
  return { role: 'user', content, ...fields };
}

export function assistantMessage(
  content: string | AssistantContentPart[],
  fields: Partial<Omit<AssistantMessage, 'role' | 'content'>> = {},
): AssistantMessage {
  return { role: 'assistant', content, ...fields };
}

export function toolCall(toolName: string, input: unknown, toolCallId: string): ToolCallPart {
  return { type: 'tool-call', toolCallId, toolName, input };
}

/** A tool result for `call`: a string becomes a text output, anything else a json output. */
export function toolResult(
  call: Pick<ToolCallPart, 'toolCallId' | 'toolName'>,
  output: string | ToolResultOutput | { json: JSONValue },
): ToolResultPart {
  let resolved: ToolResultOutput;
  if (typeof output === 'string') resolved = { type: 'text', value: output };
  else if ('json' in output) resolved = { type: 'json', value: output.json };
  else resolved = output;
  return { type: 'tool-result', toolCallId: call.toolCallId, toolName: call.toolName, output: resolved };
}

export function toolMessage(...results: ToolResultPart[]): ToolMessage {
  return { role: 'tool', content: results };
}

export interface ToolExchange {
  name: string;
  input: unknown;
  /** Text output, or a full output object (use `{ type: 'error-text', value }` for a failure). */
  output: string | ToolResultOutput;
}

export interface ConversationBuilder {
  system(content: string): ConversationBuilder;
  user(content: UserMessage['content']): ConversationBuilder;
  assistant(content: string | AssistantContentPart[]): ConversationBuilder;
  /** One assistant turn calling the tools in parallel (optionally after some text), then their results. */
  tools(exchanges: ToolExchange[], text?: string): ConversationBuilder;
  build(): Array<SystemMessage | UserMessage | AssistantMessage | ToolMessage>;
}

/** Fluent builder with deterministic tool call ids (`call_1`, `call_2`, ...). */
export function createConversationBuilder(): ConversationBuilder {
  const messages: Array<SystemMessage | UserMessage | AssistantMessage | ToolMessage> = [];
  let nextCallId = 1;
  const builder: ConversationBuilder = {
    system(content) {
      messages.push(systemMessage(content));
      return builder;
    },
    user(content) {
      messages.push(userMessage(content));
      return builder;
    },
    assistant(content) {
      messages.push(assistantMessage(content));
      return builder;
    },
    tools(exchanges, text) {
      const calls = exchanges.map((exchange) =>
        toolCall(exchange.name, exchange.input, `call_${nextCallId++}`),
      );
      messages.push(
        assistantMessage([...(text === undefined ? [] : [{ type: 'text' as const, text }]), ...calls]),
      );
      exchanges.forEach((exchange, i) => {
        messages.push(toolMessage(toolResult(calls[i]!, exchange.output)));
      });
      return builder;
    },
    build() {
      return [...messages];
    },
  };
  return builder;
}
