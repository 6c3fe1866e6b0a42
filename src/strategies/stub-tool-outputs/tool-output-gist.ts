import { analyzeShellCommand, parseTestSummary } from '../../ledger/index.js';
import { toolOutputText } from '../../messages/content.js';
import type { ToolCallPart, ToolResultOutput } from '../../messages/types.js';
import { lastResultLine, showsOnlyWhatItRead } from '../../summary/index.js';

const maxLineLength = 160;
const maxCommandLength = 120;
/** How much of an output's end is read for its outcome: a runner prints its totals last, and a huge log stays cheap. */
const outcomeTailLength = 4000;

/**
 * A one-line gist of a tool output, for stubs: what was run and how it ended.
 * - shell-like tools (a `command`/`cmd`/`script` input, or a name like bash, shell, exec, terminal):
 *   `$ <first line of the command>`, the exit status when the output shows it (`exit code 1`,
 *   `<returncode>1</returncode>`, `Process exited with code 1`, an `exit_code` JSON field), then how it
 *   ended: the first error line, a test runner's totals (`Ran 116 tests in 0.4s · OK`), and the last
 *   line when it says more (the exception under a traceback; the only outcome of a quiet success) — an
 *   output stubbed in the kept tail must still say whether the step worked;
 * - file reads (a read/view/cat-like name and a path input, or an editor's `view`): `<path> · <N> lines`;
 * - an editor's other verbs (`create`, `str_replace`, `insert`): `<verb> <path>` and the first error line;
 * - anything else: the first error line of an error output, else the first non-empty line.
 * Paths, commands and error lines are copied verbatim, cut to about 160 characters.
 */
export function toolOutputGist(
  call: Pick<ToolCallPart, 'toolName' | 'input'> | undefined,
  output: ToolResultOutput,
): string {
  const text = toolOutputText(output);
  const input = call?.input;
  const path = pathOf(input);
  const editorCommand = editorCommandOf(input, path);
  const command = editorCommand === undefined ? commandOf(input) : undefined;
  const toolName = call?.toolName ?? '';
  if (
    command !== undefined ||
    (editorCommand === undefined && /bash|shell|exec|terminal|command|run_?cmd|^sh$/i.test(toolName))
  ) {
    const pieces: string[] = [];
    if (command !== undefined) pieces.push(`$ ${shorten(firstLine(command), maxCommandLength)}`);
    const exitCode = exitCodeOf(output, text);
    if (exitCode !== undefined) pieces.push(`exit code ${exitCode}`);
    pieces.push(...outcomeOf(text, command));
    if (pieces.length > 0) return pieces.join(' · ');
  }
  if (
    path !== undefined &&
    (editorCommand === 'view' || /read|view|cat|open|get_?file|fetch_?file|show/i.test(toolName))
  ) {
    const lines = lineCount(text);
    const error =
      output.type === 'error-text' || output.type === 'error-json' ? firstErrorLine(text) : undefined;
    return [
      `${shorten(path, maxLineLength)} · ${lines} ${lines === 1 ? 'line' : 'lines'}`,
      ...(error === undefined ? [] : [error]),
    ].join(' · ');
  }
  if (editorCommand !== undefined && path !== undefined) {
    const error = firstErrorLine(text);
    return [`${editorCommand} ${shorten(path, maxLineLength)}`, ...(error === undefined ? [] : [error])].join(
      ' · ',
    );
  }
  const isError = output.type === 'error-text' || output.type === 'error-json';
  return (isError ? firstErrorLine(text) : undefined) ?? firstNonEmptyLine(text) ?? 'empty output';
}

/**
 * How a shell output ended, verbatim lines: the first error line (a bare `Traceback …` header gives way to the
 * exception line that ends it), the test totals, and the last line that says something (`lastResultLine`) when it
 * is an error line of its own or nothing else said the outcome (not for a command that only reads: its last line
 * is just the last line it showed). Without a command, the first line says what ran instead.
 */
function outcomeOf(text: string, command: string | undefined): string[] {
  const tail = text.length > outcomeTailLength ? text.slice(-outcomeTailLength) : text;
  const lastLine = lastResultLine(tail, isExitStatusLine);
  const last = lastLine === undefined ? undefined : shorten(lastLine, maxLineLength);
  const lastIsError = last !== undefined && errorLine.test(last);
  let error = firstErrorLine(text);
  if (error !== undefined && /^Traceback\b/.test(error) && lastIsError) error = undefined;
  const pieces: string[] = [];
  const add = (line: string | undefined): void => {
    if (line !== undefined && !pieces.includes(line)) pieces.push(line);
  };
  add(error);
  for (const line of parseTestSummary(tail)?.summaryLines ?? []) add(shorten(line, maxLineLength));
  if (command === undefined && pieces.length === 0) add(firstNonEmptyLine(text));
  // The command is analysed only where its last line is all the gist would say.
  const readsOnly = () =>
    command !== undefined &&
    showsOnlyWhatItRead({ text: command, readOnly: analyzeShellCommand(command).readOnly });
  if (lastIsError || (last !== undefined && pieces.length === 0 && !readsOnly())) add(last);
  return pieces;
}

