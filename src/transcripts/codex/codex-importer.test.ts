import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { codexLarge } from '../../../bench/inputs/importer-inputs.mjs';
import { importWith } from '../../../test/support/importer-harness.js';
import {
  factSurvival,
  hasSharedSessions,
  loadProbes,
  sessionsDir,
} from '../../../test/support/probe-facts.js';
import { TranscriptImportError } from '../../errors/index.js';
import { messageText, toolCallsOf, toolResultsOf } from '../../messages/content.js';
import { fromOpenAI, toOpenAI } from '../../messages/convert/openai.js';
import type { AssistantMessage, Message, Part } from '../../messages/types.js';
import { repairMessages, repairPlaceholders, validateMessages } from '../../messages/validate/index.js';
import type { ImportOptions, ImportStats } from '../transcript-importer.js';
import { codexImporter } from './codex-importer.js';

const here = dirname(fileURLToPath(import.meta.url));
const fixturesDir = join(here, 'fixtures');
const readFixture = (name: string) => readFileSync(join(fixturesDir, name), 'utf8');

const current = 'rollout-2025-10-03T09-12-44-0199a1b2-7c3d-7e10-9f00-3a5b6c7d8e9f.jsonl';
const bare = 'rollout-2025-08-14T16-20-05-5f1c2d3e-aaaa-4bbb-8ccc-0123456789ab.jsonl';
const typescript = 'rollout-2025-05-02-c3d4e5f6-1111-4222-8333-444455556666.json';
const odd = 'rollout-odd-placement.jsonl';

const importText = (text: string, options: ImportOptions = {}) => importWith(codexImporter, text, options);

const importFixture = (name: string, options: ImportOptions = {}) =>
  importText(readFixture(name), { file: name, ...options });

function expectAllCounted(stats: ImportStats): void {
  const skipped = Object.values(stats.skipped).reduce((sum, count) => sum + count, 0);
  expect(stats.recordsUsed + skipped).toBe(stats.recordsRead);
}

const expectValidForOpenAI = (messages: readonly Message[]) =>
  expect(validateMessages(messages, { provider: 'openai' }).issues).toEqual([]);

const partsOf = (message: Message | undefined): Part[] =>
  message === undefined || typeof message.content === 'string'
    ? []
    : [...(message.content as readonly Part[])];

const detect = (text: string, fileName?: string) =>
  codexImporter.detect({ head: text.slice(0, 64 * 1024), ...(fileName === undefined ? {} : { fileName }) });

describe('codexImporter.detect', () => {
  it('claims the three rollout layouts', () => {
    expect(detect(readFixture(current), current)).toBe('line 1 is a Codex rollout "session_meta" record');
    expect(detect(readFixture(bare))).toMatch(/Codex session header .* bare rollout items/);
    expect(detect(readFixture(typescript))).toMatch(/TypeScript/);
  });

  it('recognises the envelope from the start of a line the sample cut off', () => {
    const meta = JSON.stringify({
      timestamp: '2025-10-03T09:12:44.101Z',
      type: 'session_meta',
      payload: { id: 'x', base_instructions: { text: 'long prompt '.repeat(10_000) } },
    });
    expect(meta.length).toBeGreaterThan(64 * 1024);
    expect(detect(meta)).toBe('line 1 is a Codex rollout "session_meta" record');
  });

  it('declines other JSON Lines logs: Claude Code records, gptme messages, provider messages', () => {
    const claudeCode = JSON.stringify({
      parentUuid: null,
      type: 'user',
      sessionId: 's',
      timestamp: '2025-01-01T00:00:00Z',
      message: { role: 'user', content: 'hi' },
      uuid: 'u1',
    });
    expect(detect(`${claudeCode}\n${claudeCode}\n`)).toBeUndefined();
    const gptme = readFileSync(
      join(here, '..', 'gptme', 'fixtures', 'markdown', 'conversation.jsonl'),
      'utf8',
    );
    expect(detect(gptme, 'conversation.jsonl')).toBeUndefined();
    for (const name of readdirSync(join(here, '..', 'provider-json', 'fixtures'))) {
      expect(
        detect(readFileSync(join(here, '..', 'provider-json', 'fixtures', name), 'utf8'), name),
      ).toBeUndefined();
    }
    // A bare message line without the session header is not enough.
    expect(
      detect('{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}\n'),
    ).toBeUndefined();
  });
});

