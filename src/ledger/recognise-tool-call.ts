import {
  diffBodyStats,
  parseApplyPatch,
  parseConflictBlocks,
  parseUnifiedDiff,
  replacementStats,
  splitLines,
  symbolsIn,
} from './code-change.js';
import type { ReferenceKind } from './references.js';
import {
  analyzeShellCommand,
  analyzeShellWords,
  looksLikeFilePath,
  type ShellAnalysis,
  shellScriptOf,
  type TestRunner,
} from './shell-command.js';

export type FileActionKind = 'read' | 'create' | 'write' | 'edit' | 'append' | 'delete' | 'revert';

/** One thing a tool call does to one file, with what changed when the input says. */
export interface FileAction {
  kind: FileActionKind;
  path: string;
  /** Verbatim specifics: `lines 350-399`, `sed -i 's/a/b/'`, `insert at line 12`, `3 edits`, `moved to x`. */
  detail?: string;
  linesAdded?: number;
  linesRemoved?: number;
  /** Lines written by a whole-file write. */
  lineCount?: number;
  hunks?: number;
  oldChars?: number;
  newChars?: number;
  symbols?: string[];
}

/** `delegate`: a task handed to a sub-agent (Claude Code's `Task`), described as `Task "description"`. */
export type CommandKind = 'shell' | 'search' | 'code' | 'delegate';

export interface RecognisedCommand {
  /**
   * The command verbatim (a shell line, a search described as `Grep "pattern" path`, code, a sub-agent's task
   * as `Task "description"`).
   */
  text: string;
  kind: CommandKind;
  /** Only reads or searches: its output is not scanned for errors unless it failed. */
  readOnly: boolean;
  testRunner?: TestRunner;
}

export interface RecognisedToolCall {
  files: FileAction[];
  command?: RecognisedCommand;
  references: Array<{ kind: ReferenceKind; value: string }>;
}

/** State a recogniser keeps between calls: SWE-agent's open file (its `edit N:M` names none). */
export interface RecogniserState {
  openFile?: string;
}

/** Tools that hand a task to a sub-agent and return its final report (Claude Code's `Task`, and the like). */
const subAgentToolPattern = /^(?:Task|Agent|dispatch_agent|delegate_task|run_subagent)$/;

/** Characters of a sub-agent task's description in its command. */
const maxDelegateChars = 120;

/** Whether `toolName` hands a task to a sub-agent, whose result is the sub-agent's report. */
export function isSubAgentTool(toolName: string): boolean {
  return subAgentToolPattern.test(toolName);
}

/** `mcp__desktop-commander__read_file` → `read_file`, `MultiEdit` → `multi_edit`, `container.exec` → `container_exec`. */
export function normaliseToolName(name: string): string {
  const base = name.includes('__') ? name.slice(name.lastIndexOf('__') + 2) : name;
  return base
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[-.\s]+/g, '_')
    .toLowerCase();
}

