import type { AssistantContentPart, JSONValue, Message, MessageMetadata } from '../../messages/types.js';
import type {
  ImportContext,
  ImportResult,
  TranscriptImporter,
  TranscriptMetadata,
  TranscriptSample,
} from '../transcript-importer.js';
import {
  createFenceScanner,
  createLineFinder,
  type FenceOpener,
  fenceOpener,
  splitLines,
  trimBlankLines,
} from './fence-scanner.js';

/**
 * SpecStory markdown exports of Cursor (and Claude Code) agent chats: `_**User**_` / `_**Assistant**_` turns,
 * assistant turns cut into segments by `---` lines. Tool events carry no ids and are recognised by shape
 * (a `bash` fence and its output, a `diff` fence, `Read file:`, a `<details>` search table, `<tool-use>`
 * blocks of newer exports, a line Cursor writes for a tool that failed); they become tool calls with results
 * (failed ones with the line as their error). Everything else stays text, verbatim.
 *
 * Records are the file's sections: the preamble and every segment of every turn, numbered from 0.
 */

const origin = 'specstory';

/** The result of a tool event whose output the export leaves out (file reads, edits, background commands). */
export const specStoryNoOutput = '[no output in the SpecStory export]';
/** Follows a `Read file:` line: SpecStory does not export what the read returned. */
export const specStoryNoContents = '[file contents not in the SpecStory export]';

type TurnRole = 'user' | 'assistant';

interface BlockBase {
  /** 1-based line of the block's first line. */
  line: number;
  /** The block's text exactly as in the file. */
  raw: string;
}
interface HeaderBlock extends BlockBase {
  kind: 'header';
  role: TurnRole;
  /** What the parentheses hold: a timestamp, a model, `model X, mode Agent`. */
  detail: string | undefined;
}
interface SeparatorBlock extends BlockBase {
  kind: 'separator';
}
interface FenceBlock extends BlockBase {
  kind: 'fence';
  opener: FenceOpener;
  body: string;
}
interface ThinkBlock extends BlockBase {
  kind: 'think';
  text: string;
}
interface ToolUseBlock extends BlockBase {
  kind: 'tool-use';
  /** `data-tool-name` of the tag, when present. */
  toolName: string | undefined;
  /** Text between `<tool-use …>` and `</tool-use>`. */
  inner: string;
}
interface DetailsBlock extends BlockBase {
  kind: 'details';
  summary: string;
  /** Text of the block without the `<details>` and `<summary>` tags. */
  body: string;
}
interface LineBlock extends BlockBase {
  kind: 'line';
  /** Set when the line opens a block that never closes, so it is read as plain text. */
  unclosed?: 'code fence' | '<think>' | '<tool-use>' | '<details>';
}
type Block = HeaderBlock | SeparatorBlock | FenceBlock | ThinkBlock | ToolUseBlock | DetailsBlock | LineBlock;

const headerPattern = /^_\*\*(User|Assistant|Agent)(?: \((.*)\))?\*\*_[ \t]*$/;
const separatorPattern = /^---[ \t]*$/;
const terminalLanguages = new Set([
  'bash',
  'sh',
  'shell',
  'zsh',
  'fish',
  'console',
  'powershell',
  'ps1',
  'cmd',
]);
const outputLanguages = new Set(['', 'text', 'txt', 'output', 'console', 'plaintext']);

function parseHeader(line: string, lineNumber: number): HeaderBlock | undefined {
  const match = headerPattern.exec(line);
  if (match === null) return undefined;
  return {
    kind: 'header',
    role: match[1] === 'User' ? 'user' : 'assistant',
    detail: match[2],
    line: lineNumber,
    raw: line,
  };
}

const isBlank = (line: string) => line.trim() === '';

/**
 * Line indexes where a turn starts: a turn header right after a `---` line. A `<think>`, `<tool-use>` or
 * `<details>` block still open there is read as plain text instead of swallowing turns; a fence may span one
 * only when nothing inside it opens another fence (see `readBlocks`).
 */
function turnBoundaries(lines: readonly string[]): Uint8Array {
  const boundaries = new Uint8Array(lines.length);
  let previous = '';
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    if (isBlank(line)) continue;
    if (separatorPattern.test(previous) && headerPattern.test(line)) boundaries[index] = 1;
    previous = line;
  }
  return boundaries;
}

/** `counts[i]` = how many of the lines before `i` pass `test`. */
function prefixCounts(length: number, test: (index: number) => boolean): Int32Array {
  const counts = new Int32Array(length + 1);
  for (let index = 0; index < length; index++) counts[index + 1] = counts[index]! + (test(index) ? 1 : 0);
  return counts;
}

