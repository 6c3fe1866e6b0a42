import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { claudeCodeLarge, claudeCodeRecord } from '../../../bench/inputs/importer-inputs.mjs';
import { expectValidForOpenAI, importWith } from '../../../test/support/importer-harness.js';
import {
  factSurvival,
  hasSharedSessions,
  loadProbes,
  sessionsDir,
} from '../../../test/support/probe-facts.js';
import { propertyRuns } from '../../../test/support/property-runs.js';
import { TranscriptImportError } from '../../errors/index.js';
import { messageText, toolCallsOf } from '../../messages/content.js';
import type { Message, ToolMessage, UserMessage } from '../../messages/types.js';
import { repairMessages, validateMessages } from '../../messages/validate/index.js';
import type { ImportOptions, ImportStats } from '../transcript-importer.js';
import { claudeCodeImporter } from './claude-code-importer.js';

const fixturesDir = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const readFixture = (name: string) => readFileSync(join(fixturesDir, name), 'utf8');

const importText = (text: string, options: ImportOptions = {}) =>
  importWith(claudeCodeImporter, text, options);

function importFixture(name: string, options: ImportOptions = {}) {
  return importText(readFixture(name), { file: name, ...options });
}

/** Every record read is either used or skipped under some reason. */
function expectAllCounted(stats: ImportStats): void {
  const skipped = Object.values(stats.skipped).reduce((sum, count) => sum + count, 0);
  expect(stats.recordsUsed + skipped).toBe(stats.recordsRead);
}

const roles = (messages: readonly Message[]) => messages.map((message) => message.role);

const userLine = (uuid: string, content: unknown, fields: Record<string, unknown> = {}) =>
  claudeCodeRecord({ type: 'user', uuid, message: { role: 'user', content }, ...fields });
const assistantLine = (uuid: string, id: string, block: unknown, fields: Record<string, unknown> = {}) =>
  claudeCodeRecord({
    type: 'assistant',
    uuid,
    message: { id, type: 'message', role: 'assistant', model: 'claude-test', content: [block] },
    ...fields,
  });

describe('claudeCodeImporter.detect', () => {
  it('claims the JSONL and JSON-array fixtures by their envelope fields', () => {
    for (const name of ['parallel-tools.jsonl', 'sub-agents.json', 'compacted.jsonl']) {
      expect(claudeCodeImporter.detect({ head: readFixture(name), fileName: name })).toMatch(/Claude Code/);
    }
    expect(claudeCodeImporter.detect({ head: readFixture('sub-agents.json') })).toBe(
      'record 0 has the Claude Code envelope (type "system" with sessionId, parentUuid, uuid)',
    );
  });

  it('claims a file whose first record is cut off by the 64 KiB sample', () => {
    const huge = userLine('u1', 'x'.repeat(200_000));
    const head = `${huge}\n`.slice(0, 64 * 1024);
    expect(claudeCodeImporter.detect({ head })).toMatch(/type "user"/);
  });

  it('does not claim provider JSON, other agents, or text that only mentions the fields', () => {
    const samples = [
      JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
      JSON.stringify([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]),
      JSON.stringify({ system: 'be brief', messages: [{ role: 'user', content: 'hi' }] }),
      JSON.stringify({
        format: 'precis',
        messages: [{ role: 'user', content: 'hi', metadata: { uuid: 'x' } }],
      }),
      // Text about Claude Code records is still just text.
      JSON.stringify([
        {
          role: 'user',
          content: '{"type":"user","sessionId":"s","parentUuid":null,"uuid":"u","isSidechain":false}',
        },
      ]),
      // Codex CLI rollout.
      `${JSON.stringify({ timestamp: '2025-01-01T00:00:00Z', type: 'session_meta', payload: { id: 'x', cwd: '/' } })}\n`,
      // Claude Code headless stream-json: snake_case session_id, no parentUuid.
      `${JSON.stringify({ type: 'system', subtype: 'init', session_id: 's', uuid: 'u', cwd: '/', model: 'm' })}\n${JSON.stringify({ type: 'assistant', session_id: 's', uuid: 'v', parent_tool_use_id: null, message: { role: 'assistant', content: [] } })}\n`,
      '# SpecStory\n\n_**User**_\n\nhello',
      '',
    ];
    for (const head of samples) expect(claudeCodeImporter.detect({ head })).toBeUndefined();
  });

  it.skipIf(!hasSharedSessions)('claims the Claude Code sessions and no other shared session', () => {
    for (const name of readdirSync(sessionsDir)) {
      const head = readFileSync(join(sessionsDir, name), 'utf8').slice(0, 64 * 1024);
      const evidence = claudeCodeImporter.detect({ head, fileName: name });
      if (name.startsWith('cc-native-')) expect(evidence, name).toBeDefined();
      else expect(evidence, name).toBeUndefined();
    }
  });
});