const readTools = new Set([
  'read',
  'read_file',
  'read_text_file',
  'view_file',
  'open_file',
  'cat',
  'get_file_contents',
  'read_multiple_files',
  'notebook_read',
  'read_notebook',
]);
const writeTools = new Set([
  'write',
  'write_file',
  'write_to_file',
  'create_file',
  'save',
  'save_file',
  'file_write',
  'put_file',
  'create_or_update_file',
]);
const appendTools = new Set(['append', 'append_file', 'append_to_file']);
const editTools = new Set([
  'edit',
  'edit_file',
  'edit_block',
  'str_replace',
  'replace',
  'replace_in_file',
  'search_replace',
  'replace_string_in_file',
  'multi_edit',
  'notebook_edit',
  'edit_notebook',
  'modify_file',
  'update_file',
]);
const patchTools = new Set(['apply_patch', 'patch', 'apply_diff', 'patch_file']);
const editorTools = new Set([
  'str_replace_editor',
  'str_replace_based_edit_tool',
  'text_editor',
  'file_editor',
]);
const deleteTools = new Set(['delete', 'delete_file', 'remove_file', 'rm', 'remove']);
const shellTools = new Set([
  'bash',
  'execute_bash',
  'shell',
  'run',
  'run_terminal_cmd',
  'run_command',
  'run_shell_command',
  'terminal',
  'exec',
  'exec_command',
  'local_shell',
  'execute_command',
  'start_process',
  'container_exec',
  'command',
  'sh',
  'powershell',
]);
const codeTools = new Set([
  'ipython',
  'python',
  'execute_python',
  'run_python',
  'execute_ipython_cell',
  'jupyter',
]);
const searchTools = new Set([
  'grep',
  'grep_search',
  'search',
  'codebase_search',
  'glob',
  'find',
  'file_search',
  'search_files',
  'start_search',
  'ripgrep',
  'list_dir',
  'ls',
  'list_directory',
  'list_files',
  'find_files',
  'search_code',
  'directory_tree',
]);

const pathKeys = [
  'file_path',
  'path',
  'filePath',
  'filename',
  'file',
  'target_file',
  'notebook_path',
  'target_notebook',
  'absolute_path',
  'relative_path',
] as const;
const contentKeys = ['content', 'file_text', 'contents', 'text', 'new_content', 'code_edit', 'data'] as const;
const oldTextKeys = [
  'old_string',
  'old_str',
  'oldString',
  'search',
  'old_text',
  'oldText',
  'old',
  'original',
] as const;
const newTextKeys = [
  'new_string',
  'new_str',
  'newString',
  'replace',
  'new_text',
  'newText',
  'new',
  'updated',
  'replacement',
] as const;

type InputRecord = Record<string, unknown>;

function asRecord(input: unknown): InputRecord | undefined {
  return typeof input === 'object' && input !== null && !Array.isArray(input)
    ? (input as InputRecord)
    : undefined;
}

function stringField(record: InputRecord | undefined, keys: readonly string[]): string | undefined {
  if (record === undefined) return undefined;
  for (const key of keys) {
    const value = record[key];
    if (typeof value === 'string') return value;
  }
  return undefined;
}

function numberField(record: InputRecord | undefined, keys: readonly string[]): number | undefined {
  if (record === undefined) return undefined;
  for (const key of keys) {
    const value = record[key];
    if (typeof value === 'number' && Number.isFinite(value)) return value;
    if (typeof value === 'string' && /^-?\d+$/.test(value)) return Number(value);
  }
  return undefined;
}

function pathOf(record: InputRecord | undefined): string | undefined {
  const path = stringField(record, pathKeys);
  return path === undefined || path.trim() === '' ? undefined : path;
}

function countLines(text: string): number {
  return splitLines(text).length;
}

function readRange(record: InputRecord | undefined): string | undefined {
  const viewRange = record?.view_range;
  if (Array.isArray(viewRange) && typeof viewRange[0] === 'number') {
    const end = viewRange[1];
    return typeof end === 'number' && end >= 0 ? `lines ${viewRange[0]}-${end}` : `from line ${viewRange[0]}`;
  }
  const first = numberField(record, ['start_line_one_indexed', 'start_line', 'startLine', 'line_start']);
  const last = numberField(record, [
    'end_line_one_indexed_inclusive',
    'end_line_one_indexed',
    'end_line',
    'endLine',
    'line_end',
  ]);
  if (first !== undefined) return last === undefined ? `from line ${first}` : `lines ${first}-${last}`;
  const offset = numberField(record, ['offset']);
  const limit = numberField(record, ['limit', 'length', 'line_count']);
  if (offset !== undefined && offset > 0)
    return limit === undefined ? `from line ${offset}` : `lines ${offset}-${offset + limit - 1}`;
  if (limit !== undefined) return `lines 1-${limit}`;
  return undefined;
}

