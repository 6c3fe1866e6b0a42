import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { messageConversation } from '../../test/arbitraries/messages.js';
import { propertyRuns } from '../../test/support/property-runs.js';
import { isPrecisError } from '../errors/index.js';
import { assignIds } from '../messages/ids.js';
import type { IdentifiedMessage, Message } from '../messages/types.js';
import { createConversationBuilder, type ToolExchange } from '../testing/message-builders.js';
import { buildLedger, createdFileKeys, createLedger, ledgerFileKey } from './create-ledger.js';

const ledgerOf = (messages: Message[]) => buildLedger(assignIds(messages));

describe('Claude Code sessions', () => {
  const messages = createConversationBuilder()
    .user('Fix the retry cap, see https://github.com/acme/retry-kit/issues/42 (GH-42)')
    .tools([
      {
        name: 'Read',
        input: { file_path: '/home/dev/retry-kit/src/retry.ts' },
        output: '     1→export async function withRetry() {',
      },
      {
        name: 'Grep',
        input: { pattern: 'maxDelayMs', path: '/home/dev/retry-kit/src' },
        output: 'src/retry.ts:14',
      },
    ])
    .tools([
      {
        name: 'Bash',
        input: { command: 'npx vitest run test/retry.test.ts -t "caps the delay"' },
        output: {
          type: 'error-text',
          value:
            'FAIL test/retry.test.ts > caps the delay\nAssertionError: expected 1180 to be less than or equal to 1000\n      Tests  1 failed | 6 passed (7)',
        },
      },
    ])
    .tools([
      {
        name: 'Edit',
        input: {
          file_path: '/home/dev/retry-kit/src/retry.ts',
          old_string: '  const delay = capped + jitter(base);',
          new_string: '  const delay = Math.min(capped + jitter(base), options.maxDelayMs);',
        },
        output: 'The file /home/dev/retry-kit/src/retry.ts has been updated.',
      },
      {
        name: 'Write',
        input: {
          file_path: '/home/dev/retry-kit/test/cap.test.ts',
          content: 'import { it } from "vitest";\nit("caps", () => {});\n',
        },
        output: 'File created successfully at: /home/dev/retry-kit/test/cap.test.ts',
      },
      {
        name: 'Read',
        input: { file_path: '/home/dev/retry-kit/missing.ts' },
        output: { type: 'error-text', value: '<tool_use_error>File does not exist.</tool_use_error>' },
      },
    ])
    .tools([
      {
        name: 'Bash',
        input: { command: 'npx vitest run test/retry.test.ts -t "caps the delay"' },
        output: ' Test Files  1 passed (1)\n      Tests  7 passed (7)',
      },
    ])
    .build();
  const snapshot = ledgerOf(messages);

  it('records files with what changed', () => {
    expect(snapshot.files.map((file) => [file.path, file.status])).toEqual([
      ['/home/dev/retry-kit/src/retry.ts', 'modified'],
      ['/home/dev/retry-kit/test/cap.test.ts', 'created'],
      ['/home/dev/retry-kit/missing.ts', 'read'],
    ]);
    expect(snapshot.files[0]!.changes[0]).toMatchObject({
      kind: 'edit',
      tool: 'Edit',
      linesAdded: 1,
      linesRemoved: 1,
    });
    expect(snapshot.files[1]!.changes[0]).toMatchObject({ kind: 'create', lineCount: 2 });
    expect(snapshot.files[2]).toMatchObject({ reads: 1, failedReads: 1 });
  });

  it('records commands, test runs, errors and references', () => {
    const vitest = snapshot.commands.find((command) => command.kind === 'shell')!;
    expect(vitest).toMatchObject({ runs: 2, failures: 1, status: 'ok', testRunner: 'vitest' });
    expect(snapshot.commands.find((command) => command.kind === 'search')!.command).toBe(
      'Grep "maxDelayMs" /home/dev/retry-kit/src',
    );
    expect(
      snapshot.tests.map(({ runner, passed, failed, failingTests }) => ({
        runner,
        passed,
        failed,
        failingTests,
      })),
    ).toEqual([
      { runner: 'vitest', passed: 6, failed: 1, failingTests: ['test/retry.test.ts > caps the delay'] },
      { runner: 'vitest', passed: 7, failed: 0, failingTests: [] },
    ]);
    expect(snapshot.errors.map((error) => error.message)).toEqual([
      'FAIL test/retry.test.ts > caps the delay',
      'AssertionError: expected 1180 to be less than or equal to 1000',
      'File does not exist.',
    ]);
    expect(snapshot.errors[2]!.source).toBe('Read /home/dev/retry-kit/missing.ts');
    expect(snapshot.references.map((reference) => reference.value)).toEqual([
      'https://github.com/acme/retry-kit/issues/42',
      'GH-42',
    ]);
  });
});

