/**
 * Reads what a shell command line does to files, without running it: `cat`/`head`/`sed -n` read, `sed -i`,
 * `perl -i` and redirections (`> file`, `cat > file <<EOF`, `tee`) write, `rm` deletes, `mv`/`cp`/`touch` move
 * and create, plus the SWE-agent commands (`open`, `create`, `edit N:M … end_of_edit`,
 * `str_replace_editor view|create|…`).
 * One pass over the text; quotes, heredocs and `&&`/`||`/`;`/`|` are understood well enough for agent commands.
 */

export const testRunners = [
  'pytest',
  'unittest',
  'vitest',
  'jest',
  'mocha',
  'go test',
  'cargo test',
  'npm test',
] as const;
export type TestRunner = (typeof testRunners)[number];

export type ShellEffectKind = 'read' | 'create' | 'write' | 'append' | 'edit' | 'delete' | 'revert';

export interface ShellEffect {
  kind: ShellEffectKind;
  /** The path as written in the command. */
  path: string;
  /** What the command did, verbatim where short: `sed -i 's/a/b/'`, `lines 1-40`, `moved to x`. */
  detail?: string;
  /** Lines written (heredoc or echo body), when known. */
  lineCount?: number;
  /** For SWE-agent `edit N:M`: the replacement text, so the caller can count lines and symbols. */
  replacement?: string;
  /** For SWE-agent `edit N:M`: how many lines the replacement took the place of (M - N + 1). */
  replacedLines?: number;
}

export interface ShellAnalysis {
  effects: ShellEffect[];
  /** The test runner the command invokes, when it runs tests. */
  testRunner?: TestRunner;
  /** True when the command only reads or searches (no effect worth an error scan of its output). */
  readOnly: boolean;
}

interface Redirect {
  operator: '>' | '>>';
  target: string;
}

interface Segment {
  words: string[];
  redirects: Redirect[];
  heredocBody?: string;
  /** The command line consumed a heredoc (`<<EOF`), so its stdin is not a file read. */
  hasHeredoc: boolean;
  /** Reads the previous segment's output (`nl -ba x.py | sed -n '10,20p'`). */
  piped?: boolean;
}

/** SWE-agent's multi-line edit command: `edit 12:14` then the replacement then `end_of_edit`. */
const sweAgentEditPattern = /^\s*edit\s+(\d+)(?::(\d+))?\s*\n([\s\S]*?)\n?end_of_edit\s*$/;

/**
 * What `command` does to files and whether it runs tests. `openFile` is the file SWE-agent has open (for
 * `edit N:M`, which names no file); the caller keeps it between commands.
 */
export function analyzeShellCommand(command: string, openFile?: string): ShellAnalysis {
  const edit = sweAgentEditPattern.exec(command);
  if (edit !== null) {
    const range = edit[2] === undefined ? edit[1] : `${edit[1]}:${edit[2]}`;
    // `edit N:M` replaces lines N to M; `edit N:N-1` inserts before N.
    const replacedLines =
      edit[2] === undefined ? undefined : Math.max(0, Number(edit[2]) - Number(edit[1]) + 1);
    const effects: ShellEffect[] =
      openFile === undefined
        ? []
        : [
            {
              kind: 'edit',
              path: openFile,
              detail: `edit ${range}`,
              replacement: edit[3] ?? '',
              ...(replacedLines === undefined ? {} : { replacedLines }),
            },
          ];
    return { effects, readOnly: false };
  }
  return analyzeSegments(splitShellCommand(command));
}

/** Analyses an argument vector (Codex `shell` calls carry `["bash", "-lc", "…"]` or `["cat", "x"]`). */
export function analyzeShellWords(words: readonly string[]): ShellAnalysis {
  const script = shellScriptOf(words);
  if (script !== undefined) return analyzeShellCommand(script);
  return analyzeSegments([{ words: [...words], redirects: [], hasHeredoc: false }]);
}

/** The script of `bash -lc SCRIPT` / `sh -c SCRIPT`, else undefined. */
export function shellScriptOf(words: readonly string[]): string | undefined {
  const [program, flag, script] = words;
  if (
    program !== undefined &&
    /^(?:\/\S*\/)?(?:ba|z|da)?sh$/.test(program) &&
    flag !== undefined &&
    /^-\w*c$/.test(flag) &&
    script !== undefined &&
    words.length === 3
  )
    return script;
  return undefined;
}

