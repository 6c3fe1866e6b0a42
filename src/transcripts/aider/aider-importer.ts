import type { AssistantContentPart, JSONValue, Message, MessageMetadata } from '../../messages/types.js';
import {
  closesFence,
  createFenceScanner,
  createLineFinder,
  type FenceOpener,
  fenceOpener,
  splitLines,
  trimBlankLines,
} from '../specstory/fence-scanner.js';
import type {
  ImportContext,
  ImportResult,
  TranscriptImporter,
  TranscriptMetadata,
  TranscriptSample,
} from '../transcript-importer.js';

/**
 * aider's `.aider.chat.history.md`: `# aider chat started at …` opens a session, `#### ` lines are what the
 * user typed, `> ` lines what aider printed (banners, confirmations, test and lint output it fed back, token
 * counts), and the unprefixed text between is the model's reply. SEARCH/REPLACE blocks in a reply become
 * `edit` tool calls; their result is aider's `Applied edit to <path>` line when it printed one.
 *
 * Every session of the file goes into one conversation, in order, each opened by a message that carries the
 * session header and aider's banner: the first session's is the system message, a later session's a harness
 * note (a user message with `metadata.harness`: what aider printed when it restarted, not what the user typed).
 * Records are the file's sections (session headers, user inputs, runs of `> ` lines, replies), numbered from 0.
 */

const origin = 'aider';

/** The result of an edit block aider printed nothing about (no `Applied edit to` line for its file). */
export const aiderEditBlockResult = '[edit block]';