/** Index of the first boundary at or after each line (lines.length when none). */
function nextBoundaries(boundaries: Uint8Array): Int32Array {
  const next = new Int32Array(boundaries.length + 1);
  next[boundaries.length] = boundaries.length;
  for (let index = boundaries.length - 1; index >= 0; index--) {
    next[index] = boundaries[index] === 1 ? index : next[index + 1]!;
  }
  return next;
}

function detailsSummary(inner: string): { summary: string; body: string } {
  const match = /<summary>([\s\S]*?)<\/summary>/.exec(inner);
  if (match === null) return { summary: '', body: inner };
  return {
    summary: match[1]!.trim(),
    body: inner.slice(0, match.index) + inner.slice(match.index + match[0].length),
  };
}

/** Strips one wrapping `<details>` … `</details>` (and the tags alone on their lines). */
function unwrapDetails(text: string): string {
  return text.replace(/^\s*<details[^>]*>/, '').replace(/<\/details>\s*$/, '');
}

/** Reads the file into blocks: headers, separators, fences, `<think>`, `<tool-use>`, `<details>`, lines. */
function readBlocks(lines: readonly string[]): Block[] {
  const boundaries = turnBoundaries(lines);
  const nextBoundary = nextBoundaries(boundaries);
  const fences = createFenceScanner(lines);
  const boundaryCount = prefixCounts(lines.length, (index) => boundaries[index] === 1);
  const infoOpenerCount = prefixCounts(
    lines.length,
    (index) => (fenceOpener(lines[index]!)?.info ?? '') !== '',
  );
  // A fence that spans a turn start is a quoted transcript only if nothing inside opens a fence: otherwise
  // it is a model's unbalanced fence, closed by some later block's closing line.
  const spansTurns = (open: number, close: number) =>
    boundaryCount[close]! - boundaryCount[open]! > 0 &&
    infoOpenerCount[close]! - infoOpenerCount[open + 1]! > 0;
  const thinkClose = createLineFinder(lines, '</think>');
  const thinkOpen = createLineFinder(lines, '<think>');
  const toolUseClose = createLineFinder(lines, '</tool-use>');
  const toolUseOpen = createLineFinder(lines, '<tool-use');
  const blocks: Block[] = [];
  const slice = (from: number, to: number) => lines.slice(from, to + 1).join('\n');
  const pushLine = (text: string, index: number, unclosed?: LineBlock['unclosed']) => {
    blocks.push({
      kind: 'line',
      line: index + 1,
      raw: text,
      ...(unclosed === undefined ? {} : { unclosed }),
    });
  };
  // A failed `<details>` search from one opener stands for the later openers before where it stopped, so
  // a run of unclosed tags costs one scan.
  let detailsUnclosedUntil = -1;
  // A tag's close must come before the next opener of the same tag and before the next turn boundary.
  const closeOf = (
    index: number,
    open: (from: number) => number,
    close: (from: number) => number,
  ): number => {
    const closing = close(index);
    if (closing === -1 || closing >= nextBoundary[index + 1]!) return -1;
    const reopening = open(index + 1);
    return reopening !== -1 && reopening < closing ? -1 : closing;
  };

  for (let index = 0; index < lines.length; ) {
    const line = lines[index]!;
    const lineNumber = index + 1;
    let unclosed: LineBlock['unclosed'];
    if (separatorPattern.test(line)) {
      blocks.push({ kind: 'separator', line: lineNumber, raw: line });
      index++;
      continue;
    }
    const header = parseHeader(line, lineNumber);
    if (header !== undefined) {
      blocks.push(header);
      index++;
      continue;
    }
    const opener = fenceOpener(line);
    if (opener !== undefined) {
      const closing = fences.findClose(index, opener);
      if (closing !== -1 && !spansTurns(index, closing)) {
        blocks.push({
          kind: 'fence',
          opener,
          body: lines.slice(index + 1, closing).join('\n'),
          line: lineNumber,
          raw: slice(index, closing),
        });
        index = closing + 1;
        continue;
      }
      unclosed = 'code fence';
    }
    const trimmed = line.trimStart();
    if (trimmed.startsWith('<think>')) {
      const closing = closeOf(index, thinkOpen, thinkClose);
      if (closing !== -1) {
        const raw = slice(index, closing);
        const start = raw.indexOf('<think>') + '<think>'.length;
        const end = raw.indexOf('</think>', start);
        const inner = unwrapDetails(raw.slice(start, end).replace(/<summary>[^<]*<\/summary>/, ''));
        blocks.push({ kind: 'think', text: inner.trim(), line: lineNumber, raw: raw.slice(0, end + 8) });
        const trailing = raw.slice(end + '</think>'.length);
        if (!isBlank(trailing)) pushLine(trailing.trimStart(), closing);
        index = closing + 1;
        continue;
      }
      unclosed = '<think>';
    } else if (trimmed.startsWith('<tool-use')) {
      const closing = closeOf(index, toolUseOpen, toolUseClose);
      if (closing !== -1) {
        const raw = slice(index, closing);
        const tagEnd = raw.indexOf('>');
        const end = raw.lastIndexOf('</tool-use>');
        const tag = raw.slice(0, tagEnd + 1);
        const toolName = /data-tool-name="([^"]*)"/.exec(tag)?.[1];
        blocks.push({
          kind: 'tool-use',
          toolName: toolName === undefined || toolName === '' ? undefined : toolName,
          inner: raw.slice(tagEnd + 1, end),
          line: lineNumber,
          raw: raw.slice(0, end + '</tool-use>'.length),
        });
        const trailing = raw.slice(end + '</tool-use>'.length);
        if (!isBlank(trailing)) pushLine(trailing, closing);
        index = closing + 1;
        continue;
      }
      unclosed = '<tool-use>';
    } else if (trimmed.startsWith('<details')) {
      const limit = nextBoundary[index + 1]!;
      const closing = index < detailsUnclosedUntil ? -1 : detailsClose(lines, index, limit, fences);
      if (closing === -1) detailsUnclosedUntil = Math.max(detailsUnclosedUntil, limit);
      if (closing !== -1) {
        const raw = slice(index, closing);
        const inner = raw.slice(raw.indexOf('>') + 1, raw.lastIndexOf('</details>'));
        const { summary, body } = detailsSummary(inner);
        blocks.push({ kind: 'details', summary, body, line: lineNumber, raw });
        index = closing + 1;
        continue;
      }
      unclosed = '<details>';
    }
    pushLine(line, index, unclosed);
    index++;
  }
  return blocks;
}