/** Splits a command line into simple commands with their redirections and heredoc bodies. */
export function splitShellCommand(command: string): Segment[] {
  const segments: Segment[] = [];
  let current: Segment = { words: [], redirects: [], hasHeredoc: false };
  let word = '';
  let inWord = false;
  let pendingRedirect: Redirect['operator'] | 'ignore' | undefined;
  let expectHeredocDelimiter: { strip: boolean } | undefined;
  const heredocs: Array<{ delimiter: string; strip: boolean; segment: Segment }> = [];
  const length = command.length;

  const finishWord = () => {
    if (!inWord) return;
    if (expectHeredocDelimiter !== undefined) {
      heredocs.push({ delimiter: word, strip: expectHeredocDelimiter.strip, segment: current });
      current.hasHeredoc = true;
      expectHeredocDelimiter = undefined;
    } else if (pendingRedirect !== undefined) {
      if (pendingRedirect !== 'ignore') current.redirects.push({ operator: pendingRedirect, target: word });
      pendingRedirect = undefined;
    } else current.words.push(word);
    word = '';
    inWord = false;
  };
  const finishSegment = () => {
    finishWord();
    if (current.words.length > 0 || current.redirects.length > 0) segments.push(current);
    current = { words: [], redirects: [], hasHeredoc: false };
  };

  let index = 0;
  while (index < length) {
    const character = command[index]!;
    if (character === "'") {
      const end = command.indexOf("'", index + 1);
      const stop = end === -1 ? length : end;
      word += command.slice(index + 1, stop);
      inWord = true;
      index = stop + 1;
      continue;
    }
    if (character === '"') {
      index++;
      inWord = true;
      while (index < length && command[index] !== '"') {
        if (command[index] === '\\' && index + 1 < length && '"\\$`'.includes(command[index + 1]!)) index++;
        word += command[index];
        index++;
      }
      index++;
      continue;
    }
    if (character === '\\' && index + 1 < length) {
      if (command[index + 1] !== '\n') {
        word += command[index + 1];
        inWord = true;
      }
      index += 2;
      continue;
    }
    if (character === '$' && command[index + 1] === '(') {
      // Command substitution stays inside the word.
      let depth = 0;
      const start = index;
      while (index < length) {
        if (command[index] === '(') depth++;
        else if (command[index] === ')' && --depth === 0) break;
        index++;
      }
      word += command.slice(start, index + 1);
      inWord = true;
      index++;
      continue;
    }
    if (character === '#' && !inWord) {
      while (index < length && command[index] !== '\n') index++;
      continue;
    }
    if (character === '\n') {
      finishSegment();
      index++;
      // Heredoc bodies start on the line after the command that opened them.
      for (const heredoc of heredocs.splice(0)) {
        const lines: string[] = [];
        while (index < length) {
          let end = command.indexOf('\n', index);
          if (end === -1) end = length;
          const line = command.slice(index, end);
          index = end + 1;
          if ((heredoc.strip ? line.replace(/^\t+/, '') : line).trim() === heredoc.delimiter) break;
          lines.push(line);
        }
        heredoc.segment.heredocBody = lines.join('\n');
      }
      continue;
    }
    if (character === ' ' || character === '\t') {
      finishWord();
      index++;
      continue;
    }
    if (character === ';' || character === '(' || character === ')') {
      finishSegment();
      index++;
      continue;
    }
    if (character === '|') {
      const isPipe = command[index + 1] !== '|';
      finishSegment();
      if (isPipe) current.piped = true;
      index += isPipe ? 1 : 2;
      continue;
    }
    if (character === '&') {
      if (command[index + 1] === '>') {
        finishWord();
        pendingRedirect = command[index + 2] === '>' ? '>>' : '>';
        index += command[index + 2] === '>' ? 3 : 2;
        continue;
      }
      finishSegment();
      index += command[index + 1] === '&' ? 2 : 1;
      continue;
    }
    if (character === '<') {
      if (command[index + 1] === '<' && command[index + 2] !== '<') {
        finishWord();
        const strip = command[index + 2] === '-';
        expectHeredocDelimiter = { strip };
        index += strip ? 3 : 2;
        continue;
      }
      finishWord();
      // Input redirection: the file is read.
      pendingRedirect = 'ignore';
      index += command[index + 1] === '<' ? 3 : 1;
      continue;
    }
    if (character === '>') {
      // `2>` / `1>`: a file-descriptor prefix is not a word.
      if (inWord && /^\d$/.test(word)) {
        word = '';
        inWord = false;
      } else finishWord();
      let operator: Redirect['operator'] = '>';
      index++;
      if (command[index] === '>') {
        operator = '>>';
        index++;
      }
      if (command[index] === '&') {
        // `>&2`, `2>&1`: a descriptor, not a file.
        index++;
        while (index < length && /[\d-]/.test(command[index]!)) index++;
        continue;
      }
      if (command[index] === '|') index++;
      pendingRedirect = operator;
      continue;
    }
    word += character;
    inWord = true;
    index++;
  }
  finishSegment();
  return segments;
}

