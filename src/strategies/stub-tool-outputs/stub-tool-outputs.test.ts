import { describe, expect, it } from 'vitest';
import {
  checkStrategyInvariants,
  richConversation,
  strategyContext,
} from '../../../test/strategy-invariants.js';
import { archiveHandle } from '../../archive/archive-store.js';
import { InvalidArgumentError } from '../../errors/index.js';
import { toolOutputText } from '../../messages/content.js';
import { assignIds } from '../../messages/ids.js';
import type { IdentifiedMessage, JSONValue, ToolMessage, ToolResultPart } from '../../messages/types.js';
import { createConversationBuilder } from '../../testing/message-builders.js';
import { createTokenAccountant } from '../../tokens/index.js';
import { stubToolOutputs, toolOutputStubPrefix } from './stub-tool-outputs.js';
import { toolOutputGist } from './tool-output-gist.js';

const accountant = createTokenAccountant();

function lines(count: number, prefix: string): string {
  return Array.from({ length: count }, (_, index) => `${prefix} ${index}: some output text here`).join('\n');
}

const failingTests = `${lines(300, 'PASS test')}\nFAIL src/retry.test.ts > retries with backoff\nAssertionError: expected 3 to be 5\n${lines(10, 'more')}\nProcess exited with code 1`;

function session(): IdentifiedMessage[] {
  return assignIds(
    createConversationBuilder()
      .system('You are a coding agent.')
      .user('Make the retry tests pass')
      .tools([{ name: 'read_file', input: { path: 'src/retry.ts' }, output: lines(400, 'code line') }])
      .tools([{ name: 'bash', input: { command: 'npm test' }, output: failingTests }])
      .tools([
        {
          name: 'bash',
          input: { command: 'cat big.log' },
          output: { type: 'error-text', value: lines(250, 'log') },
        },
      ])
      .tools([{ name: 'bash', input: { command: 'ls' }, output: 'README.md\nsrc' }])
      .assistant('Looking at it.')
      .user('continue')
      .tools([{ name: 'read_file', input: { path: 'src/late.ts' }, output: lines(400, 'late') }])
      .user('and now?')
      .assistant('Done.')
      .build(),
  );
}

function resultPart(message: IdentifiedMessage | undefined): ToolResultPart {
  return (message as ToolMessage).content[0] as ToolResultPart;
}

