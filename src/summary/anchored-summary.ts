import { buildLedger, codeSpan, type LedgerSnapshot } from '../ledger/index.js';
import { messageText, toolCallsOf } from '../messages/content.js';
import type { IdentifiedMessage, JSONValue } from '../messages/types.js';
import { createO200kCounter, type TokenCounter } from '../tokens/index.js';
import { commandResultLines } from './command-results.js';
import { countJoinedLines } from './count-joined-lines.js';

/**
 * The anchored summary: a structured, deterministic record of what a span of dropped messages held, with
 * forced sections, so facts (paths, errors, commands, decisions, the task) survive the span being dropped.
 * Items are verbatim sentences or ledger rows; `mergeAnchoredSummary` only ever extends a record.
 */
export interface AnchoredSummary {
  version: 1;
  /** Messages folded in so far, over every merge. */
  messageCount: number;
  /** The first user task, verbatim (capped). */
  intent?: string;
  constraints: string[];
  files: SummaryFile[];
  decisions: string[];
  errors: string[];
  failedApproaches: string[];
  commands: string[];
  /**
   * Lines the agent wrote into project files (edit replacements, new files), verbatim and distinct; what an
   * edit only moved or kept is left out.
   */
  changes: string[];
  /** Lines of scripts, commands and scratch files the agent wrote, verbatim and distinct. */
  scripts: string[];
  /** What the commands the agent ran printed as their outcome (last lines, `key: value` lines), verbatim. */
  results: string[];
  currentState: string[];
  tasks: SummaryTask[];
  nextSteps: string[];
  /** Verbatim lines of the dropped messages dense in identifiers (paths, URLs, hashes, code), chronological. */
  excerpts: string[];
  /** Archive handles that expand to the folded messages. */
  handles: string[];
}

export interface SummaryFile {
  path: string;
  status: string;
  /** What changed, as the ledger saw it (tools, line counts). */
  detail?: string;
}

export interface SummaryTask {
  text: string;
  done: boolean;
}

export interface BuildAnchoredSummaryOptions {
  /** The session's first user task (it is usually preserved, so not among the dropped messages). */
  task?: string;
  /** Archive handles of the dropped messages. @default [] */
  handles?: string[];
  /** Characters of the task kept in `intent`. @default 1500 */
  maxIntentChars?: number;
  /** Characters of verbatim excerpts kept (the densest lines in identifiers). @default 12000 */
  maxExcerptChars?: number;
  /**
   * The ledger of `droppedMessages`, when the caller already has it (folding builds it incrementally as the
   * dropped span grows). @default buildLedger(droppedMessages)
   */
  ledger?: LedgerSnapshot;
  /**
   * The record built (by this function) from the first of `droppedMessages`, as folding's previous round
   * did: what it worked out over those messages is carried on instead of worked out again. The result is
   * the same either way; a record can be carried on from once. @default none
   */
  previous?: AnchoredSummary;
}

export interface RenderAnchoredSummaryOptions {
  /** Cap on the rendered text's tokens; sections are cut by their share of it. @default no cap */
  maxTokens?: number;
  /** @default the exact o200k counter */
  counter?: TokenCounter;
  /**
   * Characters of the intent shown. Lower it when the task message itself is still in the conversation:
   * repeating it in full would spend the summary's room on text the model already sees. @default no cap
   */
  maxIntentChars?: number;
}

type ListSection =
  | 'constraints'
  | 'decisions'
  | 'errors'
  | 'failedApproaches'
  | 'commands'
  | 'changes'
  | 'scripts'
  | 'results'
  | 'currentState'
  | 'nextSteps'
  | 'excerpts';

/** Items kept per section in the record (the rendering caps further); the oldest are kept. */
const maxItemsPerSection = 300;
const maxSentenceChars = 400;

const decisionCue =
  /\b(decided|decide to|instead of|because|will use|I'll use|we'll use|chose|choose to|switch(?:ed)? to|the fix is|going with|opted)\b/i;