const sessionHeaderPattern = /^# aider chat started at (.*)$/;
const searchPattern = /^<{5,9} SEARCH>?\s*$/;
const dividerPattern = /^={5,9}\s*$/;
const replacePattern = /^>{5,9} REPLACE\s*$/;
const bareFencePattern = /^ {0,3}(?:`{3,}|~{3,})[ \t]*$/;
const appliedPattern = /^(?:Applied edit to|Did not apply edit to) (.+)$/;
/**
 * aider's report of an edit block it could not apply, one heading per failed block, each followed by the block's
 * SEARCH text: `## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in <path>`.
 */
const noExactMatchPattern =
  /^## (SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in (.+))$/gm;
const echoedSearchPattern = /^<{5,9} SEARCH>?[ \t]*\n([\s\S]*?)\n={5,9}[ \t]*$/m;

type SectionKind = 'session' | 'user' | 'output' | 'reply';

interface Section {
  kind: SectionKind;
  /** 0-based index of the first line. */
  start: number;
  /** 0-based index after the last line. */
  end: number;
  /** For `output`: one entry per aider message, prefix and line-break spaces removed. */
  entries?: OutputEntry[];
}

interface OutputEntry {
  text: string;
  /** 1-based line. */
  line: number;
}

/** aider ends every `#### ` and `> ` line with two spaces (a markdown line break). */
const endsWithBreak = (line: string) => line.endsWith('  ');
const stripBreak = (line: string) => (line.endsWith('  ') ? line.slice(0, -2) : line);
const isBlank = (line: string) => line.trim() === '';

/**
 * Reads the lines into sections. `marked` says whether the file kept aider's two-space line ends; when an
 * editor stripped them, any `#### ` or `> ` line counts as a marker.
 */
function readSections(lines: readonly string[]): Section[] {
  const marked = lines.some(
    (line) =>
      (line.startsWith('#### ') || line.startsWith('> ')) && endsWithBreak(line) && line.trim() !== '',
  );
  const isUserLine = (line: string) =>
    line === '####' ||
    (line.startsWith('#### ') && (!marked || endsWithBreak(line) || line.trim() === '####'));
  const isOutputStart = (line: string) => line === '>' || line.startsWith('> ');

  /** End (exclusive) of the `> ` entry starting at `index`, or -1 when the line is not aider output. */
  const outputEntryEnd = (index: number): number => {
    const line = lines[index];
    if (line === undefined || !isOutputStart(line)) return -1;
    if (!marked || endsWithBreak(line)) return index + 1;
    // A multi-line message: only its first line has the prefix, only its last the line break; blank lines
    // inside are its own (an edit error's explanation, a lint report).
    for (let next = index + 1; next < lines.length && next < index + 200; next++) {
      const candidate = lines[next]!;
      if (isOutputStart(candidate) || isUserLine(candidate) || sessionHeaderPattern.test(candidate))
        return -1;
      if (endsWithBreak(candidate) && !isBlank(candidate)) return next + 1;
    }
    return -1;
  };
  const isStrongMarker = (index: number) => {
    const line = lines[index]!;
    if (sessionHeaderPattern.test(line)) return true;
    return marked && (isUserLine(line) || (isOutputStart(line) && endsWithBreak(line)));
  };
  const fences = createFenceScanner(lines, isStrongMarker);

  const sections: Section[] = [];
  for (let index = 0; index < lines.length; ) {
    const line = lines[index]!;
    if (sessionHeaderPattern.test(line)) {
      sections.push({ kind: 'session', start: index, end: index + 1 });
      index++;
      continue;
    }
    if (isUserLine(line)) {
      const start = index;
      while (index < lines.length && isUserLine(lines[index]!)) index++;
      sections.push({ kind: 'user', start, end: index });
      continue;
    }
    if (outputEntryEnd(index) !== -1) {
      const start = index;
      const entries: OutputEntry[] = [];
      for (;;) {
        const end = outputEntryEnd(index);
        if (end === -1) break;
        const text = (
          end === index + 1
            ? stripBreak(lines[index]!)
            : [lines[index]!, ...lines.slice(index + 1, end - 1), stripBreak(lines[end - 1]!)].join('\n')
        ).replace(/^> ?/, '');
        entries.push({ text, line: index + 1 });
        index = end;
        // Runs of output separated only by blank lines are one section.
        let next = index;
        while (next < lines.length && lines[next] === '') next++;
        if (next < lines.length && next > index && outputEntryEnd(next) !== -1) index = next;
      }
      sections.push({ kind: 'output', start, end: index, entries });
      continue;
    }
    if (isBlank(line)) {
      index++;
      continue;
    }
    // A reply: everything up to the next marker outside fences and edit blocks.
    const start = index;
    while (index < lines.length) {
      const current = lines[index]!;
      if (
        index > start &&
        (sessionHeaderPattern.test(current) || isUserLine(current) || outputEntryEnd(index) !== -1)
      )
        break;
      if (searchPattern.test(current)) {
        const end = editBlockEnd(lines, index, isStrongMarker);
        if (end !== -1) {
          index = end + 1;
          // The fence around the block closes here; read as an opener it would swallow what follows.
          if (index < lines.length && bareFencePattern.test(lines[index]!)) index++;
          continue;
        }
      }
      const opener = fenceOpener(current);
      if (opener !== undefined && !editBlockFollows(lines, index)) {
        const closing = fences.findClose(index, opener);
        if (closing !== -1) {
          index = closing + 1;
          continue;
        }
      }
      index++;
    }
    let end = index;
    while (end > start && isBlank(lines[end - 1]!)) end--;
    sections.push({ kind: 'reply', start, end });
  }
  return sections;
}

/** True when the fence opened at `index` holds a SEARCH/REPLACE block (aider ignores such fences). */
function editBlockFollows(lines: readonly string[], index: number): boolean {
  const next = lines[index + 1];
  if (next === undefined) return false;
  if (searchPattern.test(next)) return true;
  // The `diff-fenced` format puts the path inside the fence.
  const after = lines[index + 2];
  return after !== undefined && searchPattern.test(after) && !isBlank(next);
}

/** Index of the REPLACE line of the block whose SEARCH line is at `index`, or -1 when it never ends. */
function editBlockEnd(
  lines: readonly string[],
  index: number,
  isBarrier: (index: number) => boolean,
): number {
  let divider = -1;
  for (let at = index + 1; at < lines.length; at++) {
    const line = lines[at]!;
    if (divider === -1 && dividerPattern.test(line)) divider = at;
    else if (divider !== -1 && replacePattern.test(line)) return at;
    else if (searchPattern.test(line) || isBarrier(at)) return -1;
  }
  return -1;
}

// ---------------------------------------------------------------------------------------------------------
// Replies

interface EditCall {
  toolCallId: string;
  toolName: 'edit' | 'write';
  path: string;
  /** An edit block's SEARCH text: which block aider's failure names. */
  search?: string;
}

interface ReplyParts {
  parts: AssistantContentPart[];
  edits: EditCall[];
}

/** `path`, `` `path` ``, `**path**`, `path:` as aider's own parser strips them. */
function pathOf(line: string): string {
  return line
    .trim()
    .replace(/^#+\s*/, '')
    .replace(/^[`*]+|[`*:]+$/g, '')
    .trim();
}

const looksLikePath = (line: string) => {
  const path = pathOf(line);
  return path !== '' && path.length <= 300 && fenceOpener(line) === undefined;
};

/** A whole-file path for the `whole` edit format: one token with a dot, slash or backslash. */
const looksLikeFilePath = (line: string) => {
  const path = pathOf(line);
  return /^[^\s]+$/.test(path) && /[./\\]/.test(path) && fenceOpener(line) === undefined;
};

const normalizePath = (path: string) => path.trim().replace(/\\/g, '/').replace(/^\.\//, '');

/**
 * The edit calls aider reported failed to match, by call id, with its report's heading: each heading goes to the
 * call on its path whose SEARCH text it echoes, else to the first call on that path not yet named.
 */
function failedEditBlocks(edits: readonly EditCall[], entries: readonly OutputEntry[]): Map<string, string> {
  const failed = new Map<string, string>();
  for (const entry of entries) {
    if (!entry.text.includes('SearchReplaceNoExactMatch')) continue;
    for (const match of entry.text.matchAll(noExactMatchPattern)) {
      const path = normalizePath(match[2]!);
      const after = entry.text.slice(match.index + match[0].length);
      const search = echoedSearchPattern.exec(after)?.[1];
      const open = edits.filter(
        (call) =>
          call.toolName === 'edit' && normalizePath(call.path) === path && !failed.has(call.toolCallId),
      );
      // The call's SEARCH text ends with its last line's break; the echo is cut before it.
      const call = open.find((candidate) => candidate.search?.trimEnd() === search?.trimEnd()) ?? open[0];
      if (call !== undefined) failed.set(call.toolCallId, match[1]!);
    }
  }
  return failed;
}

const reasoningTags = [/^<(think|thinking|reasoning)>/, /^<(thinking-content-[0-9a-f]+)>/];

/** Line finders shared by all replies of a file, so unclosed reasoning tags never rescan it. */
interface ReplyFinders {
  /** By closing tag, `</think>`, `</thinking-content-…>`. */
  closers: Map<string, (from: number) => number>;
  answerFinder: (from: number) => number;
}

interface ReplyContext {
  finders: ReplyFinders;
  editFormat: string | undefined;
  nextCallId: () => string;
  context: ImportContext;
  record: number;
}

/** Splits a reply into text, reasoning and edit calls, keeping the prose around the edits verbatim. */
function readReply(lines: readonly string[], start: number, end: number, reply: ReplyContext): ReplyParts {
  const parts: AssistantContentPart[] = [];
  const edits: EditCall[] = [];
  let text: string[] = [];
  let lastPath = '';
  // The fence of the edit block just read, while another block may follow inside it.
  let blockFence: FenceOpener | undefined;
  const flushText = () => {
    const joined = trimBlankLines(text.join('\n'));
    if (!isBlank(joined)) parts.push({ type: 'text', text: joined });
    text = [];
  };
  const lastNonBlank = (): number => {
    let at = text.length - 1;
    while (at >= 0 && isBlank(text[at]!)) at--;
    return at;
  };
  const edit = (path: string, search: string, replace: string) => {
    flushText();
    const toolCallId = reply.nextCallId();
    parts.push({ type: 'tool-call', toolCallId, toolName: 'edit', input: { path, search, replace } });
    edits.push({ toolCallId, toolName: 'edit', path, search });
  };
  const fences = createFenceScanner(lines, (index) => index >= end);
  const { closers, answerFinder } = reply.finders;

  for (let index = start; index < end; index++) {
    const line = lines[index]!;

    if (searchPattern.test(line)) {
      const divider = findLine(lines, index + 1, end, dividerPattern, searchPattern);
      const replaceLine =
        divider === -1 ? -1 : findLine(lines, divider + 1, end, replacePattern, searchPattern);
      if (replaceLine === -1) {
        reply.context.warn('SEARCH/REPLACE block without its ======= or >>>>>>> REPLACE line: kept as text', {
          line: index + 1,
          record: reply.record,
        });
        text.push(line);
        continue;
      }
      // The path line and the fence opener before the block are its syntax, not prose.
      let opened: FenceOpener | undefined;
      let path: string | undefined;
      const previous = lastNonBlank();
      const previousLine = previous >= 0 ? text[previous]! : undefined;
      if (
        previousLine !== undefined &&
        fenceOpener(previousLine) !== undefined &&
        previous === text.length - 1
      ) {
        opened = fenceOpener(previousLine);
        text.length = previous;
        const before = lastNonBlank();
        if (before >= 0 && before === text.length - 1 && looksLikePath(text[before]!)) {
          path = pathOf(text[before]!);
          text.length = before;
        }
      } else if (
        previousLine !== undefined &&
        previous === text.length - 1 &&
        looksLikePath(previousLine) &&
        previous >= 1 &&
        fenceOpener(text[previous - 1]!) !== undefined
      ) {
        // diff-fenced: the fence, then the path, then the block.
        opened = fenceOpener(text[previous - 1]!);
        path = pathOf(previousLine);
        text.length = previous - 1;
      } else if (previousLine !== undefined && previous === text.length - 1 && looksLikePath(previousLine)) {
        path = pathOf(previousLine);
        text.length = previous;
      }
      if (path === undefined) {
        if (lastPath === '')
          reply.context.warn('SEARCH/REPLACE block without a file path', {
            line: index + 1,
            record: reply.record,
          });
        path = lastPath;
      }
      lastPath = path;
      if (opened !== undefined) blockFence = opened;
      const section = (from: number, to: number) =>
        from === to ? '' : `${lines.slice(from, to).join('\n')}\n`;
      edit(path, section(index + 1, divider), section(divider + 1, replaceLine));
      index = replaceLine;
      // Further blocks may share the fence (they take the same path); its closing line ends them.
      if (blockFence !== undefined) {
        let next = index + 1;
        while (next < end && isBlank(lines[next]!)) next++;
        if (next < end && closesFence(lines[next]!, blockFence)) {
          index = next;
          blockFence = undefined;
        } else if (next >= end || !searchPattern.test(lines[next]!)) blockFence = undefined;
      }
      continue;
    }

    const tag = reasoningTags.map((pattern) => pattern.exec(line.trim())).find((match) => match !== null);
    if (tag !== undefined && tag !== null) {
      const closing = `</${tag[1]}>`;
      let finder = closers.get(closing);
      if (finder === undefined) {
        finder = createLineFinder(lines, closing);
        closers.set(closing, finder);
      }
      const close = finder(index);
      if (close !== -1 && close < end) {
        flushText();
        const raw = lines.slice(index, close + 1).join('\n');
        const inner = raw.slice(raw.indexOf(tag[0]) + tag[0].length, raw.lastIndexOf(closing));
        if (!isBlank(inner)) parts.push({ type: 'reasoning', text: inner.trim() });
        const trailing = raw.slice(raw.lastIndexOf(closing) + closing.length);
        if (!isBlank(trailing)) text.push(trailing);
        index = close;
        continue;
      }
    }

    if (line.trim() === '► **THINKING**') {
      const answer = answerFinder(index + 1);
      if (answer !== -1 && answer < end) {
        flushText();
        const inner = lines
          .slice(index + 1, answer)
          .join('\n')
          .replace(/\n-{3,}\s*$/, '');
        if (!isBlank(inner)) parts.push({ type: 'reasoning', text: inner.trim() });
        index = answer;
        continue;
      }
    }

    const opener = fenceOpener(line);
    if (opener !== undefined && !editBlockFollows(lines, index)) {
      const closing = fences.findClose(index, opener);
      if (closing !== -1 && closing < end) {
        const path = lastNonBlank();
        if (
          reply.editFormat === 'whole' &&
          path >= 0 &&
          path === text.length - 1 &&
          looksLikeFilePath(text[path]!) &&
          (path === 0 || isBlank(text[path - 1]!))
        ) {
          // The `whole` edit format: a path line and the file's full new text in a fence.
          const filePath = pathOf(text[path]!);
          text.length = path;
          flushText();
          const toolCallId = reply.nextCallId();
          const content = index + 1 === closing ? '' : `${lines.slice(index + 1, closing).join('\n')}\n`;
          parts.push({
            type: 'tool-call',
            toolCallId,
            toolName: 'write',
            input: { path: filePath, content },
          });
          edits.push({ toolCallId, toolName: 'write', path: filePath });
        } else {
          for (let at = index; at <= closing; at++) text.push(lines[at]!);
        }
        index = closing;
        continue;
      }
    }
    text.push(line);
  }
  flushText();
  return { parts, edits };
}

function findLine(
  lines: readonly string[],
  from: number,
  end: number,
  pattern: RegExp,
  stop?: RegExp,
): number {
  for (let index = from; index < end; index++) {
    const line = lines[index]!;
    if (pattern.test(line)) return index;
    if (stop?.test(line)) return -1;
  }
  return -1;
}

// ---------------------------------------------------------------------------------------------------------
// Sessions

interface SessionInfo {
  startedAt?: string;
  model?: string;
  editFormat?: string;
  aiderVersion?: string;
  line: number;
}

/** `2024-05-21 11:29:42` → `2024-05-21T11:29:42` (aider writes local time, without a zone). */
function isoTimestamp(text: string): string | undefined {
  const match = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2})?)/.exec(text.trim());
  if (match === null) return undefined;
  return `${match[1]}T${match[2]!.length === 5 ? `${match[2]}:00` : match[2]}`;
}

