/**
 * Cutting a long text to its first and last lines, the middle replaced by a marker that names the archived
 * original: what a command printed first and how it ended, a file's head and tail. Used where an output or a call
 * argument must shrink but not vanish (the engine's last-turn trim, the output that brings a conversation within
 * budget when stubbing it whole would leave room unused).
 */

/** Share of a trimmed text's tokens kept from its start; the rest from its end. */
const headShare = 0.65;

/** Longest piece a trimmed text is cut at: a line, or a slice of a longer one (minified JSON, a log line). */
const maxPieceChars = 200;

/** What a trimmed text was: a tool's output, or an argument of the call (a file the agent wrote, say). */
export type TrimmedSubject = 'output' | 'argument';

/**
 * What the middle of a trimmed text becomes; `expand` gives the whole original back. A middle within one line
 * (of minified JSON, say) is counted in characters.
 */
export function trimmedTextMarker(
  count: number,
  handle: string,
  unit: 'line' | 'character' = 'line',
  subject: TrimmedSubject = 'output',
): string {
  return `[… ${count} ${unit}${count === 1 ? '' : 's'} of this ${subject} archived: ${handle} …]`;
}

/** A marker `trimmedTextMarker` wrote: a text holding one was trimmed already. */
export const trimmedTextMarkerPattern =
  /\[… \d+ (?:lines?|characters?) of this (?:output|argument) archived: (h-[0-9a-f]+) …\]/;

/** The handle of the original a trimmed text's marker names, or undefined when `text` holds no marker. */
export function trimmedTextHandle(text: string): string | undefined {
  return trimmedTextMarkerPattern.exec(text)?.[1];
}

/** A unified diff's file header: which file the hunks after it change. */
const diffFileHeader = /^diff --git \S/;
/** Of a trimmed output's tokens, the most the file headers of a diff cut in its middle may take. */
const maxHeaderShare = 0.4;

/**
 * `text` cut to about `maxTokens`: its first pieces (lines, or slices of long lines) up to `headShare` of them,
 * its last pieces up to the rest, and `trimmedTextMarker` for the middle. Of an output, the file headers of a diff
 * (`diff --git a/x b/x`) in the middle stay, up to `maxHeaderShare` of the tokens, each between the markers of
 * what was cut around it: which files a diff changes is what it says first (a submission's scratch file, say).
 * Undefined when nothing would be cut.
 */
export function keepHeadAndTail(
  text: string,
  maxTokens: number,
  handle: string,
  count: (piece: string) => number,
  subject: TrimmedSubject = 'output',
): string | undefined {
  const pieces = piecesOf(text);
  const headers =
    subject === 'output' ? diffHeaders(text, pieces, maxTokens * maxHeaderShare, count) : undefined;
  const room = maxTokens - (headers?.tokens ?? 0);
  const headTokens = room * headShare;
  const tailTokens = room - headTokens;
  let head = 0;
  for (let used = 0; head < pieces.length; head++) {
    used += count(text.slice(pieces[head]![0], pieces[head]![1]));
    if (used > headTokens) break;
  }
  let tail = 0;
  for (let used = 0; tail < pieces.length - head; tail++) {
    const [start, end] = pieces[pieces.length - 1 - tail]!;
    used += count(text.slice(start, end));
    if (used > tailTokens) break;
  }
  // The marker must stand for at least two pieces, or it saves nothing.
  if (pieces.length - head - tail < 2) return undefined;
  const headEnd = head === 0 ? 0 : pieces[head - 1]![1];
  const tailStart = tail === 0 ? text.length : pieces[pieces.length - tail]![0];
  // The middle as runs of cut pieces between the headers kept in it.
  const kept = (headers?.pieces ?? []).filter((piece) => piece >= head && piece < pieces.length - tail);
  let result = text.slice(0, headEnd);
  let runStart = headEnd;
  const cut = (runEnd: number) => {
    if (runEnd <= runStart) return;
    // Each marker on a line of its own.
    const before = result === '' || result.endsWith('\n') ? '' : '\n';
    result += `${before}${middleMarker(text.slice(runStart, runEnd), handle, subject)}`;
    if (runEnd < text.length) result += '\n';
  };
  for (const piece of kept) {
    const [start, end] = pieces[piece]!;
    cut(start);
    result += text.slice(start, end);
    runStart = end;
  }
  cut(tailStart);
  return result + text.slice(tailStart);
}

/** The marker for a cut middle: its lines, or its characters when it lies within one line. */
function middleMarker(middle: string, handle: string, subject: TrimmedSubject): string {
  const lineCount = middle.split('\n').length - (middle.endsWith('\n') ? 1 : 0);
  return lineCount === 1 && !middle.endsWith('\n')
    ? trimmedTextMarker(middle.length, handle, 'character', subject)
    : trimmedTextMarker(lineCount, handle, 'line', subject);
}

/**
 * The pieces of a diff's file headers (whole lines) in `text`, the first ones within `maxTokens`, and what they
 * cost; undefined when `text` holds none.
 */
function diffHeaders(
  text: string,
  pieces: ReadonlyArray<[number, number]>,
  maxTokens: number,
  count: (piece: string) => number,
): { pieces: number[]; tokens: number } | undefined {
  if (!text.includes('diff --git ')) return undefined;
  const kept: number[] = [];
  let tokens = 0;
  pieces.forEach(([start, end], index) => {
    if (start > 0 && text[start - 1] !== '\n') return;
    const line = text.slice(start, end);
    if (!diffFileHeader.test(line)) return;
    const cost = count(line);
    if (tokens + cost > maxTokens) return;
    kept.push(index);
    tokens += cost;
  });
  return kept.length === 0 ? undefined : { pieces: kept, tokens };
}

/** Offsets `[start, end)` of the lines of `text` (each with its newline), longer ones cut into slices. */
function piecesOf(text: string): Array<[number, number]> {
  const pieces: Array<[number, number]> = [];
  for (let start = 0; start < text.length; ) {
    const newline = text.indexOf('\n', start);
    const lineEnd = newline === -1 ? text.length : newline + 1;
    for (let sliceStart = start; sliceStart < lineEnd; sliceStart += maxPieceChars)
      pieces.push([sliceStart, Math.min(lineEnd, sliceStart + maxPieceChars)]);
    start = lineEnd;
  }
  return pieces;
}
