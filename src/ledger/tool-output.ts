/**
 * What a tool result says about how its command went: the exit code in the forms agents print it, the error
 * lines worth remembering, and a normalised key so the same error seen twice is counted once.
 */

/** Results the importers write when a transcript kept no output: neither success nor failure. */
const placeholderPattern = /^\[no (?:result recorded|output in the SpecStory export)\]$/;

export function isPlaceholderOutput(text: string): boolean {
  return text.length < 64 && placeholderPattern.test(text.trim());
}

const exitCodePatterns: readonly RegExp[] = [
  /<returncode>\s*(-?\d+)\s*<\/returncode>/,
  /\[(?:Command finished with exit code|The command completed with exit code) (-?\d+)\.?\]/,
  /^Exit code:? (-?\d+)\b/m,
  /\bProcess exited with code (-?\d+)/,
  // SWE-agent's end-of-command marker, glued to the output's last line.
  /\/\/\/PROCESS-DONE:(-?\d+):PROCESS-DONE\/\/\//,
  /\b(?:exit(?:ed with)? (?:code|status)|return ?code|returncode)[:=]?\s*(-?\d+)\b/i,
];

/** How much of the start and end of an output is searched for an exit code (agents print it at one end). */
const edgeChars = 600;
/** The same patterns, global: every status line of an edge is read (`matchAll` works on a copy of each). */
const globalExitCodePatterns = exitCodePatterns.map(
  (pattern) => new RegExp(pattern.source, `${pattern.flags}g`),
);

/** The exit code the output states, if it states one. Only the first and last few hundred characters count. */
export function exitCodeOf(text: string): number | undefined {
  const edges =
    text.length <= edgeChars * 2 ? [text] : [text.slice(0, edgeChars), text.slice(text.length - edgeChars)];
  for (const global of globalExitCodePatterns) {
    for (let index = edges.length - 1; index >= 0; index--) {
      // The last status line wins: OpenHands prints one per command of a chained line.
      let code: number | undefined;
      for (const match of edges[index]!.matchAll(global)) code = Number(match[1]);
      if (code !== undefined) return code;
    }
  }
  return undefined;
}

/**
 * A harness's note, as an output's first line or its last, that it stopped waiting for the command: it timed
 * out (OpenHands' `[The command timed out after 300 seconds. …]`, mini-swe-agent's `The last command
 * <command>…</command> timed out and has been killed.`, Claude Code's `Command timed out after 2m 0.0s`), or it
 * still runs with nothing more to show (OpenHands' `[The command has no new output after 30 seconds. …]`: a
 * server started, a watcher, a prompt waiting for input).
 */