describe('other agents', () => {
  it('mini-swe-agent: heredoc writes, sed -n reads, return codes, tracebacks, Django test runs', () => {
    const exchanges: ToolExchange[] = [
      {
        name: 'bash',
        input: { command: "cat <<'EOF' > reproduce_issue.py\nimport numpy as np\nnp.random.seed(42)\nEOF" },
        output: '<returncode>0</returncode>\n<output>\n</output>',
      },
      {
        name: 'bash',
        input: { command: 'python reproduce_issue.py' },
        output:
          '<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\n  File "reproduce_issue.py", line 2\nValueError: seed must be between 0 and 2**32 - 1\n</output>',
      },
      {
        name: 'bash',
        input: { command: "nl -ba lib/matplotlib/axes/_axes.py | sed -n '6453,6800p'" },
        output: '<returncode>0</returncode>',
      },
      {
        name: 'bash',
        input: { command: "sed -i 's/fill else 2/fill else 3/' lib/matplotlib/axes/_axes.py" },
        output: '<returncode>0</returncode>',
      },
      {
        name: 'bash',
        input: { command: './tests/runtests.py aggregation' },
        output:
          '<returncode>1</returncode>\n<output>\nFAIL: test_x (aggregation.tests.T)\nRan 5 tests in 0.1s\n\nFAILED (failures=1)\n</output>',
      },
    ];
    const snapshot = ledgerOf(
      createConversationBuilder().user('task').tools(exchanges.slice(0, 2)).tools(exchanges.slice(2)).build(),
    );
    expect(snapshot.files.map((file) => [file.path, file.status])).toEqual([
      ['reproduce_issue.py', 'created'],
      ['lib/matplotlib/axes/_axes.py', 'modified'],
    ]);
    expect(snapshot.files[1]!.readRanges).toEqual(['lines 6453-6800']);
    expect(snapshot.commands.map((command) => [command.command.split('\n')[0], command.exitCode])).toEqual([
      ["cat <<'EOF' > reproduce_issue.py", 0],
      ['python reproduce_issue.py', 1],
      ["nl -ba lib/matplotlib/axes/_axes.py | sed -n '6453,6800p'", 0],
      ["sed -i 's/fill else 2/fill else 3/' lib/matplotlib/axes/_axes.py", 0],
      ['./tests/runtests.py aggregation', 1],
    ]);
    expect(snapshot.errors.map((error) => error.message)).toContain(
      'ValueError: seed must be between 0 and 2**32 - 1',
    );
    expect(snapshot.tests).toEqual([
      expect.objectContaining({
        runner: 'unittest',
        passed: 4,
        failed: 1,
        exitCode: 1,
        failingTests: ['test_x (aggregation.tests.T)'],
      }),
    ]);
  });

  it("reads a working tree's git diff as the record of changes a script made, where no change is known", () => {
    const diff = [
      'diff --git a/django/db/models/sql/query.py b/django/db/models/sql/query.py',
      'index 9735ce10c8..14ff8c407a 100644',
      '--- a/django/db/models/sql/query.py',
      '+++ b/django/db/models/sql/query.py',
      '@@ -551,3 +551,5 @@ class Query(BaseExpression):',
      '         obj = self.clone()',
      '+        if number > 1:',
      '+            def update_refcounts(expr):',
      '-        return obj',
      '+        return obj.get_aggregation(using)',
      'diff --git a/tests/test_count.py b/tests/test_count.py',
      'new file mode 100644',
      '--- /dev/null',
      '+++ b/tests/test_count.py',
      '@@ -0,0 +1,1 @@',
      '+def test_count(): pass',
      'diff --git a/setup.cfg b/setup.cfg',
      '--- a/setup.cfg',
      '+++ b/setup.cfg',
      '@@ -1 +1 @@',
      '-a',
      '+b',
    ].join('\n');
    const exchanges: ToolExchange[] = [
      {
        name: 'bash',
        input: { command: "nl -ba /testbed/django/db/models/sql/query.py | sed -n '540,560p'" },
        output: '<returncode>0</returncode>',
      },
      {
        name: 'bash',
        input: { command: "sed -i 's/a/b/' setup.cfg" },
        output: '<returncode>0</returncode>',
      },
      {
        name: 'bash',
        input: { command: "cat <<'EOF' > apply_fix.py\nfile_path = 'django/db/models/sql/query.py'\nEOF" },
        output: '<returncode>0</returncode>',
      },
      { name: 'bash', input: { command: 'python apply_fix.py' }, output: '<returncode>0</returncode>' },
      // Two commits compared: not what this session changed.
      {
        name: 'bash',
        input: { command: 'git diff main..feature' },
        output: `<returncode>0</returncode>\n<output>\n${diff.replaceAll('query.py', 'other.py')}\n</output>`,
      },
      {
        name: 'bash',
        input: { command: 'git add -A && git diff --cached' },
        output: `<returncode>0</returncode>\n<output>\n${diff}\n</output>`,
      },
    ];
    const snapshot = ledgerOf(createConversationBuilder().user('task').tools(exchanges).build());
    expect(snapshot.files.map((file) => [file.path, file.status])).toEqual([
      // The diff's repository-relative path names the file read under its absolute path.
      ['/testbed/django/db/models/sql/query.py', 'modified'],
      ['setup.cfg', 'modified'],
      ['apply_fix.py', 'created'],
      ['tests/test_count.py', 'created'],
    ]);
    expect(snapshot.files[0]!.changes).toEqual([
      expect.objectContaining({
        kind: 'edit',
        tool: 'bash',
        detail: 'git diff',
        linesAdded: 3,
        linesRemoved: 1,
        hunks: 1,
        symbols: ['Query', 'update_refcounts'],
      }),
    ]);
    // A file whose change the ledger read from the command that made it keeps that record alone.
    expect(snapshot.files[1]!.changes).toEqual([expect.objectContaining({ detail: 'sed -i s/a/b/' })]);
  });

  it('OpenHands: str_replace_editor and execute_bash exit codes', () => {
    const snapshot = ledgerOf(
      createConversationBuilder()
        .user('go')
        .tools([
          {
            name: 'str_replace_editor',
            input: { command: 'create', path: '/w/test_parse.ts', file_text: 'a\nb\n' },
            output: 'File created successfully at: /w/test_parse.ts',
          },
          {
            name: 'str_replace_editor',
            input: {
              command: 'str_replace',
              path: '/w/src/parse.ts',
              old_str: 'let m: RegExpMatchArray;',
              new_str: 'let delimiter: RegExpExecArray | null;',
            },
            output: 'The file /w/src/parse.ts has been edited.',
          },
          {
            name: 'execute_bash',
            input: { command: 'cd /w && npx ts-node test_parse.ts' },
            output:
              "test_parse.ts:1:32 - error TS2459: Module './src/parse' declares 'SiteProps' locally, but it is not exported.\n[The command completed with exit code 1.]",
          },
        ])
        .build(),
    );
    expect(snapshot.files.map((file) => [file.path, file.status])).toEqual([
      ['/w/test_parse.ts', 'created'],
      ['/w/src/parse.ts', 'modified'],
    ]);
    expect(snapshot.commands[0]).toMatchObject({
      command: 'cd /w && npx ts-node test_parse.ts',
      exitCode: 1,
      status: 'failed',
    });
    expect(snapshot.errors[0]!.message).toBe(
      "test_parse.ts:1:32 - error TS2459: Module './src/parse' declares 'SiteProps' locally, but it is not exported.",
    );
  });

  it("takes a test run's status from the runner's counts when the tool gives no exit code", () => {
    const run = (output: string) => ({ name: 'run_command', input: { command: 'npx vitest run' }, output });
    const snapshot = ledgerOf(
      createConversationBuilder()
        .user('go')
        .tools([run(' Test Files  1 passed (1)\n      Tests  7 passed (7)')])
        .tools([run(' Test Files  1 failed (1)\n      Tests  1 failed | 6 passed (7)')])
        .tools([run('(output written to a log)')])
        .build(),
    );
    expect(snapshot.tests.map(({ status, passed, failed }) => ({ status, passed, failed }))).toEqual([
      { status: 'ok', passed: 7, failed: 0 },
      { status: 'failed', passed: 6, failed: 1 },
      { status: 'unknown', passed: undefined, failed: undefined },
    ]);
    // The command itself says nothing of its exit: it keeps no status of its own.
    expect(snapshot.commands.map((command) => command.status)).toEqual(['unknown']);
  });

  it('a failed edit does not count as a change', () => {
    const snapshot = ledgerOf(
      createConversationBuilder()
        .user('go')
        .tools([
          {
            name: 'Edit',
            input: { file_path: '/p/CLAUDE.md', old_string: 'a', new_string: 'b' },
            output: {
              type: 'error-text',
              value:
                '<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>',
            },
          },
        ])
        .build(),
    );
    expect(snapshot.files[0]).toMatchObject({ status: 'read', changes: [{ kind: 'edit', failed: true }] });
  });

  it('a Python script that did not compile changed nothing; one that failed while running may have', () => {
    const script =
      "python - <<'PY'\nfrom pathlib import Path\np = Path('pkg/core.py')\ns = p.read_text()\np.write_text(s.replace('a', 'b')\nPY";
    const run = (output: string) =>
      ledgerOf(
        createConversationBuilder()
          .user('go')
          .tools([{ name: 'bash', input: { command: script }, output: { type: 'text', value: output } }])
          .build(),
      ).files[0];
    const didNotCompile = run(
      "<returncode>1</returncode>\n<output>\n  File \"<stdin>\", line 4\n    p.write_text(s.replace('a', 'b')\n                ^\nSyntaxError: '(' was never closed\n</output>",
    );
    expect(didNotCompile).toMatchObject({ status: 'read', changes: [{ kind: 'edit', failed: true }] });
    const failedLater = run(
      '<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\n  File "<stdin>", line 5, in <module>\nSyntaxError: bad input\n</output>',
    );
    expect(failedLater).toMatchObject({ status: 'modified', changes: [{ kind: 'edit' }] });
    expect(failedLater?.changes[0]?.failed).toBeUndefined();
  });

  it("an edit the tool's linter rejected changed nothing, and its linter errors are the errors", () => {
    const edit = (output: string) => ({
      name: 'bash',
      input: { command: 'edit 3:4\n    return int(round(value))\nend_of_edit' },
      output: { type: 'text' as const, value: output },
    });
    const snapshot = ledgerOf(
      createConversationBuilder()
        .user('go')
        .tools([
          {
            name: 'bash',
            input: { command: 'open src/fields.py' },
            output: '[File: /repo/src/fields.py (9 lines total)]\n1:import os',
          },
        ])
        .tools([
          edit(
            'Your proposed edit has introduced new syntax error(s). Please understand the fixes and retry your edit commmand.\n\nERRORS:\n- E999 IndentationError: unexpected indent\n\nThis is how your edit would have looked if applied\n-------------------------------------------------\n3:return int(round(value))',
          ),
        ])
        .build(),
    );
    expect(snapshot.files[0]).toMatchObject({ path: 'src/fields.py', status: 'read' });
    expect(snapshot.files[0]?.changes).toMatchObject([{ kind: 'edit', failed: true }]);
    expect(snapshot.errors.map((error) => error.message)).toEqual([
      'E999 IndentationError: unexpected indent',
    ]);
    expect(snapshot.commands.find((command) => command.command.startsWith('edit'))).toMatchObject({
      status: 'failed',
      failures: 1,
    });
  });

  it('an edit the file editor found nothing to replace for changed nothing, and its error names the file', () => {
    const snapshot = ledgerOf(
      createConversationBuilder()
        .user('go')
        .tools([
          {
            name: 'str_replace_editor',
            input: {
              command: 'str_replace',
              path: '/w/src/parse.ts',
              old_str: 'const a = `\nx\n`;',
              new_str: '',
            },
            output:
              'No replacement was performed, old_str `const a = `\nx\n`;` did not appear verbatim in /w/src/parse.ts.',
          },
        ])
        .build(),
    );
    expect(snapshot.files[0]).toMatchObject({
      path: '/w/src/parse.ts',
      changes: [{ kind: 'edit', failed: true }],
    });
    expect(snapshot.errors.map((error) => error.message)).toEqual([
      'No replacement was performed, old_str `const a = ` …` did not appear verbatim in /w/src/parse.ts.',
    ]);
  });

  it('a write after reads that all failed creates the file; after a read that worked it modifies it', () => {
    const readThenWrite = (readOutput: { type: 'text' | 'error-text'; value: string }) =>
      ledgerOf(
        createConversationBuilder()
          .user('go')
          .tools([{ name: 'Read', input: { file_path: '/p/.env.local' }, output: readOutput }])
          .tools([{ name: 'Write', input: { file_path: '/p/.env.local', content: 'A=1\n' }, output: 'ok' }])
          .build(),
      ).files[0];
    expect(readThenWrite({ type: 'error-text', value: 'File does not exist.' })).toMatchObject({
      status: 'created',
      changes: [{ kind: 'create' }],
    });
    expect(readThenWrite({ type: 'text', value: 'A=0' })).toMatchObject({
      status: 'modified',
      changes: [{ kind: 'write' }],
    });
  });

  it('an edit that replaces nothing with a whole file creates a file never seen, and rewrites a known one', () => {
    const wholeFileEdits = ledgerOf(
      createConversationBuilder()
        .user('go')
        .tools([{ name: 'Read', input: { file_path: 'app.py' }, output: 'print(1)' }])
        .tools([
          {
            name: 'Edit',
            input: { file_path: 'new.py', old_string: '', new_string: 'x = 1\n' },
            output: 'ok',
          },
          {
            name: 'Edit',
            input: { file_path: 'app.py', old_string: '', new_string: 'print(2)\n' },
            output: 'ok',
          },
        ])
        .build(),
    ).files;
    expect(wholeFileEdits.map((file) => [file.path, file.status, file.changes.at(-1)?.kind])).toEqual([
      ['app.py', 'modified', 'edit'],
      ['new.py', 'created', 'create'],
    ]);
  });

  it('knows the files the session created: their first change that worked made them, under either spelling', () => {
    const snapshot = ledgerOf(
      createConversationBuilder()
        .user('go')
        // Created here (after a create that failed), then edited: still the session's own file.
        .tools([
          {
            name: 'Write',
            input: { file_path: './new.ts', content: 'x' },
            output: { type: 'error-text', value: 'EACCES' },
          },
        ])
        .tools([{ name: 'Write', input: { file_path: './new.ts', content: 'x' }, output: 'ok' }])
        .tools([
          { name: 'Edit', input: { file_path: 'new.ts', old_string: 'x', new_string: 'y' }, output: 'ok' },
        ])
        // Edited without a read (it was there), and only read.
        .tools([
          { name: 'Edit', input: { file_path: 'old.ts', old_string: 'a', new_string: 'b' }, output: 'ok' },
        ])
        .tools([{ name: 'Read', input: { file_path: 'seen.ts' }, output: 'a' }])
        .build(),
    );
    const created = createdFileKeys(snapshot);
    expect([...created]).toEqual(['new.ts']);
    expect(created.has(ledgerFileKey('./new.ts'))).toBe(true);
  });

  it('takes a Windows spelling of a path (backslashes) for the same file', () => {
    const snapshot = ledgerOf(
      createConversationBuilder()
        .user('go')
        .tools([{ name: 'Read', input: { file_path: 'src/App.tsx' }, output: 'export default App;' }])
        .tools([
          {
            name: 'Edit',
            input: { file_path: 'src\\App.tsx', old_string: 'App;', new_string: 'Root;' },
            output: 'ok',
          },
        ])
        .tools([{ name: 'Write', input: { file_path: '.\\src\\Root.tsx', content: 'x' }, output: 'ok' }])
        .build(),
    );
    expect(snapshot.files.map((file) => [file.path, file.status])).toEqual([
      ['src/App.tsx', 'modified'],
      ['.\\src\\Root.tsx', 'created'],
    ]);
    expect(ledgerFileKey('.\\src\\Root.tsx')).toBe('src/Root.tsx');
  });

  it('records a command its harness stopped waiting for as timed out, or as still running', () => {
    const advice = "You may wait longer to see additional output by sending empty command '', …]";
    const snapshot = ledgerOf(
      createConversationBuilder()
        .user('Run the picker tests and serve the demo.')
        .tools([
          {
            name: 'execute_bash',
            input: { command: 'yarn test:unit picker' },
            output: `yarn run v1.22.10\n$ mocha test/picker.test.js\n⠙\n[The command timed out after 300 seconds. ${advice}`,
          },
        ])
        .tools([
          {
            name: 'execute_bash',
            input: { command: 'node serve.js' },
            output: `Server running at http://localhost:3000/\n[The command has no new output after 30 seconds. ${advice}`,
          },
        ])
        .build(),
    );
    expect(snapshot.commands.map((command) => [command.command, command.status])).toEqual([
      ['yarn test:unit picker', 'timed-out'],
      ['node serve.js', 'running'],
    ]);
    // Neither passed nor failed: the errors it printed are kept where they are plain.
    const hung = ledgerOf(
      createConversationBuilder()
        .user('Run the picker tests.')
        .tools([
          {
            name: 'execute_bash',
            input: { command: 'yarn test:unit picker' },
            output: `Error: Cannot find module '../test-utils'\n[The command has no new output after 30 seconds. ${advice}`,
          },
        ])
        .build(),
    );
    expect(hung.errors.map((error) => error.message)).toEqual(["Error: Cannot find module '../test-utils'"]);
  });

  it('counts runs that timed out apart from runs that failed, whatever exit status the kill left', () => {
    const run = (output: string) => ({
      name: 'bash',
      input: { command: 'pytest -q tests/test_wcs.py' },
      output,
    });
    const snapshot = ledgerOf(
      createConversationBuilder()
        .user('Run the WCS tests.')
        .tools([run('<returncode>1</returncode>\n<output>\nE   AssertionError\n1 failed in 0.4s\n</output>')])
        .tools([
          run(
            'The last command <command>pytest -q tests/test_wcs.py</command> timed out and has been killed.\n<returncode>-9</returncode>',
          ),
        ])
        .tools([run('<returncode>0</returncode>\n<output>\n3 passed in 0.5s\n</output>')])
        .build(),
    );
    expect(snapshot.commands).toMatchObject([{ runs: 3, failures: 1, timeouts: 1, status: 'ok' }]);
  });

  it('importer placeholders leave a command without a status and add no error', () => {
    const snapshot = ledgerOf(
      createConversationBuilder()
        .user('go')
        .tools([
          {
            name: 'run_terminal_cmd',
            input: { command: 'npm run dev' },
            output: { type: 'error-text', value: '[no result recorded]' },
          },
        ])
        .build(),
    );
    expect(snapshot.commands[0]).toMatchObject({ status: 'unknown', failures: 0 });
    expect(snapshot.errors).toEqual([]);
  });

  it("keeps a harness's note that it cut a command's output, for the latest run", () => {
    const run = (command: string, output: string) => ({ name: 'bash', input: { command }, output });
    const snapshot = ledgerOf(
      createConversationBuilder()
        .user('Look around.')
        .tools([
          run(
            'ls -R',
            '<returncode>0</returncode>\n<output_head>\nastropy\n</output_head>\n<elided_chars>\n28287 characters elided\n</elided_chars>\n<output_tail>\nsetup.py\n</output_tail>',
          ),
        ])
        .tools([
          run(
            'find . -name "*.d.ts"',
            '[Previous command outputs are truncated. Showing the last 10114 lines of the output below.]\n./index.d.ts',
          ),
        ])
        .tools([run('cat log.txt', 'start\n... [40 lines truncated] ...\nend')])
        .tools([run('cat log.txt', 'start\nend')])
        .build(),
    );
    expect(snapshot.commands.map((command) => [command.command, command.outputCut])).toEqual([
      ['ls -R', '28287 characters elided'],
      ['find . -name "*.d.ts"', 'Showing the last 10114 lines of the output below.'],
      // The latest run showed all of it.
      ['cat log.txt', undefined],
    ]);
    const cutOnce = ledgerOf(
      createConversationBuilder()
        .user('Look.')
        .tools([run('cat log.txt', 'start\n... [40 lines truncated] ...\nend')])
        .build(),
    );
    expect(cutOnce.commands[0]!.outputCut).toBe('[40 lines truncated]');
  });

  it('counts a repeated error once with every message it appeared in', () => {
    const failing = {
      name: 'Bash',
      input: { command: 'npm run build' },
      output: {
        type: 'error-text' as const,
        value: "Exit code 2\nsrc/a.ts(3,4): error TS2304: Cannot find name 'x'.",
      },
    };
    const snapshot = ledgerOf(
      createConversationBuilder().user('go').tools([failing]).tools([failing]).build(),
    );
    expect(snapshot.errors).toHaveLength(1);
    expect(snapshot.errors[0]).toMatchObject({ count: 2, source: 'npm run build' });
    expect(snapshot.errors[0]!.messageIds).toHaveLength(2);
    expect(snapshot.commands[0]).toMatchObject({ runs: 2, failures: 2, exitCode: 2 });
  });
});

