import fc from 'fast-check';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { propertyRuns } from '../../test/support/property-runs.js';
import { assignIds } from '../messages/ids.js';
import {
  assistantMessage,
  createConversationBuilder,
  systemMessage,
  toolCall,
  toolMessage,
  toolResult,
  userMessage,
} from '../testing/message-builders.js';
import { createO200kCounter } from '../tokens/index.js';
import {
  type AnchoredSummary,
  anchoredSummaryToJson,
  authoredLinesOf,
  buildAnchoredSummary,
  emptyAnchoredSummary,
  itemSalience,
  mergeAnchoredSummary,
  parseAnchoredSummary,
} from './anchored-summary.js';
import {
  anchoredSummaryTokens,
  anchoredSummaryTokensUpTo,
  createAnchoredSummaryRenderer,
  renderAnchoredSummary,
} from './render-anchored-summary.js';

const counter = createO200kCounter();
/** The renderer's floor: a line ranked below it never fills a summary's room. */
const minSalienceForTest = 0.15;

/** The record of one step: the task, an assistant message making `calls`, and `output` as every call's result. */
function oneStepSummary(task: string, calls: ReturnType<typeof toolCall>[], output: string): AnchoredSummary {
  return buildAnchoredSummary(
    assignIds([
      userMessage(task),
      assistantMessage(calls),
      toolMessage(...calls.map((call) => toolResult(call, { type: 'text', value: output }))),
    ]),
  );
}

function session() {
  const read = toolCall('Read', { file_path: 'src/retry/backoff.ts' }, 'call-1');
  const test = toolCall('Bash', { command: 'npx vitest run src/retry' }, 'call-2');
  const edit = toolCall(
    'Edit',
    {
      file_path: 'src/retry/backoff.ts',
      old_string: 'delay * 2',
      new_string: 'Math.min(delay * 2, maxDelay)',
    },
    'call-3',
  );
  const todo = toolCall(
    'TodoWrite',
    {
      todos: [
        { content: 'Cap the backoff delay', status: 'completed' },
        { content: 'Add a jitter test', status: 'pending' },
      ],
    },
    'call-4',
  );
  return assignIds([
    userMessage('Fix the retry backoff in src/retry/backoff.ts so it never waits longer than 30 s.'),
    assistantMessage([{ type: 'text', text: 'Let me read the file.' }, read]),
    toolMessage(toolResult(read, 'export function backoff(delay: number) { return delay * 2; }')),
    assistantMessage([test]),
    toolMessage(
      toolResult(test, {
        type: 'error-text',
        value:
          'FAIL src/retry/backoff.test.ts\nAssertionError: expected 64000 to be less than or equal to 30000\nexit code 1',
      }),
    ),
    userMessage('Do not change the public signature of backoff. Keep the tests in vitest.'),
    assistantMessage([
      {
        type: 'text',
        text: 'I decided to clamp with Math.min instead of a loop because it keeps the function pure. The first try with a while loop did not work.',
      },
      edit,
    ]),
    toolMessage(toolResult(edit, 'The file src/retry/backoff.ts has been updated.')),
    assistantMessage([todo]),
    toolMessage(toolResult(todo, 'Todos updated')),
    assistantMessage('The cap is in. Next I will add a jitter test; still need to update the CHANGELOG.'),
  ]);
}

