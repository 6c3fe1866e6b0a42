import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from '@langchain/core/messages';
import { InvalidMessageError } from '../../errors/index.js';
import { isRecord } from '../../internal/json-shapes.js';
import { isErrorOutput, toolOutputText } from '../../messages/content.js';
import { unknownToolName } from '../../messages/convert/placeholders.js';
import type {
  AssistantContentPart,
  DataContent,
  Message,
  ToolCallPart,
  UserContentPart,
} from '../../messages/types.js';

type Block = Record<string, unknown>;

function blocksOf(content: unknown): Block[] {
  return Array.isArray(content) ? content.filter(isRecord) : [];
}

/** The text of LangChain content: the string, or the text blocks joined. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return blocksOf(content)
    .flatMap((block) => (block.type === 'text' && typeof block.text === 'string' ? [block.text] : []))
    .join('\n');
}

function imageOf(block: Block): UserContentPart | undefined {
  if (block.type === 'image_url') {
    const field = block.image_url;
    const url = typeof field === 'string' ? field : isRecord(field) ? field.url : undefined;
    return typeof url === 'string' ? { type: 'image', image: url } : undefined;
  }
  if (block.type === 'image') {
    const mediaType = typeof block.mimeType === 'string' ? { mediaType: block.mimeType } : {};
    if (typeof block.url === 'string') return { type: 'image', image: block.url, ...mediaType };
    if (typeof block.data === 'string') return { type: 'image', image: block.data, ...mediaType };
  }
  return undefined;
}

function userContentOf(content: unknown): string | UserContentPart[] {
  if (typeof content === 'string') return content;
  return blocksOf(content).flatMap((block): UserContentPart[] => {
    if (block.type === 'text' && typeof block.text === 'string') return [{ type: 'text', text: block.text }];
    const image = imageOf(block);
    return image === undefined ? [] : [image];
  });
}

function assistantContentOf(message: AIMessage, index: number): AssistantContentPart[] {
  const parts: AssistantContentPart[] = [];
  if (typeof message.content === 'string') {
    if (message.content !== '') parts.push({ type: 'text', text: message.content });
  } else
    for (const block of blocksOf(message.content)) {
      if (block.type === 'text' && typeof block.text === 'string' && block.text !== '')
        parts.push({ type: 'text', text: block.text });
      else if (block.type === 'reasoning' && typeof block.reasoning === 'string')
        parts.push({ type: 'reasoning', text: block.reasoning });
      else if (block.type === 'thinking' && typeof block.thinking === 'string')
        parts.push({ type: 'reasoning', text: block.thinking });
      // Provider tool_use blocks repeat `tool_calls`, which is what is read below.
    }
  (message.tool_calls ?? []).forEach((call, position) => {
    if (typeof call.id !== 'string' || call.id === '')
      throw new InvalidMessageError('a tool call needs an id to be paired with its result', {
        index,
        path: `tool_calls[${position}].id`,
      });
    parts.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: call.args });
  });
  return parts;
}

/**
 * One LangChain message as a precis message (see `fromLangChainMessages`). `toolNameOf` gives the tool name of
 * an earlier tool call by its id: a tool message without a `name` takes its call's.
 * @throws InvalidMessageError naming `index` and the field when the message cannot be converted
 */
export function fromLangChainMessage(
  message: BaseMessage,
  index: number,
  toolNameOf: (toolCallId: string) => string | undefined,
): Message {
  const id = typeof message?.id === 'string' && message.id !== '' ? { id: message.id } : {};
  if (SystemMessage.isInstance(message)) return { role: 'system', content: textOf(message.content), ...id };
  if (HumanMessage.isInstance(message))
    return { role: 'user', content: userContentOf(message.content), ...id };
  if (AIMessage.isInstance(message))
    return { role: 'assistant', content: assistantContentOf(message, index), ...id };
  if (ToolMessage.isInstance(message)) {
    const toolCallId = message.tool_call_id;
    if (typeof toolCallId !== 'string' || toolCallId === '')
      throw new InvalidMessageError('a tool message needs the tool_call_id it answers', {
        index,
        path: 'tool_call_id',
      });
    const value = textOf(message.content);
    return {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId,
          toolName: message.name ?? toolNameOf(toolCallId) ?? unknownToolName,
          output: { type: message.status === 'error' ? 'error-text' : 'text', value },
        },
      ],
      ...id,
    };
  }
  const type = isRecord(message) && typeof message.type === 'string' ? message.type : typeof message;
  throw new InvalidMessageError(`expected a system, human, ai or tool message, got ${JSON.stringify(type)}`, {
    index,
    path: 'type',
  });
}