const readCommands = new Set(['cat', 'head', 'tail', 'less', 'more', 'nl', 'bat', 'batcat', 'view']);
const searchCommands = new Set([
  'grep',
  'egrep',
  'fgrep',
  'rg',
  'ag',
  'ack',
  'find',
  'ls',
  'tree',
  'wc',
  'pwd',
  'echo',
  'which',
  'file',
  'stat',
  'diff',
  'search_dir',
  'search_file',
  'find_file',
  'goto',
  'scroll_up',
  'scroll_down',
  'cd',
  'export',
  'true',
  'clear',
]);
/** Options of read commands that take a separate value (`head -n 20 file`). */
const optionsWithValue = new Set(['-n', '-c', '-s', '-e', '-f', '-l', '-r', '-m', '-A', '-B', '-C']);
const wrappers = new Set(['sudo', 'env', 'time', 'nohup', 'command', 'exec', 'xargs', 'stdbuf']);
/** Words of a compound command before the simple command they run (`for …; do pytest; done`, `if ! grep …`). */
const compoundKeywords = new Set(['do', 'then', 'else', 'elif', 'if', 'while', 'until', '!']);

function commandName(word: string): string {
  const slash = word.lastIndexOf('/');
  return slash === -1 ? word : word.slice(slash + 1);
}

function isDiscardTarget(target: string): boolean {
  return target === '/dev/null' || target === '/dev/stdout' || target === '/dev/stderr' || target === '';
}

function plainArguments(words: readonly string[], from = 1, withValues = optionsWithValue): string[] {
  const result: string[] = [];
  let afterDoubleDash = false;
  for (let index = from; index < words.length; index++) {
    const word = words[index]!;
    if (!afterDoubleDash && word === '--') {
      afterDoubleDash = true;
      continue;
    }
    if (!afterDoubleDash && word.startsWith('-') && word.length > 1) {
      if (withValues.has(word)) index++;
      continue;
    }
    result.push(word);
  }
  return result;
}

function countLines(text: string): number {
  if (text === '') return 0;
  let lines = 1;
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) lines++;
  return text.endsWith('\n') ? lines - 1 : lines;
}

/** Strips leading `VAR=value`, `sudo`, `timeout 30` and the like. */
function commandWords(words: readonly string[]): string[] {
  let start = 0;
  while (start < words.length) {
    const word = words[start]!;
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) start++;
    else if (wrappers.has(word) || compoundKeywords.has(word)) start++;
    else if (word === 'timeout' && start + 1 < words.length) start += 2;
    else break;
  }
  return words.slice(start);
}

function testRunnerOf(words: readonly string[]): TestRunner | undefined {
  const name = commandName(words[0] ?? '');
  const rest = words.slice(1);
  if (name === 'pytest' || name === 'py.test') return 'pytest';
  if (/^python[\d.]*$/.test(name)) {
    const moduleIndex = rest.indexOf('-m');
    const moduleName = moduleIndex === -1 ? undefined : rest[moduleIndex + 1];
    if (moduleName === 'pytest') return 'pytest';
    if (moduleName === 'unittest') return 'unittest';
    if (rest.some((word) => /(?:^|\/)runtests\.py$/.test(word))) return 'unittest';
    if (rest.some((word) => /(?:^|\/)manage\.py$/.test(word)) && rest.includes('test')) return 'unittest';
    return undefined;
  }
  if (/(?:^|\/)runtests\.py$/.test(words[0] ?? '')) return 'unittest';
  if (name === 'vitest') return 'vitest';
  if (name === 'jest') return 'jest';
  if (name === 'mocha') return 'mocha';
  if (name === 'go' && rest[0] === 'test') return 'go test';
  if (name === 'cargo' && (rest[0] === 'test' || rest[0] === 'nextest')) return 'cargo test';
  if (name === 'npx' || name === 'pnpx' || name === 'bunx')
    return testRunnerOf(rest.filter((word) => !word.startsWith('-')));
  if (['npm', 'pnpm', 'yarn', 'bun'].includes(name)) {
    const [first, second] = rest;
    if (
      first === 'test' ||
      first === 't' ||
      (first === 'run' && second !== undefined && /^test\b/.test(second))
    )
      return 'npm test';
    if ((first === 'exec' || first === 'dlx') && second !== undefined) return testRunnerOf(rest.slice(1));
    if (first !== undefined && /^test[:\w-]*$/.test(first) && name !== 'npm') return 'npm test';
  }
  return undefined;
}

