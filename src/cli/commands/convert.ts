import { writeFile } from 'node:fs/promises';
import { PrecisError } from '../../errors/index.js';
import type { Conversation } from '../../messages/types.js';
import { repairMessages } from '../../messages/validate/index.js';
import type { CliIo } from '../cli-io.js';
import { oneOf, parseOptions } from '../parse-options.js';
import { inputOptions, readInput } from '../read-input.js';
import { formatConversionWarning, outputFormats, renderOutput } from '../render-output.js';

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

  const { output, warnings } = renderOutput(conversation, to, reasoning);
  for (const warning of warnings) io.stderr(formatConversionWarning(warning));
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