describe('codexImporter.parse: current layout', () => {
  const imported = importFixture(current);
  const { messages, metadata, context } = imported;

  it('reads the session metadata, the model from turn_context and the time span', () => {
    expect(metadata).toEqual({
      format: 'codex',
      model: 'gpt-5-codex-mini',
      sessionId: '0199a1b2-7c3d-7e10-9f00-3a5b6c7d8e9f',
      startedAt: '2025-10-03T09:12:44.101Z',
      endedAt: '2025-10-03T09:12:51.000Z',
      cwd: '/home/dev/weather-cli',
      extra: {
        cliVersion: '0.44.0',
        originator: 'codex_cli_rs',
        source: 'cli',
        modelProvider: 'openai',
        git: { commit_hash: 'a1b2c3d', branch: 'main' },
      },
    });
    expect(imported.conversation.model).toBe('gpt-5-codex-mini');
  });

  it('is valid for OpenAI as imported, and after a round trip through the OpenAI format', () => {
    expectValidForOpenAI(messages);
    expect(repairMessages(messages, { provider: 'openai' }).repairs).toEqual([]);
    const roundTripped = fromOpenAI(toOpenAI({ messages }).messages).messages;
    expectValidForOpenAI(roundTripped);
  });

  it('keeps the messages in order, with the instructions first and developer messages as system', () => {
    expect(messages.map((message) => message.role)).toEqual([
      'system',
      'system',
      'user',
      'user',
      'assistant',
      'tool',
      'tool',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
      'user',
      'user',
      'assistant',
      'tool',
    ]);
    expect(messages[0]).toMatchObject({
      content: 'You are Codex, a coding agent running in a terminal. Keep answers short.',
      metadata: { origin: 'codex', line: 1, codexField: 'base_instructions' },
    });
    expect(messages[1]).toMatchObject({ providerOptions: { openai: { role: 'developer' } } });
    expect(messages[3]!.content).toBe(
      'The forecast command prints °F even with --metric. Fix it? Grüße aus Köln 🌧️ — 天気',
    );
    expect(messages[3]!.metadata).toEqual({
      origin: 'codex',
      timestamp: '2025-10-03T09:12:44.140Z',
      line: 5,
    });
  });

  it('merges reasoning, text and parallel calls of one response; results follow in the order they came', () => {
    const assistant = messages[4] as AssistantMessage;
    expect(partsOf(assistant).map((part) => part.type)).toEqual([
      'reasoning',
      'text',
      'tool-call',
      'tool-call',
    ]);
    expect(partsOf(assistant)[0]).toEqual({
      type: 'reasoning',
      text: '**Locating the unit conversion**',
      providerOptions: { openai: { reasoningEncryptedContent: 'gAAAAB-opaque-reasoning-blob==' } },
    });
    expect(toolCallsOf(assistant)).toEqual([
      {
        type: 'tool-call',
        toolCallId: 'call_rg_metric',
        toolName: 'shell',
        input: { command: ['rg', '-n', 'metric', 'src'], workdir: '/home/dev/weather-cli' },
      },
      {
        type: 'tool-call',
        toolCallId: 'call_cat_units',
        toolName: 'shell',
        input: { command: ['cat', 'src/units.ts'] },
      },
    ]);
    expect(assistant.metadata?.model).toBe('gpt-5-codex');
    expect(messages.slice(5, 7).map((message) => toolResultsOf(message)[0]?.toolCallId)).toEqual([
      'call_cat_units',
      'call_rg_metric',
    ]);
  });

  it('reads JSON-wrapped outputs as their text, an exit code other than 0 as an error', () => {
    const [catResult] = toolResultsOf(messages[5]!);
    expect(catResult?.output).toEqual({
      type: 'text',
      value:
        'export const DEFAULT_UNIT = "F";\nexport function pickUnit(flags) {\n  return flags.metic ? "C" : DEFAULT_UNIT;\n}\n',
    });
    expect(catResult?.providerOptions).toEqual({
      codex: { outputFormat: 'json', outputMetadata: { exit_code: 0, duration_seconds: 0.1 } },
    });
    const [testResult] = toolResultsOf(messages[10]!);
    expect(testResult).toMatchObject({ toolName: 'local_shell', output: { type: 'error-text' } });
    expect(messageText(messages[10]!)).toContain('✕ picks Celsius with --metric');
  });

  it('keeps custom tool calls (apply_patch) with their raw input, and local shell calls with their action', () => {
    const [patch] = toolCallsOf(messages[7]!);
    expect(patch).toMatchObject({
      toolCallId: 'call_patch_units',
      toolName: 'apply_patch',
      providerOptions: { openai: { toolType: 'custom' } },
    });
    expect(patch?.input).toContain('+  return flags.metric ? "C" : DEFAULT_UNIT;');
    expect(partsOf(messages[7])[0]).toMatchObject({ type: 'reasoning', text: '' });
    expect(toolCallsOf(messages[9]!)[0]).toMatchObject({
      toolName: 'local_shell',
      input: { type: 'exec', command: ['npm', 'test', '--', 'units'] },
    });
  });

  it('keeps a web search as a provider-executed call with its status', () => {
    const parts = partsOf(messages[11]);
    expect(parts[0]).toMatchObject({ type: 'tool-call', toolName: 'web_search', providerExecuted: true });
    expect(parts[1]).toEqual({
      type: 'tool-result',
      toolCallId: 'ws_0199',
      toolName: 'web_search',
      output: { type: 'json', value: { status: 'completed' } },
    });
    expect(parts[2]).toMatchObject({ type: 'text' });
  });

  it('reads the compaction summary as a user message and keeps images', () => {
    expect(messages[12]).toMatchObject({
      role: 'user',
      metadata: { compactSummary: true, line: 26 },
    });
    expect(messages[13]!.content).toEqual([
      { type: 'text', text: 'Go ahead and update the snapshot.' },
      { type: 'image', image: 'data:image/png;base64,iVBORw0KGgo=', mediaType: 'image/png' },
    ]);
  });

  it('answers the call the aborted turn left open with an explicit error result', () => {
    expect(toolResultsOf(messages[15]!)[0]).toMatchObject({
      toolCallId: 'call_update_snap',
      output: { type: 'error-text', value: repairPlaceholders.missingToolResult },
    });
    expect(context.warnings.at(-1)).toMatchObject({
      line: 29,
      message: expect.stringContaining('call_update_snap'),
    });
  });

  it('counts every record: event_msg and turn_context ignored by type, the broken line as malformed', () => {
    expectAllCounted(context.stats);
    expect(context.stats).toEqual({
      recordsRead: 30,
      recordsUsed: 21,
      skipped: {
        malformed: 1,
        turn_context: 2,
        'event_msg:user_message': 1,
        'event_msg:agent_reasoning': 1,
        'event_msg:exec_command_end': 1,
        'event_msg:token_count': 1,
        'event_msg:turn_aborted': 1,
        ghost_snapshot: 1,
      },
    });
    expect(context.warnings[0]).toMatchObject({
      file: current,
      line: 14,
      message: expect.stringContaining('invalid JSON'),
    });
  });

  it('never duplicates what event_msg records repeat', () => {
    const texts = messages.map(messageText);
    expect(texts.filter((text) => text.includes('prints °F even with --metric'))).toHaveLength(1);
  });

  it('throws a TranscriptImportError naming the file and line in strict mode', () => {
    expect(() => importFixture(current, { strict: true })).toThrow(TranscriptImportError);
    expect(() => importFixture(current, { strict: true })).toThrow(`${current}:14`);
  });
});

