import { TranscriptImportError } from '../errors/index.js';
import type { Conversation, JSONValue } from '../messages/types.js';

/**
 * The contract every transcript importer implements. An importer turns the text of one agent log into a
 * precis conversation: every piece of text the model saw, in order, tool calls linked to their results.
 * Records it cannot use are reported through the context (skipped with a counted reason, or an error in
 * strict mode), never silently dropped.
 */
export const transcriptFormats = [
  'claude-code',
  'mini-swe-agent',
  'swe-agent',
  'openhands',
  'specstory',
  'aider',
  'gptme',
  'codex',
  'openai',
  'anthropic',
  'precis',
] as const;
export type TranscriptFormat = (typeof transcriptFormats)[number];

/** What to do with sub-agent (sidechain) traffic, where a format records it. */
export const sidechainModes = ['exclude', 'include', 'separate'] as const;
export type SidechainMode = (typeof sidechainModes)[number];

/** The start of a file, for cheap format detection. */
export interface TranscriptSample {
  /** The first 64 KiB of the text (all of it for smaller files). */
  head: string;
  /** Base name of the file, when there is one (`rollout-2025-….jsonl`, `chat.json`). */
  fileName?: string;
}

export interface TranscriptMetadata {
  format: TranscriptFormat;
  /** The model that produced the session, when the log records it. */
  model?: string;
  sessionId?: string;
  /** ISO 8601 timestamps of the first and last records that carry one. */
  startedAt?: string;
  endedAt?: string;
  /** Working directory of the agent, when recorded. */
  cwd?: string;
  title?: string;
  /** Anything else worth keeping (agent version, task id, exit status). */
  extra?: Record<string, JSONValue>;
}

export interface ImportStats {
  /** Records (lines, array entries, markdown sections) read from the file. */
  recordsRead: number;
  /** Records that produced or contributed to messages. */
  recordsUsed: number;
  /** Records not used, by reason (`malformed`, `sidechain`, `file-history-snapshot`, ...). */
  skipped: Record<string, number>;
}

export interface ImportWarning {
  type: 'import-warning';
  message: string;
  file?: string;
  line?: number;
  record?: number;
}

export interface ImportResult {
  conversation: Conversation;
  metadata: TranscriptMetadata;
  /** Sub-agent conversations, with `sidechains: 'separate'`. */
  sidechains?: Conversation[];
}

export interface ImportOptions {
  file?: string;
  /** Fail on the first malformed record instead of skipping it. @default false */
  strict?: boolean;
  /** @default 'exclude' */
  sidechains?: SidechainMode;
}

/** Passed to an importer: options, plus the one place where records are counted, skipped or rejected. */
export interface ImportContext {
  readonly file: string | undefined;
  readonly strict: boolean;
  readonly sidechains: SidechainMode;
  /** Count a record as read. */
  read(count?: number): void;
  /** Count a record as used. */
  use(count?: number): void;
  /**
   * A record that is not part of the conversation by design (a UI snapshot, a sidechain when excluded):
   * counted under `reason`, never an error.
   */
  ignore(reason: string, count?: number): void;
  /**
   * A record that should have been usable and is not. Strict mode throws a `TranscriptImportError`; otherwise
   * it is counted under `malformed` and a warning is kept.
   */
  malformed(reason: string, location: { line?: number; record?: number }): void;
  /** A warning that skips nothing (e.g. a tool result whose call was never seen). */
  warn(message: string, location?: { line?: number; record?: number }): void;
  readonly stats: ImportStats;
  readonly warnings: ImportWarning[];
}

export interface TranscriptImporter {
  readonly format: TranscriptFormat;
  /** A short human description, e.g. `Claude Code session (JSONL or JSON array)`. */
  readonly description: string;
  /** Evidence that the sample is in this format (`has "trajectory_format": "mini-swe-agent-1"`), or undefined. */
  detect(sample: TranscriptSample): string | undefined;
  /** Parses the whole text. Throws `TranscriptImportError` only for a file it cannot read at all. */
  parse(text: string, context: ImportContext): ImportResult;
}

export function createImportContext(options: ImportOptions = {}): ImportContext {
  const { file, strict = false, sidechains = 'exclude' } = options;
  const stats: ImportStats = { recordsRead: 0, recordsUsed: 0, skipped: {} };
  const warnings: ImportWarning[] = [];
  const where = (location: { line?: number; record?: number }) => ({
    ...(file === undefined ? {} : { file }),
    ...(location.line === undefined ? {} : { line: location.line }),
    ...(location.record === undefined ? {} : { record: location.record }),
  });
  const ignore = (reason: string, count = 1) => {
    stats.skipped[reason] = (stats.skipped[reason] ?? 0) + count;
  };
  return {
    file,
    strict,
    sidechains,
    stats,
    warnings,
    read(count = 1) {
      stats.recordsRead += count;
    },
    use(count = 1) {
      stats.recordsUsed += count;
    },
    ignore,
    malformed(reason, location) {
      if (strict) throw new TranscriptImportError(reason, where(location));
      ignore('malformed');
      warnings.push({ type: 'import-warning', message: reason, ...where(location) });
    },
    warn(message, location = {}) {
      warnings.push({ type: 'import-warning', message, ...where(location) });
    },
  };
}
