import { toolOutputText } from '../../messages/content.js';
import type { ToolCallPart, ToolResultOutput } from '../../messages/types.js';

const maxLineLength = 160;
const maxCommandLength = 120;

/**
 * A one-line gist of a tool output, for stubs: what was run and how it ended.
 * - shell-like tools (a `command`/`cmd`/`script` input, or a name like bash, shell, exec, terminal):
 *   `$ <first line of the command>`, the exit status when the output shows it (`exit code 1`,
 *   `<returncode>1</returncode>`, `Process exited with code 1`, an `exit_code` JSON field), and the first
 *   error line;
 * - file reads (a read/view/cat-like name and a path input): `<path> · <N> lines`;
 * - anything else: the first error line of an error output, else the first non-empty line.
 * Paths, commands and error lines are copied verbatim, cut to about 160 characters.
 */
export function toolOutputGist(
  call: Pick<ToolCallPart, 'toolName' | 'input'> | undefined,
  output: ToolResultOutput,
): string {
  const text = toolOutputText(output);
  const input = call?.input;
  const command = commandOf(input);
  const toolName = call?.toolName ?? '';
  if (command !== undefined || /bash|shell|exec|terminal|command|run_?cmd|^sh$/i.test(toolName)) {
    const pieces: string[] = [];
    if (command !== undefined) pieces.push(`$ ${shorten(firstLine(command), maxCommandLength)}`);
    const exitCode = exitCodeOf(output, text);
    if (exitCode !== undefined) pieces.push(`exit code ${exitCode}`);
    const error = firstErrorLine(text);
    if (error !== undefined) pieces.push(error);
    else if (command === undefined) {
      const line = firstNonEmptyLine(text);
      if (line !== undefined) pieces.push(line);
    }
    if (pieces.length > 0) return pieces.join(' · ');
  }
  const path = pathOf(input);
  if (path !== undefined && /read|view|cat|open|get_?file|fetch_?file|show/i.test(toolName)) {
    const lines = lineCount(text);
    const error =
      output.type === 'error-text' || output.type === 'error-json' ? firstErrorLine(text) : undefined;
    return [
      `${shorten(path, maxLineLength)} · ${lines} ${lines === 1 ? 'line' : 'lines'}`,
      ...(error === undefined ? [] : [error]),
    ].join(' · ');
  }
  const isError = output.type === 'error-text' || output.type === 'error-json';
  return (isError ? firstErrorLine(text) : undefined) ?? firstNonEmptyLine(text) ?? 'empty output';
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
