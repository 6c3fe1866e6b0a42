/**
 * Fenced code blocks in markdown text, found line by line in linear time: what strategies keep byte for byte,
 * and where the ledger and the summary find code an agent wrote in its prose. One reading of fences for all
 * of them (SpecStory's importer has a stricter scanner of its own, for exports that nest fences).
 *
 * As CommonMark has it: a fence is 3 or more backticks or tildes indented by at most 3 spaces; a backtick
 * fence's info string holds no backtick; the closing fence is of the same character, at least as long, with
 * nothing but whitespace after it; an unclosed fence runs to the end of the text.
 */

export interface FencedBlock {
  /** Offset of the opening fence line. */
  start: number;
  /** Offset of the end of the closing fence line (without its newline); the text's length when unclosed. */
  end: number;
  /** The lines between the fences, without the newline before the closing fence. */
  body: string;
  /** The opening fence's info string (`bash`, `ts`), trimmed; empty for a plain fence. */
  info: string;
  closed: boolean;
}

// `[\s\S]`, not `.`: a line of a CRLF text ends in `\r`.
const fenceOpening = /^ {0,3}(`{3,}|~{3,})([\s\S]*)$/;

export function fencedBlocks(text: string): FencedBlock[] {
  const blocks: FencedBlock[] = [];
  if (!text.includes('```') && !text.includes('~~~')) return blocks;
  let offset = 0;
  let open: { marker: string; start: number; bodyStart: number; info: string } | undefined;
  while (offset <= text.length) {
    const lineEnd = text.indexOf('\n', offset);
    const end = lineEnd === -1 ? text.length : lineEnd;
    const line = text.slice(offset, end);
    if (open === undefined) {
      const opening = fenceOpening.exec(line);
      const marker = opening?.[1] ?? '';
      const info = opening?.[2] ?? '';
      if (opening !== null && !(marker.startsWith('`') && info.includes('`')))
        open = { marker, start: offset, bodyStart: Math.min(end + 1, text.length), info: info.trim() };
    } else if (closesFence(line, open.marker)) {
      blocks.push({
        start: open.start,
        end,
        body: text.slice(open.bodyStart, Math.max(open.bodyStart, offset - 1)),
        info: open.info,
        closed: true,
      });
      open = undefined;
    }
    if (lineEnd === -1) break;
    offset = lineEnd + 1;
  }
  if (open !== undefined)
    blocks.push({
      start: open.start,
      end: text.length,
      body: text.slice(open.bodyStart),
      info: open.info,
      closed: false,
    });
  return blocks;
}

/**
 * The text with `rewrite` applied to each stretch of prose around its fenced blocks (the text before the first, between
 * two, after the last); the blocks themselves stay byte for byte.
 */
export function mapProse(text: string, rewrite: (prose: string) => string): string {
  let result = '';
  let at = 0;
  for (const block of fencedBlocks(text)) {
    result += rewrite(text.slice(at, block.start)) + text.slice(block.start, block.end);
    at = block.end;
  }
  return result + rewrite(text.slice(at));
}

/** The bodies of the closed fenced blocks: code an author wrote out whole (an unclosed fence may be cut off). */
export function closedFenceBodies(text: string): string[] {
  return fencedBlocks(text)
    .filter((block) => block.closed)
    .map((block) => block.body);
}

function closesFence(line: string, marker: string): boolean {
  const trimmed = line.trim();
  if (trimmed.length < marker.length || !/^ {0,3}\S/.test(line)) return false;
  const character = marker[0];
  for (const char of trimmed) if (char !== character) return false;
  return true;
}
