import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { InvalidArgumentError, PrecisError } from '../errors/index.js';
import { looksLikeJsonLines, parseJsonLines, parseJsonText } from '../internal/parse-json.js';
import { providerJsonImporters, transcriptImporters } from './importers.js';
import {
  createImportContext,
  type ImportOptions,
  type ImportResult,
  type ImportStats,
  type ImportWarning,
  type TranscriptFormat,
  type TranscriptImporter,
  transcriptFormats,
} from './transcript-importer.js';

/** `--from` values: every transcript format, plus `ai-sdk` as an alias of `precis` (the shapes are the same). */
export const inputFormats = [...transcriptFormats, 'ai-sdk'] as const;
export type InputFormat = (typeof inputFormats)[number];

export interface ImportTranscriptOptions extends ImportOptions {
  /** Force a format instead of detecting it. */
  from?: InputFormat;
}

export interface ImportTranscriptResult extends ImportResult {
  format: TranscriptFormat;
  /** Why this format was chosen: `forced by --from` or the detector's evidence. */
  reason: string;
  stats: ImportStats;
  warnings: ImportWarning[];
}

const headBytes = 64 * 1024;

/** Which importer reads `text`: the first specific detector that recognises it, else the provider JSON shapes. */
export function detectTranscriptFormat(
  text: string,
  file?: string,
): { format: TranscriptFormat; reason: string } {
  const sample = {
    head: text.slice(0, headBytes),
    ...(file === undefined ? {} : { fileName: basename(file) }),
  };
  for (const importer of transcriptImporters) {
    const evidence = importer.detect(sample);
    if (evidence !== undefined) return { format: importer.format, reason: evidence };
  }
  // A request body's messages can sit past the sample of a large file: give the provider shapes the whole text.
  if (text.length > sample.head.length) {
    for (const importer of providerJsonImporters) {
      const evidence = importer.detect({ ...sample, head: text });
      if (evidence !== undefined) return { format: importer.format, reason: evidence };
    }
  }
  // Nothing claimed it. Text that starts like JSON but does not parse gets the parser's error (file, line,
  // column) rather than a shrug.
  if (/^\s*[[{]/.test(sample.head)) {
    if (looksLikeJsonLines(text)) parseJsonLines(text, fileOption(file));
    else parseJsonText(text, fileOption(file));
  }
  throw new PrecisError(
    'unsupported-format',
    `${file ?? 'input'}: not a transcript or conversation format precis recognises (use --from to force one of ${transcriptFormats.join(', ')})`,
  );
}

function fileOption(file: string | undefined): { file?: string } {
  return file === undefined ? {} : { file };
}

function importerFor(format: TranscriptFormat): TranscriptImporter {
  const importer = transcriptImporters.find((candidate) => candidate.format === format);
  if (importer === undefined)
    throw new PrecisError('unsupported-format', `no importer for format "${format}"`);
  return importer;
}

/** Imports a transcript from its text, detecting the format unless `from` forces it. */
export function importTranscript(
  text: string,
  options: ImportTranscriptOptions = {},
): ImportTranscriptResult {
  const { from, ...importOptions } = options;
  if (from !== undefined && !(inputFormats as readonly string[]).includes(from)) {
    throw new InvalidArgumentError(
      '--from',
      `unknown format "${from}" (expected ${inputFormats.join(', ')})`,
    );
  }
  const chosen =
    from === undefined
      ? detectTranscriptFormat(text, options.file)
      : { format: from === 'ai-sdk' ? ('precis' as const) : from, reason: 'forced by --from' };
  const context = createImportContext(importOptions);
  const result = importerFor(chosen.format).parse(text, context);
  return { ...result, ...chosen, stats: context.stats, warnings: context.warnings };
}

/** Reads and imports a transcript file. A missing or unreadable file is an `io-error` naming the path. */
export async function readTranscriptFile(
  path: string,
  options: Omit<ImportTranscriptOptions, 'file'> = {},
): Promise<ImportTranscriptResult> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    throw new PrecisError('io-error', `${path}: ${reason}`, { cause: error });
  }
  return importTranscript(text, { ...options, file: path });
}

/** One line for stderr: how many records were read, used and skipped, and why. */
export function describeImport(result: ImportTranscriptResult, file: string): string {
  const { recordsRead, recordsUsed, skipped } = result.stats;
  const skippedTotal = Object.values(skipped).reduce((sum, count) => sum + count, 0);
  const reasons = Object.entries(skipped)
    .sort((a, b) => b[1] - a[1])
    .map(([reason, count]) => `${count} ${reason}`)
    .join(', ');
  return (
    `read ${file}: ${result.format} (${result.reason}); ${recordsRead} records: ${recordsUsed} used, ` +
    `${skippedTotal} skipped${reasons === '' ? '' : ` (${reasons})`}; ${result.conversation.messages.length} messages`
  );
}
