/**
 * Longest line counted on its own. Exact o200k counters count text without runs of over 1000 characters
 * (the long-run guard) exactly; a shorter line cannot hold such a run, and no piece of the joined text crosses
 * a line.
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
 * or, after punctuation, into more newlines and `/` (` ?[^\s\p{L}\p{N}]+[\r\n/]*`); so the text cut after each
 * line's newline(s) counts as its parts when no line but the first starts with whitespace or `/`. A line
 * ending in a letter or digit keeps its pieces when newlines follow (they are a piece of their own), so its
 * part is `count(line) + count(newlines)` without counting it again; any other line is counted with them.
 */
export function countJoinedLines(
  blocks: ReadonlyArray<readonly string[]>,
  count: (text: string) => number,
  knownTokens: ReadonlyArray<ReadonlyArray<number | undefined>> = [],
): number | undefined {
  let total = 0;
  for (let blockIndex = 0; blockIndex < blocks.length; blockIndex++) {
    const lines = blocks[blockIndex]!;
    if (lines.length === 0) return undefined;
    for (let lineIndex = 0; lineIndex < lines.length; lineIndex++) {
      const line = lines[lineIndex]!;
      if (line.length > maxLineChars) return undefined;
      if ((blockIndex > 0 || lineIndex > 0) && startsJoinable.test(line)) return undefined;
      const newlines = lineIndex < lines.length - 1 ? '\n' : blockIndex < blocks.length - 1 ? '\n\n' : '';
      const known = knownTokens[blockIndex]?.[lineIndex];
      if (newlines === '') total += known ?? count(line);
      else if (endsInWordCharacter.test(line)) total += (known ?? count(line)) + count(newlines);
      else total += count(line + newlines);
    }
  }
  return total;
}
