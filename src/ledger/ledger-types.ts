import type { IdentifiedMessage } from '../messages/types.js';
import type { CommandKind, FileActionKind } from './recognise-tool-call.js';
import type { ReferenceKind } from './references.js';
import type { TestRunner } from './shell-command.js';

/**
 * The ledger's plain-data snapshot: JSON-serialisable, every list in first-seen order, every path, command
 * and error string verbatim as it appeared in the conversation.
 */
export interface LedgerSnapshot {
  /** Messages folded in so far. */
  messageCount: number;
  files: LedgerFile[];
  commands: LedgerCommand[];
  errors: LedgerError[];
  tests: LedgerTestRun[];
  references: LedgerReference[];
}

export const fileStatuses = ['read', 'created', 'modified', 'deleted'] as const;
/** The file's state after everything seen: `created` wins over later edits (it was new in this session). */
export type FileStatus = (typeof fileStatuses)[number];

export interface LedgerFileChange {
  kind: Exclude<FileActionKind, 'read'>;
  /** The message holding the tool call. */
  messageId: string;
  /** The tool that made the change, as named in the call. */
  tool: string;
  detail?: string;
  linesAdded?: number;
  linesRemoved?: number;
  lineCount?: number;
  hunks?: number;
  oldChars?: number;
  newChars?: number;
  symbols?: string[];
  /** The tool reported an error: the change probably did not happen. */
  failed?: boolean;
}

export interface LedgerFile {
  /** As the agent wrote it (first spelling seen; `./x` and `x` are the same file). */
  path: string;
  status: FileStatus;
  reads: number;
  /** Reads whose tool reported an error (missing file, permission). */
  failedReads: number;
  /** Distinct partial reads: `lines 350-399`, `from line 40`. */
  readRanges: string[];
  changes: LedgerFileChange[];
  firstMessageId: string;
  lastMessageId: string;
}

export const commandStatuses = ['ok', 'failed', 'timed-out', 'running', 'unknown', 'pending'] as const;
/**
 * `timed-out`: the harness stopped waiting for it (and killed it, or left it running: its note says which);
 * `running`: the harness left it running with nothing more to show (a server, a watcher); `pending`: no result
 * seen yet; `unknown`: a result that says neither (no exit code, transcript kept no output).
 */
export type CommandStatus = (typeof commandStatuses)[number];
/** How the statuses of a command its harness stopped waiting for are said, wherever a status is written out. */
export const unfinishedStatusWords = { 'timed-out': 'timed out', running: 'still running' } as const;

export interface LedgerCommand {
  /** Verbatim: a shell line, code, a search as `Grep "pattern" path`, a sub-agent's task as `Task "…"`. */
  command: string;
  kind: CommandKind;
  tool: string;
  runs: number;
  /** Runs that failed (an error exit code, an error output). */
  failures: number;
  /** Runs its harness stopped waiting for and killed (`timed-out`): not failures, not passes either. */
  timeouts: number;
  /** Of the latest run, when its output stated one. */
  exitCode?: number;
  /** Of the latest run. */
  status: CommandStatus;
  /**
   * The harness's note, verbatim, that the latest run's output was cut before the agent saw it (mini-swe-agent's
   * `28287 characters elided`, OpenHands' `Showing the last 10114 lines of the output below.`, Claude Code's
   * `[40 lines truncated]`): the agent worked from part of it.
   */
  outputCut?: string;
  testRunner?: TestRunner;
  firstMessageId: string;
  lastMessageId: string;
}

export interface LedgerError {
  /**
   * The first occurrence, verbatim (trimmed; very long lines cut with `…`). An error line that stops where its
   * message starts ("Unhandled Runtime Error", "… Server Error") is joined to the message on its next line by ` ↵ `.
   */
  message: string;
  count: number;
  /** Messages it appeared in, distinct, first ones first (at most `maxErrorMessageIds`). */
  messageIds: string[];
  /**
   * Where it came from on first sight: the command, `Tool path`, `user` (pasted) or `assistant` (quoted in a
   * code block).
   */
  source: string;
}

export interface LedgerTestRun {
  runner: TestRunner;
  command?: string;
  /** The message holding the result. */
  messageId: string;
  status: CommandStatus;
  exitCode?: number;
  passed?: number;
  failed?: number;
  skipped?: number;
  failingTests: string[];
  /** The runner's own summary lines, verbatim. */
  summaryLines?: string[];
}

export interface LedgerReference {
  kind: ReferenceKind;
  value: string;
  count: number;
  firstMessageId: string;
}

/** An incremental ledger: fold messages in one at a time, read a snapshot whenever. */
export interface Ledger {
  /** Folds one message in, in O(size of the message). A message id seen before is ignored. */
  add(message: IdentifiedMessage): void;
  addAll(messages: Iterable<IdentifiedMessage>): void;
  /** A deep copy of the current state; later `add` calls do not change it. */
  snapshot(): LedgerSnapshot;
}
