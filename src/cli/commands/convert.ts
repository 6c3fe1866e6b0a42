import { writeFile } from 'node:fs/promises';
import { PrecisError } from '../../errors/index.js';
import { toAnthropic } from '../../messages/convert/anthropic.js';
import type { ConversionWarning } from '../../messages/convert/conversion-warning.js';
import { toOpenAI } from '../../messages/convert/openai.js';
import { assignIds, stripPrecisFields } from '../../messages/ids.js';
import type { Conversation } from '../../messages/types.js';
import { repairMessages } from '../../messages/validate/index.js';
import type { CliIo } from '../cli-io.js';
import { oneOf, parseOptions } from '../parse-options.js';
import { inputOptions, readInput } from '../read-input.js';

export const outputFormats = ['openai', 'anthropic', 'ai-sdk', 'precis'] as const;
type OutputFormat = (typeof outputFormats)[number];

/**
 * `precis convert <file> --to F`: reads any supported format, repairs the conversation so it is valid for the
 * target (each repair reported on stderr), converts, and writes JSON to stdout or `--out`.
 */
export async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOptions(argv, {
    ...inputOptions,
    to: { type: 'string' },
    out: { type: 'string', short: 'o' },
    reasoning: { type: 'string' },
  });
  const [file, ...extra] = positionals;
  if (file === undefined || extra.length > 0) {
    throw new PrecisError('invalid-argument', 'convert takes exactly one input file');
  }
  const to = oneOf('--to', values.to, outputFormats);
  if (to === undefined)
    throw new PrecisError('invalid-argument', `--to is required (${outputFormats.join(', ')})`);
  const reasoning = oneOf('--reasoning', values.reasoning, ['field', 'drop'] as const) ?? 'field';

  const loaded = await readInput(file, values, io);

  const target = to === 'openai' || to === 'anthropic' ? to : 'any';
  const repaired = repairMessages(loaded.conversation.messages, { provider: target });
  for (const repair of repaired.repairs)
    io.stderr(`repair: message ${repair.index}: ${repair.description}\n`);
  const conversation: Conversation = { ...loaded.conversation, messages: repaired.messages };

  const { output, warnings } = render(conversation, to, reasoning);
  for (const warning of warnings) {
    io.stderr(
      `warning: message ${warning.index}${warning.path ? ` ${warning.path}` : ''}: ${warning.message}\n`,
    );
  }
  const json = `${JSON.stringify(output, null, 2)}\n`;
  if (values.out === undefined) io.stdout(json);
  else {
    try {
      await writeFile(values.out, json);
    } catch (error) {
      throw new PrecisError('io-error', `${values.out}: ${(error as Error).message}`, { cause: error });
    }
    io.stderr(`wrote ${values.out} (${to}, ${conversation.messages.length} messages)\n`);
  }
  return 0;
}

function render(
  conversation: Conversation,
  to: OutputFormat,
  reasoning: 'field' | 'drop',
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
