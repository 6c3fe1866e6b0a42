/**
 * Cutting a long text to its first and last lines, the middle replaced by a marker that names the archived
 * original: what a command printed first and how it ended, a file's head and tail; of an output that is a diff,
 * its file headers and changed lines, between markers. Used where an output or a call argument must shrink but
 * not vanish (the engine's last-turn trim, the output that brings a conversation within budget when stubbing it
 * whole would leave room unused).
 */

/** Share of a trimmed text's tokens kept from its start; the rest from its end. */
const headShare = 0.65;

/** Longest piece a trimmed text is cut at: a line, or a slice of a longer one (minified JSON, a log line). */
const maxPieceChars = 200;

/** What a trimmed text was: a tool's output, or an argument of the call (a file the agent wrote, say). */
export type TrimmedSubject = 'output' | 'argument';

/**
 * What the middle of a trimmed text becomes; `expand` gives the whole original back. A middle within one line
 * (of minified JSON, say) is counted in characters. A text cut in several places names the handle in its first
 * marker only (`handle` undefined for the others): they all stand for parts of the one original.
 */
export function trimmedTextMarker(
  count: number,
  handle: string | undefined,
  unit: 'line' | 'character' = 'line',
  subject: TrimmedSubject = 'output',
): string {
  const where = handle === undefined ? '' : `: ${handle}`;
  return `[… ${count} ${unit}${count === 1 ? '' : 's'} of this ${subject} archived${where} …]`;
}

/** A marker `trimmedTextMarker` wrote: a text holding one was trimmed already. */
export const trimmedTextMarkerPattern =
  /\[… \d+ (?:lines?|characters?) of this (?:output|argument) archived: (h-[0-9a-f]+) …\]/;

/** The handle of the original a trimmed text's marker names, or undefined when `text` holds no marker. */
export function trimmedTextHandle(text: string): string | undefined {
  return trimmedTextMarkerPattern.exec(text)?.[1];
}

/** A unified diff's hunk header: a text holding one is a diff (`git diff`, `diff -u`, a submission's patch). */
const hunkHeaderLine = /^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@/m;
/** A git diff's file header: which file the hunks after it change. */
const gitFileHeader = /^diff --git \S/;
/** A plain unified diff's file header (`diff -u`), where there are no git headers. */
const plainFileHeader = /^(?:---|\+\+\+) \S/;
/**
 * A diff's context: unchanged lines (a space, or nothing), blank changed lines, hunk headers (where the lines
 * after them are), new, deleted and renamed files.
 */
const diffContextLine = /^(?: |$|[-+]\s*$|@@ |(?:new|deleted) file mode |rename (?:from|to) )/;
/**
 * A diff's bookkeeping, which says least: `index 9735ce1..14ff8c4`, mode changes, similarity, the `---`/`+++`
 * pair beside a git header (which names the same file), `\ No newline at end of file`.
 */
const diffBookkeepingLine = /^(?:index |old mode |new mode |similarity index |(?:---|\+\+\+) |\\ )/;
/** Of a trimmed diff's tokens, the most its file headers may take. */
const maxHeaderShare = 0.4;

/**
 * `text` cut to about `maxTokens`: its first pieces (lines, or slices of long lines) up to `headShare` of them,
 * its last pieces up to the rest, and `trimmedTextMarker` for the middle. An output that is a diff keeps its
 * changes rather than its ends (see `keepDiffChanges`). Undefined when nothing would be cut.
 */
export function keepHeadAndTail(
  text: string,
  maxTokens: number,
  handle: string,
  count: (piece: string) => number,
  subject: TrimmedSubject = 'output',
): string | undefined {
  const pieces = piecesOf(text);
  if (subject === 'output' && hunkHeaderLine.test(text))
    return keepDiffChanges(text, pieces, maxTokens, handle, count);
  const headTokens = maxTokens * headShare;
  const tailTokens = maxTokens - headTokens;
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
  const middle = middleMarker(text.slice(headEnd, tailStart), handle, subject);
  const opensLine = headEnd === 0 || text[headEnd - 1] === '\n';
  return `${text.slice(0, headEnd)}${onALineOfItsOwn(middle, opensLine, tailStart === text.length)}${text.slice(tailStart)}`;
}

/**
 * A diff cut to about `maxTokens` (markers counted), keeping what it changed rather than its ends: first its file
 * headers (`diff --git a/x b/x`, up to `maxHeaderShare` of the tokens: which files a diff changes is what it says
 * first, a submission's scratch file say), then its changed lines (`+`/`-`) and any text around the diff, in
 * order, each that fits; then context (hunk headers, unchanged lines) and last bookkeeping (`index`, `---`/`+++`)
 * where they extend what is kept. A head and a tail kept the context and the blank lines a patch ends on and cut
 * the change in its middle. Each run of cut pieces becomes a marker on a line of its own, the first naming the
 * archived original (the others stand for parts of the same one); a run that costs no more than a marker stays.
 * Undefined when nothing would be cut.
 */
