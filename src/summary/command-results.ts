import { type RecogniserState, recogniseToolCall } from '../ledger/index.js';
import { messageText, toolCallsOf } from '../messages/content.js';
import type { IdentifiedMessage, ToolCallPart } from '../messages/types.js';

export interface CommandResultLinesOptions {
  /** `key: value` and tally lines kept per output, besides its last line. @default 3 */
  maxKeyValueLines?: number;
  /** Longer lines are cut with `…`. @default 200 */
  maxLineChars?: number;
}

/** A line that reports a value: `Actual count: 2`, `max_y=0.2595`, `Created 155 rows` is caught as the last line. */
const keyValueLine = /\b[\w .'-]{2,40}[:=]\s*\S/;
/** A line that counts what happened: `13 files changed, 27757 insertions(+)`, `Tests: 14 passed (14)`. */
const tallyLine =
  /\b\d[\d,]*\s+(?:files?|insertions?|deletions?|tests?|passed|failed|errors?|warnings?|rows?|records?|items?|packages?|modules?|blocks?)\b/i;
/** Read-only, but what they print is where the work stands (the branch, what is committed). */
const gitStateCommand = /\bgit\s+(?:status|branch|rev-parse)\b/;
/** Output wrappers and stubs say nothing about the result. */
const wrapperLine = /^(?:<\/?(?:returncode|output|stdout|stderr)>|\[.*archived: h-[0-9a-f]+.*\])$/;

/**
 * What the commands the agent ran (not reads or searches: scripts, tests, builds, git) printed that reads as a
 * result: the last meaningful line of each output and up to `maxKeyValueLines` lines that report a value
 * (`key: value` with a number) or count what happened (`13 files changed`), verbatim, in order, distinct. Errors are the ledger's business; this keeps the outcomes a reproduction
 * script or a test run printed (`Actual count: 2`, `Server running at http://localhost:3000/`).
 */
export function commandResultLines(
  messages: readonly IdentifiedMessage[],
  options: CommandResultLinesOptions = {},
): string[] {
  const { maxKeyValueLines = 3, maxLineChars = 200 } = options;
  const calls = new Map<string, ToolCallPart>();
  for (const message of messages) for (const call of toolCallsOf(message)) calls.set(call.toolCallId, call);
  const state: RecogniserState = {};
  const results: string[] = [];
  const add = (line: string) => {
    const capped = line.length > maxLineChars ? `${line.slice(0, maxLineChars)}…` : line;
    if (!results.includes(capped)) results.push(capped);
  };
  for (const message of messages) {
    if (message.role !== 'tool' || typeof message.content === 'string') continue;
    for (const part of message.content) {
      if (part.type !== 'tool-result') continue;
      const call = calls.get(part.toolCallId);
      if (call === undefined) continue;
      // Folding reads the same results round after round: what a result says is kept per part object.
      let lines = linesCache.get(part);
      if (lines === undefined) {
        const command = recogniseToolCall(call.toolName, call.input, state).command;
        lines =
          command === undefined ||
          command.kind === 'search' ||
          (command.readOnly && !gitStateCommand.test(command.text))
            ? []
            : messageText({ role: 'tool', content: [part] })
                // Split at \n alone: trimming drops the \r of a \r\n.
                .split('\n')
                .map((line) => line.trim())
                .filter((line) => line.length >= 6 && /[A-Za-z]/.test(line) && !wrapperLine.test(line));
        linesCache.set(part, lines);
      }
      let chosen = chosenCache.get(lines);
      if (chosen?.maxKeyValueLines !== maxKeyValueLines) {
        chosen = { maxKeyValueLines, lines: chooseResultLines(lines, maxKeyValueLines) };
        chosenCache.set(lines, chosen);
      }
      for (const line of chosen.lines) add(line);
    }
  }
  return results;
}

/** The value and tally lines (the first `maxKeyValueLines`), then the last line. */
function chooseResultLines(lines: readonly string[], maxKeyValueLines: number): string[] {
  const chosen: string[] = [];
  let keyValues = 0;
  for (const line of lines) {
    if (keyValues >= maxKeyValueLines) break;
    if ((keyValueLine.test(line) && /\d/.test(line)) || tallyLine.test(line)) {
      chosen.push(line);
      keyValues++;
    }
  }
  const last = lines.at(-1);
  if (last !== undefined) chosen.push(last);
  return chosen;
}

const linesCache = new WeakMap<object, string[]>();
/** What `chooseResultLines` chose from a result's lines, for the `maxKeyValueLines` it was given. */
const chosenCache = new WeakMap<readonly string[], { maxKeyValueLines: number; lines: string[] }>();
