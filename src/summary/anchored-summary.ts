import { stringValues } from '../internal/json-strings.js';
import { closedFenceBodies, fencedBlocks, mapProse } from '../internal/markdown-fences.js';
import {
  buildLedger,
  type CommandStatus,
  codeSpan,
  commandLabel,
  createdFileKeys,
  errorSourceLabel,
  isSubAgentTool,
  type LedgerError,
  type LedgerSnapshot,
  ledgerFileKey,
  recogniseToolCall,
  runsCommand,
  stackFrameLine,
  unfinishedStatusWords,
  withoutTestRunHeaders,
} from '../ledger/index.js';
import {
  isDemonstration,
  isUserRequest,
  isWorkedExample,
  messageText,
  requestWithoutHarnessNotes,
  toolCallsOf,
  toolOutputText,
  toolResultsOf,
  typedRequest,
} from '../messages/content.js';
import type { IdentifiedMessage, JSONValue, ToolCallPart } from '../messages/types.js';
import { commandResultLines } from './command-results.js';
import { codeNamesOf, type Declaration, declarationsOf, definitionLine, namesAny } from './definitions.js';
import { countFacts } from './fact-count.js';

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
  /** Later user requests (whole when short) and the sentences of user and system messages that constrain. */
  constraints: string[];
  files: SummaryFile[];
  /**
   * Code locations the agent cited (`src/a.ts:32`, `src/a.ts:362-364`) in its prose and in what it wrote
   * through tools (an issue comment, a plan), verbatim, in the order first cited: where it found things.
   */
  locations: string[];
  /**
   * Declaration lines (`def`, `class`, `function`, exported constants) that the agent's reads printed and whose
   * names its prose writes as code, with where they are (`path:line`) when the read says: the definitions it
   * worked with.
   */
  definitions: string[];
  decisions: string[];
  errors: string[];
  failedApproaches: string[];
  commands: string[];
  /**
   * Lines the agent wrote into project files that were there before the session (edit replacements, rewrites),
   * verbatim and distinct; what an edit only moved or kept is left out. Records written before `createdCode`
   * existed hold new files' lines here too.
   */
  changes: string[];
  /** Lines of the project files the session created (not in scratch locations), verbatim and distinct. */
  createdCode: string[];
  /**
   * Lines edits took out of project files that were there before the session (an edit's old text, a diff's `-`
   * lines) and did not write back, verbatim and distinct: what the code said before, which the file no longer
   * shows. Lines the session itself wrote and later replaced are not among them.
   */
  replacedCode: string[];
  /**
   * Lines of scripts, commands and scratch files the agent wrote, and of the code blocks in its messages (a
   * change it proposed, a command for the user), verbatim and distinct.
   */
  scripts: string[];
  /** What the commands the agent ran printed as their outcome (last lines, `key: value` lines), verbatim. */
  results: string[];
  currentState: string[];
  tasks: SummaryTask[];
  nextSteps: string[];
  /**
   * Verbatim lines of the dropped messages dense in identifiers (paths, URLs, hashes, code), chronological; those
   * in `soughtExcerpts` are not here.
   */
  excerpts: string[];
  /**
   * The excerpts from tool outputs that hold a name the calling message wrote as code (the function it grepped
   * for, the type it opened a file to see): what the agent looked for and found, chronological.
   */
  soughtExcerpts: string[];
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
  /**
   * The record this one will be merged into (an earlier compaction's): the files it says the session created
   * are created ones here too, so code written into them later is not taken for edits of the project's files.
   * @default none
   */
  mergesInto?: AnchoredSummary;
}

type ListSection =
  | 'constraints'
  | 'decisions'
  | 'errors'
  | 'failedApproaches'
  | 'commands'
  | 'changes'
  | 'createdCode'
  | 'replacedCode'
  | 'scripts'
  | 'results'
  | 'currentState'
  | 'nextSteps'
  | 'excerpts'
  | 'soughtExcerpts'
  | 'locations'
  | 'definitions';

/**
 * Items kept per section in the record (the rendering caps further): the first half for good (how the session
 * began), the rest the latest, so a long-running agent's record still takes in what it does now.
 */
const maxItemsPerSection = 300;
const keptFirstItems = maxItemsPerSection / 2;

/** Makes room for one more item in a full section: the oldest of the latest items goes. */
function makeRoom(list: unknown[]): void {
  if (list.length >= maxItemsPerSection) list.splice(keptFirstItems, list.length - maxItemsPerSection + 1);
}

const maxSentenceChars = 400;

const decisionCue =
  /\b(decided|decide to|instead of|because|will use|I'll use|we'll use|chose|choose to|switch(?:ed)? to|the fix is|going with|opted)\b/i;
/**
 * A choice put as advice or as staying put ("I suggest we proceed with accepting the changes", "Option 1: Two
 * Separate Services (Recommended)", "So I will stick with `apply_fix_v2.py`"): a decision, but not a cue of
 * salience as `decisionCue` is. On the shared sessions and two held-out sets at 5/10/20%, one compaction and the
 * loop: 13 probes more, 3 fewer (2 at 5%, where a decision line took the room of code lines); counted as salient
 * too, 15 more and 9 fewer. `the problem is`, `rather than` and the like added only losses.
 */
const adviceCue = /\b(suggest|recommend(?:ed)?|stick with)\b/i;
/**
 * A diagnosis that only announces itself ("I think I found the issue."): what was found is in the sentences
 * after it, which the decision takes.
 */
const bareDiagnosis =
  /^[^.:]{0,40}\b(?:found|see|spotted|identified) the (?:issue|problem|bug|cause|culprit)[.!:]?$/i;