describe('buildAnchoredSummary', () => {
  it("reads a sub-agent's brief and report like the assistant's own prose, and no other tool output", () => {
    const delegate = toolCall(
      'Task',
      {
        description: 'Review the notes fix',
        subagent_type: 'general-purpose',
        prompt:
          'Review it. I decided to keep the legacy formatter because DISABLE_UNIVERSAL_TOOLS=true still enables it.\n```bash\nnpm test test/notes.test.ts\n```',
      },
      'call-9',
    );
    const grep = toolCall('Grep', { pattern: 'notes' }, 'call-10');
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Fix the notes formatter.'),
        assistantMessage([delegate, grep]),
        toolMessage(
          toolResult(
            delegate,
            '## Review\nI chose to keep the any type because the upstream API is untyped.\nThe guard did not work on arrays.',
          ),
          toolResult(grep, 'src/notes.ts: we decided to switch to zod because of the schema'),
        ),
      ]),
    );
    expect(summary.decisions).toEqual([
      'I decided to keep the legacy formatter because DISABLE_UNIVERSAL_TOOLS=true still enables it.',
      'I chose to keep the any type because the upstream API is untyped.',
    ]);
    expect(summary.failedApproaches).toEqual(['The guard did not work on arrays.']);
    // The brief is prose, not a script: only its code block is; the delegation is a command with its outcome.
    expect(summary.scripts).toEqual(['npm test test/notes.test.ts']);
    expect(summary.commands).toContain('`Task "Review the notes fix"` → ok');
  });

  it('says that a command timed out or still runs', () => {
    const advice = "You may wait longer to see additional output by sending empty command '', …]";
    const summary = buildAnchoredSummary(
      assignIds(
        createConversationBuilder()
          .user('Run the picker tests and serve the demo.')
          .tools([
            {
              name: 'execute_bash',
              input: { command: 'yarn test:unit picker' },
              output: `⠙\n[The command timed out after 300 seconds. ${advice}`,
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
      ),
    );
    expect(summary.commands).toEqual([
      '`yarn test:unit picker` → timed out',
      '`node serve.js` → still running',
    ]);
    // Once it passes, what went before is an error that was fixed.
    const rerun = (output: string) => ({
      name: 'execute_bash',
      input: { command: 'yarn test:unit picker' },
      output,
    });
    const passed = buildAnchoredSummary(
      assignIds(
        createConversationBuilder()
          .user('Run the picker tests.')
          .tools([rerun(`⠙\n[The command timed out after 300 seconds. ${advice}`)])
          .tools([rerun('1 passing (12ms)\n[The command completed with exit code 0.]')])
          .build(),
      ),
    );
    expect(passed.errors).toContain('`yarn test:unit picker` timed out 1× then passed');
  });

  it('takes advice and staying put for decisions', () => {
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Should we accept the refactor?'),
        assistantMessage(
          'The failures come from the mocks. I suggest we proceed with accepting the changes. The suggestion box is empty.',
        ),
        assistantMessage(
          '### Option 1: Two Separate Services (Recommended)\n\nSo I will stick with `apply_fix_v2.py`.',
        ),
      ]),
    );
    expect(summary.decisions).toEqual([
      'I suggest we proceed with accepting the changes.',
      '### Option 1: Two Separate Services (Recommended)',
      'So I will stick with `apply_fix_v2.py`.',
    ]);
  });

  it('takes no question for a decision or a failed approach', () => {
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Fix the histogram scaling.'),
        assistantMessage(
          "Why is it not working? If `fill` is False, then `closed` is None? The fix didn't work for steps. So the fix is to pass `simplify=False` to `iter_bezier`.",
        ),
      ]),
    );
    expect(summary.failedApproaches).toEqual(["The fix didn't work for steps."]);
    expect(summary.decisions).toEqual(['So the fix is to pass `simplify=False` to `iter_bezier`.']);
  });

  it('fills the forced sections with verbatim items', () => {
    const summary = buildAnchoredSummary(session(), { handles: ['h-0123456789abcdef0123'] });
    expect(summary.intent).toBe(
      'Fix the retry backoff in src/retry/backoff.ts so it never waits longer than 30 s.',
    );
    // A short request stays whole: its constraint sentences are in it.
    expect(summary.constraints).toEqual([
      'Do not change the public signature of backoff. Keep the tests in vitest.',
    ]);
    expect(summary.files).toEqual([
      expect.objectContaining({ path: 'src/retry/backoff.ts', status: 'modified' }),
    ]);
    expect(summary.decisions).toEqual([
      'I decided to clamp with Math.min instead of a loop because it keeps the function pure.',
    ]);
    expect(summary.failedApproaches).toEqual(['The first try with a while loop did not work.']);
    expect(summary.errors.join('\n')).toContain(
      'AssertionError: expected 64000 to be less than or equal to 30000',
    );
    expect(summary.commands.join('\n')).toContain('npx vitest run src/retry');
    expect(summary.tasks).toEqual([
      { text: 'Cap the backoff delay', done: true },
      { text: 'Add a jitter test', done: false },
    ]);
    // The todo list is in the tasks, and its items and statuses nowhere else.
    expect(JSON.stringify([summary.scripts, summary.changes])).not.toMatch(/jitter|pending|completed/);
    expect(summary.nextSteps).toEqual(['Next I will add a jitter test; still need to update the CHANGELOG.']);
    expect(summary.handles).toEqual(['h-0123456789abcdef0123']);
    expect(summary.messageCount).toBe(11);
  });

  it('reads a slash command as the user typed it, not as the tags Claude Code records it in', () => {
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage(
          '<command-message>fix-issue is running…</command-message>\n<command-name>/fix-issue</command-name>\n<command-args>365</command-args>',
        ),
        assistantMessage('Fixed the notes formatter.'),
        userMessage(
          '<command-message>git-tools:commit is running…</command-message>\n<command-name>/git-tools:commit</command-name>',
        ),
        assistantMessage('Committed.'),
        // A message that only talks about the tags is prose.
        userMessage('Why does <command-name> show up in the log?'),
      ]),
    );
    expect(summary.intent).toBe('/fix-issue 365');
    expect(summary.constraints).toEqual(['/git-tools:commit', 'Why does <command-name> show up in the log?']);
  });

  it('leaves out a sentence that only points at the list after it', () => {
    const rules = [
      'Follow these rules. '.repeat(60),
      'Each response should include:',
      '1. A THOUGHT section explaining your reasoning',
      'If you need to run multiple commands, either:',
      '- connect them with && or ||',
      'Commands must be specified in a single bash code block:',
    ].join('\n');
    const summary = buildAnchoredSummary(
      assignIds([userMessage('Fix the flaky test.'), assistantMessage('On it.'), userMessage(rules)]),
    );
    expect(summary.constraints).toContain('Commands must be specified in a single bash code block:');
    expect(summary.constraints).not.toContain('Each response should include:');
    expect(summary.constraints).not.toContain('If you need to run multiple commands, either:');
  });

  it('keeps a later short request whole, and of a long one the sentences that constrain', () => {
    const changed =
      'Sorry, the requirements just changed a little. I now want this:\n\n1. A list of all .md files in the root folder\n2. The name of the license';
    // A frame whose path holds a constraint word (`use-`) is no request either.
    const frames = [
      'at handleConsoleError (webpack-internal:///./node_modules/next/dist/use-error-handler.js:45:54)',
      'at async only (src/jobs.ts:3:1)',
      'at src/use/hooks.ts:8:2',
      'File "/repo/use_cases.py", line 3, in <module>',
    ].join('\n');
    const pasted = `The build says this, please fix it.\n${'at compile (src/build.ts:12:5)\n'.repeat(40)}${frames}\nOnly touch src/build.ts.`;
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Write a script that checks the repository metrics.'),
        assistantMessage('Here is metrics_check.sh.'),
        userMessage(changed),
        assistantMessage('Updated the script.'),
        userMessage(pasted),
      ]),
    );
    // No constraint word in it, and still what the agent works to next.
    expect(summary.constraints).toEqual([
      changed,
      'The build says this, please fix it.',
      'Only touch src/build.ts.',
    ]);
    // Its lines stay lines, under one bullet.
    expect(renderAnchoredSummary(summary)).toContain(
      '## User requests and constraints\n- Sorry, the requirements just changed a little. I now want this:\n  \n  1. A list of all .md files in the root folder\n  2. The name of the license\n- The build says this',
    );
  });

  it('keeps a request sent again once: its capped sentence under a pasted log is a prefix of the first', () => {
    const request = `Write a README that explains the session commands we added yesterday, ${'with an example workflow for each, '.repeat(12)}and keep it short.`;
    const again = `${request}\n${'at run (src/cli.ts:12:5)\n'.repeat(60)}`;
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Set up the CLI.'),
        assistantMessage('Done.'),
        userMessage(request),
        assistantMessage('Interrupted.'),
        userMessage(again),
        assistantMessage('Shall I publish it?'),
        userMessage('yes'),
      ]),
    );
    expect(request.length).toBeGreaterThan(400);
    // A short answer is its own item, though the request kept before holds its letters ("yesterday").
    expect(summary.constraints).toEqual([request, 'yes']);
  });

  it("reads the tasks from the checklist a todo tool printed (Cursor's todo_write keeps no input in an export)", () => {
    const todo = toolCall('todo_write', {}, 'call-1');
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Build the map viewer.'),
        assistantMessage([todo]),
        toolMessage(
          toolResult(
            todo,
            'Todo List\n\n- [x] Set up Next.js\n- [-] Draw the 2D map with Leaflet\n- [ ] Show the 3D view',
          ),
        ),
      ]),
    );
    // `[-]` is in progress: not done.
    expect(summary.tasks).toEqual([
      { text: 'Set up Next.js', done: true },
      { text: 'Draw the 2D map with Leaflet', done: false },
      { text: 'Show the 3D view', done: false },
    ]);
  });

  it('reads instructions from a system message in the span (past the system prompt), like a user message', () => {
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Fix the parser.'),
        systemMessage('Session restarted at 11:43. Do not push to main until the tests pass.'),
      ]),
    );
    expect(summary.constraints).toEqual(['Do not push to main until the tests pass.']);
  });

  it('records the code locations the agent cited, in its prose and its tool calls, verbatim and once', () => {
    const comment = toolCall(
      'mcp__github__add_issue_comment',
      {
        body: 'Root cause: `src/notes.ts:32` reads only `content`; the test at test/notes.test.ts:19-24 is right.',
      },
      'call-1',
    );
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Why are the notes empty? See src/user-said.ts:3.'),
        assistantMessage(
          'It breaks at `src/notes.ts:32` and lib/parse.py:7:3 (not http://localhost:3000/app.js:5, port 8080 or 12:30).',
        ),
        assistantMessage([{ type: 'text', text: 'Posting the analysis.' }, comment]),
        toolMessage(toolResult(comment, 'Comment posted at src/ignored.ts:1')),
      ]),
    );
    expect(summary.locations).toEqual(['src/notes.ts:32', 'lib/parse.py:7:3', 'test/notes.test.ts:19-24']);
    const text = renderAnchoredSummary(summary);
    expect(text).toContain('## Code locations cited\n- `src/notes.ts:32`\n- `lib/parse.py:7:3`\n');
  });

  it("reads decisions and constraints from prose (list markers off), not from a message's code blocks", () => {
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Make the CLI flag optional.'),
        assistantMessage(
          'I decided to read the flag from settings instead of the environment.\n\n```ts\n// Instead of:\nconst flag = process.env.FLAG;\n```\n\n```bash\n# Switch to main\ngit checkout main\n```\n\n- I chose to keep the flag opt-in.',
        ),
        userMessage('Keep the output short.\n```sh\n# Always run from the repo root\nnpm start\n```'),
      ]),
    );
    // A decision from a list item goes without its marker: the summary gives it a bullet of its own.
    expect(summary.decisions).toEqual([
      'I decided to read the flag from settings instead of the environment.',
      'I chose to keep the flag opt-in.',
    ]);
    // The user's request is whole, its code block too; the code is nothing the assistant wrote.
    expect(summary.constraints).toEqual([
      'Keep the output short.\n```sh\n# Always run from the repo root\nnpm start\n```',
    ]);
    expect(summary.scripts).not.toContain('npm start');
    // The code is still there, as code the assistant wrote.
    expect(summary.scripts).toContain('// Instead of:');
  });

  it('gives a decision that ends in a colon the list after it: its reasons', () => {
    const longItem = `- ${'a reason that goes on and on '.repeat(10).trim()}`;
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Fix issue #365.'),
        assistantMessage(
          [
            'The issue is still relevant because:',
            '   - The formatters still only check `note.content`',
            '   - Legacy tools can be enabled with `DISABLE_UNIVERSAL_TOOLS=true`',
            '',
            'I chose to patch both formatters because they share the bug.',
            '- Tests come next.',
            'The fix is straightforward:',
            '1. Check every field the API may use',
            longItem,
            longItem.replace('a reason', 'another reason'),
          ].join('\n'),
        ),
      ]),
    );
    expect(summary.decisions).toEqual([
      'The issue is still relevant because: The formatters still only check `note.content`; Legacy tools can be enabled with `DISABLE_UNIVERSAL_TOOLS=true`',
      // Not a lead-in: the list item after it is not its reason.
      'I chose to patch both formatters because they share the bug.',
      // Items are taken while the decision stays within a sentence's length.
      `The fix is straightforward: Check every field the API may use; ${longItem.slice(2)}`,
    ]);
  });

  it('gives a diagnosis that only announces itself the sentences after it: what was found', () => {
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Why do the hooks not see the instance id?'),
        assistantMessage(
          [
            'I think I found the issue. The `INSTANCE_ID` env var is set inside the server process, but this only ' +
              'affects that process. The hooks run in a separate shell that does not have it. Let me add some logging.',
            '',
            'I found the issue in `hooks.ts`, a stale import.',
            'I see the problem!',
          ].join('\n'),
        ),
      ]),
    );
    expect(summary.decisions).toEqual([
      // Two sentences at most; a diagnosis that says what it found stands alone (it is no decision).
      'I think I found the issue. The `INSTANCE_ID` env var is set inside the server process, but this only affects that process. The hooks run in a separate shell that does not have it.',
      // Nothing after it: the announcement alone.
      'I see the problem!',
    ]);
  });

  it('takes nothing from an in-context demonstration: not the intent, its rules, decisions, files or errors', () => {
    const demoRead = toolCall('Read', { file_path: 'demo/app.py' }, 'demo-1');
    const read = toolCall('Read', { file_path: 'src/parser.ts' }, 'call-1');
    const demo = { metadata: { demo: true } };
    const messages = [
      userMessage(
        "Here is a demonstration. Always run the tests before you submit.\nModuleNotFoundError: No module named 'flask'",
        demo,
      ),
      assistantMessage([{ type: 'text', text: 'I decided to open demo/app.py first.' }, demoRead], demo),
      toolMessage(toolResult(demoRead, 'print("hello")')),
      userMessage('Fix the parser. Do not change its public API.'),
      assistantMessage([{ type: 'text', text: 'I decided to read the parser first.' }, read]),
      toolMessage(toolResult(read, 'export function parse() {}')),
    ];
    const summary = buildAnchoredSummary(assignIds(messages));
    expect(summary.intent).toBe('Fix the parser. Do not change its public API.');
    expect(summary.constraints).toEqual([]);
    expect(summary.decisions).toEqual(['I decided to read the parser first.']);
    expect(summary.files.map((file) => file.path)).toEqual(['src/parser.ts']);
    expect(summary.errors).toEqual([]);
  });

  it('names the command an error came from by its start: the Commands section has it in full', () => {
    const command = `rm ${Array.from({ length: 12 }, (_, index) => `scratch_${index}.py`).join(' ')}`;
    const call = toolCall('Bash', { command }, 'call-rm');
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Clean up the scratch files.'),
        assistantMessage([call]),
        toolMessage(
          toolResult(call, {
            type: 'error-text',
            value: "rm: cannot remove 'scratch_3.py': No such file or directory\nexit code 1",
          }),
        ),
      ]),
    );
    expect(summary.errors).toContain(
      `\`rm: cannot remove 'scratch_3.py': No such file or directory\` (from ${command.slice(0, 60)}…)`,
    );
    expect(summary.commands.join('\n')).toContain(command);
  });

  it('gives errors that differ in one quoted name one row: the first verbatim, the other names after it', () => {
    const rm = toolCall('Bash', { command: 'rm a.py b.py c.py' }, 'call-rm');
    const cat = toolCall('Bash', { command: 'cat d.py' }, 'call-cat');
    const missing = (name: string) => `rm: cannot remove '${name}': No such file or directory`;
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Clean up the scratch files.'),
        assistantMessage([rm]),
        toolMessage(
          toolResult(rm, {
            type: 'error-text',
            value: [missing('a.py'), missing('b.py'), 'exit code 1'].join('\n'),
          }),
        ),
        assistantMessage([cat]),
        toolMessage(
          toolResult(cat, {
            type: 'error-text',
            // Another shape (cat's), and one that differs in two names: rows of their own.
            value: [
              "cat: 'd.py': No such file or directory",
              "rm: cannot remove 'e.py': Permission denied 'x'",
              "rm: cannot remove 'f.py': Permission denied 'y'",
              'exit code 1',
            ].join('\n'),
          }),
        ),
      ]),
    );
    expect(summary.errors).toEqual([
      `\`${missing('a.py')}\` (from rm a.py b.py c.py; also 'b.py')`,
      "`cat: 'd.py': No such file or directory` (from cat d.py)",
      "`rm: cannot remove 'e.py': Permission denied 'x'` (from cat d.py)",
      "`rm: cannot remove 'f.py': Permission denied 'y'` (from cat d.py)",
    ]);
  });

  it('groups errors that repeat their quoted name unquoted, as Python prints an OSError with its path first', () => {
    const unreadable = (name: string) =>
      `C:\\app\\${name}: unable to read: [Errno 2] No such file or directory: 'C:\\\\app\\\\${name}'`;
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Add the week view.'),
        userMessage([unreadable('week.tsx'), unreadable('days.tsx'), unreadable('week.tsx')].join('\n')),
        // A short name (three characters or fewer) is not blanked where it stands unquoted.
        userMessage(
          "ab: unable to read: [Errno 2] No such file or directory: 'ab'\ncd: unable to read: [Errno 2] No such file or directory: 'cd'",
        ),
      ]),
    );
    expect(summary.errors).toEqual([
      `\`${unreadable('week.tsx')}\` (from user; also 'C:\\\\app\\\\days.tsx')`,
      "`ab: unable to read: [Errno 2] No such file or directory: 'ab'` (from user)",
      "`cd: unable to read: [Errno 2] No such file or directory: 'cd'` (from user)",
    ]);
  });

  it("names a script's command on one line, by its first line and the script's first telling line", () => {
    const command =
      "python - <<'PY'\nfrom pathlib import Path\np = Path('astropy/modeling/separable.py')\nPY";
    const call = toolCall('bash', { command }, 'call-patch');
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Fix the separability matrix.'),
        assistantMessage([call]),
        toolMessage(
          toolResult(call, {
            type: 'error-text',
            value: '  File "<stdin>", line 9\nSyntaxError: invalid syntax\nexit code 1',
          }),
        ),
      ]),
    );
    expect(summary.errors).toContain(
      "`SyntaxError: invalid syntax` (from python - <<'PY' … p = Path('astropy/modeling/separable.py'))",
    );
  });

  it('lists two scripts run by the same first line as two commands', () => {
    const patch = toolCall(
      'bash',
      { command: "python - <<'PY'\nimport re\np = 'django/http/response.py'\nPY" },
      'c1',
    );
    const check = toolCall(
      'bash',
      { command: "python - <<'PY'\nr = HttpResponse(b'x')\nprint(r.content)\nPY" },
      'c2',
    );
    const write = toolCall('bash', { command: "cat <<'EOF' > check.py\nprint(1)\nEOF" }, 'c3');
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Fix HttpResponse.'),
        assistantMessage([patch]),
        toolMessage(toolResult(patch, { type: 'text', value: 'exit code 0' })),
        assistantMessage([check]),
        toolMessage(toolResult(check, { type: 'text', value: 'exit code 0' })),
        assistantMessage([write]),
        toolMessage(toolResult(write, { type: 'text', value: 'exit code 0' })),
      ]),
    );
    expect(summary.commands).toEqual([
      "`python - <<'PY' … p = 'django/http/response.py'` → ok",
      "`python - <<'PY' … r = HttpResponse(b'x')` → ok",
      "`cat <<'EOF' > check.py` → ok",
    ]);
  });

  it('names the command an error came from without the `cd <workspace> &&` every command starts with', () => {
    const command = 'cd /workspace/darkreader__darkreader__0.1 && npx ts-node test_parse.ts';
    const call = toolCall('execute_bash', { command }, 'call-ts-node');
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Reproduce the parse error.'),
        assistantMessage([call]),
        toolMessage(
          toolResult(call, {
            type: 'error-text',
            value:
              "test_parse.ts:29:16 - error TS2304: Cannot find name 'SitesFixesParserOptions'.\nexit code 1",
          }),
        ),
      ]),
    );
    expect(summary.errors).toContain(
      "`test_parse.ts:29:16 - error TS2304: Cannot find name 'SitesFixesParserOptions'.` (from npx ts-node test_parse.ts)",
    );
    // The Commands section keeps the command verbatim.
    expect(summary.commands.join('\n')).toContain(command);
  });

  it('records the code blocks an agent writes in its messages: a proposed change, a command for the user', () => {
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Investigate and propose a fix; do not change files yet.'),
        assistantMessage([
          {
            type: 'reasoning',
            text: 'The flag is read in one place:\n```ts\nconst flag = settings.skipPermissions;\n```',
          },
          {
            type: 'text',
            text: [
              'Proposed change to `src/types.ts`:',
              '```typescript',
              'export interface DmuxSettings {',
              '  skipPermissions?: boolean;',
              '}',
              '```',
              'Then add the upstream remote (`git fetch` is inline code, not a block):',
              '~~~bash',
              'git remote add upstream https://github.com/formkit/dmux.git',
              '~~~',
              'An unclosed block is not taken:',
              '```',
              'rm -rf build-output',
            ].join('\n'),
          },
        ]),
      ]),
    );
    expect(summary.scripts).toEqual([
      'const flag = settings.skipPermissions;',
      'export interface DmuxSettings {',
      'skipPermissions?: boolean;',
      'git remote add upstream https://github.com/formkit/dmux.git',
    ]);
    expect(summary.changes).toEqual([]);
  });

  it("takes nothing from a search's or read's arguments: they say what it looked for, not what was written", () => {
    const calls = [
      toolCall('Grep', { pattern: 'skipPermissions', output_mode: 'files_with_matches' }, 'call-1'),
      toolCall(
        'mcp__desktop-commander__start_search',
        { path: 'src', pattern: 'queue.add', searchType: 'content', contextLines: 3 },
        'call-2',
      ),
      toolCall('Read', { file_path: 'src/a.ts', offset: 10, limit: 40 }, 'call-3'),
      toolCall('Bash', { command: 'grep -rn "skipPermissions" src' }, 'call-4'),
    ];
    const summary = oneStepSummary('Where is the flag read?', calls, 'src/a.ts:12');
    // A shell line is a script, whatever it does.
    expect(summary.scripts).toEqual(['grep -rn "skipPermissions" src']);
  });

  it('takes a file the record it merges into says was created for created, when a later span writes to it', () => {
    // An agent loop: one compaction folded the Write that made the script, a later one folds an Edit of it.
    const step = (call: ReturnType<typeof toolCall>) =>
      assignIds([
        userMessage('Fix the delimiter'),
        assistantMessage([call]),
        toolMessage(toolResult(call, { type: 'text', value: 'ok' })),
      ]).slice(1);
    const content = 'import { parse } from "./src/parse";\nconsole.log(parse(sample));';
    const write = toolCall('Write', { file_path: 'test_parse.ts', content }, 'call-1');
    const edit = toolCall(
      'Edit',
      {
        file_path: './test_parse.ts',
        old_string: 'console.log(parse(sample));',
        new_string: 'console.log(parse(padded));',
      },
      'call-2',
    );
    const first = buildAnchoredSummary(step(write));
    expect(first.createdCode).toEqual(content.split('\n'));
    const later = buildAnchoredSummary(step(edit), { mergesInto: first });
    expect(later.createdCode).toEqual(['console.log(parse(padded));']);
    expect(later.changes).toEqual([]);
    // Alone, the span cannot tell: the file is one it found.
    expect(buildAnchoredSummary(step(edit)).changes).toEqual(['console.log(parse(padded));']);
    expect(mergeAnchoredSummary(first, later).createdCode).toEqual([
      ...content.split('\n'),
      'console.log(parse(padded));',
    ]);
  });

  it('tells lines written into files that were there from lines of files the session created', () => {
    const calls = [
      toolCall(
        'Edit',
        { file_path: 'src/parse.ts', old_string: 'const re = /=+/g;', new_string: 'const re = /^=+$/gm;' },
        'call-1',
      ),
      toolCall(
        'Write',
        {
          file_path: 'test_parse.ts',
          content: 'import { parse } from "./src/parse";\nconsole.log(parse(sample));',
        },
        'call-2',
      ),
      // Written again after it was created: still the session's own file.
      toolCall(
        'Edit',
        {
          file_path: './test_parse.ts',
          old_string: 'console.log(parse(sample));',
          new_string: 'console.log(parse(padded));',
        },
        'call-3',
      ),
      // A rewrite of a file read first is a change to it, not a new file.
      toolCall('Read', { file_path: 'tsconfig.json' }, 'call-4'),
      toolCall(
        'Write',
        { file_path: 'tsconfig.json', content: '{\n  "module": "commonjs",\n  "noEmit": false\n}' },
        'call-5',
      ),
    ];
    const summary = oneStepSummary('Fix the delimiter', calls, 'ok');
    expect(summary.changes).toEqual(['const re = /^=+$/gm;', '"module": "commonjs",', '"noEmit": false']);
    expect(summary.createdCode).toEqual([
      'import { parse } from "./src/parse";',
      'console.log(parse(sample));',
      'console.log(parse(padded));',
    ]);
    // Both are code written; the changes come first.
    const text = renderAnchoredSummary(summary);
    expect(text.indexOf('const re = /^=+$/gm;')).toBeLessThan(text.indexOf('console.log(parse(padded));'));
    expect(text.match(/## Code written/g)).toHaveLength(1);
    // What the edit of a file that was there took out; the session's own file's old lines are its code written.
    expect(summary.replacedCode).toEqual(['const re = /=+/g;']);
    expect(text).toContain('## Code replaced (verbatim)\n- const re = /=+/g;\n');
  });

  it('takes the lines of a diff that names no file (Cursor) as code written, into a new file when it only adds', () => {
    const calls = [
      toolCall(
        'edit_file',
        { diff: "- \n+ import { GitService } from '../../domain/git';\n+ export class SessionDB {" },
        'call-1',
      ),
      toolCall(
        'edit_file',
        { diff: '  export class SessionDB {\n-   private db = {};\n+   private db = new Map();' },
        'call-2',
      ),
      // It renames the class the first diff wrote: that line was the session's own, not the file's old text.
      toolCall('edit_file', { diff: '- export class SessionDB {\n+ export class SessionStore {' }, 'call-3'),
    ];
    const summary = oneStepSummary('Add sessions', calls, 'ok');
    expect(summary.createdCode).toEqual([
      "import { GitService } from '../../domain/git';",
      'export class SessionDB {',
    ]);
    expect(summary.changes).toEqual(['private db = new Map();', 'export class SessionStore {']);
    expect(summary.replacedCode).toEqual(['private db = {};']);
    expect(summary.scripts).toEqual([]);
  });

  it('keeps what edits took out of files that were there, not lines the session wrote and replaced itself', () => {
    const calls = [
      toolCall(
        'Edit',
        {
          file_path: 'src/picker.ts',
          old_string: 'if (selectionState === "partial") {\n  acceptDate(newDate, false);\n}\nrender();',
          new_string: '// Accept only when finished\nrender();',
        },
        'call-1',
      ),
      // The comment the first edit wrote is replaced again: the session's own line, not the file's old text.
      toolCall(
        'Edit',
        {
          file_path: 'src/picker.ts',
          old_string: '// Accept only when finished',
          new_string: '// Accept on OK only',
        },
        'call-2',
      ),
      // A diff's removed lines are its old text too (its context and header are not).
      toolCall(
        'apply_patch',
        {
          path: 'src/dialog.ts',
          patch:
            '--- a/src/dialog.ts\n+++ b/src/dialog.ts\n onCancel() {\n-  close(true);\n+  reset();\n+  close(false);\n }',
        },
        'call-3',
      ),
    ];
    const summary = oneStepSummary('Make Cancel work', calls, 'ok');
    expect(summary.replacedCode).toEqual([
      'if (selectionState === "partial") {',
      'acceptDate(newDate, false);',
      'close(true);',
    ]);
    expect(summary.changes).toEqual([
      '// Accept only when finished',
      '// Accept on OK only',
      'reset();',
      'close(false);',
    ]);
    // Earlier items survive a merge; a repeat is not added twice.
    const merged = mergeAnchoredSummary(summary, oneStepSummary('Again', calls.slice(0, 1), 'ok'));
    expect(merged.replacedCode).toEqual(summary.replacedCode);
  });

  it('takes the lines of an edit that names no file (SWE-agent) as code written into the file the ledger says', () => {
    const steps = [
      toolCall('open', { path: 'tests/missing_colon.py' }, 'call-1'),
      toolCall(
        'edit',
        { search: 'def division(a, b) -> float', replace: 'def division(a, b) -> float:' },
        'call-2',
      ),
      toolCall('bash', { command: 'create printenv.pl' }, 'call-3'),
      toolCall(
        'bash',
        { command: 'edit 1:1\n#!/usr/bin/perl\nforeach $key (sort(keys %ENV)) {\nend_of_edit' },
        'call-4',
      ),
      toolCall('bash', { command: 'python tests/missing_colon.py' }, 'call-5'),
    ];
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Fix the syntax error.'),
        ...steps.flatMap((call) => [assistantMessage([call]), toolMessage(toolResult(call, 'ok'))]),
      ]),
    );
    expect(summary.changes).toEqual(['def division(a, b) -> float:']);
    expect(summary.createdCode).toEqual(['#!/usr/bin/perl', 'foreach $key (sort(keys %ENV)) {']);
    expect(summary.scripts).toEqual(['create printenv.pl', 'python tests/missing_colon.py']);
  });

  it('keeps the definitions its reads printed whose names its prose writes as code, once, where they are', () => {
    const read = toolCall(
      'bash',
      { command: "nl -ba django/db/models/sql/query.py | sed -n '545,560p'" },
      'call-1',
    );
    const grep = toolCall(
      'bash',
      { command: 'grep -n "def get_count" django/db/models/sql/query.py' },
      'call-2',
    );
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Strip unused annotations from count queries'),
        assistantMessage([read]),
        toolMessage(
          toolResult(
            read,
            '   548\t    def get_count(self, using):\n   556\t    def has_filters(self):\n   559\t    def exists(self):',
          ),
        ),
        assistantMessage([
          { type: 'text', text: '`get_count` wraps the query; has_filters() is unrelated.' },
          grep,
        ]),
        toolMessage(toolResult(grep, '548:    def get_count(self, using):')),
      ]),
    );
    // `exists` was printed but never talked about as code; `get_count` was printed twice.
    expect(summary.definitions).toEqual([
      '`django/db/models/sql/query.py:548` def get_count(self, using):',
      '`django/db/models/sql/query.py:556` def has_filters(self):',
    ]);
    expect(renderAnchoredSummary(summary)).toContain(
      '## Definitions looked at (verbatim)\n- `django/db/models/sql/query.py:548` def get_count(self, using):',
    );
  });

  it('tells the output lines naming what the call went to find from the other excerpts, and shows them first', () => {
    const grep = toolCall('bash', { command: 'grep -rn "get_count" django/db/models/' }, 'call-1');
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Strip unused annotations from count queries in django/db/models/query.py'),
        assistantMessage([{ type: 'text', text: 'Where does `count()` go?' }, grep]),
        toolMessage(
          toolResult(
            grep,
            [
              'django/db/models/query.py:625:        return self.query.get_count(using=self.db)',
              'django/db/models/sql/where.py:12: from django.db.models.expressions import ExpressionWrapper',
            ].join('\n'),
          ),
        ),
        // Prose is not a tool output: it names get_count, but nothing looked it up.
        assistantMessage('So django/db/models/sql/query.py has get_count and get_aggregation.'),
      ]),
    );
    expect(summary.soughtExcerpts).toEqual([
      'django/db/models/query.py:625:        return self.query.get_count(using=self.db)',
    ]);
    expect(summary.excerpts).toContain(
      'django/db/models/sql/where.py:12: from django.db.models.expressions import ExpressionWrapper',
    );
    expect(summary.excerpts).toContain('So django/db/models/sql/query.py has get_count and get_aggregation.');
    expect(summary.excerpts).not.toContain(summary.soughtExcerpts[0]);
    const text = renderAnchoredSummary(summary);
    const section = text.slice(text.indexOf('## Excerpts (verbatim)'));
    expect(section.indexOf('get_count(using=self.db)')).toBeLessThan(section.indexOf('ExpressionWrapper'));
  });

  it('says no more of a created file whose lines the transcript does not show than that it was created', () => {
    const calls = [
      toolCall('create', { path: 'src/app/layout.tsx' }, 'call-1'),
      toolCall(
        'create',
        { path: 'src/app/page.tsx', file_text: 'export default function Page() {}\n' },
        'call-2',
      ),
    ];
    const summary = oneStepSummary('Set up the app.', calls, 'File created.');
    expect(summary.files).toEqual([
      { path: 'src/app/layout.tsx', status: 'created' },
      { path: 'src/app/page.tsx', status: 'created', detail: 'create 1 lines (Page)' },
    ]);
  });

  it('names a file the session created and deleted as such, without the edits it went through', () => {
    const calls = [
      toolCall('Write', { file_path: 'inspect_query.py', content: 'import django\nprint(1)\n' }, 'call-1'),
      toolCall(
        'Edit',
        { file_path: 'inspect_query.py', old_string: 'print(1)', new_string: 'print(2)' },
        'call-2',
      ),
      toolCall('Bash', { command: 'rm inspect_query.py old_notes.txt' }, 'call-3'),
      toolCall('Edit', { file_path: 'src/app.py', old_string: 'a = 1', new_string: 'a = 2' }, 'call-4'),
    ];
    const summary = oneStepSummary('Fix the query and clean up.', calls, 'ok');
    expect(summary.files).toEqual([
      { path: 'inspect_query.py', status: 'created and deleted' },
      { path: 'old_notes.txt', status: 'deleted' },
      { path: 'src/app.py', status: 'modified', detail: 'edit +1/-1' },
    ]);
  });

  it('lists files the agent named in its prose but touched through no tool call as mentioned', () => {
    const edit = toolCall(
      'Edit',
      { file_path: '/repo/src/cli.ts', old_string: 'a', new_string: 'b' },
      'call-1',
    );
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Add a branch command.'),
        assistantMessage([
          {
            type: 'text',
            text: 'I will create `src/commands/git/branch.ts`, record the rule in `command-organization.mdc`, and wire it in `src/cli.ts`. It calls `os.path.join` and `self.query`; see `https://example.com/a.md`.',
          },
          edit,
        ]),
        toolMessage(toolResult(edit, { type: 'text', value: 'ok' })),
        assistantMessage('Done: `src/commands/git/branch.ts` exists now.'),
      ]),
    );
    expect(summary.files).toEqual([
      { path: '/repo/src/cli.ts', status: 'modified', detail: 'edit +1/-1' },
      { path: 'src/commands/git/branch.ts', status: 'mentioned' },
      { path: 'command-organization.mdc', status: 'mentioned' },
    ]);
  });

  it('does not list again as mentioned a file the ledger has under a relative path, named from the root', () => {
    const open = toolCall('bash', { command: 'open pkg/handlers/numpy_handler.py 293' }, 'call-1');
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Make the attribute optional.'),
        assistantMessage([{ type: 'text', text: 'Let me open the handler.' }, open]),
        toolMessage(
          toolResult(open, { type: 'text', value: '[File: /repo/pkg/handlers/numpy_handler.py]\n293:x' }),
        ),
        assistantMessage(
          'The check is in `/repo/pkg/handlers/numpy_handler.py`; `/elsewhere/numpy_handler.py` is another file.',
        ),
      ]),
    );
    expect(summary.files.map((file) => [file.path, file.status])).toEqual([
      ['pkg/handlers/numpy_handler.py', 'read'],
      ['/elsewhere/numpy_handler.py', 'mentioned'],
    ]);
  });

  it("does not list again as mentioned a file the ledger has under another spelling ('./x')", () => {
    const read = toolCall('Read', { file_path: 'src/app.ts' }, 'call-1');
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Fix the start-up crash.'),
        assistantMessage([{ type: 'text', text: 'Reading the entry point.' }, read]),
        toolMessage(toolResult(read, { type: 'text', value: 'export const app = 1;' })),
        assistantMessage('The crash is in `./src/app.ts`, not in `./src/server.ts`.'),
      ]),
    );
    expect(summary.files.map((file) => [file.path, file.status])).toEqual([
      ['src/app.ts', 'read'],
      ['./src/server.ts', 'mentioned'],
    ]);
  });

  it('says how a command ended only when the transcript shows it, and when the harness cut its output', () => {
    const calls = [
      toolCall('run_terminal_cmd', { command: 'bun add commander' }, 'call-1'),
      toolCall('run_terminal_cmd', { command: 'bun add commander' }, 'call-2'),
      toolCall('Bash', { command: 'pnpm build' }, 'call-3'),
      toolCall('Bash', { command: 'pnpm test' }, 'call-4'),
      toolCall('Bash', { command: 'ls -R' }, 'call-5'),
    ];
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Set the project up.'),
        assistantMessage(calls),
        toolMessage(
          // A SpecStory export without the terminal output, then outputs with an exit status.
          toolResult(calls[0]!, { type: 'text', value: '[no output in the SpecStory export]' }),
          toolResult(calls[1]!, { type: 'text', value: '[no output in the SpecStory export]' }),
          toolResult(calls[2]!, { type: 'text', value: 'built in 2.1s\nexit code 0' }),
          toolResult(calls[3]!, { type: 'error-text', value: 'FAIL src/a.test.ts\nexit code 1' }),
          // The harness cut the listing: the agent saw part of it.
          toolResult(calls[4]!, {
            type: 'text',
            value: '<returncode>0</returncode>\n<elided_chars>\n28287 characters elided\n</elided_chars>',
          }),
        ),
      ]),
    );
    expect(summary.commands).toEqual([
      '`bun add commander` (2 runs)',
      '`pnpm build` → ok',
      '`pnpm test` → failed (exit 1)',
      '`ls -R` → ok (output cut: 28287 characters elided)',
    ]);
  });

  it.each([
    ['a closing offer', 'Would you like me to add a test as well?'],
    [
      'the note extractive prose leaves',
      '[…]\n\n[precis: sentences marked […] were elided from this 900-token text; full text: h-0123456789abcdef0123]',
    ],
  ])('takes the last step from what was done, not from %s', (_what, ending) => {
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Fix the retry cap.'),
        assistantMessage(`I capped the delay in src/retry.ts at 30 s. ${ending}`),
      ]),
    );
    expect(summary.currentState).toEqual(['Last step: I capped the delay in src/retry.ts at 30 s.']);
  });

  it('states test runs by their result, and leaves out a run with no result to tell', () => {
    const run = (command: string, output: string) => ({ name: 'run_command', input: { command }, output });
    const summary = buildAnchoredSummary(
      assignIds(
        createConversationBuilder()
          .user('Make the suite pass.')
          .tools([run('npx vitest run', ' Test Files  6 passed (6)\n      Tests  51 passed (51)')])
          .tools([run('npx vitest run > /tmp/vitest.log', '')])
          .build(),
      ),
    );
    expect(summary.currentState.filter((line) => line.startsWith('vitest'))).toEqual([
      'vitest ok (51 passed, 0 failed): `Test Files  6 passed (6)` `Tests  51 passed (51)`',
    ]);
  });

  it("takes the intent from the words the user typed, not the harness notes before them or a command's expansion", () => {
    const request = userMessage(
      [
        {
          type: 'text',
          text: 'Caveat: the messages below were generated by the user while running local commands.',
        },
        { type: 'text', text: '/release docs/release.md' },
        { type: 'text', text: 'Release the package. Always run the tests before you tag.' },
      ],
      { metadata: { requestPart: 1, expansionPart: 2 } },
    );
    const summary = buildAnchoredSummary(assignIds([request]));
    expect(summary.intent).toBe('/release docs/release.md');
    // The expansion instructs the agent: its rules are constraints.
    expect(summary.constraints).toEqual(['Always run the tests before you tag.']);
  });

  it('takes no constraint from harness notes merged among the parts of a later request', () => {
    // aider's prompts after a request that got no reply, merged with the next request by a repair.
    const later = userMessage(
      [
        { type: 'text', text: 'Only change dataset.py: add a bounds check.' },
        {
          type: 'text',
          text: 'dataset.py\nAdd file to the chat? (Y)es/(N)o [Yes]: y\nPlease answer with one of: yes, no',
        },
        { type: 'text', text: 'Keep the type hints.' },
      ],
      { metadata: { harnessParts: [1] } },
    );
    const summary = buildAnchoredSummary(assignIds([userMessage('Fix the loader.'), later]));
    expect(summary.constraints.join('\n')).toContain('Only change dataset.py');
    expect(summary.constraints.join('\n')).toContain('Keep the type hints.');
    expect(summary.constraints.join('\n')).not.toMatch(/Add file|Please answer/);
  });

  it('takes the intent from the task option when the first task was not dropped', () => {
    const summary = buildAnchoredSummary(session().slice(1), { task: 'The original task' });
    expect(summary.intent).toBe('The original task');
  });

  it("leaves an issue template's hidden comments out of the intent, not comments in code", () => {
    const task = [
      '<pr_description>',
      'TimeSeries: misleading exception when required column check fails.',
      '<!-- This comments are hidden when you submit the issue,',
      'so you do not need to remove them! -->',
      '',
      '<!-- Please be sure to check out our contributing guidelines. -->',
      '',
      '### Expected behavior',
      'An exception that names the missing columns. <!-- inline note -->',
      '```html',
      '<!-- a comment the page under test holds -->',
      '',
      '',
      '',
      '```',
      '</pr_description>',
    ].join('\n');
    const summary = buildAnchoredSummary(session().slice(1), { task });
    expect(summary.intent).toBe(
      [
        '<pr_description>',
        'TimeSeries: misleading exception when required column check fails.',
        '',
        '### Expected behavior',
        'An exception that names the missing columns. ',
        '```html',
        '<!-- a comment the page under test holds -->',
        '',
        '',
        '',
        '```',
        '</pr_description>',
      ].join('\n'),
    );
    // Under the cap, the task's own words take the room the comments took.
    const capped = buildAnchoredSummary(session().slice(1), { task, maxIntentChars: 120 });
    expect(capped.intent).toContain('### Expected behavior');
    // One pass: a pasted text full of unclosed openers stays as it is, without a scan per opener.
    const unclosed = `<!-- a --> Fix it. ${'<!-- '.repeat(50_000)}`;
    expect(
      buildAnchoredSummary(session().slice(1), { task: unclosed, maxIntentChars: 1_000_000 }).intent,
    ).toBe(`Fix it. ${'<!-- '.repeat(50_000)}`.trim());
  });

  it('caps the intent', () => {
    const summary = buildAnchoredSummary(assignIds([userMessage('x'.repeat(5000))]), { maxIntentChars: 100 });
    expect(summary.intent).toBe(`${'x'.repeat(100)}…`);
  });

  it('is deterministic', () => {
    expect(buildAnchoredSummary(session())).toEqual(buildAnchoredSummary(session()));
  });

  it('builds the same record when it carries on from the record of the first messages', () => {
    const messages = [
      ...session(),
      ...session().map((message) => ({ ...message, id: `again-${message.id}` })),
    ];
    for (const maxExcerptChars of [120, 400, 12_000])
      for (let first = 0; first <= messages.length; first += 3) {
        const previous = buildAnchoredSummary(messages.slice(0, first), { maxExcerptChars });
        const carried = buildAnchoredSummary(messages, { maxExcerptChars, previous });
        expect(carried).toEqual(buildAnchoredSummary(messages, { maxExcerptChars }));
        // Its state is taken over: carrying on from it again starts over, to the same record.
        expect(buildAnchoredSummary(messages, { maxExcerptChars, previous })).toEqual(carried);
      }
    // A record of other messages is no start: the record is built from scratch.
    const other = buildAnchoredSummary(session().slice(2, 6));
    expect(buildAnchoredSummary(session(), { previous: other })).toEqual(buildAnchoredSummary(session()));
  });

  it('chooses the densest excerpts first, up to maxExcerptChars, in their order', () => {
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Plain words only in this line here.'),
        assistantMessage('Edit src/a.ts and src/b.ts with retryCount.'),
        assistantMessage('Then look at src/c.ts once more today.'),
        assistantMessage('Edit src/a.ts and src/b.ts with retryCount.'),
      ]),
      { maxExcerptChars: 80 },
    );
    expect(summary.excerpts).toEqual(['Edit src/a.ts and src/b.ts with retryCount.']);
  });

  it('takes no excerpt that only holds a missing value in table or list dress', () => {
    const summary = buildAnchoredSummary(
      assignIds([
        assistantMessage(
          [
            'Searched codebase "tasks-process.mdc" • **1** results',
            '| File |',
            '|------|',
            '| `undefined` |',
            '- **owner**: `null`',
            'The loader reads `config/undefined.json` when no name is set.',
          ].join('\n'),
        ),
      ]),
    );
    expect(summary.excerpts).toContain('Searched codebase "tasks-process.mdc" • **1** results');
    expect(summary.excerpts).toContain('The loader reads `config/undefined.json` when no name is set.');
    expect(summary.excerpts.join('\n')).not.toMatch(/^\| `undefined` \|$/m);
    // A named field that is empty still says something.
    expect(summary.excerpts).toContain('- **owner**: `null`');
  });

  it("takes no excerpt from a test run's set-up header", () => {
    const output = [
      '============================= test session starts ==============================',
      'Platform: Linux-6.8.0-1040-aws-x86_64-with-glibc2.35',
      'plugins: hypothesis-6.82.6, openfiles-0.5.0, astropy-header-0.2.2',
      'collected 8 items',
      'FAILED astropy/io/ascii/tests/test_qdp.py::test_lowercase - ValueError',
    ].join('\n');
    const summary = buildAnchoredSummary(
      assignIds(
        createConversationBuilder()
          .user('Fix the reader.')
          .tools([{ name: 'Bash', input: { command: 'pytest astropy/io/ascii' }, output }])
          .build(),
      ),
    );
    expect(summary.excerpts).toContain(
      'FAILED astropy/io/ascii/tests/test_qdp.py::test_lowercase - ValueError',
    );
    expect(summary.excerpts.join('\n')).not.toMatch(/Platform|plugins/);
  });

  it('takes no excerpt from a directory listing, nor from a worked example before the task', () => {
    const listing = [
      'CHANGELOG.md  LICENSE  README.md  base64.js  index.js  node_modules  package-lock.json  package.json',
      'auth-token.test.js  registry-url.test.js',
      '-rw-r--r--  1 root root  1234 Jan  1 12:00 settings_manager.py',
      'drwxr-xr-x. 3 root root  4096 Jan  1 12:00 src',
      'numpy  1.26.0',
      "ValueError: invalid literal for int() with base 10: 'x'",
    ].join('\n');
    const summary = buildAnchoredSummary(
      assignIds([
        {
          role: 'user',
          content: [
            {
              type: 'text',
              text: [
                "Here's a running example of how to perform a task:",
                '--- START OF EXAMPLE ---',
                'USER: Create a server in app.py.',
                'Using cached flask-3.0.3-py3-none-any.whl (101 kB)',
                '--- END OF EXAMPLE ---',
              ].join('\n'),
            },
            { type: 'text', text: 'Fix the settings loader in settings_manager.py.' },
          ],
          metadata: { requestPart: 1 },
        },
        ...createConversationBuilder()
          .tools([
            { name: 'Bash', input: { command: 'ls -R; ls -l; pip list; python run.py' }, output: listing },
          ])
          .build(),
      ]),
    );
    // A table of two columns, one a version, is not a listing.
    expect(summary.excerpts).toEqual(
      expect.arrayContaining(['numpy  1.26.0', "ValueError: invalid literal for int() with base 10: 'x'"]),
    );
    expect(summary.excerpts.join('\n')).not.toMatch(/README|registry-url|rw-r--r--|drwxr-xr-x|flask/);
  });
});

