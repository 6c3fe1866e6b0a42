import {
  aiderCommitLine,
  escapedColourCode,
  packageManagerReportLine,
  type RecogniserState,
  recogniseToolCall,
  rejectedEditErrors,
  runsCommand,
  shellHookNoiseLine,
  withoutColours,
  withoutTestRunHeaders,
} from '../ledger/index.js';
import { messageText, toolCallsOf } from '../messages/content.js';
import type { IdentifiedMessage, ToolCallPart } from '../messages/types.js';

export interface CommandResultLinesOptions {
  /** `key: value` and tally lines kept per output, besides its last line. @default 8 */
  maxKeyValueLines?: number;
  /** Longer lines are cut with `…`. @default 200 */
  maxLineChars?: number;
}

/** A line that reports a value: `Actual count: 2`, `max_y=0.2595`, `Created 155 rows` is caught as the last line. */
const keyValueLine = /\b[\w .'-]{2,40}[:=]\s*\S/;
/** A line that counts what happened: `13 files changed, 27757 insertions(+)`, `Tests: 14 passed (14)`. */
const tallyLine =
  /\b\d[\d,]*\s+(?:files?|insertions?|deletions?|tests?|passed|failed|errors?|warnings?|rows?|records?|items?|packages?|modules?|blocks?)\b/i;
/** `git commit`'s first line, `[main 1a2b3c4] Fix the parser`: the commit's id and subject, a result. */
const gitCommitLine = /^\[[^\]\s]+(?: \(root-commit\))? [0-9a-f]{7,40}\] \S/;
/** Read-only, but what they print is where the work stands (the branch, what is committed). */
const gitStateCommand = /\bgit\s+(?:status|branch|rev-parse)\b/;

/**
 * A command whose output is what it read (a file, a listing, matches), not how it ended: read-only, other than
 * git's state commands.
 */
export function showsOnlyWhatItRead(command: { text: string; readOnly: boolean }): boolean {
  return command.readOnly && !gitStateCommand.test(command.text);
}
/**
 * Output wrappers, stubs and importers' placeholders say nothing about the result; nor do the lines OpenHands
 * puts around every output (its `EXECUTION RESULT of [execute_bash]:` heading; the exit code, the working
 * directory and the interpreter after it), which would otherwise stand for the last line of every command it
 * ran: the line before them is what the command printed last (`Server running at http://localhost:3000/`).
 * Its notes that a command timed out or is still running are results.
 */
const wrapperLine =
  /^(?:<\/?(?:returncode|output|stdout|stderr)>|<returncode>-?\d*<\/returncode>|\[.*archived: h-[0-9a-f]+.*\]|\[no (?:result recorded|output in the SpecStory export)\]|\[(?:Command finished with exit code -?\d+|The command completed with exit code -?\d+\..*|Current working directory: .*|Python interpreter: .*)\]|EXECUTION RESULT of \[\w+\]:)$/;
/**
 * A harness's bracketed note on a command (OpenHands: `[The command timed out after 300 seconds. You may wait
 * longer to see additional output by sending empty command '', …]`): its first sentence says what happened, the
 * rest is advice to the agent. The first sentence is kept, with the bracket closed.
 */
const harnessNote = /^(\[[^\]]{12,}?[.!])\s+[A-Z][^\]]{40,}\]$/;
/** A harness's note cut to its first sentence (`[The command timed out after 300 seconds. …]`); other lines as they are. */
function withoutHarnessAdvice(line: string): string {
  const note = line.length <= maxNoteChars && line.endsWith(']') ? harnessNote.exec(line) : null;
  return note === null ? line : `${note[1]} …]`;
}
/** Lines longer than this are never such notes, nor stack frames: the patterns backtrack, so they are not tried. */
const maxNoteChars = 600;
/** SWE-agent's end-of-command marker (`///PROCESS-DONE:0:PROCESS-DONE///`), glued to the output's last line. */
const processDoneMarker = /\/\/\/PROCESS-DONE:-?\d+:PROCESS-DONE\/\/\/$/;

