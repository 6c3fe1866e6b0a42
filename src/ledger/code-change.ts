/**
 * What an edit changed, in a few numbers and names: lines added and removed, hunks, and the symbols (functions,
 * classes, methods, types) declared on or around the changed lines. Linear in the edit's size; no character diff.
 */

export interface ChangeStats {
  linesAdded: number;
  linesRemoved: number;
  symbols: string[];
}

export interface PatchFileChange extends ChangeStats {
  path: string;
  operation: 'add' | 'update' | 'delete';
  hunks: number;
  /** `*** Move to:` / rename target. */
  movedTo?: string;
}

const maxSymbols = 6;

const declarationPatterns: readonly RegExp[] = [
  /^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\b\s*\*?\s*([A-Za-z_$][\w$]*)/,
  /^\s*(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:pub\s+)?(?:class|interface|enum|struct|trait|module|namespace)\s+([A-Za-z_$][\w$]*)/,
  /^\s*(?:export\s+)?(?:declare\s+)?type\s+([A-Z][\w$]*)\s*(?:<[^=]*>)?\s*=/,
  /^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)/,
  /^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?fn\s+([A-Za-z_]\w*)/,
  /^\s*func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)/,
  /^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s*)?(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[A-Za-z_$][\w$]*\s*=>)/,
  /^\s*sub\s+([A-Za-z_]\w*)/,
  // Methods: `  name(args) {` / `  async name(args): T {` at the start of a line, not a call or keyword.
  /^\s*(?:(?:public|private|protected|static|async|get|set|override|readonly)\s+)*(?!(?:if|for|while|switch|catch|return|function|new|await|typeof|else|do)\b)([A-Za-z_$][\w$]*)\s*\([^)]*\)\s*(?::\s*[^{;]+)?\{\s*$/,
];

function declaredName(line: string): string | undefined {
  if (line.length > 400) return undefined;
  for (const pattern of declarationPatterns) {
    const match = pattern.exec(line);
    if (match?.[1] !== undefined) return match[1];
  }
  return undefined;
}

function addSymbol(symbols: string[], name: string | undefined): void {
  if (name !== undefined && symbols.length < maxSymbols && !symbols.includes(name)) symbols.push(name);
}

export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/** Symbols declared in `lines`, in order, at most six. */
export function symbolsIn(lines: readonly string[], into: string[] = []): string[] {
  for (const line of lines) {
    if (into.length >= maxSymbols) break;
    addSymbol(into, declaredName(line));
  }
  return into;
}

/**
 * Stats of replacing `oldText` by `newText`: lines only on one side count as removed / added (a multiset
 * difference, so moved lines cancel out). Symbols are those declared on changed lines, else those declared
 * anywhere in the old text (the edit sits inside them).
 */
export function replacementStats(oldText: string, newText: string): ChangeStats {
  const oldLines = splitLines(oldText);
  const newLines = splitLines(newText);
  const remaining = new Map<string, number>();
  for (const line of oldLines) remaining.set(line, (remaining.get(line) ?? 0) + 1);
  const added: string[] = [];
  for (const line of newLines) {
    const count = remaining.get(line) ?? 0;
    if (count > 0) remaining.set(line, count - 1);
    else added.push(line);
  }
  const removed: string[] = [];
  for (const line of oldLines) {
    const count = remaining.get(line) ?? 0;
    if (count > 0) {
      removed.push(line);
      remaining.set(line, count - 1);
    }
  }
  const symbols = symbolsIn(added);
  symbolsIn(removed, symbols);
  if (symbols.length === 0) symbolsIn(oldLines, symbols);
  if (symbols.length === 0) symbolsIn(newLines, symbols);
  return { linesAdded: added.length, linesRemoved: removed.length, symbols };
}

/** Stats of a diff body whose lines start with `+`, `-` or a space (unified diff hunks, Cursor's `edit_file`). */
export function diffBodyStats(body: string): ChangeStats & { hunks: number } {
  let linesAdded = 0;
  let linesRemoved = 0;
  let hunks = 0;
  const symbols: string[] = [];
  const context: string[] = [];
  for (const line of splitLines(body)) {
    if (line.startsWith('@@')) {
      hunks++;
      // `@@ -4,5 +4,4 @@ function name(` — the text after the second `@@` is the enclosing declaration.
      const after = /^@@[^@]*@@\s?(.*)$/.exec(line)?.[1] ?? line.slice(2).trim();
      addSymbol(symbols, declaredName(after));
      continue;
    }
    if (line.startsWith('+++') || line.startsWith('---')) continue;
    if (line.startsWith('+')) {
      linesAdded++;
      addSymbol(symbols, declaredName(line.slice(1)));
    } else if (line.startsWith('-')) {
      linesRemoved++;
      addSymbol(symbols, declaredName(line.slice(1)));
    } else if (context.length < 200) context.push(line.slice(1));
  }
  if (symbols.length === 0) symbolsIn(context, symbols);
  return { linesAdded, linesRemoved, symbols, hunks };
}

/** Parses a Codex `apply_patch` envelope (`*** Begin Patch` … `*** Update File: path` … `*** End Patch`). */
export function parseApplyPatch(patch: string): PatchFileChange[] {
  const files: PatchFileChange[] = [];
  const headerPattern = /^\*\*\* (Add|Update|Delete) File: (.+)$/;
  let current: { change: PatchFileChange; body: string[] } | undefined;
  const flush = () => {
    if (current === undefined) return;
    const stats = diffBodyStats(current.body.join('\n'));
    current.change.linesAdded = stats.linesAdded;
    current.change.linesRemoved = stats.linesRemoved;
    current.change.hunks = current.change.operation === 'update' ? Math.max(stats.hunks, 1) : 0;
    current.change.symbols = stats.symbols;
    files.push(current.change);
    current = undefined;
  };
  for (const line of splitLines(patch)) {
    const header = headerPattern.exec(line);
    if (header !== null) {
      flush();
      const operation = header[1]!.toLowerCase() as PatchFileChange['operation'];
      current = {
        change: { path: header[2]!.trim(), operation, hunks: 0, linesAdded: 0, linesRemoved: 0, symbols: [] },
        body: [],
      };
      continue;
    }
    if (current === undefined) continue;
    const move = /^\*\*\* Move to: (.+)$/.exec(line);
    if (move !== null) current.change.movedTo = move[1]!.trim();
    else if (line.startsWith('*** ')) flush();
    else current.body.push(line);
  }
  flush();
  return files;
}

/** Parses a unified diff (`--- a/x`, `+++ b/x`, `@@ … @@`) into per-file stats. */
export function parseUnifiedDiff(diff: string): PatchFileChange[] {
  const files: PatchFileChange[] = [];
  let current: { change: PatchFileChange; body: string[] } | undefined;
  let oldPath: string | undefined;
  const flush = () => {
    if (current === undefined) return;
    const stats = diffBodyStats(current.body.join('\n'));
    Object.assign(current.change, stats);
    files.push(current.change);
    current = undefined;
  };
  const stripPrefix = (path: string) => path.replace(/\t.*$/, '').replace(/^[ab]\//, '');
  for (const line of splitLines(diff)) {
    if (line.startsWith('--- ')) {
      flush();
      oldPath = stripPrefix(line.slice(4).trim());
      continue;
    }
    if (line.startsWith('+++ ') && oldPath !== undefined) {
      const newPath = stripPrefix(line.slice(4).trim());
      const operation = oldPath === '/dev/null' ? 'add' : newPath === '/dev/null' ? 'delete' : 'update';
      current = {
        change: {
          path: operation === 'delete' ? oldPath : newPath,
          operation,
          hunks: 0,
          linesAdded: 0,
          linesRemoved: 0,
          symbols: [],
        },
        body: [],
      };
      oldPath = undefined;
      continue;
    }
    if (current !== undefined && !line.startsWith('diff --git') && !line.startsWith('index '))
      current.body.push(line);
  }
  flush();
  return files;
}

/** gptme / aider conflict-marker blocks: `<<<<<<< ORIGINAL` (or SEARCH) … `=======` … `>>>>>>> UPDATED` (or REPLACE). */
export function parseConflictBlocks(text: string): Array<{ oldText: string; newText: string }> {
  const blocks: Array<{ oldText: string; newText: string }> = [];
  const pattern = /^<{5,9} ?\w*\n([\s\S]*?)^={5,9}\n([\s\S]*?)^>{5,9} ?\w*$/gm;
  for (const match of text.matchAll(pattern)) blocks.push({ oldText: match[1]!, newText: match[2]! });
  return blocks;
}
