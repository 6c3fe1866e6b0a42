/**
 * Code fences in agent markdown exports (SpecStory, aider), found line by line in linear time.
 *
 * Stricter than CommonMark in one way: a closing fence may not be indented deeper than its opener. A
 * ```` ```diff ```` block that shows a markdown file prints that file's own fences behind the two-column diff
 * prefix (`  ```bash`), and CommonMark would let such a line close the diff block.
 */

export interface FenceOpener {
  marker: '`' | '~';
  /** Number of marker characters (3 or more). */
  length: number;
  /** Spaces before the fence (0 to 3). */
  indent: number;
  /** The info string (`bash`, `diff`, `python`), trimmed; empty for a plain fence. */
  info: string;
}

const openerPattern = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const closerPattern = /^( {0,3})(`{3,}|~{3,})[ \t]*$/;

/** The fence a line opens, if it is a fence line at all. */
export function fenceOpener(line: string): FenceOpener | undefined {
  const match = openerPattern.exec(line);
  if (match === null) return undefined;
  const fence = match[2]!;
  const info = match[3]!;
  const marker = fence[0] === '~' ? '~' : '`';
  // A backtick fence's info string may not contain backticks: "```js``` inline" is not a fence.
  if (marker === '`' && info.includes('`')) return undefined;
  return { marker, length: fence.length, indent: match[1]!.length, info: info.trim() };
}

export function closesFence(line: string, opener: FenceOpener): boolean {
  const match = closerPattern.exec(line);
  if (match === null) return false;
  const fence = match[2]!;
  return fence[0] === opener.marker && fence.length >= opener.length && match[1]!.length <= opener.indent;
}

export interface FenceScanner {
  /**
   * Index of the line that closes the fence `opener` opened at line `start`, or -1 when no line before the
   * next barrier (or the end) closes it: an unclosed fence, which callers treat as plain text. Amortised
   * linear over a forward walk: failed and successful searches are both remembered.
   */
  findClose(start: number, opener: FenceOpener): number;
}

/**
 * A scanner over `lines`. `isBarrier` names line indexes a fence never spans (a session header): a fence still open
 * there is unclosed. Failed searches are remembered, so a run of unclosed fences costs one scan, not one each.
 */
export function createFenceScanner(
  lines: readonly string[],
  isBarrier: (index: number) => boolean = () => false,
): FenceScanner {
  // For a failed search of (marker, length, indent): the line where it stopped. A later opener before that
  // line with a longer or equal fence and a shallower or equal indent cannot be closed either.
  const failures = new Map<string, number>();
  const knownUnclosed = (start: number, opener: FenceOpener): boolean => {
    for (let length = 3; length <= opener.length; length++) {
      for (let indent = opener.indent; indent <= 3; indent++) {
        const stop = failures.get(`${opener.marker}${length}:${indent}`);
        if (stop !== undefined && start < stop) return true;
      }
    }
    return false;
  };
  // For a successful search: where it started and the closing line. An opener of the same shape between
  // the two closes at the same line.
  const successes = new Map<string, { from: number; close: number }>();
  return {
    findClose(start, opener) {
      const key = `${opener.marker}${opener.length}:${opener.indent}`;
      const known = successes.get(key);
      if (known !== undefined && known.from <= start && start < known.close) return known.close;
      if (knownUnclosed(start, opener)) return -1;
      let index = start + 1;
      for (; index < lines.length; index++) {
        if (closesFence(lines[index]!, opener)) {
          successes.set(key, { from: start, close: index });
          return index;
        }
        if (isBarrier(index)) break;
      }
      failures.set(key, index);
      return -1;
    },
  };
}

/** The text's lines, with CRLF and lone CR line ends read as LF. */
export function splitLines(text: string): string[] {
  return text.replace(/\r\n?/g, '\n').split('\n');
}

/**
 * Finds the first line at or after `from` that contains `needle`, remembering the last answer so a forward
 * walk over the file stays linear even when the needle is missing.
 */
export function createLineFinder(lines: readonly string[], needle: string): (from: number) => number {
  let cachedFrom = Number.POSITIVE_INFINITY;
  let cachedResult = -1;
  return (from) => {
    if (cachedFrom <= from && (cachedResult === -1 || cachedResult >= from)) return cachedResult;
    let result = -1;
    for (let index = from; index < lines.length; index++) {
      if (lines[index]!.includes(needle)) {
        result = index;
        break;
      }
    }
    cachedFrom = from;
    cachedResult = result;
    return result;
  };
}

const isBlankLine = (text: string, from: number, to: number) => {
  for (let index = from; index < to; index++) {
    const code = text.charCodeAt(index);
    if (code !== 32 && code !== 9) return false;
  }
  return true;
};

/** The text without its leading and trailing blank lines (lines of spaces and tabs only). Linear. */
export function trimBlankLines(text: string): string {
  let start = 0;
  for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', start)) {
    if (!isBlankLine(text, start, newline)) break;
    start = newline + 1;
  }
  let end = text.length;
  for (
    let newline = text.lastIndexOf('\n', end - 1);
    newline >= start;
    newline = text.lastIndexOf('\n', end - 1)
  ) {
    if (!isBlankLine(text, newline + 1, end)) break;
    end = newline;
  }
  return text.slice(start, end);
}