/** An output's line, trimmed, without SWE-agent's marker (looked for only where a line ends like it). */
function outputLine(text: string, start: number, end: number): string {
  const line = text.slice(start, end).trim();
  return line.endsWith('PROCESS-DONE///') ? line.replace(processDoneMarker, '') : line;
}
/** SWE-agent's editor window: `[File: /repo/main.py (23 lines total)]`, then numbered lines of the file. */
const editorWindow = /^\s*\[File: [^\n]* \(\d+ lines total\)\]/;
/** Where a harness cut an output (Claude Code): what comes before it is not how the command ended. */
const truncationLine = /^\.\.\. \[\d+ lines truncated\] \.\.\.$/;

/**
 * What the commands the agent ran (not reads or searches: scripts, tests, builds, git) printed that reads as a
 * result: the last meaningful line of each output and up to `maxKeyValueLines` lines that report a value
 * (`key: value` with a number) or count what happened (`13 files changed`), verbatim, in order, distinct.
 * Errors are the ledger's business; this keeps the outcomes a reproduction script or a test run printed
 * (`Actual count: 2`, `Server running at http://localhost:3000/`), and where git stands.
 */
export function commandResultLines(
  messages: readonly IdentifiedMessage[],
  options: CommandResultLinesOptions = {},
): string[] {
  const { maxKeyValueLines = 8, maxLineChars = 200 } = options;
  const calls = new Map<string, ToolCallPart>();
  for (const message of messages) for (const call of toolCallsOf(message)) calls.set(call.toolCallId, call);
  const state: RecogniserState = {};
  const results: string[] = [];
  const add = (line: string) => {
    const shortened = withoutHarnessAdvice(line);
    const capped = shortened.length > maxLineChars ? `${shortened.slice(0, maxLineChars)}…` : shortened;
    if (!results.includes(capped)) results.push(capped);
  };
  for (const message of messages) {
    if (message.role === 'user') {
      // What aider committed is said in its notes, not in a tool result.
      const text = messageText(message);
      if (text.includes('Commit ')) for (const [line] of text.matchAll(aiderCommitLine)) add(line.trim());
      continue;
    }
    if (message.role !== 'tool' || typeof message.content === 'string') continue;
    for (const part of message.content) {
      if (part.type !== 'tool-result') continue;
      const call = calls.get(part.toolCallId);
      if (call === undefined) continue;
      // Folding reads the same results round after round: what a result says is kept per part object.
      let output = outputCache.get(part);
      if (output === undefined) {
        // Only shell and code tools run a command (and only they change `state`): the others are not recognised.
        const command = runsCommand(call.toolName)
          ? recogniseToolCall(call.toolName, call.input, state).command
          : undefined;
        const text =
          command === undefined ||
          command.kind === 'search' ||
          command.kind === 'delegate' ||
          showsOnlyWhatItRead(command)
            ? ''
            : withoutTestRunHeaders(withoutColours(messageText({ role: 'tool', content: [part] })));
        // SWE-agent's `edit` (and `goto`, `scroll_down`) print the editor's window: file lines, not a result; an
        // edit its linter rejected shows the window as it would have been, and its errors are the ledger's.
        output = { text: editorWindow.test(text) || rejectedEditErrors(text) !== undefined ? '' : text };
        outputCache.set(part, output);
      }
      if (output.chosen?.maxKeyValueLines !== maxKeyValueLines)
        output.chosen = { maxKeyValueLines, lines: chooseResultLines(output.text, maxKeyValueLines) };
      for (const line of output.chosen.lines) add(line);
    }
  }
  return results;
}

/**
 * The output's value and tally lines (the first `maxKeyValueLines`), then its last line (none when a harness
 * cut the output short there): of its lines (split at \n alone: trimming drops the \r of a \r\n) that say
 * something (`isResultLine`). Read from the start only until the value lines are found, and from the end for
 * the last line: a long log is not split whole.
 */
function chooseResultLines(text: string, maxKeyValueLines: number): string[] {
  const chosen: string[] = [];
  let keyValues = 0;
  for (let start = 0; start <= text.length && keyValues < maxKeyValueLines; ) {
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    const line = outputLine(text, start, end);
    // Value and tally lines hold a number: a line without a digit is neither (and costs no pattern).
    if (
      isResultLine(line) &&
      (gitCommitLine.test(line) || (/\d/.test(line) && (keyValueLine.test(line) || tallyLine.test(line))))
    ) {
      chosen.push(line);
      keyValues++;
    }
    if (newline === -1) break;
    start = newline + 1;
  }
  const last = lastResultLine(text);
  if (last !== undefined) chosen.push(last);
  return chosen;
}

