import { InvalidMessageError } from '../errors/index.js';
import { describeValue, isRecord } from '../internal/json-shapes.js';
import type { Conversation, Message, ToolDefinition } from './types.js';

export interface ParseMessagesOptions {
  /** File name to put in error messages. */
  file?: string;
}

type Record_ = Record<string, unknown>;

const partTypesByRole: Record<Message['role'], readonly string[]> = {
  system: [],
  user: ['text', 'image', 'file'],
  assistant: ['text', 'file', 'reasoning', 'tool-call', 'tool-result', 'tool-approval-request'],
  tool: ['tool-result', 'tool-approval-response'],
};

const outputTypes = ['text', 'json', 'error-text', 'error-json', 'content', 'execution-denied'];

/**
 * Checks that `value` is an array of messages in precis / AI SDK `ModelMessage` shape and returns it typed.
 * The first problem throws an `InvalidMessageError` naming the file, message index and field path.
 * Objects are returned as given (not copied), so unknown extra fields travel on untouched.
 */
export function parseMessages(value: unknown, options: ParseMessagesOptions = {}): Message[] {
  const { file } = options;
  if (!Array.isArray(value)) {
    throw new InvalidMessageError(
      `expected an array of messages, got ${describeValue(value)}`,
      withFile(file, {}),
    );
  }
  value.forEach((message, index) => {
    checkMessage(message, (reason, path) => {
      throw new InvalidMessageError(reason, withFile(file, { index, path }));
    });
  });
  return value as Message[];
}

/** Parses a precis conversation document: `{ messages, tools?, model? }` or a bare message array. */
export function parseConversation(value: unknown, options: ParseMessagesOptions = {}): Conversation {
  if (Array.isArray(value)) return { messages: parseMessages(value, options) };
  if (!isRecord(value) || !('messages' in value)) {
    throw new InvalidMessageError(
      `expected a message array or an object with "messages", got ${describeValue(value)}`,
      withFile(options.file, {}),
    );
  }
  const conversation: Conversation = { messages: parseMessages(value.messages, options) };
  if (value.tools !== undefined) conversation.tools = parseTools(value.tools, options);
  if (typeof value.model === 'string') conversation.model = value.model;
  if (isRecord(value.providerOptions)) conversation.providerOptions = value.providerOptions as never;
  return conversation;
}

function parseTools(value: unknown, options: ParseMessagesOptions): ToolDefinition[] {
  if (!Array.isArray(value)) {
    throw new InvalidMessageError(
      `"tools" must be an array, got ${describeValue(value)}`,
      withFile(options.file, {}),
    );
  }
  value.forEach((tool, index) => {
    if (!isRecord(tool) || typeof tool.name !== 'string') {
      throw new InvalidMessageError(
        'a tool needs a string "name"',
        withFile(options.file, { path: `tools[${index}]` }),
      );
    }
    if (tool.inputSchema === undefined) {
      throw new InvalidMessageError(
        'a tool needs an "inputSchema"',
        withFile(options.file, { path: `tools[${index}].inputSchema` }),
      );
    }
  });
  return value as ToolDefinition[];
}

function withFile<T extends object>(file: string | undefined, location: T): T & { file?: string } {
  return file === undefined ? location : { ...location, file };
}

type Fail = (reason: string, path: string) => never;

function checkMessage(message: unknown, fail: Fail): void {
  if (!isRecord(message)) fail(`a message must be an object, got ${describeValue(message)}`, '');
  const m = message as Record_;
  const role = m.role;
  if (typeof role !== 'string' || !(role in partTypesByRole)) {
    fail(`unknown role ${JSON.stringify(role)} (expected system, user, assistant or tool)`, 'role');
  }
  if (m.id !== undefined && typeof m.id !== 'string') fail('"id" must be a string', 'id');
  if (m.providerOptions !== undefined && !isRecord(m.providerOptions)) {
    fail('"providerOptions" must be an object', 'providerOptions');
  }
  if (m.metadata !== undefined && !isRecord(m.metadata)) fail('"metadata" must be an object', 'metadata');
  const content = m.content;
  const allowed = partTypesByRole[role as Message['role']];
  if (typeof content === 'string') {
    if (role === 'tool') fail('tool message content must be an array of tool-result parts', 'content');
    return;
  }
  if (role === 'system')
    fail(`system message content must be a string, got ${describeValue(content)}`, 'content');
  if (!Array.isArray(content))
    fail(`content must be a string or an array of parts, got ${describeValue(content)}`, 'content');
  (content as unknown[]).forEach((part, i) => {
    checkPart(part, allowed, role as string, `content[${i}]`, fail);
  });
}

function checkPart(part: unknown, allowed: readonly string[], role: string, path: string, fail: Fail): void {
  if (!isRecord(part)) fail(`a content part must be an object, got ${describeValue(part)}`, path);
  const p = part as Record_;
  if (typeof p.type !== 'string' || !allowed.includes(p.type)) {
    fail(`part type ${JSON.stringify(p.type)} is not allowed in a ${role} message`, `${path}.type`);
  }
  const needString = (field: string) => {
    if (typeof p[field] !== 'string')
      fail(`"${field}" must be a string, got ${describeValue(p[field])}`, `${path}.${field}`);
  };
  switch (p.type) {
    case 'text':
    case 'reasoning':
      needString('text');
      break;
    case 'image':
      checkData(p.image, `${path}.image`, fail);
      break;
    case 'file':
      checkData(p.data, `${path}.data`, fail);
      needString('mediaType');
      break;
    case 'tool-call':
      needString('toolCallId');
      needString('toolName');
      if (!('input' in p)) fail('a tool call needs "input"', `${path}.input`);
      break;
    case 'tool-result':
      needString('toolCallId');
      needString('toolName');
      checkOutput(p.output, `${path}.output`, fail);
      break;
    case 'tool-approval-request':
      needString('approvalId');
      needString('toolCallId');
      break;
    case 'tool-approval-response':
      needString('approvalId');
      if (typeof p.approved !== 'boolean') fail('"approved" must be a boolean', `${path}.approved`);
      break;
  }
}

function checkData(data: unknown, path: string, fail: Fail): void {
  if (
    typeof data === 'string' ||
    data instanceof Uint8Array ||
    data instanceof ArrayBuffer ||
    data instanceof URL
  )
    return;
  fail(`expected a base64 string, bytes or a URL, got ${describeValue(data)}`, path);
}

function checkOutput(output: unknown, path: string, fail: Fail): void {
  if (!isRecord(output) || typeof output.type !== 'string' || !outputTypes.includes(output.type)) {
    fail(`a tool result "output" must be { type: ${outputTypes.join(' | ')}, value }`, path);
  }
  const o = output as Record_;
  if ((o.type === 'text' || o.type === 'error-text') && typeof o.value !== 'string') {
    fail(`"value" of a ${o.type} output must be a string, got ${describeValue(o.value)}`, `${path}.value`);
  }
  if (o.type === 'content' && !Array.isArray(o.value))
    fail('"value" of a content output must be an array', `${path}.value`);
  if ((o.type === 'json' || o.type === 'error-json') && !('value' in o))
    fail('a json output needs "value"', `${path}.value`);
}
