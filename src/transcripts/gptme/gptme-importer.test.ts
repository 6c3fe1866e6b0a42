import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { gptmeLarge } from '../../../bench/inputs/importer-inputs.mjs';
import {
  expectStatsAddUp,
  expectValidForOpenAI,
  importWith,
} from '../../../test/support/importer-harness.js';
import {
  factSurvival,
  hasSharedSessions,
  loadProbes,
  sessionsDir,
} from '../../../test/support/probe-facts.js';
import { TranscriptImportError } from '../../errors/index.js';
import { messageText, toolCallsOf, toolResultsOf } from '../../messages/content.js';
import { fromOpenAI, toOpenAI } from '../../messages/convert/openai.js';
import type { Message, Part } from '../../messages/types.js';
import { repairMessages, repairPlaceholders } from '../../messages/validate/index.js';
import type { ImportOptions } from '../transcript-importer.js';
import { gptmeImporter } from './gptme-importer.js';

const here = dirname(fileURLToPath(import.meta.url));
const readFixture = (folder: string) =>
  readFileSync(join(here, 'fixtures', folder, 'conversation.jsonl'), 'utf8');

const importText = (text: string, options: ImportOptions = {}) => importWith(gptmeImporter, text, options);

const importFixture = (folder: string, options: ImportOptions = {}) =>
  importText(readFixture(folder), { file: `${folder}/conversation.jsonl`, ...options });

const partsOf = (message: Message | undefined): Part[] =>
  message === undefined || typeof message.content === 'string'
    ? []
    : [...(message.content as readonly Part[])];

const line = (fields: Record<string, unknown>) =>
  JSON.stringify({ timestamp: '2025-01-01T10:00:00.000000', ...fields });

const detect = (text: string, fileName?: string) =>
  gptmeImporter.detect({ head: text.slice(0, 64 * 1024), ...(fileName === undefined ? {} : { fileName }) });