describe('claudeCodeImporter.parse: JSONL with parallel tool calls', () => {
  const imported = importFixture('parallel-tools.jsonl');
  const { messages, context } = imported;

  it('rebuilds the turns in file order', () => {
    expect(roles(messages)).toEqual([
      'user', // caveat
      'user', // /clear
      'user', // local command output
      'user', // Japanese prompt
      'assistant', // thinking + text + Read + Grep, four records of one response
      'tool', // Grep result (arrived first)
      'tool', // Read result
      'assistant', // text + Bash
      'tool', // Bash error
      'assistant', // Edit
      'tool', // rejected
      'user', // interruption
      'user', // image + text
      'assistant', // text + Bash, never answered
      'tool', // error result added for it
    ]);
    expectValidForOpenAI(messages);
  });

  it('merges the records of one response in order, keeping the thinking signature', () => {
    const assistant = messages[4]!;
    expect(assistant.content).toEqual([
      {
        type: 'reasoning',
        text: 'The user says withRetry ignores maxDelayMs. I should read src/retry.ts and grep for the delay computation.',
        providerOptions: { anthropic: { signature: 'Eu8BCkYIBRgCKkBsig0001' } },
      },
      { type: 'text', text: 'retry.ts を確認します。' },
      {
        type: 'tool-call',
        toolCallId: 'toolu_read1',
        toolName: 'Read',
        input: { file_path: '/home/dev/retry-kit/src/retry.ts' },
      },
      {
        type: 'tool-call',
        toolCallId: 'toolu_grep1',
        toolName: 'Grep',
        input: { pattern: 'maxDelayMs', path: '/home/dev/retry-kit/src' },
      },
    ]);
    expect(assistant.metadata).toEqual({
      origin: 'claude-code',
      timestamp: '2025-09-01T10:00:03.000Z',
      line: 8,
      uuid: 'u-0006',
      messageId: 'msg_01Aa',
    });
  });

  it('links results to calls records earlier, by id, with the call’s tool name', () => {
    const [grep, read] = [messages[5] as ToolMessage, messages[6] as ToolMessage];
    expect(grep.content).toEqual([
      {
        type: 'tool-result',
        toolCallId: 'toolu_grep1',
        toolName: 'Grep',
        output: {
          type: 'text',
          value:
            'src/retry.ts:14:  const capped = Math.min(base * 2 ** attempt, options.maxDelayMs);\nsrc/options.ts:3:  maxDelayMs?: number;',
        },
      },
    ]);
    expect(grep.metadata).toMatchObject({ line: 13, uuid: 'u-0011', timestamp: '2025-09-01T10:00:04.300Z' });
    expect(read.content[0]).toMatchObject({
      toolCallId: 'toolu_read1',
      toolName: 'Read',
      output: { type: 'content', value: [{ type: 'text', text: expect.stringContaining('withRetry') }] },
    });
  });

  it('reads is_error results as error outputs and never reads toolUseResult', () => {
    const bash = messages[8] as ToolMessage;
    expect(bash.content[0]).toMatchObject({
      toolName: 'Bash',
      output: { type: 'error-text', value: expect.stringContaining('expected 1180') },
    });
    expect(messages[10]!.content[0]).toMatchObject({ toolName: 'Edit', output: { type: 'error-text' } });
    const everything = messages.map(messageText).join('\n');
    expect(everything).not.toContain('whole file copy for the UI');
    expect(everything).not.toContain('numFiles');
  });

  it('keeps meta, command, interruption, image and unicode content as the model saw it', () => {
    expect(messages[0]!.metadata).toMatchObject({ meta: true });
    expect(messages[1]!.metadata).toMatchObject({ command: '/clear' });
    expect(messages[3]!.content).toBe(
      'retry.ts のバックオフが壊れています。withRetry が maxDelayMs を無視している原因を調べて直してください。',
    );
    expect(messages[11]).toMatchObject({
      role: 'user',
      content: [{ type: 'text', text: '[Request interrupted by user for tool use]' }],
      // Claude Code wrote it in the user's place: no instruction or task comes from it.
      metadata: { interrupted: true, harness: true },
    });
    const withImage = messages[12] as UserMessage;
    expect(withImage.content).toEqual([
      { type: 'image', image: expect.stringMatching(/^iVBORw0KGgo/), mediaType: 'image/png' },
      {
        type: 'text',
        text: 'Clamp inside jitter() instead, like in this screenshot. 最大値は 1000ms です。',
      },
    ]);
  });

  it('answers the call a cut-off session ends on, and says so', () => {
    expect(toolCallsOf(messages[13]!).map((call) => call.toolCallId)).toEqual(['toolu_bash2']);
    expect(messages[14]).toEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'toolu_bash2',
          toolName: 'Bash',
          output: { type: 'error-text', value: '[no result recorded]' },
        },
      ],
      metadata: { origin: 'claude-code', synthetic: true },
    });
    expect(context.warnings).toContainEqual(
      expect.objectContaining({
        line: 23,
        message: expect.stringContaining('toolu_bash2 (Bash) has no result'),
      }),
    );
  });

  it('skips the malformed line with a counted warning naming it, and counts every record', () => {
    expect(context.warnings).toContainEqual({
      type: 'import-warning',
      file: 'parallel-tools.jsonl',
      line: 14,
      message: expect.stringContaining('invalid JSON'),
    });
    expect(context.stats).toEqual({
      recordsRead: 24,
      recordsUsed: 19,
      skipped: { malformed: 1, summary: 1, 'file-history-snapshot': 1, system: 2 },
    });
  });

  it('fails on the malformed line in strict mode, naming file and line', () => {
    const attempt = () => importFixture('parallel-tools.jsonl', { strict: true });
    expect(attempt).toThrow(TranscriptImportError);
    expect(attempt).toThrow(/^parallel-tools\.jsonl:14: invalid JSON/);
  });

  it('reports session metadata from the envelope', () => {
    expect(imported.metadata).toEqual({
      format: 'claude-code',
      model: 'claude-sonnet-4-20250514',
      sessionId: '7d3c1a52-0b6e-4f3e-9a41-2c8e5f0d9b17',
      startedAt: '2025-09-01T10:00:00.000Z',
      endedAt: '2025-09-01T10:00:45.500Z',
      cwd: '/home/dev/retry-kit',
      title: 'Fix jittered backoff in retry helper',
      extra: { version: '1.0.98', gitBranch: 'fix/backoff' },
    });
    expect(imported.conversation.model).toBe('claude-sonnet-4-20250514');
    expect(imported.sidechains).toBeUndefined();
  });
});