describe('files a harness put into the context', () => {
  it('reads metadata.contextFiles as reads, never of a demonstration', () => {
    const ledger = buildLedger(
      assignIds([
        { role: 'user', content: 'Fix the slug helper.' },
        {
          role: 'user',
          content: 'app/text.py\nAdd these files to the chat? yes',
          metadata: { harness: true, contextFiles: ['app/text.py'] },
        },
        { role: 'user', content: 'demo', metadata: { demo: true, contextFiles: ['demo/app.py'] } },
      ]),
    );
    expect(ledger.files.map((file) => [file.path, file.status, file.reads])).toEqual([
      ['app/text.py', 'read', 1],
    ]);
  });
});

describe('errors the conversation states outside tool outputs', () => {
  it('leaves out the errors of a worked example in front of the task (OpenHands), not those of the task', () => {
    const example = [
      "Here's a running example of how to perform a task with the provided tools.",
      '--------------------- START OF EXAMPLE ---------------------',
      'USER: Create a list of numbers from 1 to 10, and display them in a web page at port 5000.',
      "ModuleNotFoundError: No module named 'flask'",
      '--------------------- END OF EXAMPLE ---------------------',
      '',
    ].join('\n');
    const task = "Fix the tab list.\nTypeError: Cannot read properties of undefined (reading 'props')";
    const snapshot = buildLedger(
      assignIds([
        {
          role: 'user',
          content: [
            { type: 'text', text: example },
            { type: 'text', text: task },
          ],
          metadata: { requestPart: 1 },
        },
      ]),
    );
    expect(snapshot.errors.map((error) => error.message)).toEqual([
      "TypeError: Cannot read properties of undefined (reading 'props')",
    ]);
    // Unsplit, the example and the task are one text: its errors all count.
    const whole = buildLedger(assignIds([{ role: 'user', content: `${example}${task}` }]));
    expect(whole.errors).toHaveLength(2);
  });

  it('keeps error lines a user pasted and an agent quoted in a code block, not errors its prose mentions', () => {
    const snapshot = ledgerOf(
      createConversationBuilder()
        .user(
          'the page shows this:\n\nUnhandled Runtime Error\n\n  Missing required environment variables: ["DB_URL"]',
        )
        .assistant(
          [
            'I can see one TypeScript error. If an Error: line shows up in prose, it is not output.',
            '```',
            "convex/seed.ts:170:27 - error TS2339: Property 'officerTitle' does not exist on type 'User'.",
            '```',
            '~~~~text',
            'Error: first',
            '~~~~',
            'Then `Error: inline` is not a block. A longer fence closes a block too:',
            '```',
            'TypeError: x is undefined',
            '````',
            'Error: said in prose after that block',
            '```',
            'Error: in a block never closed',
          ].join('\n'),
        )
        .build(),
    );
    expect(snapshot.errors.map(({ message, source }) => [message, source])).toEqual([
      ['Unhandled Runtime Error ↵ Missing required environment variables: ["DB_URL"]', 'user'],
      [
        "convex/seed.ts:170:27 - error TS2339: Property 'officerTitle' does not exist on type 'User'.",
        'assistant',
      ],
      ['Error: first', 'assistant'],
      ['TypeError: x is undefined', 'assistant'],
    ]);
  });

  it("names what a harness wrote in the user's place by the harness, not the user", () => {
    const snapshot = ledgerOf([
      { role: 'user', content: 'Fix the parser.' },
      { role: 'assistant', content: 'Done.' },
      {
        role: 'user',
        content: 'Traceback (most recent call last):\nValueError: bad header in setup.cfg',
        metadata: { origin: 'aider', harness: true },
      },
      { role: 'user', content: 'FileNotFoundError: no such file: out.log', metadata: { harness: true } },
    ]);
    expect(snapshot.errors.map(({ message, source }) => [message, source])).toEqual([
      ['ValueError: bad header in setup.cfg', 'aider output'],
      ['FileNotFoundError: no such file: out.log', 'harness output'],
    ]);
  });

  it("records a harness's rejection of the agent's reply as an error, counted where it recurs", () => {
    const complaint = (actions: number): Message => ({
      role: 'user',
      content: `Please always provide EXACTLY ONE action in triple backticks, found ${actions} actions.\n\nPlease format your action in triple backticks as shown in <response_example>.`,
      metadata: { origin: 'mini-swe-agent', harness: true, formatError: true },
    });
    const snapshot = ledgerOf([
      { role: 'user', content: 'Fix the parser.' },
      { role: 'assistant', content: 'Two blocks.' },
      complaint(2),
      { role: 'assistant', content: 'Two blocks again.' },
      complaint(2),
      { role: 'assistant', content: 'Three blocks.' },
      complaint(3),
      // The same text without the mark (a user quoting it) is no error.
      {
        role: 'user',
        content: 'Please always provide EXACTLY ONE action in triple backticks, found 2 actions.',
      },
    ]);
    // One row: errors that differ only in their numbers are one error, counted.
    expect(snapshot.errors.map(({ message, count, source }) => [message, count, source])).toEqual([
      [
        'Please always provide EXACTLY ONE action in triple backticks, found 2 actions.',
        3,
        'mini-swe-agent output',
      ],
    ]);
  });
});

