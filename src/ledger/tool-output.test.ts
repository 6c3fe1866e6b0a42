import { describe, expect, it } from 'vitest';
import {
  errorLinesOf,
  exitCodeOf,
  firstMeaningfulLine,
  isPlaceholderOutput,
  normaliseError,
  rejectedEditErrors,
  unfinishedStatusOf,
} from './tool-output.js';

describe('unfinishedStatusOf', () => {
  const advice =
    "You may wait longer to see additional output by sending empty command '', send other commands to interact with the current process, or send keys to interrupt/kill the command.";
  it("reads a harness's note that it stopped waiting, as the output's first line or its last", () => {
    expect(
      unfinishedStatusOf(
        `> mocha test/picker.test.js\n⠙\n[The command timed out after 300 seconds. ${advice}]`,
      ),
    ).toBe('timed-out');
    expect(
      unfinishedStatusOf(
        'The last command <command>python -m pytest tests/\n</command> timed out and has been killed.\nThe output of the command was:\n <output>\ncollecting ...\n</output>',
      ),
    ).toBe('timed-out');
    expect(unfinishedStatusOf('Command timed out after 2m 0.0s\nwebpack compiled')).toBe('timed-out');
    expect(
      unfinishedStatusOf(
        `Server running at http://localhost:3000/\n[The command has no new output after 30 seconds. ${advice}]`,
      ),
    ).toBe('running');
  });

  it('takes no note in the middle of an output, nor words about a timeout', () => {
    expect(unfinishedStatusOf('retrying\n[The command timed out after 300 seconds.]\nok')).toBeUndefined();
    expect(unfinishedStatusOf('The request timed out after 30 seconds.')).toBeUndefined();
    expect(
      unfinishedStatusOf('FAIL test/api.test.ts > retries\nError: Command timed out after 5000 ms'),
    ).toBeUndefined();
    expect(unfinishedStatusOf('')).toBeUndefined();
  });
});

describe('exitCodeOf', () => {
  it('reads the forms agents print', () => {
    expect(exitCodeOf('<returncode>1</returncode>\n<output>\nboom\n</output>')).toBe(1);
    expect(exitCodeOf('ok\n[The command completed with exit code 0.]\n[Current working directory: /w]')).toBe(
      0,
    );
    expect(exitCodeOf('x\n[Command finished with exit code 2]')).toBe(2);
    expect(exitCodeOf('Exit code 1\nnode:internal/modules/run_main:123')).toBe(1);
    expect(exitCodeOf('Process exited with code 127')).toBe(127);
    expect(
      exitCodeOf('Hello World from Perl!///PROCESS-DONE:0:PROCESS-DONE///\n(Open file: n/a)\nbash-$'),
    ).toBe(0);
    expect(exitCodeOf('all good')).toBeUndefined();
  });

  it('takes the last status line and looks only at the ends of long outputs', () => {
    expect(exitCodeOf('[Command finished with exit code 1]\n…\n[Command finished with exit code 0]')).toBe(0);
    expect(
      exitCodeOf(`${'x'.repeat(5000)}\nexit code 9 mentioned mid-output\n${'y'.repeat(5000)}`),
    ).toBeUndefined();
  });
});