/** A short line that only reports the exit status (`Process exited with code 1`), given in the gist already. */
function isExitStatusLine(line: string): boolean {
  return line.length <= 60 && exitPatterns.some((pattern) => pattern.test(line));
}

/**
 * The verb of a file-editor tool (`str_replace_editor` in SWE-agent and OpenHands: `command` is `view`, `create`,
 * `str_replace`, `insert` or `undo_edit`, beside a `path`), which is not a shell command.
 */
function editorCommandOf(input: unknown, path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  const verb = field(input, ['command'])?.trim();
  return verb !== undefined && /^(?:view|create|str_replace|insert|undo_edit)$/.test(verb) ? verb : undefined;
}

function field(input: unknown, names: readonly string[]): string | undefined {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return undefined;
  const record = input as Record<string, unknown>;
  for (const name of names) {
    const value = record[name];
    if (typeof value === 'string' && value.trim() !== '') return value;
    if (Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'string')) {
      return value.join(' ');
    }
  }
  return undefined;
}

function commandOf(input: unknown): string | undefined {
  return field(input, ['command', 'cmd', 'script', 'commandLine', 'command_line']);
}

function pathOf(input: unknown): string | undefined {
  return field(input, ['file_path', 'filePath', 'path', 'filename', 'file', 'target_file', 'absolute_path']);
}

const exitPatterns = [
  /<returncode>\s*(-?\d+)\s*<\/returncode>/,
  /process exited with code:?\s*(-?\d+)/i,
  /exit(?:ed with)? (?:code|status):?\s*(-?\d+)/i,
  /"(?:exit_?code|exitCode|returncode|return_code|status_code)"\s*:\s*(-?\d+)/,
];

function exitCodeOf(output: ToolResultOutput, text: string): string | undefined {
  if ((output.type === 'json' || output.type === 'error-json') && typeof output.value === 'object') {
    const value = output.value as Record<string, unknown> | null;
    for (const name of ['exit_code', 'exitCode', 'returncode', 'return_code']) {
      const code = value?.[name];
      if (typeof code === 'number') return String(code);
    }
  }
  for (const pattern of exitPatterns) {
    const match = pattern.exec(text);
    if (match?.[1] !== undefined) return match[1];
  }
  return undefined;
}

const errorLine =
  /\b(?:[A-Z]\w*(?:Error|Exception)|Error|ERROR|error(?:\[\w+\])?:|FAIL(?:ED|URE)?|Traceback|panic:|fatal:|Fatal|npm ERR!)|✗|✘/;

/** The first line that looks like an error, verbatim but trimmed and cut to about 160 characters. */
export function firstErrorLine(text: string): string | undefined {
  for (const line of lines(text)) {
    if (errorLine.test(line)) return shorten(line.trim(), maxLineLength);
  }
  return undefined;
}

function firstNonEmptyLine(text: string): string | undefined {
  for (const line of lines(text)) {
    if (line.trim() !== '') return shorten(line.trim(), maxLineLength);
  }
  return undefined;
}

/** Lines lazily, so a huge output whose first line answers is not split whole. */
function* lines(text: string): Generator<string> {
  let start = 0;
  while (start <= text.length) {
    const end = text.indexOf('\n', start);
    yield text.slice(start, end === -1 ? text.length : end);
    if (end === -1) return;
    start = end + 1;
  }
}

/** The first non-empty line, with ` …` when more lines follow. */
function firstLine(text: string): string {
  const trimmed = text.trim();
  const end = trimmed.indexOf('\n');
  return end === -1 ? trimmed : `${trimmed.slice(0, end).trim()} …`;
}

function lineCount(text: string): number {
  if (text === '') return 0;
  let count = 1;
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) count++;
  return text.endsWith('\n') ? count - 1 : count;
}

function shorten(text: string, maxLength: number): string {
  const oneLine = text.replace(/\s+/g, ' ');
  return oneLine.length <= maxLength ? oneLine : `${oneLine.slice(0, maxLength - 1)}…`;
}