describe('createLedger', () => {
  it('rejects messages without ids or with a bad shape, naming the index and field', () => {
    const ledger = createLedger();
    ledger.add({ role: 'user', content: 'hi', id: 'a' });
    const attempt = (message: unknown) => {
      try {
        ledger.add(message as IdentifiedMessage);
      } catch (error) {
        return error;
      }
      return undefined;
    };
    const missingId = attempt({ role: 'user', content: 'x' });
    expect(isPrecisError(missingId) && missingId.code).toBe('invalid-message');
    expect(missingId).toMatchObject({ index: 1, path: 'id' });
    expect(attempt({ role: 'robot', content: 'x', id: 'b' })).toMatchObject({ index: 1, path: 'role' });
    expect(attempt({ role: 'user', content: 5, id: 'b' })).toMatchObject({ path: 'content' });
    expect(attempt(null)).toMatchObject({ index: 1 });
  });

  it('ignores a message id it has seen, and snapshots do not move with later adds', () => {
    const messages = assignIds(
      createConversationBuilder()
        .user('go')
        .tools([{ name: 'Read', input: { file_path: 'a.ts' }, output: 'x' }])
        .build(),
    );
    const ledger = createLedger();
    ledger.addAll(messages);
    const before = ledger.snapshot();
    ledger.addAll(messages);
    expect(ledger.snapshot()).toEqual(before);
    ledger.add({ id: 'later', role: 'user', content: 'see #7' });
    expect(before.references).toEqual([]);
    expect(before.messageCount).toBe(3);
  });
});