type Loose<T> = { [K in keyof T]: T[K] | undefined };

/** Drops `undefined` fields, so optional fields are absent rather than undefined (exactOptionalPropertyTypes). */
function defined<T extends object>(value: Loose<T>): T {
  for (const key of Object.keys(value) as Array<keyof T>) if (value[key] === undefined) delete value[key];
  return value as T;
}

function replacementAction(path: string, oldText: string, newText: string, detail?: string): FileAction {
  const stats = replacementStats(oldText, newText);
  return defined<FileAction>({
    kind: 'edit' as const,
    path,
    detail,
    linesAdded: stats.linesAdded,
    linesRemoved: stats.linesRemoved,
    oldChars: oldText.length,
    newChars: newText.length,
    symbols: stats.symbols,
  });
}

/** Text inserted after a line (an editor's `insert`, SWE-agent's `insert`): an edit adding its lines. */
function insertAction(path: string, record: InputRecord | undefined): FileAction {
  const lines = splitLines(stringField(record, ['new_str', 'insert_text', 'text', 'content']) ?? '');
  const line = numberField(record, ['insert_line', 'line', 'line_number']);
  return defined<FileAction>({
    kind: 'edit' as const,
    path,
    detail: line === undefined ? 'insert' : `insert at line ${line}`,
    linesAdded: lines.length,
    symbols: symbolsIn(lines),
  });
}

function writeAction(
  kind: 'write' | 'create' | 'append',
  path: string,
  content: string | undefined,
): FileAction {
  if (content === undefined) return { kind, path };
  return { kind, path, lineCount: countLines(content), symbols: symbolsIn(splitLines(content)) };
}

function shellAnalysisActions(analysis: ShellAnalysis): FileAction[] {
  return analysis.effects.map((effect) => {
    if (effect.replacement !== undefined) {
      const lines = splitLines(effect.replacement);
      return defined<FileAction>({
        kind: effect.kind,
        path: effect.path,
        detail: effect.detail,
        linesAdded: lines.length,
        linesRemoved: effect.replacedLines,
        symbols: symbolsIn(lines),
      });
    }
    return defined<FileAction>({
      kind: effect.kind,
      path: effect.path,
      detail: effect.detail,
      lineCount: effect.lineCount,
    });
  });
}