/** The line closing a `<details>` opened at `start` (nested ones counted, fences skipped), or -1. */
function detailsClose(
  lines: readonly string[],
  start: number,
  limit: number,
  fences: ReturnType<typeof createFenceScanner>,
): number {
  let depth = 0;
  for (let index = start; index < limit; index++) {
    const line = lines[index]!;
    if (index > start) {
      const opener = fenceOpener(line);
      if (opener !== undefined) {
        const closing = fences.findClose(index, opener);
        if (closing !== -1 && closing < limit) {
          index = closing;
          continue;
        }
      }
    }
    depth += countOf(line, '<details') - countOf(line, '</details>');
    if (depth <= 0) return index;
  }
  return -1;
}

function countOf(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) count++;
  return count;
}

// ---------------------------------------------------------------------------------------------------------
// Tool events

interface ToolEvent {
  toolName: string;
  input: Record<string, JSONValue>;
  output: string;
  /** The tool reported a failure (the output is its error message). */
  failed?: boolean;
}

const stripTicks = (text: string) => text.trim().replace(/^`(.*)`$/, '$1');

/**
 * `{ [key]: path }`, or nothing where the export wrote `undefined` for the path (older SpecStory versions log
 * `Read file: undefined` when Cursor did not pass one on): a file of that name was never touched.
 */
const pathInput = (key: string, text: string): Record<string, JSONValue> => {
  const path = stripTicks(text);
  return path === 'undefined' ? {} : { [key]: path };
};

interface SummaryTool {
  pattern: RegExp;
  toolName: string;
  input: (match: RegExpExecArray) => Record<string, JSONValue>;
}

/** `<details>` summaries of searches, listings and edits, as Cursor's tool names and arguments. */
const summaryTools: readonly SummaryTool[] = [
  {
    pattern: /^Searched codebase "(.*)"/,
    toolName: 'codebase_search',
    input: (match) => ({ query: match[1]! }),
  },
  { pattern: /^Grep search for "(.*)"/, toolName: 'grep_search', input: (match) => ({ query: match[1]! }) },
  {
    pattern: /^Grep for "(.*?)"(?: in "(.*?)")?(?: •|$)/,
    toolName: 'grep',
    input: (match) => ({ query: match[1]!, ...(match[2] === undefined ? {} : { path: match[2] }) }),
  },
  {
    pattern: /^Listed current directory/,
    toolName: 'list_dir',
    input: () => ({ relative_workspace_path: '.' }),
  },
  {
    pattern: /^Listed directory (.+?)(?: •|,|$)/,
    toolName: 'list_dir',
    input: (match) => pathInput('relative_workspace_path', match[1]!),
  },
  { pattern: /^Listed directory\b/, toolName: 'list_dir', input: () => ({}) },
  { pattern: /^Searched web "(.*)"/, toolName: 'web_search', input: (match) => ({ search_term: match[1]! }) },
  { pattern: /^Searched files? "(.*)"/, toolName: 'file_search', input: (match) => ({ query: match[1]! }) },
  {
    pattern: /^Edit file: (.+)$/,
    toolName: 'edit_file',
    input: (match) => pathInput('target_file', match[1]!),
  },
  {
    pattern: /^Read file: (.+)$/,
    toolName: 'read_file',
    input: (match) => pathInput('target_file', match[1]!),
  },
  {
    pattern: /^Run command: (.+)$/,
    toolName: 'run_terminal_cmd',
    input: (match) => ({ command: match[1]! }),
  },
  { pattern: /^Read lints? for\b/, toolName: 'read_lints', input: () => ({}) },
  { pattern: /^Todo List\b/, toolName: 'todo_write', input: () => ({}) },
];

