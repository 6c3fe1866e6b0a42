import { buildLedger } from '../ledger/create-ledger.js';
import type { LedgerFile, LedgerSnapshot } from '../ledger/ledger-types.js';
import { contentParts, toolCallsOf } from '../messages/content.js';
import { assignIds } from '../messages/ids.js';
import { parseConversation } from '../messages/parse.js';
import type { Conversation, IdentifiedMessage, Message } from '../messages/types.js';
import { collapseWhitespace, renderForProbes } from './fact-score.js';
import type { Probe, ProbeFile, ProbeType } from './probes.js';

export interface GenerateProbesOptions {
  /** The session's file name, written to the probe file. @default 'session' */
  session?: string;
  /** Error-message recall probes, first errors first. @default 3 */
  maxErrors?: number;
  /** Per-file "what changed" probes, most changed files first. @default 3 */
  maxFileChanges?: number;
  /** Decision probes, spread over the session. @default 3 */
  maxDecisions?: number;
}

/** The probe format's bounds on a fact's length. */
const minFactChars = 4;
const maxFactChars = 80;
const maxListedFacts = 5;
const maxAnswerChars = 400;
const ordinals = ['first', 'second', 'third', 'fourth', 'fifth'];

/**
 * Sentences that state a choice or its reason. Agents phrase decisions in a few recurring ways; a cue alone
 * is weak evidence, so candidates that also name something concrete (code, a path) are preferred.
 */
const decisionCue =
  /\b(?:instead of|rather than|decided|decide to|I(?:'ll| will) (?:use|go with|switch|keep|add|change)|I chose|going with|let's (?:use|go with)|better (?:to|approach)|the (?:best|simplest|right|correct|cleanest|safest) (?:approach|fix|way|option|solution)|the (?:fix|problem|issue|root cause) is|because|so that|prefer)\b/i;
/** Something concrete: inline code, a call, a path, or a snake/camel-case identifier. */
const concreteToken =
  /`([^`\n]{2,60})`|\b([A-Za-z_][\w]*\([^)\n]{0,30}\))|((?:[\w.-]+\/)+[\w.-]+\.\w+)|\b([a-z]+(?:_[a-z0-9]+)+|[a-z]+(?:[A-Z][a-z0-9]+)+)\b/;

/** The first line of `text`, cut at a word boundary so it is at most `maxFactChars`, or undefined. */
export function factFrom(text: string): string | undefined {
  const line = text
    .split('\n')
    .map((candidate) => candidate.trim())
    .find((candidate) => candidate.length >= minFactChars);
  if (line === undefined) return undefined;
  if (line.length <= maxFactChars) return line;
  const cut = line.slice(0, maxFactChars);
  const space = cut.lastIndexOf(' ');
  const fact = (space >= maxFactChars / 2 ? cut.slice(0, space) : cut).trim();
  return fact.length >= minFactChars ? fact : undefined;
}

function shorten(text: string, limit = maxAnswerChars): string {
  const collapsed = collapseWhitespace(text).trim();
  return collapsed.length <= limit ? collapsed : `${collapsed.slice(0, limit - 1).trimEnd()}…`;
}

/** Sentences of a text, split at sentence ends and line breaks; code fences are skipped. */
function sentencesOf(text: string): string[] {
  const sentences: string[] = [];
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.trim().startsWith('```')) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    for (const sentence of line.split(/(?<=[.!?])\s+(?=[A-Z`])/)) {
      const trimmed = sentence.replace(/^[-*#>\d.)\s]+/, '').trim();
      if (trimmed.length >= 12) sentences.push(trimmed);
    }
  }
  return sentences;
}

function textOf(message: Message): string {
  return contentParts(message)
    .flatMap((part) => (part.type === 'text' && part.text !== '' ? [part.text] : []))
    .join('\n');
}

/** A user message the user typed: not a tool result an importer stored as a user message. */
function isTypedUserMessage(message: Message): boolean {
  return (
    message.role === 'user' && message.metadata?.origin !== 'tool-result' && textOf(message).trim() !== ''
  );
}

