import type { LanguageModelMiddleware } from 'ai';
import { InvalidMessageError } from '../../errors/index.js';
import { parseMessages } from '../../messages/parse.js';
import type {
  AssistantContentPart,
  DataContent,
  FilePart,
  JSONValue,
  Message,
  ToolDefinition,
  UserContentPart,
} from '../../messages/types.js';

type CallOptions = Parameters<NonNullable<LanguageModelMiddleware['transformParams']>>[0]['params'];
/** The prompt a language model receives (`LanguageModelV3Prompt`): what `transformParams` sees and returns. */
export type LanguageModelPrompt = CallOptions['prompt'];
export type LanguageModelPromptMessage = LanguageModelPrompt[number];
/** The tools of a call (`LanguageModelV3FunctionTool | LanguageModelV3ProviderTool`). */
export type LanguageModelCallTool = NonNullable<CallOptions['tools']>[number];

/**
 * The prompt as precis messages. The provider prompt is the AI SDK's `ModelMessage` shape narrowed (user
 * content always parts, images as file parts), so messages are checked and returned as they are: fields
 * precis does not model (`originalUrl`, output `providerOptions`) travel on untouched.
 * @throws InvalidMessageError with the message index and field path when the prompt is malformed
 */
export function fromLanguageModelPrompt(prompt: LanguageModelPrompt): Message[] {
  return parseMessages(prompt);
}

function toData(data: DataContent): Uint8Array | string | URL {
  return data instanceof ArrayBuffer ? new Uint8Array(data) : data;
}

function toFilePart(part: UserContentPart | AssistantContentPart): FilePart | undefined {
  if (part.type === 'image')
    return {
      type: 'file',
      data: toData(part.image),
      mediaType: part.mediaType ?? 'image/*',
      ...(part.providerOptions === undefined ? {} : { providerOptions: part.providerOptions }),
    };
  if (part.type === 'file') return { ...part, data: toData(part.data) };
  return undefined;
}

/**
 * Precis messages (compacted ones included: string content, image parts, ids and metadata) as the prompt a
 * language model receives: string content becomes a text part, images become file parts, precis' own fields
 * and assistant approval requests (which the provider prompt has no place for) are left out.
 */
export function toLanguageModelPrompt(messages: readonly Message[]): LanguageModelPrompt {
  return messages.map((message, index): LanguageModelPromptMessage => {
    const providerOptions =
      message.providerOptions === undefined ? {} : { providerOptions: message.providerOptions };
    switch (message.role) {
      case 'system':
        return { role: 'system', content: message.content, ...providerOptions };
      case 'user': {
        const parts =
          typeof message.content === 'string'
            ? [{ type: 'text' as const, text: message.content }]
            : message.content;
        return {
          role: 'user',
          content: parts.map((part) => (part.type === 'text' ? part : toFilePart(part)!)),
          ...providerOptions,
        } as LanguageModelPromptMessage;
      }
      case 'assistant': {
        const parts =
          typeof message.content === 'string'
            ? message.content === ''
              ? []
              : [{ type: 'text' as const, text: message.content }]
            : message.content.filter((part) => part.type !== 'tool-approval-request');
        return {
          role: 'assistant',
          content: parts.map((part) => toFilePart(part) ?? part),
          ...providerOptions,
        } as LanguageModelPromptMessage;
      }
      case 'tool':
        return { role: 'tool', content: message.content, ...providerOptions } as LanguageModelPromptMessage;
      default:
        throw new InvalidMessageError(`unknown role ${JSON.stringify((message as Message).role)}`, {
          index,
          path: 'role',
        });
    }
  });
}

/** The tools of a call as precis counts them: function tools with their schema, provider tools with their arguments. */
export function toolDefinitionsOf(tools: readonly LanguageModelCallTool[] | undefined): ToolDefinition[] {
  if (tools === undefined) return [];
  return tools.map((tool) =>
    tool.type === 'function'
      ? {
          name: tool.name,
          ...(tool.description === undefined ? {} : { description: tool.description }),
          inputSchema: tool.inputSchema as JSONValue,
        }
      : { name: tool.name, inputSchema: tool.args as JSONValue },
  );
}
