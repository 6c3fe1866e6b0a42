import type { TokenCounter } from '../tokens/index.js';
import { createO200kCounter } from '../tokens/index.js';
import {
  type LedgerCommand,
  type LedgerError,
  type LedgerFile,
  type LedgerFileChange,
  type LedgerReference,
  type LedgerSnapshot,
  type LedgerTestRun,
  unfinishedStatusWords,
} from './ledger-types.js';

export interface RenderLedgerOptions {
  /** Cap on the rendered text's tokens; rows are dropped least important first. @default no cap */
  maxTokens?: number;
  /** Counts the tokens for `maxTokens`. @default the exact o200k counter */
  counter?: TokenCounter;
  /** Changes listed per file before `… (+N more changes)` (the first and the latest are kept). @default 4 */
  maxChangesPerFile?: number;
  /** Characters of a command shown before it is cut (multi-line commands show their first line). @default 200 */
  maxCommandChars?: number;
}

const sectionTitles = ['Files', 'Commands', 'Errors', 'Tests', 'References'] as const;
type SectionTitle = (typeof sectionTitles)[number];

interface Row {
  section: SectionTitle;
  text: string;
  /** Higher stays longer. */
  importance: number;
  /** Position in the section (first-seen order). */
  position: number;
}

let defaultCounter: TokenCounter | undefined;

/** Inline code that survives backticks inside (CommonMark: a longer fence, padded with spaces). */
export function codeSpan(text: string): string {
  const flattened = text.replace(/\r?\n/g, ' ⏎ ');
  let fence = '`';
  while (flattened.includes(fence)) fence += '`';
  const pad = fence.length > 1 || flattened.startsWith('`') || flattened.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${flattened}${pad}${fence}`;
}

/**
 * The text of the span `codeSpan` wrote at `start` of `text` (of a non-empty text: an empty one reads as an
 * opening fence), and where the span ends; undefined when there is none. A newline `codeSpan` flattened stays
 * flattened.
 */
export function readCodeSpan(text: string, start = 0): { text: string; end: number } | undefined {
  let open = start;
  while (text[open] === '`') open++;
  const fence = text.slice(start, open);
  if (fence === '') return undefined;
  // Inside, every run of backticks is shorter than the fence: the first run as long closes it.
  const close = text.indexOf(fence, open);
  if (close === -1) return undefined;
  const inner = text.slice(open, close);
  if (fence.length === 1) return { text: inner, end: close + 1 };
  if (inner.length < 2 || !inner.startsWith(' ') || !inner.endsWith(' ')) return undefined;
  return { text: inner.slice(1, -1), end: close + fence.length };
}

/**
 * What an error names as its source: the command without a leading `cd <dir> &&` (or `;`), which every
 * command of an agent that runs from its workspace starts with, so the label shows what ran.
 */
export function errorSourceLabel(source: string): string {
  return source.replace(leadingCd, '');
}

const leadingCd = /^cd +\S+ *(?:&&|;) *(?=\S)/;

