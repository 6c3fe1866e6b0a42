import { InvalidMessageError } from '../errors/index.js';
import { stringValues } from '../internal/json-strings.js';
import { closedFenceBodies } from '../internal/markdown-fences.js';
import {
  isDemonstration,
  isErrorOutput,
  isFormatComplaint,
  isHarnessNote,
  isWorkedExample,
  messageText,
  toolOutputText,
} from '../messages/content.js';
import type { IdentifiedMessage, Part, ToolCallPart, ToolResultPart } from '../messages/types.js';
import { roles } from '../messages/types.js';
import { parseUnifiedDiff } from './code-change.js';
import type {
  CommandStatus,
  FileStatus,
  Ledger,
  LedgerCommand,
  LedgerError,
  LedgerFile,
  LedgerFileChange,
  LedgerReference,
  LedgerSnapshot,
  LedgerTestRun,
} from './ledger-types.js';
import {
  type FileAction,
  type RecognisedToolCall,
  type RecogniserState,
  recogniseToolCall,
} from './recognise-tool-call.js';
import { type FoundReference, referencesIn } from './references.js';
import { inlineScriptDidNotCompile, pythonScriptDetail } from './shell-command.js';
import { parseTestSummary, type TestSummary } from './test-summary.js';
import {
  errorLinesOf,
  exitCodeOf,
  firstMeaningfulLine,
  isPlaceholderOutput,
  normaliseError,
  rejectedEditErrors,
  unfinishedStatusOf,
} from './tool-output.js';

/** An error keeps the ids of the first this-many messages it appeared in (its count keeps going). */
export const maxErrorMessageIds = 10;
/**
 * Tools whose results are flagged as errors whenever the command fails (Claude Code's Bash, Codex's shell), so
 * a plain result means success even without an exit code.
 */
const failureSignallingTools = new Set(['Bash', 'shell', 'local_shell', 'exec_command']);
/** Text longer than this is scanned for references through its head only: a 1 MB log is not a link list. */
const referenceScanChars = 20_000;

/**
 * `git diff` of the working tree (or the index: `--cached`), not of two commits (`a..b`) or two paths
 * (`--no-index`): the files it shows changed were changed here.
 */
const workingTreeDiff = /\bgit\s+(?:(?:-C|-c)\s+\S+\s+|--no-pager\s+)*diff\b(?![^\n;&|]*(?:\.\.|--no-index))/;

interface PendingCall {
  toolName: string;
  recognised: RecognisedToolCall;
  fileEntries: Array<{ file: LedgerFile; change?: LedgerFileChange; read: boolean; shell: boolean }>;
  command?: LedgerCommand;
}

/** `./src/x.ts`, `src/x.ts` and `src\x.ts` are one file; other spellings (absolute vs relative) stay apart. */
export function ledgerFileKey(path: string): string {
  // Windows spells the same path with backslashes (aider there writes `src\App.tsx` for the `src/App.tsx` it read).
  const slashed = path.includes('\\') ? path.replaceAll('\\', '/') : path;
  return slashed.startsWith('./') ? slashed.slice(2) : slashed;
}

/** The keys (`ledgerFileKey`) of the files the session created: the first of their changes that worked made them. */
export function createdFileKeys(snapshot: LedgerSnapshot): Set<string> {
  const keys = new Set<string>();
  for (const file of snapshot.files)
    if (file.changes.find((change) => change.failed !== true)?.kind === 'create')
      keys.add(ledgerFileKey(file.path));
  return keys;
}

function deriveStatus(file: LedgerFile): FileStatus {
  let status: FileStatus = 'read';
  for (const change of file.changes) {
    if (change.failed === true) continue;
    if (change.kind === 'create') status = 'created';
    else if (change.kind === 'delete') status = 'deleted';
    else if (status !== 'created') status = 'modified';
  }
  return status;
}

function describeSource(toolName: string, recognised: RecognisedToolCall | undefined): string {
  if (recognised?.command !== undefined) return recognised.command.text;
  const file = recognised?.files[0];
  return file === undefined ? toolName : `${toolName} ${file.path}`;
}