function displayWords(words: readonly string[]): string {
  return words
    .map((word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`))
    .join(' ');
}

function recogniseShell(input: unknown, state: RecogniserState): RecognisedToolCall {
  const record = asRecord(input);
  if (record !== undefined && (record.is_input === true || record.is_input === 'true'))
    return { files: [], references: [] };
  const raw =
    typeof input === 'string'
      ? input
      : (record?.command ?? record?.cmd ?? record?.script ?? record?.commands);
  let text: string;
  let analysis: ShellAnalysis;
  if (Array.isArray(raw) && raw.every((word) => typeof word === 'string')) {
    const words = raw as string[];
    text = shellScriptOf(words) ?? displayWords(words);
    analysis = analyzeShellWords(words);
  } else if (typeof raw === 'string' && raw.trim() !== '') {
    text = raw.trim();
    analysis = analyzeShellCommand(text, state.openFile);
  } else return { files: [], references: [] };
  // SWE-agent: `open` and `create` change the file `edit N:M` applies to.
  for (const effect of analysis.effects)
    if (
      (effect.kind === 'read' && effect.detail !== undefined && effect.detail.startsWith('open')) ||
      effect.detail === 'create'
    )
      state.openFile = effect.path;
  const openMatch = /^\s*open\s+(\S+)/.exec(text);
  if (openMatch !== null) state.openFile = openMatch[1]!;
  return {
    files: shellAnalysisActions(analysis),
    command: defined<RecognisedCommand>({
      text,
      kind: 'shell' as const,
      readOnly: analysis.readOnly,
      testRunner: analysis.testRunner,
    }),
    references: [],
  };
}

function recogniseEditor(record: InputRecord | undefined, path: string | undefined): FileAction[] {
  if (path === undefined) return [];
  const command = stringField(record, ['command']);
  switch (command) {
    case 'view': {
      // A path without an extension is most likely a directory listing.
      if (!/\.[^/]+$/.test(path.split('/').pop() ?? '')) return [];
      return [defined<FileAction>({ kind: 'read' as const, path, detail: readRange(record) })];
    }
    case 'create':
      return [writeAction('create', path, stringField(record, ['file_text', 'content']))];
    case 'str_replace':
      return [
        replacementAction(
          path,
          stringField(record, ['old_str']) ?? '',
          stringField(record, ['new_str']) ?? '',
        ),
      ];
    case 'insert':
      return [insertAction(path, record)];
    case 'undo_edit':
      return [{ kind: 'edit', path, detail: 'undo_edit' }];
    default:
      return [];
  }
}

function patchActions(patch: string, path: string | undefined): FileAction[] {
  const envelope = patch.includes('*** Begin Patch') || /^\*\*\* (?:Add|Update|Delete) File: /m.test(patch);
  const files = envelope
    ? parseApplyPatch(patch)
    : patch.includes('\n+++ ') || patch.startsWith('--- ')
      ? parseUnifiedDiff(patch)
      : [];
  if (files.length > 0) {
    const actions: FileAction[] = [];
    for (const file of files) {
      if (file.operation === 'delete') {
        actions.push({ kind: 'delete', path: file.path, detail: 'patch' });
        continue;
      }
      actions.push(
        defined<FileAction>({
          kind: file.operation === 'add' ? ('create' as const) : ('edit' as const),
          path: file.path,
          detail: file.movedTo === undefined ? 'patch' : `patch, moved to ${file.movedTo}`,
          linesAdded: file.linesAdded,
          linesRemoved: file.linesRemoved,
          hunks: file.hunks || undefined,
          symbols: file.symbols,
        }),
      );
      if (file.movedTo !== undefined)
        actions.push({ kind: 'create', path: file.movedTo, detail: `moved from ${file.path}` });
    }
    return actions;
  }
  if (path === undefined) return [];
  const blocks = parseConflictBlocks(patch);
  if (blocks.length > 0) return [mergedReplacements(path, blocks, 'patch')];
  const stats = diffBodyStats(patch);
  return [
    defined<FileAction>({
      kind: 'edit' as const,
      path,
      detail: 'patch',
      linesAdded: stats.linesAdded,
      linesRemoved: stats.linesRemoved,
      hunks: stats.hunks || undefined,
      symbols: stats.symbols,
    }),
  ];
}

function mergedReplacements(
  path: string,
  edits: ReadonlyArray<{ oldText: string; newText: string }>,
  what: string,
): FileAction {
  let linesAdded = 0;
  let linesRemoved = 0;
  let oldChars = 0;
  let newChars = 0;
  const symbols: string[] = [];
  for (const edit of edits) {
    const stats = replacementStats(edit.oldText, edit.newText);
    linesAdded += stats.linesAdded;
    linesRemoved += stats.linesRemoved;
    oldChars += edit.oldText.length;
    newChars += edit.newText.length;
    for (const symbol of stats.symbols)
      if (symbols.length < 6 && !symbols.includes(symbol)) symbols.push(symbol);
  }
  return {
    kind: 'edit',
    path,
    detail: `${edits.length} ${what}${edits.length === 1 ? '' : 's'}`,
    linesAdded,
    linesRemoved,
    oldChars,
    newChars,
    symbols,
  };
}

function searchText(toolName: string, record: InputRecord | undefined): string | undefined {
  const pattern = stringField(record, ['pattern', 'query', 'regex', 'search_term', 'glob', 'name']);
  const where = stringField(record, [
    'path',
    'relative_workspace_path',
    'directory',
    'dir',
    'cwd',
    'include',
  ]);
  if (pattern === undefined && where === undefined) return undefined;
  const pieces = [toolName];
  if (pattern !== undefined) pieces.push(JSON.stringify(pattern));
  if (where !== undefined) pieces.push(where);
  return pieces.join(' ');
}

function structuredReferences(record: InputRecord | undefined): RecognisedToolCall['references'] {
  if (record === undefined) return [];
  const references: RecognisedToolCall['references'] = [];
  const url = stringField(record, ['url', 'uri']);
  if (url !== undefined && /^https?:\/\//.test(url)) references.push({ kind: 'url', value: url });
  const owner = stringField(record, ['owner']);
  const repository = stringField(record, ['repo', 'repository']);
  const number = numberField(record, [
    'issue_number',
    'pull_number',
    'pullNumber',
    'issueNumber',
    'pr_number',
  ]);
  if (number !== undefined) {
    const prefix = owner !== undefined && repository !== undefined ? `${owner}/${repository}` : '';
    references.push({ kind: 'issue', value: `${prefix}#${number}` });
  }
  return references;
}

/**
 * Whether `recogniseToolCall` can find a shell or code command in a call of `toolName` (only those tools run
 * one; the others read, write or search), without recognising the call.
 */
export function runsCommand(toolName: string): boolean {
  const name = normaliseToolName(toolName);
  return shellTools.has(name) || codeTools.has(name);
}

/**
 * What a tool call does, from its name and input alone: the files it reads or changes (with line counts and
 * symbols where the input shows them) and the command it runs. Unknown tools with a path argument are guessed
 * from the words in their name (`read`, `write`, `edit`, `delete`). `state` carries SWE-agent's open file.
 */
export function recogniseToolCall(
  toolName: string,
  input: unknown,
  state: RecogniserState = {},
): RecognisedToolCall {
  const name = normaliseToolName(toolName);
  const record = asRecord(input);
  const references = structuredReferences(record);
  const named = pathOf(record);
  // SWE-agent's function-calling tools: `open` and `create` name the file that its `edit` and `insert` (which
  // name none) apply to.
  if (named !== undefined && (name === 'open' || name === 'create')) state.openFile = named;
  const path = named ?? (name === 'edit' || name === 'insert' ? state.openFile : undefined);
  const result = (files: FileAction[], command?: RecognisedCommand): RecognisedToolCall =>
    command === undefined ? { files, references } : { files, command, references };

  if (isSubAgentTool(toolName)) {
    // What it was asked is prose for another agent, not a script: its description (or the prompt's first line)
    // names it. Its report is read as the agent's own reasoning, not scanned for errors.
    const what = (
      stringField(record, ['description']) ?? stringField(record, ['prompt'])?.trim().split('\n')[0]
    )?.slice(0, maxDelegateChars);
    return what === undefined
      ? result([])
      : result([], { text: `${toolName} ${JSON.stringify(what)}`, kind: 'delegate', readOnly: true });
  }
  if (shellTools.has(name)) {
    const shell = recogniseShell(input, state);
    return { ...shell, references: [...references, ...shell.references] };
  }
  if (editorTools.has(name)) return result(recogniseEditor(record, path));
  if (codeTools.has(name)) {
    const code = typeof input === 'string' ? input : stringField(record, ['code', 'source', 'command']);
    return code === undefined ? result([]) : result([], { text: code.trim(), kind: 'code', readOnly: false });
  }
  if (patchTools.has(name)) {
    const patch =
      typeof input === 'string'
        ? input
        : stringField(record, ['input', 'patch', 'patch_text', 'diff', 'content']);
    return result(patch === undefined ? [] : patchActions(patch, path));
  }
  if (name === 'multi_edit' && path !== undefined && Array.isArray(record?.edits)) {
    const edits = (record.edits as unknown[]).map((edit) => {
      const editRecord = asRecord(edit);
      return {
        oldText: stringField(editRecord, oldTextKeys) ?? '',
        newText: stringField(editRecord, newTextKeys) ?? '',
      };
    });
    return result([mergedReplacements(path, edits, 'edit')]);
  }
  if ((name === 'notebook_edit' || name === 'edit_notebook') && path !== undefined) {
    const source = stringField(record, ['new_source', 'source', 'content']) ?? '';
    const mode = stringField(record, ['edit_mode']);
    const cell =
      stringField(record, ['cell_id']) ?? numberField(record, ['cell_number', 'cell_index'])?.toString();
    const lines = splitLines(source);
    const detail = [mode ?? 'edit', cell === undefined ? undefined : `cell ${cell}`]
      .filter(Boolean)
      .join(' ');
    return result([{ kind: 'edit', path, detail, linesAdded: lines.length, symbols: symbolsIn(lines) }]);
  }
  if (readTools.has(name) || name === 'view' || name === 'open') {
    const paths = Array.isArray(record?.paths)
      ? (record.paths as unknown[]).filter((item): item is string => typeof item === 'string')
      : path === undefined
        ? []
        : [path];
    return result(
      paths.map((file) =>
        defined<FileAction>({ kind: 'read' as const, path: file, detail: readRange(record) }),
      ),
    );
  }
  // SWE-agent's `insert`: text after a line of the open file.
  if (name === 'insert' && path !== undefined) return result([insertAction(path, record)]);
  if (editTools.has(name) && path !== undefined) {
    const oldText = stringField(record, oldTextKeys);
    const newText = stringField(record, newTextKeys);
    if (oldText !== undefined || newText !== undefined) {
      const blocks = oldText === undefined ? parseConflictBlocks(newText ?? '') : [];
      if (blocks.length > 0) return result([mergedReplacements(path, blocks, 'edit')]);
      return result([replacementAction(path, oldText ?? '', newText ?? '')]);
    }
    const diff = stringField(record, ['diff', 'patch']);
    if (diff !== undefined) return result(patchActions(diff, path));
    const content = stringField(record, contentKeys);
    if (content !== undefined) {
      const blocks = parseConflictBlocks(content);
      if (blocks.length > 0) return result([mergedReplacements(path, blocks, 'edit')]);
      const lines = splitLines(content);
      return result([{ kind: 'edit', path, linesAdded: lines.length, symbols: symbolsIn(lines) }]);
    }
    return result([{ kind: 'edit', path }]);
  }
  if (writeTools.has(name) && path !== undefined) {
    const content = stringField(record, contentKeys);
    return result([writeAction(name === 'create_file' ? 'create' : 'write', path, content)]);
  }
  if (appendTools.has(name) && path !== undefined)
    return result([writeAction('append', path, stringField(record, contentKeys))]);
  if (deleteTools.has(name) && path !== undefined) return result([{ kind: 'delete', path }]);
  if (searchTools.has(name)) {
    const text = searchText(toolName, record);
    return text === undefined ? result([]) : result([], { text, kind: 'search', readOnly: true });
  }
  // Unknown tools: guess from the name when there is a path.
  if (path !== undefined && looksLikeFilePath(path)) {
    if (/delete|remove/.test(name)) return result([{ kind: 'delete', path }]);
    if (/edit|patch|replace|modify|update/.test(name)) {
      const oldText = stringField(record, oldTextKeys);
      const newText = stringField(record, newTextKeys);
      if (oldText !== undefined || newText !== undefined)
        return result([replacementAction(path, oldText ?? '', newText ?? '')]);
      return result([{ kind: 'edit', path }]);
    }
    if (/write|save|create/.test(name))
      return result([writeAction('write', path, stringField(record, contentKeys))]);
    if (/read|view|open|cat|get|show/.test(name))
      return result([defined<FileAction>({ kind: 'read' as const, path, detail: readRange(record) })]);
  }
  return result([]);
}
