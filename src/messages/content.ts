import type {
  AssistantContentPart,
  Message,
  Part,
  ToolCallPart,
  ToolResultOutput,
  ToolResultPart,
} from './types.js';

/** The message's content as parts; string content reads as one text part. Does not copy parts. */
export function contentParts(message: Message): readonly Part[] {
  if (typeof message.content === 'string') return [{ type: 'text', text: message.content }];
  return message.content;
}

export function toolCallsOf(message: Message): ToolCallPart[] {
  if (message.role !== 'assistant' || typeof message.content === 'string') return [];
  return message.content.filter((part): part is ToolCallPart => part.type === 'tool-call');
}

export function toolResultsOf(message: Message): ToolResultPart[] {
  if (typeof message.content === 'string' || message.role === 'system' || message.role === 'user') return [];
  return (message.content as readonly Part[]).filter(
    (part): part is ToolResultPart => part.type === 'tool-result',
  );
}

/** True when a tool result part sits in the assistant message itself (provider-executed tools). */
export function isAssistantInlineResult(part: AssistantContentPart): part is ToolResultPart {
  return part.type === 'tool-result';
}

/** The text a tool result output carries, as the model would read it. */
export function toolOutputText(output: ToolResultOutput): string {
  switch (output.type) {
    case 'text':
    case 'error-text':
      return output.value;
    case 'json':
    case 'error-json':
      return JSON.stringify(output.value);
    case 'content':
      return output.value
        .map((item) => (item.type === 'text' ? item.text : ''))
        .filter((text) => text !== '')
        .join('\n');
    case 'execution-denied':
      return output.reason ?? 'Tool execution denied.';
  }
}

export function isErrorOutput(output: ToolResultOutput): boolean {
  return output.type === 'error-text' || output.type === 'error-json' || output.type === 'execution-denied';
}

/** All model-visible text of a message joined by newlines (text, reasoning, tool inputs and outputs). */
export function messageText(message: Message): string {
  if (typeof message.content === 'string') return message.content;
  const pieces: string[] = [];
  for (const part of message.content as readonly Part[]) {
    switch (part.type) {
      case 'text':
      case 'reasoning':
        pieces.push(part.text);
        break;
      case 'tool-call':
        pieces.push(typeof part.input === 'string' ? part.input : JSON.stringify(part.input ?? null));
        break;
      case 'tool-result':
        pieces.push(toolOutputText(part.output));
        break;
      default:
        break;
    }
  }
  return pieces.join('\n');
}

/** True when the message carries nothing at all: empty string, no parts, or only empty text parts. */
export function isEmptyMessage(message: Message): boolean {
  if (typeof message.content === 'string') return message.content.length === 0;
  return (message.content as readonly Part[]).every(
    (part) =>
      (part.type === 'text' || part.type === 'reasoning') && part.text.length === 0 && !part.providerOptions,
  );
}

/**
 * Whether a message is an in-context demonstration (`metadata.demo`): the model read it as an example of how
 * to work, so it is neither the task nor a record of what this session did.
 */
export function isDemonstration(message: Message): boolean {
  return message.metadata?.demo === true;
}

/**
 * A text that is a worked example a framework put in front of the task, and nothing after it (OpenHands:
 * `--- START OF EXAMPLE ---` … `--- END OF EXAMPLE ---`, which its importer splits from the task).
 */
const workedExamplePattern = /^-{3,} START OF EXAMPLE -{3,}[\s\S]*^-{3,} END OF EXAMPLE -{3,}\s*(?![\s\S])/m;

export function isWorkedExample(text: string): boolean {
  return text.includes('START OF EXAMPLE') && workedExamplePattern.test(text);
}

/** Whether a message is what the harness wrote in the user's place (`metadata.harness`): a caveat, `/clear`. */
export function isHarnessNote(message: Message): boolean {
  return message.metadata?.harness === true;
}

/**
 * Whether a message is the harness's complaint about the agent's reply (`metadata.formatError`: mini-swe-agent's
 * "Please always provide EXACTLY ONE action"): an error the agent saw, neither a request nor a step's output.
 */
export function isFormatComplaint(message: Message): boolean {
  return message.metadata?.formatError === true;
}

/** Whether a message is a prompt the harness wrote for a request (`metadata.expansion`): a command's. */
export function isExpansion(message: Message): boolean {
  return message.metadata?.expansion === true;
}

/**
 * Whether a user message holds what the user asked: not an in-context demonstration, not a harness note.
 * Such messages are where the task and instructions come from.
 */
export function isUserRequest(message: Message): boolean {
  return message.role === 'user' && !isDemonstration(message) && !isHarnessNote(message);
}

/**
 * Whether a message is a user request as the conversation holds it, not a stub or summary precis put in its
 * place: what can be the task.
 */
export function isOriginalRequest(message: Message): boolean {
  const origin = message.metadata?.origin;
  return isUserRequest(message) && origin !== 'stub' && origin !== 'summary';
}

/**
 * The message without the parts in front of its request (`metadata.requestPart`: Claude Code's caveat and
 * `/clear` before the first request, merged for Anthropic; OpenHands' in-context example); the message itself
 * otherwise.
 */
export function requestOnly<M extends Message>(message: M): M {
  const start = message.metadata?.requestPart;
  if (typeof start !== 'number' || start <= 0 || typeof message.content === 'string') return message;
  return { ...message, content: (message.content as readonly Part[]).slice(start) };
}

/**
 * The words the user typed: `requestOnly`, and without what a repair merged after them (from
 * `metadata.expansionPart`: a command's expansion, harness notes such as a file an @-mention read).
 */
export function typedRequest<M extends Message>(message: M): M {
  const end = message.metadata?.expansionPart;
  const request = requestOnly(message);
  if (typeof end !== 'number' || typeof request.content === 'string') return request;
  // `expansionPart` counts the whole message's parts; `requestOnly` took some off the front.
  const length = end - (message.content.length - request.content.length);
  if (length <= 0 || length >= request.content.length) return request;
  return { ...request, content: (request.content as readonly Part[]).slice(0, length) };
}

/**
 * `requestOnly`, and without the harness notes a repair merged among the request's parts
 * (`metadata.harnessParts`: aider's `Add file to the chat?` between two requests, its output after one): what
 * the request says, expansion included.
 */
export function requestWithoutHarnessNotes<M extends Message>(message: M): M {
  const notes = message.metadata?.harnessParts;
  const request = requestOnly(message);
  if (!Array.isArray(notes) || notes.length === 0 || typeof request.content === 'string') return request;
  // `harnessParts` counts the whole message's parts; `requestOnly` took some off the front.
  const offset = message.content.length - request.content.length;
  const skipped = new Set(notes.map((index) => index - offset));
  return {
    ...request,
    content: (request.content as readonly Part[]).filter((_, index) => !skipped.has(index)),
  };
}

/**
 * How many system messages open the conversation: the system prompt. A system message further on (an
 * importer's session banner, a framework's mid-run note) is conversation content like any other.
 */
export function systemPromptLength(messages: readonly Message[]): number {
  let length = 0;
  while (messages[length]?.role === 'system') length++;
  return length;
}
