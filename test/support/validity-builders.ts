import type {
  AssistantContentPart,
  AssistantMessage,
  Message,
  ToolCallPart,
  ToolMessage,
  ToolResultPart,
  UserMessage,
} from '../../src/messages/types.js';

/** Terse builders for the validity tests: every call is a `bash` call unless told otherwise. */
export const user = (content: UserMessage['content'] = 'hi', id?: string): UserMessage =>
  id === undefined ? { role: 'user', content } : { role: 'user', content, id };
export const assistant = (...content: AssistantContentPart[]): AssistantMessage => ({
  role: 'assistant',
  content,
});
export const call = (toolCallId: string, extra: Partial<ToolCallPart> = {}): ToolCallPart => ({
  type: 'tool-call',
  toolCallId,
  toolName: 'bash',
  input: { command: 'ls' },
  ...extra,
});
export const result = (toolCallId: string, value = 'out'): ToolResultPart => ({
  type: 'tool-result',
  toolCallId,
  toolName: 'bash',
  output: { type: 'text', value },
});
export const tool = (...content: ToolResultPart[]): ToolMessage => ({ role: 'tool', content });
export const system = (content = 'be brief'): Message => ({ role: 'system', content });
export const text = (value: string) => ({ type: 'text' as const, text: value });
