import { describe, expect, it } from 'vitest';
import { errorLinesOf, exitCodeOf, isPlaceholderOutput, normaliseError } from './tool-output.js';

describe('exitCodeOf', () => {
  it('reads the forms agents print', () => {
    expect(exitCodeOf('<returncode>1</returncode>\n<output>\nboom\n</output>')).toBe(1);
    expect(exitCodeOf('ok\n[The command completed with exit code 0.]\n[Current working directory: /w]')).toBe(
      0,
    );
    expect(exitCodeOf('x\n[Command finished with exit code 2]')).toBe(2);
    expect(exitCodeOf('Exit code 1\nnode:internal/modules/run_main:123')).toBe(1);
    expect(exitCodeOf('Process exited with code 127')).toBe(127);
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

  it('strips tool_use_error tags and folds repeats', () => {
    expect(errorLinesOf('<tool_use_error>File does not exist.</tool_use_error>')).toEqual([
      'File does not exist.',
    ]);
    expect(errorLinesOf('Error: bad 1\nError: bad 2\nfatal: not a git repository')).toEqual([
      'Error: bad 1',
      'fatal: not a git repository',
    ]);
  });

  it('in strong mode ignores prose that merely mentions errors', () => {
    expect(errorLinesOf('we handle the error case here\nall fine', { strongOnly: true })).toEqual([]);
    expect(errorLinesOf("src/a.ts(3,4): error TS2304: Cannot find name 'x'.", { strongOnly: true })).toEqual([
      "src/a.ts(3,4): error TS2304: Cannot find name 'x'.",
    ]);
  });
});

it('normaliseError folds numbers, addresses, case and spacing', () => {
  expect(normaliseError('Timeout after 30  s at 0x7ffe12')).toBe(
    normaliseError('timeout after 45 s at 0xdeadbeef'),
  );
  expect(isPlaceholderOutput('[no result recorded]')).toBe(true);
  expect(isPlaceholderOutput('[no output in the SpecStory export]')).toBe(true);
});
