import { InvalidMessageError } from '../../errors/index.js';
import type { AssistantMessage, MessageMetadata } from '../../messages/types.js';
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
