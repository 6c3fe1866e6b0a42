import { InvalidArgumentError } from '../../errors/index.js';

export const codeLanguages = ['typescript', 'javascript', 'python'] as const;
export type CodeLanguage = (typeof codeLanguages)[number];

export interface PruneCodeOptions {
  /** Bodies of at most this many lines are kept whole. @default 4 */
  maxKeptBodyLines?: number;
  /** Archive handle of the original, written into every marker. */
  handle?: string;
}

export interface PruneCodeResult {
  code: string;
  /** Lines removed from bodies (not counting the markers that replace them). */
  elidedLines: number;
}

/** A run of body lines `[start, end)` replaced by one marker indented by `indent`. */
export interface Elision {
  start: number;
  end: number;
  indent: string;
}

/** Matches the marker lines this module writes, so pruned code is never pruned again. */
export const elisionMarkerPattern = /^\s*(?:\/\/|#) … \d+ lines? elided(?: \[[^\]]*\])?\s*$/;

/**
 * Keeps the signatures, docstrings / JSDoc and top-level structure of TypeScript, JavaScript or Python code and
 * replaces each function or method body longer than `maxKeptBodyLines` with one marker line
 * (`// … 14 lines elided [h-…]`, `# …` for Python). TypeScript/JavaScript: function declarations and
 * expressions, arrow functions and functions assigned to names or properties, class and object methods, found by
 * brace matching that skips strings, template literals, comments and regex literals; callbacks passed as
 * arguments are left whole. Python: `def` bodies by indentation, decorators and docstrings kept. Only the
 * outermost elidable body is elided. Never grows the code; pruning its own output changes nothing.
 */
export function pruneCode(
  code: string,
  language: CodeLanguage,
  options: PruneCodeOptions = {},
): PruneCodeResult {
  const { maxKeptBodyLines = 4, handle } = options;
  if (!(codeLanguages as readonly string[]).includes(language))
    throw new InvalidArgumentError('language', `must be one of ${codeLanguages.join(', ')}, got ${language}`);
  if (!(Number.isInteger(maxKeptBodyLines) && maxKeptBodyLines >= 0))
    throw new InvalidArgumentError(
      'maxKeptBodyLines',
      `must be a non-negative integer, got ${maxKeptBodyLines}`,
    );
  const lines = code.split('\n');
  const elisions = planElisions(code, language, maxKeptBodyLines);
  const rendered = renderElisions(lines, elisions, (count, indent) =>
    elisionMarker(language, count, indent, handle),
  );
  if (rendered.code.length >= code.length) return { code, elidedLines: 0 };
  return rendered;
}

export function elisionMarker(
  language: CodeLanguage,
  count: number,
  indent: string,
  handle: string | undefined,
): string {
  const comment = language === 'python' ? '#' : '//';
  return `${indent}${comment} … ${count} line${count === 1 ? '' : 's'} elided${handle === undefined ? '' : ` [${handle}]`}`;
}

/** Replaces each elided run of `lines` with its marker. */
export function renderElisions(
  lines: readonly string[],
  elisions: readonly Elision[],
  marker: (count: number, indent: string) => string,
): PruneCodeResult {
  const output: string[] = [];
  let next = 0;
  let elidedLines = 0;
  for (const elision of elisions) {
    for (; next < elision.start; next++) output.push(lines[next] as string);
    output.push(marker(elision.end - elision.start, elision.indent));
    elidedLines += elision.end - elision.start;
    next = elision.end;
  }
  for (; next < lines.length; next++) output.push(lines[next] as string);
  return { code: output.join('\n'), elidedLines };
}

/** The body runs to elide, in order, by line index of `code.split('\n')`. */
export function planElisions(code: string, language: CodeLanguage, maxKeptBodyLines: number): Elision[] {
  const elisions =
    language === 'python'
      ? planPythonElisions(code, maxKeptBodyLines)
      : planBraceElisions(code, maxKeptBodyLines);
  const lines = code.split('\n');
  // A marker must be shorter than what it replaces, or the code would grow.
  return elisions.filter((elision) => {
    let length = 0;
    for (let line = elision.start; line < elision.end; line++) length += (lines[line]?.length ?? 0) + 1;
    return length > elision.indent.length + 40;
  });
}

// TypeScript / JavaScript ------------------------------------------------------------------------------------

const regexPrecedingWords = new Set([
  'return',
  'typeof',
  'case',
  'do',
  'else',
  'in',
  'of',
  'new',
  'delete',
  'void',
  'throw',
  'yield',
  'await',
  'instanceof',
]);
const controlKeywords = new Set([
  'if',
  'for',
  'while',
  'switch',
  'catch',
  'with',
  'return',
  'function',
  'do',
  'else',
  'new',
  'typeof',
  'await',
  'yield',
  'super',
  'this',
]);

/**
 * The code with the inside of strings, template literals, comments and regex literals blanked (newlines kept),
 * so brackets can be matched on it; same length as the input.
 */
export function maskJavaScript(code: string): string {
  const chars = code.split('');
  const blank = (from: number, to: number) => {
    for (let k = from; k < to; k++) if (chars[k] !== '\n') chars[k] = ' ';
  };
  scanJavaScript(code, 0, false, chars, blank);
  return chars.join('');
}

/** Scans code from `start`; nested (inside `${`), stops after the `}` that closes it. Returns the end. */
function scanJavaScript(
  code: string,
  start: number,
  nested: boolean,
  chars: string[],
  blank: (from: number, to: number) => void,
): number {
  let depth = 0;
  let index = start;
  const length = code.length;
  while (index < length) {
    const char = code[index] as string;
    const next = code[index + 1];
    if (char === '/' && next === '/') {
      const end = code.indexOf('\n', index);
      const stop = end < 0 ? length : end;
      blank(index, stop);
      index = stop;
    } else if (char === '/' && next === '*') {
      const end = code.indexOf('*/', index + 2);
      const stop = end < 0 ? length : end + 2;
      blank(index, stop);
      index = stop;
    } else if (char === '"' || char === "'") {
      let end = index + 1;
      while (end < length && code[end] !== char && code[end] !== '\n') end += code[end] === '\\' ? 2 : 1;
      blank(index + 1, Math.min(end, length));
      index = end + 1;
    } else if (char === '`') {
      let end = index + 1;
      while (end < length && code[end] !== '`') {
        if (code[end] === '\\') end += 2;
        else if (code[end] === '$' && code[end + 1] === '{')
          end = scanJavaScript(code, end + 2, true, chars, blank);
        else end++;
      }
      blank(index + 1, Math.min(end, length));
      index = end + 1;
    } else if (char === '/' && regexAllowed(chars, index)) {
      let end = index + 1;
      let inClass = false;
      while (end < length && code[end] !== '\n' && (inClass || code[end] !== '/')) {
        if (code[end] === '\\') end++;
        else if (code[end] === '[') inClass = true;
        else if (code[end] === ']') inClass = false;
        end++;
      }
      if (end < length && code[end] === '/') {
        blank(index + 1, end);
        index = end + 1;
      } else index++; // not a regex after all: a division
    } else {
      if (nested) {
        if (char === '{') depth++;
        else if (char === '}') {
          if (depth === 0) return index + 1;
          depth--;
        }
      }
      index++;
    }
  }
  return length;
}

/** A `/` starts a regex after an operator, an opening bracket, a keyword such as `return`, or at the start. */
function regexAllowed(chars: readonly string[], index: number): boolean {
  let back = index - 1;
  while (back >= 0 && /\s/.test(chars[back] as string)) back--;
  if (back < 0) return true;
  const previous = chars[back] as string;
  if (/[(,=:[!&|?{};+\-*%<>~^]/.test(previous)) return true;
  if (!/[\w$]/.test(previous)) return false;
  let wordStart = back;
  while (wordStart > 0 && /[\w$]/.test(chars[wordStart - 1] as string)) wordStart--;
  return regexPrecedingWords.has(chars.slice(wordStart, back + 1).join(''));
}

const modifiers =
  '(?:(?:export|default|declare|public|private|protected|static|async|readonly|override|abstract|get|set|accessor)\\s+)*';
const decorators = '(?:@[\\w$.]+(?:\\([^()]*\\))?\\s*)*';
const parametersAndReturnType = '\\(.*\\)\\s*(?::\\s*[^{};=\\s][^{};=]*)?$';
const functionHeader = new RegExp(
  `^${decorators}${modifiers}function\\b\\s*\\*?\\s*[\\w$]*\\s*(?:<[^()]*>)?\\s*${parametersAndReturnType}`,
);
const methodHeader = new RegExp(
  `^${decorators}${modifiers}\\*?\\s*(#?[\\w$]+|\\[[^\\]]+\\])\\s*[?!]?\\s*(?:<[^()]*>)?\\s*${parametersAndReturnType}`,
);
const assignedFunctionHeader = new RegExp(
  `^${modifiers}(?:(?:const|let|var)\\s+)?[#\\w$.]+\\s*[?!]?\\s*(?::[^=]*)?[=:]\\s*(?:async\\s+)?function\\b.*${parametersAndReturnType}`,
);
const assignedArrowHeader = new RegExp(
  `^${decorators}${modifiers}(?:(?:const|let|var)\\s+)?[#\\w$.]+\\s*[?!]?\\s*(?::[^=]*?)?[=:]\\s*.*=>$`,
);

/** True when a `{` with this header (masked, from the statement start) opens a function or method body. */
function isFunctionBodyHeader(header: string): boolean {
  const text = header.replace(/\s+/g, ' ').trim();
  if (text === '' || text.length > 2000) return false;
  if (text.endsWith('=>')) return assignedArrowHeader.test(text);
  if (!text.endsWith(')') && !/\)\s*:/.test(text)) return false;
  if (functionHeader.test(text) || assignedFunctionHeader.test(text)) return true;
  const method = methodHeader.exec(text);
  return method !== null && !controlKeywords.has(method[1] as string);
}

interface Bracket {
  char: string;
  open: number;
  /** Where the statement of the next child starts: after the last `;`, `,`, `{` or `}` at this level. */
  boundary: number;
}

function planBraceElisions(code: string, maxKeptBodyLines: number): Elision[] {
  const masked = maskJavaScript(code);
  const lineStarts = [0];
  for (let index = 0; index < code.length; index++) if (code[index] === '\n') lineStarts.push(index + 1);
  const lineOf = (offset: number) => {
    let low = 0;
    let high = lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((lineStarts[middle] as number) <= offset) low = middle;
      else high = middle - 1;
    }
    return low;
  };
  const lines = code.split('\n');
  const elisions: Elision[] = [];
  const stack: Bracket[] = [{ char: '', open: -1, boundary: 0 }];
  const closers: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
  for (let index = 0; index < masked.length; index++) {
    const char = masked[index] as string;
    const top = stack[stack.length - 1] as Bracket;
    if (char === '(' || char === '[' || char === '{') {
      stack.push({ char, open: index, boundary: index + 1 });
    } else if (char === ')' || char === ']' || char === '}') {
      if (top.char !== closers[char]) continue; // unbalanced: ignore the stray closer
      stack.pop();
      const parent = stack[stack.length - 1] as Bracket;
      if (char === '}') {
        const parentChar = parent.char;
        if (parentChar === '' || parentChar === '{') {
          const header = masked.slice(parent.boundary, top.open);
          if (isFunctionBodyHeader(stripLeadingNoise(header))) {
            const start = lineOf(top.open) + 1;
            const end = lineOf(index);
            if (end - start > maxKeptBodyLines) {
              elisions.push({ start, end, indent: bodyIndent(lines, start, end) });
            }
          }
        }
        parent.boundary = index + 1;
      }
    } else if (char === ';' || (char === ',' && top.char === '{')) {
      top.boundary = index + 1;
    }
  }
  // Inner bodies close before outer ones: keep only the outermost.
  elisions.sort((left, right) => left.start - right.start || right.end - left.end);
  const outermost: Elision[] = [];
  for (const elision of elisions) {
    const last = outermost[outermost.length - 1];
    if (last === undefined || elision.start >= last.end) outermost.push(elision);
  }
  return outermost;
}

/** Drops closing brackets left over from a previous expression on the header's line. */
function stripLeadingNoise(header: string): string {
  return header.replace(/^[\s)\]]+/, '');
}