function keepDiffChanges(
  text: string,
  pieces: ReadonlyArray<[number, number]>,
  maxTokens: number,
  handle: string,
  count: (piece: string) => number,
): string | undefined {
  const fileHeader = text.includes('diff --git ') ? gitFileHeader : plainFileHeader;
  const rank: Array<'file' | 'change' | 'context' | 'bookkeeping'> = [];
  pieces.forEach(([start, end], index) => {
    // A slice of a long line ranks as its line's first slice.
    if (start > 0 && text[start - 1] !== '\n') rank.push(rank[index - 1]!);
    else {
      const line = text.slice(start, end).replace(/\r?\n$/, '');
      rank.push(
        fileHeader.test(line)
          ? 'file'
          : diffBookkeepingLine.test(line)
            ? 'bookkeeping'
            : diffContextLine.test(line)
              ? 'context'
              : 'change',
      );
    }
  });
  const tokens: Array<number | undefined> = [];
  const tokensOf = (index: number) => {
    tokens[index] ??= count(text.slice(pieces[index]![0], pieces[index]![1]));
    return tokens[index];
  };
  const last = pieces.length - 1;
  // A diff within the tokens asked is left whole (its pieces are counted up to there, as the head would be).
  let whole = 0;
  for (let index = 0; index <= last && whole <= maxTokens; index++) whole += tokensOf(index);
  if (whole <= maxTokens) return undefined;
  const kept = new Uint8Array(pieces.length);
  // Each run of cut pieces costs a marker: keeping a piece inside a run splits it (one more marker), at its end
  // shortens it, alone in it removes it. The first marker names the handle; the widest of each kind prices them.
  const markerTokens = count(trimmedTextMarker(text.length, undefined)) + 1;
  const firstMarkerTokens = count(trimmedTextMarker(text.length, handle)) + 1;
  const markersAdded = (index: number) => {
    const left = index === 0 || kept[index - 1] === 1;
    const right = index === last || kept[index + 1] === 1;
    return left && right ? -1 : left || right ? 0 : 1;
  };
  let used = firstMarkerTokens;
  const keep = (index: number, limit: number): boolean => {
    const added = markersAdded(index);
    // A piece takes a token at least: once the room is short, most are refused without counting them.
    if (used + 1 + added * markerTokens > limit) return false;
    const cost = tokensOf(index) + added * markerTokens;
    if (used + cost > limit) return false;
    kept[index] = 1;
    used += cost;
    return true;
  };
  // The headers' share counts their own tokens; the markers between them count towards the whole.
  let headerTokens = 0;
  for (let index = 0; index <= last; index++) {
    if (rank[index] !== 'file' || headerTokens + tokensOf(index) > maxTokens * maxHeaderShare) continue;
    if (keep(index, maxTokens)) headerTokens += tokensOf(index);
  }
  for (let index = 0; index <= last; index++) if (rank[index] === 'change') keep(index, maxTokens);
  for (const around of ['context', 'bookkeeping'] as const)
    for (let index = 0; index <= last; index++)
      if (kept[index] === 0 && rank[index] === around && markersAdded(index) <= 0) keep(index, maxTokens);
  let result = '';
  let cutPieces = 0;
  for (let index = 0; index <= last; ) {
    if (kept[index] === 1) {
      result += text.slice(pieces[index]![0], pieces[index]![1]);
      index++;
      continue;
    }
    let end = index;
    while (end <= last && kept[end] === 0) end++;
    const runStart = pieces[index]![0];
    const runEnd = end <= last ? pieces[end]![0] : text.length;
    const run = text.slice(runStart, runEnd);
    // The text's last line, without a newline, is a line too when the run starts it.
    const wholeLines = runEnd === text.length && (runStart === 0 || text[runStart - 1] === '\n');
    const marker = middleMarker(run, cutPieces === 0 ? handle : undefined, 'output', wholeLines);
    // A short run may cost no more than a marker (one without the handle: keeping the first run would pass the
    // handle on to the next).
    const shortest = middleMarker(run, undefined, 'output', wholeLines);
    if (run.length <= 3 * shortest.length && count(run) <= count(shortest) + 1) result += run;
    else {
      result += onALineOfItsOwn(marker, result === '' || result.endsWith('\n'), runEnd === text.length);
      cutPieces += end - index;
    }
    index = end;
  }
  // The marker must stand for at least two pieces, or it saves nothing.
  return cutPieces < 2 ? undefined : result;
}

/** `marker` on a line of its own: after a newline unless `opensLine`, with one of its own unless `endsText`. */
function onALineOfItsOwn(marker: string, opensLine: boolean, endsText: boolean): string {
  return `${opensLine ? '' : '\n'}${marker}${endsText ? '' : '\n'}`;
}

/**
 * The marker for a cut middle: its lines, or its characters when it lies within one line (not `wholeLines`: the
 * text's last line, cut whole).
 */
function middleMarker(
  middle: string,
  handle: string | undefined,
  subject: TrimmedSubject,
  wholeLines = false,
): string {
  const lineCount = middle.split('\n').length - (middle.endsWith('\n') ? 1 : 0);
  return lineCount === 1 && !middle.endsWith('\n') && !wholeLines
    ? trimmedTextMarker(middle.length, handle, 'character', subject)
    : trimmedTextMarker(lineCount, handle, 'line', subject);
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