describe('gptmeImporter.detect', () => {
  it('claims gptme logs, with or without their file name', () => {
    expect(detect(readFixture('markdown'), 'conversation.jsonl')).toBe(
      'conversation.jsonl: lines are gptme messages (role, string content, timestamp, no "type")',
    );
    expect(detect(readFixture('tool-format'))).toMatch(/^lines are gptme messages/);
  });

  it('recognises conversation.jsonl from the start of a first line the sample cut off', () => {
    const prompt = JSON.stringify({
      role: 'system',
      content: 'tools '.repeat(20_000),
      timestamp: 't',
    }).replace(/,/g, ', ');
    const text = prompt.replace(/":/g, '": ');
    expect(text.length).toBeGreaterThan(64 * 1024);
    expect(detect(text, 'conversation.jsonl')).toMatch(/conversation\.jsonl starting with a gptme message/);
    expect(detect(text, 'other.jsonl')).toBeUndefined();
  });

  it('declines Codex rollouts, provider messages without timestamps, and Claude Code records', () => {
    for (const name of readdirSync(join(here, '..', 'codex', 'fixtures'))) {
      expect(detect(readFileSync(join(here, '..', 'codex', 'fixtures', name), 'utf8'), name)).toBeUndefined();
    }
    for (const name of readdirSync(join(here, '..', 'provider-json', 'fixtures'))) {
      expect(
        detect(readFileSync(join(here, '..', 'provider-json', 'fixtures', name), 'utf8'), name),
      ).toBeUndefined();
    }
    const claudeCode = line({ type: 'user', role: 'user', content: 'hi', uuid: 'u', sessionId: 's' });
    expect(detect(`${claudeCode}\n`, 'conversation.jsonl')).toBeUndefined();
    // A line with a field gptme never writes is another format.
    expect(detect(`${line({ role: 'user', content: 'hi', id: 'm1' })}\n`)).toBeUndefined();
  });
});

describe('gptmeImporter.parse: markdown tool format', () => {
  const { messages, metadata, context } = importFixture('markdown');

  it('is valid for OpenAI as imported, and after a round trip through the OpenAI format', () => {
    expectValidForOpenAI(messages);
    expect(repairMessages(messages, { provider: 'openai' }).repairs).toEqual([]);
    expectValidForOpenAI(fromOpenAI(toOpenAI({ messages }).messages).messages);
  });

  it('reads the leading system messages as the system prompt, with their flags', () => {
    expect(messages.slice(0, 2)).toEqual([
      {
        role: 'system',
        content:
          'You are gptme, a terminal assistant. Use ```shell blocks to run commands and ```save <path> blocks to write files.',
        metadata: { origin: 'gptme', timestamp: '2025-03-14T10:00:00.123456', line: 1, pinned: true },
      },
      {
        role: 'system',
        content: '## Workspace\n\nFiles: fib.py (missing), README.md',
        metadata: { origin: 'gptme', timestamp: '2025-03-14T10:00:01.123456', line: 2, hide: true },
      },
    ]);
    expect(messages[2]!.content).toBe(
      'Write fib.py that prints the first n Fibonacci numbers. Ünïcödé check: 🚀 斐波那契',
    );
    expect(metadata).toEqual({
      format: 'gptme',
      model: 'anthropic/claude-sonnet-4-5',
      startedAt: '2025-03-14T10:00:00.123456',
      endedAt: '2025-03-14T10:01:30.123456',
    });
  });

  it('turns a save block and its "Saved to" reply into a call and its result', () => {
    expect(partsOf(messages[3])).toEqual([
      { type: 'text', text: "I'll write the script.\n\n" },
      {
        type: 'tool-call',
        toolCallId: 'gptme-4-0',
        toolName: 'save',
        input: {
          path: 'fib.py',
          content:
            'import sys\n\ndef fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        yield a\n        a, b = b, a + b\n\nprint(*fib(int(sys.argv[1])))',
        },
      },
    ]);
    expect(messages[3]!.metadata).toMatchObject({ model: 'anthropic/claude-sonnet-4-5', line: 4 });
    expect(messages[4]).toEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'gptme-4-0',
          toolName: 'save',
          output: { type: 'text', value: 'Saved to fib.py' },
        },
      ],
      metadata: { origin: 'gptme', timestamp: '2025-03-14T10:00:16.123456', line: 5, originalRole: 'system' },
    });
  });

  it('pairs several blocks with as many replies, one to one and in order', () => {
    expect(toolCallsOf(messages[7]!).map((part) => [part.toolName, part.input])).toEqual([
      ['ipython', { code: 'print(sum([0, 1, 1, 2, 3, 5, 8, 13, 21, 34]))' }],
      ['shell', { command: 'wc -l fib.py' }],
    ]);
    expect(partsOf(messages[7]).at(-1)).toEqual({ type: 'text', text: '\n\nBoth should be quick.' });
    expect(messages.slice(8, 10).map((message) => toolResultsOf(message)[0]?.toolCallId)).toEqual([
      'gptme-8-0',
      'gptme-8-1',
    ]);
    expect(messageText(messages[9]!)).toBe('Ran command: `wc -l fib.py`\n\n```stdout\n10 fib.py\n```');
  });

  it('keeps nested fences inside a block, and user attachments in metadata', () => {
    expect(messages[10]).toMatchObject({ role: 'user', metadata: { files: ['/home/ana/fib/notes.txt'] } });
    expect(toolCallsOf(messages[11]!)[0]?.input).toEqual({
      path: 'README.md',
      content: '# fib\n\nUsage:\n\n```bash\npython fib.py 10\n```\n\nPrints `0 1 1 2 3 5 8 13 21 34`.',
    });
  });

  it('leaves a legacy file-name block as text when only the explicit block was run', () => {
    const parts = partsOf(messages[14]);
    expect(parts.map((part) => part.type)).toEqual(['text', 'tool-call']);
    expect(messageText(messages[14]!)).toContain('```src/helpers.py\ndef double(x):');
  });

  it('pairs a lone block with its first reply and keeps the hook notice after it as a user message', () => {
    expect(messages.slice(16, 19).map((message) => message.role)).toEqual(['assistant', 'tool', 'user']);
    expect(messages[18]).toMatchObject({
      content: 'Pre-commit hook: 2 files checked, no issues.',
      metadata: { originalRole: 'system', line: 21 },
    });
  });

  it('keeps blocks as text when the replies do not pair up, with a warning', () => {
    expect(messages[19]).toMatchObject({ role: 'assistant', content: [{ type: 'text' }] });
    expect(messageText(messages[19]!)).toBe('Two more:\n```shell\nls\n```\n```shell\ngit status\n```');
    expect(messages[20]).toMatchObject({ role: 'user', metadata: { originalRole: 'system' } });
    expect(context.warnings).toContainEqual(
      expect.objectContaining({ line: 22, message: expect.stringContaining('do not pair up') }),
    );
  });

  it('keeps a system message after a user message as a user message marked with its role', () => {
    expect(messages[22]).toMatchObject({
      role: 'user',
      content: 'Note: conversation auto-compaction skipped (below threshold).',
      metadata: { hide: true, originalRole: 'system' },
    });
  });

  it('ends an aborted session on a call with an explicit error result', () => {
    expect(toolCallsOf(messages[23]!)[0]).toMatchObject({ toolName: 'patch', input: { path: 'fib.py' } });
    expect(toolResultsOf(messages[24]!)[0]?.output).toEqual({
      type: 'error-text',
      value: repairPlaceholders.missingToolResult,
    });
    expect(messages).toHaveLength(25);
  });

  it('counts ui_only messages as ignored and the broken line as malformed', () => {
    expect(context.stats).toEqual({
      recordsRead: 26,
      recordsUsed: 24,
      skipped: { ui_only: 1, malformed: 1 },
    });
    expectStatsAddUp(context);
    expect(messages.map(messageText).join('\n')).not.toContain('Context changed');
    expect(context.warnings[0]).toMatchObject({ file: 'markdown/conversation.jsonl', line: 13 });
  });

  it('throws a TranscriptImportError naming the file and line in strict mode', () => {
    expect(() => importFixture('markdown', { strict: true })).toThrow(TranscriptImportError);
    expect(() => importFixture('markdown', { strict: true })).toThrow('markdown/conversation.jsonl:13');
  });
});