/** Records the tool calls of a converted message under their ids, for the tool messages that answer them. */
export function recordToolNames(message: Message, toolNames: Map<string, string>): void {
  if (message.role !== 'assistant' || typeof message.content === 'string') return;
  for (const part of message.content)
    if (part.type === 'tool-call') toolNames.set(part.toolCallId, part.toolName);
}

/**
 * LangChain messages as precis messages, one for one and in order: a message's id becomes the precis id,
 * tool calls keep their ids (`tool_calls[].id` → `toolCallId`, `tool_call_id` → the result's `toolCallId`),
 * a tool message with `status: 'error'` becomes an error result. Text, images and reasoning are carried;
 * other content blocks are not (callers keep the original objects of messages that compaction leaves alone).
 * @throws InvalidMessageError naming the message index and field for a message that cannot be converted
 */
export function fromLangChainMessages(messages: readonly BaseMessage[]): Message[] {
  if (!Array.isArray(messages))
    throw new InvalidMessageError('expected an array of LangChain messages', { path: '' });
  const toolNames = new Map<string, string>();
  return messages.map((message, index): Message => {
    const converted = fromLangChainMessage(message, index, (toolCallId) => toolNames.get(toolCallId));
    recordToolNames(converted, toolNames);
    return converted;
  });
}

function dataUrl(data: DataContent, mediaType: string): string {
  if (data instanceof URL) return data.href;
  if (typeof data === 'string')
    return /^(?:https?|data):/i.test(data) ? data : `data:${mediaType};base64,${data}`;
  const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : data;
  return `data:${mediaType};base64,${Buffer.from(bytes).toString('base64')}`;
}

function userBlocks(parts: readonly UserContentPart[]): Block[] {
  return parts.map((part): Block => {
    switch (part.type) {
      case 'text':
        return { type: 'text', text: part.text };
      case 'image':
        return { type: 'image_url', image_url: { url: dataUrl(part.image, part.mediaType ?? 'image/png') } };
      default:
        // LangChain chat models take files in provider-specific blocks: name the file rather than guess one.
        return { type: 'text', text: `[file ${part.filename ?? ''} ${part.mediaType}]`.replace('  ', ' ') };
    }
  });
}

/**
 * Precis messages as LangChain messages: the reverse of `fromLangChainMessages`. A precis tool message with
 * several results becomes one `ToolMessage` per result (ids after the first get `-1`, `-2`, ...); string
 * content, summaries and stubs become plain text.
 */
export function toLangChainMessages(messages: readonly Message[]): BaseMessage[] {
  return messages.flatMap((message): BaseMessage[] => {
    const id = message.id === undefined ? {} : { id: message.id };
    switch (message.role) {
      case 'system':
        return [new SystemMessage({ content: message.content, ...id })];
      case 'user':
        return [
          new HumanMessage({
            content:
              typeof message.content === 'string' ? message.content : (userBlocks(message.content) as never),
            ...id,
          }),
        ];
      case 'assistant': {
        const parts =
          typeof message.content === 'string'
            ? [{ type: 'text' as const, text: message.content }]
            : message.content;
        const text = parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
        const calls = parts.filter(
          (part): part is ToolCallPart => part.type === 'tool-call' && part.providerExecuted !== true,
        );
        return [
          new AIMessage({
            content: text,
            ...(calls.length === 0
              ? {}
              : {
                  tool_calls: calls.map((call) => ({
                    type: 'tool_call' as const,
                    id: call.toolCallId,
                    name: call.toolName,
                    args: isRecord(call.input) ? call.input : { input: call.input },
                  })),
                }),
            ...id,
          }),
        ];
      }
      default: {
        let position = 0;
        return message.content.flatMap((part) => {
          if (part.type !== 'tool-result') return [];
          const suffix = position++ === 0 ? '' : `-${position - 1}`;
          return [
            new ToolMessage({
              content: toolOutputText(part.output),
              tool_call_id: part.toolCallId,
              name: part.toolName,
              status: isErrorOutput(part.output) ? 'error' : 'success',
              ...(message.id === undefined ? {} : { id: `${message.id}${suffix}` }),
            }),
          ];
        });
      }
    }
  });
}
