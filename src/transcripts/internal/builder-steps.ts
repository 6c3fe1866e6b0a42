import { InvalidMessageError } from '../../errors/index.js';
import type { AssistantMessage, MessageMetadata, UserContentPart } from '../../messages/types.js';
import type { ImportContext } from '../transcript-importer.js';
import { fromOpenAIMessage } from './record-readers.js';
import type { TranscriptBuilder } from './transcript-builder.js';

/** Adds an observation as the text result of a call; a result that answers nothing and says nothing is skipped. */
export function addTextResult(
  builder: TranscriptBuilder,
  context: ImportContext,
  result: { toolCallId: string; toolName: string; text: string },
  metadata: MessageMetadata,
): void {
  const placed = builder.toolResult(
    {
      toolCallId: result.toolCallId,
      toolName: result.toolName,
      output: { type: 'text', value: result.text },
    },
    metadata,
  );
  if (placed === 'dropped') context.ignore('orphaned tool result');
  else context.use();
}

/**
 * Adds an OpenAI-style assistant message (native `tool_calls`, as newer agent versions log them). One the converter
 * rejects is reported malformed under `label` (`message 12`, `history entry 12`) and skipped.
 */
export function addNativeAssistant(
  builder: TranscriptBuilder,
  context: ImportContext,
  raw: Record<string, unknown>,
  record: number,
  metadata: MessageMetadata,
  label: string,
): void {
  let message: AssistantMessage;
  try {
    message = fromOpenAIMessage(raw, record) as AssistantMessage;
  } catch (error) {
    if (!(error instanceof InvalidMessageError)) throw error;
    context.malformed(`${label}: ${error.reason}${error.path ? ` (${error.path})` : ''}`, { record });
    return;
  }
  builder.assistant(message.content, metadata, { providerOptions: message.providerOptions });
  context.use();
}

/** The patterns of a harness's task template (see `splitTaskTemplate`). */
export interface TaskTemplate {
  requestStart?: RegExp;
  instructionsStart?: RegExp;
}

/**
 * Adds a user message: `text` as it is, or split into its template's parts (`splitTaskTemplate`) when a
 * `template` is given (the task's) and found in it.
 */
export function addUserText(
  builder: TranscriptBuilder,
  text: string,
  metadata: MessageMetadata,
  template?: TaskTemplate,
): void {
  const task = template === undefined ? undefined : splitTaskTemplate(text, template);
  if (task === undefined) builder.user(text, metadata);
  else builder.user(task.content, { ...metadata, ...task.metadata });
}

/**
 * The task of a harness whose template wraps the request: a lead-in before it (SWE-agent's "We're currently
 * solving the following issue … ISSUE:") and standing instructions after it (SWE-agent's `INSTRUCTIONS:`,
 * mini-swe-agent's `<instructions>`). Each found becomes a text part of its own around the request, marked as
 * what came before the request (`metadata.requestPart`) and as the request's expansion
 * (`metadata.expansionPart`): the summary's intent is then the request, not the template, and when the budget
 * gives the task up the instructions go to the archive before the request does. The parts joined are `text`.
 * `requestStart` must match the lead-in itself, `instructionsStart` the blank line before the instructions.
 * Undefined when neither is found, or the request between them is blank.
 */
export function splitTaskTemplate(
  text: string,
  patterns: TaskTemplate,
):
  | { content: UserContentPart[]; metadata: Pick<MessageMetadata, 'requestPart' | 'expansionPart'> }
  | undefined {
  const lead = patterns.requestStart?.exec(text);
  const requestFrom = lead === null || lead === undefined ? 0 : lead.index + lead[0].length;
  const instructions = patterns.instructionsStart?.exec(text.slice(requestFrom));
  const requestTo =
    instructions === null || instructions === undefined
      ? text.length
      : requestFrom + instructions.index + instructions[0].length;
  if ((requestFrom === 0 && requestTo === text.length) || text.slice(requestFrom, requestTo).trim() === '')
    return undefined;
  const pieces = [text.slice(0, requestFrom), text.slice(requestFrom, requestTo), text.slice(requestTo)];
  const content: UserContentPart[] = pieces
    .filter((piece) => piece !== '')
    .map((piece): UserContentPart => ({ type: 'text', text: piece }));
  const requestPart = requestFrom > 0 ? 1 : 0;
  return {
    content,
    metadata: {
      ...(requestPart > 0 ? { requestPart } : {}),
      ...(requestTo < text.length ? { expansionPart: requestPart + 1 } : {}),
    },
  };
}