// Agent-shaped tool traffic for the properties: real tool names and inputs over a small pool of paths.
const pathArbitrary = fc.constantFrom('src/a.ts', './src/a.ts', 'lib/b.py', '/abs/c.go', 'notes.md');
const exchangeArbitrary: fc.Arbitrary<ToolExchange> = fc.oneof(
  pathArbitrary.map((path) => ({ name: 'Read', input: { file_path: path }, output: '1→x' })),
  fc.tuple(pathArbitrary, fc.string(), fc.string()).map(([path, oldText, newText]) => ({
    name: 'Edit',
    input: { file_path: path, old_string: oldText, new_string: newText },
    output: 'ok',
  })),
  fc.tuple(pathArbitrary, fc.string()).map(([path, content]) => ({
    name: 'Write',
    input: { file_path: path, content },
    output: 'File created successfully',
  })),
  fc
    .tuple(
      fc.constantFrom('pytest -q', 'npm test', 'cat src/a.ts', "sed -i 's/a/b/' lib/b.py", 'rm notes.md'),
      fc.integer({ min: 0, max: 2 }),
    )
    .map(([command, code]) => ({
      name: 'bash',
      input: { command },
      output: `<returncode>${code}</returncode>\nError: failed ${code}\n1 failed, 2 passed in 0.1s`,
    })),
  fc.tuple(pathArbitrary, fc.string()).map(([path, text]) => ({
    name: 'str_replace_editor',
    input: { command: 'str_replace', path, old_str: text, new_str: `${text}\n` },
    output: { type: 'error-text' as const, value: 'No replacement was performed' },
  })),
);
const agentConversation = fc
  .array(fc.array(exchangeArbitrary, { minLength: 1, maxLength: 3 }), { maxLength: 8 })
  .map((turns) => {
    const builder = createConversationBuilder().user('task #12');
    for (const turn of turns) builder.tools(turn);
    return assignIds(builder.build());
  });