function bodyIndent(lines: readonly string[], start: number, end: number): string {
  for (let line = start; line < end; line++) {
    const text = lines[line] as string;
    if (text.trim() !== '') return /^\s*/.exec(text)?.[0] ?? '';
  }
  return '';
}

// Python ----------------------------------------------------------------------------------------------------

interface PythonLine {
  /** The line with strings and comments blanked. */
  masked: string;
  indent: number;
  /** Starts a logical line (not inside a string, brackets or after a backslash). */
  logicalStart: boolean;
  /** Ends a logical line. */
  logicalEnd: boolean;
}

function analysePython(lines: readonly string[]): PythonLine[] {
  const result: PythonLine[] = [];
  let tripleQuote: string | undefined;
  let depth = 0;
  let continued = false;
  for (const line of lines) {
    const logicalStart = tripleQuote === undefined && depth === 0 && !continued;
    const chars = line.split('');
    let index = 0;
    while (index < line.length) {
      if (tripleQuote !== undefined) {
        const end = line.indexOf(tripleQuote, index);
        const stop = end < 0 ? line.length : end;
        for (let k = index; k < stop; k++) chars[k] = ' ';
        if (end < 0) index = line.length;
        else {
          index = end + 3;
          tripleQuote = undefined;
        }
        continue;
      }
      const char = line[index] as string;
      if (char === '#') {
        for (let k = index; k < line.length; k++) chars[k] = ' ';
        break;
      }
      if (char === '"' || char === "'") {
        if (line.startsWith(char.repeat(3), index)) {
          tripleQuote = char.repeat(3);
          index += 3;
          continue;
        }
        let end = index + 1;
        while (end < line.length && line[end] !== char) end += line[end] === '\\' ? 2 : 1;
        for (let k = index + 1; k < Math.min(end, line.length); k++) chars[k] = ' ';
        index = end + 1;
        continue;
      }
      if (char === '(' || char === '[' || char === '{') depth++;
      else if ((char === ')' || char === ']' || char === '}') && depth > 0) depth--;
      index++;
    }
    const masked = chars.join('');
    continued = tripleQuote === undefined && /\\\s*$/.test(masked);
    result.push({
      masked,
      indent: /^[ \t]*/.exec(line)?.[0].length ?? 0,
      logicalStart,
      logicalEnd: tripleQuote === undefined && depth === 0 && !continued,
    });
  }
  return result;
}