function checkMessage(message: unknown, index: number): asserts message is IdentifiedMessage {
  if (typeof message !== 'object' || message === null)
    throw new InvalidMessageError('a message must be an object', { index });
  const record = message as Record<string, unknown>;
  if (typeof record.id !== 'string' || record.id === '')
    throw new InvalidMessageError('the ledger needs messages with ids (see assignIds)', {
      index,
      path: 'id',
    });
  if (!roles.includes(record.role as (typeof roles)[number]))
    throw new InvalidMessageError(`unknown role ${JSON.stringify(record.role)}`, { index, path: 'role' });
  if (typeof record.content !== 'string' && !Array.isArray(record.content))
    throw new InvalidMessageError('content must be a string or an array of parts', {
      index,
      path: 'content',
    });
}

/**
 * Creates an empty artifact ledger. Fold messages in with `add` (tool results are matched to calls seen
 * earlier by `toolCallId`); read it with `snapshot`. Deterministic: the same messages in the same order give
 * the same snapshot.
 */
export function createLedger(): Ledger {
  const files = new Map<string, LedgerFile>();
  const commands = new Map<string, LedgerCommand>();
  const errors = new Map<string, LedgerError>();
  const tests: LedgerTestRun[] = [];
  const references = new Map<string, LedgerReference>();
  const pending = new Map<string, PendingCall>();
  const seenIds = new Set<string>();
  const recogniserState: RecogniserState = {};
  let messageCount = 0;

  const noteReference = (reference: FoundReference, messageId: string) => {
    const key = `${reference.kind}\u0000${reference.value}`;
    const existing = references.get(key);
    if (existing !== undefined) existing.count++;
    else
      references.set(key, {
        kind: reference.kind,
        value: reference.value,
        count: 1,
        firstMessageId: messageId,
      });
  };
  const scanReferences = (text: string, messageId: string, strictIssues: boolean) => {
    const head = text.length > referenceScanChars ? text.slice(0, referenceScanChars) : text;
    for (const reference of referencesIn(head, { strictIssues })) noteReference(reference, messageId);
  };

  const noteError = (message: string, messageId: string, source: string) => {
    const key = normaliseError(message);
    const existing = errors.get(key);
    if (existing === undefined) {
      errors.set(key, { message, count: 1, messageIds: [messageId], source });
      return;
    }
    existing.count++;
    if (existing.messageIds.length < maxErrorMessageIds && !existing.messageIds.includes(messageId))
      existing.messageIds.push(messageId);
  };

  const fileFor = (path: string, messageId: string): LedgerFile => {
    const key = ledgerFileKey(path);
    let file = files.get(key);
    if (file === undefined) {
      file = {
        path,
        status: 'read',
        reads: 0,
        failedReads: 0,
        readRanges: [],
        changes: [],
        firstMessageId: messageId,
        lastMessageId: messageId,
      };
      files.set(key, file);
    }
    file.lastMessageId = messageId;
    return file;
  };

  const applyFileAction = (action: FileAction, toolName: string, messageId: string) => {
    const known = files.get(ledgerFileKey(action.path));
    // Reads that all failed (the file was not there) do not make it known, nor do creates that failed; an edit
    // that failed does (an edit needs the file there).
    const isNew =
      known === undefined ||
      (known.failedReads === known.reads &&
        known.changes.every((change) => change.failed === true && change.kind === 'create'));
    const file = fileFor(action.path, messageId);
    if (action.kind === 'read') {
      file.reads++;
      if (
        action.detail !== undefined &&
        /^(?:lines|from line|open at)/.test(action.detail) &&
        !file.readRanges.includes(action.detail)
      )
        file.readRanges.push(action.detail);
      return { file, read: true };
    }
    // A whole-file write to a file never seen before (or only by failed reads) creates it (Claude Code's Write
    // needs a Read first otherwise); so does an edit that replaces nothing with everything (aider's whole-file
    // format, Claude Code's Edit with an empty old_string).
    const wholeFile = action.kind === 'write' || (action.kind === 'edit' && action.oldChars === 0);
    const kind = wholeFile && isNew ? 'create' : action.kind;
    const change: LedgerFileChange = { kind, messageId, tool: toolName };
    if (action.detail !== undefined) change.detail = action.detail;
    if (action.linesAdded !== undefined) change.linesAdded = action.linesAdded;
    if (action.linesRemoved !== undefined) change.linesRemoved = action.linesRemoved;
    if (action.lineCount !== undefined) change.lineCount = action.lineCount;
    if (action.hunks !== undefined) change.hunks = action.hunks;
    if (action.oldChars !== undefined) change.oldChars = action.oldChars;
    if (action.newChars !== undefined) change.newChars = action.newChars;
    if (action.symbols !== undefined && action.symbols.length > 0) change.symbols = [...action.symbols];
    file.changes.push(change);
    file.status = deriveStatus(file);
    return { file, change, read: false };
  };

  /** The one known file whose key ends with `ending` (the map's keys are the files' keys), or undefined. */
  const fileEndingWith = (ending: string): LedgerFile | undefined => {
    let found: LedgerFile | undefined;
    for (const [key, file] of files) {
      if (!key.endsWith(ending)) continue;
      if (found !== undefined) return undefined;
      found = file;
    }
    return found;
  };

  /**
   * The files a `git diff` output shows changed, recorded as changed where the ledger knows no change of them: a
   * script the ledger cannot read wrote them (mini-swe-agent's `python apply_fix.py`), and the diff is the record
   * of it. A diff path is relative to the repository: it names the one known file whose path ends with it.
   */
  const noteDiffedFiles = (text: string, toolName: string, messageId: string) => {
    if (!text.includes('diff --git ')) return;
    for (const diffed of parseUnifiedDiff(text)) {
      const key = ledgerFileKey(diffed.path);
      const known = files.get(key) ?? fileEndingWith(`/${key}`);
      if (known?.changes.some((change) => change.failed !== true) === true) continue;
      const action: FileAction = {
        kind: diffed.operation === 'add' ? 'create' : diffed.operation === 'delete' ? 'delete' : 'edit',
        path: known?.path ?? diffed.path,
        detail: 'git diff',
        linesAdded: diffed.linesAdded,
        linesRemoved: diffed.linesRemoved,
        hunks: diffed.hunks,
      };
      if (diffed.symbols.length > 0) action.symbols = diffed.symbols;
      applyFileAction(action, toolName, messageId);
    }
  };

  const addToolCall = (part: ToolCallPart, messageId: string) => {
    const recognised = recogniseToolCall(part.toolName, part.input, recogniserState);
    const call: PendingCall = { toolName: part.toolName, recognised, fileEntries: [] };
    const shell = recognised.command?.kind === 'shell';
    for (const action of recognised.files)
      call.fileEntries.push({ ...applyFileAction(action, part.toolName, messageId), shell });
    if (recognised.command !== undefined) {
      const { text, kind, testRunner } = recognised.command;
      const key = `${kind}\u0000${text}`;
      let command = commands.get(key);
      if (command === undefined) {
        command = {
          command: text,
          kind,
          tool: part.toolName,
          runs: 0,
          failures: 0,
          timeouts: 0,
          status: 'pending',
          firstMessageId: messageId,
          lastMessageId: messageId,
        };
        if (testRunner !== undefined) command.testRunner = testRunner;
        commands.set(key, command);
      }
      command.runs++;
      command.status = 'pending';
      delete command.exitCode;
      command.lastMessageId = messageId;
      call.command = command;
      scanReferences(text, messageId, false);
    }
    for (const reference of recognised.references) noteReference(reference, messageId);
    if (recognised.command === undefined) {
      // URLs and issue ids in other inputs (a WebFetch url is structured already; prompts, bodies, plans).
      for (const text of stringValues(part.input, { maxDepth: 6, maxStrings: 50 }))
        if (text.length > 6) scanReferences(text, messageId, false);
    }
    pending.set(part.toolCallId, call);
  };

  const addToolResult = (part: ToolResultPart, messageId: string) => {
    const call = pending.get(part.toolCallId);
    pending.delete(part.toolCallId);
    const text = toolOutputText(part.output);
    const placeholder = isPlaceholderOutput(text);
    const command = call?.recognised.command;
    const exitCode = command !== undefined && !placeholder ? exitCodeOf(text) : undefined;
    // An edit its tool did not make (its linter turned it away, or it found nothing to replace) changed nothing,
    // whatever status the shell reports.
    const rejection = placeholder ? undefined : rejectedEditErrors(text);
    const failed =
      !placeholder &&
      (rejection !== undefined || isErrorOutput(part.output) || (exitCode !== undefined && exitCode !== 0));
    // A command its harness stopped waiting for did not finish, whatever else the output says.
    const unfinished = placeholder || command === undefined ? undefined : unfinishedStatusOf(text);
    const status: CommandStatus = placeholder
      ? 'unknown'
      : (unfinished ??
        (failed
          ? 'failed'
          : exitCode !== undefined ||
              command === undefined ||
              command.kind === 'search' ||
              command.kind === 'delegate' ||
              part.output.type !== 'text' ||
              failureSignallingTools.has(part.toolName)
            ? 'ok'
            : 'unknown'));

    if (call?.command !== undefined) {
      call.command.status = status;
      if (exitCode !== undefined) call.command.exitCode = exitCode;
      // A run that was killed is a timeout, whatever exit status the kill left.
      if (unfinished === 'timed-out') call.command.timeouts++;
      else if (failed) call.command.failures++;
      const cut = placeholder ? null : outputCutNote.exec(text);
      if (cut !== null) call.command.outputCut = cut[0];
      else delete call.command.outputCut;
    }
    if (call !== undefined && !placeholder) {
      const head = text.slice(0, 300);
      for (const entry of call.fileEntries) {
        let touched = false;
        if (entry.read) {
          if (failed) entry.file.failedReads++;
          continue;
        }
        if (entry.change === undefined) continue;
        // A shell line's exit status belongs to its last command, not to the file effects before it; but a
        // Python script that did not compile wrote nothing, whatever ran after it, nor did a rejected edit.
        if (entry.shell) {
          const wroteNothing =
            rejection !== undefined ||
            (entry.change.detail === pythonScriptDetail && inlineScriptDidNotCompile(text));
          if (!wroteNothing) continue;
          entry.change.failed = true;
          touched = true;
        } else if (failed) {
          entry.change.failed = true;
          touched = true;
        } else if (entry.change.kind === 'write' && /\bcreated\b/i.test(head)) {
          entry.change.kind = 'create';
          touched = true;
        } else if (entry.change.kind === 'create' && /\b(?:updated|overwr|modified)/i.test(head)) {
          entry.change.kind = 'write';
          touched = true;
        }
        if (touched) entry.file.status = deriveStatus(entry.file);
      }
    }

    if (!placeholder) {
      const source = describeSource(part.toolName, call?.recognised);
      let lines: string[] = [];
      if (failed) {
        lines = rejection !== undefined && rejection.length > 0 ? rejection : errorLinesOf(text);
        if (lines.length === 0) {
          const first = firstMeaningfulLine(text);
          if (first !== undefined) lines = [first];
        }
      } else if (
        command !== undefined &&
        !command.readOnly &&
        (status === 'unknown' || unfinished !== undefined)
      ) {
        // Neither success nor failure: the errors it printed, where they are plain.
        lines = errorLinesOf(text, { strongOnly: true, maxLines: 3 });
      }
      for (const line of lines) noteError(line, messageId, source);
      if (command?.kind === 'shell' && !failed && workingTreeDiff.test(command.text))
        noteDiffedFiles(text, part.toolName, messageId);

      if (command !== undefined && command.kind === 'shell' && !command.readOnly) {
        const summary = parseTestSummary(text, command.testRunner);
        if (summary !== undefined || command.testRunner !== undefined) {
          const run: LedgerTestRun = {
            runner: summary?.runner ?? command.testRunner ?? 'npm test',
            command: command.text,
            messageId,
            status: status === 'unknown' && summary !== undefined ? testStatus(summary) : status,
            failingTests: summary?.failingTests ?? [],
          };
          if (exitCode !== undefined) run.exitCode = exitCode;
          if (summary?.passed !== undefined) run.passed = summary.passed;
          if (summary?.failed !== undefined) run.failed = summary.failed;
          if (summary?.skipped !== undefined) run.skipped = summary.skipped;
          if (summary?.summaryLines !== undefined) run.summaryLines = summary.summaryLines;
          tests.push(run);
        }
      }
      scanReferences(text, messageId, true);
    }
  };

  const ledger: Ledger = {
    add(message) {
      checkMessage(message, messageCount);
      if (seenIds.has(message.id)) return;
      seenIds.add(message.id);
      messageCount++;
      // A worked example's files, commands and errors were never this session's.
      if (isDemonstration(message)) return;
      const id = message.id;
      // What a harness wrote in the user's place (aider's console, a local command's output) is not the user's.
      const userSource = isHarnessNote(message)
        ? `${typeof message.metadata?.origin === 'string' ? message.metadata.origin : 'harness'} output`
        : 'user';
      const contextFiles = message.metadata?.contextFiles;
      if (Array.isArray(contextFiles))
        for (const path of contextFiles)
          if (typeof path === 'string' && path !== '') applyFileAction({ kind: 'read', path }, 'context', id);
      // A harness's rejection of the agent's reply (mini-swe-agent's "found 2 actions") is an error it saw.
      if (message.role === 'user' && isFormatComplaint(message)) {
        const first = firstMeaningfulLine(messageText(message));
        if (first !== undefined) noteError(first, id, userSource);
      }
      if (typeof message.content === 'string') {
        if (message.role === 'user') addUserText(message.content, id, userSource);
        else if (message.role === 'assistant') addAssistantText(message.content, id);
        return;
      }
      for (const part of message.content as readonly Part[]) {
        switch (part.type) {
          case 'text':
            // OpenHands' worked example, a part of the first task: its `ModuleNotFoundError` was never this
            // session's.
            if (isWorkedExample(part.text)) break;
            if (message.role === 'user') addUserText(part.text, id, userSource);
            else if (message.role === 'assistant') addAssistantText(part.text, id);
            break;
          case 'tool-call':
            addToolCall(part, id);
            break;
          case 'tool-result':
            addToolResult(part, id);
            break;
          default:
            break;
        }
      }
    },
    addAll(messages) {
      for (const message of messages) ledger.add(message);
    },
    snapshot() {
      return copyPlainData({
        messageCount,
        files: [...files.values()],
        commands: [...commands.values()],
        errors: [...errors.values()],
        tests,
        references: [...references.values()],
      });
    },
  };

  function addUserText(text: string, messageId: string, source: string): void {
    scanReferences(text, messageId, false);
    // Users paste tracebacks and compiler errors: keep the unambiguous lines.
    for (const line of errorLinesOf(text, { strongOnly: true, maxLines: 3 }))
      noteError(line, messageId, source);
  }

  function addAssistantText(text: string, messageId: string): void {
    scanReferences(text, messageId, false);
    // An agent quotes in a code block the output it saw (often the only copy, when the transcript kept no
    // tool output): keep the unambiguous error lines of its code blocks.
    for (const block of fencedBlocksOf(text))
      for (const line of errorLinesOf(block, { strongOnly: true, maxLines: 3 }))
        noteError(line, messageId, 'assistant');
  }

  return ledger;
}