describe('toolOutputGist', () => {
  it('gives a shell command, its exit status and the first error line, verbatim', () => {
    expect(
      toolOutputGist(
        { toolName: 'bash', input: { command: 'npm test' } },
        { type: 'text', value: failingTests },
      ),
    ).toBe('$ npm test · exit code 1 · FAIL src/retry.test.ts > retries with backoff');
    expect(
      toolOutputGist(
        { toolName: 'execute', input: { cmd: 'python x.py\necho done' } },
        {
          type: 'text',
          value: '<returncode>2</returncode>\nTraceback (most recent call last):\n  File "x.py"',
        },
      ),
    ).toBe('$ python x.py … · exit code 2 · Traceback (most recent call last):');
  });

  it('says how a command ended: test totals, the last line of a quiet success, the exception under a traceback', () => {
    const djangoRun = `Creating test database for alias 'default'...\n${lines(40, '.')}\n${'-'.repeat(70)}\nRan 116 tests in 0.358s\n\nOK\nDestroying test database for alias 'default'...\n</output>`;
    expect(
      toolOutputGist(
        { toolName: 'bash', input: { command: './tests/runtests.py aggregation' } },
        { type: 'text', value: `<returncode>0</returncode>\n<output>\n${djangoRun}` },
      ),
    ).toBe('$ ./tests/runtests.py aggregation · exit code 0 · Ran 116 tests in 0.358s · OK');
    expect(
      toolOutputGist(
        { toolName: 'bash', input: { command: 'python apply_fix.py' } },
        {
          type: 'text',
          value: 'patching\nSuccessfully applied fix v2.\n\n[Command finished with exit code 0]\nbash-$ ',
        },
      ),
    ).toBe('$ python apply_fix.py · exit code 0 · Successfully applied fix v2.');
    expect(
      toolOutputGist(
        { toolName: 'bash', input: { command: 'python reproduce.py' } },
        {
          type: 'text',
          value: `Traceback (most recent call last):\n  File "reproduce.py", line 3\n${lines(20, '  frame')}\ndjango.db.utils.OperationalError: no such table: app_book\n(Current directory: /testbed)`,
        },
      ),
    ).toBe('$ python reproduce.py · django.db.utils.OperationalError: no such table: app_book');
  });

  it("gives a harness's note its first sentence, and git's state commands what they printed", () => {
    expect(
      toolOutputGist(
        { toolName: 'execute_bash', input: { command: 'npm install' } },
        {
          type: 'text',
          value:
            'added 3 packages\n[The command timed out after 300 seconds. You may wait longer to see additional output by sending empty command, or interrupt it.]',
        },
      ),
    ).toBe('$ npm install · [The command timed out after 300 seconds. …]');
    expect(
      toolOutputGist(
        { toolName: 'Bash', input: { command: 'git status' } },
        { type: 'text', value: 'On branch main\n\nno changes added to commit (use "git add")' },
      ),
    ).toBe('$ git status · no changes added to commit (use "git add")');
  });

  it('gives no last line for a command that only shows files, nor for an exit status said already', () => {
    expect(
      toolOutputGist(
        { toolName: 'bash', input: { command: "cd /repo && nl -ba src/a.py | sed -n '1,40p'" } },
        { type: 'text', value: `${lines(40, 'code')}\n<returncode>0</returncode>` },
      ),
    ).toBe("$ cd /repo && nl -ba src/a.py | sed -n '1,40p' · exit code 0");
    expect(
      toolOutputGist(
        { toolName: 'bash', input: { command: 'make' } },
        { type: 'text', value: 'Process exited with code 0' },
      ),
    ).toBe('$ make · exit code 0');
  });

  it('reads only the end of a huge output for its outcome', () => {
    const huge = `${'A'.repeat(2_000_000)}\nRan 3 tests in 0.1s\nOK`;
    expect(
      toolOutputGist({ toolName: 'bash', input: { command: 'pytest' } }, { type: 'text', value: huge }),
    ).toBe('$ pytest · Ran 3 tests in 0.1s · OK');
  });

  it("gives an editor's view the path and line count, and its edits the verb and path", () => {
    expect(
      toolOutputGist(
        { toolName: 'str_replace_editor', input: { command: 'view', path: '/repo/src/parse.ts' } },
        { type: 'text', value: "Here's the result of running `cat -n` on /repo/src/parse.ts:\n1\ta\n2\tb" },
      ),
    ).toBe('/repo/src/parse.ts · 3 lines');
    expect(
      toolOutputGist(
        {
          toolName: 'str_replace_editor',
          input: { command: 'str_replace', path: '/repo/src/parse.ts', old_str: 'a', new_str: 'b' },
        },
        { type: 'text', value: 'The file /repo/src/parse.ts has been edited.\nReview the changes.' },
      ),
    ).toBe('str_replace /repo/src/parse.ts');
  });

  it('gives a read file its path and line count', () => {
    expect(
      toolOutputGist(
        { toolName: 'Read', input: { file_path: '/repo/src/a.ts' } },
        { type: 'text', value: 'a\nb\nc\n' },
      ),
    ).toBe('/repo/src/a.ts · 3 lines');
  });

  it('falls back to the first error line of an error, then the first non-empty line', () => {
    expect(toolOutputGist(undefined, { type: 'text', value: '\n\n  first line  \nsecond' })).toBe(
      'first line',
    );
    expect(toolOutputGist(undefined, { type: 'error-text', value: 'starting\nerror: no such file' })).toBe(
      'error: no such file',
    );
    expect(toolOutputGist({ toolName: 'search', input: {} }, { type: 'text', value: '' })).toBe(
      'empty output',
    );
    expect(toolOutputGist(undefined, { type: 'text', value: 'x'.repeat(500) })).toHaveLength(160);
  });
});