const defPattern = /^\s*(?:async\s+)?def\s+[\w]/;
const docstringStart = /^\s*[rRuUbBfF]{0,2}("""|'''|"|')/;

function planPythonElisions(code: string, maxKeptBodyLines: number): Elision[] {
  const lines = code.split('\n');
  const info = analysePython(lines);
  const elisions: Elision[] = [];
  const isBlank = (line: number) => (info[line]?.masked.trim() ?? '') === '';
  let elidedUntil = -1;
  for (let line = 0; line < lines.length; line++) {
    const current = info[line] as PythonLine;
    if (line < elidedUntil || !current.logicalStart || !defPattern.test(current.masked)) continue;
    let headerEnd = line;
    while (headerEnd < lines.length - 1 && !(info[headerEnd] as PythonLine).logicalEnd) headerEnd++;
    if (!(info[headerEnd] as PythonLine).masked.trimEnd().endsWith(':')) continue; // one-line def
    let end = headerEnd + 1;
    while (
      end < lines.length &&
      !(
        (info[end] as PythonLine).logicalStart &&
        !isBlank(end) &&
        (info[end] as PythonLine).indent <= current.indent
      )
    )
      end++;
    while (end > headerEnd + 1 && isBlank(end - 1)) end--;
    let start = headerEnd + 1;
    while (start < end && isBlank(start) && (lines[start] as string).trim() === '') start++;
    if (start < end && docstringStart.test(lines[start] as string)) {
      let docstringEnd = start;
      while (docstringEnd < end - 1 && !(info[docstringEnd] as PythonLine).logicalEnd) docstringEnd++;
      start = docstringEnd + 1;
    }
    if (end - start > maxKeptBodyLines) {
      elisions.push({ start, end, indent: bodyIndent(lines, start, end) });
      elidedUntil = end;
    }
  }
  return elisions;
}