const anyConversation = fc.oneof(
  agentConversation,
  messageConversation().map((messages) => assignIds(messages)),
);

describe('properties', () => {
  it('incremental adds equal one batch, the snapshot is plain JSON, and the fold is deterministic', () => {
    fc.assert(
      fc.property(anyConversation, fc.integer({ min: 0, max: 20 }), (messages, cut) => {
        const batch = buildLedger(messages);
        const ledger = createLedger();
        const split = Math.min(cut, messages.length);
        ledger.addAll(messages.slice(0, split));
        ledger.snapshot();
        ledger.addAll(messages.slice(split));
        expect(ledger.snapshot()).toEqual(batch);
        expect(JSON.parse(JSON.stringify(batch))).toEqual(batch);
        expect(buildLedger(messages)).toEqual(batch);
      }),
      { numRuns: propertyRuns(300) },
    );
  });

  it('every recorded path, command and error string occurs verbatim in the conversation', () => {
    fc.assert(
      fc.property(agentConversation, (messages) => {
        const text = JSON.stringify(messages);
        const snapshot = buildLedger(messages);
        for (const file of snapshot.files) expect(text).toContain(JSON.stringify(file.path).slice(1, -1));
        for (const command of snapshot.commands)
          if (command.kind === 'shell') expect(text).toContain(JSON.stringify(command.command).slice(1, -1));
        // An error joined to its message on the next line: each line verbatim.
        for (const error of snapshot.errors)
          for (const line of error.message.split(' ↵ '))
            expect(text).toContain(JSON.stringify(line).slice(1, -1));
        for (const file of snapshot.files)
          for (const change of file.changes)
            expect(messages.some((message) => message.id === change.messageId)).toBe(true);
      }),
      { numRuns: propertyRuns(300) },
    );
  });
});