/**
 * What a word of perl's switches says (`-pi`, `-0777`, `-i.bak`, `-lne`): whether it edits in place (`-i`) and
 * whether the script follows as the next word (a cluster ending in `e`/`E`). A switch that takes the rest of the
 * word as its value (`-Mstrict`, `-I lib`, `-F:`) ends the cluster. Undefined for a word that is not switches.
 */
function perlSwitches(word: string): { inPlace: boolean; script: boolean } | undefined {
  if (!/^-[^-]/.test(word)) return undefined;
  for (let index = 1; index < word.length; index++) {
    const letter = word[index]!;
    if (letter === 'i') return { inPlace: true, script: false };
    // `-0777`, `-l`, `-l0`: an optional number, then more switches.
    if (letter === '0' || letter === 'l') {
      while (/[0-9]/.test(word[index + 1] ?? '')) index++;
      continue;
    }
    if ('MmIDdxFC'.includes(letter)) break;
    if (letter === 'e' || letter === 'E') return { inPlace: false, script: index === word.length - 1 };
  }
  return { inPlace: false, script: false };
}

function analyzeSegments(segments: readonly Segment[]): ShellAnalysis {
  const effects: ShellEffect[] = [];
  let testRunner: TestRunner | undefined;
  let readOnly = true;
  for (const segment of segments) {
    const words = commandWords(segment.words);
    const name = commandName(words[0] ?? '');
    const runner = words.length > 0 ? testRunnerOf(words) : undefined;
    if (runner !== undefined && testRunner === undefined) testRunner = runner;

    let writesRedirect = false;
    for (const redirect of segment.redirects) {
      if (isDiscardTarget(redirect.target)) continue;
      writesRedirect = true;
      const body =
        segment.heredocBody ?? (name === 'echo' || name === 'printf' ? echoBody(words) : undefined);
      effects.push({
        kind: redirect.operator === '>>' ? 'append' : 'write',
        path: redirect.target,
        ...(body === undefined ? {} : { lineCount: countLines(body) }),
        detail: redirect.operator === '>>' ? 'shell append' : 'shell write',
      });
    }
    if (writesRedirect) readOnly = false;

    if (readCommands.has(name)) {
      if (!segment.hasHeredoc && !writesRedirect)
        for (const path of plainArguments(words)) effects.push({ kind: 'read', path, detail: name });
      continue;
    }
    if (searchCommands.has(name)) continue;
    if (/^python[\d.]*$/.test(name)) {
      // A script piped in (`python - <<'PY'`) or given with -c patches files as an editor would.
      const dashC = words.indexOf('-c');
      const script = segment.heredocBody ?? (dashC === -1 ? undefined : words[dashC + 1]);
      if (script !== undefined) effects.push(...pythonScriptWrites(script));
    }
    let segmentReadOnly = false;
    switch (name) {
      case 'sed': {
        // BSD sed's `-i ''` (no backup suffix): the empty word is not the script.
        const sedWords = words.filter((word, index) => !(word === '' && words[index - 1] === '-i'));
        const inPlace = sedWords.some((word) => word.startsWith('-i') || word === '--in-place');
        const hasScriptOption = sedWords.includes('-e');
        const argumentsAfter = plainArguments(sedWords, 1, new Set(['-e', '-f', '-l']));
        const files = hasScriptOption ? argumentsAfter : argumentsAfter.slice(1);
        const script = hasScriptOption ? sedWords[sedWords.indexOf('-e') + 1] : argumentsAfter[0];
        if (inPlace) {
          for (const path of files)
            effects.push({ kind: 'edit', path, detail: `sed -i ${quoteForDisplay(script ?? '')}` });
        } else if (!writesRedirect) {
          segmentReadOnly = true;
          const range = script === undefined ? undefined : /^(\d+)(?:,(\d+))?p$/.exec(script.trim());
          const previous = effects.at(-1);
          // `nl -ba x.py | sed -n '10,20p'`: the range belongs to the file read before the pipe.
          if (files.length === 0 && segment.piped === true && previous?.kind === 'read' && range)
            previous.detail = `lines ${range[1]}-${range[2] ?? range[1]}`;
          for (const path of files)
            effects.push({
              kind: 'read',
              path,
              detail:
                range === null || range === undefined ? 'sed' : `lines ${range[1]}-${range[2] ?? range[1]}`,
            });
        }
        break;
      }
      case 'perl': {
        // `perl -0777 -i -pe 's/…/…/s' x.py`, `perl -pi -e …`: sed's in-place edit, across lines where sed's is
        // not. The script is the word after the switch cluster that ends in `e`; the files follow it.
        let inPlace = false;
        let scriptAt = -1;
        for (let index = 1; index < words.length && scriptAt === -1; index++) {
          const switches = perlSwitches(words[index]!);
          if (switches === undefined) break;
          inPlace ||= switches.inPlace;
          if (switches.script) scriptAt = index + 1;
        }
        if (scriptAt === -1) break;
        const script = words[scriptAt];
        const files = plainArguments(words, scriptAt + 1, new Set(['-e', '-E', '-I', '-M', '-m']));
        if (inPlace)
          for (const path of files)
            effects.push({ kind: 'edit', path, detail: `perl -i ${quoteForDisplay(script ?? '')}` });
        else if (!writesRedirect) {
          segmentReadOnly = true;
          for (const path of files) effects.push({ kind: 'read', path, detail: 'perl' });
        }
        break;
      }
      case 'tee': {
        const append = words.includes('-a') || words.includes('--append');
        for (const path of plainArguments(words))
          if (!isDiscardTarget(path))
            effects.push({
              kind: append ? 'append' : 'write',
              path,
              detail: append ? 'tee -a' : 'tee',
              ...(segment.heredocBody === undefined ? {} : { lineCount: countLines(segment.heredocBody) }),
            });
        break;
      }
      case 'rm':
      case 'unlink':
        for (const path of plainArguments(words, 1, new Set()))
          effects.push({ kind: 'delete', path, detail: name });
        break;
      case 'touch':
        for (const path of plainArguments(words, 1, new Set(['-d', '-t', '-r'])))
          effects.push({ kind: 'create', path, detail: 'touch' });
        break;
      case 'mv':
      case 'cp': {
        const paths = plainArguments(words, 1, new Set(['-t', '-S']));
        const target = paths.at(-1);
        if (paths.length === 2 && target !== undefined) {
          const source = paths[0]!;
          if (name === 'mv') effects.push({ kind: 'delete', path: source, detail: `moved to ${target}` });
          effects.push({
            kind: 'create',
            path: target,
            detail: `${name === 'mv' ? 'moved' : 'copied'} from ${source}`,
          });
        }
        break;
      }
      case 'git': {
        const sub = words[1];
        if (sub === 'checkout' || sub === 'restore') {
          // `git checkout -b name` and `git checkout branch` touch no file; `-- paths` and `x.py` do.
          const dashDash = words.indexOf('--');
          const candidates =
            dashDash !== -1
              ? words.slice(dashDash + 1)
              : words.some((word) => /^-[bB]$|^--orphan$/.test(word))
                ? []
                : plainArguments(words, 2).filter(
                    (word) => looksLikeFilePath(word) && /\.[A-Za-z0-9]{1,8}$/.test(word),
                  );
          for (const path of candidates) effects.push({ kind: 'revert', path, detail: `git ${sub}` });
        } else if (sub === 'rm') {
          for (const path of plainArguments(words, 2))
            effects.push({ kind: 'delete', path, detail: 'git rm' });
        } else if (sub === 'mv' && words.length >= 4) {
          const [source, target] = plainArguments(words, 2);
          if (source !== undefined && target !== undefined) {
            effects.push({ kind: 'delete', path: source, detail: `moved to ${target}` });
            effects.push({ kind: 'create', path: target, detail: `moved from ${source}` });
          }
        } else if (['diff', 'status', 'log', 'show', 'branch', 'blame', 'grep'].includes(sub ?? ''))
          segmentReadOnly = true;
        break;
      }
      // SWE-agent's own commands.
      case 'open':
        if (words[1] !== undefined)
          effects.push({
            kind: 'read',
            path: words[1],
            ...(words[2] === undefined ? {} : { detail: `open at line ${words[2]}` }),
          });
        segmentReadOnly = true;
        break;
      case 'create':
        if (words[1] !== undefined && words.length === 2)
          effects.push({ kind: 'create', path: words[1], detail: 'create' });
        break;
      case 'str_replace_editor': {
        const [, subcommand, path] = words;
        if (path !== undefined) {
          if (subcommand === 'view') effects.push({ kind: 'read', path, detail: 'view' });
          else if (subcommand === 'create') effects.push({ kind: 'create', path, detail: 'create' });
          else if (subcommand === 'str_replace' || subcommand === 'insert' || subcommand === 'undo_edit')
            effects.push({ kind: 'edit', path, detail: subcommand });
        }
        break;
      }
      default:
        break;
    }
    if (!segmentReadOnly) readOnly = false;
  }
  if (testRunner !== undefined) readOnly = false;
  // A path the shell would expand (`/tmp/run-$i.log` in a loop, `$OUT`, `$(pwd)/x`) names no one file: the
  // command is recorded, the file is not.
  const named = effects.filter((effect) => !shellExpansion.test(effect.path));
  return { effects: named, readOnly, ...(testRunner === undefined ? {} : { testRunner }) };
}