describe('gptmeImporter.parse: tool and XML formats', () => {
  it('links tool-format calls and replies by call_id, in any order, also after an interruption', () => {
    const { messages, context } = importFixture('tool-format');
    expectValidForOpenAI(messages);
    expect(messages.map((message) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'tool',
      'user',
      'assistant',
      'tool',
      'user',
      'assistant',
      'tool',
    ]);
    expect(partsOf(messages[2])).toEqual([
      { type: 'text', text: 'Checking both.\n' },
      { type: 'tool-call', toolCallId: 'toolu_01A', toolName: 'shell', input: { command: 'du -sh .' } },
      { type: 'tool-call', toolCallId: 'toolu_01B', toolName: 'read', input: { path: 'README.md' } },
    ]);
    expect(messages.slice(3, 5).map((message) => toolResultsOf(message)[0]?.toolCallId)).toEqual([
      'toolu_01B',
      'toolu_01A',
    ]);
    expect(messages[5]).toMatchObject({
      content: 'Token budget: 12% used.',
      metadata: { originalRole: 'system' },
    });
    // The interruption was recorded after the user's message; the result is moved up to its call.
    expect(toolResultsOf(messages[7]!)[0]).toMatchObject({
      toolCallId: 'toolu_02C',
      output: { type: 'text', value: 'Interrupted by user.' },
    });
    expect(messages[8]!.content).toBe("Don't wait for it.");
    expect(toolCallsOf(messages[9]!)[0]?.input).toEqual({
      path: 'notes.md',
      content: '# Notes\n- size: 1.2M\n',
    });
    expect(toolResultsOf(messages[10]!)[0]?.output.type).toBe('error-text');
    expect(context.warnings.map((warning) => warning.line)).toEqual([9, 10]);
  });

  it('reads XML tool uses, unescaping their content', () => {
    const { messages } = importFixture('xml');
    expectValidForOpenAI(messages);
    expect(partsOf(messages[2])).toEqual([
      { type: 'text', text: 'Running the build:\n' },
      {
        type: 'tool-call',
        toolCallId: 'gptme-3-0',
        toolName: 'shell',
        input: { command: 'make build && echo <ok>' },
      },
    ]);
    expect(messages.map((message) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
  });

  it('keeps @tool text as text when nothing answers it and the conversation goes on', () => {
    const text = [
      line({ role: 'user', content: 'how do I call it?' }),
      line({ role: 'assistant', content: 'Like this:\n@shell(example): {"command": "ls"}' }),
      line({ role: 'user', content: 'thanks' }),
    ].join('\n');
    const { messages } = importText(text);
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(toolCallsOf(messages[1]!)).toEqual([]);
  });

  it('pairs the answers an aborted session has with its first blocks', () => {
    const text = [
      line({ role: 'user', content: 'two things' }),
      line({ role: 'assistant', content: '```shell\necho one\n```\n\n```shell\necho two\n```' }),
      line({ role: 'system', content: 'Ran command: `echo one`' }),
    ].join('\n');
    const { messages } = importText(text);
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'tool']);
    expect(messageText(messages[2]!)).toBe('Ran command: `echo one`');
    expect(toolResultsOf(messages[3]!)[0]).toMatchObject({
      toolCallId: 'gptme-2-1',
      output: { type: 'error-text' },
    });
  });

  it('ignores text before </think> and unclosed fences when looking for blocks', () => {
    const text = [
      line({ role: 'user', content: 'go' }),
      line({
        role: 'assistant',
        content: '<think>maybe ```shell\nrm -rf /\n```</think>\n```shell\nls\n```\n```shell\nunclosed',
      }),
      line({ role: 'system', content: 'Ran command: `ls`' }),
    ].join('\n');
    const { messages } = importText(text);
    expect(toolCallsOf(messages[1]!).map((part) => part.input)).toEqual([{ command: 'ls' }]);
    expect(messageText(messages[1]!)).toContain('<think>maybe ```shell\nrm -rf /\n```</think>');
    expect(messageText(messages[1]!)).toContain('```shell\nunclosed');
  });
});