/** How many sentences after a bare diagnosis it takes (up to a sentence's length in all). */
const diagnosisSentences = 2;
const nextStepCue = /\b(next|TODO|remaining|still need|then I|after that|left to)\b/;
const failureCue =
  /\b(didn't work|did not work|doesn't work|does not work|not working|still fail(?:s|ing)?|failed again|reverted|revert(?:ing)? the|wrong approach|no luck|doesn't help|did not help)\b/i;
const constraintCue =
  /\b(must|should|shouldn't|don't|do not|never|always|please|make sure|ensure|avoid|only|instead|need to|use|keep|without)\b/i;
/** A markdown checklist item, `- [ ] …` or `- [x] …`. */
const checklistItem = /^[-*]\s*\[( |x|X|-)\]\s*(.+)$/;
/** A tool that keeps the agent's todo list (TodoWrite, Cursor's todo_write): its output may be the list. */
const todoTool = /todo/i;
const imperativeStart =
  /^(add|avoid|be|change|check|create|do|don't|ensure|fix|implement|keep|leave|make|move|never|only|please|remove|rename|run|stop|try|update|use|write|always|note|focus|skip)\b/i;

/** Sentences and lines of prose, split by regex (no Intl.Segmenter: quadratic on long strings in Node 20). */
export function summarySentences(text: string): string[] {
  const sentences: string[] = [];
  // Split at \n alone: trimming drops the \r of a \r\n.
  for (const line of withoutCodeBlocks(text).split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('```') || trimmed.startsWith('~~~')) continue;
    // Not after a numbered item's marker (`1. Check …`): the item is one sentence, its marker shows it is one.
    for (const piece of trimmed.split(/(?<=[.!?])(?<!^\d{1,3}\.)\s+(?=[A-Z`"'([*-])/)) {
      const sentence = piece.trim();
      if (sentence.length < 8) continue;
      sentences.push(
        sentence.length > maxSentenceChars ? `${sentence.slice(0, maxSentenceChars)}…` : sentence,
      );
    }
  }
  return sentences;
}

/** The marker of a sentence that opens a list item (`- `, `* `, `1. `). */
const listItem = /^(?:[-*+]|\d{1,3}[.)])\s+(?=\S)/;

/**
 * A sentence without the list marker of the line it came from (`- `, `* `, `1. `): the summary lists it under
 * its own bullet.
 */
function withoutListMarker(sentence: string): string {
  return sentence.replace(listItem, '');
}

/** The text with its closed code blocks taken out: their lines are code (`// Instead of:`), not sentences. */
function withoutCodeBlocks(text: string): string {
  const blocks = fencedBlocks(text).filter((block) => block.closed);
  if (blocks.length === 0) return text;
  let prose = '';
  let from = 0;
  for (const block of blocks) {
    prose += text.slice(from, block.start);
    from = block.end;
  }
  return prose + text.slice(from);
}

/**
 * What the record reads from one message, worked out once: a fold builds the record of a growing span a few
 * times per compaction, over the same message objects (messages are never changed in place once they exist).
 */
interface MessageFacts {
  prose?: string;
  /** The prose of the words the user typed (`typedRequest`): of a command, not its expansion. */
  typedProse?: string;
  sentences?: string[];
  todos?: SummaryTask[];
  authored?: AuthoredLines[];
  /** Lines of the code blocks in its prose. */
  proseCode?: string[];
  /** File paths its prose names in code spans. */
  mentionedPaths?: string[];
  /** Lines for excerpts (those with identifier-like tokens), with their density scores. */
  excerptCandidates?: Array<{ line: string; score: number }>;
  /** The sentences that read as constraints (of a user message). */
  constraints?: string[];
  /** What the sentences give, in their order: checklist tasks, failed approaches, decisions. */
  reasoning?: ReasoningItem[];
  /** The sentences that read as next steps. */
  nextSteps?: string[];
  /** The code locations it cites. */
  locations?: string[];
  /** Of a tool message: the declarations its results print. */
  declarations?: Declaration[];
  /** Of an assistant message: the names its prose writes as code. */
  codeNames?: Set<string>;
  /** Of an assistant message: the names its prose and calls write as code, for its results (`soughtNamesOf`). */
  soughtNames?: Set<string>;
}

type ReasoningItem =
  | { section: 'tasks'; text: string; done: boolean }
  | { section: 'failedApproaches' | 'decisions'; text: string };

const memoisedFacts = new WeakMap<IdentifiedMessage, MessageFacts>();

function factsOf(message: IdentifiedMessage): MessageFacts {
  let facts = memoisedFacts.get(message);
  if (facts === undefined) {
    facts = {};
    memoisedFacts.set(message, facts);
  }
  return facts;
}

/**
 * What a message says in prose (of a user message, its request: not the harness notes a repair merged before it
 * or among its parts, such as aider's `Add file to the chat?` between two requests).
 */
function proseOf(message: IdentifiedMessage): string {
  const facts = factsOf(message);
  facts.prose ??= computeProse(requestWithoutHarnessNotes(message));
  return facts.prose;
}

function typedProseOf(message: IdentifiedMessage): string {
  const facts = factsOf(message);
  if (facts.typedProse === undefined) {
    const typed = typedRequest(message);
    facts.typedProse = typed === message ? proseOf(message) : computeProse(typed);
  }
  return facts.typedProse;
}

function sentencesOf(message: IdentifiedMessage): readonly string[] {
  const facts = factsOf(message);
  facts.sentences ??= summarySentences(proseOf(message));
  return facts.sentences;
}

/** A closing question or offer to the user ("Would you like me to …?", "Let me know if …"): no step taken. */
const offerToUser =
  /^(?:[-*]\s+)?(?:(?:please )?let me know\b|if you(?:'d| would)? (?:like|want|need|prefer)\b|would you like\b|do you want\b|shall i\b|should i\b|feel free\b|(?:i )?hope (?:this|that|it) helps\b)|\?\s*$/i;

/** A sentence that asks. */
const questionEnd = /\?\s*$/;

/** A later request up to this long is one constraint item, verbatim; a longer one (a pasted log) gives its cue sentences. */
const maxWholeRequestChars = 1000;

/**
 * A later user message's items for the constraints: the request the user typed, whole, when it is short, and the
 * sentences that read as constraints (imperatives, must / never / only …), those of an expansion after it too.
 */
/**
 * A sentence that only points at what follows it ("Each response should include:", "If you need to run multiple
 * commands, either:"): alone, it asks nothing. The list or block after it gives its own sentences.
 */
const leadIn = /\b(?:include|includes|either|following|below|these|this|as follows)\s*:$/i;

function constraintsOf(message: IdentifiedMessage): readonly string[] {
  const facts = factsOf(message);
  if (facts.constraints === undefined) {
    const sentences = sentencesOf(message)
      .map(withoutListMarker)
      .filter(
        (sentence) =>
          // A frame of a pasted log: a word in its path (`use-error-handler.js`) is no request.
          (imperativeStart.test(sentence) || constraintCue.test(sentence)) &&
          !stackFrameLine.test(sentence) &&
          !leadIn.test(sentence),
      );
    // What the user typed, when short enough, stays whole: a changed requirement list or "let's go back to bash"
    // carries no constraint word, and is what the agent works to next.
    const typed = message.role === 'user' ? typedProseOf(message).trim() : '';
    facts.constraints =
      typed !== '' && typed.length <= maxWholeRequestChars
        ? [typed, ...sentences.filter((sentence) => !typed.includes(sentence))]
        : sentences;
  }
  return facts.constraints;
}

function reasoningOf(message: IdentifiedMessage): readonly ReasoningItem[] {
  const facts = factsOf(message);
  if (facts.reasoning === undefined) {
    facts.reasoning = [];
    const sentences = sentencesOf(message);
    for (let index = 0; index < sentences.length; index++) {
      const sentence = sentences[index]!;
      const checklist = checklistItem.exec(sentence);
      if (checklist !== null)
        facts.reasoning.push({
          section: 'tasks',
          text: checklist[2]!.trim(),
          done: isDoneMark(checklist[1]!),
        });
      // A question ("Why is it not working?", "… so `closed` is `None`?") is neither a decision nor an approach.
      else if (questionEnd.test(sentence)) continue;
      else if (failureCue.test(sentence))
        facts.reasoning.push({ section: 'failedApproaches', text: withoutListMarker(sentence) });
      else if (bareDiagnosis.test(sentence)) {
        const found = following(sentences, index, diagnosisSentences, () => true);
        index += found.length;
        facts.reasoning.push({
          section: 'decisions',
          text: [withoutListMarker(sentence), ...found].join(' '),
        });
      } else if (decisionCue.test(sentence) || adviceCue.test(sentence)) {
        // "… is still relevant because:" says why in the list that follows: the decision takes its items.
        const items = sentence.endsWith(':')
          ? following(sentences, index, Number.POSITIVE_INFINITY, (next) => listItem.test(next))
          : [];
        index += items.length;
        const text = withoutListMarker(sentence);
        facts.reasoning.push({
          section: 'decisions',
          text: items.length === 0 ? text : `${text} ${items.join('; ')}`,
        });
      }
    }
  }
  return facts.reasoning;
}

/**
 * Up to `count` sentences after `sentences[index]` that `accept` takes (stopping at the first it does not), without
 * their list markers, while the sentence and they stay within a sentence's length.
 */
function following(
  sentences: readonly string[],
  index: number,
  count: number,
  accept: (sentence: string) => boolean,
): string[] {
  const taken: string[] = [];
  let length = sentences[index]!.length;
  for (let next = index + 1; next < sentences.length && taken.length < count; next++) {
    if (!accept(sentences[next]!)) break;
    const item = withoutListMarker(sentences[next]!);
    if (length + item.length + 2 > maxSentenceChars) break;
    taken.push(item);
    length += item.length + 2;
  }
  return taken;
}

function nextStepsOf(message: IdentifiedMessage): readonly string[] {
  const facts = factsOf(message);
  facts.nextSteps ??= sentencesOf(message)
    .filter((sentence) => nextStepCue.test(sentence))
    .map(withoutListMarker);
  return facts.nextSteps;
}

/**
 * The todo items of a message: of its todo-list tool calls (TodoWrite's `todos`), and of the checklist a todo
 * tool printed (Cursor's `todo_write`, whose input a SpecStory export does not keep).
 */
function todosOfMessage(message: IdentifiedMessage): readonly SummaryTask[] {
  const facts = factsOf(message);
  facts.todos ??= [
    ...toolCallsOf(message).flatMap((call) => todosOf(call.input)),
    ...toolResultsOf(message)
      .filter((result) => todoTool.test(result.toolName))
      .flatMap((result) => checklistTasks(toolOutputText(result.output))),
  ];
  return facts.todos;
}

/** `- [x] done`, `- [ ] to do`, `- [-] in progress`: the items of a markdown checklist. */
function checklistTasks(text: string): SummaryTask[] {
  const tasks: SummaryTask[] = [];
  for (const line of text.split('\n')) {
    const item = checklistItem.exec(line.trim());
    if (item !== null)
      tasks.push({ text: capChars(item[2]!.trim(), maxSentenceChars), done: isDoneMark(item[1]!) });
  }
  return tasks;
}

function isDoneMark(mark: string): boolean {
  return mark === 'x' || mark === 'X';
}

function authoredOfMessage(message: IdentifiedMessage): readonly AuthoredLines[] {
  const facts = factsOf(message);
  // A todo list is the tasks section's: its items and statuses are not written code or scripts.
  facts.authored ??= toolCallsOf(message)
    .filter((call) => !isTodoList(call.input) && !onlyLooks(call))
    .map((call) => authoredLinesOf(call.input));
  return facts.authored;
}

/**
 * Whether a call only looks (Grep, read_file, a search tool): its arguments say what it looked for (`content`,
 * `files_with_matches`), which nobody wrote. What a shell or code tool runs is a script, whatever it does.
 */
function onlyLooks(call: ToolCallPart): boolean {
  if (runsCommand(call.toolName)) return false;
  const { command, files } = recogniseToolCall(call.toolName, call.input);
  if (command !== undefined) return command.kind === 'search' || command.kind === 'delegate';
  return files.length > 0 && files.every((file) => file.kind === 'read');
}

/**
 * Lines of the closed code blocks in an assistant's prose (its reasoning too): a change it proposed, a command
 * it gave the user, the code it points at. Its tool calls are `authoredOfMessage`'s.
 */
function proseCodeOf(message: IdentifiedMessage): readonly string[] {
  const facts = factsOf(message);
  facts.proseCode ??= keptLines(
    closedFenceBodies(proseOf(message)).flatMap((body) => body.split('\n').map((line) => line.trim())),
  );
  return facts.proseCode;
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

function isSubAgentReport(message: IdentifiedMessage): boolean {
  return (
    message.role === 'tool' &&
    typeof message.content !== 'string' &&
    message.content.some((part) => part.type === 'tool-result' && isSubAgentTool(part.toolName))
  );
}

function computeProse(message: IdentifiedMessage): string {
  const prose = (text: string) =>
    message.role === 'user' ? asTyped(withoutPrecisNote(text)) : withoutPrecisNote(text);
  if (typeof message.content === 'string') return prose(message.content);
  if (message.role === 'tool')
    return message.content
      .map((part) =>
        part.type === 'tool-result' && isSubAgentTool(part.toolName)
          ? messageText({ role: 'tool', content: [part] })
          : '',
      )
      .filter((text) => text !== '' && !stubLine.test(text.trim()))
      .join('\n');
  // A sub-agent's brief is the assistant's own prose, written for another agent: its plan, its findings.
  return message.content
    .map((part) =>
      part.type === 'text' || part.type === 'reasoning'
        ? prose(part.text)
        : part.type === 'tool-call' && isSubAgentTool(part.toolName)
          ? subAgentBrief(part.input)
          : '',
    )
    .filter((text) => text !== '' && !stubLine.test(text.trim()))
    .join('\n');
}

/** A slash command as Claude Code records it: its name, what it shows while it runs, and its arguments. */
const slashCommandRecord = /^\s*(?:<(command-name|command-message|command-args)>[^<]*<\/\1>\s*)+$/;

/**
 * A user's text as they typed it: a slash command's record (`<command-message>…</command-message>
 * <command-name>/fix-issue</command-name><command-args>365</command-args>`) is `/fix-issue 365`.
 */
function asTyped(text: string): string {
  if (!text.includes('<command-name>') || !slashCommandRecord.test(text)) return text;
  const name = /<command-name>([^<]*)<\/command-name>/.exec(text)![1]!.trim();
  const args = /<command-args>([^<]*)<\/command-args>/.exec(text)?.[1]?.trim() ?? '';
  return name === '' ? text : args === '' ? name : `${name} ${args}`;
}

/** What a sub-agent was asked (its `prompt`). */
function subAgentBrief(input: unknown): string {
  const prompt =
    typeof input === 'object' && input !== null ? (input as { prompt?: unknown }).prompt : undefined;
  return typeof prompt === 'string' ? prompt : '';
}

/** A note a strategy ended a compressed text with (`[precis: sentences … elided …; full text: h-…]`). */
const precisNote = /\n*\[precis: [^\n]*\bh-[0-9a-f]+\]\s*$/;

/** `text` without such a note: it says what precis did, not what the agent did. */
function withoutPrecisNote(text: string): string {
  return text.endsWith(']') ? text.replace(precisNote, '') : text;
}

function isSummaryOrStub(message: IdentifiedMessage): boolean {
  return message.metadata?.origin === 'stub' || message.metadata?.origin === 'summary';
}

function pushUnique(list: string[], item: string): void {
  if (list.includes(item)) return;
  makeRoom(list);
  list.push(item);
}

/**
 * A request not said already: a user who sends a request again (after an interruption, with a log pasted under
 * it) repeats it, and its sentence cut to the cap (ending in `…`) starts a request kept whole before. Only a cut
 * sentence is compared so: a short request ("yes") is its own, wherever else its words stand.
 */
function pushRequest(list: string[], item: string): void {
  if (item.endsWith('…')) {
    const stem = item.slice(0, -1);
    if (list.some((kept) => kept.startsWith(stem))) return;
  }
  pushUnique(list, item);
}

/** `text` trimmed, cut to `maxChars` characters with `…`. */
export function capChars(text: string, maxChars: number): string {
  const trimmed = text.trim();
  return trimmed.length > maxChars ? `${trimmed.slice(0, maxChars)}…` : trimmed;
}

/**
 * Where an error came from, on one line of 60 characters at most: a command's label (a heredoc's script would
 * spill the error's item over several lines).
 */
function sourceLine(source: string): string {
  return commandLabel(errorSourceLabel(source), 60);
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
    createdCode: [],
    replacedCode: [],
    scripts: [],
    results: [],
    currentState: [],
    tasks: [],
    nextSteps: [],
    excerpts: [],
    soughtExcerpts: [],
    locations: [],
    definitions: [],
    handles: [],
  };
}

/**
 * Builds the record of `droppedMessages`: deterministic, every item verbatim from the messages (sentences,
 * ledger paths, commands and errors). The first user message among them is the intent unless `task` is given;
 * later user messages (and system messages, which a span holds only past the system prompt) give constraints, a
 * short request whole;
 * assistant prose gives decisions, failed approaches and next steps; TodoWrite-style tool calls and `- [ ]`
 * checklists give tasks; the ledger gives files, commands and errors.
 */
export function buildAnchoredSummary(
  droppedMessages: readonly IdentifiedMessage[],
  options: BuildAnchoredSummaryOptions = {},
): AnchoredSummary {
  const {
    task,
    handles = [],
    maxIntentChars = 1500,
    maxExcerptChars = 12_000,
    ledger,
    previous,
    mergesInto,
  } = options;
  const summary = emptyAnchoredSummary();
  summary.messageCount = droppedMessages.length;
  for (const handle of handles) pushUnique(summary.handles, handle);
  // A demonstration shows how to work, not what this session did: nothing in it is the session's.
  const originals = droppedMessages.filter(
    (message) => !isSummaryOrStub(message) && !isDemonstration(message),
  );
  // A system message in a folded span (a harness's mid-run note) instructs like a user message does.
  // What the harness wrote in the user's place (a caveat, a local command's output) instructs nothing.
  const instructions = originals.filter(
    (message) => (isUserRequest(message) || message.role === 'system') && proseOf(message).trim() !== '',
  );
  const firstUser = instructions.find((message) => message.role === 'user');
  // What the user typed; a command's expansion after it instructs (its sentences can be constraints).
  const intent = task ?? (firstUser === undefined ? undefined : typedProseOf(firstUser));
  const shownIntent = intent === undefined ? undefined : withoutHiddenComments(intent);
  if (shownIntent !== undefined && shownIntent.trim() !== '')
    summary.intent = capChars(shownIntent, maxIntentChars);

  for (const message of instructions) {
    if (intent !== undefined && proseOf(message).trim() === intent.trim()) continue;
    const typed = intent !== undefined && typedProseOf(message).trim() === intent.trim();
    for (const sentence of constraintsOf(message))
      if (!(typed && intent.includes(sentence))) pushRequest(summary.constraints, sentence);
  }

  const assistants = originals.filter((message) => message.role === 'assistant');
  // A sub-agent's report is the assistant's own reasoning, done elsewhere: its decisions count the same.
  const reports = originals.filter(isSubAgentReport);
  // A todo tool's printed list is the agent's plan, as its TodoWrite call would be.
  for (const message of originals)
    if (message.role === 'tool')
      for (const todo of todosOfMessage(message)) addTask(summary.tasks, todo.text, todo.done);
  for (const message of [...assistants, ...reports]) {
    for (const location of locationsOf(message)) pushUnique(summary.locations, location);
    for (const item of reasoningOf(message))
      if (item.section === 'tasks') addTask(summary.tasks, item.text, item.done);
      else pushUnique(summary[item.section], item.text);
    // A report's todo lists are the tool messages' above.
    if (message.role === 'assistant')
      for (const todo of todosOfMessage(message)) addTask(summary.tasks, todo.text, todo.done);
  }
  // Next steps and current state come from the latest assistant prose of the span.
  const latest = assistants.slice(-3);
  for (const message of latest)
    for (const sentence of nextStepsOf(message)) pushUnique(summary.nextSteps, sentence);
  const last = [...assistants].reverse().find((message) => proseOf(message).trim() !== '');
  if (last !== undefined) {
    const sentences = sentencesOf(last);
    // The last sentence that says what was done, not one that offers the user more help.
    const lastSentence = sentences.findLast((sentence) => !offerToUser.test(sentence)) ?? sentences.at(-1);
    if (lastSentence !== undefined)
      pushUnique(summary.currentState, `Last step: ${withoutListMarker(lastSentence)}`);
  }

  const snapshot = ledger ?? buildLedger(droppedMessages);
  const created = createdFileKeys(snapshot);
  for (const file of mergesInto?.files ?? [])
    if (file.status === 'created' || file.status === 'created and deleted')
      created.add(ledgerFileKey(file.path));
  const editTargets = pathlessEditTargets(snapshot);
  for (const message of assistants)
    for (const named of authoredOfMessage(message)) {
      const target = named.path === undefined ? editTargets.get(message.id) : undefined;
      const authored: AuthoredLines =
        target !== undefined && toolCallsOf(message).length === 1
          ? {
              kind: 'edit',
              path: target,
              lines: named.lines.filter((line) => !loneWord.test(line) && !sweAgentEditLine.test(line)),
            }
          : named;
      const isCreated =
        authored.created === true ||
        (authored.path !== undefined && created.has(ledgerFileKey(authored.path)));
      const section =
        authored.kind === 'script' ? summary.scripts : isCreated ? summary.createdCode : summary.changes;
      for (const line of authored.lines) pushUnique(section, line);
      // What a project file said before the session: not the lines of a file it created, nor lines it wrote
      // itself (an earlier edit's, or a file's a diff that named none created).
      if (authored.kind === 'edit' && !isCreated)
        for (const line of authored.replaced ?? [])
          if (!summary.changes.includes(line) && !summary.createdCode.includes(line))
            pushUnique(summary.replacedCode, line);
    }
  for (const message of assistants)
    for (const line of proseCodeOf(message)) pushUnique(summary.scripts, line);
  for (const line of commandResultLines(originals)) pushUnique(summary.results, line);
  addLedger(summary, snapshot);
  addMentionedFiles(summary, assistants);
  for (const line of definitionsOf(originals, assistants)) pushUnique(summary.definitions, line);
  const earlier = previous === undefined ? undefined : excerptStates.get(previous);
  if (earlier !== undefined) excerptStates.delete(previous!);
  const excerpts = excerptStateOf(originals, earlier);
  excerptStates.set(summary, excerpts);
  for (const excerpt of chooseExcerpts(excerpts.ranked, maxExcerptChars))
    pushUnique(excerpt.sought ? summary.soughtExcerpts : summary.excerpts, excerpt.line);
  return summary;
}

const stubLine = /^\[[^\]]*archived: h-[0-9a-f]+[^\]]*\]$/;

/**
 * `path.ext:line`, `path.ext:first-last` or `path.ext:line:column`, not inside a URL or a longer path: a file
 * with an extension, so that `localhost:3000` and times are not locations.
 */
const locationPattern =
  /(?<![\w./@:-])(?:[\w.@-]+\/)*[\w@-][\w.@-]*\.[A-Za-z][A-Za-z0-9]{0,5}:\d+(?:-\d+|:\d+)?(?![\w:/-])/g;

/** The code locations a message cites in its text and in the text of its tool calls. */
function locationsOf(message: IdentifiedMessage): readonly string[] {
  const facts = factsOf(message);
  facts.locations ??= citedLocations(message);
  return facts.locations;
}

/**
 * The texts of a message: its text parts (and reasoning, with `withReasoning`), the string values of its tool
 * calls' inputs, and its tool results (a sub-agent's report among them).
 */
function textsOfMessage(message: IdentifiedMessage, withReasoning: boolean): string[] {
  if (typeof message.content === 'string') return [message.content];
  const texts: string[] = [];
  for (const part of message.content) {
    // A worked example (OpenHands') shows another task's steps: its lines and locations were never this session's.
    if (part.type === 'text') {
      if (!isWorkedExample(part.text)) texts.push(part.text);
    } else if (withReasoning && part.type === 'reasoning') texts.push(part.text);
    else if (part.type === 'tool-call')
      texts.push(...(typeof part.input === 'string' ? [part.input] : stringValues(part.input)));
    else if (part.type === 'tool-result') texts.push(messageText({ role: 'tool', content: [part] }));
  }
  return texts;
}

function citedLocations(message: IdentifiedMessage): string[] {
  const locations: string[] = [];
  // Most texts cite nothing: a colon followed by a digit comes before the pattern.
  for (const text of textsOfMessage(message, false))
    if (/:\d/.test(text)) for (const match of text.matchAll(locationPattern)) locations.push(match[0]);
  return locations;
}

/** A line that holds nothing but a missing value in table or list dress (SpecStory's `| \`undefined\` |`). */
const placeholderLine = /^[\s|`'"*_:,.()[\]-]*(?:undefined|null|None|nil|NaN)[\s|`'"*_:,.()[\]-]*$/;

/** A row of `ls -l`: a file's type and permissions, then its link count. */
const longListingRow = /^[-dlcbps][rwxsStT-]{9}[.+@]?\s+\d+\s/;
/** A bare name in a listing: no spaces, a trailing `/` (a folder, `ls -p`) or `*` (an executable, `ls -F`) at most. */
const listedName = /^[\w.@+~-]+[/*]?$/;

/**
 * A row of a directory listing: `ls`'s names in columns (`index.d.ts  index.js  package.json`), or an `ls -l`
 * row. Dense in names, so it outranks every other line as an excerpt: an `ls -R` of a repository with its
 * node_modules filled 9,000 of an excerpts' 12,000 characters. Which files the session touched is the Files
 * section's; two columns starting with a digit (`numpy  1.26.0`, pip's list) are a table, not a listing.
 */
function isListingRow(line: string): boolean {
  if (longListingRow.test(line)) return true;
  if (!/ {2}|\t/.test(line)) return false;
  const names = line.split(/\s{2,}|\t+/);
  return (
    names.length >= 2 &&
    names.every((name) => listedName.test(name)) &&
    (names.length >= 3 || !names.some((name) => /^\d/.test(name)))
  );
}

function linesOfMessage(message: IdentifiedMessage): string[] {
  const lines: string[] = [];
  // A test run's set-up header (platform, plugins, versions) is the same every run: not worth an excerpt.
  // Split at \n alone: trimming drops the \r of a \r\n.
  for (const text of textsOfMessage(message, true))
    for (const line of withoutTestRunHeaders(text).split('\n')) {
      const trimmed = line.trim();
      if (
        trimmed.length < 12 ||
        stubLine.test(trimmed) ||
        placeholderLine.test(trimmed) ||
        isListingRow(trimmed)
      )
        continue;
      lines.push(trimmed.length > 240 ? `${trimmed.slice(0, 240)}…` : trimmed);
    }
  return lines;
}

interface ExcerptCandidate {
  line: string;
  /** Order of first appearance. */
  position: number;
  score: number;
  /** A tool output's line naming what its call's message wrote as code (`soughtNamesOf`). */
  sought: boolean;
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
  for (let index = continues ? earlier.messages.length : 0; index < messages.length; index++) {
    const message = messages[index]!;
    const sought = soughtNamesOf(message, messages[index - 1]);
    for (const { line, score } of excerptCandidatesOf(message)) {
      if (seen.has(line)) continue;
      seen.add(line);
      const position = known.length + added.length;
      added.push({ line, position, score, sought: sought !== undefined && namesAny(line, sought) });
    }
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

/**
 * For a tool message, the names its call's message (`before`) wrote as code in its prose and its calls' inputs
 * (`grep -n get_count`, "the `Polygon` class"), four characters or more: what the call went to find.
 */
function soughtNamesOf(
  message: IdentifiedMessage,
  before: IdentifiedMessage | undefined,
): ReadonlySet<string> | undefined {
  if (message.role !== 'tool' || before?.role !== 'assistant') return undefined;
  const facts = factsOf(before);
  if (facts.soughtNames === undefined) {
    facts.soughtNames = new Set();
    const inputs = toolCallsOf(before).flatMap((call) =>
      typeof call.input === 'string' ? [call.input] : stringValues(call.input),
    );
    for (const names of [proseCodeNamesOf(before), codeNamesOf(inputs.join('\n'))])
      for (const name of names) if (name.length >= 4) facts.soughtNames.add(name);
  }
  return facts.soughtNames;
}

/** The names an assistant message's prose writes as code. */
function proseCodeNamesOf(message: IdentifiedMessage): ReadonlySet<string> {
  const facts = factsOf(message);
  facts.codeNames ??= codeNamesOf(proseOf(message));
  return facts.codeNames;
}

/** The lines densest in identifier-like tokens, up to `maxChars`, in their original order. */
function chooseExcerpts(ranked: readonly ExcerptCandidate[], maxChars: number): ExcerptCandidate[] {
  const chosen: ExcerptCandidate[] = [];
  let used = 0;
  for (const candidate of ranked) {
    if (used + candidate.line.length > maxChars) continue;
    chosen.push(candidate);
    used += candidate.line.length;
  }
  return chosen.sort((a, b) => a.position - b.position);
}

/** Input fields holding text an edit replaces (their lines are context, not something the agent wrote). */
const replacedTextKey = /^(?:old_?(?:string|str|text|content|code)|search|original(?:_?text)?)$/i;
/** Input fields holding a diff (Cursor's `edit_file` as SpecStory exports it, a unified diff, a patch). */
const diffKey = /^(?:diff|patch)$/i;
/** Input fields naming where, not what: their values are in the files section already. */
const locationKey =
  /^(?:file_?path|path|paths|filename|file|target_?file|notebook_?path|cwd|directory|dir|url|glob|pattern|include|exclude)$/i;
const maxChangeChars = 200;

/** Where the lines of a tool call went: a project file (an edit, a new file) or a script, command or scratch file. */
export type AuthoredKind = 'edit' | 'script';

export interface AuthoredLines {
  kind: AuthoredKind;
  lines: string[];
  /** Lines the call took out (an edit's old text, a diff's `-` lines) and did not write back; absent when none. */
  replaced?: string[];
  /** The file an edit wrote to, as the call named it. */
  path?: string;
  /** An edit that made its file (a diff of added lines only), where the call names no file to look it up by. */
  created?: boolean;
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
  const removedInDiff: string[] = [];
  let path: string | undefined;
  let hasReplacement = false;
  let hasDiff = false;
  let diffHadOldLines = false;
  const walk = (value: unknown, key: string | undefined): void => {
    if (typeof value === 'string') {
      if (key !== undefined && locationKey.test(key)) {
        path ??= value;
        return;
      }
      const isReplaced = key !== undefined && replacedTextKey.test(key);
      if (isReplaced) hasReplacement = true;
      const isDiff = key !== undefined && diffKey.test(key);
      // Split at \n alone: trimming drops the \r of a \r\n.
      for (const raw of value.split('\n')) {
        // A diff's context lines were there before, and its `-` lines are what it replaced (an edit's old text,
        // not written either, kept apart): its `+` lines, without the marker, are what it wrote (not `+++ b/x`).
        if (isDiff) {
          hasDiff = true;
          if (raw.startsWith('+++ ') || raw.startsWith('--- ')) continue;
          if (raw.startsWith('+')) written.push(raw.slice(1).trim());
          else if (raw.startsWith('-')) removedInDiff.push(raw.slice(1).trim());
          // A context line or a removed one that is not blank: the file was there before.
          if (!raw.startsWith('+') && raw.slice(1).trim() !== '') diffHadOldLines = true;
          continue;
        }
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
  if (typeof input === 'object' && input !== null && !Array.isArray(input)) {
    const fields = input as Record<string, unknown>;
    // A call's label beside what it runs (Claude Code's Bash `description`, a Task's beside its `prompt`) names
    // the step for the user; nobody wrote it into a file or a shell.
    const labelled = typeof fields.command === 'string' || typeof fields.prompt === 'string';
    for (const [field, value] of Object.entries(fields))
      if (!(labelled && field === 'description' && typeof value === 'string')) walk(value, field);
  } else walk(input, undefined);
  const lines = keptLines(written, replaced);
  // A project file: named, outside scratch locations, and written into (a replacement, or more than one line).
  // A diff that names no file (Cursor's `edit_file` as SpecStory exports it) is still an edit of one.
  const pathlessDiff = path === undefined && hasDiff && written.length > 0;
  if (
    !pathlessDiff &&
    (path === undefined || scratchPath.test(path) || !(hasReplacement || written.length > 1))
  )
    return { kind: 'script', lines };
  // A lone word in an edit is the editor's sub-command (`str_replace`, `create`) or a bare name, not code
  // written; in other calls it can be the point (a sub-agent's type).
  const removed = keptLines([...replaced, ...removedInDiff], new Set(written)).filter(
    (line) => !loneWord.test(line),
  );
  return {
    kind: 'edit',
    lines: lines.filter((line) => !loneWord.test(line)),
    ...(path === undefined ? {} : { path }),
    // Added lines only, no context and none removed: the diff made the file.
    ...(pathlessDiff && !diffHadOldLines ? { created: true } : {}),
    ...(removed.length === 0 ? {} : { replaced: removed }),
  };
}

const loneWord = /^[\w$.-]+$/;
/** The line that ends SWE-agent's `edit N:M` replacement: the command's syntax, not a line written. */
const terminatorLine = /^end_of_edit$/;

/** SWE-agent's `edit N:M` line that opens a replacement: the command's syntax, like `end_of_edit`. */
const sweAgentEditLine = /^edit \d+(?::\d+)?$/;

/**
 * The file each message edited through a call that named none (SWE-agent's shell `edit N:M` and its
 * function-calling `edit` and `insert`, which apply to the open file), as the ledger worked it out: by message id,
 * where the message changed one such file. A `sed -i` names its file in the command, so it is not among them.
 */
function pathlessEditTargets(snapshot: LedgerSnapshot): Map<string, string> {
  const targets = new Map<string, string | undefined>();
  for (const file of snapshot.files)
    for (const change of file.changes) {
      if (change.kind !== 'edit' || change.failed === true) continue;
      if (!(/^(?:edit|insert)$/.test(change.tool) || /^edit \d/.test(change.detail ?? ''))) continue;
      const known = targets.get(change.messageId);
      targets.set(change.messageId, known === undefined || known === file.path ? file.path : undefined);
    }
  const unique = new Map<string, string>();
  for (const [id, path] of targets) if (path !== undefined) unique.set(id, path);
  return unique;
}

/** Trimmed lines worth a summary line, capped and distinct: not trivial (brackets, blank, very short), not `replaced`. */
function keptLines(lines: readonly string[], replaced?: ReadonlySet<string>): string[] {
  const kept: string[] = [];
  for (const line of lines) {
    if (
      line.length < 6 ||
      replaced?.has(line) === true ||
      !/[A-Za-z]{2}/.test(line) ||
      terminatorLine.test(line)
    )
      continue;
    const capped = line.length > maxChangeChars ? `${line.slice(0, maxChangeChars)}…` : line;
    if (!kept.includes(capped)) kept.push(capped);
  }
  return kept;
}

const errorCue =
  /\b(?:error|exception|traceback|failed|failure|cannot|can't|could not|not found|undefined|denied|timed out|missing|invalid|refused|no such|does not exist|doesn't exist|not exported|fatal)\b/i;
const declarationCue =
  /^(?:export\s+|async\s+|public\s+|private\s+|static\s+|pub\s+|@)*(?:def|class|function|interface|type|enum|struct|fn|impl|const|let|var|module)\b/;
const commentCue = /^(?:#|\/\/|\/\*|\*|--)\s*[A-Za-z]/;
const lowValueCue =
  /^(?:import\b|from \S+ import\b|require\(|export \* from|[}\])]+[;,]?$|return;?$|else\b|pass$|break;?$|continue;?$|[\w$]+:\s*[{[(]$|[\w$.]+,$|@@ [^@]* @@$|\| (?:📄|📁) |(?:Parameters|Returns|Raises|Yields|Examples?|Notes|See Also|Attributes|Methods|References|Warnings)$|[-=~^]{3,}$)/u;

/**
 * The text without its HTML comments outside code (an issue template's `<!-- Please be sure to check out our
 * contributing guidelines … -->`): a rendered issue hides them, so they are no part of the task, and under the
 * intent's character cap they took the room of the task's own words (held-out astropy task: its first 600
 * characters, most of what a loop summary at 10% showed, were template comments). Runs of empty lines in the
 * prose close up to one; code is left as it is.
 */
function withoutHiddenComments(text: string): string {
  if (!text.includes('<!--')) return text;
  return mapProse(text, (prose) => withoutComments(prose).replace(blankLines, '\n\n'));
}

/**
 * Prose without its `<!-- … -->` comments, in one pass (an unclosed one stays, and so does the rest): a comment
 * that is all its lines hold goes with its line ending, so no empty line is left in its place.
 */
function withoutComments(prose: string): string {
  let kept = '';
  let at = 0;
  for (let open = prose.indexOf('<!--'); open !== -1; open = prose.indexOf('<!--', at)) {
    const close = prose.indexOf('-->', open + 4);
    if (close === -1) break;
    let start = open;
    let end = close + 3;
    const lineStart = prose.lastIndexOf('\n', open - 1) + 1;
    const newline = prose.indexOf('\n', end);
    const lineEnd = newline === -1 ? prose.length : newline;
    if (
      lineStart >= at &&
      /^[ \t]*$/.test(prose.slice(lineStart, open)) &&
      /^[ \t\r]*$/.test(prose.slice(end, lineEnd))
    ) {
      start = lineStart;
      end = newline === -1 ? prose.length : newline + 1;
    }
    kept += prose.slice(at, start);
    at = end;
  }
  return kept + prose.slice(at);
}

/** Two or more empty lines in prose (what a template leaves between the comments it had): one is as good. */
const blankLines = /\r?\n(?:[ \t]*\r?\n){2,}/g;

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

/** Whether a tool call's input is a todo list (TodoWrite's `todos`): tasks, not code or scripts. */
export function isTodoList(input: unknown): boolean {
  return typeof input === 'object' && input !== null && Array.isArray((input as { todos?: unknown }).todos);
}

function todosOf(input: unknown): SummaryTask[] {
  if (!isTodoList(input)) return [];
  const todos = (input as { todos: unknown[] }).todos;
  const tasks: SummaryTask[] = [];
  for (const todo of todos) {
    if (typeof todo !== 'object' || todo === null) continue;
    const { content, status } = todo as { content?: unknown; status?: unknown };
    if (typeof content === 'string' && content.trim() !== '')
      tasks.push({ text: capChars(content, maxSentenceChars), done: status === 'completed' });
  }
  return tasks;
}

function addTask(tasks: SummaryTask[], text: string, done: boolean): void {
  const existing = tasks.find((task) => task.text === text);
  if (existing !== undefined) existing.done ||= done;
  else {
    makeRoom(tasks);
    tasks.push({ text, done });
  }
}

/**
 * Files the agent named in its prose but no tool call of the span touched (Cursor's exports leave an edit's path
 * out, and say it in the prose: "create `src/commands/git/branch.ts`"), after the ledger's, as `mentioned`.
 */
function addMentionedFiles(summary: AnchoredSummary, assistants: readonly IdentifiedMessage[]): void {
  for (const message of assistants)
    for (const path of mentionedPathsOf(message)) {
      // The same file named from another folder: an absolute path and a relative one it ends with (SWE-agent
      // prints `/pydicom__pydicom/pydicom/x.py` for the `pydicom/x.py` it opened).
      const key = ledgerFileKey(path);
      const known = summary.files.some((file) => {
        const fileKey = ledgerFileKey(file.path);
        return (
          fileKey === key ||
          fileKey.endsWith(key.startsWith('/') ? key : `/${key}`) ||
          (key.startsWith('/') && !fileKey.startsWith('/') && key.endsWith(`/${fileKey}`))
        );
      });
      if (!known) addFile(summary.files, { path, status: 'mentioned' });
    }
}

/**
 * The definitions the tool results of `messages` print whose names the prose of `assistants` writes as code, as
 * summary lines, each declaration once (with its location when any of its printings had one), first seen first.
 */
function definitionsOf(
  messages: readonly IdentifiedMessage[],
  assistants: readonly IdentifiedMessage[],
): string[] {
  const named = new Set<string>();
  for (const message of assistants) for (const name of proseCodeNamesOf(message)) named.add(name);
  if (named.size === 0) return [];
  let calls: Map<string, ToolCallPart> | undefined;
  const byLine = new Map<string, Declaration>();
  for (const message of messages) {
    if (message.role !== 'tool' || typeof message.content === 'string') continue;
    const facts = factsOf(message);
    if (facts.declarations === undefined) {
      calls ??= new Map(
        messages.flatMap((candidate) =>
          candidate.role === 'assistant' ? toolCallsOf(candidate).map((call) => [call.toolCallId, call]) : [],
        ),
      );
      facts.declarations = [];
      for (const part of message.content) {
        if (part.type !== 'tool-result') continue;
        const output = toolOutputText(part.output);
        if (output === '') continue;
        const call = calls.get(part.toolCallId);
        const reads =
          call === undefined
            ? []
            : recogniseToolCall(call.toolName, call.input).files.filter((file) => file.kind === 'read');
        facts.declarations.push(...declarationsOf(output, reads.length === 1 ? reads[0]!.path : undefined));
      }
    }
    for (const found of facts.declarations) {
      if (!named.has(found.name)) continue;
      const known = byLine.get(found.line);
      if (known === undefined || (known.location === undefined && found.location !== undefined))
        byLine.set(found.line, found);
    }
  }
  return [...byLine.values()].map(definitionLine);
}

/** A file path in a code span: a name with an extension, in folders or not (`src/a.ts`, `rules.mdc`). */
const mentionedPath = /`((?:[\w.@~-]*\/)*[\w@-][\w.@-]*\.[A-Za-z][A-Za-z0-9]{0,4})`/g;
/** Dotted names that are code, not files (`os.path`, `self.query`): a path needs a folder or a known extension. */
const fileExtension =
  /\.(?:[jt]sx?|mjs|cjs|py|rb|go|rs|java|kt|c|h|cpp|hpp|cs|php|pl|sh|md|mdc|txt|json|ya?ml|toml|ini|cfg|env|lock|html|css|scss|sql|xml)$/;

function mentionedPathsOf(message: IdentifiedMessage): readonly string[] {
  const facts = factsOf(message);
  if (facts.mentionedPaths === undefined) {
    const paths: string[] = [];
    const prose = proseOf(message);
    if (prose.includes('`'))
      for (const match of prose.matchAll(mentionedPath)) {
        const path = match[1]!;
        if ((path.includes('/') || fileExtension.test(path)) && !paths.includes(path)) paths.push(path);
      }
    facts.mentionedPaths = paths;
  }
  return facts.mentionedPaths;
}

/** Quoted names in an error message: what differs between errors of one shape (`rm: cannot remove 'x': …`). */
const quotedName = /'[^'\n]{1,200}'|"[^"\n]{1,200}"/g;
/** How many other names an error row lists before `+N more`. */
const maxErrorVariants = 12;

/**
 * An error with its quoted names blanked, and those names where they also stand unquoted: Python's OSError
 * repeats its path before the message (`C:\a.tsx: unable to read: [Errno 2] No such file or directory:
 * 'C:\\a.tsx'`, backslashes escaped inside the quotes).
 */
function shapeOf(message: string, names: readonly string[]): string {
  let shape = message.replace(quotedName, '\u0001');
  for (const name of names) {
    const inner = name.slice(1, -1);
    // Too short a name would blank unrelated words.
    if (inner.length < 4) continue;
    shape = shape.split(inner).join('\u0001');
    const unescaped = inner.replaceAll('\\\\', '\\');
    if (unescaped !== inner) shape = shape.split(unescaped).join('\u0001');
  }
  return shape;
}

/**
 * The ledger's errors, those that differ only in one quoted name (a command failing on each of several files) as
 * one: the first verbatim with its source, the others' names listed after it.
 */
function errorGroups(errors: readonly LedgerError[]): Array<{ error: LedgerError; variants: string[] }> {
  const groups: Array<{ error: LedgerError; variants: string[] }> = [];
  // The first error of each shape: its quoted names, and where the names of the others go.
  const byShape = new Map<string, { names: string[]; variants: string[] }>();
  for (const error of errors) {
    const names = error.message.match(quotedName) ?? [];
    const shape = names.length === 0 ? undefined : shapeOf(error.message, names);
    const first = shape === undefined ? undefined : byShape.get(shape);
    const differing = first === undefined ? [] : names.filter((name, index) => name !== first.names[index]);
    if (first !== undefined && differing.length === 1) {
      first.variants.push(differing[0]!);
      continue;
    }
    const group = { error, variants: [] as string[] };
    groups.push(group);
    if (shape !== undefined && first === undefined) byShape.set(shape, { names, variants: group.variants });
  }
  return groups;
}

function addLedger(summary: AnchoredSummary, ledger: LedgerSnapshot): void {
  for (const file of ledger.files) {
    const changes = file.changes.flatMap((change) => {
      const lines =
        change.lineCount !== undefined
          ? ` ${change.lineCount} lines`
          : change.linesAdded !== undefined || change.linesRemoved !== undefined
            ? ` +${change.linesAdded ?? 0}/-${change.linesRemoved ?? 0}`
            : '';
      const text = `${change.kind}${lines}${change.symbols?.length ? ` (${change.symbols.join(', ')})` : ''}${change.failed ? ' failed' : ''}`;
      // A bare `create` says no more than the status `created`.
      return text === 'create' && file.status === 'created' ? [] : [text];
    });
    // A file the session created and deleted was a throwaway: its edits are noise once it is gone. A deletion's
    // own detail says no more than its status.
    const throwaway = file.status === 'deleted' && file.changes[0]?.kind === 'create';
    const detail =
      changes.length === 0 || throwaway || file.changes.every((change) => change.kind === 'delete')
        ? undefined
        : changes.slice(0, 4).join('; ') + (changes.length > 4 ? `; +${changes.length - 4} more` : '');
    // Reads that all failed (not there, too large, not allowed) read nothing.
    const readFailed =
      file.status === 'read' && file.reads > 0 && file.failedReads === file.reads && changes.length === 0;
    addFile(summary.files, {
      path: file.path,
      status: throwaway ? 'created and deleted' : readFailed ? 'read failed' : file.status,
      ...(detail === undefined ? {} : { detail }),
    });
  }
  for (const command of ledger.commands) {
    const status =
      command.status === 'failed'
        ? `failed${command.exitCode === undefined ? '' : ` (exit ${command.exitCode})`}`
        : statusWords(command.status);
    // An outcome the transcript does not show (SpecStory exports often leave it out) is not worth saying.
    let outcome = status === 'unknown' ? '' : ` → ${status}`;
    if (command.runs > 1) outcome += outcome === '' ? ` (${command.runs} runs)` : `, ${command.runs} runs`;
    // The agent saw part of the output: what it concluded from it may rest on what was cut.
    if (command.outputCut !== undefined) outcome += ` (output cut: ${command.outputCut})`;
    const label = codeSpan(commandLabel(command.command, 200));
    const line = `${label}${outcome}`;
    pushUnique(summary.commands, line);
    if ((command.failures > 0 || command.timeouts > 0) && command.status === 'ok') {
      const before = [
        ...(command.failures > 0 ? [`failed ${command.failures}×`] : []),
        ...(command.timeouts > 0 ? [`${statusWords('timed-out')} ${command.timeouts}×`] : []),
      ];
      pushUnique(summary.errors, `${label} ${before.join(' and ')} then passed`);
    }
  }
  for (const { error, variants } of errorGroups(ledger.errors)) {
    const also =
      variants.length === 0
        ? ''
        : `; also ${variants.slice(0, maxErrorVariants).join(', ')}${variants.length > maxErrorVariants ? `, +${variants.length - maxErrorVariants} more` : ''}`;
    pushUnique(
      summary.errors,
      `${codeSpan(error.message)} (from ${sourceLine(error.source)}${error.count > 1 ? `, ${error.count}×` : ''}${also})`,
    );
  }
  for (const test of ledger.tests) {
    const counts = [
      test.passed === undefined ? '' : `${test.passed} passed`,
      test.failed === undefined ? '' : `${test.failed} failed`,
    ].filter((piece) => piece !== '');
    const failing =
      test.failingTests.length === 0 ? '' : `; failing: ${test.failingTests.slice(0, 5).join(', ')}`;
    const words = test.summaryLines?.length ? `: ${test.summaryLines.map(codeSpan).join(' ')}` : '';
    // A run with no result to tell (`vitest unknown`) is only a command, which Commands lists.
    if (test.status === 'unknown' && counts.length === 0 && words === '' && failing === '') continue;
    pushUnique(
      summary.currentState,
      `${test.runner} ${statusWords(test.status)}${counts.length ? ` (${counts.join(', ')})` : ''}${words}${failing}`,
    );
  }
}

/** A command's status as the summary says it. */
function statusWords(status: CommandStatus): string {
  return status === 'timed-out' || status === 'running' ? unfinishedStatusWords[status] : status;
}

/** How much a file status says: named in prose, a read that failed, read, then changed. */
function statusWeight(status: string): number {
  return status === 'mentioned' ? 0 : status === 'read failed' ? 0.5 : status === 'read' ? 1 : 2;
}

function addFile(files: SummaryFile[], file: SummaryFile): void {
  const key = ledgerFileKey(file.path);
  const existing = files.find((candidate) => ledgerFileKey(candidate.path) === key);
  if (existing === undefined) {
    makeRoom(files);
    files.push({ ...file });
    return;
  }
  // `created` stays created; otherwise a change (modified/deleted) wins over a read, and a read over a mention.
  if (existing.status !== 'created' && statusWeight(file.status) >= statusWeight(existing.status))
    existing.status = file.status;
  if (file.detail !== undefined && file.detail !== existing.detail)
    existing.detail =
      existing.detail === undefined ? file.detail : capChars(`${existing.detail}; ${file.detail}`, 600);
}

/** Sections about the session's end, not its course: a merge puts the newer span's first. */
const latestFirstSections: ReadonlySet<ListSection> = new Set(['currentState', 'nextSteps']);
const noSections: ReadonlySet<ListSection> = new Set();

const listSections: readonly ListSection[] = [
  'constraints',
  'decisions',
  'errors',
  'failedApproaches',
  'commands',
  'changes',
  'createdCode',
  'replacedCode',
  'scripts',
  'results',
  'currentState',
  'nextSteps',
  'excerpts',
  'soughtExcerpts',
  'locations',
  'definitions',
];

export interface MergeAnchoredSummaryOptions {
  /**
   * `update` reads the same span as `existing` again (an LLM's sections for it), not a later one: its current
   * state and next steps follow the earlier ones, as its other items do. @default false
   */
  sameSpan?: boolean;
}

/**
 * Extends `existing` with `update` (the record of a later span), never regenerating: every earlier item stays (in
 * order, first), new items are appended, exact repeats are dropped, the earlier intent wins, files merge by path
 * (`ledgerFileKey`), and a task marked done stays done. The current state and next steps are the exception: the
 * later span's come first, the earlier ones after them (unless `sameSpan`). Neither argument is changed.
 */
export function mergeAnchoredSummary(
  existing: AnchoredSummary,
  update: AnchoredSummary,
  { sameSpan = false }: MergeAnchoredSummaryOptions = {},
): AnchoredSummary {
  const latestFirst = sameSpan ? noSections : latestFirstSections;
  const merged: AnchoredSummary = structuredClone(existing);
  merged.messageCount = existing.messageCount + update.messageCount;
  if (merged.intent === undefined && update.intent !== undefined) merged.intent = update.intent;
  for (const section of listSections) {
    if (latestFirst.has(section)) continue;
    for (const item of update[section]) pushUnique(merged[section], item);
  }
  // Where the session is now is where the newest span ended: its state and next steps come first (the renderer
  // shows these sections from the top), the earlier ones after them.
  for (const section of latestFirst) {
    const newer = new Set(update[section]);
    merged[section] = [...update[section], ...existing[section].filter((item) => !newer.has(item))].slice(
      0,
      maxItemsPerSection,
    );
  }
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