describe('errorLinesOf', () => {
  it('keeps distinct error lines verbatim and puts a traceback’s exception first', () => {
    const text = [
      'Traceback (most recent call last):',
      '  File "/testbed/django/db/backends/utils.py", line 89, in _execute',
      '    return self.cursor.execute(sql, params)',
      'sqlite3.OperationalError: no such column: annotations_book.rating',
    ].join('\n');
    expect(errorLinesOf(text)).toEqual(['sqlite3.OperationalError: no such column: annotations_book.rating']);
  });

  it('takes the line where a traceback’s frames end, also for exceptions not named …Error', () => {
    const text = [
      '<returncode>1</returncode>',
      '<output>',
      'Traceback (most recent call last):',
      '  File "<stdin>", line 2, in <module>',
      '  File "/testbed/django/conf/__init__.py", line 61, in _setup',
      '    % (desc, ENVIRONMENT_VARIABLE))',
      '',
      'django.core.exceptions.ImproperlyConfigured: Requested setting DEFAULT_CHARSET, but settings are not configured.',
      'Calling cleanup()...',
      '</output>',
    ].join('\n');
    expect(errorLinesOf(text)[0]).toBe(
      'django.core.exceptions.ImproperlyConfigured: Requested setting DEFAULT_CHARSET, but settings are not configured.',
    );
    // A bare name closes a traceback too; a sentence after the frames does not.
    expect(
      errorLinesOf('Traceback (most recent call last):\n  File "a.py", line 1\r\nKeyboardInterrupt\r\n'),
    ).toEqual(['KeyboardInterrupt']);
    expect(
      errorLinesOf(
        'Traceback (most recent call last):\n  File "a.py", line 1, in <module>\nSomething went wrong here',
      ),
    ).toEqual([]);
  });

  it('skips the source line a caret points into and the stack frames: they locate the error', () => {
    const text = [
      '/app/node_modules/playwright/install.js:46',
      '    throw new Error(`Failed to download ${browserName}, caused by\\n${e.stack}`);',
      '    ^',
      '',
      'Error: Failed to download chromium, caused by',
      '    at new NodeError (node:internal/errors:405:5)',
      'TypeError [ERR_INVALID_PROTOCOL]: Protocol "https:" not supported. Expected "http:"',
    ].join('\n');
    expect(errorLinesOf(text)).toEqual([
      'Error: Failed to download chromium, caused by',
      'TypeError [ERR_INVALID_PROTOCOL]: Protocol "https:" not supported. Expected "http:"',
    ]);
  });

  it("skips the source line under a Python frame: it is the code that raised, not the exception's message", () => {
    const text = [
      'Traceback (most recent call last):',
      '  File "/testbed/reproduce.py", line 34, in <module>',
      '    pt = SkyCoord(frame=wcs_to_celestial_frame(fits_wcs))',
      '  File "/testbed/astropy/wcs/utils.py", line 219, in wcs_to_celestial_frame',
      '    raise ValueError("Could not determine celestial frame corresponding to "',
      'ValueError: Could not determine celestial frame corresponding to the specified WCS object',
    ].join('\n');
    expect(errorLinesOf(text)).toEqual([
      'ValueError: Could not determine celestial frame corresponding to the specified WCS object',
    ]);
    // The exception right after a frame (no source to show) is the message.
    expect(errorLinesOf('  File "<stdin>", line 9\nSyntaxError: invalid syntax')).toEqual([
      'SyntaxError: invalid syntax',
    ]);
  });

  it("takes a package manager's message lines, not the fields npm lists around them, yarn's exit line or their pointers", () => {
    const text = [
      'npm error code EAI_AGAIN',
      'npm error syscall getaddrinfo',
      'npm error errno EAI_AGAIN',
      'npm error request to https://registry.npmjs.org/@types%2fnode failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org',
      'npm error A complete log of this run can be found in: /root/.npm/_logs/2025-01-01T00_00_00_000Z-debug-0.log',
    ].join('\n');
    expect(errorLinesOf(text)).toEqual([
      'npm error request to https://registry.npmjs.org/@types%2fnode failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org',
    ]);
    const lifecycle = [
      'npm ERR! code ELIFECYCLE',
      'npm ERR! errno 2',
      'npm ERR! app@1.0.0 build: `tsc`',
    ].join('\n');
    expect(errorLinesOf(lifecycle)).toEqual(['npm ERR! app@1.0.0 build: `tsc`']);
    const yarn = [
      'error Running this command will add the dependency to the workspace root.',
      'error Command failed with exit code 1.',
      'info Visit https://yarnpkg.com/en/docs/cli/add for documentation about this command.',
    ].join('\n');
    expect(errorLinesOf(yarn)).toEqual([
      'error Running this command will add the dependency to the workspace root.',
    ]);
  });

  it('skips a line that quotes the output with its colour codes written out: it copies lines read where they stand', () => {
    const text = [
      "test_parse.ts:44:44 - error TS2339: Property 'url' does not exist on type 'ThemeFix'.",
      '    at reportTSError (/repo/node_modules/ts-node/src/index.ts:754:19) {',
      "  diagnosticText: `\\x1B[96mtest_parse.ts\\x1B[0m:\\x1B[93m44\\x1B[0m - \\x1B[91merror\\x1B[0m TS2339: Property 'url' does not exist.\\n`,",
      '}',
    ].join('\n');
    expect(errorLinesOf(text)).toEqual([
      "test_parse.ts:44:44 - error TS2339: Property 'url' does not exist on type 'ThemeFix'.",
    ]);
  });

  it("skips an inspected object's error property whose value is a reference or a code frame", () => {
    const text = [
      "error: Session 'test-session' not found.",
      '    pid: undefined,',
      '    error: [Circular],',
      "    error:  6 | import { execSync } from 'child_process';",
      '    error: null,',
    ].join('\n');
    expect(errorLinesOf(text)).toEqual(["error: Session 'test-session' not found."]);
  });

  it('strips tool_use_error tags and folds repeats', () => {
    expect(errorLinesOf('<tool_use_error>File does not exist.</tool_use_error>')).toEqual([
      'File does not exist.',
    ]);
    expect(errorLinesOf('Error: bad 1\nError: bad 2\nfatal: not a git repository')).toEqual([
      'Error: bad 1',
      'fatal: not a git repository',
    ]);
  });

  it('reads an error that starts right after the tag, and its message on the next line', () => {
    const refused =
      '<tool_use_error>InputValidationError: Task failed due to the following issue:\nThe required parameter `prompt` is missing</tool_use_error>';
    expect(errorLinesOf(refused)).toEqual([
      'InputValidationError: Task failed due to the following issue: ↵ The required parameter `prompt` is missing',
    ]);
    expect(errorLinesOf(refused, { strongOnly: true })).toHaveLength(1);
  });

  it('in strong mode ignores prose that merely mentions errors', () => {
    expect(errorLinesOf('we handle the error case here\nall fine', { strongOnly: true })).toEqual([]);
    expect(errorLinesOf("src/a.ts(3,4): error TS2304: Cannot find name 'x'.", { strongOnly: true })).toEqual([
      "src/a.ts(3,4): error TS2304: Cannot find name 'x'.",
    ]);
  });

  it("takes a bundler's unresolved module, also where a user pasted it after their own words", () => {
    const pasted = [
      "now I have: Module not found: Error: Can't resolve 'styled-components' in '/app/src/components'",
      "Module not found: Can't resolve './styles.css'",
      'I think the module was not found because of the path.',
    ].join('\n');
    expect(errorLinesOf(pasted, { strongOnly: true })).toEqual([
      "now I have: Module not found: Error: Can't resolve 'styled-components' in '/app/src/components'",
      "Module not found: Can't resolve './styles.css'",
    ]);
  });

  it("in strong mode takes Python's OSError form wherever it stands on the line, not a mention of errno", () => {
    const aider =
      "D:\\web\\week.tsx: unable to read: [Errno 2] No such file or directory: 'D:\\\\web\\\\week.tsx'";
    expect(errorLinesOf(aider, { strongOnly: true })).toEqual([aider]);
    expect(
      errorLinesOf("Error creating file /add: [Errno 30] Read-only file system: '/add'", {
        strongOnly: true,
      }),
    ).toHaveLength(1);
    expect(errorLinesOf('check [Errno 2] handling and errno values', { strongOnly: true })).toEqual([]);
  });
});