/** Of a change's tool call: a line of the new text that the old text does not have (an inserted line). */
function insertedLine(message: Message | undefined, path: string): string | undefined {
  if (message === undefined) return undefined;
  for (const call of toolCallsOf(message)) {
    const strings: string[] = [];
    const collect = (value: unknown): void => {
      if (typeof value === 'string') strings.push(value);
      else if (Array.isArray(value)) value.forEach(collect);
      else if (typeof value === 'object' && value !== null) Object.values(value).forEach(collect);
    };
    collect(call.input);
    if (!strings.some((value) => value.includes(path))) continue;
    const candidates = strings.filter((value) => value !== path && value.includes('\n'));
    const newest =
      candidates.sort((a, b) => b.length - a.length)[0] ?? strings.find((value) => value !== path);
    if (newest === undefined) continue;
    const others = strings.filter((value) => value !== newest);
    for (const line of newest.split('\n')) {
      const trimmed = line.trim();
      if (trimmed.length < 8 || trimmed.length > maxFactChars || !/[A-Za-z]{3}/.test(trimmed)) continue;
      if (others.some((value) => value.includes(trimmed))) continue;
      return trimmed;
    }
  }
  return undefined;
}

interface Draft {
  id: string;
  type: ProbeType;
  question: string;
  answer: string;
  facts: Array<string | undefined>;
  /** Share of the (kept) facts needed to pass; at least one. */
  minShare: number;
}

function errorProbes(ledger: LedgerSnapshot, maxErrors: number): Draft[] {
  return ledger.errors.slice(0, maxErrors).map((error, index) => {
    const message = error.message.replace(/…$/, '');
    const ordinal = ordinals[index] ?? `number ${index + 1}`;
    const from = error.source === 'user' ? 'reported by the user' : `from \`${shorten(error.source, 60)}\``;
    return {
      id: `error-${index + 1}`,
      type: 'recall',
      question: `What was the ${ordinal} error message of the session (${from})?`,
      answer: `${error.source === 'user' ? 'The user reported' : `${shorten(error.source, 120)} failed with`}: ${shorten(error.message, 300)}${error.count > 1 ? ` (seen ${error.count} times)` : ''}`,
      facts: [factFrom(message)],
      minShare: 1,
    };
  });
}

function changedFiles(ledger: LedgerSnapshot): LedgerFile[] {
  return ledger.files.filter((file) => file.status === 'created' || file.status === 'modified');
}

function fileProbes(
  ledger: LedgerSnapshot,
  byId: ReadonlyMap<string, Message>,
  maxFileChanges: number,
): Draft[] {
  const drafts: Draft[] = [];
  const changed = changedFiles(ledger);
  if (changed.length > 0) {
    const listed = changed.slice(0, maxListedFacts);
    drafts.push({
      id: 'files-changed',
      type: 'artifact',
      question: 'Which files did the agent create or modify?',
      answer: `${changed.map((file) => `${file.path} (${file.status})`).join(', ')}.`,
      facts: listed.map((file) => file.path),
      minShare: 0.6,
    });
  }
  const read = ledger.files.filter((file) => file.status === 'read' && file.reads > file.failedReads);
  if (read.length > 0) {
    drafts.push({
      id: 'files-read',
      type: 'artifact',
      question: 'Which files did the agent read without changing them?',
      answer: `${read.map((file) => file.path).join(', ')}.`,
      facts: read.slice(0, maxListedFacts).map((file) => file.path),
      minShare: 0.5,
    });
  }
  const mostChanged = [...changed]
    .map((file, order) => ({ file, order }))
    .sort((a, b) => b.file.changes.length - a.file.changes.length || a.order - b.order)
    .slice(0, maxFileChanges);
  mostChanged.forEach(({ file }, index) => {
    const symbols = [...new Set(file.changes.flatMap((change) => change.symbols ?? []))].filter(
      (symbol) => symbol.length >= minFactChars,
    );
    const lines = file.changes
      .map((change) => insertedLine(byId.get(change.messageId), file.path))
      .filter((line): line is string => line !== undefined);
    const facts = [...new Set([...symbols.slice(0, 3), ...lines.slice(-2)])];
    const what = [
      symbols.length === 0 ? '' : `it touches ${symbols.slice(0, 5).join(', ')}`,
      lines.length === 0 ? '' : `lines added include \`${lines.at(-1)}\``,
    ].filter((part) => part !== '');
    drafts.push({
      id: `change-${index + 1}`,
      type: 'artifact',
      question: `What did the agent change in ${file.path}?`,
      answer: `${file.path} was ${file.status} in ${file.changes.length} change${file.changes.length === 1 ? '' : 's'}${what.length === 0 ? '' : `: ${what.join('; ')}`}.`,
      facts,
      minShare: 0.5,
    });
  });
  return drafts;
}

