/**
 * The anchored record read back from a summary's markdown. A summary message carries its record in its metadata,
 * but metadata does not survive a trip through a provider's format: an agent that stores its conversation as
 * OpenAI or Anthropic messages hands the next compaction the text alone. Read back, the summary is merged into
 * again rather than folded away as prose (or compressed as prose first), so what it holds survives.
 */

import { readCodeSpan } from '../ledger/index.js';
import {
  type AnchoredSummary,
  emptyAnchoredSummary,
  type SummaryFile,
  type SummaryTask,
} from './anchored-summary.js';
import { anchoredSummaryHeaderPattern, sectionTitles } from './render-anchored-summary.js';

type SectionKey = keyof typeof sectionTitles;

/** Sections by title, in the order they are rendered. */
const sectionsByTitle = new Map<string, { key: SectionKey; order: number }>(
  Object.entries(sectionTitles).map(([key, title], order) => [title, { key: key as SectionKey, order }]),
);

/** The line a capped rendering closes with, naming what it left out. */
const closingLinePrefix = 'In the archive, not shown: ';

const handlePattern = /^h-[0-9a-f]+$/;

/**
 * The record a summary rendered by `renderAnchoredSummary` shows, or undefined when `text` is not one. What the
 * rendering left out (lines cut by a cap, lines the conversation showed) is not in it; lines of written code come
 * back as `changes` and all excerpts as `excerpts` (which of them were favoured is not written down), and the
 * handles are the `Archived` section's or else those the header names (an archived index's, when it names one).
 */
export function parseRenderedSummary(text: string): AnchoredSummary | undefined {
  if (!text.startsWith('[precis summary of ')) return undefined;
  const lines = text.split('\n');
  const header = anchoredSummaryHeaderPattern.exec(lines[0]!);
  if (header === null) return undefined;
  const body = lines.slice(1);
  // The closing line comes last, after a blank line.
  if (body.length >= 2 && body.at(-1)!.startsWith(closingLinePrefix) && body.at(-2) === '') body.splice(-2);
  if (body.length === 0) return withHeader(emptyAnchoredSummary(), header);
  if (body[0] !== '' || body.length < 2) return undefined;
  const first = sectionAt(body, 1, -1);
  if (first === undefined) return undefined;
  // The intent is the user's text, headings and all: it ends at the first following heading from which the
  // rest reads as sections. Trimmed, as the rendering trims it (a prefix of its lines may end in blank ones).
  if (first.key === 'intent') {
    for (let end = 2; end < body.length; end++) {
      const next = body[end - 1] === '' ? sectionAt(body, end, first.order) : undefined;
      if (next === undefined) continue;
      const record = sectionsFrom(body, end);
      if (record === undefined) continue;
      return withHeader(withIntent(record, body.slice(2, end - 1)), header);
    }
    return withHeader(withIntent(emptyAnchoredSummary(), body.slice(2)), header);
  }
  const record = sectionsFrom(body, 1);
  return record === undefined ? undefined : withHeader(record, header);
}

/** The section whose heading is `lines[index]`, when it is one that may follow the section at `afterOrder`. */
function sectionAt(
  lines: readonly string[],
  index: number,
  afterOrder: number,
): { key: SectionKey; order: number } | undefined {
  const line = lines[index];
  if (line === undefined || !line.startsWith('## ')) return undefined;
  const section = sectionsByTitle.get(line.slice(3));
  return section !== undefined && section.order > afterOrder ? section : undefined;
}

/**
 * The record of the sections from the heading at `start` on (not the intent's), or undefined when a line is
 * out of place: a section's lines are bullets (an item's further lines indented two spaces), a blank line
 * comes only before a heading, and headings come in their rendered order.
 */