describe('codexImporter.parse: compaction', () => {
  it('takes the summary from a replacement history, leaving out the messages it keeps', () => {
    const envelope = (type: string, payload: unknown) =>
      JSON.stringify({ timestamp: '2025-11-01T12:00:00.000Z', type, payload });
    const user = (text: string) => ({
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text }],
    });
    const text = [
      envelope('session_meta', { id: 's' }),
      envelope('response_item', user('Port the parser to Rust.')),
      envelope('response_item', {
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'On it.' }],
      }),
      envelope('compacted', {
        message: '',
        replacement_history: [
          user('Port the parser to Rust.'),
          user('Summary: the lexer is ported; the parser still uses the old AST.'),
          { type: 'compaction', encrypted_content: 'opaque' },
        ],
      }),
      envelope('compacted', { message: '' }),
      envelope('response_item', user('Continue.')),
    ].join('\n');
    const { messages, context } = importText(text);
    expect(messages.map(messageText)).toEqual([
      'Port the parser to Rust.',
      'On it.',
      'Summary: the lexer is ported; the parser still uses the old AST.',
      'Continue.',
    ]);
    expect(messages[2]!.metadata).toMatchObject({ compactSummary: true, line: 4 });
    expect(context.stats.skipped).toEqual({ 'compacted (no summary text)': 1 });
  });
});