describe('gptmeImporter.parse: large files', () => {
  // Speed on this input is measured in bench/importers.bench.mjs; here, what comes out of it.
  it('reads a log with a 1.5 MB message full of fences', () => {
    const { messages } = importText(gptmeLarge());
    expect(messages).toHaveLength(1 + 2 * 2000 + 1);
    expect(messageText(messages.at(-1)!)).toBe('```text\nsome output line\n```\n'.repeat(50_000));
  });
});

// The shared sessions hold no gptme log; any that the detector claims (in a larger set) must import cleanly.
const sharedSessions = hasSharedSessions
  ? readdirSync(sessionsDir).filter((name) => name !== 'MANIFEST.md')
  : [];
const gptmeSessions = sharedSessions.filter(
  (name) => detect(readFileSync(join(sessionsDir, name), 'utf8'), name) !== undefined,
);

describe.skipIf(!hasSharedSessions)('real sessions in ../shared/data/sessions', () => {
  it('claims none of the sessions in other formats', () => {
    for (const name of sharedSessions.filter((session) => !session.startsWith('gptme'))) {
      expect(gptmeSessions).not.toContain(name);
    }
  });

  it.skipIf(gptmeSessions.length === 0).each(gptmeSessions)(
    '%s imports valid with its probe facts',
    (name) => {
      const { messages, context } = importText(readFileSync(join(sessionsDir, name), 'utf8'), { file: name });
      expectStatsAddUp(context);
      const repaired = repairMessages(messages, { provider: 'openai' });
      console.info(`${name}: ${messages.length} messages, ${repaired.repairs.length} repairs`);
      expectValidForOpenAI(repaired.messages);
      const survival = factSurvival(loadProbes(name), repaired.messages);
      expect(survival.missing).toEqual([]);
      expect(survival.kept / survival.facts).toBeGreaterThanOrEqual(0.98);
    },
  );
});