/**
 * The last line of a command's output that says something of how it ended (`isResultLine`, trimmed, a harness's
 * note cut to its first sentence), read from the end; none when a harness cut the output short below it. `skip`
 * passes over more lines (a stub's gist, which gives the exit code already, skips the line that only reports it).
 */
export function lastResultLine(text: string, skip?: (line: string) => boolean): string | undefined {
  for (let end = text.length; ; ) {
    const newline = end === 0 ? -1 : text.lastIndexOf('\n', end - 1);
    const line = outputLine(text, newline + 1, end);
    if (truncationLine.test(line)) return undefined;
    if (isResultLine(line) && skip?.(line) !== true) return withoutHarnessAdvice(line);
    if (newline === -1) return undefined;
    end = newline;
  }
}

/**
 * Lines that never say how a command ended: npm's `> pkg@1.0.0 script` banner and the command under it (and a
 * shell's continuation prompt), one passing test of many, a test runner's timings, SWE-agent's prompt after
 * every output (`(Open file: …)`, `(Current directory: …)`, `bash-$`), its editor's `[File: … (N lines total)]` and its
 * note that a command printed nothing (`Your command ran successfully and did not produce any output.`);
 * the set-up a test runner prints before every run (pytest's `rootdir:`, `plugins:`; SymPy's `random seed:`,
 * `hash randomization:`, which change with every run, and its aligned `executable:   …`, `architecture:   …`); a
 * package installer's line per package added or removed (`uv sync`: ` - amqp==5.3.1`, ` + hf-xet==1.1.9`); a shell's prompt alone on its line, as a terminal copied
 * into a transcript shows it (`host:dir user$`, `user@host dir %`, `user@host:~/dir$`).
 */
const noiseLine =
  /^(?:> |[✓✔√]\s|(?:Duration|Start at)\s|\((?:Open file|Current directory): .*\)$|bash-\$$|Your command ran successfully and did not produce any output\.$|\[File: .* \(\d+ lines total\)\]$|(?:rootdir|configfile|plugins|cachedir|testpaths|random seed|hash randomization):\s|(?:executable|architecture|cache|ground types|numpy):\s{2}|[-+] [\w.-]+==[\w.+!-]+$|[\w.-]+:\S* [\w.-]+\$$|[\w.-]+@[\w.-]+(?: \S+ [%#]|:\S*[$#])$)/;
/**
 * A place inside Node itself or a dependency (`at Module._load (node:internal/modules/cjs/loader:981:27)`, the
 * `node:internal/…:1080` heading a crash, `at run (/repo/node_modules/mocha/lib/cli/run.js:374:5)`, with the ` {`
 * Node prints after the last frame of an error that has properties): the error and the frames in the project's
 * own files say where it failed.
 */
const foreignFrame =
  /^(?:(?:at (?:.* \()?)?node:[\w/.-]+:\d+(?::\d+)?\)?|at (?:.* \()?[^()\s]*\/node_modules\/[^()\s]*:\d+:\d+\)?)(?: \{)?$/;

/**
 * A line worth keeping as a result: some letters, not an output wrapper, a stub, noise, a quoted log, a package
 * manager's report fields or a foreign frame.
 */
function isResultLine(line: string): boolean {
  return (
    line.length >= 6 &&
    /[A-Za-z]/.test(line) &&
    !wrapperLine.test(line) &&
    !noiseLine.test(line) &&
    !shellHookNoiseLine.test(line) &&
    !escapedColourCode.test(line) &&
    !packageManagerReportLine.test(line) &&
    !(line.length <= maxNoteChars && foreignFrame.test(line))
  );
}

/** What a tool result's command printed ('' when it ran none worth reading), and the lines chosen from it. */
const outputCache = new WeakMap<
  object,
  { text: string; chosen?: { maxKeyValueLines: number; lines: string[] } }
>();