/** Characters of a script's line that a command's label shows at most. */
const maxScriptLineChars = 80;
/** A heredoc's start (`<<'PY'`, `<<-EOF`), with the word that ends it. */
const heredocStart = /<<-?\s*(['"]?)([\w.-]+)\1/;
/** A first line that writes the heredoc after it to a file (`cat > f <<'EOF'`, `cat <<'EOF' >> f`, `tee f <<EOF`). */
const writesHeredocToFile = /\b(?:cat\b[^;&|]*>|tee\b)/;
/** Lines of a script that say nothing about what it does: imports, comments, shell options, closers. */
const quietScriptLine = /^(?:#|\/\/|import\b|from \S+ import\b|set -[a-z]+$|[)}\]"'`;]+$)/;

/**
 * A command on one line: its first line, and, where the rest is a script the first line runs (a heredoc into
 * `python -`, a `-c` string, SWE-agent's `edit`, a commit message), ` … ` and the script's first line that says
 * something. Two scripts behind the same `python - <<'PY'` then read as two commands. A first line that writes
 * its heredoc to a file names the file, which says more. Cut to `maxChars` characters with `…`.
 */
export function commandLabel(command: string, maxChars = 200): string {
  const trimmed = command.trim();
  const newline = trimmed.indexOf('\n');
  if (newline === -1) return cutChars(trimmed, maxChars);
  const first = trimmed.slice(0, newline).trim();
  const heredoc = heredocStart.exec(first);
  if (heredoc !== null && writesHeredocToFile.test(first)) return cutChars(first, maxChars);
  const line = trimmed
    .slice(newline + 1)
    .split('\n')
    .map((each) => each.trim())
    .find((each) => each !== '' && each !== heredoc?.[2] && !quietScriptLine.test(each));
  const label = line === undefined ? `${first} …` : `${first} … ${cutChars(line, maxScriptLineChars)}`;
  return cutChars(label, maxChars);
}

function cutChars(text: string, maxChars: number): string {
  return text.length > maxChars ? `${text.slice(0, maxChars)}…` : text;
}

function shortCommand(command: string, maxChars: number): string {
  const newline = command.indexOf('\n');
  const extraLines = newline === -1 ? 0 : command.slice(newline + 1).split('\n').length;
  const label = codeSpan(commandLabel(command, maxChars));
  return extraLines === 0 ? label : `${label} (+${extraLines} lines)`;
}

function lineDelta(change: LedgerFileChange): string | undefined {
  const pieces: string[] = [];
  if (change.linesRemoved !== undefined && change.linesRemoved > 0) pieces.push(`-${change.linesRemoved}`);
  if (change.linesAdded !== undefined && (change.linesAdded > 0 || pieces.length === 0))
    pieces.push(`+${change.linesAdded}`);
  if (pieces.length === 0) return undefined;
  return `${pieces.join('/')} lines`;
}

function describeChange(change: LedgerFileChange): string {
  const verb = {
    create: 'created',
    write: 'rewritten',
    edit: 'edited',
    append: 'appended',
    delete: 'deleted',
    revert: 'reverted',
  }[change.kind];
  const facts: string[] = [];
  if (change.lineCount !== undefined) facts.push(`${change.lineCount} lines`);
  else {
    const delta = lineDelta(change);
    if (delta !== undefined) facts.push(delta);
  }
  if (change.hunks !== undefined && change.hunks > 1) facts.push(`${change.hunks} hunks`);
  if (
    change.detail !== undefined &&
    !/^(?:shell (?:write|append)|patch|create|touch|rm)$/.test(change.detail)
  ) {
    const detail = change.detail.length > 120 ? `${change.detail.slice(0, 120)}…` : change.detail;
    facts.push(detail.startsWith('sed -i') ? codeSpan(detail) : detail);
  }
  let text = facts.length === 0 ? verb : `${verb} (${facts.join(', ')})`;
  if (change.symbols !== undefined && change.symbols.length > 0)
    text += ` ${change.symbols.map((symbol) => codeSpan(symbol)).join(', ')}`;
  if (change.failed === true) text += ' [failed]';
  return text;
}

function fileRow(file: LedgerFile, maxChanges: number): { text: string; importance: number } {
  const pieces: string[] = [];
  const changes = file.changes;
  if (changes.length > 0) {
    const shown =
      changes.length <= maxChanges
        ? changes
        : [changes[0]!, ...changes.slice(changes.length - (maxChanges - 1))];
    const described = shown.map(describeChange);
    if (changes.length > maxChanges)
      described.splice(1, 0, `… (+${changes.length - maxChanges} more changes)`);
    pieces.push(described.join('; '));
  }
  if (file.reads > 0) {
    let read = file.reads === 1 ? 'read' : `read ×${file.reads}`;
    if (file.readRanges.length > 0)
      read += ` (${file.readRanges.slice(0, 4).join(', ')}${file.readRanges.length > 4 ? ', …' : ''})`;
    if (file.failedReads > 0)
      read += file.failedReads === file.reads ? ' [failed]' : ` [${file.failedReads} failed]`;
    pieces.push(read);
  }
  const text = `- ${codeSpan(file.path)} — ${file.status}: ${pieces.join('; ')}`;
  const onlyFailedReads = changes.length === 0 && file.failedReads === file.reads;
  return { text, importance: file.status === 'read' ? (onlyFailedReads ? 1 : 3) : 5 };
}

function commandRow(command: LedgerCommand, maxChars: number): { text: string; importance: number } {
  let outcome: string;
  if (command.exitCode !== undefined) outcome = `exit ${command.exitCode}`;
  else
    outcome = {
      ok: 'ok',
      failed: 'failed',
      ...unfinishedStatusWords,
      unknown: 'no status',
      pending: 'no result',
    }[command.status];
  let text = `- ${shortCommand(command.command, maxChars)} → ${outcome}`;
  if (command.runs > 1)
    text +=
      ` (${command.runs} runs${command.failures > 0 ? `, ${command.failures} failed` : ''}` +
      `${command.timeouts > 0 ? `, ${command.timeouts} ${unfinishedStatusWords['timed-out']}` : ''})`;
  else if (command.failures > 0 && command.exitCode === undefined && command.status !== 'failed')
    text += ' (failed before)';
  if (command.outputCut !== undefined) text += ` (output cut: ${command.outputCut})`;
  const importance =
    command.kind === 'search'
      ? 1
      : command.failures > 0 || command.timeouts > 0 || command.testRunner !== undefined
        ? 4
        : 2;
  return { text, importance };
}

function errorRow(error: LedgerError, maxChars: number): { text: string; importance: number } {
  const count = error.count > 1 ? ` ×${error.count}` : '';
  const source =
    error.source === 'user'
      ? 'from the user'
      : `from ${shortCommand(errorSourceLabel(error.source), Math.min(maxChars, 120))}`;
  const ids = error.messageIds.slice(0, 3).join(', ') + (error.messageIds.length > 3 ? ', …' : '');
  return { text: `- ${codeSpan(error.message)}${count} — ${source} (${ids})`, importance: 5 };
}

function testRow(
  run: LedgerTestRun,
  isLatest: boolean,
  maxChars: number,
): { text: string; importance: number } {
  const counts: string[] = [];
  if (run.failed !== undefined && (run.failed > 0 || run.passed === undefined))
    counts.push(`${run.failed} failed`);
  if (run.passed !== undefined) counts.push(`${run.passed} passed`);
  if (run.skipped !== undefined && run.skipped > 0) counts.push(`${run.skipped} skipped`);
  const outcome =
    counts.length > 0
      ? counts.join(', ')
      : run.exitCode !== undefined
        ? `exit ${run.exitCode}`
        : {
            ok: 'passed (no summary)',
            failed: 'failed (no summary)',
            ...unfinishedStatusWords,
            unknown: 'no output',
            pending: 'no result',
          }[run.status];
  let text = `- ${run.runner}${run.command === undefined ? '' : ` ${shortCommand(run.command, maxChars)}`}: ${outcome}`;
  if (counts.length > 0 && run.exitCode !== undefined) text += ` (exit ${run.exitCode})`;
  if (run.failingTests.length > 0)
    text += `; failing: ${run.failingTests
      .slice(0, 8)
      .map((name) => codeSpan(name))
      .join(', ')}${run.failingTests.length > 8 ? `, … (+${run.failingTests.length - 8})` : ''}`;
  const failing = (run.failed ?? 0) > 0 || run.status === 'failed';
  return { text, importance: isLatest ? 6 : failing ? 5 : 3 };
}

function referenceRow(reference: LedgerReference): { text: string; importance: number } {
  const count = reference.count > 1 ? ` (×${reference.count})` : '';
  return { text: `- ${reference.value}${count}`, importance: reference.kind === 'issue' ? 3 : 2 };
}

function rowsOf(
  snapshot: LedgerSnapshot,
  options: Required<Pick<RenderLedgerOptions, 'maxChangesPerFile' | 'maxCommandChars'>>,
): Row[] {
  const rows: Row[] = [];
  const push = (section: SectionTitle, entries: Array<{ text: string; importance: number }>) =>
    entries.forEach((entry, position) => {
      rows.push({ section, position, ...entry });
    });
  push(
    'Files',
    snapshot.files.map((file) => fileRow(file, Math.max(2, options.maxChangesPerFile))),
  );
  push(
    'Commands',
    snapshot.commands.map((command) => commandRow(command, options.maxCommandChars)),
  );
  push(
    'Errors',
    snapshot.errors.map((error) => errorRow(error, options.maxCommandChars)),
  );
  push(
    'Tests',
    snapshot.tests.map((run, index) =>
      testRow(run, index === snapshot.tests.length - 1, options.maxCommandChars),
    ),
  );
  push('References', snapshot.references.map(referenceRow));
  return rows;
}

function assemble(rows: readonly Row[], kept: ReadonlySet<Row>): string {
  const blocks: string[] = [];
  for (const title of sectionTitles) {
    const sectionRows = rows.filter((row) => row.section === title);
    if (sectionRows.length === 0) continue;
    const keptRows = sectionRows.filter((row) => kept.has(row));
    const lines = [`## ${title}`, ...keptRows.map((row) => row.text)];
    const dropped = sectionRows.length - keptRows.length;
    if (dropped > 0) lines.push(`- (+${dropped} more)`);
    blocks.push(lines.join('\n'));
  }
  return blocks.join('\n\n');
}

/**
 * The ledger as compact markdown: sections Files, Commands, Errors, Tests, References, rows in first-seen
 * order, paths, commands, symbols and error strings copied verbatim (in code spans). With `maxTokens`, rows are
 * dropped least important first (searches, plain commands and read-only files before changed files, errors and
 * failing test runs; the latest test run last) and, among equals, the row deepest in its section first, so
 * sections shrink evenly from their ends; each section that lost rows ends with `(+N more)`.
 */
export function renderLedger(snapshot: LedgerSnapshot, options: RenderLedgerOptions = {}): string {
  const { maxTokens, maxChangesPerFile = 4, maxCommandChars = 200 } = options;
  const rows = rowsOf(snapshot, { maxChangesPerFile, maxCommandChars });
  const kept = new Set(rows);
  const full = assemble(rows, kept);
  if (maxTokens === undefined) return full;
  if (options.counter === undefined && defaultCounter === undefined) defaultCounter = createO200kCounter();
  const counter = options.counter ?? defaultCounter!;
  const total = counter.count(full);
  if (total <= maxTokens) return full;

  const dropOrder = [...rows].sort(
    (left, right) =>
      left.importance - right.importance ||
      right.position - left.position ||
      sectionTitles.indexOf(right.section) - sectionTitles.indexOf(left.section),
  );
  // Estimate with per-row counts (tokens barely interact across newlines), then confirm with an exact count.
  const rowTokens = new Map(rows.map((row) => [row, counter.count(row.text) + 1]));
  const moreLineTokens = 8;
  const sectionsCut = new Set<SectionTitle>();
  let next = 0;
  let estimate = total;
  for (;;) {
    while (next < dropOrder.length && estimate > maxTokens) {
      const row = dropOrder[next++]!;
      kept.delete(row);
      estimate -= rowTokens.get(row)!;
      if (!sectionsCut.has(row.section)) {
        sectionsCut.add(row.section);
        estimate += moreLineTokens;
      }
    }
    const text = assemble(rows, kept);
    estimate = counter.count(text);
    if (estimate <= maxTokens || next >= dropOrder.length) return text;
  }
}
