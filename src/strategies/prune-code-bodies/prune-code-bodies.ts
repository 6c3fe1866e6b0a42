import { archiveHandle } from '../../archive/archive-store.js';
import { InvalidArgumentError } from '../../errors/index.js';
import { toolCallsOf } from '../../messages/content.js';
import type { IdentifiedMessage, JSONValue, Part, TextPart, ToolResultPart } from '../../messages/types.js';
import type { Strategy, StrategyAction, StrategyContext, StrategyResult } from '../strategy.js';
import { recentTurnsStart } from '../strategy-support.js';
import {
  type CodeLanguage,
  elisionMarker,
  elisionMarkerPattern,
  planElisions,
  pruneCode,
  renderElisions,
} from './prune-code.js';

export interface PruneCodeBodiesOptions {
  /** Code blocks and file reads shorter than this are left whole. @default 400 */
  minTokens?: number;
  /**
   * Messages of the last this many turns (a turn starts at a user message or at an assistant message after
   * tool results) are left whole.
   * @default 2
   */
  keepRecentTurns?: number;
  /** Function bodies of at most this many lines are kept. @default 4 */
  maxKeptBodyLines?: number;
}

const strategyName = 'prune-code-bodies';

interface Candidate {
  messageIndex: number;
  /** Index in the message's content array; -1 for string content. */
  partIndex: number;
  kind: 'tool-output' | 'text';
  text: string;
  /** The language of the whole text (a file read), or undefined to prune its fenced code blocks. */
  language: CodeLanguage | undefined;
}

/**
 * Long code in older messages keeps its signatures, docstrings and structure while function and method bodies
 * become `// … 14 lines elided [h-…]` markers (see `pruneCode`). Covers fenced TypeScript, JavaScript and
 * Python blocks in text and tool outputs, and file-read tool outputs whose path names such a file, line-number
 * prefixes (`cat -n`, `12→`, `12:`) kept. Preserved and pinned messages and the last `keepRecentTurns` turns are
 * untouched. Candidates are pruned largest first and pruning stops once the conversation fits the budget.
 */
export function pruneCodeBodies(options: PruneCodeBodiesOptions = {}): Strategy {
  const { minTokens = 400, keepRecentTurns = 2, maxKeptBodyLines = 4 } = options;
  if (!(Number.isFinite(minTokens) && minTokens >= 0))
    throw new InvalidArgumentError('minTokens', `must be a non-negative number, got ${minTokens}`);
  for (const [name, value] of [
    ['keepRecentTurns', keepRecentTurns],
    ['maxKeptBodyLines', maxKeptBodyLines],
  ] as const) {
    if (!(Number.isInteger(value) && value >= 0))
      throw new InvalidArgumentError(name, `must be a non-negative integer, got ${value}`);
  }
  return {
    name: strategyName,
    apply: (messages, context) =>
      applyPruneCodeBodies(messages, context, { minTokens, keepRecentTurns, maxKeptBodyLines }),
  };
}

function applyPruneCodeBodies(
  messages: readonly IdentifiedMessage[],
  context: StrategyContext,
  options: Required<PruneCodeBodiesOptions>,
): StrategyResult {
  const recentStart = recentTurnsStart(messages, options.keepRecentTurns);
  const candidates = collectCandidates(messages.slice(0, recentStart), context, options.minTokens);
  const unchanged: StrategyResult = { messages: [...messages], actions: [], warnings: [] };
  if (candidates.length === 0) return unchanged;
  // Largest first (by length: the token floor is checked only on what pruning would change).
  candidates.sort(
    (left, right) =>
      right.text.length - left.text.length ||
      left.messageIndex - right.messageIndex ||
      left.partIndex - right.partIndex,
  );
  let total = context.accountant.countTotal(messages);
  const output = [...messages];
  const actions: StrategyAction[] = [];
  for (const candidate of candidates) {
    if (total <= context.budgetTokens) break;
    const current = output[candidate.messageIndex] as IdentifiedMessage;
    const original = originalOf(current, candidate);
    const expected = archiveHandle(candidate.kind, original);
    let pruned = pruneText(candidate, options, expected);
    if (pruned.elidedLines === 0) continue;
    const handle = context.archive.put({
      kind: candidate.kind,
      content: original,
      messageIds: [current.id],
      strategy: strategyName,
    });
    if (handle !== expected) pruned = pruneText(candidate, options, handle);
    const replaced = replaceText(current, candidate, pruned.text);
    const tokensBefore = context.accountant.countMessage(current);
    const tokensAfter = context.accountant.countMessage(replaced);
    if (tokensAfter >= tokensBefore) continue;
    output[candidate.messageIndex] = replaced;
    total += tokensAfter - tokensBefore;
    actions.push({
      type: 'prune-code-bodies',
      strategy: strategyName,
      messageIds: [current.id],
      handle,
      tokensBefore,
      tokensAfter,
      description: `${pruned.elidedLines} lines of function bodies elided from ${candidate.kind === 'tool-output' ? 'a file read' : 'code blocks'}`,
    });
  }
  return { messages: output, actions, warnings: [] };
}

