/**
 * Longest line, or run of lines counted together, counted on its own. Exact o200k counters count text without
 * runs of over 1000 characters (the long-run guard) exactly; a shorter text cannot hold such a run, and no piece
 * of the joined text crosses a place where it is cut.
 */
const maxLineChars = 990;

/** A line after which a newline is a piece of its own: it ends in a letter or digit. */
const endsInWordCharacter = /[A-Za-z0-9]$/;
/** A line the piece before it may run into: it starts with whitespace or `/` (or is empty). */
const startsJoinable = /^(?:[\s/]|$)/;

/**
 * The o200k_base tokens of `blocks.map((lines) => lines.join('\n')).join('\n\n')`, from counts of its lines
 * (which a renderer that fits lines to a cap has counted already); undefined when the text must be counted
 * whole. `count` must count exactly in o200k_base (`createO200kCounter()`); memoising it is what makes this pay.
 * `knownTokens[block][line]`, where given, is `count` of that line, known already.
 *
 * o200k's pre-tokenizer cuts text into pieces and BPE runs on each piece alone, so a text cut where pieces
 * end counts as the sum of its parts. A piece runs past a newline only into whitespace (`\s*[\r\n]+`, `\s+`)
 * or, after punctuation, into more newlines and `/` (` ?[^\s\p{L}\p{N}]+[\r\n/]*`); so the text cut after a
 * line's newline(s) counts as its parts when the next line starts with neither whitespace nor `/`. A line that
 * does (an indented or blank line of a task) is counted together with the lines before it, back to one after
 * which the text may be cut. A line ending in a letter or digit keeps its pieces when newlines follow (they
 * are a piece of their own), so its part is `count(line) + count(newlines)` without counting it again; any
 * other line is counted with them.
 */
export function countJoinedLines(
  blocks: ReadonlyArray<readonly string[]>,
  count: (text: string) => number,
  knownTokens: ReadonlyArray<ReadonlyArray<number | undefined>> = [],
): number | undefined {
  const lines: Array<{ text: string; newlines: string; known: number | undefined }> = [];
  for (let blockIndex = 0; blockIndex < blocks.length; blockIndex++) {
    const blockLines = blocks[blockIndex]!;
    if (blockLines.length === 0) return undefined;
    for (let lineIndex = 0; lineIndex < blockLines.length; lineIndex++) {
      const newlines =
        lineIndex < blockLines.length - 1 ? '\n' : blockIndex < blocks.length - 1 ? '\n\n' : '';
      lines.push({ text: blockLines[lineIndex]!, newlines, known: knownTokens[blockIndex]?.[lineIndex] });
    }
  }
  let total = 0;
  for (let index = 0; index < lines.length; index++) {
    const { text, newlines, known } = lines[index]!;
    if (text.length > maxLineChars) return undefined;
    if (index + 1 < lines.length && startsJoinable.test(lines[index + 1]!.text)) {
      // The text may not be cut before the next line: it is counted with this one, and so are the lines after
      // it until one before which the text may be cut.
      let together = text + newlines;
      while (index + 1 < lines.length && startsJoinable.test(lines[index + 1]!.text)) {
        index++;
        together += lines[index]!.text + lines[index]!.newlines;
      }
      if (together.length > maxLineChars) return undefined;
      total += count(together);
    } else if (newlines === '') total += known ?? count(text);
    else if (endsInWordCharacter.test(text)) total += (known ?? count(text)) + count(newlines);
    else total += count(text + newlines);
  }
  return total;
}