function readBanner(entries: readonly OutputEntry[], session: SessionInfo): void {
  for (const { text } of entries) {
    const version = /^Aider v(\S+)/.exec(text);
    if (version !== null) session.aiderVersion = version[1]!;
    const model = /^(?:Main model|Models?): (\S+) with (\S+) edit format/.exec(text);
    if (model !== null) {
      session.model = model[1]!;
      session.editFormat = model[2]!;
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// The importer

const addedToChatPattern = /^Added (\S+) to the chat\.?$/;
const addFilePromptPattern = /^Add file to the chat\? .*:\s*(?:y|yes|a|all)\s*$/i;
const addFilesPromptPattern = /^Add these files to the chat\?\s*(?:y|yes)\s*$/i;
/**
 * aider's question with the user's answer, logged as input when the answer was typed out (`Add file to the chat?
 * (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: skip`): an answer to aider, not a request to the model.
 */
const answeredQuestionPattern = /^[^\n]*\? \(Y\)es\/\(N\)o(?:\/[^\n[]*)? \[(?:Yes|No)\]: ?[^\n]*$/;
/** A path aider lists alone on a line before asking to add it: one token with a dot or slash. */
const listedPathPattern = /^[^\s:]*[./\\][^\s:]*$/;

/**
 * The files aider put into the chat (the model's context), as its output says: `Added src/a.py to the chat.`
 * (`/add`, files named on the command line), and files it listed and asked about, answered yes (`src/a.py` then
 * `Add file to the chat? … y`, or several paths then `Add these files to the chat? yes`). Distinct, in order.
 */
export function filesAddedToChat(output: string): string[] {
  const lines = output.split('\n').map((line) => line.trim());
  const files: string[] = [];
  const add = (path: string) => {
    const normal = normalizePath(path);
    if (!files.includes(normal)) files.push(normal);
  };
  lines.forEach((line, index) => {
    const added = addedToChatPattern.exec(line);
    if (added !== null) add(added[1]!);
    else if (addFilePromptPattern.test(line)) {
      const previous = lines[index - 1];
      if (previous !== undefined && listedPathPattern.test(previous)) add(previous);
    } else if (addFilesPromptPattern.test(line)) {
      let start = index;
      while (start > 0 && listedPathPattern.test(lines[start - 1]!)) start--;
      for (let at = start; at < index; at++) add(lines[at]!);
    }
  });
  return files;
}

function metadataOf(line: number, record: number, extra: MessageMetadata = {}): MessageMetadata {
  return { origin, line, record, ...extra };
}

function parseAider(text: string, context: ImportContext): ImportResult {
  const lines = splitLines(text);
  const sections = readSections(lines);
  const messages: Message[] = [];
  const sessions: SessionInfo[] = [];
  const finders: ReplyFinders = {
    closers: new Map(),
    answerFinder: createLineFinder(lines, '► **ANSWER**'),
  };
  let callCount = 0;
  const nextCallId = () => `aider-call-${++callCount}`;
  let pending: { edits: EditCall[]; line: number; record: number } | undefined;

  /**
   * Answers the edit calls of the last reply: from `entries` where aider printed `Applied edit to`, and as an
   * error where it reported the block failed to match (the report stays in its note too).
   */
  const resolvePending = (entries: OutputEntry[] = []): OutputEntry[] => {
    if (pending === undefined) return entries;
    const applied = new Map<string, string>();
    const failed = failedEditBlocks(pending.edits, entries);
    const rest: OutputEntry[] = [];
    const wanted = new Set(pending.edits.map((call) => normalizePath(call.path)));
    for (const entry of entries) {
      const match = appliedPattern.exec(entry.text);
      const path = match === null ? undefined : normalizePath(match[1]!.replace(/ \(--dry-run\)\s*$/, ''));
      if (path !== undefined && wanted.has(path) && !applied.has(path)) applied.set(path, entry.text);
      else rest.push(entry);
    }
    messages.push({
      role: 'tool',
      content: pending.edits.map((call) => {
        const failure = failed.get(call.toolCallId);
        const value = applied.get(normalizePath(call.path)) ?? aiderEditBlockResult;
        return {
          type: 'tool-result' as const,
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          output:
            failure === undefined
              ? { type: 'text' as const, value }
              : { type: 'error-text' as const, value: failure },
        };
      }),
      metadata: metadataOf(pending.line, pending.record),
    });
    pending = undefined;
    return rest;
  };

  let current: SessionInfo | undefined;
  let sessionMessage: { index: number } | undefined;
  // The session whose banner (the output right after its header) has not been read yet.
  let bannerFor: SessionInfo | undefined;

  for (let record = 0; record < sections.length; record++) {
    const section = sections[record]!;
    const line = section.start + 1;
    context.read();

    if (section.kind === 'session') {
      resolvePending();
      const header = lines[section.start]!;
      const stamp = sessionHeaderPattern.exec(header)![1]!;
      const startedAt = isoTimestamp(stamp);
      if (startedAt === undefined) {
        // aider always writes a timestamp here: anything else is a damaged line. The session still starts.
        context.malformed(`session header without a readable timestamp: "${stamp.slice(0, 40)}"`, {
          line,
          record,
        });
        current = { line };
        sessions.push(current);
        sessionMessage = undefined;
        bannerFor = current;
        continue;
      }
      current = { line, startedAt };
      sessions.push(current);
      // The first header opens the conversation as its system message. A later one is what aider printed when it
      // restarted: a harness note, which goes with its turn (as a system message, a repair for Anthropic would
      // hoist it into the system prompt, and twelve banners took half of a 10% budget).
      const restarted = sessions.length > 1;
      const message = {
        role: restarted ? 'user' : 'system',
        content: header,
        metadata: metadataOf(line, record, {
          session: sessions.length,
          timestamp: startedAt,
          ...(restarted ? { harness: true } : {}),
        }),
      } as Message;
      sessionMessage = { index: messages.length };
      bannerFor = current;
      messages.push(message);
      context.use();
      continue;
    }

    if (section.kind === 'output') {
      const all = section.entries ?? [];
      let entries = resolvePending(all);
      // aider's banner (version, models, repository) right after the session header is not a turn of the
      // chat: it joins the session's system message.
      if (bannerFor !== undefined) readBanner(entries, bannerFor);
      if (sessionMessage !== undefined) {
        const message = messages[sessionMessage.index]!;
        message.content = [message.content as string, ...entries.map((entry) => entry.text)].join('\n');
        entries = [];
      }
      sessionMessage = undefined;
      bannerFor = undefined;
      const rest = trimBlankLines(entries.map((entry) => entry.text).join('\n'));
      if (isBlank(rest)) {
        if (entries.length === all.length) context.ignore('empty-output');
        else context.use();
        continue;
      }
      context.use();
      const first = entries.find((entry) => !isBlank(entry.text)) ?? entries[0]!;
      // What aider printed (token costs, prompts it answered itself, lint and test output) is a harness note:
      // not the user's words, though the errors in it still count.
      const contextFiles = filesAddedToChat(rest);
      messages.push({
        role: 'user',
        content: rest,
        metadata: metadataOf(first.line, record, {
          aiderOutput: true,
          harness: true,
          ...(contextFiles.length === 0 ? {} : { contextFiles }),
        }),
      });
      continue;
    }

    resolvePending();
    sessionMessage = undefined;
    bannerFor = undefined;

    if (section.kind === 'user') {
      const prompt = lines
        .slice(section.start, section.end)
        .map((userLine) => stripBreak(userLine === '####' ? '' : userLine.slice(5)))
        .join('\n');
      if (isBlank(prompt)) {
        context.ignore('empty-input');
        continue;
      }
      context.use();
      const command = aiderCommand(prompt);
      // `/ask X` is what the user typed; aider then logs `X`, the request the model got, on its own line.
      const previous = messages.at(-1);
      const typed = previous?.role === 'user' ? requestCommandText(previous) : undefined;
      if (typed !== undefined && typed.text === prompt.trim())
        previous!.metadata = { ...previous!.metadata, command: typed.command, harness: true };
      const answer = command === undefined && answeredQuestionPattern.test(prompt.trim());
      messages.push({
        role: 'user',
        content: prompt,
        metadata: metadataOf(
          line,
          record,
          command !== undefined ? { command, harness: true } : answer ? { harness: true } : {},
        ),
      });
      continue;
    }

    const reply = readReply(lines, section.start, section.end, {
      finders,
      editFormat: current?.editFormat,
      nextCallId,
      context,
      record,
    });
    if (reply.parts.length === 0) {
      context.ignore('empty-reply');
      continue;
    }
    context.use();
    messages.push({
      role: 'assistant',
      content: reply.parts,
      metadata: metadataOf(line, record, current?.model === undefined ? {} : { model: current.model }),
    });
    if (reply.edits.length > 0) pending = { edits: reply.edits, line, record };
  }
  resolvePending();

  const models = [
    ...new Set(sessions.flatMap((session) => (session.model === undefined ? [] : [session.model]))),
  ];
  const stamps = sessions.flatMap((session) => (session.startedAt === undefined ? [] : [session.startedAt]));
  const extra: Record<string, JSONValue> = {
    sessionCount: sessions.length,
    sessions: sessions.map((session) => ({
      line: session.line,
      ...(session.startedAt === undefined ? {} : { startedAt: session.startedAt }),
      ...(session.model === undefined ? {} : { model: session.model }),
      ...(session.editFormat === undefined ? {} : { editFormat: session.editFormat }),
      ...(session.aiderVersion === undefined ? {} : { aiderVersion: session.aiderVersion }),
    })),
    ...(models.length > 1 ? { models } : {}),
  };
  const model = models.length === 1 ? models[0] : undefined;
  const metadata: TranscriptMetadata = {
    format: 'aider',
    ...(model === undefined ? {} : { model }),
    ...(stamps.length === 0 ? {} : { startedAt: stamps[0]!, endedAt: stamps.at(-1)! }),
    extra,
  };
  return { conversation: { messages, ...(model === undefined ? {} : { model }) }, metadata };
}

/** aider's in-chat commands (`/help` lists them); `/ask`, `/code`, `/architect` and `/context` may carry a request. */
const aiderCommands = new Set([
  'add',
  'architect',
  'ask',
  'chat-mode',
  'clear',
  'code',
  'commit',
  'context',
  'copy',
  'copy-context',
  'diff',
  'drop',
  'edit',
  'editor',
  'editor-model',
  'exit',
  'git',
  'help',
  'lint',
  'load',
  'ls',
  'map',
  'map-refresh',
  'model',
  'models',
  'multiline-mode',
  'paste',
  'quit',
  'read-only',
  'reasoning-effort',
  'report',
  'reset',
  'run',
  'save',
  'settings',
  'test',
  'think-tokens',
  'tokens',
  'undo',
  'voice',
  'weak-model',
  'web',
]);
const requestCommands = new Set(['architect', 'ask', 'code', 'context']);

/**
 * `/name` of a prompt that is an aider command rather than a request to the model: a mode switch (`/ask`
 * alone), a model or file change (`/model …`, `/add …`), a command aider runs (`/run …`). One of the chat
 * modes followed by text is that text's request, and so is a prompt that only starts like a path.
 */
function aiderCommand(prompt: string): string | undefined {
  const command = commandOf(prompt);
  if (command === undefined) return undefined;
  return requestCommands.has(command.name) && command.text !== '' ? undefined : `/${command.name}`;
}

/** The aider command a prompt starts with (`/ask X`: `ask`) and the text after it, trimmed. */
function commandOf(prompt: string): { name: string; text: string } | undefined {
  const match = /^\/([a-z][a-z-]*)(?=\s|$)([\s\S]*)$/.exec(prompt.trimStart());
  const name = match?.[1];
  return name === undefined || !aiderCommands.has(name) ? undefined : { name, text: match![2]!.trim() };
}

/** The command and the request of a user message that is a request command with its text (`/ask X`). */
function requestCommandText(message: Message): { command: string; text: string } | undefined {
  if (typeof message.content !== 'string' || message.metadata?.command !== undefined) return undefined;
  const command = commandOf(message.content);
  return command !== undefined && requestCommands.has(command.name) && command.text !== ''
    ? { command: `/${command.name}`, text: command.text }
    : undefined;
}

export const aiderImporter: TranscriptImporter = {
  format: 'aider',
  description: 'aider chat history markdown (.aider.chat.history.md)',
  detect(sample: TranscriptSample): string | undefined {
    const head = sample.head;
    const start = head.trimStart();
    if (start.startsWith('{') || start.startsWith('[')) return undefined;
    if (/<!--\s*Generated by SpecStory/.test(head)) return undefined;
    if (/^_\*\*User(?: \([^\n]*\))?\*\*_[ \t]*$/m.test(head) && /^_\*\*(?:Assistant|Agent)\b/m.test(head))
      return undefined;
    if (/^# aider chat started at /m.test(head)) return 'has a "# aider chat started at" session header';
    const name = sample.fileName ?? '';
    const userLine = /^#### \S.* {2}$/m.test(head);
    if (name.endsWith('.aider.chat.history.md') && (userLine || /^> .* {2}$/m.test(head)))
      return 'named .aider.chat.history.md with #### input lines';
    if (userLine && /^> .* {2}$/m.test(head)) return 'has aider #### input and > output lines';
    return undefined;
  },
  parse: parseAider,
};