const fenceLanguages: Record<string, CodeLanguage> = {
  ts: 'typescript',
  tsx: 'typescript',
  mts: 'typescript',
  cts: 'typescript',
  typescript: 'typescript',
  js: 'javascript',
  jsx: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  javascript: 'javascript',
  node: 'javascript',
  py: 'python',
  pyi: 'python',
  python: 'python',
  python3: 'python',
};

const codePathPattern = /[\w./~-]*\.(tsx?|mts|cts|jsx?|mjs|cjs|pyi?)(?=$|[\s'"`):;,\]])/g;
const readToolPattern = /read|view|cat\b|open|show|get_?file/i;
/** Editor tools with sub-commands, such as OpenHands `str_replace_editor` with `command: 'view'`. */
const readSubcommandPattern = /^(?:view|read|open|cat|show)$/i;
const readCommandPattern = /^\s*(?:cat|head|tail|nl|sed\s+-n|less|more|bat)\b/;

/** The language of the file a read-like tool call reads, when its input names exactly one kind of code file. */
function readLanguage(toolName: string, input: unknown): CodeLanguage | undefined {
  const strings: string[] = [];
  const collect = (value: unknown, depth: number) => {
    if (typeof value === 'string') strings.push(value);
    else if (depth < 2 && value !== null && typeof value === 'object')
      for (const item of Object.values(value)) collect(item, depth + 1);
  };
  collect(input, 0);
  const readLike =
    readToolPattern.test(toolName) ||
    strings.some((text) => readCommandPattern.test(text) || readSubcommandPattern.test(text));
  if (!readLike) return undefined;
  const languages = new Set<CodeLanguage>();
  for (const text of strings)
    for (const match of text.matchAll(codePathPattern)) {
      const language = fenceLanguages[(match[1] as string).toLowerCase()];
      if (language !== undefined) languages.add(language);
    }
  return languages.size === 1 ? [...languages][0] : undefined;
}

function collectCandidates(
  messages: readonly IdentifiedMessage[],
  context: StrategyContext,
  minTokens: number,
): Candidate[] {
  const candidates: Candidate[] = [];
  const callInputs = new Map<string, { toolName: string; input: unknown }>();
  messages.forEach((message, messageIndex) => {
    for (const call of toolCallsOf(message)) callInputs.set(call.toolCallId, call);
    if (message.role === 'system') return;
    if (context.preservedIds.has(message.id) || message.metadata?.pinned === true) return;
    if (typeof message.content === 'string') {
      if (message.content.length >= minTokens)
        candidates.push({
          messageIndex,
          partIndex: -1,
          kind: 'text',
          text: message.content,
          language: undefined,
        });
      return;
    }
    (message.content as readonly Part[]).forEach((part, partIndex) => {
      if (part.type === 'text' && part.text.length >= minTokens) {
        candidates.push({ messageIndex, partIndex, kind: 'text', text: part.text, language: undefined });
      } else if (
        part.type === 'tool-result' &&
        part.output.type === 'text' &&
        part.output.value.length >= minTokens
      ) {
        const call = callInputs.get(part.toolCallId);
        candidates.push({
          messageIndex,
          partIndex,
          kind: 'tool-output',
          text: part.output.value,
          language: call === undefined ? undefined : readLanguage(call.toolName, call.input),
        });
      }
    });
  });
  // The exact token floor, on what is left after the cheap length filter.
  return candidates.filter((candidate) => context.accountant.countText(candidate.text) >= minTokens);
}

interface PrunedText {
  text: string;
  elidedLines: number;
}

function pruneText(
  candidate: Candidate,
  options: Required<PruneCodeBodiesOptions>,
  handle: string,
): PrunedText {
  const pruned =
    candidate.language === undefined
      ? pruneFencedBlocks(candidate.text, options, handle)
      : pruneFileRead(candidate.text, candidate.language, options.maxKeptBodyLines, handle);
  return pruned.text.length < candidate.text.length ? pruned : { text: candidate.text, elidedLines: 0 };
}

const fenceOpen = /^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)/;

/** Prunes each fenced block of a known language that is at least `minTokens` long (by length). */
function pruneFencedBlocks(
  text: string,
  options: Required<PruneCodeBodiesOptions>,
  handle: string,
): PrunedText {
  const lines = text.split('\n');
  const output: string[] = [];
  let elidedLines = 0;
  for (let line = 0; line < lines.length; line++) {
    const opening = fenceOpen.exec(lines[line] as string);
    if (opening === null) {
      output.push(lines[line] as string);
      continue;
    }
    const fence = opening[1] as string;
    let close = line + 1;
    while (close < lines.length) {
      const trimmed = (lines[close] as string).trim();
      if (trimmed.startsWith(fence) && /^(`+|~+)$/.test(trimmed) && trimmed[0] === fence[0]) break;
      close++;
    }
    if (close >= lines.length) {
      // An unclosed fence: the rest is left whole.
      for (; line < lines.length; line++) output.push(lines[line] as string);
      break;
    }
    const language = fenceLanguages[(opening[2] as string).toLowerCase()];
    const body = lines.slice(line + 1, close).join('\n');
    output.push(lines[line] as string);
    if (language !== undefined && body.length >= options.minTokens) {
      const pruned = pruneCode(body, language, { maxKeptBodyLines: options.maxKeptBodyLines, handle });
      output.push(pruned.code);
      elidedLines += pruned.elidedLines;
    } else if (close > line + 1) output.push(body);
    output.push(lines[close] as string);
    line = close;
  }
  return { text: output.join('\n'), elidedLines };
}

const numberedLine = /^(\s*\d+)(\t|→|:\s?)/;

/**
 * Prunes a file read. Line-number prefixes (`cat -n`, `12→`, `12:`) are recognised when every non-blank line
 * from the first numbered line to the last is numbered (or is an elision marker); text before and after that
 * region (a tool's header or footer) is kept whole.
 */
function pruneFileRead(
  text: string,
  language: CodeLanguage,
  maxKeptBodyLines: number,
  handle: string,
): PrunedText {
  const lines = text.split('\n');
  const marker = (count: number, indent: string) => elisionMarker(language, count, indent, handle);
  const region = numberedRegion(lines);
  if (region === undefined) {
    const pruned = pruneCode(text, language, { maxKeptBodyLines, handle });
    return { text: pruned.code, elidedLines: pruned.elidedLines };
  }
  const codeLines = lines
    .slice(region.start, region.end)
    .map((line) => line.slice(numberedLine.exec(line)?.[0].length ?? 0));
  const elisions = planElisions(codeLines.join('\n'), language, maxKeptBodyLines);
  const rendered = renderElisions(lines.slice(region.start, region.end), elisions, marker);
  const result = [...lines.slice(0, region.start), rendered.code, ...lines.slice(region.end)].join('\n');
  return { text: result, elidedLines: rendered.elidedLines };
}

function numberedRegion(lines: readonly string[]): { start: number; end: number } | undefined {
  let start = -1;
  let end = -1;
  let separator: string | undefined;
  let numbered = 0;
  for (let index = 0; index < lines.length; index++) {
    const match = numberedLine.exec(lines[index] as string);
    if (match === null) continue;
    const kind = (match[2] as string).trim();
    if (separator === undefined) separator = kind;
    else if (kind !== separator) return undefined;
    if (start < 0) start = index;
    end = index + 1;
    numbered++;
  }
  if (numbered < 3) return undefined;
  for (let index = start; index < end; index++) {
    const line = lines[index] as string;
    if (line.trim() !== '' && !numberedLine.test(line) && !elisionMarkerPattern.test(line)) return undefined;
  }
  // Markers written after the last numbered line still belong to the region.
  while (end < lines.length && elisionMarkerPattern.test(lines[end] as string)) end++;
  return { start, end };
}

function originalOf(message: IdentifiedMessage, candidate: Candidate): JSONValue {
  if (candidate.partIndex < 0) return message.content as string;
  const part = (message.content as readonly Part[])[candidate.partIndex] as TextPart | ToolResultPart;
  return part.type === 'text' ? part.text : (part.output as unknown as JSONValue);
}

function replaceText(message: IdentifiedMessage, candidate: Candidate, text: string): IdentifiedMessage {
  if (candidate.partIndex < 0) return { ...message, content: text } as IdentifiedMessage;
  const content = [...(message.content as readonly Part[])];
  const part = content[candidate.partIndex] as TextPart | ToolResultPart;
  content[candidate.partIndex] =
    part.type === 'text' ? { ...part, text } : { ...part, output: { type: 'text', value: text } };
  return { ...message, content } as IdentifiedMessage;
}
