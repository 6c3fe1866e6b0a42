import {
  describeImport,
  type ImportTranscriptResult,
  inputFormats,
  readTranscriptFile,
} from '../transcripts/import-transcript.js';
import { sidechainModes } from '../transcripts/transcript-importer.js';
import type { CliIo } from './cli-io.js';
import { oneOf } from './parse-options.js';

/** The options every command that reads a transcript accepts. */
export const inputOptions = {
  from: { type: 'string' },
  strict: { type: 'boolean' },
  sidechains: { type: 'string' },
} as const;

export interface InputOptionValues {
  from?: string | undefined;
  strict?: boolean | undefined;
  sidechains?: string | undefined;
}

/** How many import warnings to print before summarising the rest. */
const warningLimit = 20;

/**
 * Reads a transcript for a command and reports on stderr what was read, used and skipped (and why), so nothing
 * is dropped without the user seeing it.
 */
export async function readInput(
  file: string,
  values: InputOptionValues,
  io: CliIo,
): Promise<ImportTranscriptResult> {
  const from = oneOf('--from', values.from, inputFormats);
  const sidechains = oneOf('--sidechains', values.sidechains, sidechainModes);
  const result = await readTranscriptFile(file, {
    ...(from === undefined ? {} : { from }),
    ...(sidechains === undefined ? {} : { sidechains }),
    strict: values.strict === true,
  });
  io.stderr(`${describeImport(result, file)}\n`);
  for (const warning of result.warnings.slice(0, warningLimit)) {
    const where = [
      warning.line === undefined ? '' : `line ${warning.line}`,
      warning.record === undefined ? '' : `record ${warning.record}`,
    ]
      .filter(Boolean)
      .join(', ');
    io.stderr(`warning: ${where === '' ? '' : `${where}: `}${warning.message}\n`);
  }
  if (result.warnings.length > warningLimit) {
    io.stderr(
      `warning: ... and ${result.warnings.length - warningLimit} more (use --strict to stop at the first)\n`,
    );
  }
  return result;
}
