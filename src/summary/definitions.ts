/**
 * Definitions the agent looked at: declaration lines (a `def`, `class`, `function`, `interface`, an exported
 * `const`) in what its reads and commands printed. Which of them the summary keeps is decided by the agent's own
 * prose: a definition whose name it writes as code (`get_count`, `parse()`) is one it worked with.
 */

export interface Declaration {
  /** The declared name. */
  name: string;
  /** The line as printed, without a line-number prefix and indentation. */
  line: string;
  /** Where it is: `path:line` (from a `path:line:` prefix, or the read's path and the line's number), or a path. */
  location?: string;
  /**
   * The line as the output printed it, when the output itself said where it is (`grep -n` over files:
   * `src/a.py:105:class A(Base):`): the form a search for it finds.
   */
  printed?: string;
}

/**
 * A line-number prefix as reads print it: `cat -n` / `nl -ba` (`   548\t`), Claude Code's Read (`   548→`),
 * `grep -n` (`548:` or `path:548:`), OpenHands' view (`   548\t`).
 */
const numberedLine = /^\s*(?:([\w./@-]+\.[A-Za-z]\w*):)?(\d{1,6})(?:\t|→|:|-(?=\s))/;

const declaration =
  /^(?:export\s+(?:default\s+)?|pub(?:\([\w:]+\))?\s+)?(?:async\s+)?(?:abstract\s+)?(?:def|class|function\*?|interface|type|enum|struct|trait|fn|func(?:\s+\([^)]*\))?)\s+([A-Za-z_$][\w$]*)/;
/** An exported constant is a definition; a local one (`const state = …`) is a statement. */
const exportedBinding = /^export\s+(?:const|let|var)\s+([A-Za-z_$][\w$]*)/;

/** Lines longer than this are not declarations worth a summary line (minified code, data). */
const maxDeclarationChars = 200;
/** Output past this is not scanned: a megabyte log holds no definitions worth finding there. */
const maxScannedChars = 200_000;

/** The declarations in a tool's output; `path` is the file the call read, when it read one. */
export function declarationsOf(output: string, path?: string): Declaration[] {
  const found: Declaration[] = [];
  const text = output.length > maxScannedChars ? output.slice(0, maxScannedChars) : output;
  for (const raw of text.split('\n')) {
    // Most lines declare nothing: a cheap test first.
    if (!/\b(?:def|class|function|interface|type|enum|struct|trait|fn|func|export)\b/.test(raw)) continue;
    const numbered = numberedLine.exec(raw);
    const body = (numbered === null ? raw : raw.slice(numbered[0].length)).trim();
    if (body.length > maxDeclarationChars) continue;
    const match = declaration.exec(body) ?? exportedBinding.exec(body);
    // `__init__` and its kind are every class's: the class line says which.
    if (match === null || /^__\w+__$/.test(match[1]!)) continue;
    const file = numbered?.[1] ?? path;
    const location = file === undefined ? undefined : numbered === null ? file : `${file}:${numbered[2]}`;
    found.push({
      name: match[1]!,
      line: body,
      ...(location === undefined ? {} : { location }),
      ...(numbered?.[1] === undefined ? {} : { printed: raw.trim() }),
    });
  }
  return found;
}

const codeSpan = /`([^`\n]+)`/g;
const identifier = /[A-Za-z_$][\w$]*/g;
/** snake_case, `_private`, camelCase, PascalCase with a second word: shaped like an identifier, not a word. */
const identifierShape = /[A-Za-z0-9$]_|^_\w|[a-z0-9][A-Z]/;

/** The names `prose` writes as code: in code spans, called (`parse(`), or shaped like an identifier. */
export function codeNamesOf(prose: string): Set<string> {
  const names = new Set<string>();
  for (const span of prose.matchAll(codeSpan))
    for (const name of span[1]!.match(identifier) ?? []) names.add(name);
  // One pass over the words: a pattern of the shapes with a lookahead is tried at every position, ten times slower.
  for (const match of prose.matchAll(identifier)) {
    const name = match[0];
    if (names.has(name)) continue;
    if (prose.charCodeAt(match.index + name.length) === 40 || identifierShape.test(name)) names.add(name);
  }
  return names;
}

/** Whether `text` holds one of `names` as a whole identifier. */
export function namesAny(text: string, names: ReadonlySet<string>): boolean {
  if (names.size === 0) return false;
  for (const word of text.match(identifier) ?? []) if (names.has(word)) return true;
  return false;
}

/** A declaration as a summary line: as printed when that says where it is, else where it is, then the line. */
export function definitionLine(found: Declaration): string {
  if (found.printed !== undefined) return found.printed;
  return found.location === undefined ? found.line : `\`${found.location}\` ${found.line}`;
}