describe('errorLinesOf: inner exceptions', () => {
  it('in strong mode takes the cause a .NET or Java trace nests under the outer exception, with its HRESULT', () => {
    const dotnet = [
      'System.TimeoutException: A timeout occurred after 30000ms selecting a server.',
      ' ---> System.Net.Sockets.SocketException (0x00002AF9): No such host is known.',
      '   at System.Net.Dns.GetHostAddresses(String hostNameOrAddress)',
    ].join('\n');
    expect(errorLinesOf(dotnet, { strongOnly: true })).toEqual([
      'System.TimeoutException: A timeout occurred after 30000ms selecting a server.',
      '---> System.Net.Sockets.SocketException (0x00002AF9): No such host is known.',
    ]);
    const java =
      'Exception in thread "main" app.StartupFailure\nCaused by: java.net.UnknownHostException: mongodb';
    expect(errorLinesOf(java, { strongOnly: true })).toEqual([
      'Caused by: java.net.UnknownHostException: mongodb',
    ]);
    expect(errorLinesOf('the arrow ---> points at the cause', { strongOnly: true })).toEqual([]);
  });
});

describe('errorLinesOf: harness noise', () => {
  it("does not take the complaint of a shell that lacks Cursor's state hook for the command's error", () => {
    const output = "zsh:1: command not found: dump_zsh_state\nError: Cannot find module 'next'";
    expect(errorLinesOf(output)).toEqual(["Error: Cannot find module 'next'"]);
    expect(errorLinesOf('--: line 1: dump_bash_state: command not found')).toEqual([]);
  });
});

