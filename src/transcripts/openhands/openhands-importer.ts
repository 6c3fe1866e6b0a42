/**
 * OpenHands LLM-message dumps: the prompt of an OpenHands LLM call, `{ "messages": [...] }` (or a bare array),
 * optionally a LiteLLM completion log around it (`response`, `kwargs`, `timestamp`, `cost`, and with mocked
 * function calling `fncall_messages` / `fncall_response`, which repeat the same turns in native form).
 *
 * Two ways of calling tools occur:
 * - native: OpenAI `tool_calls` and `tool` messages, converted with `fromOpenAI`;
 * - text function calling: the assistant writes optional text, then
 *   `<function=name><parameter=key>value</parameter>…</function>`, and the next user message, starting
 *   `EXECUTION RESULT of [name]:`, is the observation. Only the first block of a reply is a call (OpenHands runs
 *   one per message); values are kept byte for byte as strings. The in-context example and the tool
 *   specification (in the system and first user message) contain `<function=` blocks that were never calls:
 *   only assistant messages are parsed, so they stay text. The example is the first message's first text
 *   part, the task its second (`metadata.requestPart`: see `splitInContextExample`).
 *
 * The dumps end where the run stopped: on a tool result at the iteration cap, or on a call without a result.
 */

import { InvalidMessageError } from '../../errors/index.js';
import { isRecord } from '../../internal/json-shapes.js';
import { fromOpenAI } from '../../messages/convert/openai.js';
import type {
  AssistantContentPart,
  AssistantMessage,
  Conversation,
  JSONValue,
  MessageMetadata,
  ToolMessage,
  ToolResultPart,
  UserMessage,
} from '../../messages/types.js';
import {
  contentText,
  fromOpenAIMessage,
  isoFromUnixSeconds,
  notTheFormat,
  readJsonDocument,
} from '../internal/record-readers.js';
import {
  createTranscriptBuilder,
  type ToolResultPlacement,
  type TranscriptBuilder,
} from '../internal/transcript-builder.js';
import type {
  ImportContext,
  ImportResult,
  TranscriptImporter,
  TranscriptMetadata,
} from '../transcript-importer.js';

const format = 'openhands';
const observationPrefix = 'EXECUTION RESULT of [';

type Loose = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------------------------
// The in-context example

const exampleEnd = /^-{3,} END OF EXAMPLE -{3,}[ \t]*(?:\n|$)/m;

/**
 * OpenHands puts a worked example in front of the first task, in the same message (`… START OF EXAMPLE …`
 * `… END OF EXAMPLE …`, then the task). Split there, the example and the task are two text parts of one
 * message whose request starts at the second (`metadata.requestPart`), so the task is what is preserved and
 * summarised, and the example can be archived; joined, the parts are the message byte for byte.
 */