const toolUsePrefix = /^Tool use: \*\*[^*]*\*\*\s*(?:•\s*)?/;

function toolFromSummary(
  summary: string,
): { toolName: string; input: Record<string, JSONValue> } | undefined {
  const text = summary.replace(toolUsePrefix, '');
  for (const tool of summaryTools) {
    const match = tool.pattern.exec(text);
    if (match !== null) return { toolName: tool.toolName, input: tool.input(match) };
  }
  return undefined;
}

/**
 * Lines Cursor exports in place of a tool event that failed, alone in their segment: the tool and what the line
 * says of its argument. The line is the tool's error message.
 */
const failedToolLines: readonly SummaryTool[] = [
  {
    // Newer exports quote the path: `Could not find file '/repo/app.vue' in the workspace.`
    pattern: /^Could not find file (['"]?)(.+?)\1 in the workspace\.?$/,
    toolName: 'read_file',
    input: (match) => pathInput('target_file', match[2]!),
  },
  { pattern: /^Cannot edit files blocked by globalIgnore\b/, toolName: 'edit_file', input: () => ({}) },
  {
    pattern: /^Unable to write file '(.+?)'/,
    toolName: 'edit_file',
    input: (match) => pathInput('target_file', match[1]!),
  },
  // A search-and-replace edit whose old string did not match; the export does not say which file.
  {
    pattern:
      /^The (?:string to replace was not found in the file|model provided an ambiguous search string to replace)\.?$/,
    toolName: 'search_replace',
    input: () => ({}),
  },
  { pattern: /^Search failed: \S/, toolName: 'grep', input: () => ({}) },
];

const readFilePattern = /^Read file: (.+?)\s*$/;
const toolUseLinePattern = /^Tool use: \*\*([^*]+)\*\*\s*(.*)$/;

const orNoOutput = (text: string) => (isBlank(text) ? specStoryNoOutput : trimBlankLines(text));
const joinNonBlank = (texts: readonly string[]) =>
  texts
    .filter((text) => !isBlank(text))
    .map(trimBlankLines)
    .join('\n\n');
const isTerminalFence = (block: Block): block is FenceBlock =>
  block.kind === 'fence' && terminalLanguages.has(block.opener.info.toLowerCase());
const isOutputFence = (block: Block): block is FenceBlock =>
  block.kind === 'fence' && outputLanguages.has(block.opener.info.toLowerCase());
const isDiffFence = (block: Block): block is FenceBlock =>
  block.kind === 'fence' && block.opener.info.toLowerCase() === 'diff';
const rawOf = (blocks: readonly Block[]) => blocks.map((block) => block.raw).join('\n');

/**
 * The tool event a run of blocks records, `name` coming from a `Tool use: **name**` line or tag when there
 * is one. Undefined when the blocks do not have the shape of a tool event.
 */
function toolEventOf(blocks: readonly Block[], name: string | undefined): ToolEvent | undefined {
  const [first, ...rest] = blocks;
  if (first === undefined)
    return name === undefined ? undefined : { toolName: name, input: {}, output: specStoryNoOutput };
  if (first.kind === 'line' && rest.length === 0 && name === undefined) {
    const line = first.raw.trim();
    for (const tool of failedToolLines) {
      const match = tool.pattern.exec(line);
      if (match !== null)
        return { toolName: tool.toolName, input: tool.input(match), output: line, failed: true };
    }
  }
  if (first.kind === 'line') {
    const read = readFilePattern.exec(first.raw.trim());
    if (read !== null) {
      // The line is all the export says about the read; it stays as the result, marked as incomplete.
      const contents = rawOf(rest);
      return {
        toolName: name ?? 'read_file',
        input: pathInput('target_file', read[1]!),
        output: [first.raw.trim(), isBlank(contents) ? specStoryNoContents : trimBlankLines(contents)].join(
          '\n',
        ),
      };
    }
  }
  if (isTerminalFence(first)) {
    const [output, ...after] = rest;
    const outputText =
      output !== undefined && isOutputFence(output) ? [output.body, rawOf(after)].join('\n') : rawOf(rest);
    return {
      toolName: name ?? 'run_terminal_cmd',
      input: { command: first.body },
      output: orNoOutput(outputText),
    };
  }
  if (blocks.every(isDiffFence)) {
    return {
      toolName: name ?? 'edit_file',
      input: { diff: blocks.map((block) => (block as FenceBlock).body).join('\n') },
      output: specStoryNoOutput,
    };
  }
  if (first.kind === 'details') {
    const known = toolFromSummary(first.summary);
    if (known === undefined && name === undefined) return undefined;
    const toolName = name ?? known!.toolName;
    const input: Record<string, JSONValue> = { ...(known?.input ?? {}) };
    const body = [first.body, rawOf(rest)].join('\n');
    if (known?.toolName === 'edit_file') {
      input.diff = trimBlankLines(body);
      return { toolName, input, output: specStoryNoOutput };
    }
    if (known === undefined && first.summary !== '') input.summary = first.summary;
    return { toolName, input, output: orNoOutput(joinNonBlank([first.summary, body])) };
  }
  if (name === undefined) return undefined;
  return { toolName: name, input: {}, output: orNoOutput(rawOf(blocks)) };
}

/** The character references an HTML export writes: named ones for markup, numeric ones (`&#96;`) for the rest. */
const characterReference = /&(?:(lt|gt|amp|quot|apos)|#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6}));/g;
const namedCharacters: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
/** The same pattern without the global flag, for `test()` (a global one keeps its `lastIndex` between calls). */
const holdsCharacterReference = new RegExp(characterReference.source);

/** `text` with its character references decoded, in one pass (`&amp;lt;` is `&lt;`). */
function decodeCharacterReferences(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(characterReference, (reference, name, decimal, hex) => {
    if (name !== undefined) return namedCharacters[name as string]!;
    const code = decimal !== undefined ? Number(decimal) : Number.parseInt(hex as string, 16);
    return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff)
      ? String.fromCodePoint(code)
      : reference;
  });
}

/**
 * A `<tool-use>` body as the agent wrote it. The newer exports escape what a block's HTML holds (`&lt;`, `&amp;`,
 * a fence's backticks as `&#96;`), some versions only the summary: a body is decoded when it holds a reference
 * and no raw `<` or `>` (markup it escaped would be references), so code that spells `&amp;` stays as it is.
 */
function unescapedBody(body: string): string {
  if (!holdsCharacterReference.test(body)) return body;
  return /[<>]/.test(body.replace(/^[ \t]*<\/?details>[ \t]*$/gm, ''))
    ? body
    : decodeCharacterReferences(body);
}

/** A `<tool-use>` block of the newer exports: name from the tag, arguments from the summary and body. */
function toolEventOfToolUse(block: ToolUseBlock): ToolEvent {
  const details = detailsSummary(unwrapDetails(block.inner.trim()));
  // The summary is HTML: always escaped.
  const summary = decodeCharacterReferences(details.summary);
  const body = unescapedBody(details.body);
  const named = /^Tool use: \*\*([^*]+)\*\*/.exec(summary)?.[1]?.trim();
  const toolName = block.toolName ?? named ?? 'unknown_tool';
  const known = toolFromSummary(summary);
  const input: Record<string, JSONValue> = { ...(known?.input ?? {}) };
  const rest = summary.replace(toolUsePrefix, '');
  if (known === undefined && rest !== '') input.summary = rest;
  let output = body;
  // The command fence repeats the summary's command unescaped: it is the argument, the rest is the output.
  const command =
    /^\s*(`{3,})(?:bash|sh|shell|zsh|console|powershell)[ \t]*\n([\s\S]*?)\n\1[ \t]*(?:\n|$)/.exec(body);
  if (command !== null) {
    input.command = command[2]!;
    output = body.slice(command.index + command[0].length);
  }
  if (known?.toolName === 'edit_file') {
    input.diff = trimBlankLines(body);
    return { toolName, input, output: specStoryNoOutput };
  }
  output = output.replace(/^[ \t]*<\/?details>[ \t]*$/gm, '');
  // Output shown as one fence: its body is the output.
  const fenced = /^\s*(`{3,})[^`\n]*\n([\s\S]*?)\n\1[ \t]*\s*$/.exec(output);
  if (fenced !== null && !fenced[2]!.includes(fenced[1]!)) output = fenced[2]!;
  if (command !== null || known?.toolName === 'run_terminal_cmd')
    return { toolName, input, output: orNoOutput(output) };
  if (known?.toolName === 'read_file' && isBlank(output))
    return { toolName, input, output: `${rest}\n${specStoryNoContents}` };
  // The summary line (`Grep for "x" • 2 matches`) heads the output, as the export shows it.
  return { toolName, input, output: orNoOutput(joinNonBlank([rest, output])) };
}

// ---------------------------------------------------------------------------------------------------------
// Messages

interface Location {
  line: number;
  record: number;
}

interface MessageContext extends Location {
  timestamp?: string;
  model?: string;
}

function metadataOf(where: MessageContext): MessageMetadata {
  return {
    origin,
    line: where.line,
    record: where.record,
    ...(where.timestamp === undefined ? {} : { timestamp: where.timestamp }),
    ...(where.model === undefined ? {} : { model: where.model }),
  };
}

/** Collects messages; assistant parts wait until a tool call (or the end of the turn) closes the message. */
class MessageBuilder {
  readonly messages: Message[] = [];
  private parts: AssistantContentPart[] = [];
  private partsFrom: MessageContext | undefined;
  private callCount = 0;

  text(text: string, where: MessageContext): void {
    if (isBlank(text)) return;
    const last = this.parts.at(-1);
    if (last?.type === 'text') last.text = `${last.text}\n\n${text}`;
    else this.part({ type: 'text', text }, where);
  }

  reasoning(text: string, where: MessageContext): void {
    if (!isBlank(text)) this.part({ type: 'reasoning', text }, where);
  }

  tool(event: ToolEvent, where: MessageContext): void {
    const toolCallId = `specstory-call-${++this.callCount}`;
    this.part({ type: 'tool-call', toolCallId, toolName: event.toolName, input: event.input }, where);
    this.flush();
    this.messages.push({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId,
          toolName: event.toolName,
          output: { type: event.failed === true ? 'error-text' : 'text', value: event.output },
        },
      ],
      metadata: metadataOf({
        line: where.line,
        record: where.record,
        ...(where.timestamp === undefined ? {} : { timestamp: where.timestamp }),
      }),
    });
  }

  system(text: string, where: MessageContext): void {
    this.flush();
    this.messages.push({ role: 'system', content: text, metadata: { ...metadataOf(where), title: true } });
  }

  user(text: string, where: MessageContext): void {
    this.flush();
    this.messages.push({ role: 'user', content: text, metadata: metadataOf(where) });
  }

  flush(): void {
    if (this.parts.length === 0 || this.partsFrom === undefined) return;
    this.messages.push({ role: 'assistant', content: this.parts, metadata: metadataOf(this.partsFrom) });
    this.parts = [];
    this.partsFrom = undefined;
  }

  private part(part: AssistantContentPart, where: MessageContext): void {
    if (this.parts.length === 0) this.partsFrom = where;
    this.parts.push(part);
  }
}

/**
 * Text part of the raw turn text: consecutive text lines (and fences, details that are not tool events) are
 * kept verbatim, tool shapes become calls, `<think>` blocks reasoning.
 */
function readAssistantSegment(
  blocks: readonly Block[],
  builder: MessageBuilder,
  where: MessageContext,
): void {
  const content = blocks.filter((block) => !(block.kind === 'line' && isBlank(block.raw)));
  if (content.length === 0) return;
  const first = content[0]!;
  // The older exports give each tool event a segment of its own, so a whole-segment shape is a tool event.
  const named = first.kind === 'line' ? toolUseLinePattern.exec(first.raw.trim()) : null;
  const whole =
    named !== null
      ? toolEventOf(content.slice(1), named[1]!.trim())
      : content.every(isDiffFence) ||
          (isTerminalFence(first) &&
            (content.length === 1 || (content.length === 2 && isOutputFence(content[1]!))))
        ? toolEventOf(content, undefined)
        : content.length === 1
          ? toolEventOf(content, undefined)
          : undefined;
  if (whole !== undefined) {
    builder.tool(whole, where);
    return;
  }
  let text: string[] = [];
  let textLine = where.line;
  const flushText = () => {
    if (text.length > 0) builder.text(trimBlankLines(text.join('\n')), { ...where, line: textLine });
    text = [];
  };
  for (let index = 0; index < blocks.length; index++) {
    const block = blocks[index]!;
    const at = { ...where, line: block.line };
    if (block.kind === 'think') {
      flushText();
      builder.reasoning(block.text, at);
      continue;
    }
    if (block.kind === 'tool-use') {
      flushText();
      builder.tool(toolEventOfToolUse(block), at);
      continue;
    }
    if (block.kind === 'details' && toolFromSummary(block.summary) !== undefined) {
      flushText();
      builder.tool(toolEventOf([block], undefined)!, at);
      continue;
    }
    if (block.kind === 'line') {
      const trimmed = block.raw.trim();
      const toolLine = toolUseLinePattern.exec(trimmed);
      if (toolLine !== null) {
        // Everything after a `Tool use:` line in its segment belongs to that tool event.
        flushText();
        const rest = blocks.slice(index + 1).filter((item) => !(item.kind === 'line' && isBlank(item.raw)));
        builder.tool(toolEventOf(rest, toolLine[1]!.trim()) ?? fallbackEvent(toolLine[1]!.trim(), rest), at);
        return;
      }
      if (readFilePattern.test(trimmed)) {
        flushText();
        builder.tool(toolEventOf([block], undefined)!, at);
        continue;
      }
    }
    if (text.every(isBlank) && !isBlank(block.raw)) textLine = block.line;
    text.push(block.raw);
  }
  flushText();
}

function fallbackEvent(toolName: string, blocks: readonly Block[]): ToolEvent {
  return { toolName, input: {}, output: orNoOutput(rawOf(blocks)) };
}

// ---------------------------------------------------------------------------------------------------------
// Header metadata

const timestampPattern = /(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2})(:\d{2})?(Z)?/;

/** `2025-07-18 01:12Z` → `2025-07-18T01:12:00Z`; without `Z` the time is the exporter's local time. */
function isoTimestamp(text: string): string | undefined {
  const match = timestampPattern.exec(text);
  if (match === null) return undefined;
  return `${match[1]}T${match[2]}${match[3] ?? ':00'}${match[4] ?? ''}`;
}

function headerContext(header: HeaderBlock): { timestamp?: string; model?: string } {
  const detail = header.detail;
  if (detail === undefined) return {};
  const timestamp = isoTimestamp(detail);
  const modelMatch = /(?:^|,\s*)model ([^,)]+)/.exec(detail);
  let model = modelMatch?.[1]?.trim();
  if (model === undefined && header.role === 'assistant') {
    const rest = detail.replace(timestampPattern, '').trim();
    if (rest !== '' && !/\s/.test(rest)) model = rest;
  }
  return {
    ...(timestamp === undefined ? {} : { timestamp }),
    ...(model === undefined ? {} : { model }),
  };
}

interface Preamble {
  title?: string;
  /** The `# Title (timestamp)` line as written, and its 1-based line number. */
  heading?: { text: string; line: number };
  startedAt?: string;
  sessionId?: string;
  agent?: string;
  version?: string;
}

/** Reads the lines before the first turn: SpecStory's comments and the `# Title (timestamp)` line. */
function readPreamble(
  blocks: readonly Block[],
  context: ImportContext,
): { preamble: Preamble; clean: boolean } {
  const preamble: Preamble = {};
  const unknown: Block[] = [];
  for (const block of blocks) {
    const text = block.raw.trim();
    if (block.kind === 'line' && text === '') continue;
    if (block.kind === 'line' && /^<!--.*-->$/.test(text)) {
      const version = /Generated by SpecStory(?:, Markdown v([\w.-]+))?/.exec(text);
      if (version?.[1] !== undefined) preamble.version = version[1];
      const session = /^<!--\s*(.+?) Session ([\w-]+)/.exec(text);
      if (session !== null && version === null) {
        preamble.agent = session[1]!.trim();
        preamble.sessionId = session[2]!;
      }
      continue;
    }
    if (block.kind === 'line' && text.startsWith('# ') && preamble.title === undefined) {
      preamble.heading = { text, line: block.line };
      const heading = text.slice(2).trim();
      const stamps = /\(([^()]*)\)\s*$/.exec(heading);
      const stampText = stamps?.[1] ?? heading;
      // `(local | UTC)`: the UTC half is the one that says what instant it was.
      const parts = stampText.split('|').map((part) => part.trim());
      const started = isoTimestamp(parts.find((part) => part.endsWith('Z')) ?? parts[0] ?? '');
      if (started !== undefined) preamble.startedAt = started;
      const title = stamps === null ? heading : heading.slice(0, stamps.index).trim();
      if (title !== '' && isoTimestamp(title) === undefined) preamble.title = title;
      continue;
    }
    unknown.push(block);
  }
  if (unknown.length > 0) {
    const first = unknown[0]!;
    context.malformed(
      `text before the first turn header (${JSON.stringify(first.raw.slice(0, 40))}): skipped`,
      {
        line: first.line,
        record: 0,
      },
    );
  }
  return { preamble, clean: unknown.length === 0 };
}

// ---------------------------------------------------------------------------------------------------------
// The importer

/** Warns, naming line and section, about the blocks of a section that never closed. */
function warnUnclosed(blocks: readonly Block[], record: number, context: ImportContext): void {
  for (const block of blocks) {
    if (block.kind === 'line' && block.unclosed !== undefined) {
      context.warn(`${block.unclosed} never closed: read as plain text`, { line: block.line, record });
    }
  }
}

function parseSpecStory(text: string, context: ImportContext): ImportResult {
  const lines = splitLines(text);
  const blocks = readBlocks(lines);
  const builder = new MessageBuilder();
  let record = -1;
  let index = 0;

  // Preamble: one section, before the first turn header.
  const firstHeader = blocks.findIndex((block) => block.kind === 'header');
  const preambleBlocks = blocks.slice(0, firstHeader === -1 ? blocks.length : firstHeader);
  let preamble: Preamble = {};
  if (preambleBlocks.length > 0) {
    record++;
    context.read();
    warnUnclosed(preambleBlocks, record, context);
    const read = readPreamble(preambleBlocks, context);
    preamble = read.preamble;
    if (read.clean) context.use();
    // The title names the chat; kept as a leading system message so no text of the file is lost.
    if (preamble.heading !== undefined) {
      builder.system(preamble.heading.text, { line: preamble.heading.line, record });
    }
  }
  index = preambleBlocks.length;

  let model: string | undefined;
  let firstTimestamp: string | undefined;
  let lastTimestamp: string | undefined;
  const turns = { user: 0, assistant: 0 };

  while (index < blocks.length) {
    const header = blocks[index] as HeaderBlock;
    index++;
    const turnBlocks: Block[] = [];
    while (index < blocks.length && blocks[index]!.kind !== 'header') turnBlocks.push(blocks[index++]!);
    const segments = splitSegments(turnBlocks);
    const fromHeader = headerContext(header);
    if (fromHeader.timestamp !== undefined) {
      firstTimestamp ??= fromHeader.timestamp;
      lastTimestamp = fromHeader.timestamp;
    }
    if (fromHeader.model !== undefined) model ??= fromHeader.model;
    turns[header.role]++;

    if (header.role === 'user') {
      record++;
      const where: MessageContext = { line: header.line, record, ...fromHeader };
      // Sections beyond the first are `---` lines the user typed: their text stays in the prompt.
      context.read(Math.max(segments.length, 1));
      for (const segment of segments) warnUnclosed(segment, record + segments.indexOf(segment), context);
      record += Math.max(segments.length, 1) - 1;
      const prompt = trimBlankLines(
        segments
          .map(rawOf)
          .filter((raw) => !isBlank(raw))
          .join('\n\n---\n\n'),
      );
      if (isBlank(prompt)) {
        context.ignore('empty-turn', Math.max(segments.length, 1));
        continue;
      }
      context.use(Math.max(segments.length, 1));
      builder.user(prompt, where);
      continue;
    }

    if (segments.length === 0) {
      record++;
      context.read();
      context.ignore('empty-turn');
      continue;
    }
    for (const segment of segments) {
      record++;
      context.read();
      warnUnclosed(segment, record, context);
      const contentful = segment.filter((block) => !(block.kind === 'line' && isBlank(block.raw)));
      if (contentful.length === 0) {
        // Cursor exports tool calls it does not render (todo lists, some edits) as empty segments.
        context.ignore('empty-segment');
        continue;
      }
      context.use();
      const where: MessageContext = { ...fromHeader, line: contentful[0]!.line, record };
      readAssistantSegment(segment, builder, where);
    }
    builder.flush();
  }
  builder.flush();

  const startedAt = preamble.startedAt ?? firstTimestamp;
  const endedAt = lastTimestamp ?? startedAt;
  const extra: Record<string, JSONValue> = {
    userTurns: turns.user,
    assistantTurns: turns.assistant,
    ...(preamble.version === undefined ? {} : { specStoryVersion: preamble.version }),
    ...(preamble.agent === undefined ? {} : { agent: preamble.agent }),
  };
  const metadata: TranscriptMetadata = {
    format: 'specstory',
    ...(model === undefined ? {} : { model }),
    ...(preamble.sessionId === undefined ? {} : { sessionId: preamble.sessionId }),
    ...(startedAt === undefined ? {} : { startedAt }),
    ...(endedAt === undefined ? {} : { endedAt }),
    ...(preamble.title === undefined ? {} : { title: preamble.title }),
    extra,
  };
  return {
    conversation: { messages: builder.messages, ...(model === undefined ? {} : { model }) },
    metadata,
  };
}

/** A turn's blocks cut at `---` lines; the separator closing the turn leaves an empty last segment, dropped. */
function splitSegments(blocks: readonly Block[]): Block[][] {
  const segments: Block[][] = [[]];
  for (const block of blocks) {
    if (block.kind === 'separator') segments.push([]);
    else segments.at(-1)!.push(block);
  }
  while (segments.length > 0 && segments.at(-1)!.every((block) => isBlank(block.raw))) segments.pop();
  return segments;
}

const specStoryComment = /<!--\s*Generated by SpecStory/;
const userMarker = /^_\*\*User(?: \([^\n]*\))?\*\*_[ \t]*$/m;
const assistantMarker = /^_\*\*(?:Assistant|Agent)(?: \([^\n]*\))?\*\*_[ \t]*$/m;

export const specStoryImporter: TranscriptImporter = {
  format: 'specstory',
  description: 'SpecStory markdown export of a Cursor or Claude Code chat (.specstory/history/*.md)',
  detect(sample: TranscriptSample): string | undefined {
    const head = sample.head;
    const start = head.trimStart();
    if (start.startsWith('{') || start.startsWith('[')) return undefined;
    if (specStoryComment.test(head)) return 'has the "Generated by SpecStory" comment';
    if (/^# aider chat started at /m.test(head)) return undefined;
    if (userMarker.test(head) && assistantMarker.test(head))
      return 'has _**User**_ / _**Assistant**_ turn headers';
    return undefined;
  },
  parse: parseSpecStory,
};