describe('errorLinesOf: linters', () => {
  it("takes pyflakes' codes and syntax errors, not style codes, in a failed output and in user text", () => {
    const flake8 = [
      "tests/admin_views/test_multidb.py:53:20: F821 undefined name 'os'",
      'if os.path.exists(test_db_path):',
      '^',
      'tests/admin_views/test_multidb.py:60:80: E501 line too long (88 > 79 characters)',
      'src/app.py:3:1: E999 SyntaxError: invalid syntax',
    ].join('\n');
    const expected = [
      "tests/admin_views/test_multidb.py:53:20: F821 undefined name 'os'",
      'src/app.py:3:1: E999 SyntaxError: invalid syntax',
    ];
    expect(errorLinesOf(flake8)).toEqual(expected);
    expect(errorLinesOf(flake8, { strongOnly: true })).toEqual(expected);
    expect(errorLinesOf('Fix F821 in the module, then rerun.', { strongOnly: true })).toEqual([]);
  });

  it("takes ESLint's error problems (its stylish format and Next.js' lint), one per message, not its warnings", () => {
    const lint = [
      './lib/services/PDFService.ts',
      "6:10  Warning: 'NextRequest' is defined but never used.  @typescript-eslint/no-unused-vars",
      '8:18  Error: Unexpected any. Specify a different type.  @typescript-eslint/no-explicit-any',
      '53:85  Error: Unexpected any. Specify a different type.  @typescript-eslint/no-explicit-any',
      'src/app.ts',
      "  12:5  error  'retry' is assigned a value but never used  no-unused-vars",
    ].join('\n');
    expect(errorLinesOf(lint, { strongOnly: true })).toEqual([
      '8:18  Error: Unexpected any. Specify a different type.  @typescript-eslint/no-explicit-any',
      "12:5  error  'retry' is assigned a value but never used  no-unused-vars",
    ]);
    // A numbered file line stays a file line.
    expect(errorLinesOf('12: throw new Error("boom")\n13: }', { strongOnly: true })).toEqual([]);
  });
});

describe('rejectedEditErrors', () => {
  it("reads the errors an editing tool's linter rejected an edit for, in SWE-agent's and OpenHands' forms", () => {
    const sweAgent = [
      'Your proposed edit has introduced new syntax error(s). Please read this error message carefully and then retry editing the file.',
      '',
      'ERRORS:',
      "- E999 SyntaxError: unmatched ')'",
      "- F821 undefined name 'options'",
      '',
      'This is how your edit would have looked if applied',
      '-------------------------------------------------',
      '[File: /repo/pkg/handler.py (374 lines total)]',
      '281:        raise AttributeError(',
      'ValueError: not an error of the edit',
    ].join('\n');
    expect(rejectedEditErrors(sweAgent)).toEqual([
      "E999 SyntaxError: unmatched ')'",
      "F821 undefined name 'options'",
    ]);
    const openHands = [
      '[Your proposed edit has introduced new syntax error(s). Please understand the errors and retry your edit command.]',
      'ERRORS:',
      '/workspace/app.py:12:5: E999 IndentationError: unexpected indent',
      '[This is how your edit would have looked if applied]',
    ].join('\n');
    expect(rejectedEditErrors(openHands)).toEqual([
      '/workspace/app.py:12:5: E999 IndentationError: unexpected indent',
    ]);
    const terse =
      'Your proposed edit has introduced new syntax error(s):\n- E999 IndentationError: unexpected indent\nYour changes have NOT been applied.';
    expect(rejectedEditErrors(terse)).toEqual(['E999 IndentationError: unexpected indent']);
    expect(rejectedEditErrors('Your proposed edit has introduced new syntax error(s).')).toEqual([]);
  });

  it("reads the file editor's no-replacement error, with the file a quote of many lines was not found in", () => {
    const notFound =
      'EXECUTION RESULT of [str_replace_editor]:\nERROR:\nNo replacement was performed, old_str `// Test case 1\nconst fixes1 = `\nexample.com\n`;` did not appear verbatim in /workspace/test-theme.ts.';
    expect(rejectedEditErrors(notFound)).toEqual([
      'No replacement was performed, old_str `// Test case 1 …` did not appear verbatim in /workspace/test-theme.ts.',
    ]);
    const ambiguous =
      'No replacement was performed. Multiple occurrences of old_str `if x:\n    return` in lines [3, 9]. Please ensure it is unique';
    expect(rejectedEditErrors(ambiguous)).toEqual([
      'No replacement was performed. Multiple occurrences of old_str `if x: …` in lines [3, 9]. Please ensure it is unique',
    ]);
  });

  it('takes nothing from an output that only quotes the sentence, or from a successful edit', () => {
    expect(
      rejectedEditErrors('The tool said: Your proposed edit has introduced new syntax error(s).\n- E999 x'),
    ).toBeUndefined();
    expect(
      rejectedEditErrors('[File: /repo/a.py (10 lines total)]\n1:import os\nFile updated.'),
    ).toBeUndefined();
  });
});