function sectionsFrom(lines: readonly string[], start: number): AnchoredSummary | undefined {
  const record = emptyAnchoredSummary();
  let order = sectionsByTitle.get(sectionTitles.intent)!.order;
  let index = start;
  while (index < lines.length) {
    const section = sectionAt(lines, index, order);
    if (section === undefined || section.key === 'intent') return undefined;
    order = section.order;
    let from = index + 1;
    // A section shown empty has one empty line (renderings before this parser gave a heading to a section whose
    // every line an earlier one showed).
    if (lines[from] === '' && (from + 1 === lines.length || lines[from + 1] === '')) from++;
    let end = from;
    while (end < lines.length && lines[end] !== '') end++;
    // A blank line ends a section only before the next heading (or a section shown empty).
    if (end < lines.length && sectionAt(lines, end + 1, order) === undefined) return undefined;
    if (!addSection(record, section.key, lines.slice(from, end))) return undefined;
    index = end + 1;
  }
  return record;
}

/** Adds a section's lines to `record`; false when they are not what the section renders. */
function addSection(record: AnchoredSummary, key: SectionKey, lines: readonly string[]): boolean {
  if (key === 'archived') {
    const handles = lines.flatMap((line) => line.split(', '));
    if (!handles.every((handle) => handlePattern.test(handle))) return false;
    record.handles.push(...handles);
    return true;
  }
  const items = bulletItems(lines);
  if (items === undefined) return false;
  switch (key) {
    case 'files': {
      const files = items.map(fileOfRow);
      if (files.some((file) => file === undefined)) return false;
      record.files.push(...(files as SummaryFile[]));
      return true;
    }
    case 'locations': {
      const spans = items.map((item) => readCodeSpan(item));
      if (spans.some((span, at) => span === undefined || span.end !== items[at]!.length)) return false;
      record.locations.push(...spans.map((span) => span!.text));
      return true;
    }
    case 'tasks': {
      const tasks = items.map(taskOfItem);
      if (tasks.some((task) => task === undefined)) return false;
      record.tasks.push(...(tasks as SummaryTask[]));
      return true;
    }
    case 'code':
      record.changes.push(...items);
      return true;
    case 'replaced':
      record.replacedCode.push(...items);
      return true;
    case 'intent':
      return false;
    default:
      record[key].push(...items);
      return true;
  }
}

/** The items of bulleted lines (`- item`, its further lines indented two spaces), or undefined. */
function bulletItems(lines: readonly string[]): string[] | undefined {
  const items: string[] = [];
  for (const line of lines) {
    if (line.startsWith('- ')) items.push(line.slice(2));
    else if (line.startsWith('  ') && items.length > 0) items[items.length - 1] += `\n${line.slice(2)}`;
    else return undefined;
  }
  return items;
}

/** A file's row: `` `path` status`` and, after `: `, what changed. */
function fileOfRow(row: string): SummaryFile | undefined {
  const span = readCodeSpan(row);
  if (span === undefined || row[span.end] !== ' ') return undefined;
  const rest = row.slice(span.end + 1);
  const colon = rest.indexOf(': ');
  const status = colon === -1 ? rest : rest.slice(0, colon);
  if (status === '') return undefined;
  return colon === -1
    ? { path: span.text, status }
    : { path: span.text, status, detail: rest.slice(colon + 2) };
}

/** A task's item: `[ ] text` or `[x] text`. */
function taskOfItem(item: string): SummaryTask | undefined {
  const mark = /^\[( |x)\] /.exec(item);
  return mark === null ? undefined : { text: item.slice(4), done: mark[1] === 'x' };
}

/** `record` with the intent the lines show, when they show any: an empty one would stand in a merge's way. */
function withIntent(record: AnchoredSummary, lines: readonly string[]): AnchoredSummary {
  const intent = lines.join('\n').trim();
  if (intent !== '') record.intent = intent;
  return record;
}

function withHeader(record: AnchoredSummary, header: RegExpExecArray): AnchoredSummary {
  record.messageCount = Number(header[1]);
  if (record.handles.length === 0 && header[2] !== undefined)
    record.handles.push(...header[2].split(', ').filter((handle) => handlePattern.test(handle)));
  return record;
}