describe('renderAnchoredSummary', () => {
  it('renders every non-empty section under a header naming the count and handles', () => {
    const text = renderAnchoredSummary(
      buildAnchoredSummary(session(), { handles: ['h-0123456789abcdef0123'] }),
    );
    expect(
      text.startsWith('[precis summary of 11 earlier messages — archived: h-0123456789abcdef0123]'),
    ).toBe(true);
    for (const title of [
      'Session intent',
      'User requests and constraints',
      'Files',
      'Decisions',
      'Errors → fixes',
      'Failed approaches',
      'Commands',
      'Open tasks / blockers',
      'Next steps',
      'Archived',
    ])
      expect(text).toContain(`## ${title}\n`);
    expect(text).toContain('`src/retry/backoff.ts` modified');
    expect(text).toContain('- [ ] Add a jitter test');
    expect(text).toContain('- [x] Cap the backoff delay');
  });

  it('fits maxTokens, shrinking sections and saying what was left out', () => {
    const big = buildAnchoredSummary(session());
    for (let index = 0; index < 200; index++)
      big.errors.push(`Error ${index}: something failed in src/file-${index}.ts`);
    const full = renderAnchoredSummary(big);
    for (const maxTokens of [60, 150, 400, 1000]) {
      const text = renderAnchoredSummary(big, { maxTokens, counter });
      expect(counter.count(text)).toBeLessThanOrEqual(maxTokens);
      expect(text.startsWith('[precis summary of')).toBe(true);
    }
    const capped = renderAnchoredSummary(big, { maxTokens: 1000, counter });
    // What was left out is counted on one closing line.
    expect(capped).toMatch(/\n\nIn the archive, not shown: (?:.*, )?errors → fixes \(\+\d+ more\)[,.]/);
    expect(capped.length).toBeLessThan(full.length);
    // Sections share the budget: a long errors list does not crowd out the intent.
    expect(capped).toContain('## Session intent');
  });

  it('under a cap shows the first lines of a long task in their order, taking more than its share', () => {
    const summary = emptyAnchoredSummary();
    summary.messageCount = 40;
    summary.intent = [
      '/release docs/release.md',
      'Release version 4.2 of the package to npm.',
      `Background: ${'the previous release went out without its changelog, '.repeat(6)}`,
      'Keep the public API unchanged.',
    ].join('\n');
    for (let index = 0; index < 30; index++) {
      summary.errors.push(`\`Error ${index}: build step ${index} failed in src/step-${index}.ts\``);
      summary.files.push({ path: `src/module-${index}/index.ts`, status: 'modified' });
      summary.commands.push(`\`npm run build -- --project ${index}\` → failed (exit 1)`);
      summary.decisions.push(`Decided to split module ${index} because its tests time out.`);
      summary.changes.push(`export const widget${index} = createWidget(${index});`);
      summary.results.push(
        `src/step-${index}.ts:${index}:3 - error TS2304: Cannot find name 'Widget${index}'.`,
      );
    }
    const text = renderAnchoredSummary(summary, { maxTokens: 150, counter });
    expect(counter.count(text)).toBeLessThanOrEqual(150);
    // The long third line does not fit: the line after it is not shown out of order.
    expect(text).toContain(
      '## Session intent\n/release docs/release.md\nRelease version 4.2 of the package to npm.\n\n## ',
    );
    const small = renderAnchoredSummary(summary, { maxTokens: 100, counter });
    expect(small).toContain('## Session intent\n/release docs/release.md\nRelease version 4.2');
    // An uncapped intent takes up to `intentMinShare` of the room whatever its lines are worth; capped (as for a
    // task the conversation still shows), its long third line is worth less per token than the other sections'.
    const uncapped = renderAnchoredSummary(summary, { maxTokens: 300, counter });
    expect(uncapped).toContain('Background: the previous release');
    expect(uncapped).toContain('Keep the public API unchanged.');
    const pointer = renderAnchoredSummary(summary, { maxTokens: 300, counter, maxIntentChars: 10_000 });
    expect(pointer).toContain('Release version 4.2');
    expect(pointer).not.toContain('Background: the previous release');
    // Under a larger cap, sections share the room by weight, and the capped intent shows whole again.
    const roomy = renderAnchoredSummary(summary, { maxTokens: 1000, counter, maxIntentChars: 10_000 });
    expect(roomy).toContain('Keep the public API unchanged.');
    // None of it (the task message is in view): no section, and its room goes to the others.
    for (const maxTokens of [100, 1000, undefined]) {
      const none = renderAnchoredSummary(summary, {
        counter,
        maxIntentChars: 0,
        ...(maxTokens ? { maxTokens } : {}),
      });
      expect(none).not.toContain('Session intent');
      expect(none).not.toContain('Release version 4.2');
    }
    expect(renderAnchoredSummary(summary, { maxTokens: 100, counter, maxIntentChars: 0 })).toContain(
      'TS2304',
    );
  });

  it('shows the first sentences of a task written as one long paragraph, and never splits its code', () => {
    const summary = emptyAnchoredSummary();
    summary.messageCount = 40;
    const paragraph = `Analyse the sub-agents in .claude/agents and write a CLAUDE.md for them. ${'You will be the manager of all of the sub-agents, planning, developing, testing and deploying with them. '.repeat(4)}Keep it short.`;
    const code = `\`\`\`py\nresult = run("${'x'.repeat(220)}"). Then = 1\n\`\`\``;
    summary.intent = `${paragraph}\n${code}`;
    for (let index = 0; index < 30; index++) {
      summary.errors.push(`\`Error ${index}: build step ${index} failed in src/step-${index}.ts\``);
      summary.commands.push(`\`npm run build -- --project ${index}\` → failed (exit 1)`);
    }
    const text = renderAnchoredSummary(summary, { maxTokens: 150, counter });
    expect(counter.count(text)).toBeLessThanOrEqual(150);
    expect(text).toContain(
      '## Session intent\nAnalyse the sub-agents in .claude/agents and write a CLAUDE.md for them.\nYou will be the manager',
    );
    // Uncapped, every sentence shows, one per line; the code line stays whole.
    const whole = renderAnchoredSummary(summary, { counter });
    expect(whole).toContain('for them.\nYou will be the manager');
    expect(whole).toContain(`result = run("${'x'.repeat(220)}"). Then = 1`);
    expect(whole.replace(/\s+/g, ' ')).toContain(summary.intent.replace(/\s+/g, ' '));
  });

  it('names sections none of whose lines fit on one closing line instead of a heading each', () => {
    const summary = emptyAnchoredSummary();
    summary.messageCount = 9;
    summary.intent = `Port the ${'very long and detailed '.repeat(30)}task description to the new API.`;
    summary.errors.push('`TypeError: cannot read properties of undefined` (from npm test)');
    for (let index = 0; index < 6; index++)
      summary.commands.push(`\`npm run build -- --project ${index}\` → ok`);
    const text = renderAnchoredSummary(summary, { maxTokens: 60, counter });
    expect(counter.count(text)).toBeLessThanOrEqual(60);
    expect(text).toContain('## Errors → fixes\n- `TypeError');
    expect(text).not.toContain('## Session intent');
    expect(text).toMatch(/\nIn the archive, not shown: session intent \(1\)(, commands \(\d\))?\.$/);
  });

  it('gives no heading to a section whose every line an earlier section shows', () => {
    const summary = emptyAnchoredSummary();
    summary.messageCount = 2;
    summary.commands.push('`npm test` → failed (exit 1)');
    summary.scripts.push('npm test');
    summary.decisions.push('Keep the retry count.');
    for (const text of [renderAnchoredSummary(summary), renderAnchoredSummary(summary, { maxTokens: 200 })]) {
      expect(text).toContain('## Commands\n- `npm test` → failed (exit 1)');
      expect(text).not.toContain('## Scripts and commands written');
    }
  });

  it('indents the further lines of an item of any section under its bullet, so the list holds', () => {
    const summary = emptyAnchoredSummary();
    summary.messageCount = 4;
    summary.errors.push(
      "`Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/app/dist/index.js'\n    at finalizeResolution (node:internal)` (from node dist/cli.js)",
    );
    summary.decisions.push('Keep the loader\nbecause the tests import it');
    const text = renderAnchoredSummary(summary, { counter });
    expect(text).toContain(
      "## Errors → fixes\n- `Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/app/dist/index.js'\n      at finalizeResolution (node:internal)` (from node dist/cli.js)",
    );
    expect(text).toContain('## Decisions\n- Keep the loader\n  because the tests import it');
  });

  it('gives a small cap to a line before the closing line that names what is not shown', () => {
    const summary = emptyAnchoredSummary();
    summary.messageCount = 20;
    summary.handles.push('h-fa4098ecec4b9857862e', 'h-7100070f0cf66a74901e', 'h-5ea22428a3932e03af43');
    summary.files.push({ path: '/path/to/Demo/CLAUDE.md', status: 'modified', detail: 'edit +64/-36' });
    summary.decisions.push('Updated Next.js version: using 15.5.2 instead of 14, with React 19.1.0');
    summary.errors.push(
      '`File has not been read yet. Read it first before writing to it.` (from Edit CLAUDE.md)',
    );
    for (let index = 0; index < 3; index++) summary.commands.push(`\`Glob "**/*.md" dir-${index}\` → ok`);
    for (let index = 0; index < 40; index++) summary.scripts.push(`│   ├── Component${index}.tsx`);
    for (let index = 0; index < 90; index++) summary.excerpts.push(`# Section ${index} of the README`);
    summary.nextSteps.push('Check the remaining components against the docs.');
    const header = counter.count(renderAnchoredSummary(summary, { maxTokens: 1, counter }));
    // Room for a line or two, not for them and the closing line that names seven sections.
    const text = renderAnchoredSummary(summary, { maxTokens: header + 45, counter });
    expect(counter.count(text)).toBeLessThanOrEqual(header + 45);
    expect(text).toMatch(/\n## [^\n]+\n- /);
    expect(text).not.toContain('In the archive, not shown');
    // With room to spare, the closing line still comes; with more, it counts what each section leaves out.
    expect(renderAnchoredSummary(summary, { maxTokens: header + 160, counter })).toContain(
      'In the archive, not shown',
    );
    expect(renderAnchoredSummary(summary, { maxTokens: header + 300, counter })).toMatch(
      /\n\nIn the archive, not shown: .*scripts and commands written \(\+\d+ more\), excerpts \(\+\d+ more\)\.$/,
    );
  });

  it('offers the room that whole lines leave of the sections’ shares to the sections that want more', () => {
    const summary = emptyAnchoredSummary();
    summary.messageCount = 40;
    const names = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot'];
    // Lines of about 30 tokens: longer than most sections' shares of the cap.
    const line = (section: string, name: string) =>
      `${section} ${name}: the ${name} reader in src/import/${name}-reader.ts streams chunks of the ${name} upload`;
    const sections = [
      'errors',
      'decisions',
      'commands',
      'constraints',
      'changes',
      'scripts',
      'results',
      'excerpts',
    ] as const;
    for (const name of names) for (const section of sections) summary[section].push(line(section, name));
    const lineTokens = Math.min(...summary.errors.map((item) => counter.count(`- ${item}`) + 1));
    for (const maxTokens of [160, 200, 260]) {
      const text = renderAnchoredSummary(summary, { maxTokens, counter });
      const tokens = counter.count(text);
      expect(tokens).toBeLessThanOrEqual(maxTokens);
      // Less is left than one more line would take (in a section not shown yet: with its heading).
      expect(maxTokens - tokens).toBeLessThan(lineTokens + 6);
      expect(text.match(/^- /gm)!.length).toBeLessThan(names.length * sections.length);
    }
  });

  it('shares the room a section cannot use between the sections that want more, by value per token', () => {
    const summary = emptyAnchoredSummary();
    summary.messageCount = 200;
    for (let index = 0; index < 80; index++) {
      const name = String.fromCharCode(97 + (index % 26), 97 + Math.floor(index / 26));
      summary.changes.push(
        `const ${name}Retry = await fetchWithBackoff(${name}Client, { limit: ${name}Limit });`,
      );
      summary.results.push(
        `test ${name}: the upload of the ${name} part in src/upload/${name}-part.ts passed`,
      );
    }
    // Decisions too long for their share: the room they leave is the leftover.
    const reasons = Array.from({ length: 60 }, (_, index) => `reason ${index} for the change`).join(', ');
    for (let index = 0; index < 3; index++) summary.decisions.push(`Decision ${index}: ${reasons}`);
    const text = renderAnchoredSummary(summary, { maxTokens: 2000, counter });
    expect(counter.count(text)).toBeLessThanOrEqual(2000);
    expect(text).not.toContain('## Decisions');
    const code = text.match(/^- const \w+Retry/gm)!.length;
    const results = text.match(/^- test \w+:/gm)!.length;
    // Code written weighs 0.2 and the results 0.16: both take some of the leftover, code a little more. Offered
    // to the heaviest first, code took all of it (63 lines to 37).
    expect(code).toBeGreaterThan(results);
    expect(results).toBeGreaterThanOrEqual(0.75 * code);
    expect(code + results).toBeLessThan(160);
  });

  it("under a small cap chooses lines by value per token: the heaviest section's further lines are worth less", () => {
    const summary = emptyAnchoredSummary();
    summary.messageCount = 40;
    for (const name of ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel'])
      summary.changes.push(`export const ${name}Delay = computeBackoff(${name}Attempt, ${name}MaxDelay);`);
    summary.files.push({ path: 'src/http/retry.ts', status: 'modified', detail: 'edit +12/-3' });
    summary.errors.push('`TypeError: fetchWithRetry is not a function` (from npm test)');
    const codeLines = (text: string) => text.match(/^- export const/gm)?.length ?? 0;
    let shown = 0;
    for (const maxTokens of [60, 80, 100, 120, 140, 160, 200]) {
      const text = renderAnchoredSummary(summary, { maxTokens, counter });
      expect(counter.count(text)).toBeLessThanOrEqual(maxTokens);
      // More room never shows fewer of a section's lines.
      expect(codeLines(text)).toBeGreaterThanOrEqual(shown);
      shown = codeLines(text);
    }
    // Code written weighs the most and wants all eight lines, but its fourth is worth less than the first line of
    // the errors (with its heading): the file, three code lines and the error fill 120 tokens.
    const text = renderAnchoredSummary(summary, { maxTokens: 120, counter });
    expect(text).toContain('## Files\n- `src/http/retry.ts` modified');
    expect(text).toContain('## Errors → fixes\n- `TypeError: fetchWithRetry is not a function`');
    expect(codeLines(text)).toBe(3);
  });

  it("under a small cap shows the files first, up to their share, and a row's path where its detail does not fit", () => {
    const summary = emptyAnchoredSummary();
    summary.messageCount = 40;
    summary.files.push({
      path: 'src/checkout/PaymentForm.tsx',
      status: 'modified',
      detail: 'edit +40/-12 (PaymentForm, validateCard)',
    });
    const name = (index: number) => String.fromCharCode(97 + index);
    for (let index = 0; index < 12; index++) {
      summary.changes.push(`const ${name(index)}Delay = backoff(${name(index)}Attempt);`);
      summary.results.push(`${name(index)} checks passed`);
      summary.errors.push(`\`Error: ${name(index)} timed out\` (from npm test)`);
    }
    // By value per token alone, a dozen short lines of three sections each come before the file's longer row.
    for (const maxTokens of [200, 250]) {
      const text = renderAnchoredSummary(summary, { maxTokens, counter });
      expect(counter.count(text)).toBeLessThanOrEqual(maxTokens);
      expect(text).toContain('## Files\n- `src/checkout/PaymentForm.tsx` modified: edit +40/-12');
    }
    // Where the row does not fit whole, its path and status do.
    const text = renderAnchoredSummary(summary, { maxTokens: 180, counter });
    expect(counter.count(text)).toBeLessThanOrEqual(180);
    expect(text).toContain('## Files\n- `src/checkout/PaymentForm.tsx` modified\n');
  });

  it('tells every o200k counter the exact count of the text it renders, so the summary is not counted twice', () => {
    const summary = buildAnchoredSummary(session());
    for (let index = 0; index < 60; index++)
      summary.errors.push(
        `Error ${index}: the upload of part ${index * 7} failed in src/upload/part-${index}.ts`,
      );
    const renderer = createAnchoredSummaryRenderer(summary);
    for (const maxTokens of [120, 300, 700]) {
      const text = renderer.render(maxTokens);
      const plain = { disallowedSpecial: new Set<string>() };
      expect(createO200kCounter().count(text)).toBe(countTokens(text, plain));
    }
  });

  it('shows a line once: a later section does not repeat what an earlier one shows', () => {
    const summary = emptyAnchoredSummary();
    summary.messageCount = 12;
    const command = 'gh pr create --title "Fix the notes formatter" --body "Fixes #365"';
    summary.commands.push(`\`${command}\` → ok`);
    summary.scripts.push(command, 'const content = note.content ?? note.text;');
    summary.excerpts.push(command, 'Fixes #365: notes showed "No content"');
    const text = renderAnchoredSummary(summary);
    expect(text.split(command).length - 1).toBe(1);
    expect(text).toContain('## Scripts and commands written\n- const content = note.content ?? note.text;');
    expect(text).toContain('## Excerpts (verbatim)\n- Fixes #365: notes showed "No content"');
  });

  it("does not repeat an error's message among the command results", () => {
    const summary = emptyAnchoredSummary();
    summary.messageCount = 6;
    const error = 'sqlite3.OperationalError: no such table: annotations_publisher';
    summary.errors.push(`\`${error}\` (from python reproduce_issue.py, 2×)`);
    summary.results.push(error, 'Ran 82 tests in 0.094s');
    const text = renderAnchoredSummary(summary);
    expect(text.split(error).length - 1).toBe(1);
    expect(text).toContain('## Command results (verbatim)\n- Ran 82 tests in 0.094s');
  });

  it('leaves out the items of ranked sections the conversation around it shows, and their room goes to others', () => {
    const summary = emptyAnchoredSummary();
    summary.messageCount = 9;
    const error = "TypeError: Cannot read properties of undefined (reading 'retries')";
    summary.files.push({ path: 'src/retry/backoff.ts', status: 'modified' });
    summary.errors.push(`\`${error}\` (from npx vitest run, 3×)`);
    summary.commands.push('`npx vitest run src/retry` → exit 1');
    summary.changes.push(
      'if (options.retries === undefined) return defaults;',
      'return Math.min(delay * 2, maxDelay);',
    );
    summary.createdCode.push('export const maxDelay = 30_000;');
    summary.excerpts.push('  delayMs: 250,\n  maxDelay: 30000,');
    // What the recent turns show, as `conversationLines` gives it: trimmed lines.
    const shown = new Set([
      error,
      'npx vitest run src/retry',
      'return Math.min(delay * 2, maxDelay);',
      'delayMs: 250,',
      'src/retry/backoff.ts',
    ]);
    const text = renderAnchoredSummary(summary, { conversationLines: shown });
    expect(text).not.toContain(error);
    expect(text).not.toContain('## Commands');
    expect(text).not.toContain('return Math.min');
    expect(text).toContain('- if (options.retries === undefined) return defaults;');
    expect(text).toContain('- export const maxDelay = 30_000;');
    // An item shows while one of its lines is not in view; a file's row always does.
    expect(text).toContain('-   delayMs: 250,\n    maxDelay: 30000,');
    expect(text).toContain('- `src/retry/backoff.ts` modified');
    // Nothing is counted as left out: the model reads those lines in the conversation.
    expect(text).not.toContain('not shown');
    // Under a cap the room goes to a line the conversation does not show.
    const cap = anchoredSummaryTokens(summary, { conversationLines: shown, counter });
    const tight = renderAnchoredSummary(summary, { maxTokens: cap, conversationLines: shown, counter });
    expect(tight).toBe(text);
    // Without the lines in view, the same room holds less of what the conversation does not show.
    const plain = renderAnchoredSummary(summary, { maxTokens: cap, counter });
    const unseen = ['if (options.retries', 'export const maxDelay', 'maxDelay: 30000'];
    expect(unseen.filter((line) => plain.includes(line)).length).toBeLessThan(unseen.length);
  });

  it('keeps the most salient and specific lines of a capped section, once per shape, in their order', () => {
    const summary = emptyAnchoredSummary();
    summary.messageCount = 2;
    for (let index = 0; index < 30; index++)
      summary.changes.push(`const settings${index} = manager${index}.get();`);
    summary.changes.push('skipPermissions?: boolean;', 'import fs from "node:fs";', '}');
    const roomy = renderAnchoredSummary(summary, { maxTokens: 80, counter });
    // Thirty lines that differ only in numbers are one line's worth of information.
    expect(roomy.match(/const settings\d+/g)?.length).toBe(1);
    expect(roomy.indexOf('const settings')).toBeLessThan(roomy.indexOf('skipPermissions'));
    // Bare syntax and imports never fill leftover room.
    expect(roomy).toContain('skipPermissions?: boolean;');
    expect(roomy).not.toContain('- }');
    expect(roomy).not.toContain('import fs');
  });

  it('under a cap shows the latest user request, which the recent turns no longer hold, before earlier ones', () => {
    const summary = emptyAnchoredSummary();
    summary.messageCount = 40;
    summary.constraints.push(
      'Wire PoIValidator into the MentorRegistry and keep the SignalSchema zod definitions stable',
      'Rename validators/PoIValidator.ts to validators/SignalScorer.ts and update tests/poi_validator.test.ts',
      'Audit afi-core for ESM compliance: dist/index.js, schemas/index.ts, dags/signalProcessing.js',
      'Please scan all files under dist/ for any CommonJS usage and convert it',
    );
    const uncapped = counter.count(renderAnchoredSummary(summary));
    const text = renderAnchoredSummary(summary, { maxTokens: Math.floor(uncapped / 2), counter });
    expect(text).toContain('Please scan all files under dist/ for any CommonJS usage');
    expect(summary.constraints.filter((request) => text.includes(request)).length).toBeLessThan(4);
    // Where the recent turns show it, the request before it is not favoured in its place.
    const shown = new Set(['Please scan all files under dist/ for any CommonJS usage and convert it']);
    const inView = renderAnchoredSummary(summary, {
      maxTokens: Math.floor(uncapped / 2),
      conversationLines: shown,
      counter,
    });
    expect(inView).not.toContain('Please scan all files');
  });

  it('shows the latest of command results that differ only in numbers beside the first, not the ones between', () => {
    const summary = emptyAnchoredSummary();
    summary.messageCount = 2;
    summary.results.push(
      'Actual count: 2',
      'Successfully applied fix v2.',
      'Actual count: 3',
      'Successfully applied fix v5.',
      'Actual count: 1',
      'Successfully applied fix v6.',
    );
    // Uncapped, every line shows; under a cap, the most salient line of a shape and the latest.
    const uncapped = counter.count(renderAnchoredSummary(summary));
    const text = renderAnchoredSummary(summary, { maxTokens: uncapped - 1, counter });
    // The first shows what the bug did, the latest where the work stands; the ones between add nothing.
    for (const line of ['Actual count: 2', 'Actual count: 1', 'fix v2.', 'fix v6.'])
      expect(text).toContain(line);
    expect(text).not.toContain('Actual count: 3');
    expect(text).not.toContain('fix v5.');
  });

  it('under a cap favours what changed in files that were there over the lines of files the session created', () => {
    const summary = emptyAnchoredSummary();
    summary.messageCount = 2;
    const change = 'const delimiterRegex = /^\\s*={2,}\\s*$/gm;';
    summary.changes.push(change, 'import fs from "node:fs";');
    const created = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'].map(
      (name) => `export const ${name}Error = \`failed\`;`,
    );
    summary.createdCode.push(...created);
    // On salience alone every created line ranks above the change.
    for (const line of created) expect(itemSalience(line)).toBeGreaterThan(itemSalience(change));
    const text = renderAnchoredSummary(summary, { maxTokens: 60, counter });
    expect(text).toContain(`- ${change}`);
    expect(created.filter((line) => text.includes(line)).length).toBeLessThan(created.length);
    // An import stays below the floor wherever it was written.
    expect(text).not.toContain('import fs');
    // Favouring changes the ranking only: uncapped, every line shows, the changes first.
    const all = renderAnchoredSummary(summary);
    for (const line of created) expect(all).toContain(line);
    expect(all.indexOf(change)).toBeLessThan(all.indexOf(created[0]!));
  });

  it('lists files in the order the session touched them, every one that fits, whatever their paths hold', () => {
    const summary = emptyAnchoredSummary();
    summary.messageCount = 2;
    const nested = 'packages/mui-lab/src/internal/pickers/wrappers';
    summary.files.push(
      { path: `${nested}/MobileWrapper.tsx`, status: 'read' },
      { path: `${nested}/PickersModalDialog.tsx`, status: 'read' },
      { path: 'reproduce-mobile-datepicker.tsx', status: 'created', detail: 'create 40 lines (App)' },
      { path: 'a.ts', status: 'mentioned' },
      { path: 'b.ts', status: 'mentioned' },
      { path: 'c.ts', status: 'mentioned' },
    );
    const capped = renderAnchoredSummary(summary, { maxTokens: 80, counter });
    // A short path with an identifier or two would rank above a long one that says little else: the order is
    // the session's, and the earliest files (the recent turns show the latest) are the ones kept.
    expect(capped).toContain('MobileWrapper.tsx');
    expect(capped).toContain('PickersModalDialog.tsx');
    expect(capped).not.toContain('`c.ts`');
    const roomy = renderAnchoredSummary(summary, { maxTokens: 400, counter });
    for (const file of summary.files) expect(roomy).toContain(`\`${file.path}\``);
    expect(roomy.indexOf('MobileWrapper')).toBeLessThan(roomy.indexOf('reproduce-mobile'));
  });

  it('renders the same when it carries on from the renderer of an earlier record', () => {
    const messages = session();
    const earlier = createAnchoredSummaryRenderer(buildAnchoredSummary(messages.slice(0, 7)));
    for (const maxTokens of [40, 120, 400]) earlier.render(maxTokens);
    const summary = buildAnchoredSummary(messages);
    const fresh = createAnchoredSummaryRenderer(summary);
    const carried = createAnchoredSummaryRenderer(summary, { previous: earlier });
    expect(carried.estimatedTokens).toBe(fresh.estimatedTokens);
    for (const maxTokens of [undefined, 1, 40, 80, 120, 200, 400, 2000])
      expect(carried.render(maxTokens)).toBe(fresh.render(maxTokens));
  });

  it('counts how much room a record wants up to a limit as the whole estimate capped there', () => {
    const big = buildAnchoredSummary(session());
    for (let index = 0; index < 40; index++) big.scripts.push(`node scripts/step-${index}.mjs --verbose`);
    for (const summary of [buildAnchoredSummary(session()), big, emptyAnchoredSummary()])
      for (const maxIntentChars of [undefined, 20]) {
        const options = maxIntentChars === undefined ? { counter } : { counter, maxIntentChars };
        const estimate = anchoredSummaryTokens(summary, options);
        for (const limit of [0, 1, 10, estimate - 1, estimate, estimate + 1, 5000])
          expect(anchoredSummaryTokensUpTo(summary, limit, options)).toBe(Math.min(limit, estimate));
      }
  });

  it('names the index handle alone when given one, and lists no handles below', () => {
    const handles = [
      'h-0123456789abcdef0123',
      'h-1123456789abcdef0123',
      'h-2123456789abcdef0123',
      'h-3123456789abcdef0123',
    ];
    const summary = buildAnchoredSummary(session(), { handles });
    const listed = renderAnchoredSummary(summary);
    expect(listed.split('\n')[0]).toBe(
      `[precis summary of 11 earlier messages — archived: ${handles.slice(0, 3).join(', ')}, …]`,
    );
    expect(listed).toContain(`## Archived\n${handles.join(', ')}`);
    const indexHandle = 'h-9999999999abcdef0123';
    const indexed = renderAnchoredSummary(summary, { indexHandle });
    expect(indexed.split('\n')[0]).toBe(`[precis summary of 11 earlier messages — archived: ${indexHandle}]`);
    expect(indexed).not.toContain('## Archived');
    for (const handle of handles) expect(indexed).not.toContain(handle);
    // The rest is the same text, and the estimate follows the text.
    expect(indexed.split('\n').slice(1).join('\n')).toBe(
      listed
        .split('\n')
        .slice(1)
        .join('\n')
        .replace(/\n\n## Archived\n[\s\S]*$/, ''),
    );
    expect(anchoredSummaryTokens(summary, { indexHandle })).toBeLessThan(anchoredSummaryTokens(summary));
    expect(anchoredSummaryTokensUpTo(summary, 100_000, { indexHandle })).toBe(
      anchoredSummaryTokens(summary, { indexHandle }),
    );
  });

  it('returns only the header when nothing else fits', () => {
    const summary = buildAnchoredSummary(session(), { handles: ['h-0123456789abcdef0123'] });
    expect(renderAnchoredSummary(summary, { maxTokens: 5 })).toBe(
      '[precis summary of 11 earlier messages — archived: h-0123456789abcdef0123]',
    );
  });
});

describe('mergeAnchoredSummary', () => {
  it('extends, never regenerates: earlier items stay first, repeats are dropped', () => {
    const messages = session();
    const first = buildAnchoredSummary(messages.slice(0, 5), { handles: ['h-a'] });
    const second = buildAnchoredSummary(messages.slice(5), {
      handles: ['h-b'],
      task: 'a later, different task',
    });
    const merged = mergeAnchoredSummary(first, second);
    expect(merged.intent).toBe(first.intent);
    expect(merged.handles).toEqual(['h-a', 'h-b']);
    expect(merged.messageCount).toBe(11);
    expect(merged.errors.slice(0, first.errors.length)).toEqual(first.errors);
    expect(merged.commands.slice(0, first.commands.length)).toEqual(first.commands);
    expect(merged.files.map((file) => file.path)).toEqual(['src/retry/backoff.ts']);
    expect(merged.files[0]?.status).toBe('modified');
    expect(mergeAnchoredSummary(merged, merged).errors).toEqual(merged.errors);
  });

  it("puts a newer span's current state and next steps first, the earlier ones after them", () => {
    const withEnd = (state: string[], next: string[]) => ({
      ...emptyAnchoredSummary(),
      currentState: state,
      nextSteps: next,
    });
    const merged = mergeAnchoredSummary(
      withEnd(['Last step: wrote the parser.'], ['Run the parser tests.']),
      withEnd(['Last step: the parser tests pass.'], ['Open the pull request.', 'Run the parser tests.']),
    );
    expect(merged.currentState).toEqual([
      'Last step: the parser tests pass.',
      'Last step: wrote the parser.',
    ]);
    expect(merged.nextSteps).toEqual(['Open the pull request.', 'Run the parser tests.']);
    // A span that ends with nothing to say keeps the earlier state in place.
    expect(mergeAnchoredSummary(merged, withEnd([], [])).currentState).toEqual(merged.currentState);
  });

  it('lets a file status say more, never less: mentioned, a failed read, read, then changed', () => {
    const withFile = (status: string) => ({
      ...emptyAnchoredSummary(),
      files: [{ path: 'src/a.ts', status }],
    });
    const statusAfter = (earlier: string, later: string) =>
      mergeAnchoredSummary(withFile(earlier), withFile(later)).files.map((file) => file.status);
    expect(statusAfter('mentioned', 'read')).toEqual(['read']);
    expect(statusAfter('read', 'modified')).toEqual(['modified']);
    expect(statusAfter('modified', 'mentioned')).toEqual(['modified']);
    expect(statusAfter('read', 'mentioned')).toEqual(['read']);
    expect(statusAfter('modified', 'read')).toEqual(['modified']);
    expect(statusAfter('created', 'deleted')).toEqual(['created']);
    expect(statusAfter('mentioned', 'read failed')).toEqual(['read failed']);
    expect(statusAfter('read failed', 'read')).toEqual(['read']);
    expect(statusAfter('read', 'read failed')).toEqual(['read']);
  });

  it('merges the rows of one file spelled two ways into one (./x and x, Windows backslashes)', () => {
    const withFiles = (...files: Array<[string, string]>) => ({
      ...emptyAnchoredSummary(),
      files: files.map(([path, status]) => ({ path, status })),
    });
    const merged = mergeAnchoredSummary(
      withFiles(['./src/a.ts', 'read'], ['src\\b.ts', 'read']),
      withFiles(['src/a.ts', 'modified'], ['src/b.ts', 'mentioned'], ['src/c.ts', 'read']),
    );
    expect(merged.files.map((file) => [file.path, file.status])).toEqual([
      ['./src/a.ts', 'modified'],
      ['src\\b.ts', 'read'],
      ['src/c.ts', 'read'],
    ]);
  });

  it('says a file was not read when every read of it failed, and read when one worked', () => {
    const read = (id: string, path: string) => toolCall('Read', { file_path: path }, id);
    const calls = [read('c1', '/p/app.vue'), read('c2', '/p/app/app.vue'), read('c3', '/p/app/app.vue')];
    const summary = buildAnchoredSummary(
      assignIds([
        userMessage('Add a layout.'),
        assistantMessage(calls),
        toolMessage(
          toolResult(calls[0]!, { type: 'error-text', value: 'File does not exist.' }),
          toolResult(calls[1]!, { type: 'error-text', value: 'File does not exist.' }),
          toolResult(calls[2]!, { type: 'text', value: '<template></template>' }),
        ),
      ]),
    );
    expect(summary.files.map((file) => [file.path, file.status])).toEqual([
      ['/p/app.vue', 'read failed'],
      ['/p/app/app.vue', 'read'],
    ]);
  });

  it('never turns a done task back to open', () => {
    const existing = { ...emptyAnchoredSummary(), tasks: [{ text: 'Cap the delay', done: true }] };
    const update = { ...emptyAnchoredSummary(), tasks: [{ text: 'Cap the delay', done: false }] };
    expect(mergeAnchoredSummary(existing, update).tasks).toEqual([{ text: 'Cap the delay', done: true }]);
    expect(mergeAnchoredSummary(update, existing).tasks).toEqual([{ text: 'Cap the delay', done: true }]);
  });

  it('does not change its arguments', () => {
    const existing = buildAnchoredSummary(session().slice(0, 5));
    const copy = structuredClone(existing);
    mergeAnchoredSummary(existing, buildAnchoredSummary(session().slice(5)));
    expect(existing).toEqual(copy);
  });

  it('still takes in new items after many merges: a full section keeps its first half and the latest', () => {
    let merged = emptyAnchoredSummary();
    for (let round = 0; round < 400; round++) {
      const update = emptyAnchoredSummary();
      update.messageCount = 2;
      update.errors.push(`Error: step ${round} failed`);
      update.files.push({ path: `src/step${round}.ts`, status: 'read' });
      update.tasks.push({ text: `Check step ${round}`, done: false });
      update.handles.push(`h-${round.toString(16).padStart(20, '0')}`);
      merged = mergeAnchoredSummary(merged, update);
    }
    const expected = [...Array(150).keys(), ...Array.from({ length: 150 }, (_, index) => 250 + index)];
    expect(merged.errors).toEqual(expected.map((round) => `Error: step ${round} failed`));
    expect(merged.files.map((file) => file.path)).toEqual(expected.map((round) => `src/step${round}.ts`));
    expect(merged.tasks.map((task) => task.text)).toEqual(expected.map((round) => `Check step ${round}`));
    expect(merged.handles.at(-1)).toBe(`h-${(399).toString(16).padStart(20, '0')}`);
    expect(merged.messageCount).toBe(800);
    // A repeat of a kept item does not move or add it.
    const repeat = emptyAnchoredSummary();
    repeat.errors.push('Error: step 3 failed');
    expect(mergeAnchoredSummary(merged, repeat).errors).toEqual(merged.errors);
  });

  it('keeps every earlier item over any sequence of merges (property)', () => {
    const item = fc.string({ minLength: 1, maxLength: 12 });
    const record = fc.record({
      errors: fc.array(item, { maxLength: 6 }),
      decisions: fc.array(item, { maxLength: 6 }),
      tasks: fc.array(fc.record({ text: item, done: fc.boolean() }), { maxLength: 6 }),
    });
    fc.assert(
      fc.property(fc.array(record, { minLength: 1, maxLength: 5 }), (records) => {
        const summaries: AnchoredSummary[] = records.map((fields) => {
          const summary = { ...emptyAnchoredSummary(), messageCount: 1 };
          for (const error of fields.errors) if (!summary.errors.includes(error)) summary.errors.push(error);
          for (const decision of fields.decisions)
            if (!summary.decisions.includes(decision)) summary.decisions.push(decision);
          for (const task of fields.tasks)
            if (!summary.tasks.some((existing) => existing.text === task.text)) summary.tasks.push(task);
          return summary;
        });
        let merged = summaries[0]!;
        const doneSoFar = new Set<string>();
        for (const summary of summaries)
          for (const task of summary.tasks) if (task.done) doneSoFar.add(task.text);
        for (const summary of summaries.slice(1)) {
          const before = merged;
          merged = mergeAnchoredSummary(merged, summary);
          expect(merged.errors.slice(0, before.errors.length)).toEqual(before.errors);
          expect(merged.decisions.slice(0, before.decisions.length)).toEqual(before.decisions);
          for (const error of summary.errors) expect(merged.errors).toContain(error);
          expect(new Set(merged.errors).size).toBe(merged.errors.length);
        }
        for (const task of merged.tasks) expect(task.done).toBe(doneSoFar.has(task.text));
      }),
      { numRuns: propertyRuns(200) },
    );
  });
});

describe('authoredLinesOf', () => {
  it('keeps what an edit added, not what it kept, and tells project edits from scripts', () => {
    expect(
      authoredLinesOf({
        file_path: 'src/types.ts',
        old_string: 'export interface Settings {\n  theme: string;\n}',
        new_string: 'export interface Settings {\n  theme: string;\n  skipPermissions?: boolean;\n}',
      }),
    ).toEqual({ kind: 'edit', lines: ['skipPermissions?: boolean;'], path: 'src/types.ts' });
    expect(
      authoredLinesOf({
        file_path: '/tmp/check.js',
        content: 'const a = require("x");\nconsole.log(a.run());',
      }),
    ).toMatchObject({ kind: 'script' });
    // SWE-agent's edit terminator is the command's syntax.
    expect(authoredLinesOf({ command: 'edit 1:1\nprint "Content-type: text/html";\nend_of_edit' })).toEqual({
      kind: 'script',
      lines: ['edit 1:1', 'print "Content-type: text/html";'],
    });
    expect(
      authoredLinesOf({ command: "cat <<'EOF' > repro.py\nimport numpy as np\nnp.random.seed(42)\nEOF" }),
    ).toEqual({
      kind: 'script',
      lines: ["cat <<'EOF' > repro.py", 'import numpy as np', 'np.random.seed(42)'],
    });
    expect(authoredLinesOf('not an object')).toEqual({ kind: 'script', lines: ['not an object'] });
  });

  it("leaves out a call's label beside what it runs (a Bash description, a Task's), not a description it writes", () => {
    expect(
      authoredLinesOf({
        command: 'uv run streamlit run app.py',
        description: 'Run the Streamlit application',
      }),
    ).toEqual({ kind: 'script', lines: ['uv run streamlit run app.py'] });
    expect(
      authoredLinesOf({
        description: 'Review the notes formatter',
        prompt: 'Check src/formatters/notes.ts for fields the API may return.',
        subagent_type: 'code-reviewer',
      }).lines,
    ).toEqual(['Check src/formatters/notes.ts for fields the API may return.', 'code-reviewer']);
    // Without a command or a prompt beside it, a description is what the call writes (an issue's, a ticket's).
    expect(
      authoredLinesOf({ title: 'Fix notes', description: 'Notes lose their content field.' }).lines,
    ).toEqual(['Fix notes', 'Notes lose their content field.']);
  });

  it("takes a diff's added lines without their markers as written, the lines it removed as replaced, not its context or its header", () => {
    // Cursor's edit_file as SpecStory exports it: two columns, no path.
    const diff = [
      '--- a/src/pr.ts',
      '+++ b/src/pr.ts',
      '  export interface PrOptions {',
      '    session: string;',
      '+   debug?: boolean;',
      '  }',
      '-     console.log(`[DEBUG] Using base branch: ${baseBranch}`);',
      '+     if (options.debug) console.error(`[DEBUG] Using base branch: ${baseBranch}`);',
    ].join('\n');
    // An edit of a file, though the call names none: what it removed is its old text.
    expect(authoredLinesOf({ diff })).toEqual({
      kind: 'edit',
      lines: [
        'debug?: boolean;',
        'if (options.debug) console.error(`[DEBUG] Using base branch: ${baseBranch}`);',
      ],
      replaced: ['console.log(`[DEBUG] Using base branch: ${baseBranch}`);'],
    });
    // Added lines alone (Cursor writes a new file's diff after one blank removed line): the diff made the file.
    expect(
      authoredLinesOf({
        diff: "- \n+ import { Command } from 'commander';\n+ export function createStartCommand() {",
      }),
    ).toEqual({
      kind: 'edit',
      lines: ["import { Command } from 'commander';", 'export function createStartCommand() {'],
      created: true,
    });
  });

  it("leaves out an edit's lone words (the editor's sub-command, a bare name), not another call's", () => {
    expect(
      authoredLinesOf({
        command: 'str_replace',
        path: '/workspace/app/src/picker.ts',
        old_str: 'onDismiss: () => setIsOpen(false),',
        new_str: 'mockValueManager\nonDismiss: () => {\n  dispatch({ type: "reset" });',
      }),
    ).toEqual({
      kind: 'edit',
      lines: ['onDismiss: () => {', 'dispatch({ type: "reset" });'],
      path: '/workspace/app/src/picker.ts',
      replaced: ['onDismiss: () => setIsOpen(false),'],
    });
    expect(
      authoredLinesOf({ subagent_type: 'general-purpose', prompt: 'Check package configuration' }),
    ).toEqual({ kind: 'script', lines: ['general-purpose', 'Check package configuration'] });
    // A key that only opens an object is bare syntax: it ranks below the line that says what is built.
    expect(itemSalience('module: {')).toBeLessThan(itemSalience('devServer: { port: 3000 },'));
    // So is one name of a list split over lines (`fetch,` of a destructuring or an import).
    expect(itemSalience('fetch,')).toBeLessThan(itemSalience('const client = createClient({'));
    expect(itemSalience('fetch,')).toBeLessThan(itemSalience('fetch') / 2);
    // A hunk header (SpecStory writes `@@ -undefined,undefined +undefined,undefined @@`, whose 'undefined' reads
    // as an error) and a row of Cursor's directory listing say where, not what.
    expect(itemSalience('@@ -undefined,undefined +undefined,undefined @@')).toBeLessThan(
      itemSalience('## -undefined,undefined +undefined,undefined ##') * 0.75,
    );
    expect(itemSalience('| 📄 `test-eslint-error.tsx` |')).toBeLessThan(
      itemSalience('| - `test-eslint-error.tsx` |') * 0.75,
    );
    // A docstring's section header and its underline (numpy style, printed by every read of such a file) say
    // nothing of their own; the parameter under them does.
    for (const header of ['Parameters', 'Returns', 'See Also', '----------'])
      expect(itemSalience(header)).toBeLessThan(minSalienceForTest);
    expect(itemSalience('Parameters : list of str')).toBeGreaterThan(minSalienceForTest);
  });
});

describe('parseAnchoredSummary', () => {
  it('round-trips through JSON metadata and rejects other values', () => {
    const summary = buildAnchoredSummary(session(), { handles: ['h-a'] });
    expect(parseAnchoredSummary(anchoredSummaryToJson(summary))).toEqual(summary);
    expect(parseAnchoredSummary(undefined)).toBeUndefined();
    expect(parseAnchoredSummary({ version: 2 })).toBeUndefined();
    // A record from before a section existed reads it as empty.
    const {
      scripts: _scripts,
      createdCode: _created,
      replacedCode: _replaced,
      soughtExcerpts: _sought,
      ...older
    } = anchoredSummaryToJson(summary) as Record<string, unknown>;
    expect(parseAnchoredSummary(older as never)).toMatchObject({
      scripts: [],
      createdCode: [],
      replacedCode: [],
      soughtExcerpts: [],
    });
    expect(
      parseAnchoredSummary({ ...(anchoredSummaryToJson(summary) as object), errors: [1] }),
    ).toBeUndefined();
  });
});

describe('anchoredSummaryToJson', () => {
  it('gives what a JSON round trip gives, also for what JSON treats specially', () => {
    const summary = buildAnchoredSummary(session(), { handles: ['h-a'] });
    const roundTrip = (value: unknown) => JSON.parse(JSON.stringify(value));
    const records = [
      summary,
      { ...summary, intent: undefined, files: [{ path: 'a', status: 'read', detail: undefined }] },
      { ...summary, messageCount: -0, extra: [undefined, () => 1, Number.NaN, { 2: 'b', 1: 'a' }] },
      { ...summary, extra: { when: new Date(0), boxed: Object('text') } },
      { ...summary, extra: JSON.parse('{"__proto__": {"polluted": true}}') },
    ];
    for (const record of records) {
      const json = anchoredSummaryToJson(record as AnchoredSummary);
      expect(JSON.stringify(json)).toBe(JSON.stringify(roundTrip(record)));
      expect(json).toStrictEqual(roundTrip(record));
    }
    expect(
      Object.is(
        (anchoredSummaryToJson({ ...summary, messageCount: -0 }) as { messageCount: number }).messageCount,
        0,
      ),
    ).toBe(true);
  });

  it('reports a cycle as JSON does', () => {
    const cyclic: Record<string, unknown> = { ...emptyAnchoredSummary() };
    cyclic.self = cyclic;
    expect(() => anchoredSummaryToJson(cyclic as unknown as AnchoredSummary)).toThrow(TypeError);
  });
});