describe('stubToolOutputs', () => {
  it('stubs large old outputs, largest first, keeping call ids, names and error types', () => {
    const messages = session();
    const context = strategyContext();
    const result = stubToolOutputs().apply(messages, context);
    const read = resultPart(result.messages[3]);
    expect(read).toMatchObject({ toolCallId: 'call_1', toolName: 'read_file', output: { type: 'text' } });
    expect(toolOutputText(read.output)).toMatch(
      /^\[tool output archived: h-\w+ · \d+ tokens · src\/retry\.ts · 400 lines\]$/,
    );
    expect(toolOutputText(resultPart(result.messages[5]).output)).toContain(
      '· $ npm test · exit code 1 · FAIL src/retry.test.ts > retries with backoff]',
    );
    expect(resultPart(result.messages[7]).output.type).toBe('error-text');
    expect(result.messages[9]).toBe(messages[9]); // small
    expect(result.messages[13]).toBe(messages[13]); // within the last 2 turns
    expect(result.actions.map((action) => action.tokensBefore)).toEqual(
      [...result.actions.map((action) => action.tokensBefore)].sort((a, b) => b - a),
    );
    for (const action of result.actions) {
      const original = messages.find((message) => message.id === action.messageIds[0]);
      expect(context.archive.get(action.handle!)?.content).toEqual(resultPart(original).output);
      const stub = result.messages.find((message) => message.id === action.messageIds[0]);
      expect(toolOutputText(resultPart(stub).output)).toContain(`${toolOutputStubPrefix}${action.handle}`);
    }
  });

  it('stops once the budget holds: the output that meets it keeps its first and last lines in the room left', () => {
    const messages = session();
    const total = accountant.countTotal(messages);
    const budgetTokens = total - 1000;
    const context = strategyContext({ budgetTokens });
    const result = stubToolOutputs().apply(messages, context);
    expect(result.actions).toHaveLength(1);
    const action = result.actions[0]!;
    expect(action).toMatchObject({ type: 'trim-tool-output', messageIds: [messages[3]!.id] });
    const kept = toolOutputText(resultPart(result.messages[3]).output);
    expect(kept.startsWith('code line 0: some output text here\n')).toBe(true);
    expect(kept.endsWith('code line 399: some output text here')).toBe(true);
    expect(kept).toContain(`of this output archived: ${action.handle} …]`);
    // Within the budget, and the room a stub would have left is used.
    const after = accountant.countTotal(result.messages);
    expect(after).toBeLessThanOrEqual(budgetTokens);
    expect(after).toBeGreaterThan(budgetTokens - 40);
    expect(action.tokensAfter).toBe(accountant.countText(kept));
    expect(context.archive.get(action.handle!)?.content).toEqual(resultPart(messages[3]).output);
    // Compacting again under the same budget changes nothing.
    expect(stubToolOutputs().apply(result.messages, strategyContext({ budgetTokens })).actions).toEqual([]);
  });

  it('stubs an output trimmed already as its original: the stub names the whole output, archived once', () => {
    const messages = session();
    const context = strategyContext({ budgetTokens: accountant.countTotal(messages) - 1000 });
    const trimmed = stubToolOutputs().apply(messages, context);
    const handle = trimmed.actions[0]!.handle!;
    const stubbed = stubToolOutputs().apply(trimmed.messages, { ...context, budgetTokens: 0 });
    const readTokens = accountant.countText(lines(400, 'code line'));
    expect(toolOutputText(resultPart(stubbed.messages[3]).output)).toBe(
      `[tool output archived: ${handle} · ${readTokens} tokens · src/retry.ts · 400 lines]`,
    );
    expect(stubbed.actions.find((action) => action.messageIds[0] === messages[3]!.id)?.handle).toBe(handle);
    expect(context.archive.get(handle)?.content).toEqual(resultPart(messages[3]).output);
    // The trimmed text itself is not archived: only the whole output is.
    const trimmedOutput = resultPart(trimmed.messages[3]).output as unknown as JSONValue;
    expect(context.archive.has(archiveHandle('tool-output', trimmedOutput))).toBe(false);
  });

  it('stubs the output that meets the budget whole when the room left would hold little of it', () => {
    const messages = session();
    const readTokens = accountant.countText(lines(400, 'code line'));
    const budgetTokens = accountant.countTotal(messages) - readTokens + 60;
    const result = stubToolOutputs().apply(messages, strategyContext({ budgetTokens }));
    expect(result.actions.map((action) => action.type)).toEqual(['stub-tool-output']);
    expect(toolOutputText(resultPart(result.messages[3]).output).startsWith(toolOutputStubPrefix)).toBe(true);
  });

  it('respects keepRecentTurns, minTokens and preserved messages, and never stubs a stub', () => {
    const messages = session();
    const all = stubToolOutputs({ keepRecentTurns: 0, minTokens: 1 }).apply(messages, strategyContext());
    expect(resultPart(all.messages[13]).output.type).toBe('text');
    expect(toolOutputText(resultPart(all.messages[13]).output)).toContain('src/late.ts');
    expect(stubToolOutputs({ minTokens: 1 }).apply(all.messages, strategyContext()).actions).toEqual([]);
    const preserved = stubToolOutputs().apply(
      messages,
      strategyContext({ preservedIds: new Set([messages[3]!.id]) }),
    );
    expect(preserved.messages[3]).toBe(messages[3]);
    expect(() => stubToolOutputs({ minTokens: -5 })).toThrow(InvalidArgumentError);
  });

  it('keeps the invariants on generated conversations', () => {
    checkStrategyInvariants(stubToolOutputs(), { conversations: richConversation() });
    checkStrategyInvariants(stubToolOutputs({ minTokens: 20, keepRecentTurns: 0 }), {
      conversations: richConversation(),
      numRuns: 80,
    });
  });
});
