import { toAnthropic } from '../messages/convert/anthropic.js';
import type { ConversionWarning } from '../messages/convert/conversion-warning.js';
import { toOpenAI } from '../messages/convert/openai.js';
import { assignIds, stripPrecisFields } from '../messages/ids.js';
import type { Conversation } from '../messages/types.js';

export const outputFormats = ['openai', 'anthropic', 'ai-sdk', 'precis'] as const;
export type OutputFormat = (typeof outputFormats)[number];

/** The conversation as the JSON value a command writes for `--to`, with what the conversion could not carry. */
export function renderOutput(
  conversation: Conversation,
  to: OutputFormat,
  reasoning: 'field' | 'drop' = 'field',
): { output: unknown; warnings: ConversionWarning[] } {
  switch (to) {
    case 'openai': {
      // A bare array of Chat Completions messages: other tools rely on exactly this shape.
      const result = toOpenAI(conversation, { reasoning });
      return { output: result.messages, warnings: result.warnings };
    }
    case 'anthropic': {
      // A request body: model and the request fields read from an Anthropic source come back too.
      const { warnings, ...body } = toAnthropic(conversation);
      const model = conversation.model === undefined ? {} : { model: conversation.model };
      return { output: { ...model, ...conversation.providerOptions?.anthropic, ...body }, warnings };
    }
    case 'ai-sdk':
      return { output: stripPrecisFields(conversation.messages), warnings: [] };
    case 'precis':
      return { output: { ...conversation, messages: assignIds(conversation.messages) }, warnings: [] };
  }
}

/** One stderr line per conversion warning. */
export function formatConversionWarning(warning: ConversionWarning): string {
  return `warning: message ${warning.index}${warning.path ? ` ${warning.path}` : ''}: ${warning.message}\n`;
}