describe('claudeCodeImporter.parse: JSON array with parallel sub-agents', () => {
  it('excludes sidechains by default, counting them', () => {
    const { messages, context, sidechains } = importFixture('sub-agents.json');
    expect(roles(messages)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant']);
    expect(toolCallsOf(messages[1]!).map((call) => call.toolCallId)).toEqual(['toolu_task1', 'toolu_task2']);
    expect(messages[2]!.content[0]).toMatchObject({ toolCallId: 'toolu_task2', toolName: 'Task' });
    expect(messages[2]!.metadata).toMatchObject({ record: 14 });
    expect(context.stats).toEqual({ recordsRead: 17, recordsUsed: 7, skipped: { system: 1, sidechain: 9 } });
    expect(sidechains).toBeUndefined();
    expectValidForOpenAI(messages);
  });

  it('includes sidechains inline, in file order, and stays valid', () => {
    const { messages, context } = importFixture('sub-agents.json', { sidechains: 'include' });
    expect(
      messages.map((message) => `${message.role}${message.metadata?.sidechain === true ? '*' : ''}`),
    ).toEqual([
      'user',
      'assistant',
      'tool',
      'tool',
      'user*',
      'user*',
      'assistant*',
      'tool*',
      'assistant*',
      'tool*',
      'assistant*',
      'assistant*',
      'assistant',
    ]);
    expectValidForOpenAI(messages);
    expect(context.stats).toEqual({ recordsRead: 17, recordsUsed: 15, skipped: { system: 2 } });
  });

  it('returns one conversation per sub-agent chain, linked to the Task call that started it', () => {
    const { messages, sidechains } = importFixture('sub-agents.json', { sidechains: 'separate' });
    expect(roles(messages)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant']);
    expect(sidechains).toHaveLength(2);
    const [first, second] = sidechains!;
    expect(roles(first!.messages)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(first!.messages[0]!.content).toMatch(/^Find every place that reads APP_CONFIG_PATH/);
    expect(first!.messages.every((message) => message.metadata?.sidechainId === 's1-01')).toBe(true);
    expect(first!.messages[0]!.metadata).toMatchObject({ sidechain: true, parentToolCallId: 'toolu_task1' });
    // The second chain runs through a hook record (s2-03) between its call and its result.
    expect(roles(second!.messages)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(second!.messages[2]!.content[0]).toMatchObject({ toolCallId: 'toolu_s2read', toolName: 'Read' });
    expect(second!.messages[3]!.metadata).toMatchObject({
      sidechainId: 's2-01',
      parentToolCallId: 'toolu_task2',
    });
    expect(second!.model).toBe('claude-opus-4-1-20250805');
    for (const sidechain of sidechains!) expectValidForOpenAI(sidechain.messages);
  });

  it('reads a file of sub-agent traffic only as the conversation itself', () => {
    const text = [
      userLine('a1', 'Look for TODOs', { isSidechain: true, agentId: 'abc' }),
      assistantLine(
        'a2',
        'msg_1',
        { type: 'text', text: 'None found.' },
        { isSidechain: true, parentUuid: 'a1' },
      ),
    ].join('\n');
    const { messages, context } = importText(text);
    expect(roles(messages)).toEqual(['user', 'assistant']);
    expect(context.warnings).toEqual([
      expect.objectContaining({ message: expect.stringContaining('sub-agent') }),
    ]);
  });
});

describe('claudeCodeImporter.parse: compaction and other quirks', () => {
  const { messages, context, metadata } = importFixture('compacted.jsonl');

  it('keeps the compaction summary in place, clearly marked', () => {
    expect(messages[3]).toMatchObject({
      role: 'user',
      content: expect.stringMatching(/^This session is being continued from a previous conversation/),
      metadata: { compactSummary: true, line: 5 },
    });
    expectValidForOpenAI(messages);
  });

  it('keeps local command output, API error notices and interruptions', () => {
    expect(messages[4]).toMatchObject({
      role: 'user',
      content: '<local-command-stdout>Set model to opus (claude-opus-4-1-20250805)</local-command-stdout>',
      metadata: { systemSubtype: 'local_command' },
    });
    expect(messages[5]).toMatchObject({ role: 'assistant', metadata: { synthetic: true, apiError: true } });
    expect(messages[6]!.metadata).toMatchObject({ interrupted: true });
  });

  it('marks what the harness wrote in the user’s place: the local-command caveat, built-in commands, output, bash mode', () => {
    const caveat =
      'Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to.';
    const text = [
      userLine('u1', caveat, { isMeta: true }),
      userLine(
        'u2',
        '<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>',
      ),
      userLine('u3', '<local-command-stdout></local-command-stdout>'),
      userLine('u4', 'Fix the flaky upload test.'),
      userLine('u5', '<command-name>/fix-issue</command-name>\n<command-args>365</command-args>'),
      userLine('u6', 'Expand this skill prompt: review the diff.', { isMeta: true }),
      userLine('u7', [
        { type: 'text', text: '<local-command-stdout>2 files changed</local-command-stdout>' },
        { type: 'text', text: 'Commit them.' },
      ]),
      // Bash mode (`!pwd`): a shell command the user ran, and its output.
      userLine('u8', '<bash-input>pwd</bash-input>'),
      userLine('u9', '<bash-stdout>/home/dev/retry-kit</bash-stdout><bash-stderr></bash-stderr>'),
    ].join('\n');
    const { messages } = importText(text);
    // A record with the user's words beside a command's output is the user's, wherever the output stands.
    expect(messages.map((message) => message.metadata?.harness === true)).toEqual([
      true,
      true,
      true,
      false,
      false,
      false,
      false,
      true,
      true,
    ]);
    // The prompt the custom command expanded to is the request's expansion; the caveat is not one.
    expect(messages.map((message) => message.metadata?.expansion === true)).toEqual([
      false,
      false,
      false,
      false,
      false,
      true,
      false,
      false,
      false,
    ]);
    // The local command output of the fixture, from a system record, is one too.
    expect(messages.length).toBe(9);
    expect(importFixture('compacted.jsonl').messages[4]!.metadata).toMatchObject({ harness: true });
  });

  it('marks a record holding only injected context (a SessionStart hook, the IDE’s open file) as a harness note', () => {
    const hook = '<session-start-hook>Git Status:\n## main...origin/main\n?? logs/</session-start-hook>';
    const ide = {
      type: 'text',
      text: '<ide_opened_file>The user opened src/app.ts in the IDE.</ide_opened_file>',
    };
    const text = [
      userLine('u1', hook),
      userLine('u2', [ide]),
      userLine('u3', [ide, { type: 'text', text: 'Explain this file.' }]),
      userLine('u4', `Why does ${hook} show logs/?`),
    ].join('\n');
    const { messages } = importText(text);
    // The prompt beside the IDE's note, and a prompt that quotes the tag, are the user's.
    expect(messages.map((message) => message.metadata?.harness === true)).toEqual([true, true, false, false]);
    // Merged before the request, the hook's output is the preamble: the task is what the user typed.
    const [task] = repairMessages([messages[0]!, messages[3]!], { provider: 'anthropic' }).messages;
    expect(task!.metadata).toMatchObject({ requestPart: 1 });
  });

  it('reads an @-mention’s Read as a file put into the context: a harness note with contextFiles, not a request', () => {
    const text = [
      userLine('u1', 'Explain @src/retry.ts and make the backoff exponential.'),
      userLine(
        'u2',
        [
          {
            type: 'text',
            text: 'Called the Read tool with the following input: {"file_path":"/home/dev/retry-kit/src/retry.ts"}',
          },
        ],
        { isMeta: true },
      ),
      userLine(
        'u3',
        [{ type: 'text', text: 'Result of calling the Read tool: "     1→export const attempts = 3;"' }],
        { isMeta: true },
      ),
      // Newer versions write the call and its result in one record; a Read without a file names none.
      userLine(
        'u4',
        'Called the Read tool with the following input: {"file_path":"/home/dev/retry-kit/README.md"}\nResult of calling the Read tool:\n1\t# retry-kit',
        { isMeta: true },
      ),
      userLine('u5', 'Called the LS tool with the following input: {"path":"/home/dev/retry-kit/src"}', {
        isMeta: true,
      }),
      userLine('u6', 'Called the Read tool with the following input: not json', { isMeta: true }),
    ].join('\n');
    const { messages } = importText(text);
    expect(messages.map((message) => message.metadata?.harness === true)).toEqual([
      false,
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(messages.map((message) => message.metadata?.contextFiles)).toEqual([
      undefined,
      ['/home/dev/retry-kit/src/retry.ts'],
      undefined,
      ['/home/dev/retry-kit/README.md'],
      undefined,
      undefined,
    ]);
    expect(messages.some((message) => message.metadata?.expansion === true)).toBe(false);
    // Without isMeta, the same words are the user's.
    const typed = importText(
      userLine('u1', 'Called the Read tool with the following input: {"file_path":"/a.ts"}'),
    ).messages[0]!;
    expect(typed.metadata?.harness).toBeUndefined();
    expect(typed.metadata?.contextFiles).toBeUndefined();
  });

  it('keeps signed thinking with empty text and notes a model switch', () => {
    expect(messages[8]).toMatchObject({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: '', providerOptions: { anthropic: { signature: 'ErcBCkgIBhABsig0002' } } },
        { type: 'tool-call', toolCallId: 'toolu_c2', toolName: 'Bash' },
      ],
      metadata: { model: 'claude-opus-4-1-20250805' },
    });
    expect(metadata.model).toBe('claude-sonnet-4-5-20250929');
    expect(metadata.extra).toMatchObject({
      models: ['claude-sonnet-4-5-20250929', 'claude-opus-4-1-20250805'],
    });
  });

  it('puts a late result right after its call, before the message typed while the tool ran', () => {
    expect(roles(messages.slice(8, 11))).toEqual(['assistant', 'tool', 'user']);
    expect(messages[10]!.content).toBe('Also check that the README mentions WAL.');
    expect(context.warnings).toContainEqual(
      expect.objectContaining({ line: 14, message: expect.stringContaining('placed right after its call') }),
    );
  });

  it('keeps a result whose call is missing as user text, with a warning', () => {
    expect(messages[11]).toMatchObject({
      role: 'user',
      content: [{ type: 'text', text: 'stale output from a call this file does not have' }],
      metadata: { orphanToolCallIds: ['toolu_gone'] },
    });
    expect(context.warnings).toContainEqual(
      expect.objectContaining({
        line: 16,
        message: expect.stringContaining('toolu_gone answers no tool call'),
      }),
    );
  });

  it('skips repeated records and bookkeeping types, counting them', () => {
    expect(messages.filter((message) => message.content === 'Run the migration tests now.')).toHaveLength(1);
    expect(context.stats).toEqual({
      recordsRead: 17,
      recordsUsed: 14,
      skipped: { system: 1, 'queue-operation': 1, duplicate: 1 },
    });
    expect(messages).toHaveLength(13);
  });
});

describe('claudeCodeImporter.parse: malformed input', () => {
  const good = {
    type: 'user',
    uuid: 'u1',
    sessionId: 's',
    parentUuid: null,
    message: { role: 'user', content: 'hello' },
  };

  it('names the record index of bad array entries, and throws in strict mode', () => {
    const text = JSON.stringify([
      good,
      42,
      { uuid: 'u2' },
      { ...good, uuid: 'u3', type: 'assistant', message: { content: 5 } },
      {
        ...good,
        uuid: 'u4',
        type: 'assistant',
        message: { content: [{ type: 'tool_use', name: 'Bash', input: {} }] },
      },
    ]);
    const { messages, context } = importText(text, { file: 'chat.json' });
    expect(messages).toEqual([
      { role: 'user', content: 'hello', metadata: { origin: 'claude-code', record: 0, uuid: 'u1' } },
    ]);
    expect(context.warnings.map((warning) => [warning.record, warning.message])).toEqual([
      [1, 'a record must be a JSON object, got number 42'],
      [2, 'a record needs a string "type", got nothing'],
      [3, '"message.content" must be a string or an array of blocks, got number 5'],
      [4, 'message.content[0].id: "id" must be a string, got nothing'],
    ]);
    expect(context.stats.skipped).toEqual({ malformed: 4 });
    expect(() => importText(text, { file: 'chat.json', strict: true })).toThrow(
      /^chat\.json, record 1: a record must be a JSON object/,
    );
  });

  it('names the block of a bad user record', () => {
    const text = userLine('u1', [
      { type: 'text', text: 'see' },
      { type: 'image', source: 'not an object' },
    ]);
    const { context } = importText(text);
    expect(context.warnings).toEqual([
      expect.objectContaining({ line: 1, message: expect.stringContaining('message.content[1].source') }),
    ]);
  });

  it('throws a TranscriptImportError for a JSON array it cannot read at all', () => {
    const attempt = () => importText('[\n  {"type": "user",\n  oops\n]', { file: 'chat.json' });
    expect(attempt).toThrow(TranscriptImportError);
    expect(attempt).toThrow(/^chat\.json:3/);
  });

  it('renames a reused tool call id so the conversation stays valid', () => {
    const text = [
      userLine('u1', 'go'),
      assistantLine('a1', 'msg_1', {
        type: 'tool_use',
        id: 'toolu_x',
        name: 'Bash',
        input: { command: 'ls' },
      }),
      userLine('u2', [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'one' }]),
      assistantLine('a2', 'msg_2', {
        type: 'tool_use',
        id: 'toolu_x',
        name: 'Bash',
        input: { command: 'pwd' },
      }),
      userLine('u3', [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'two' }]),
    ].join('\n');
    const { messages, context } = importText(text);
    expect(messages[4]!.content[0]).toMatchObject({ toolCallId: 'toolu_x-2', output: { value: 'two' } });
    expect(context.warnings).toEqual([expect.objectContaining({ line: 4 })]);
    expectValidForOpenAI(messages);
  });

  it('ignores empty records instead of making empty messages', () => {
    const text = [
      userLine('u1', ''),
      userLine('u2', []),
      assistantLine('a1', 'msg_1', { type: 'text', text: '' }),
      userLine('u3', 'hi'),
    ].join('\n');
    const { messages, context } = importText(text);
    expect(messages).toHaveLength(1);
    expect(context.stats.skipped).toEqual({ empty: 3 });
  });

  // This input is shared with bench/importers.bench.mjs, which measures its speed; here, what comes out of it.
  it('reads a big session with a 2 MB tool result', () => {
    const { messages } = importText(claudeCodeLarge());
    expect(messages).toHaveLength(10_001);
    expect(messageText(messages[2]!)).toBe('y'.repeat(2_000_000));
    expectValidForOpenAI(messages);
  });
});

describe('claudeCodeImporter.parse: property', () => {
  type Step =
    | { kind: 'prompt'; sidechain: boolean }
    | { kind: 'block'; sidechain: boolean; response: number; call: number | undefined }
    | { kind: 'result'; sidechain: boolean; call: number; error: boolean; list: boolean; withText: boolean }
    | { kind: 'system' }
    | { kind: 'garbage' };

  const step: fc.Arbitrary<Step> = fc.oneof(
    fc.record({ kind: fc.constant('prompt' as const), sidechain: fc.boolean() }),
    fc.record({
      kind: fc.constant('block' as const),
      sidechain: fc.boolean(),
      response: fc.integer({ min: 0, max: 3 }),
      call: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
    }),
    fc.record({
      kind: fc.constant('result' as const),
      sidechain: fc.boolean(),
      call: fc.integer({ min: 0, max: 6 }),
      error: fc.boolean(),
      list: fc.boolean(),
      withText: fc.boolean(),
    }),
    fc.constant({ kind: 'system' as const }),
    fc.constant({ kind: 'garbage' as const }),
  );

  /** Turns steps into JSONL; returns the unique texts of main-thread records, which must all survive. */
  function render(steps: readonly Step[]): { text: string; mainTexts: string[] } {
    const lines: string[] = [];
    const mainTexts: string[] = [];
    steps.forEach((current, index) => {
      const token = `token-${index}`;
      if (current.kind === 'system') {
        lines.push(
          claudeCodeRecord({ type: 'system', uuid: `s${index}`, content: 'hook ran', level: 'info' }),
        );
        return;
      }
      if (current.kind === 'garbage') {
        lines.push('{"type": "user", "message": {');
        return;
      }
      if (!current.sidechain) mainTexts.push(token);
      const fields = { isSidechain: current.sidechain };
      if (current.kind === 'prompt') lines.push(userLine(`u${index}`, token, fields));
      else if (current.kind === 'block') {
        const block =
          current.call === undefined
            ? { type: 'text', text: token }
            : { type: 'tool_use', id: `toolu_${current.call}`, name: 'Bash', input: { command: token } };
        lines.push(assistantLine(`a${index}`, `msg_${current.response}`, block, fields));
      } else {
        const content = current.list ? [{ type: 'text', text: token }] : token;
        const blocks: unknown[] = [
          { type: 'tool_result', tool_use_id: `toolu_${current.call}`, content, is_error: current.error },
        ];
        if (current.withText) blocks.push({ type: 'text', text: `${token}-note` });
        if (current.withText && !current.sidechain) mainTexts.push(`${token}-note`);
        lines.push(userLine(`r${index}`, blocks, fields));
      }
    });
    return { text: lines.join('\n'), mainTexts };
  }

  it('always gives a valid conversation that keeps every main-thread text and counts every record', () => {
    fc.assert(
      fc.property(
        fc.array(step, { maxLength: 40 }),
        fc.constantFrom('exclude', 'include', 'separate'),
        (steps, mode) => {
          const { text, mainTexts } = render(steps);
          const { messages, context, sidechains } = importText(text, { sidechains: mode });
          expect(validateMessages(messages, { provider: 'openai' }).issues).toEqual([]);
          for (const sidechain of sidechains ?? []) {
            expect(validateMessages(sidechain.messages, { provider: 'openai' }).issues).toEqual([]);
          }
          const everything = messages.map(messageText).join('\n');
          for (const token of mainTexts) expect(everything).toContain(token);
          expectAllCounted(context.stats);
        },
      ),
      { numRuns: propertyRuns(300) },
    );
  });
});

describe.skipIf(!hasSharedSessions)('claudeCodeImporter on the real Claude Code sessions', () => {
  const sessions = hasSharedSessions
    ? readdirSync(sessionsDir).filter((name) => name.startsWith('cc-native-'))
    : [];

  it.each(sessions)('%s imports valid for OpenAI with its probe facts', (session) => {
    const text = readFileSync(join(sessionsDir, session), 'utf8');
    for (const mode of ['exclude', 'include', 'separate'] as const) {
      const { messages, context, sidechains } = importText(text, { file: session, sidechains: mode });
      const repairs = repairMessages(messages, { provider: 'openai' }).repairs;
      expect(repairs, `${mode}: repairs needed`).toEqual([]);
      expectValidForOpenAI(messages);
      for (const sidechain of sidechains ?? []) expectValidForOpenAI(sidechain.messages);
      expectAllCounted(context.stats);
      expect(context.stats.skipped.malformed ?? 0).toBe(0);
      const survival = factSurvival(loadProbes(session), messages);
      if (survival.missing.length > 0) console.log(session, mode, survival.missing);
      expect(survival.kept / survival.facts).toBeGreaterThanOrEqual(0.98);
      if (mode === 'exclude') {
        const calls = messages.flatMap(toolCallsOf).length;
        console.log(
          `${session}: ${messages.length} messages, ${calls} tool calls, ${repairs.length} repairs, facts ${survival.kept}/${survival.facts}, skipped ${JSON.stringify(context.stats.skipped)}`,
        );
      }
    }
  });
});