const nextStepCue = /\b(next|TODO|remaining|still need|then I|after that|left to)\b/;
const failureCue =
  /\b(didn't work|did not work|doesn't work|does not work|not working|still fail(?:s|ing)?|failed again|reverted|revert(?:ing)? the|wrong approach|no luck|doesn't help|did not help)\b/i;
const constraintCue =
  /\b(must|should|shouldn't|don't|do not|never|always|please|make sure|ensure|avoid|only|instead|need to|use|keep|without)\b/i;
const imperativeStart =
  /^(add|avoid|be|change|check|create|do|don't|ensure|fix|implement|keep|leave|make|move|never|only|please|remove|rename|run|stop|try|update|use|write|always|note|focus|skip)\b/i;

/** Sentences and lines of prose, split by regex (no Intl.Segmenter: quadratic on long strings in Node 20). */
export function summarySentences(text: string): string[] {
  const sentences: string[] = [];
  // Split at \n alone: trimming drops the \r of a \r\n.
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('```') || trimmed.startsWith('~~~')) continue;
    for (const piece of trimmed.split(/(?<=[.!?])\s+(?=[A-Z`"'([*-])/)) {
      const sentence = piece.trim();
      if (sentence.length < 8) continue;
      sentences.push(
        sentence.length > maxSentenceChars ? `${sentence.slice(0, maxSentenceChars)}…` : sentence,
      );
    }
  }
  return sentences;
}

/**
 * What the record reads from one message, worked out once: a fold builds the record of a growing span a few
 * times per compaction, over the same message objects (messages are never changed in place once they exist).
 */
interface MessageFacts {
  prose?: string;
  sentences?: string[];
  todos?: SummaryTask[];
  authored?: AuthoredLines[];
  /** Lines for excerpts (those with identifier-like tokens), with their density scores. */
  excerptCandidates?: Array<{ line: string; score: number }>;
}

const memoisedFacts = new WeakMap<IdentifiedMessage, MessageFacts>();

function factsOf(message: IdentifiedMessage): MessageFacts {
  let facts = memoisedFacts.get(message);
  if (facts === undefined) {
    facts = {};
    memoisedFacts.set(message, facts);
  }
  return facts;
}

function proseOf(message: IdentifiedMessage): string {
  const facts = factsOf(message);
  facts.prose ??= computeProse(message);
  return facts.prose;
}

function sentencesOf(message: IdentifiedMessage): readonly string[] {
  const facts = factsOf(message);
  facts.sentences ??= summarySentences(proseOf(message));
  return facts.sentences;
}

function todosOfMessage(message: IdentifiedMessage): readonly SummaryTask[] {
  const facts = factsOf(message);
  facts.todos ??= toolCallsOf(message).flatMap((call) => todosOf(call.input));
  return facts.todos;
}

function authoredOfMessage(message: IdentifiedMessage): readonly AuthoredLines[] {
  const facts = factsOf(message);
  facts.authored ??= toolCallsOf(message).map((call) => authoredLinesOf(call.input));
  return facts.authored;
}

/**
 * The message's lines that can be excerpts (those with identifier-like tokens: a line without any never is,
 * nor is a later copy of it), with their density scores.
 */
function excerptCandidatesOf(message: IdentifiedMessage): ReadonlyArray<{ line: string; score: number }> {
  const facts = factsOf(message);
  if (facts.excerptCandidates === undefined) {
    facts.excerptCandidates = [];
    for (const line of linesOfMessage(message)) {
      const matches = countFacts(line);
      if (matches > 0) facts.excerptCandidates.push({ line, score: matches / Math.sqrt(line.length + 20) });
    }
  }
  return facts.excerptCandidates;
}

function computeProse(message: IdentifiedMessage): string {
  if (typeof message.content === 'string') return message.content;
  return message.content
    .map((part) => (part.type === 'text' || part.type === 'reasoning' ? part.text : ''))
    .filter((text) => text !== '' && !stubLine.test(text.trim()))
    .join('\n');
}

function isSummaryOrStub(message: IdentifiedMessage): boolean {
  return message.metadata?.origin === 'stub' || message.metadata?.origin === 'summary';
}

function pushUnique(list: string[], item: string): void {
  if (!list.includes(item) && list.length < maxItemsPerSection) list.push(item);
}

function cap(text: string, maxChars: number): string {
  const trimmed = text.trim();
  return trimmed.length > maxChars ? `${trimmed.slice(0, maxChars)}…` : trimmed;
}

/** An empty record. */
export function emptyAnchoredSummary(): AnchoredSummary {
  return {
    version: 1,
    messageCount: 0,
    constraints: [],
    files: [],
    decisions: [],
    errors: [],
    failedApproaches: [],
    commands: [],
    changes: [],
    scripts: [],
    results: [],
    currentState: [],
    tasks: [],
    nextSteps: [],
    excerpts: [],
    handles: [],
  };
}

/**
 * Builds the record of `droppedMessages`: deterministic, every item verbatim from the messages (sentences,
 * ledger paths, commands and errors). The first user message among them is the intent unless `task` is given;
 * later user messages give constraints; assistant prose gives decisions, failed approaches and next steps;
 * TodoWrite-style tool calls and `- [ ]` checklists give tasks; the ledger gives files, commands and errors.
 */
export function buildAnchoredSummary(
  droppedMessages: readonly IdentifiedMessage[],
  options: BuildAnchoredSummaryOptions = {},
): AnchoredSummary {
  const { task, handles = [], maxIntentChars = 1500, maxExcerptChars = 12_000, ledger, previous } = options;
  const summary = emptyAnchoredSummary();
  summary.messageCount = droppedMessages.length;
  for (const handle of handles) pushUnique(summary.handles, handle);
  const originals = droppedMessages.filter((message) => !isSummaryOrStub(message));
  const users = originals.filter((message) => message.role === 'user' && proseOf(message).trim() !== '');
  const intent = task ?? (users[0] === undefined ? undefined : proseOf(users[0]));
  if (intent !== undefined && intent.trim() !== '') summary.intent = cap(intent, maxIntentChars);

  for (const message of users) {
    const text = proseOf(message);
    if (intent !== undefined && text.trim() === intent.trim()) continue;
    for (const sentence of sentencesOf(message))
      if (imperativeStart.test(sentence) || constraintCue.test(sentence))
        pushUnique(summary.constraints, sentence);
  }

  const assistants = originals.filter((message) => message.role === 'assistant');
  for (const message of assistants) {
    for (const sentence of sentencesOf(message)) {
      const checklist = /^[-*]\s*\[( |x|X)\]\s*(.+)$/.exec(sentence);
      if (checklist !== null) {
        addTask(summary.tasks, checklist[2]!.trim(), checklist[1] !== ' ');
        continue;
      }
      if (failureCue.test(sentence)) pushUnique(summary.failedApproaches, sentence);
      else if (decisionCue.test(sentence)) pushUnique(summary.decisions, sentence);
    }
    for (const todo of todosOfMessage(message)) addTask(summary.tasks, todo.text, todo.done);
  }
  // Next steps and current state come from the latest assistant prose of the span.
  const latest = assistants.slice(-3);
  for (const message of latest)
    for (const sentence of sentencesOf(message))
      if (nextStepCue.test(sentence)) pushUnique(summary.nextSteps, sentence);
  const last = [...assistants].reverse().find((message) => proseOf(message).trim() !== '');
  if (last !== undefined) {
    const sentences = sentencesOf(last);
    const lastSentence = sentences.at(-1);
    if (lastSentence !== undefined) pushUnique(summary.currentState, `Last step: ${lastSentence}`);
  }

  for (const message of assistants)
    for (const authored of authoredOfMessage(message))
      for (const line of authored.lines)
        pushUnique(authored.kind === 'edit' ? summary.changes : summary.scripts, line);
  for (const line of commandResultLines(originals)) pushUnique(summary.results, line);
  addLedger(summary, ledger ?? buildLedger(droppedMessages));
  const earlier = previous === undefined ? undefined : excerptStates.get(previous);
  if (earlier !== undefined) excerptStates.delete(previous!);
  const excerpts = excerptStateOf(originals, earlier);
  excerptStates.set(summary, excerpts);
  for (const excerpt of chooseExcerpts(excerpts.ranked, maxExcerptChars))
    pushUnique(summary.excerpts, excerpt);
  return summary;
}

/** Identifier-like tokens: paths, URLs, code spans, hashes, issue numbers, snake/camel case, numbers with units. */
const factAlternatives = [
  /https?:\/\/\S+/,
  /[\w.@-]*\/[\w.@/-]+/,
  /`[^`\n]+`/,
  /\b[0-9a-f]{7,40}\b/,
  /#\d+/,
  /\b\w+_\w+\b/,
  /\b[a-z]+[A-Z]\w*\b/,
  /\b[A-Z]{2,}\w*\b/,
  /\b\d+(?:\.\d+)?\s*(?:passed|failed|tests?|errors?|files?|ms|s)\b/,
  /\w+\(\)/,
  /\b\w+\.\w{1,5}\b/,
  /--?[a-z][\w-]+/,
].map((alternative) => alternative.source);
/** The alternatives, tried at one position. */
const factAt = new RegExp(factAlternatives.join('|'), 'y');
/**
 * The same, for a position after one where nothing matched: the two alternatives that scan a run before their
 * delimiter (`path/…`, `name()`) are tried only from the start of a run, because from inside one they match
 * exactly when they matched at the previous character, which was tried already and did not match.
 */
const factAfterMiss = new RegExp(
  factAlternatives
    .map((alternative, index) =>
      index === 1 ? `(?<![\\w.@-])${alternative}` : index === 9 ? `(?<!\\w)${alternative}` : alternative,
    )
    .join('|'),
  'y',
);
const wordCharacter = 1;
/** Characters some alternative starts with even inside a word (`https://`, and the punctuation ones). */
const startCharacter = 2;
const factCharacters = new Uint8Array(128);
for (let code = 0; code < 128; code++) {
  const character = String.fromCharCode(code);
  if (/\w/.test(character)) factCharacters[code]! |= wordCharacter;
  if (/[h.@/`#-]/.test(character)) factCharacters[code]! |= startCharacter;
}

/**
 * How many identifier-like tokens `text` holds: as many as a global pattern of the alternatives above matches,
 * found without trying each alternative at each character. After a position where nothing matched, only
 * positions where an alternative can start are tried: a word's first character (every other alternative
 * starts at a word boundary, or past a run, see `factAfterMiss`) and the characters in `startCharacter`; and
 * a plain word (see `plainWordEnd`) is passed over whole. Exported for its tests.
 */
export function countFacts(text: string): number {
  let count = 0;
  let position = 0;
  search: while (position < text.length) {
    factAt.lastIndex = position;
    if (factAt.test(text)) {
      count++;
      position = factAt.lastIndex;
      continue;
    }
    let previous = characterClass(text, position);
    for (let next = position + 1; next < text.length; next++) {
      const current = characterClass(text, next);
      const wordStart = (current & wordCharacter) !== 0 && (previous & wordCharacter) === 0;
      if (wordStart) {
        const end = plainWordEnd(text, next);
        if (end !== undefined) {
          next = end - 1;
          previous = wordCharacter;
          continue;
        }
      }
      if (wordStart || (current & startCharacter) !== 0) {
        factAfterMiss.lastIndex = next;
        if (factAfterMiss.test(text)) {
          count++;
          position = factAfterMiss.lastIndex;
          continue search;
        }
      }
      previous = current;
    }
    break;
  }
  return count;
}

function characterClass(text: string, index: number): number {
  const code = text.charCodeAt(index);
  return code < 128 ? factCharacters[code]! : 0;
}

/** Characters after a word that an alternative goes on with: `.` `@` `-` `/` (paths, names), `(` (calls), `:` (URLs). */
const continuingCharacters = new Set(
  ['.', '@', '-', '/', '(', ':'].map((character) => character.charCodeAt(0)),
);

/**
 * The end of the word at `start` when no alternative matches at any of its characters, else undefined: a word
 * of ASCII letters, lower case after the first (not camel case, not an acronym), no digit or `_`, not a hex
 * hash, and not followed by a character in `continuingCharacters`. Most prose words are plain.
 */
function plainWordEnd(text: string, start: number): number | undefined {
  let end = start;
  let hexDigitsOnly = true;
  for (; end < text.length; end++) {
    const code = text.charCodeAt(end);
    if (code >= 97 && code <= 122) {
      if (code > 102) hexDigitsOnly = false;
    } else if (end === start && code >= 65 && code <= 90) hexDigitsOnly = false;
    else if ((characterClass(text, end) & wordCharacter) !== 0) return undefined;
    else break;
  }
  if (hexDigitsOnly && end - start >= 7) return undefined;
  return end < text.length && continuingCharacters.has(text.charCodeAt(end)) ? undefined : end;
}

const stubLine = /^\[[^\]]*archived: h-[0-9a-f]+[^\]]*\]$/;

function linesOfMessage(message: IdentifiedMessage): string[] {
  const texts: string[] = [];
  if (typeof message.content === 'string') texts.push(message.content);
  else
    for (const part of message.content) {
      if (part.type === 'text' || part.type === 'reasoning') texts.push(part.text);
      else if (part.type === 'tool-call')
        texts.push(typeof part.input === 'string' ? part.input : jsonStrings(part.input).join('\n'));
      else if (part.type === 'tool-result') texts.push(messageText({ role: 'tool', content: [part] }));
    }
  const lines: string[] = [];
  // Split at \n alone: trimming drops the \r of a \r\n.
  for (const text of texts)
    for (const line of text.split('\n')) {
      const trimmed = line.trim();
      if (trimmed.length < 12 || stubLine.test(trimmed)) continue;
      lines.push(trimmed.length > 240 ? `${trimmed.slice(0, 240)}…` : trimmed);
    }
  return lines;
}

/** String values of a JSON value (tool-call arguments), raw so quotes and backslashes stay verbatim. */
function jsonStrings(value: unknown, strings: string[] = []): string[] {
  if (typeof value === 'string') strings.push(value);
  else if (Array.isArray(value)) for (const item of value) jsonStrings(item, strings);
  else if (typeof value === 'object' && value !== null)
    for (const item of Object.values(value)) jsonStrings(item, strings);
  return strings;
}

interface ExcerptCandidate {
  line: string;
  /** Order of first appearance. */
  position: number;
  score: number;
}

/** The excerpt candidates of some messages: each distinct line with identifier-like tokens, best first. */
interface ExcerptState {
  messages: readonly IdentifiedMessage[];
  seen: Set<string>;
  /** By score, highest first, ties in order of appearance. */
  ranked: ExcerptCandidate[];
}

/** What a record's excerpts were chosen from, for a record built as its continuation (`previous`). */
const excerptStates = new WeakMap<AnchoredSummary, ExcerptState>();

function byRank(a: ExcerptCandidate, b: ExcerptCandidate): number {
  return b.score - a.score || a.position - b.position;
}

/**
 * The excerpt candidates of `messages`, continuing `earlier` (which it takes over) when its messages are the
 * first of `messages`: the new lines are ranked alone and merged in, which orders them as ranking all would.
 */
function excerptStateOf(
  messages: readonly IdentifiedMessage[],
  earlier: ExcerptState | undefined,
): ExcerptState {
  const continues =
    earlier !== undefined &&
    earlier.messages.length <= messages.length &&
    earlier.messages.every((message, index) => messages[index] === message);
  const seen = continues ? earlier.seen : new Set<string>();
  const known = continues ? earlier.ranked : [];
  const added: ExcerptCandidate[] = [];
  for (let index = continues ? earlier.messages.length : 0; index < messages.length; index++)
    for (const { line, score } of excerptCandidatesOf(messages[index]!)) {
      if (seen.has(line)) continue;
      seen.add(line);
      added.push({ line, position: known.length + added.length, score });
    }
  added.sort(byRank);
  const ranked: ExcerptCandidate[] = [];
  let knownIndex = 0;
  let addedIndex = 0;
  while (knownIndex < known.length && addedIndex < added.length)
    ranked.push(
      byRank(known[knownIndex]!, added[addedIndex]!) < 0 ? known[knownIndex++]! : added[addedIndex++]!,
    );
  while (knownIndex < known.length) ranked.push(known[knownIndex++]!);
  while (addedIndex < added.length) ranked.push(added[addedIndex++]!);
  return { messages, seen, ranked };
}

/** The lines densest in identifier-like tokens, up to `maxChars`, in their original order. */
function chooseExcerpts(ranked: readonly ExcerptCandidate[], maxChars: number): string[] {
  const chosen: ExcerptCandidate[] = [];
  let used = 0;
  for (const candidate of ranked) {
    if (used + candidate.line.length > maxChars) continue;
    chosen.push(candidate);
    used += candidate.line.length;
  }
  return chosen.sort((a, b) => a.position - b.position).map((candidate) => candidate.line);
}

/** Input fields holding text an edit replaces (their lines are context, not something the agent wrote). */
const replacedTextKey = /^(?:old_?(?:string|str|text|content|code)|search|original(?:_?text)?)$/i;
/** Input fields naming where, not what: their values are in the files section already. */
const locationKey =
  /^(?:file_?path|path|paths|filename|file|target_?file|notebook_?path|cwd|directory|dir|url|glob|pattern|include|exclude)$/i;
const maxChangeChars = 200;

/** Where the lines of a tool call went: a project file (an edit, a new file) or a script, command or scratch file. */
export type AuthoredKind = 'edit' | 'script';

export interface AuthoredLines {
  kind: AuthoredKind;
  lines: string[];
}

/** Scratch locations: files written there are throwaway scripts, not the project's code. */
const scratchPath = /^(?:\/tmp\/|\/var\/tmp\/|\/private\/tmp\/|[A-Za-z]:\\(?:Windows\\)?Temp\\)/i;

/**
 * The lines a tool call wrote: string values of its input (edit replacements, file contents, scripts, heredoc
 * bodies, commands), minus the lines an edit replaced, so what remains is what the agent authored. Trivial lines
 * (brackets, blank, very short) are skipped. `kind` is `edit` when the call names a file outside scratch
 * locations and writes text into it, else `script`.
 */
export function authoredLinesOf(input: unknown): AuthoredLines {
  const written: string[] = [];
  const replaced = new Set<string>();
  let path: string | undefined;
  let hasReplacement = false;
  const walk = (value: unknown, key: string | undefined): void => {
    if (typeof value === 'string') {
      if (key !== undefined && locationKey.test(key)) {
        path ??= value;
        return;
      }
      const isReplaced = key !== undefined && replacedTextKey.test(key);
      if (isReplaced) hasReplacement = true;
      // Split at \n alone: trimming drops the \r of a \r\n.
      for (const raw of value.split('\n')) {
        const line = raw.trim();
        if (isReplaced) replaced.add(line);
        else written.push(line);
      }
      return;
    }
    if (Array.isArray(value)) for (const item of value) walk(item, key);
    else if (typeof value === 'object' && value !== null)
      for (const [field, item] of Object.entries(value)) walk(item, field);
  };
  walk(input, undefined);
  const lines: string[] = [];
  for (const line of written) {
    if (line.length < 6 || replaced.has(line) || !/[A-Za-z]{2}/.test(line)) continue;
    const capped = line.length > maxChangeChars ? `${line.slice(0, maxChangeChars)}…` : line;
    if (!lines.includes(capped)) lines.push(capped);
  }
  const projectFile = path !== undefined && !scratchPath.test(path) && (hasReplacement || written.length > 1);
  return { kind: projectFile ? 'edit' : 'script', lines };
}

const errorCue =
  /\b(?:error|exception|traceback|failed|failure|cannot|can't|could not|not found|undefined|denied|timed out|missing|invalid|refused|no such|does not exist|doesn't exist|not exported|fatal)\b/i;
const declarationCue =
  /^(?:export\s+|async\s+|public\s+|private\s+|static\s+|pub\s+|@)*(?:def|class|function|interface|type|enum|struct|fn|impl|const|let|var|module)\b/;
const commentCue = /^(?:#|\/\/|\/\*|\*|--)\s*[A-Za-z]/;
const lowValueCue =
  /^(?:import\b|from \S+ import\b|require\(|export \* from|[}\])]+[;,]?$|return;?$|else\b|pass$|break;?$|continue;?$)/;

/**
 * How much a summary item is worth per token, without context: identifier-like tokens, errors, declarations,
 * comments (the writer's intent), numbers, quoted messages and decisions count; imports and bare syntax do not.
 * Used to choose which items fit a section's cap.
 */
export function itemSalience(item: string): number {
  const text = item.replace(/^- /, '');
  let score = 1 + Math.min(8, countFacts(text));
  if (errorCue.test(text)) score += 3;
  if (declarationCue.test(text)) score += 3;
  if (commentCue.test(text)) score += 2;
  if (/\d/.test(text)) score += 1;
  if (/["'`][^"'`\n]{6,}["'`]/.test(text)) score += 1;
  if (decisionCue.test(text) || failureCue.test(text)) score += 2;
  if (lowValueCue.test(text)) score -= 2;
  return Math.max(0.1, score) / Math.sqrt(text.length / 4 + 2);
}

function todosOf(input: unknown): SummaryTask[] {
  if (typeof input !== 'object' || input === null) return [];
  const todos = (input as { todos?: unknown }).todos;
  if (!Array.isArray(todos)) return [];
  const tasks: SummaryTask[] = [];
  for (const todo of todos) {
    if (typeof todo !== 'object' || todo === null) continue;
    const { content, status } = todo as { content?: unknown; status?: unknown };
    if (typeof content === 'string' && content.trim() !== '')
      tasks.push({ text: cap(content, maxSentenceChars), done: status === 'completed' });
  }
  return tasks;
}

function addTask(tasks: SummaryTask[], text: string, done: boolean): void {
  const existing = tasks.find((task) => task.text === text);
  if (existing !== undefined) existing.done ||= done;
  else if (tasks.length < maxItemsPerSection) tasks.push({ text, done });
}

function addLedger(summary: AnchoredSummary, ledger: LedgerSnapshot): void {
  for (const file of ledger.files) {
    const changes = file.changes.map((change) => {
      const lines =
        change.lineCount !== undefined
          ? ` ${change.lineCount} lines`
          : change.linesAdded !== undefined || change.linesRemoved !== undefined
            ? ` +${change.linesAdded ?? 0}/-${change.linesRemoved ?? 0}`
            : '';
      return `${change.kind}${lines}${change.symbols?.length ? ` (${change.symbols.join(', ')})` : ''}${change.failed ? ' failed' : ''}`;
    });
    const detail =
      changes.length === 0
        ? undefined
        : changes.slice(0, 4).join('; ') + (changes.length > 4 ? `; +${changes.length - 4} more` : '');
    addFile(summary.files, {
      path: file.path,
      status: file.status,
      ...(detail === undefined ? {} : { detail }),
    });
  }
  for (const command of ledger.commands) {
    const status =
      command.status === 'failed'
        ? `failed${command.exitCode === undefined ? '' : ` (exit ${command.exitCode})`}`
        : command.status;
    const line = `${codeSpan(cap(command.command.split('\n')[0] ?? '', 200))} → ${status}${command.runs > 1 ? `, ${command.runs} runs` : ''}`;
    pushUnique(summary.commands, line);
    if (command.failures > 0 && command.status === 'ok')
      pushUnique(
        summary.errors,
        `${codeSpan(cap(command.command.split('\n')[0] ?? '', 200))} failed ${command.failures}× then passed`,
      );
  }
  for (const error of ledger.errors)
    pushUnique(
      summary.errors,
      `${codeSpan(error.message)} (from ${cap(error.source, 120)}${error.count > 1 ? `, ${error.count}×` : ''})`,
    );
  for (const test of ledger.tests) {
    const counts = [
      test.passed === undefined ? '' : `${test.passed} passed`,
      test.failed === undefined ? '' : `${test.failed} failed`,
    ].filter((piece) => piece !== '');
    const failing =
      test.failingTests.length === 0 ? '' : `; failing: ${test.failingTests.slice(0, 5).join(', ')}`;
    const words = test.summaryLines?.length ? `: ${test.summaryLines.map(codeSpan).join(' ')}` : '';
    pushUnique(
      summary.currentState,
      `${test.runner} ${test.status}${counts.length ? ` (${counts.join(', ')})` : ''}${words}${failing}`,
    );
  }
}

function addFile(files: SummaryFile[], file: SummaryFile): void {
  const existing = files.find((candidate) => candidate.path === file.path);
  if (existing === undefined) {
    if (files.length < maxItemsPerSection) files.push({ ...file });
    return;
  }
  // `created` stays created; otherwise a change (modified/deleted) wins over a read.
  if (existing.status !== 'created' && file.status !== 'read') existing.status = file.status;
  if (file.detail !== undefined && file.detail !== existing.detail)
    existing.detail =
      existing.detail === undefined ? file.detail : cap(`${existing.detail}; ${file.detail}`, 600);
}

const listSections: readonly ListSection[] = [
  'constraints',
  'decisions',
  'errors',
  'failedApproaches',
  'commands',
  'changes',
  'scripts',
  'results',
  'currentState',
  'nextSteps',
  'excerpts',
];

/**
 * Extends `existing` with `update`, never regenerating: every earlier item stays (in order, first), new items
 * are appended, exact repeats are dropped, the earlier intent wins, files merge by path, and a task marked done
 * stays done. Neither argument is changed.
 */
export function mergeAnchoredSummary(existing: AnchoredSummary, update: AnchoredSummary): AnchoredSummary {
  const merged: AnchoredSummary = structuredClone(existing);
  merged.messageCount = existing.messageCount + update.messageCount;
  if (merged.intent === undefined && update.intent !== undefined) merged.intent = update.intent;
  for (const section of listSections) for (const item of update[section]) pushUnique(merged[section], item);
  for (const file of update.files) addFile(merged.files, file);
  for (const task of update.tasks) addTask(merged.tasks, task.text, task.done);
  for (const handle of update.handles) pushUnique(merged.handles, handle);
  return merged;
}

/** Reads a record back from message metadata; undefined when it is not one. */
export function parseAnchoredSummary(value: JSONValue | undefined): AnchoredSummary | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  if (record.version !== 1 || typeof record.messageCount !== 'number') return undefined;
  const strings = (key: string) =>
    Array.isArray(record[key]) && (record[key] as unknown[]).every((item) => typeof item === 'string');
  // Records written before a section existed read it as empty.
  const present = [...listSections, 'handles'].filter((key) => record[key] !== undefined);
  if (!present.every(strings) || !['constraints', 'handles'].every((key) => present.includes(key)))
    return undefined;
  if (!Array.isArray(record.files) || !Array.isArray(record.tasks)) return undefined;
  if (record.intent !== undefined && typeof record.intent !== 'string') return undefined;
  const summary = structuredClone(value) as unknown as AnchoredSummary;
  for (const section of listSections) summary[section] ??= [];
  return summary;
}

/** The record as JSON for message metadata. */
export function anchoredSummaryToJson(summary: AnchoredSummary): JSONValue {
  // A record is plain data: copied as is, it is what the JSON text would parse back to, without the text.
  return jsonCopy(summary, 0) ?? (JSON.parse(JSON.stringify(summary)) as JSONValue);
}

/** Records nest three levels deep; deeper (or a cycle) goes through JSON, which reports a cycle. */
const maxCopyDepth = 32;

/**
 * `JSON.parse(JSON.stringify(value))` for plain data (strings, finite numbers, booleans, null, arrays and
 * plain objects; `undefined` members are left out of objects and become null in arrays, `-0` becomes 0);
 * undefined for anything JSON would treat specially (`toJSON`, class instances, non-finite numbers, bigints,
 * a `__proto__` key), which the caller sends through JSON instead.
 */
function jsonCopy(value: unknown, depth: number): JSONValue | undefined {
  if (typeof value === 'string' || typeof value === 'boolean' || value === null) return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value + 0 : undefined;
  if (typeof value !== 'object' || depth > maxCopyDepth) return undefined;
  const prototype = Object.getPrototypeOf(value);
  if (Array.isArray(value)) {
    if (prototype !== Array.prototype || 'toJSON' in value) return undefined;
    const copy: JSONValue[] = [];
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') copy.push(null);
      else {
        const itemCopy = jsonCopy(item, depth + 1);
        if (itemCopy === undefined) return undefined;
        copy.push(itemCopy);
      }
    }
    return copy;
  }
  if ((prototype !== Object.prototype && prototype !== null) || 'toJSON' in value) return undefined;
  const copy: { [key: string]: JSONValue } = {};
  for (const key of Object.keys(value)) {
    if (key === '__proto__') return undefined;
    const member: unknown = (value as Record<string, unknown>)[key];
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
    const memberCopy = jsonCopy(member, depth + 1);
    if (memberCopy === undefined) return undefined;
    copy[key] = memberCopy;
  }
  return copy;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const groups: T[][] = [];
  for (let index = 0; index < items.length; index += size) groups.push(items.slice(index, index + size));
  return groups;
}

/** Below this (a lone `}`, an import line), a line is not worth a summary's room. */
const minSalience = 0.15;

const wordPattern = /[A-Za-z_$][\w$]{2,}/g;

/**
 * How rare each line's words are among the section's lines, 0 (every word everywhere) to about 1 (words
 * found nowhere else): a specific line (`skipPermissions?: boolean`) says more than one of twenty variations on
 * the same names. An inverse document frequency, averaged over the line's distinct words.
 */
function raritiesOf(lines: readonly string[]): number[] {
  // Each line's distinct words, as numbers, are found once: they give the frequencies and the line's score.
  const wordNumbers = new Map<string, number>();
  const frequency: number[] = [];
  const lastLine: number[] = [];
  const wordsOfLines = lines.map((line, lineIndex) => {
    const distinct: number[] = [];
    for (const word of line.match(wordPattern) ?? []) {
      let number = wordNumbers.get(word);
      if (number === undefined) {
        number = frequency.length;
        wordNumbers.set(word, number);
        frequency.push(0);
        lastLine.push(-1);
      }
      if (lastLine[number] === lineIndex) continue;
      lastLine[number] = lineIndex;
      frequency[number]!++;
      distinct.push(number);
    }
    return distinct;
  });
  const scale = Math.log(lines.length + 1);
  // Each word's term once (the value every line that has it would compute), summed in the line's word order.
  const inverseFrequency = frequency.map((count) => Math.log((lines.length + 1) / count));
  return wordsOfLines.map((words) => {
    if (words.length === 0 || scale === 0) return 0;
    let sum = 0;
    for (const number of words) sum += inverseFrequency[number]!;
    return sum / words.length / scale;
  });
}

type LinePolicy = 'first' | 'latest' | 'salient';

interface RenderedSection {
  title: string;
  /** Share of `maxTokens`. */
  weight: number;
  lines: string[];
  /** Under a cap, which lines stay: the first (tasks, in their order), the latest (state), or the most salient. */
  keep: LinePolicy;
}

function sectionsOf(summary: AnchoredSummary, maxIntentChars: number): RenderedSection[] {
  const intent = summary.intent === undefined ? undefined : cap(summary.intent, maxIntentChars);
  const files = summary.files.map(
    (file) => `- ${codeSpan(file.path)} ${file.status}${file.detail === undefined ? '' : `: ${file.detail}`}`,
  );
  const bullets = (items: readonly string[]) => items.map((item) => `- ${item}`);
  const open = summary.tasks.filter((task) => !task.done).map((task) => `- [ ] ${task.text}`);
  const done = summary.tasks.filter((task) => task.done).map((task) => `- [x] ${task.text}`);
  return [
    {
      title: 'Session intent',
      weight: 0.12,
      lines: intent === undefined ? [] : [intent],
      keep: 'first',
    },
    { title: 'User constraints', weight: 0.08, lines: bullets(summary.constraints), keep: 'salient' },
    { title: 'Files', weight: 0.12, lines: files, keep: 'salient' },
    { title: 'Decisions', weight: 0.1, lines: bullets(summary.decisions), keep: 'salient' },
    { title: 'Errors → fixes', weight: 0.12, lines: bullets(summary.errors), keep: 'salient' },
    { title: 'Failed approaches', weight: 0.04, lines: bullets(summary.failedApproaches), keep: 'salient' },
    { title: 'Commands', weight: 0.08, lines: bullets(summary.commands), keep: 'salient' },
    { title: 'Code written (verbatim)', weight: 0.14, lines: bullets(summary.changes), keep: 'salient' },
    { title: 'Scripts and commands written', weight: 0.08, lines: bullets(summary.scripts), keep: 'salient' },
    { title: 'Current state', weight: 0.04, lines: bullets(summary.currentState), keep: 'first' },
    { title: 'Open tasks / blockers', weight: 0.05, lines: [...open, ...done], keep: 'first' },
    { title: 'Next steps', weight: 0.04, lines: bullets(summary.nextSteps), keep: 'first' },
    { title: 'Command results (verbatim)', weight: 0.16, lines: bullets(summary.results), keep: 'salient' },
    { title: 'Excerpts (verbatim)', weight: 0.1, lines: bullets(summary.excerpts), keep: 'salient' },
    {
      title: 'Archived',
      weight: 0.03,
      lines: chunks(summary.handles, 8).map((group) => group.join(', ')),
      keep: 'first',
    },
  ];
}

interface FitCandidate {
  line: string;
  index: number;
  score: number;
  /** The line with its numbers masked, for salient sections, worked out when first needed. */
  shape?: string;
}

/** The lines of a section kept under a cap, with their counts, and how many were left out. */
interface FittedLines {
  kept: string[];
  keptTokens: number[];
  left: number;
}

/**
 * The lines of one section that fit a cap, chosen by `policy` (salient: the highest `itemSalience` first, ties
 * earlier first) and shown in their original order; lines that do not fit are skipped and counted. The ranking
 * is worked out once and each cap's choice remembered: a fold renders the same record under several caps.
 * `lineTokens` are the lines' counts; each takes its newline too.
 */
function lineFitter(
  lines: readonly string[],
  lineTokens: readonly number[],
  policy: LinePolicy,
): (maxTokens: number) => FittedLines {
  let order: FitCandidate[] | undefined;
  const fitted = new Map<number, FittedLines>();
  const salient = policy === 'salient';
  const rank = (): FitCandidate[] => {
    // Rarity within each section: lines added to one section (an LLM's prose) never change what another shows.
    const rarities = salient ? raritiesOf(lines) : undefined;
    const ranked: FitCandidate[] = lines.map((line, index) => ({
      line,
      index,
      score: rarities === undefined ? 0 : memoisedSalience(line) * (0.5 + rarities[index]!),
    }));
    if (salient) ranked.sort((a, b) => b.score - a.score || a.index - b.index);
    if (policy === 'latest') ranked.reverse();
    return ranked;
  };
  return (maxTokens) => {
    const known = fitted.get(maxTokens);
    if (known !== undefined) return known;
    const chosen: FitCandidate[] = [];
    // Every line takes at least its newline: under a cap below one token nothing fits, whatever the ranking.
    if (maxTokens >= 1) {
      order ??= rank();
      // Salient lines that differ only in numbers (`settings1 = …`, `settings2 = …`) say the same thing once.
      const shapes = new Set<string>();
      let used = 0;
      for (const candidate of order) {
        // Nothing more fits (every line takes a token at least).
        if (maxTokens - used < 1) break;
        if (salient) {
          // Bare syntax and imports never fill the room left over: the archive has them. The ranking is by
          // score, so every later line is below the floor too.
          if (candidate.score < minSalience) break;
          candidate.shape ??= candidate.line.replace(/\d+/g, '#');
          if (shapes.has(candidate.shape)) continue;
        }
        const tokens = lineTokens[candidate.index]! + 1;
        if (used + tokens > maxTokens) continue;
        chosen.push(candidate);
        if (salient) shapes.add(candidate.shape!);
        used += tokens;
      }
      chosen.sort((a, b) => a.index - b.index);
    }
    const result = {
      kept: chosen.map((candidate) => candidate.line),
      keptTokens: chosen.map((candidate) => lineTokens[candidate.index]!),
      left: lines.length - chosen.length,
    };
    fitted.set(maxTokens, result);
    return result;
  };
}

const memoisedSaliences = new Map<string, number>();

/** `itemSalience`, remembered per line: the same summary lines are ranked again in every fold round. */
function memoisedSalience(line: string): number {
  let salience = memoisedSaliences.get(line);
  if (salience === undefined) {
    if (memoisedSaliences.size >= maxMemoisedLines) memoisedSaliences.clear();
    salience = itemSalience(line);
    memoisedSaliences.set(line, salience);
  }
  return salience;
}

let defaultCounter: TokenCounter | undefined;

const memoisedCounts = new WeakMap<TokenCounter, Map<string, number>>();
const maxMemoisedLines = 50_000;

/** `counter` with per-line counts remembered (summary lines recur across renders and folds). */
function memoisedCounter(counter: TokenCounter): TokenCounter {
  let memo = memoisedCounts.get(counter);
  if (memo === undefined) {
    memo = new Map();
    memoisedCounts.set(counter, memo);
  }
  const counts = memo;
  return {
    encodingName: counter.encodingName,
    count(text: string): number {
      if (text.length > 2000) return counter.count(text);
      let tokens = counts.get(text);
      if (tokens === undefined) {
        if (counts.size >= maxMemoisedLines) counts.clear();
        tokens = counter.count(text);
        counts.set(text, tokens);
      }
      return tokens;
    },
  };
}

/**
 * The rendered summary's token count without a cap, estimated from memoised line counts (within a few tokens
 * of the exact count): what the record would take if it had all the room it wants.
 */
export function anchoredSummaryTokens(
  summary: AnchoredSummary,
  options: Pick<RenderAnchoredSummaryOptions, 'counter' | 'maxIntentChars'> = {},
): number {
  return createAnchoredSummaryRenderer(summary, options).estimatedTokens;
}

function header(summary: AnchoredSummary): string {
  const archived =
    summary.handles.length === 0
      ? ''
      : ` — archived: ${summary.handles.slice(0, 3).join(', ')}${summary.handles.length > 3 ? ', …' : ''}`;
  return `[precis summary of ${summary.messageCount} earlier ${summary.messageCount === 1 ? 'message' : 'messages'}${archived}]`;
}

/**
 * Markdown under a `[precis summary of N earlier messages — archived: h-…]` header, one `##` section per
 * non-empty section. With `maxTokens`, each section gets its share (unused shares go to the sections that
 * need more) and lines that do not fit are left out with a `… (+N more in the archive)` note; the whole text
 * is shrunk further until it fits (only the header when even that is too much). Deterministic.
 */
export function renderAnchoredSummary(
  summary: AnchoredSummary,
  options: RenderAnchoredSummaryOptions = {},
): string {
  const { maxTokens, ...rest } = options;
  return createAnchoredSummaryRenderer(summary, rest).render(maxTokens);
}

interface BuiltText {
  text: string;
  /** The header's and each section's lines: `text` is their lines joined by newlines, blocks by blank lines. */
  blocks: string[][];
  /** The counts of those lines, where known. */
  blockTokens: Array<Array<number | undefined>>;
  tokens?: number;
}

export interface CreateAnchoredSummaryRendererOptions
  extends Omit<RenderAnchoredSummaryOptions, 'maxTokens'> {
  /**
   * A renderer of an earlier state of the record (the previous fold round's): the sections whose lines did
   * not change keep its rankings and counts instead of working them out again. @default none
   */
  previous?: AnchoredSummaryRenderer;
}

/** One section of a renderer, with what fitting its lines to caps has worked out. */
interface FittedSection {
  title: string;
  keep: LinePolicy;
  lines: readonly string[];
  lineTokens: readonly number[];
  fitter: (maxTokens: number) => FittedLines;
  /** The section's tokens uncapped: its lines' counts plus their newlines. */
  natural: number;
}

/** The sections of each renderer, for a later renderer given it as `previous`. */
const renderedSections = new WeakMap<
  AnchoredSummaryRenderer,
  { counter: TokenCounter; sections: readonly FittedSection[] }
>();

export interface AnchoredSummaryRenderer {
  /** `anchoredSummaryTokens` of the record under the same options. */
  readonly estimatedTokens: number;
  /** `renderAnchoredSummary` of the record under the same options and `maxTokens`. */
  render(maxTokens?: number): string;
}

/**
 * Renders one record under several caps (what folding does while it looks for the cap that fits): the
 * sections, their rankings, line counts and rendered texts are worked out once and shared by every cap. The
 * record must not change while the renderer is in use.
 */
export function createAnchoredSummaryRenderer(
  summary: AnchoredSummary,
  options: CreateAnchoredSummaryRendererOptions = {},
): AnchoredSummaryRenderer {
  const { maxIntentChars = Number.POSITIVE_INFINITY, previous } = options;
  defaultCounter ??= createO200kCounter();
  const baseCounter = options.counter ?? defaultCounter;
  const counter = memoisedCounter(baseCounter);
  const sections = sectionsOf(summary, maxIntentChars).filter((section) => section.lines.length > 0);
  const earlier = previous === undefined ? undefined : renderedSections.get(previous);
  const reusable = earlier?.counter === baseCounter ? earlier.sections : [];
  const fitted = sections.map((section): FittedSection => {
    const same = reusable.find(
      (candidate) =>
        candidate.title === section.title &&
        candidate.keep === section.keep &&
        candidate.lines.length === section.lines.length &&
        candidate.lines.every((line, index) => line === section.lines[index]),
    );
    if (same !== undefined) return same;
    // Line counts are memoised: folding renders the same lines many times.
    const lineTokens = section.lines.map((line) => counter.count(line));
    return {
      title: section.title,
      keep: section.keep,
      lines: section.lines,
      lineTokens,
      fitter: lineFitter(section.lines, lineTokens, section.keep),
      // The section's natural size.
      natural: lineTokens.reduce((sum, tokens) => sum + tokens + 1, 0),
    };
  });
  const headerText = header(summary);
  const headerTokens = counter.count(headerText);
  // The default counter is exact o200k: a text is counted from its lines' counts, which fitting has mostly.
  const countText = (entry: BuiltText) =>
    (options.counter === undefined
      ? countJoinedLines(entry.blocks, counter.count, entry.blockTokens)
      : undefined) ?? counter.count(entry.text);
  const built = new Map<string, BuiltText>();
  /** The text under `caps` (all of every section when undefined) and its exact count, each made once. */
  const build = (caps: readonly number[] | undefined) => {
    const key = caps === undefined ? 'all' : caps.join(',');
    let entry = built.get(key);
    if (entry === undefined) {
      const pieces = [headerText];
      // The text's lines, by block (the header, each section): what it is counted from.
      const blocks: string[][] = [[headerText]];
      const blockTokens: Array<Array<number | undefined>> = [[headerTokens]];
      fitted.forEach((section, index) => {
        const limit = caps?.[index];
        const { kept, keptTokens, left } =
          limit === undefined
            ? { kept: section.lines, keptTokens: section.lineTokens, left: 0 }
            : section.fitter(limit);
        if (kept.length === 0 && left > 0 && limit !== undefined && limit < 8) return;
        const more = left > 0 ? [`- … (+${left} more in the archive)`] : [];
        const lines = [...kept, ...more];
        pieces.push(`## ${section.title}\n${lines.join('\n')}`);
        blocks.push([`## ${section.title}`, ...(lines.length === 0 ? [''] : lines)]);
        blockTokens.push([undefined, ...keptTokens]);
      });
      entry = { text: pieces.join('\n\n'), blocks, blockTokens };
      built.set(key, entry);
    }
    return entry;
  };
  const tokensOf = (entry: BuiltText) => {
    entry.tokens ??= countText(entry);
    return entry.tokens;
  };
  const natural = fitted.map((section) => section.natural);
  // Sums of line counts stand in for the whole text's count (o200k merges little across lines); only a text
  // that could be returned is counted exactly.
  const estimate = headerTokens + natural.reduce((sum, tokens) => sum + tokens + 6, 0);
  const render = (maxTokens: number | undefined): string => {
    if (maxTokens === undefined) return build(undefined).text;
    if (estimate <= maxTokens) {
      const full = build(undefined);
      if (tokensOf(full) <= maxTokens) return full.text;
    }
    if (headerTokens >= maxTokens) return headerText;

    let scale = 1;
    for (let attempt = 0; attempt < 8; attempt++) {
      const available = Math.max(0, Math.floor((maxTokens - headerTokens - sections.length * 6) * scale));
      const totalWeight = sections.reduce((sum, section) => sum + section.weight, 0);
      const caps = sections.map((section) => Math.floor((available * section.weight) / totalWeight));
      const spare = caps.reduce((sum, limit, index) => sum + Math.max(0, limit - natural[index]!), 0);
      const hungryWeight = sections.reduce(
        (sum, section, index) => sum + (natural[index]! > caps[index]! ? section.weight : 0),
        0,
      );
      const finalCaps = caps.map((limit, index) => {
        if (natural[index]! <= limit) return natural[index]!;
        return limit + Math.floor((spare * sections[index]!.weight) / Math.max(hungryWeight, 1e-9));
      });
      const text = build(finalCaps);
      if (tokensOf(text) <= maxTokens) return text.text;
      scale *= 0.8;
    }
    return headerText;
  };
  const rendered = new Map<number | undefined, string>();
  const renderer: AnchoredSummaryRenderer = {
    estimatedTokens: estimate,
    render(maxTokens) {
      let text = rendered.get(maxTokens);
      if (text === undefined) {
        text = render(maxTokens);
        rendered.set(maxTokens, text);
      }
      return text;
    },
  };
  renderedSections.set(renderer, { counter: baseCounter, sections: fitted });
  return renderer;
}