const timedOutNote =
  /^\[The command timed out after \d+(?:\.\d+)? seconds?\b|^The last command <command>[\s\S]{0,2000}?<\/command> timed out and has been killed\.|^Command timed out after \d/;
const stillRunningNote = /^\[The command has no new output after \d+(?:\.\d+)? seconds?\b/;

/** What the output's harness note says of a command it stopped waiting for (`timedOutNote`), if it has one. */
export function unfinishedStatusOf(text: string): 'timed-out' | 'running' | undefined {
  const trimmed = text.trim();
  const lastLineStart = trimmed.lastIndexOf('\n') + 1;
  for (const line of lastLineStart > 0 ? [trimmed, trimmed.slice(lastLineStart)] : [trimmed]) {
    if (timedOutNote.test(line)) return 'timed-out';
    if (stillRunningNote.test(line)) return 'running';
  }
  return undefined;
}

/** Lines that state an error in the output of a failed command or tool. */
const errorLinePattern =
  /(?:^|[\s(:\]])(?:(?:[A-Za-z_][\w]*\.)*(?:[A-Z][A-Za-z0-9_]*)?(?:Error|Exception|Failure|Warning)\b(?!s)|error(?:\[[\w-]+\])?[:\s]|ERROR\b|FAIL(?:ED)?\b|fatal:|panic:|npm ERR!|Traceback \(most recent call last\)|No such file or directory|command not found|Permission denied|cannot find|Cannot find|not found|does not exist|Segmentation fault|Killed\b)|:\d+:\d+: (?:F\d{3}|E9\d{2}) /;
/**
 * The strong forms only, for outputs whose status is unknown and for user text. A bundler's unresolved module
 * (webpack's and Next.js' `Module not found: … Can't resolve`) counts wherever it starts, and so does an ESLint
 * problem of error severity (`12:5  error  …  rule`, Next.js' `8:18  Error: …  rule`). Pyflakes' codes (`F821
 * undefined name 'os'`, as flake8 and ruff print them) and syntax errors (`E999`) count; style codes do not.
 */
const strongErrorLinePattern =
  /^\s*(?:(?:(?:--->|Caused by:)\s*)?(?:[A-Za-z_][\w]*\.)*[A-Z][A-Za-z0-9_]*(?:Error|Exception)(?: \(0x[0-9A-Fa-f]+\))?(?::|$)|error(?:\[[\w-]+\])?: |Error: |fatal: |panic: |npm ERR! |E\s{2,}\w+(?:Error|Exception)\b|\d+:\d+\s+[Ee]rror\b)|\berror TS\d+:|\[Errno \d+\] [A-Z]|\bModule not found: (?:Error: )?Can't resolve |: (?:No such file or directory|command not found)$|:\d+:\d+: (?:F\d{3}|E9\d{2}) /;
/**
 * Cursor's terminal calls a state-dumping hook after every command; a shell without it complains on a line of its
 * own (`zsh:1: command not found: dump_zsh_state`, `--: line 1: dump_bash_state: command not found`): the harness's
 * noise, not the command's output.
 */
export const shellHookNoiseLine = /\bdump_(?:bash|zsh)_state\b/;

/** aider's note after an edit it committed, `Commit 1a2b3c4 fix: …`, in the user's place. */
const aiderCommit = String.raw`Commit [0-9a-f]{7,40} \S.*`;
/** A line of aider's notes that is a commit it made. */
export const aiderCommitLine = new RegExp(`^${aiderCommit}$`, 'gm');
/** A line of aider's notes that says what an edit did: the file it applied it to, or the commit it made. */
export const aiderOutcomeLine = new RegExp(`^(?:Applied edit to \\S.*|${aiderCommit})$`, 'gm');
const noiseLinePattern =
  /^\s*(?:[✓✔√]|PASS\s|\d+(?:→|\t|:(?!\d+\s+[Ee]rror\b))|\[(?:Command finished|The command completed|Current working directory|Python interpreter)|Exit code\b|<\/?returncode>|<\/?output>|EXECUTION RESULT|OBSERVATION:|Traceback \(most recent call last\):\s*$|[-=_*~^]{3,}\s*$|During handling of the above exception)/;

/**
 * What a package manager prints around a failure's message: npm's fields, one per line (`npm error code EAI_AGAIN`,
 * `errno`, `syscall`, `path`) and where its log went; yarn's `error Command failed with exit code 1.` and its
 * pointer to the docs. The message lines say the same and more (`npm error request to … failed, reason: getaddrinfo
 * EAI_AGAIN …`, `npm ERR! ERESOLVE unable to resolve dependency tree`), and the exit code is the command's status.
 */
export const packageManagerReportLine =
  /^\s*(?:npm (?:ERR!|error) (?:(?:code|errno|syscall|path|dest|signal) \S+\s*$|A complete log of this run can be found in\b|Log files were not written\b)|error Command failed with exit code -?\d+\.\s*$|info Visit https:\/\/yarnpkg\.com\/\S+ for documentation about this command\.\s*$)/;

/**
 * A colour code written out as text (`\x1B[91m`, `\u001b[0m`): the line quotes, escaped, what an output printed
 * (Node's inspection of an error's properties, a repr, a dumped log), a copy of lines read where they stand.
 */
export const escapedColourCode = /\\(?:x1b|u001b|033)\[/i;

/** A line a harness prints around every output (status, numbering, wrappers): cheap enough for every line. */
function isHarnessLine(line: string): boolean {
  return noiseLinePattern.test(line) || shellHookNoiseLine.test(line);
}

/** A package manager's report field or a quoted log: tried only on lines that look like errors. */
function isReportOrQuote(line: string): boolean {
  return packageManagerReportLine.test(line) || (line.includes('\\') && escapedColourCode.test(line));
}

function isNoiseLine(line: string): boolean {
  return isHarnessLine(line) || isReportOrQuote(line);
}

/** A heading that names an error but not its message, as dev servers' overlays print it ("Unhandled Runtime Error"). */
const errorHeadingPattern = /^\s*(?:[A-Z][a-z]+ ){1,3}(?:Error|Exception)\s*$/;
/** An error line that stops where its message should start ("… Server Error", "FAILED:", "error:"). */
const bareErrorEndPattern = /(?:\b(?:Error|Exception|ERROR|FAILED?)|:)\s*$/;
/** Lines that locate an error instead of stating it: stack frames, code frames, carets, arrows. */
const locatingLinePattern = /^\s*(?:at\s|File "|in\s|\d+\s*\||>\s*\d+\s*\||-->|\^|\|)/;
/**
 * An `error` property in an inspected object (`error: [Circular],`, Bun's `error:  6 | import …`): its value is a
 * reference or a code frame, not a message.
 */
const inspectedErrorPropertyPattern =
  /^\s*error:\s+(?:\d+\s*\||\[(?:Circular|Object|Array|Function)\b[^\]]*\],?\s*$|(?:undefined|null),?\s*$)/;
/** A line with something on it (tested, not trimmed: every line of every output is looked at). */
const nonBlank = /\S/;
/** A Python traceback's frame (`File "x.py", line 12, in f`): the line after it is the frame's source. */
const pythonFramePattern = /^\s*File "[^"\n]*", line \d+/;
/**
 * A stack frame, JavaScript's (`at handleError (webpack-internal:///…/use-error-handler.js:45:54)`, `at
 * src/a.ts:8:2`) or Python's: it locates an error, wherever it stands (a log a user pasted too).
 */
export const stackFrameLine = /^\s*(?:at (?:async )?(?:\S+ \(|\S+:\d+:\d+\)?$)|File "[^"\n]*", line \d+)/;
/** A line of carets (and tildes) under a source line, pointing at where an error is. */
const caretLinePattern = /^\s*\^[\s^~]*$/;
/** How many lines after a bare error line its message may be (blank lines in between). */
const messageLookahead = 3;
/** What joins a bare error line and the message on the line after it: a line break, shown. */
const lineBreakMark = ' ↵ ';

/** The final line of a Python traceback: the exception at column 0. */
const exceptionLinePattern = /^(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning)\b.*$/gm;
const tracebackHeader = 'Traceback (most recent call last)';
/**
 * A traceback's closing line by its shape: a class name, dotted or not, alone or before `: message`. Many
 * exceptions are not named …Error (`django.core.exceptions.ImproperlyConfigured`, `AppRegistryNotReady`,
 * `StopIteration`), so where the traceback's frames end says more than the name does.
 */
const exceptionShapePattern = /^(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?::\s.*)?$/;

/**
 * The exception line of each traceback in `text`: the first line at column 0 after the header's indented frames
 * (a blank line may sit among them), when it has an exception's shape.
 */
function tracebackExceptionLines(text: string): string[] {
  const lines: string[] = [];
  let header = text.indexOf(tracebackHeader);
  while (header !== -1) {
    let start = text.indexOf('\n', header);
    let found: string | undefined;
    while (start !== -1 && start + 1 < text.length) {
      const { raw, next } = lineAt(text, start + 1);
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (line === '' || /^\s/.test(line)) {
        start = next - 1;
        continue;
      }
      if (exceptionShapePattern.test(line)) found = line;
      break;
    }
    if (found !== undefined) lines.push(found);
    header = text.indexOf(tracebackHeader, header + tracebackHeader.length);
  }
  return lines;
}

export interface ErrorLineOptions {
  /** Only the unambiguous forms (`XError: …`, `error: …`, `fatal: …`). @default false */
  strongOnly?: boolean;
  /** At most this many lines. @default 4 */
  maxLines?: number;
  /** Longer lines are cut here with `…`. @default 400 */
  maxChars?: number;
}

/**
 * The distinct error lines of an output, verbatim (trimmed, tags like `<tool_use_error>` removed). A Python
 * traceback contributes its final exception line. When nothing matches and the caller knows the output is an
 * error, use `firstMeaningfulLine`.
 */
export function errorLinesOf(text: string, options: ErrorLineOptions = {}): string[] {
  const { strongOnly = false, maxLines = 4, maxChars = 400 } = options;
  const pattern = strongOnly ? strongErrorLinePattern : errorLinePattern;
  const found: string[] = [];
  const seen = new Set<string>();
  // A Python traceback's point is its last line (`pkg.SomeError: message`): those lines go first, the ones
  // found where a traceback's frames end before others named like exceptions.
  if (text.includes(tracebackHeader))
    for (const exception of [
      ...tracebackExceptionLines(text),
      ...Array.from(text.matchAll(exceptionLinePattern), (match) => match[0]),
    ]) {
      if (found.length >= maxLines) break;
      const line = cleanErrorLine(exception, maxChars);
      const key = normaliseError(line);
      if (seen.has(key)) continue;
      seen.add(key);
      found.push(line);
    }
  let start = 0;
  // Whether the last line with something on it was a Python frame: an indented line after one is the frame's
  // source (`raise ValueError(…`); the exception closes the traceback at column 0, also right after a frame.
  // Every line of every output passes here: frames are found by a substring first, and the report and quote
  // patterns are tried only on lines that match an error pattern (most match none).
  let afterFrame = false;
  while (start < text.length && found.length < maxLines) {
    const { raw, next } = lineAt(text, start);
    start = next;
    let sourceLine = false;
    if (afterFrame && nonBlank.test(raw)) {
      sourceLine = /^\s/.test(raw);
      afterFrame = false;
    }
    if (raw.includes('File "') && pythonFramePattern.test(raw)) afterFrame = true;
    if (raw.length < 3 || isHarnessLine(raw)) continue;
    const matches = pattern.test(raw);
    const heading = errorHeadingPattern.test(raw);
    if ((!matches && !heading) || isReportOrQuote(raw)) continue;
    // A stack frame locates an error (`at new NodeError (node:internal/errors:405:5)`); a line a caret points
    // into, or a Python frame's, is source code the error shows (Node's `throw new Error(…)` over `^`).
    if (
      sourceLine ||
      locatingLinePattern.test(raw) ||
      inspectedErrorPropertyPattern.test(raw) ||
      caretLinePattern.test(lineAt(text, start).raw)
    )
      continue;
    let line = cleanErrorLine(raw, maxChars);
    if (line === '') continue;
    if (heading || bareErrorEndPattern.test(line)) {
      const message = messageAfter(text, start, pattern);
      // A heading or a lead-in over an error line of its own (`TSError: ⨯ Unable to compile TypeScript:` over
      // each `error TS2304: …`): that line says more, and is taken on its own.
      if (message === 'error line') continue;
      if (message !== undefined) line = cleanErrorLine(`${line}${lineBreakMark}${message}`, maxChars);
      // A heading the pattern does not take alone (strong mode) counts only with its message.
      else if (!matches) continue;
    }
    const key = normaliseError(line);
    if (seen.has(key)) continue;
    seen.add(key);
    found.push(line);
  }
  return found;
}

/** Very long lines (minified output, JSON) are looked at through their head only. */
const lineHeadChars = 2000;

/** The tags a harness wraps an error in (Claude Code's `<tool_use_error>`): not part of the message. */
const errorTagPattern = /<\/?(?:tool_use_error|error)>/g;

/**
 * The line of `text` that starts at `start` (its head only, without error tags: `<tool_use_error>XError: …`
 * starts with the error) and where the next line starts.
 */
function lineAt(text: string, start: number): { raw: string; next: number } {
  let end = text.indexOf('\n', start);
  if (end === -1) end = text.length;
  const raw = text.slice(start, Math.min(end, start + lineHeadChars));
  return { raw: raw.includes('<') ? raw.replace(errorTagPattern, '') : raw, next: end + 1 };
}

/**
 * The message that a bare error line leaves to the next line (the first non-blank one within a few lines):
 * that line, `'error line'` when it is an error line itself, or undefined when it locates rather than states
 * (a stack frame, a code frame) or is noise.
 */
function messageAfter(text: string, from: number, pattern: RegExp): string | undefined {
  let start = from;
  for (let looked = 0; looked < messageLookahead && start < text.length; looked++) {
    const { raw, next } = lineAt(text, start);
    start = next;
    if (raw.trim() === '') continue;
    if (isNoiseLine(raw) || locatingLinePattern.test(raw)) return undefined;
    return pattern.test(raw) || errorHeadingPattern.test(raw) ? 'error line' : raw.trim();
  }
  return undefined;
}

/**
 * File editors reporting an edit they did not make. SWE-agent's windowed `edit` (and OpenHands' old file tools)
 * when their linter turned it away: this sentence, the linter's errors, the edit as it would have looked, and
 * the file left as it was.
 */
const rejectedEditPattern =
  /^\s*(?:EXECUTION RESULT of \[\w+\]:\s*\n\s*)?\[?Your proposed edit has introduced new syntax error\(s\)[^\n]*\n?/;
/** Where the list of errors ends: the window showing the edit as it would have looked, or the closing notice. */
const rejectedEditEndPattern =
  /^\s*\[?(?:This is how your edit would have looked|Your changes have NOT been applied)/;
/**
 * The file editor agents share (Anthropic's `str_replace_editor`, in OpenHands and SWE-agent) when it did not find
 * the text to replace, or found it more than once: `No replacement was performed, old_str \`…\` did not appear
 * verbatim in /path.`, `… Multiple occurrences of old_str \`…\` in lines [3, 9]. …`. OpenHands puts its heading
 * (`EXECUTION RESULT of [str_replace_editor]:`) and `ERROR:` above.
 */
const noReplacementPattern =
  /^\s*(?:EXECUTION RESULT of \[\w+\]:\s*\n\s*)?(?:ERROR:\s*\n\s*)?No replacement was performed\b/;
/** A quote of many lines in that error: it is cut to its first line, so that the file (or the lines) stay. */
const multilineOldString =
  /(old_str `(?:(?!` (?:did not appear verbatim in |in lines \[))[^\n])*)\n[\s\S]{0,20000}?(` (?:did not appear verbatim in |in lines \[))/;

/**
 * The errors of an edit its tool did not make, verbatim: the linter's (`E999 SyntaxError: unmatched ')'`, `F821
 * undefined name 'options'`, `path:12:5: E999 …`, without their list bullets: the lines after the opening and an
 * `ERRORS:` heading, up to a blank line or the window), or the editor's no-replacement line (a quote of many lines
 * cut to its first). An empty list when a rejection names no error; undefined when `text` is no rejection.
 */
export function rejectedEditErrors(text: string, maxLines = 4, maxChars = 400): string[] | undefined {
  const noReplacement = noReplacementPattern.exec(text);
  if (noReplacement !== null) {
    const from = noReplacement[0].lastIndexOf('No replacement');
    const head = text.slice(from, from + 25000).replace(multilineOldString, '$1 …$2');
    const newline = head.indexOf('\n');
    return [cleanErrorLine(newline === -1 ? head : head.slice(0, newline), maxChars)];
  }
  const opening = rejectedEditPattern.exec(text);
  if (opening === null) return undefined;
  const errors: string[] = [];
  // The list is short and comes first: a few lines after the opening are read, not the windows after it.
  for (const raw of text.slice(opening[0].length, opening[0].length + 4000).split('\n')) {
    if (rejectedEditEndPattern.test(raw)) break;
    const line = cleanErrorLine(raw.replace(/^\s*-\s+/, ''), maxChars);
    if (line === '' || /^ERRORS:?$/.test(line)) {
      if (errors.length > 0 && line === '') break;
      continue;
    }
    errors.push(line);
    if (errors.length >= maxLines) break;
  }
  return errors;
}

/** The first line that says something (skipping status lines and wrappers), for an error with no error line. */
export function firstMeaningfulLine(text: string, maxChars = 400): string | undefined {
  let start = 0;
  while (start < text.length) {
    const { raw, next } = lineAt(text, start);
    start = next;
    if (raw.trim().length < 2 || isNoiseLine(raw)) continue;
    const line = cleanErrorLine(raw, maxChars);
    if (line === '') continue;
    // A lead-in ("… failed due to the following issue:") says what follows it.
    if (!line.endsWith(':')) return line;
    const message = messageAfter(text, start, errorLinePattern);
    return message === undefined || message === 'error line'
      ? line
      : cleanErrorLine(`${line}${lineBreakMark}${message}`, maxChars);
  }
  return undefined;
}

/** ANSI colour codes (built from a string: a control character in a regex literal trips the linter). */
const ansiColourPattern = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

/** `text` without its ANSI colour codes: terminal styling, not what the output says. */
export function withoutColours(text: string): string {
  return text.includes('\u001b') ? text.replace(ansiColourPattern, '') : text;
}

function cleanErrorLine(raw: string, maxChars: number): string {
  let line = withoutColours(raw).trim();
  line = line.replace(errorTagPattern, '').trim();
  if (line.length > maxChars) line = `${line.slice(0, maxChars)}…`;
  return line;
}

/**
 * The dedup key of an error: numbers, hex addresses, hex ids (a request id, a hash) and whitespace runs folded,
 * case ignored.
 */
export function normaliseError(message: string): string {
  return message
    .replace(/0x[0-9a-fA-F]+/g, '0x_')
    .replace(/\b(?=[a-fA-F]*\d)[0-9a-fA-F]{12,}\b/g, '_')
    .replace(/\d+/g, '#')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
}
