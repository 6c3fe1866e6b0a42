import { describe, expect, it } from 'vitest';
import { normaliseToolName, recogniseToolCall } from './recognise-tool-call.js';

const files = (toolName: string, input: unknown) => recogniseToolCall(toolName, input).files;

describe('normaliseToolName', () => {
  it('drops MCP prefixes and snake-cases', () => {
    expect(normaliseToolName('mcp__desktop-commander__read_file')).toBe('read_file');
    expect(normaliseToolName('MultiEdit')).toBe('multi_edit');
    expect(normaliseToolName('NotebookEdit')).toBe('notebook_edit');
    expect(normaliseToolName('container.exec')).toBe('container_exec');
  });
});

describe('recogniseToolCall', () => {
  it('Claude Code Read / Write / Edit / MultiEdit / NotebookEdit', () => {
    expect(files('Read', { file_path: '/r/src/a.ts', offset: 350, limit: 50 })).toEqual([
      { kind: 'read', path: '/r/src/a.ts', detail: 'lines 350-399' },
    ]);
    expect(files('Write', { file_path: '/r/b.py', content: 'def f():\n    return 1\n' })).toEqual([
      { kind: 'write', path: '/r/b.py', lineCount: 2, symbols: ['f'] },
    ]);
    expect(
      files('Edit', { file_path: '/r/a.ts', old_string: 'a\n', new_string: 'a\nfunction g() {}\n' }),
    ).toEqual([
      {
        kind: 'edit',
        path: '/r/a.ts',
        linesAdded: 1,
        linesRemoved: 0,
        oldChars: 2,
        newChars: 18,
        symbols: ['g'],
      },
    ]);
    expect(
      files('MultiEdit', {
        file_path: '/p/CLAUDE.md',
        edits: [
          { old_string: 'x', new_string: 'y' },
          { old_string: 'p', new_string: 'q\nr' },
        ],
      }),
    ).toEqual([
      {
        kind: 'edit',
        path: '/p/CLAUDE.md',
        detail: '2 edits',
        linesAdded: 3,
        linesRemoved: 2,
        oldChars: 2,
        newChars: 4,
        symbols: [],
      },
    ]);
    expect(
      files('NotebookEdit', {
        notebook_path: 'a.ipynb',
        new_source: 'x = 1',
        cell_id: 'c1',
        edit_mode: 'replace',
      }),
    ).toEqual([{ kind: 'edit', path: 'a.ipynb', detail: 'replace cell c1', linesAdded: 1, symbols: [] }]);
  });

  it('MCP desktop-commander read_file / edit_block / write_file', () => {
    expect(files('mcp__desktop-commander__read_file', { path: '/h/s.ts', offset: 285, length: 100 })).toEqual(
      [{ kind: 'read', path: '/h/s.ts', detail: 'lines 285-384' }],
    );
    expect(
      files('mcp__desktop-commander__edit_block', {
        file_path: '/h/x.json',
        old_string: 'a',
        new_string: 'b',
      })[0],
    ).toMatchObject({
      kind: 'edit',
      path: '/h/x.json',
      linesAdded: 1,
      linesRemoved: 1,
    });
    expect(
      files('mcp__desktop-commander__write_file', { path: '/h/s.json', content: '{}\n' })[0],
    ).toMatchObject({
      kind: 'write',
      lineCount: 1,
    });
  });

  it('OpenHands / SWE-agent str_replace_editor commands', () => {
    expect(
      files('str_replace_editor', { command: 'view', path: '/w/src/a.ts', view_range: [10, 40] }),
    ).toEqual([{ kind: 'read', path: '/w/src/a.ts', detail: 'lines 10-40' }]);
    expect(files('str_replace_editor', { command: 'view', path: '/w/src' })).toEqual([]);
    expect(
      files('str_replace_editor', { command: 'create', path: '/w/t.ts', file_text: 'a\nb\n' })[0],
    ).toMatchObject({
      kind: 'create',
      lineCount: 2,
    });
    expect(
      files('str_replace_editor', { command: 'insert', path: '/w/t.ts', insert_line: 3, new_str: 'c' })[0],
    ).toMatchObject({
      kind: 'edit',
      detail: 'insert at line 3',
      linesAdded: 1,
    });
    expect(files('str_replace_editor', { command: 'undo_edit', path: '/w/t.ts' })).toEqual([
      { kind: 'edit', path: '/w/t.ts', detail: 'undo_edit' },
    ]);
  });

  it('shell tools: commands with file effects, OpenHands input keystrokes ignored', () => {
    const call = recogniseToolCall('execute_bash', { command: 'cd /w && cat src/a.ts' });
    expect(call.command).toEqual({ text: 'cd /w && cat src/a.ts', kind: 'shell', readOnly: true });
    expect(call.files).toEqual([{ kind: 'read', path: 'src/a.ts', detail: 'cat' }]);
    expect(recogniseToolCall('execute_bash', { command: 'C-c', is_input: 'true' }).command).toBeUndefined();
    expect(recogniseToolCall('shell', { command: ['bash', '-lc', 'pytest -q'] }).command).toMatchObject({
      text: 'pytest -q',
      testRunner: 'pytest',
    });
  });

  it('keeps SWE-agent’s open file between calls for edit N:M', () => {
    const state = {};
    recogniseToolCall('bash', { command: 'create printenv.pl' }, state);
    expect(
      recogniseToolCall('bash', { command: 'edit 1:1\n#!/usr/bin/perl\nend_of_edit' }, state).files,
    ).toEqual([
      { kind: 'edit', path: 'printenv.pl', detail: 'edit 1:1', linesAdded: 1, linesRemoved: 1, symbols: [] },
    ]);
  });

  it('applies SWE-agent’s function-calling edit and insert (which name no file) to the file open or created', () => {
    const state = {};
    const files = (toolName: string, input: Record<string, unknown>) =>
      recogniseToolCall(toolName, input, state).files;
    expect(files('open', { path: 'tests/missing_colon.py' })).toEqual([
      { kind: 'read', path: 'tests/missing_colon.py' },
    ]);
    expect(files('edit', { search: 'def f() -> float', replace: 'def f() -> float:' })).toMatchObject([
      { kind: 'edit', path: 'tests/missing_colon.py', linesAdded: 1, linesRemoved: 1 },
    ]);
    expect(files('create', { filename: 'repro.py' })).toEqual([{ kind: 'write', path: 'repro.py' }]);
    expect(files('insert', { text: 'def g():\n    return 1', line: 3 })).toEqual([
      { kind: 'edit', path: 'repro.py', detail: 'insert at line 3', linesAdded: 2, symbols: ['g'] },
    ]);
    // Without a file open, an edit that names none is no file's.
    expect(recogniseToolCall('edit', { search: 'a', replace: 'b' }, {}).files).toEqual([]);
  });

  it('aider edit / write, gptme save / append / patch, Cursor tools', () => {
    expect(
      files('edit', {
        path: 'tests/test_sqlite.py',
        search: "'ENGINE': 'x',\n",
        replace: "'ENGINE': 'x',\n'TEST': {},\n",
      })[0],
    ).toMatchObject({
      kind: 'edit',
      path: 'tests/test_sqlite.py',
      linesAdded: 1,
      linesRemoved: 0,
    });
    expect(files('write', { path: 'src/total.js', content: 'a\n' })[0]).toMatchObject({
      kind: 'write',
      lineCount: 1,
    });
    expect(files('save', { path: 'fib.py', content: 'def fib(n):\n' })[0]).toMatchObject({
      kind: 'write',
      symbols: ['fib'],
    });
    expect(files('append', { path: 'notes.md', content: '- x\n' })[0]).toMatchObject({
      kind: 'append',
      lineCount: 1,
    });
    expect(
      files('patch', {
        path: 'fib.py',
        content: '<<<<<<< ORIGINAL\nprint(1)\n=======\nprint(2)\n>>>>>>> UPDATED',
      })[0],
    ).toMatchObject({ kind: 'edit', path: 'fib.py', detail: '1 patch', linesAdded: 1, linesRemoved: 1 });
    expect(
      files('read_file', {
        target_file: 'src/cli/flags.ts',
        start_line_one_indexed: 1,
        end_line_one_indexed_inclusive: 40,
      }),
    ).toEqual([{ kind: 'read', path: 'src/cli/flags.ts', detail: 'lines 1-40' }]);
    expect(
      files('search_replace', {
        target_file: 'src/cli/flags.ts',
        diff: '@@ -4,5 +4,4 @@\n    format: string;\n-   legacyCsv?: boolean;\n',
      })[0],
    ).toMatchObject({
      kind: 'edit',
      linesRemoved: 1,
      linesAdded: 0,
    });
    expect(
      recogniseToolCall('run_terminal_cmd', { command: 'npx vitest run test/client.test.ts' }).command,
    ).toMatchObject({
      testRunner: 'vitest',
    });
    expect(recogniseToolCall('grep_search', { query: 'retryDelayMs' }).command).toEqual({
      text: 'grep_search "retryDelayMs"',
      kind: 'search',
      readOnly: true,
    });
  });

  it('Codex apply_patch with a raw patch string', () => {
    const patch = '*** Begin Patch\n*** Update File: src/units.ts\n@@\n-a\n+b\n*** End Patch\n';
    expect(files('apply_patch', patch)).toEqual([
      {
        kind: 'edit',
        path: 'src/units.ts',
        detail: 'patch',
        linesAdded: 1,
        linesRemoved: 1,
        hunks: 1,
        symbols: [],
      },
    ]);
  });

  it('a task handed to a sub-agent: a command named by its description, whose report is not scanned', () => {
    expect(
      recogniseToolCall('Task', {
        description: 'Check package configuration',
        prompt: 'Examine package.json',
      }),
    ).toEqual({
      files: [],
      command: { text: 'Task "Check package configuration"', kind: 'delegate', readOnly: true },
      references: [],
    });
    expect(recogniseToolCall('Task', { prompt: 'Analyze the layout.\nThen report.' }).command?.text).toBe(
      'Task "Analyze the layout."',
    );
    // A tool of another name that happens to take a prompt is not a sub-agent.
    expect(
      recogniseToolCall('WebFetch', { url: 'https://example.com/a', prompt: 'x' }).command,
    ).toBeUndefined();
  });

  it('generic tools by name, and structured references', () => {
    expect(files('read_file', { path: 'package.json' })).toEqual([{ kind: 'read', path: 'package.json' }]);
    expect(files('fs_delete_file', { filename: 'tmp/x.log' })).toEqual([
      { kind: 'delete', path: 'tmp/x.log' },
    ]);
    expect(files('get_weather', { city: 'Oslo' })).toEqual([]);
    expect(
      recogniseToolCall('mcp__github__get_issue', { owner: 'o', repo: 'r', issue_number: 365 }).references,
    ).toEqual([{ kind: 'issue', value: 'o/r#365' }]);
    expect(recogniseToolCall('WebFetch', { url: 'https://example.com/a', prompt: 'x' }).references).toEqual([
      { kind: 'url', value: 'https://example.com/a' },
    ]);
  });
});