/**
 * A harness's note that it cut a command's output before the agent saw it: mini-swe-agent's `<elided_chars>`,
 * OpenHands' `[Previous command outputs are truncated. Showing the last N lines of the output below.]`, Claude
 * Code's `... [N lines truncated] ...`.
 */
const outputCutNote =
  /\d[\d,]* characters elided|Showing the last \d[\d,]* lines of the output below\.|\[\d[\d,]* lines truncated\]/;

/** The bodies of the closed fenced code blocks in the head of a markdown text. */
function fencedBlocksOf(text: string): string[] {
  return closedFenceBodies(text.length > referenceScanChars ? text.slice(0, referenceScanChars) : text);
}

/**
 * A deep copy of the ledger's state, which is plain data (objects, arrays, strings, numbers, booleans): what
 * `structuredClone` gives for it, at a fraction of the cost (a fold takes a snapshot every round).
 */
function copyPlainData<Value>(value: Value): Value {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(copyPlainData) as Value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) copy[key] = copyPlainData((value as Record<string, unknown>)[key]);
  return copy as Value;
}

/** The ledger of a whole conversation in one call. */
export function buildLedger(messages: Iterable<IdentifiedMessage>): LedgerSnapshot {
  const ledger = createLedger();
  ledger.addAll(messages);
  return ledger.snapshot();
}

/**
 * A test run's status from the runner's own counts, when its exit code is not known: failed with a failure,
 * ok with passes and none failed.
 */
function testStatus(summary: TestSummary): CommandStatus {
  if ((summary.failed ?? 0) > 0 || summary.failingTests.length > 0) return 'failed';
  return (summary.passed ?? 0) > 0 ? 'ok' : 'unknown';
}