describe('errorLinesOf: an error line that leaves its message to the next line', () => {
  it('joins a bare error line or an overlay heading to the message below it', () => {
    const overlay = [
      '1 of 4 errors',
      'Unhandled Runtime Error',
      'Error: [CONVEX Q(photos:list)] [Request ID: de240a69] Server Error',
      "Could not find public function for 'photos:list'.",
      '',
      'Source',
      'src/components/gallery.tsx (54:27) @ api',
    ].join('\n');
    // The heading sits over an error line of its own, which says more: only that one is kept.
    expect(errorLinesOf(overlay, { strongOnly: true })).toEqual([
      "Error: [CONVEX Q(photos:list)] [Request ID: de240a69] Server Error ↵ Could not find public function for 'photos:list'.",
    ]);
    expect(
      errorLinesOf('Webpack\nConsole Error\n\n\n  Missing required environment variables: ["A"]\n', {
        strongOnly: true,
      }),
    ).toEqual(['Console Error ↵ Missing required environment variables: ["A"]']);
    expect(
      errorLinesOf('error: these files would be overwritten by checkout:\n\tsrc/a.ts\nAborting'),
    ).toEqual(['error: these files would be overwritten by checkout: ↵ src/a.ts']);
  });

  it('takes the error lines under a lead-in of their own, not the lead-in: they say what it means', () => {
    const text = [
      'TSError: ⨯ Unable to compile TypeScript:',
      "test_parse.ts:1:32 - error TS2459: Module './parse' declares 'SiteProps' locally, but it is not exported.",
      '',
      "1 import {parseSitesFixesConfig, SiteProps} from './parse';",
      "test_parse.ts:29:16 - error TS2304: Cannot find name 'SitesFixesParserOptions'.",
    ].join('\n');
    expect(errorLinesOf(text)).toEqual([
      "test_parse.ts:1:32 - error TS2459: Module './parse' declares 'SiteProps' locally, but it is not exported.",
      "test_parse.ts:29:16 - error TS2304: Cannot find name 'SitesFixesParserOptions'.",
    ]);
  });

  it('does not join a stack frame, a code frame, a line too far down or a plain line after a complete error', () => {
    expect(errorLinesOf('java.lang.IllegalStateException\n\tat com.acme.Main(Main.java:10)')).toEqual([
      'java.lang.IllegalStateException',
    ]);
    expect(errorLinesOf('SyntaxError\n> 12 | const x = ;\n')).toEqual(['SyntaxError']);
    expect(errorLinesOf('Build Error\n\n\n\nModule not found', { strongOnly: true })).toEqual([]);
    expect(errorLinesOf('Error: port 3000 in use\nretrying on 3001')).toEqual(['Error: port 3000 in use']);
  });

  it('takes no passing test for an error, whatever its name says', () => {
    const run = [
      ' ✓ E2E > Error Handling and Edge Cases > rejects a bad type 6ms',
      'PASS test/errors.test.ts',
      ' × E2E > Error Handling > keeps the response 3ms',
      '   → Expected MCP tool response to be successful',
    ].join('\n');
    expect(errorLinesOf(run)).toEqual(['× E2E > Error Handling > keeps the response 3ms']);
  });
});

describe('firstMeaningfulLine', () => {
  it('skips status lines and joins a lead-in to the line it introduces', () => {
    expect(
      firstMeaningfulLine('Exit code 1\n<tool_use_error>File has not been read yet.</tool_use_error>'),
    ).toBe('File has not been read yet.');
    expect(firstMeaningfulLine('Request rejected for these reasons:\n\n  quota exhausted\n')).toBe(
      'Request rejected for these reasons: ↵ quota exhausted',
    );
    expect(firstMeaningfulLine('Refused:\n    at check (a.js:1:1)')).toBe('Refused:');
  });
});

it('normaliseError folds numbers, addresses, hex ids, case and spacing', () => {
  expect(normaliseError('Timeout after 30  s at 0x7ffe12')).toBe(
    normaliseError('timeout after 45 s at 0xdeadbeef'),
  );
  // A provider's request id differs on every retry of the same failing call.
  expect(
    normaliseError('Input length 173754 exceeds 131072. Request id: 0217682301377579936a5f6e8f40fdc06126b'),
  ).toBe(
    normaliseError('Input length 173821 exceeds 131072. Request id: 021768230181940e53a20c38311f885877349a0'),
  );
  // Words are not ids, nor is a short hex run that is part of the message.
  expect(normaliseError('deadbeefcafebabe failed')).not.toBe(normaliseError('feedfacecafebeef failed'));
  expect(normaliseError('bad key a1b2c3')).not.toBe(normaliseError('bad key f9e8d7'));
  expect(isPlaceholderOutput('[no result recorded]')).toBe(true);
  expect(isPlaceholderOutput('[no output in the SpecStory export]')).toBe(true);
});