function decisionProbes(messages: readonly Message[], maxDecisions: number): Draft[] {
  const candidates: Array<{ sentence: string; token: string | undefined }> = [];
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    for (const sentence of sentencesOf(textOf(message))) {
      if (!decisionCue.test(sentence)) continue;
      const match = concreteToken.exec(sentence);
      const token = match?.slice(1).find((group) => group !== undefined);
      if (token === undefined) continue;
      if (!candidates.some((candidate) => candidate.sentence === sentence))
        candidates.push({ sentence, token });
    }
  }
  // Evenly spaced over the session, so decisions early and late are both asked about.
  const count = Math.min(maxDecisions, candidates.length);
  const chosen = Array.from(
    { length: count },
    (_, index) => candidates[Math.floor(((index + 0.5) * candidates.length) / count)]!,
  );
  return chosen.map(({ sentence, token }, index) => ({
    id: `decision-${index + 1}`,
    type: 'decision',
    question: `What did the agent decide about \`${token}\`, and why?`,
    answer: shorten(sentence),
    facts: [factFrom(sentence)],
    minShare: 1,
  }));
}

function taskProbe(messages: readonly Message[]): Draft | undefined {
  const task = messages.find(isTypedUserMessage);
  if (task === undefined) return undefined;
  const text = textOf(task);
  const facts = [...new Set(sentencesOf(text).map(factFrom))].slice(0, 3);
  return {
    id: 'task',
    type: 'recall',
    question: 'What was the original task, as the user stated it?',
    answer: shorten(text),
    facts,
    minShare: 0.5,
  };
}