export function splitInContextExample(text: string): [example: string, request: string] | undefined {
  const end = exampleEnd.exec(text);
  if (end === null || !text.slice(0, end.index).includes('START OF EXAMPLE')) return undefined;
  let split = end.index + end[0].length;
  while (text[split] === '\n') split++;
  return split < text.length ? [text.slice(0, split), text.slice(split)] : undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Text function calling

export interface TextFunctionCall {
  /** Text before the `<function=` block, as written. */
  before: string;
  name: string;
  /** Parameter values exactly as written between the tags (multi-line values keep their newlines). */
  parameters: Record<string, string>;
  /** Text after `</function>`: not part of the call (OpenHands runs only the first block). */
  after: string;
  /** False when the reply ended inside the block (the `</function` stop word was cut off). */
  closed: boolean;
  /** Non-whitespace text inside the block that is not a parameter. */
  stray: string;
}

const functionOpen = '<function=';
const functionClose = '</function>';
const parameterOpen = '<parameter=';
const parameterClose = '</parameter>';

/**
 * The first `<function=name>…</function>` block of an assistant reply, read the way OpenHands' converter does
 * (`<function=([^>]+)>\n?(.*?)</function>`, then `<parameter=([^>]+)>(.*?)</parameter>` inside), in linear
 * time. Values are not stripped, so file contents and `old_str` / `new_str` stay byte-exact.
 */
export function parseTextFunctionCall(text: string): TextFunctionCall | undefined {
  const start = text.indexOf(functionOpen);
  if (start === -1) return undefined;
  const nameEnd = text.indexOf('>', start + functionOpen.length);
  if (nameEnd === -1) return undefined;
  const name = text.slice(start + functionOpen.length, nameEnd);
  if (name === '' || /[\s<]/.test(name)) return undefined;
  let bodyStart = nameEnd + 1;
  if (text[bodyStart] === '\n') bodyStart++;
  const closeAt = text.indexOf(functionClose, bodyStart);
  const closed = closeAt !== -1;
  const bodyEnd = closed ? closeAt : text.length;
  const parameters: Record<string, string> = {};
  const stray: string[] = [];
  let position = bodyStart;
  while (position < bodyEnd) {
    const open = text.indexOf(parameterOpen, position);
    if (open === -1 || open >= bodyEnd) break;
    stray.push(text.slice(position, open));
    const keyEnd = text.indexOf('>', open + parameterOpen.length);
    if (keyEnd === -1 || keyEnd >= bodyEnd) break;
    const valueEnd = text.indexOf(parameterClose, keyEnd + 1);
    const key = text.slice(open + parameterOpen.length, keyEnd);
    if (valueEnd === -1 || valueEnd > bodyEnd) {
      // A value cut off by the end of the reply: keep what was written.
      if (closed) stray.push(text.slice(open, bodyEnd));
      else parameters[key] = text.slice(keyEnd + 1, bodyEnd);
      position = bodyEnd;
      break;
    }
    parameters[key] = text.slice(keyEnd + 1, valueEnd);
    position = valueEnd + parameterClose.length;
  }
  if (position < bodyEnd) stray.push(text.slice(position, bodyEnd));
  return {
    before: text.slice(0, start),
    name,
    parameters,
    after: closed ? text.slice(closeAt + functionClose.length) : '',
    closed,
    stray: stray.join('').trim(),
  };
}

const bashExitCodePattern =
  /\[(?:Command finished with exit code|The command completed with exit code) (-?\d+)\.?\]/g;

/** The exit code of the last status line of an `execute_bash` observation. */
function exitCodeOf(text: string): number | undefined {
  const tail = text.slice(-400);
  let code: number | undefined;
  for (const match of tail.matchAll(bashExitCodePattern)) code = Number(match[1]);
  return code;
}

// ---------------------------------------------------------------------------------------------------------------
// Detection

const promptPattern = /"(?:content|text)"\s*:\s*"You are OpenHands agent/;
const claudeCodeKeysPattern = /[{,]\s*"(?:parentUuid|sessionId|isSidechain)"\s*:/;
const messageArrayPattern = /^\s*(?:\[|\{)/;

function detect(sample: { head: string; fileName?: string }): string | undefined {
  const { head } = sample;
  if (!messageArrayPattern.test(head) || claudeCodeKeysPattern.test(head)) return undefined;
  // The prompt sits in the first message: look only there, not at text quoted later in some other log.
  const start = head.slice(0, 4000);
  if (promptPattern.test(start))
    return 'first message is the OpenHands system prompt ("You are OpenHands agent")';
  if (
    head.includes('---- BEGIN FUNCTION #1: ') &&
    head.includes(functionOpen) &&
    /"role"\s*:\s*"system"/.test(start)
  )
    return 'system prompt specifies tools as "---- BEGIN FUNCTION #" blocks (OpenHands text function calling)';
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Parsing

interface Source {
  messages: unknown[];
  /** The completion of the logged call (LiteLLM `response`), the assistant turn that followed the prompt. */
  response: Loose | undefined;
  log: Loose | undefined;
}

function sourceOf(document: unknown, context: ImportContext): Source {
  if (Array.isArray(document)) return { messages: document, response: undefined, log: undefined };
  if (!isRecord(document) || !Array.isArray(document.messages)) {
    throw notTheFormat(context, 'not an OpenHands message dump: expected a "messages" array');
  }
  const choices = isRecord(document.response) ? document.response.choices : undefined;
  const first = Array.isArray(choices) ? choices[0] : undefined;
  const response = isRecord(first) && isRecord(first.message) ? first.message : undefined;
  return { messages: document.messages, response, log: document };
}

function parse(text: string, context: ImportContext): ImportResult {
  const document = readJsonDocument(text, context, 'an OpenHands message dump');
  const { messages: records, response, log } = sourceOf(document, context);
  // A chat history: a result after the next assistant message answers nothing the model saw.
  const builder = createTranscriptBuilder({
    origin: format,
    context,
    answerCallsUntil: 'next-assistant-message',
  });
  const state: ParseState = { awaiting: undefined };

  records.forEach((raw, record) => {
    context.read();
    importRecord(raw, record, {}, builder, state, context);
  });
  if (log !== undefined) {
    const timestamp = isoFromUnixSeconds(log.timestamp);
    if (response !== undefined) {
      context.read();
      const extra: MessageMetadata = { response: true };
      if (timestamp !== undefined) extra.timestamp = timestamp;
      importRecord(response, records.length, extra, builder, state, context);
    }
    ignoreDuplicates(log, context);
  }

  const metadata = metadataOf(log);
  const conversation: Conversation = { messages: builder.finish() };
  const tools = toolsOf(log, context);
  if (tools !== undefined) conversation.tools = tools;
  if (metadata.model !== undefined) conversation.model = metadata.model;
  return { conversation, metadata };
}

/** `fncall_messages` / `fncall_response` are the same turns in native form: counted, never imported twice. */
function ignoreDuplicates(log: Loose, context: ImportContext): void {
  if (Array.isArray(log.fncall_messages)) {
    context.read(log.fncall_messages.length);
    context.ignore('native-duplicate', log.fncall_messages.length);
  }
  if (log.fncall_response !== undefined && log.fncall_response !== null) {
    context.read();
    context.ignore('native-duplicate');
  }
}

interface ParseState {
  /** The text-function call of the previous assistant reply, which the next user message may answer. */
  awaiting: { toolCallId: string; toolName: string } | undefined;
}

function importRecord(
  raw: unknown,
  record: number,
  extraMetadata: MessageMetadata,
  builder: TranscriptBuilder,
  state: ParseState,
  context: ImportContext,
): void {
  const answered = state.awaiting;
  state.awaiting = undefined;
  if (!isRecord(raw)) {
    context.malformed(`message ${record} is not an object`, { record });
    return;
  }
  const content = contentText(raw.content ?? null);
  if (content === undefined) {
    context.malformed(`message ${record} has content that is neither text nor a list of parts`, { record });
    return;
  }
  const metadata: MessageMetadata = { origin: format, record, ...extraMetadata };
  const text = content.text;
  try {
    switch (raw.role) {
      case 'system':
        if (content.otherParts > 0)
          context.warn(`system message ${record}: non-text parts not imported`, { record });
        builder.system(text, metadata);
        break;
      case 'user':
        if (answered !== undefined && text.startsWith(observationPrefix)) {
          const placed = addObservation(
            text,
            content.otherParts,
            answered,
            record,
            metadata,
            builder,
            context,
          );
          countResult(placed, context);
          return;
        }
        if (typeof raw.content === 'string' || raw.content === null || raw.content === undefined) {
          if (text === '') {
            context.ignore('empty-message');
            return;
          }
          const example = splitInContextExample(text);
          if (example === undefined) builder.user(text, metadata);
          else
            builder.user(
              example.map((part) => ({ type: 'text', text: part })),
              { ...metadata, requestPart: 1 },
            );
        } else {
          // Part lists keep their images and cache hints.
          const message = fromOpenAIMessage(raw, record) as UserMessage;
          builder.user(message.content, metadata, { providerOptions: message.providerOptions });
        }
        break;
      case 'assistant':
        if (Array.isArray(raw.tool_calls) && raw.tool_calls.length > 0) {
          const message = fromOpenAIMessage(raw, record) as AssistantMessage;
          builder.assistant(message.content, metadata, { providerOptions: message.providerOptions });
        } else {
          const call = addTextAssistant(raw, text, record, metadata, builder, context);
          if (call === 'empty') return;
          state.awaiting = call;
        }
        break;
      case 'tool':
        countResult(addNativeResult(raw, record, metadata, builder), context);
        return;
      default:
        context.malformed(`message ${record} has unknown role ${JSON.stringify(raw.role)}`, { record });
        return;
    }
  } catch (error) {
    if (!(error instanceof InvalidMessageError)) throw error;
    context.malformed(`message ${record}: ${error.reason}${error.path ? ` (${error.path})` : ''}`, {
      record,
    });
    return;
  }
  context.use();
}

function addObservation(
  text: string,
  otherParts: number,
  call: { toolCallId: string; toolName: string },
  record: number,
  metadata: MessageMetadata,
  builder: TranscriptBuilder,
  context: ImportContext,
): ToolResultPlacement {
  const nameEnd = text.indexOf(']', observationPrefix.length);
  const name = nameEnd === -1 ? undefined : text.slice(observationPrefix.length, nameEnd);
  if (name !== undefined && name !== call.toolName) {
    context.warn(`message ${record} is the result of [${name}] but answers a ${call.toolName} call`, {
      record,
    });
  }
  if (otherParts > 0)
    context.warn(`message ${record}: non-text parts of the result not imported`, { record });
  const exitCode = exitCodeOf(text);
  if (exitCode !== undefined) metadata.exitCode = exitCode;
  const { toolCallId, toolName } = call;
  // OpenHands reports a tool's failure (an editor command it refused, a bad parameter) as `ERROR:` first.
  const type = observationError.test(text) ? 'error-text' : 'text';
  return builder.toolResult({ toolCallId, toolName, output: { type, value: text } }, metadata);
}

const observationError = /^EXECUTION RESULT of \[[^\]\n]*\]:\r?\nERROR:/;

function countResult(placed: ToolResultPlacement, context: ImportContext): void {
  if (placed === 'dropped') context.ignore('orphaned tool result');
  else context.use();
}

/** A reply in text function calling; returns the call the next message may answer, or `'empty'`. */
function addTextAssistant(
  raw: Loose,
  text: string,
  record: number,
  metadata: MessageMetadata,
  builder: TranscriptBuilder,
  context: ImportContext,
): { toolCallId: string; toolName: string } | undefined | 'empty' {
  const reasoning =
    typeof raw.reasoning_content === 'string' && raw.reasoning_content !== '' ? raw.reasoning_content : '';
  const call = parseTextFunctionCall(text);
  if (call === undefined) {
    if (text === '' && reasoning === '') {
      context.ignore('empty-message');
      return 'empty';
    }
    const content: AssistantMessage['content'] =
      reasoning === ''
        ? text
        : [{ type: 'reasoning', text: reasoning }, ...(text === '' ? [] : [{ type: 'text' as const, text }])];
    builder.assistant(content, metadata);
    return undefined;
  }
  if (!call.closed) context.warn(`message ${record}: <function=${call.name}> is not closed`, { record });
  if (call.stray !== '') {
    context.warn(`message ${record}: text inside <function=${call.name}> outside any parameter not kept`, {
      record,
    });
  }
  if (call.after.includes(functionOpen)) {
    context.warn(`message ${record}: more than one <function= block; only the first was a call`, { record });
  }
  const toolCallId = `call_${record}`;
  const parts: AssistantContentPart[] = [];
  if (reasoning !== '') parts.push({ type: 'reasoning', text: reasoning });
  const before = call.before.trimEnd();
  if (before !== '') parts.push({ type: 'text', text: before });
  parts.push({ type: 'tool-call', toolCallId, toolName: call.name, input: call.parameters });
  const after = call.after.trim();
  if (after !== '') parts.push({ type: 'text', text: after });
  builder.assistant(parts, metadata);
  return { toolCallId, toolName: call.name };
}

function addNativeResult(
  raw: Loose,
  record: number,
  metadata: MessageMetadata,
  builder: TranscriptBuilder,
): ToolResultPlacement {
  const message = fromOpenAIMessage(raw, record) as ToolMessage;
  const part = message.content[0] as ToolResultPart;
  const named = typeof raw.name === 'string' && raw.name !== '' ? { ...part, toolName: raw.name } : part;
  const text = contentText(raw.content)?.text;
  if (text !== undefined) {
    const exitCode = exitCodeOf(text);
    if (exitCode !== undefined) metadata.exitCode = exitCode;
  }
  return builder.toolResult(named, metadata);
}

function toolsOf(log: Loose | undefined, context: ImportContext): Conversation['tools'] {
  const kwargs = isRecord(log?.kwargs) ? log.kwargs : undefined;
  if (!Array.isArray(kwargs?.tools) || kwargs.tools.length === 0) return undefined;
  try {
    return fromOpenAI({ messages: [], tools: kwargs.tools }).tools;
  } catch (error) {
    if (!(error instanceof InvalidMessageError)) throw error;
    context.warn(`tool definitions in "kwargs.tools" not imported: ${error.reason}`);
    return undefined;
  }
}

function metadataOf(log: Loose | undefined): TranscriptMetadata {
  const metadata: TranscriptMetadata = { format };
  if (log === undefined) return metadata;
  const response = isRecord(log.response) ? log.response : undefined;
  const kwargs = isRecord(log.kwargs) ? log.kwargs : undefined;
  const model = [response?.model, kwargs?.model].find((value) => typeof value === 'string' && value !== '');
  if (typeof model === 'string') metadata.model = model;
  const timestamp = isoFromUnixSeconds(log.timestamp);
  if (timestamp !== undefined) metadata.endedAt = timestamp;
  const extra: Record<string, JSONValue> = {};
  if (typeof log.cost === 'number') extra.cost = log.cost;
  if (typeof response?.id === 'string') extra.responseId = response.id;
  if (Object.keys(extra).length > 0) metadata.extra = extra;
  return metadata;
}

export const openHandsImporter: TranscriptImporter = {
  format,
  description: 'OpenHands LLM-message dump (text or native function calling)',
  detect,
  parse,
};
