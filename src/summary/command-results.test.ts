import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { propertyRuns } from '../../test/support/property-runs.js';
import { assignIds } from '../messages/ids.js';
import { createConversationBuilder } from '../testing/message-builders.js';
import { commandResultLines } from './command-results.js';

/** A user request, then one shell command per run (`[command, output]`), each in its own step. */
function shellSession(request: string, runs: ReadonlyArray<readonly [string, string]>) {
  const builder = createConversationBuilder().user(request);
  for (const [command, output] of runs) builder.tools([{ name: 'Bash', input: { command }, output }]);
  return assignIds(builder.build());
}

describe('commandResultLines', () => {
  it("keeps what was committed: a first commit's line, and aider's note after an edit it committed", () => {
    const messages = [
      ...shellSession('Start the repository.', [
        ['git commit -m "Start"', '[main (root-commit) deadbee] Start\n 3 files changed'],
      ]),
      ...assignIds([
        {
          role: 'user',
          content:
            'Applied edit to metrics_check.sh\nCommit c6ad63d fix: make the script verbose\nYou can use /undo to undo.',
          metadata: { harness: true },
        },
      ]),
    ];
    expect(commandResultLines(messages)).toEqual([
      '[main (root-commit) deadbee] Start',
      '3 files changed',
      'Commit c6ad63d fix: make the script verbose',
    ]);
  });

  it('keeps what scripts and tests printed as results, not what reads and searches returned', () => {
    const messages = assignIds(
      createConversationBuilder()
        .user('Why does count() return 2?')
        .tools([
          {
            name: 'bash',
            input: { command: 'cat django/db/models/query.py' },
            output: 'def count(self):\n    return 1',
          },
        ])
        .tools([
          {
            name: 'bash',
            input: { command: 'python reproduce.py' },
            output:
              '<returncode>0</returncode>\n<output>\nSQL: SELECT COUNT(*)\nExpected count: 1\nActual count: 2\nmax_y=0.2595 after 26 steps\nextra: 7\nFinished the run.\n</output>',
          },
        ])
        .tools([{ name: 'Grep', input: { pattern: 'count', path: 'src' }, output: 'src/a.py:1: count = 3' }])
        .tools([
          {
            name: 'bash',
            input: { command: './runtests.py aggregation' },
            output: 'Ran 116 tests in 0.358s\n\nOK',
          },
        ])
        .build(),
    );
    expect(commandResultLines(messages)).toEqual([
      'Expected count: 1',
      'Actual count: 2',
      'max_y=0.2595 after 26 steps',
      'extra: 7',
      'Finished the run.',
      'Ran 116 tests in 0.358s',
    ]);
    // A cap on the value lines of each output; the last line is kept besides.
    expect(commandResultLines(messages, { maxKeyValueLines: 2 })).toEqual([
      'Expected count: 1',
      'Actual count: 2',
      'Finished the run.',
      'Ran 116 tests in 0.358s',
    ]);
    expect(commandResultLines(messages, { maxKeyValueLines: 0, maxLineChars: 6 })).toEqual([
      'Finish…',
      'Ran 11…',
    ]);
  });

  it('keeps the lines that count what a command did (a commit, a test run) besides its last line', () => {
    const messages = shellSession('Commit the fix.', [
      [
        'git add -A && git commit -m "Fix notes content"',
        '[fix/notes 1a2b3c4] Fix notes content\n 13 files changed, 27757 insertions(+)\n create mode 100644 logs/chat.json',
      ],
      [
        'npx vitest run',
        ' ✓ src/notes.test.ts (14 tests) 12ms\n\n Test Files  1 passed (1)\n      Tests  14 passed (14)\n All tests finished',
      ],
    ]);
    expect(commandResultLines(messages)).toEqual([
      '[fix/notes 1a2b3c4] Fix notes content',
      '13 files changed, 27757 insertions(+)',
      'create mode 100644 logs/chat.json',
      'Test Files  1 passed (1)',
      'Tests  14 passed (14)',
      'All tests finished',
    ]);
  });

  it("leaves out what never says how a command ended: npm's banner, one passing test, timings, wrappers", () => {
    const messages = shellSession('Run the tests.', [
      [
        'npm test',
        [
          '> attio-mcp@0.2.0 test',
          '> vitest run',
          ' ✓ test/notes.test.ts (14 tests) 4ms',
          ' Test Files  1 passed (1)',
          '      Tests  14 passed (14)',
          '   Start at  16:56:13',
          '   Duration  973ms (transform 149ms, setup 71ms, collect 15ms, tests 4ms)',
        ].join('\n'),
      ],
      ['npm run lint:check', '> attio-mcp@0.2.0 lint:check\n> eslint src'],
      // mini-swe-agent's wrapper around an empty output.
      ['rm scratch.py', '<returncode>0</returncode>\n<output>\n</output>'],
      // SWE-agent's end-of-command marker and the prompt after every output.
      [
        'perl printenv.pl',
        'Hello World from Perl!///PROCESS-DONE:0:PROCESS-DONE///\n(Open file: /ctf/printenv.pl)\n(Current directory: /ctf)\nbash-$',
      ],
      [
        'rm reproduce.py',
        'Your command ran successfully and did not produce any output.\n(Open file: n/a)\nbash-$',
      ],
      [
        'edit 1:1\nprint 1;\nend_of_edit',
        '[File: /ctf/printenv.pl (5 lines total)]\n(Open file: n/a)\nbash-$',
      ],
      // SWE-agent's editor window after an edit: numbered file lines, which read like `key: value` lines.
      [
        'edit 15:15\n    distance = abs(elem - elem2)\nend_of_edit',
        [
          '[File: /repo/main.py (23 lines total)]',
          '4:def has_close_elements(numbers: List[float], threshold: float) -> bool:',
          '10:    True',
          '15:                distance = abs(elem - elem2)',
          '17:                    return True',
          'File updated. Please review the changes and make sure they are correct.',
          '(Open file: /repo/main.py)',
          'bash-$',
        ].join('\n'),
      ],
      // An edit its linter rejected: the window shows lines the file never had; the errors are the ledger's.
      [
        'edit 15:15\ndistance = abs(elem - elem2)\nend_of_edit',
        [
          'Your proposed edit has introduced new syntax error(s). Please understand the fixes and retry your edit commmand.',
          '',
          'ERRORS:',
          '- E999 IndentationError: unexpected indent',
          '',
          'This is how your edit would have looked if applied',
          '-------------------------------------------------',
          '[File: /repo/main.py (23 lines total)]',
          '15:distance = abs(elem - elem2)',
          'DO NOT re-run the same failed edit command. Running it again will lead to the same error.',
        ].join('\n'),
      ],
    ]);
    expect(commandResultLines(messages)).toEqual([
      'Test Files  1 passed (1)',
      'Tests  14 passed (14)',
      'Hello World from Perl!',
    ]);
  });

  it("leaves out a test runner's set-up, an installer's package lines, a shell's prompt alone and escaped colour codes", () => {
    const messages = shellSession('Run the tests.', [
      [
        'python -m pytest tests/test_qdp.py',
        [
          'platform linux -- Python 3.9.20, pytest-7.4.0, pluggy-1.3.0',
          'rootdir: /testbed',
          'configfile: setup.cfg',
          'plugins: rerunfailures-15.0, xdist-3.6.1, cov-6.0.0',
          'collected 8 items',
          '======================== 8 passed in 0.21s ========================',
        ].join('\n'),
      ],
      [
        'bin/test sympy/physics/units/tests/test_unitsystem.py',
        [
          'executable:         /opt/miniconda3/envs/testbed/bin/python  (3.9.20-final-0) [CPython]',
          'architecture:       64-bit',
          'random seed:        99822780',
          'hash randomization: on (PYTHONHASHSEED=2781628860)',
          '================== tests finished: 15 passed, in 0.52 seconds ==================',
        ].join('\n'),
      ],
      [
        'python -m pytest astropy/io/ascii/tests/test_qdp.py',
        [
          '\u001b[1m============================= test session starts ==============================\u001b[0m',
          'platform linux -- Python 3.9.20, pytest-7.4.0, pluggy-1.3.0',
          'Date: 2025-11-18T23:58:25',
          'Platform: Linux-6.8.0-1040-aws-x86_64-with-glibc2.35',
          'float info: dig: 15, mant_dig: 15',
          'Numpy: 1.25.2',
          'CI: undefined',
          'collected 9 items',
          '======================== 9 passed in 0.07s ========================',
        ].join('\n'),
      ],
      ['python info.py', 'architecture: arm64\nPython version: 3.12.5'],
      ['uv sync', 'Resolved 209 packages in 7.05s\n - aioredis==1.3.1\n - amqp==5.3.1\n + hf-xet==1.1.9'],
      ['npm run seed', 'Created 20 users\nlinkslate:minsky edobry$'],
      ['npx convex run seed', 'Created 10 events\npaulmaloney@MacBook-Pro-2024 yposfgold %'],
      ['./deploy.sh', 'Deployed to staging\ndev@build-01:~/app$'],
      [
        'npx tsc',
        'diagnosticText: `\\x1B[96mtest.ts\\x1B[0m:\\x1B[93m37\\x1B[0m - error TS2345`\nFound 1 error.',
      ],
      [
        'node run.js',
        "Error: Cannot find module './x'\n    at node:internal/main/run_main_module:36:49 {\n  code: 'MODULE_NOT_FOUND'\n}",
      ],
    ]);
    expect(commandResultLines(messages)).toEqual([
      'collected 8 items',
      '======================== 8 passed in 0.21s ========================',
      '================== tests finished: 15 passed, in 0.52 seconds ==================',
      // With pytest's banner, all it prints before collecting is its header, whatever the plugins add.
      'collected 9 items',
      '======================== 9 passed in 0.07s ========================',
      // A script's own report of the machine is a result: only the runner's aligned header is not.
      'architecture: arm64',
      'Python version: 3.12.5',
      'Resolved 209 packages in 7.05s',
      'Created 20 users',
      'Created 10 events',
      'Deployed to staging',
      'Found 1 error.',
      "code: 'MODULE_NOT_FOUND'",
    ]);
  });

  it("leaves out the complaint of a shell that lacks Cursor's state hook, keeping what the command printed", () => {
    const messages = shellSession('Build it.', [
      ['npm run build', 'Compiled successfully in 4.2s\nzsh:1: command not found: dump_zsh_state'],
      ['node scripts/bundle.js', 'wrote dist/index.js\n--: line 1: dump_bash_state: command not found'],
    ]);
    expect(commandResultLines(messages)).toEqual(['Compiled successfully in 4.2s', 'wrote dist/index.js']);
  });

  it("takes a package manager's failure message for its last line, not the log or docs it points to", () => {
    const messages = shellSession('Install the types.', [
      [
        'npm i --save-dev @types/node',
        [
          'npm error code EAI_AGAIN',
          'npm error request to https://registry.npmjs.org/@types%2fnode failed, reason: getaddrinfo EAI_AGAIN',
          'npm error A complete log of this run can be found in: /root/.npm/_logs/debug-0.log',
        ].join('\n'),
      ],
      [
        'yarn add -D vitest',
        [
          'error Running this command will add the dependency to the workspace root.',
          'error Command failed with exit code 1.',
          'info Visit https://yarnpkg.com/en/docs/cli/add for documentation about this command.',
        ].join('\n'),
      ],
    ]);
    expect(commandResultLines(messages)).toEqual([
      'npm error request to https://registry.npmjs.org/@types%2fnode failed, reason: getaddrinfo EAI_AGAIN',
      'error Running this command will add the dependency to the workspace root.',
    ]);
  });

  it("leaves out Node's own stack frames, keeping the error and the project's frames", () => {
    const crash = [
      'node:internal/modules/cjs/loader:1080',
      "Error: Cannot find module '../test-utils'",
      '    at Module._resolveFilename (node:internal/modules/cjs/loader:1077:15)',
      '    at Object.<anonymous> (/workspace/app/src/picker.test.tsx:6:1)',
      '    at Module._compile (node:internal/modules/cjs/loader:1198:14)',
      '    at singleRun (/workspace/app/node_modules/mocha/lib/cli/run-helpers.js:125:3)',
      '    at node:internal/main/run_main_module:23:47',
    ].join('\n');
    const lines = commandResultLines(shellSession('Run the picker test.', [['node picker.test.js', crash]]));
    expect(lines).toEqual(['at Object.<anonymous> (/workspace/app/src/picker.test.tsx:6:1)']);
  });

  it('reads past the status lines OpenHands puts around every output, keeping its notes on commands still running', () => {
    const trailer = (code: number) =>
      `[Current working directory: /workspace/app]\n[Python interpreter: /openhands/bin/python]\n[Command finished with exit code ${code}]`;
    const messages = assignIds(
      createConversationBuilder()
        .user('Serve the reproduction page.')
        .tools([
          {
            name: 'execute_bash',
            input: { command: 'node serve.js' },
            output: `EXECUTION RESULT of [execute_bash]:\nnode serve.js\nServer running at http://localhost:3000/\n^C\n[The command completed with exit code 130. CTRL+C was sent.]\n${trailer(130)}`,
          },
        ])
        .tools([
          {
            name: 'execute_bash',
            input: { command: 'rm scratch.js' },
            output: `EXECUTION RESULT of [execute_bash]:\n${trailer(0)}`,
          },
        ])
        .tools([
          {
            name: 'execute_bash',
            input: { command: 'yarn test' },
            output:
              "EXECUTION RESULT of [execute_bash]:\n⠙\n[The command timed out after 300 seconds. You may wait longer to see additional output by sending empty command '', or send keys to interrupt/kill the command.]",
          },
        ])
        .build(),
    );
    expect(commandResultLines(messages, { maxLineChars: 60 })).toEqual([
      'Server running at http://localhost:3000/',
      // Its first sentence says what happened; the advice to the agent after it goes.
      '[The command timed out after 300 seconds. …]',
    ]);
  });

  it('keeps where git stands (branch, status) though those commands only read', () => {
    const messages = shellSession('Where are we?', [
      ['git branch --show-current', 'feature/issue-377-phase2-performance'],
      ['git log --oneline -3', 'a1b2c3d Fix notes content'],
      ['cat package.json', '{ "name": "attio" }'],
    ]);
    expect(commandResultLines(messages)).toEqual(['feature/issue-377-phase2-performance']);
  });

  it('chooses from an output what splitting it into lines would (property)', () => {
    // The lines of each output as a plain split would give them, then the value lines and the last line.
    const reference = (outputs: readonly string[], maxKeyValueLines: number) => {
      const results: string[] = [];
      for (const output of outputs) {
        const lines = output
          .split('\n')
          .map((line) => line.trim())
          .filter(
            (line) =>
              line.length >= 6 &&
              /[A-Za-z]/.test(line) &&
              !/^(?:<\/?output>|\[.*archived: h-[0-9a-f]+.*\])$/.test(line),
          );
        const chosen = lines
          .filter(
            (line) =>
              (/\b[\w .'-]{2,40}[:=]\s*\S/.test(line) && /\d/.test(line)) ||
              /\b\d[\d,]*\s+(?:files?|passed|failed|tests?)\b/i.test(line),
          )
          .slice(0, maxKeyValueLines);
        for (const line of [...chosen, ...lines.slice(-1)]) if (!results.includes(line)) results.push(line);
      }
      return results;
    };
    const piece = fc.constantFrom(
      ...[
        '\n',
        '\r\n',
        '\n\n',
        ' ',
        '  \t',
        'Actual count: 2',
        'max_y=0.2595',
        'key: value',
        '3 files changed',
      ],
      ...['Tests  14 passed', 'Finished the run.', 'ok', 'x', '<output>', '</output>', 'done 12', '7'],
    );
    fc.assert(
      fc.property(
        fc.array(fc.array(piece, { maxLength: 12 }), { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 0, max: 3 }),
        (pieces, maxKeyValueLines) => {
          const outputs = pieces.map((parts) => parts.join(''));
          const messages = shellSession(
            'Run it.',
            outputs.map((output) => ['python run.py', output]),
          );
          expect(commandResultLines(messages, { maxKeyValueLines })).toEqual(
            reference(outputs, maxKeyValueLines),
          );
        },
      ),
      { numRuns: propertyRuns(500) },
    );
  });

  it('reads outputs without their colour codes, and takes no last line from an output the harness cut', () => {
    const esc = String.fromCharCode(27);
    const messages = shellSession('Lint and build.', [
      ['npm run build', `${esc}[32mBuilt 12 modules${esc}[39m in 2.1s`],
      [
        'npm run lint',
        'Linting the sources\n  Unexpected any. Specify a different ty\n\n... [1855 lines truncated] ...',
      ],
    ]);
    expect(commandResultLines(messages)).toEqual(['Built 12 modules in 2.1s']);
  });

  it('finds nothing in a conversation without commands', () => {
    expect(
      commandResultLines(assignIds(createConversationBuilder().user('hello').assistant('hi').build())),
    ).toEqual([]);
  });
});