function recallProbes(ledger: LedgerSnapshot): Draft[] {
  const drafts: Draft[] = [];
  const references = ledger.references.slice(0, maxListedFacts);
  if (references.length > 0)
    drafts.push({
      id: 'references',
      type: 'recall',
      question: 'Which issues, pull requests or URLs came up in the session?',
      answer: `${ledger.references.map((reference) => reference.value).join(', ')}.`,
      facts: references.map((reference) => reference.value),
      minShare: 0.5,
    });
  const run = ledger.tests.find((test) => (test.summaryLines?.length ?? 0) > 0);
  if (run !== undefined) {
    const line = run.summaryLines![0]!;
    drafts.push({
      id: 'first-test-run',
      type: 'recall',
      question: `What did the first ${run.runner} run${run.command === undefined ? '' : ` (\`${shorten(run.command, 60)}\`)`} report?`,
      answer: `${shorten(line, 200)}${run.failingTests.length === 0 ? '' : `; failing: ${run.failingTests.slice(0, 5).join(', ')}`}`,
      facts: [factFrom(line), ...run.failingTests.slice(0, 2).map(factFrom)],
      minShare: 0.5,
    });
  }
  return drafts;
}

function continuationProbe(
  messages: readonly IdentifiedMessage[],
  ledger: LedgerSnapshot,
): Draft | undefined {
  const typed = messages.filter(isTypedUserMessage);
  const lastRequest = typed.length > 1 ? typed.at(-1) : undefined;
  const lastStatement = [...messages]
    .reverse()
    .filter((message) => message.role === 'assistant')
    .map((message) => sentencesOf(textOf(message)).at(-1))
    .find((sentence) => sentence !== undefined);
  const position = new Map(messages.map((message, index) => [message.id, index]));
  const lastChanged = [...changedFiles(ledger)].sort(
    (a, b) => (position.get(b.lastMessageId) ?? 0) - (position.get(a.lastMessageId) ?? 0),
  )[0];
  const request = lastRequest === undefined ? undefined : textOf(lastRequest);
  const facts = [
    request === undefined ? factFrom(lastStatement ?? '') : sentencesOf(request).map(factFrom)[0],
    lastChanged?.path,
  ];
  if (facts.every((fact) => fact === undefined)) return undefined;
  const answer = [
    request === undefined
      ? lastStatement === undefined
        ? ''
        : `The agent's last word: ${shorten(lastStatement, 200)}`
      : `The last request: ${shorten(request, 200)}`,
    lastChanged === undefined ? '' : `The last change was to ${lastChanged.path}.`,
  ].filter((part) => part !== '');
  return {
    id: 'continuation',
    type: 'continuation',
    question:
      request === undefined
        ? 'Where did the work stand at the end: what was said last, and which file was changed last?'
        : 'What did the user ask for last, and which file was changed last?',
    answer: answer.join(' '),
    facts,
    minShare: 1,
  };
}

/**
 * Probes for any transcript, without an LLM: deterministic, in the shared probe format.
 * - recall: the original task, error messages (from the ledger), issue ids and URLs, the first test results;
 * - artifact: the files created or modified, the files only read, and what changed in the most changed files
 *   (symbols and inserted lines, from the ledger and the edits' tool calls);
 * - decision: assistant sentences that state a choice or its reason (decision cues) and name something
 *   concrete, spread over the session;
 * - continuation: the last user request (or the agent's last statement) and the file changed last.
 *
 * Every fact is a verbatim piece of one message part, 4–80 characters, checked against the rendered session;
 * a probe whose facts all fail the check is left out. `first_offset` is measured as the format defines it.
 *
 * @throws InvalidMessageError naming the message index and field when the conversation is malformed
 */
export function generateProbes(
  input: Conversation | readonly Message[],
  options: GenerateProbesOptions = {},
): ProbeFile {
  const { session = 'session', maxErrors = 3, maxFileChanges = 3, maxDecisions = 3 } = options;
  const { messages: parsed } = parseConversation(Array.isArray(input) ? [...input] : input);
  const messages = assignIds(parsed);
  const ledger = buildLedger(messages);
  const byId = new Map<string, Message>(messages.map((message) => [message.id, message]));
  const rendered = renderForProbes(messages);
  const text = collapseWhitespace(rendered);

  const drafts = [
    taskProbe(messages),
    ...errorProbes(ledger, maxErrors),
    ...recallProbes(ledger),
    ...fileProbes(ledger, byId, maxFileChanges),
    ...decisionProbes(messages, maxDecisions),
    continuationProbe(messages, ledger),
  ].filter((draft): draft is Draft => draft !== undefined);

  const probes: Probe[] = [];
  for (const draft of drafts) {
    const facts = [...new Set(draft.facts)].filter(
      (fact): fact is string =>
        fact !== undefined && fact.length >= minFactChars && text.includes(collapseWhitespace(fact)),
    );
    if (facts.length === 0) continue;
    const first = Math.min(...facts.map((fact) => text.indexOf(collapseWhitespace(fact))));
    probes.push({
      id: draft.id,
      type: draft.type,
      question: draft.question,
      answer: draft.answer,
      facts,
      minFacts: Math.max(1, Math.min(facts.length, Math.ceil(facts.length * draft.minShare))),
      firstOffset: text.length === 0 ? 0 : Math.round((1000 * first) / text.length) / 1000,
    });
  }
  return { session, contentChars: rendered.length, probes };
}