describe('codexImporter.parse: older layouts', () => {
  it('reads the bare layout: header line, bare items, state markers', () => {
    const { messages, metadata, context } = importFixture(bare);
    // The header's instructions come back as a <user_instructions> message: not repeated as a system message.
    expect(messageText(messages[0]!)).toContain('Always run the linter before committing.');
    expect(messages.map((message) => message.role)).toEqual([
      'user',
      'user',
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(metadata).toMatchObject({
      sessionId: '5f1c2d3e-aaaa-4bbb-8ccc-0123456789ab',
      startedAt: '2025-08-14T16:20:05.512Z',
      cwd: '/srv/reports',
      extra: { git: { commit_hash: '9e8d7c6', branch: 'feature/csv' } },
    });
    expect(messageText(messages[4]!)).toBe(
      'import argparse\nparser = argparse.ArgumentParser()\nparser.add_argument("--json")\n',
    );
    expect(context.stats.skipped).toEqual({ state: 3 });
    expectAllCounted(context.stats);
    expectValidForOpenAI(messages);
  });

  it('reads the TypeScript CLI document, with record positions', () => {
    const { messages, metadata, context } = importFixture(typescript);
    expect(messages.map((message) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(messages[0]).toEqual({
      role: 'system',
      content: 'Prefer small commits.',
      metadata: { origin: 'codex', record: 0, codexField: 'instructions' },
    });
    expect(messages[3]!.metadata).toEqual({ origin: 'codex', record: 3 });
    expect(messageText(messages[3]!)).toBe('lint:\n\truff check .\n\tmypy src');
    expect(metadata.sessionId).toBe('c3d4e5f6-1111-4222-8333-444455556666');
    expect(context.stats).toEqual({ recordsRead: 5, recordsUsed: 5, skipped: {} });
  });

  it('rejects a TypeScript document that is not JSON with a TranscriptImportError', () => {
    expect(() =>
      importText('{"session": {"id": "x"}, "items": [\n{"type": \n', { file: 'broken.json' }),
    ).toThrow(TranscriptImportError);
  });
});

describe('codexImporter.parse: empty records', () => {
  it('adds nothing for empty content, and keeps reasoning that carries provider data', () => {
    const item = (payload: unknown) =>
      JSON.stringify({ timestamp: '2025-11-01T12:00:00.000Z', type: 'response_item', payload });
    const text = [
      item({ type: 'message', role: 'user', content: [{ type: 'input_text', text: '' }] }),
      item({ type: 'message', role: 'developer', content: [{ type: 'input_text', text: '' }] }),
      item({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: '' }] }),
      item({ type: 'reasoning', summary: [] }),
      item({ type: 'reasoning', summary: [], encrypted_content: 'opaque' }),
      item({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Done.' }] }),
    ].join('\n');
    const { messages, context } = importText(text);
    expect(messages).toHaveLength(1);
    expect(partsOf(messages[0])).toEqual([
      { type: 'reasoning', text: '', providerOptions: { openai: { reasoningEncryptedContent: 'opaque' } } },
      { type: 'text', text: 'Done.' },
    ]);
    expect(context.stats).toEqual({ recordsRead: 6, recordsUsed: 2, skipped: { empty: 4 } });
  });
});

describe('codexImporter.parse: records out of place', () => {
  const { messages, context } = importFixture(odd);

  it('moves a late result up, keeps second and unknown results as user text, renames a reused id', () => {
    expect(messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'user',
      'user',
      'user',
      'assistant',
      'tool',
    ]);
    expect(messages[4]).toMatchObject({
      content: 'README.md\nsrc',
      metadata: { orphanedToolResult: 'call_ls' },
    });
    expect(messages[5]).toMatchObject({ content: 'orphaned output text' });
    expect(toolCallsOf(messages[6]!)[0]).toMatchObject({ toolCallId: 'call_ls#1', input: 'not json at all' });
    expect(toolResultsOf(messages[7]!)[0]).toMatchObject({
      toolCallId: 'call_ls#1',
      output: { type: 'content', value: [{ type: 'text', text: 'second ls' }] },
    });
    expectValidForOpenAI(messages);
  });

  it('warns once per unknown type and counts it as ignored', () => {
    expect(context.warnings.map((warning) => warning.line)).toEqual([5, 6, 7, 8, 10, 11, 12]);
    expect(context.stats.skipped).toEqual({
      'response_item:unknown_future_item': 1,
      future_record: 1,
      malformed: 1,
    });
    expectAllCounted(context.stats);
  });
});

describe('codexImporter.parse: large files', () => {
  // This input is shared with bench/importers.bench.mjs, which measures its speed; here, what comes out of it.
  it('reads a long session with a 2 MB output', () => {
    const { messages } = importText(codexLarge());
    expect(messages).toHaveLength(3 * 3000 + 2);
    expect(messageText(messages.at(-1)!)).toHaveLength(2_000_000);
  });
});

// The shared sessions hold no Codex rollout; any that the detector claims (in a larger set) must import cleanly.
const sharedSessions = hasSharedSessions
  ? readdirSync(sessionsDir).filter((name) => name !== 'MANIFEST.md')
  : [];
const codexSessions = sharedSessions.filter((name) => {
  const text = readFileSync(join(sessionsDir, name), 'utf8');
  return detect(text, name) !== undefined;
});

describe.skipIf(!hasSharedSessions)('real sessions in ../shared/data/sessions', () => {
  it('claims none of the sessions in other formats', () => {
    const others = sharedSessions.filter((name) => !name.startsWith('codex'));
    for (const name of others) expect(codexSessions).not.toContain(name);
  });

  it.skipIf(codexSessions.length === 0).each(codexSessions)(
    '%s imports valid with its probe facts',
    (name) => {
      const { messages, context } = importText(readFileSync(join(sessionsDir, name), 'utf8'), { file: name });
      expectAllCounted(context.stats);
      const repaired = repairMessages(messages, { provider: 'openai' });
      console.info(`${name}: ${messages.length} messages, ${repaired.repairs.length} repairs`);
      expectValidForOpenAI(repaired.messages);
      const survival = factSurvival(loadProbes(name), repaired.messages);
      expect(survival.missing).toEqual([]);
      expect(survival.kept / survival.facts).toBeGreaterThanOrEqual(0.98);
    },
  );
});