/** The detail of a file change a Python script given inline makes (`python - <<'PY'`, `python -c`). */
export const pythonScriptDetail = 'python script';

/**
 * Python's report that a script given inline did not compile (`File "<stdin>", line 3` … `SyntaxError: …`, with no
 * traceback): nothing in it ran.
 */
export function inlineScriptDidNotCompile(output: string): boolean {
  return (
    /^\s*File "<(?:stdin|string)>", line \d+\s*$[\s\S]*?^(?:SyntaxError|IndentationError|TabError): /m.test(
      output,
    ) && !output.includes('Traceback (most recent call last)')
  );
}

/** `p = Path('x')` alone on its line (`Path('a') / 'b'` names another file). */
const pythonPathBinding = /\b(\w+)\s*=\s*(?:pathlib\.)?Path\(\s*(['"])([^'"\n]+)\2\s*\)(?=\s*(?:[;#].*)?$)/gm;
/** `p.read_text(` / `Path('x').write_bytes(`…: the name or literal path, and which. */
const pythonPathAccess =
  /(?:\b(\w+)|(?:pathlib\.)?Path\(\s*(['"])([^'"\n]+)\2\s*\))\.(read|write)_(?:text|bytes)\(/g;
const pythonOpen = /\bopen\(\s*(['"])([^'"\n]+)\1\s*(?:,\s*(?:mode\s*=\s*)?(['"])([rwaxbt+]+)\3)?/g;

/**
 * The files a Python script writes: `Path('x').write_text(…)` (or a name bound to `Path('x')`) and
 * `open('x', 'w' | 'a' | …)`. A file the script also reads (`read_text`, `open('x')`) is edited, not written
 * whole: agents patch sources with `s = p.read_text(); p.write_text(s.replace(old, new))`.
 */
function pythonScriptWrites(script: string): ShellEffect[] {
  const bindings = new Map<string, string>();
  for (const [, name, , path] of script.matchAll(pythonPathBinding)) bindings.set(name!, path!);
  const read = new Set<string>();
  const written = new Map<string, 'write' | 'append'>();
  for (const [, name, , literal, access] of script.matchAll(pythonPathAccess)) {
    const path = name === undefined ? literal : bindings.get(name);
    if (path === undefined) continue;
    if (access === 'read') read.add(path);
    else written.set(path, 'write');
  }
  for (const [, , path, , mode = 'r'] of script.matchAll(pythonOpen)) {
    if (/[wax+]/.test(mode)) written.set(path!, mode.includes('a') ? 'append' : 'write');
    else read.add(path!);
  }
  return [...written].map(([path, kind]) =>
    read.has(path)
      ? { kind: 'edit', path, detail: pythonScriptDetail }
      : { kind, path, detail: pythonScriptDetail },
  );
}

/** A parameter, command or arithmetic expansion, or a backquoted command. */
const shellExpansion = /\$[\w{(]|`/;

function echoBody(words: readonly string[]): string {
  return plainArguments(words, 1, new Set()).join(' ');
}

/** A plausible file path: has a slash or a file extension, and no shell metacharacters. */
export function looksLikeFilePath(word: string): boolean {
  if (word.length === 0 || word.length > 300 || /[\s*?$<>|]/.test(word)) return false;
  return /\//.test(word) || /\.[A-Za-z0-9]{1,8}$/.test(word);
}

function quoteForDisplay(text: string): string {
  return /[\s'"$]/.test(text) ? `'${text.replace(/'/g, `'\\''`)}'` : text;
}
