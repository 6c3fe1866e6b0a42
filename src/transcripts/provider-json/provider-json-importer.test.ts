import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { providerJsonLarge } from '../../../bench/inputs/importer-inputs.mjs';
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
import { InvalidMessageError, TranscriptImportError } from '../../errors/index.js';
import { messageText, toolCallsOf, toolResultsOf } from '../../messages/content.js';
import { fromAnthropic } from '../../messages/convert/anthropic.js';
import { fromOpenAI } from '../../messages/convert/openai.js';
import { parseConversation } from '../../messages/parse.js';
import type { Message } from '../../messages/types.js';
import { repairMessages } from '../../messages/validate/index.js';
import type { ImportOptions, TranscriptImporter } from '../transcript-importer.js';
import { anthropicImporter, openAIImporter, precisImporter } from './provider-json-importer.js';

const here = dirname(fileURLToPath(import.meta.url));
const fixturesDir = join(here, 'fixtures');
const readFixture = (name: string) => readFileSync(join(fixturesDir, name), 'utf8');
const importers = [openAIImporter, anthropicImporter, precisImporter];

const importFixture = (importer: TranscriptImporter, name: string, options: ImportOptions = {}) =>
  importWith(importer, readFixture(name), { file: name, ...options });

/** The messages without the metadata the importer adds, to compare with what the converter makes of the whole. */
const withoutMetadata = (messages: readonly Message[]) =>
  messages.map(({ metadata: _metadata, ...message }) => message);

/** Which of the three importers claim a text; the dispatcher tries them after every other format. */
const claims = (text: string, fileName?: string) =>
  importers
    .filter(
      (importer) =>
        importer.detect({
          head: text.slice(0, 64 * 1024),
          ...(fileName === undefined ? {} : { fileName }),
        }) !== undefined,
    )
    .map((importer) => importer.format);

describe('provider JSON detection', () => {
  it('claims each fixture for exactly its own format', () => {
    for (const name of readdirSync(fixturesDir)) {
      expect(claims(readFixture(name), name), name).toEqual([name.split('-')[0]]);
    }
  });

  it('names its evidence', () => {
    expect(anthropicImporter.detect({ head: readFixture('anthropic-request.json') })).toBe(
      'top-level "system" field (Anthropic Messages request)',
    );
    expect(openAIImporter.detect({ head: readFixture('openai-requests.jsonl') })).toBe(
      'tools are OpenAI function tools (JSON Lines of requests, line 1)',
    );
    expect(precisImporter.detect({ head: '[{"role":"user","content":"hi"}]' })).toBe(
      'plain text messages only: all formats agree',
    );
  });

  it('declines gptme and Codex logs, trajectories, OpenHands dumps, records and non-JSON', () => {
    for (const folder of ['markdown', 'tool-format', 'xml']) {
      const text = readFileSync(join(here, '..', 'gptme', 'fixtures', folder, 'conversation.jsonl'), 'utf8');
      expect(claims(text, 'conversation.jsonl')).toEqual([]);
    }
    for (const name of readdirSync(join(here, '..', 'codex', 'fixtures'))) {
      expect(claims(readFileSync(join(here, '..', 'codex', 'fixtures', name), 'utf8'), name)).toEqual([]);
    }
    const messages = [{ role: 'user', content: 'fix the bug' }];
    expect(claims(JSON.stringify({ trajectory_format: 'mini-swe-agent-1', messages }))).toEqual([]);
    expect(
      claims(
        JSON.stringify({
          messages: [{ ...messages[0], contentClassification: '', classificationExplanation: '' }],
        }),
      ),
    ).toEqual([]);
    expect(
      claims(
        JSON.stringify({ messages: [{ role: 'system', content: 'You are OpenHands agent, a helpful AI' }] }),
      ),
    ).toEqual([]);
    expect(claims(JSON.stringify([{ type: 'user', uuid: 'u', message: messages[0] }]))).toEqual([]);
    expect(claims('# A markdown file\n')).toEqual([]);
    expect(claims('[]')).toEqual([]);
    // A document too long for the sample is left to the dispatcher, which parses it whole.
    expect(claims(`[${JSON.stringify({ role: 'user', content: 'x'.repeat(70_000) })}]`)).toEqual([]);
  });
});

describe('provider JSON documents', () => {
  it('reads an OpenAI request body exactly as fromOpenAI does, with record positions', () => {
    const { messages, conversation, metadata, context } = importFixture(
      openAIImporter,
      'openai-request.json',
    );
    const expected = fromOpenAI(JSON.parse(readFixture('openai-request.json')));
    expect(withoutMetadata(messages)).toEqual(expected.messages);
    expect(conversation.tools).toEqual(expected.tools);
    expect(conversation.providerOptions).toEqual({ openai: { temperature: 0.2 } });
    expect(metadata).toEqual({ format: 'openai', model: 'gpt-4.1' });
    expect(messages.map((message) => message.metadata)).toEqual(
      [0, 1, 2, 3, 4, 5].map((record) => ({ origin: 'openai', record })),
    );
    expect(context.stats).toEqual({ recordsRead: 6, recordsUsed: 6, skipped: {} });
    expect(context.warnings).toEqual([]);
  });

  it('reads an Anthropic request body exactly as fromAnthropic does, turnEnd hint included', () => {
    const { messages, conversation } = importFixture(anthropicImporter, 'anthropic-request.json');
    const expected = fromAnthropic(JSON.parse(readFixture('anthropic-request.json')));
    expect(withoutMetadata(messages)).toEqual(expected.messages);
    expect(conversation.tools).toEqual(expected.tools);
    expect(conversation.providerOptions).toEqual(expected.providerOptions);
    expect(messages[0]!.metadata).toEqual({ origin: 'anthropic' });
    expect(messages[3]).toMatchObject({ role: 'tool', providerOptions: { anthropic: { turnEnd: true } } });
    expectValidForOpenAI(messages);
  });

  it('reads a precis conversation, keeping an origin a message already has', () => {
    const { messages, conversation } = importFixture(precisImporter, 'precis-conversation.json');
    const expected = parseConversation(JSON.parse(readFixture('precis-conversation.json')));
    expect(withoutMetadata(messages)).toEqual(withoutMetadata(expected.messages));
    expect(conversation.model).toBe('gpt-4o');
    expect(messages[1]!.metadata).toEqual({ origin: 'precis', pinned: true, record: 1 });
    expect(messages[4]!.metadata).toEqual({ origin: 'summary', record: 4 });
  });

  it('skips a message the converter rejects, naming its index; strict mode throws', () => {
    const text = JSON.stringify([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'x' }] },
      { role: 'assistant', content: 'hello' },
    ]);
    const { messages, context } = importWith(anthropicImporter, text, { file: 'chat.json' });
    expect(messages.map(messageText)).toEqual(['hi', 'hello']);
    expect(context.warnings).toEqual([
      {
        type: 'import-warning',
        message: '"name" must be a string, got nothing (field content[0].name)',
        file: 'chat.json',
        record: 1,
      },
    ]);
    expectStatsAddUp(context);
    expect(() => importWith(anthropicImporter, text, { file: 'chat.json', strict: true })).toThrow(
      TranscriptImportError,
    );
    expect(() => importWith(anthropicImporter, text, { file: 'chat.json', strict: true })).toThrow(
      'chat.json, record 1',
    );
  });

  it('rejects text that is not JSON, or JSON without messages', () => {
    expect(() =>
      importWith(openAIImporter, '{"messages": [\n  {"role": "user",\n', { file: 'a.json' }),
    ).toThrow(TranscriptImportError);
    expect(() =>
      importWith(openAIImporter, '{"messages": [\n  {"role": "user",\n', { file: 'a.json' }),
    ).toThrow(/a\.json:3/);
    expect(() => importWith(openAIImporter, '{"model": "gpt-4o"}')).toThrow(/expected a message array/);
  });

  it('lets a malformed request body fail with the converter’s typed error', () => {
    expect(() => importWith(openAIImporter, JSON.stringify({ messages: [], tools: 'none' }))).toThrow(
      InvalidMessageError,
    );
  });

  it('warns when the recorded conversation itself is not valid, without changing it', () => {
    const text = JSON.stringify([
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
    ]);
    const { messages, context } = importWith(openAIImporter, text);
    expect(messages).toHaveLength(2);
    expect(context.warnings).toEqual([
      expect.objectContaining({ message: expect.stringContaining('1 missing-tool-result') }),
    ]);
  });
});

describe('provider JSON Lines', () => {
  it('reads one message per line, skipping broken and rejected lines by name', () => {
    const { messages, context } = importFixture(openAIImporter, 'openai-messages.jsonl');
    expect(messages.map((message) => message.metadata?.line)).toEqual([1, 2, 3, 5, 7, 8]);
    expect(context.warnings.map((warning) => [warning.line, warning.message])).toEqual([
      [4, expect.stringContaining('invalid JSON')],
      [6, expect.stringContaining('unknown role string "robot"')],
    ]);
    expect(context.stats).toEqual({ recordsRead: 8, recordsUsed: 6, skipped: { malformed: 2 } });
    // Tool messages name their tool, though the call is on another line.
    expect(toolResultsOf(messages[3]!)[0]).toMatchObject({ toolCallId: 'call_pkg', toolName: 'read_file' });
    expect(messages[1]!.content).toBe(
      'Bump the version in package.json and tell me what changed. Ça marche? ✅ 版本',
    );
    expectValidForOpenAI(messages);
    expect(() => importFixture(openAIImporter, 'openai-messages.jsonl', { strict: true })).toThrow(
      'openai-messages.jsonl:4',
    );
  });

  it('links legacy function calls to their function messages across lines', () => {
    const { messages } = importFixture(openAIImporter, 'openai-legacy-functions.jsonl');
    expect(toolCallsOf(messages[1]!)[0]?.toolCallId).toBe('function-call-1');
    expect(toolResultsOf(messages[2]!)[0]?.toolCallId).toBe('function-call-1');
    expect(toolCallsOf(messages[5]!)[0]?.toolCallId).toBe('function-call-5');
    expect(toolResultsOf(messages[6]!)[0]?.toolCallId).toBe('function-call-5');
    expectValidForOpenAI(messages);
  });

  it('reads Anthropic messages per line as the converter reads the array', () => {
    const { messages, context } = importFixture(anthropicImporter, 'anthropic-messages.jsonl');
    const lines = readFixture('anthropic-messages.jsonl')
      .trim()
      .split('\n')
      .slice(0, 5)
      .map((text) => JSON.parse(text));
    expect(withoutMetadata(messages)).toEqual(fromAnthropic(lines).messages);
    expect(context.warnings).toEqual([expect.objectContaining({ line: 6 })]);
  });

  it('takes the longest request of a request log as the session, with its logged response', () => {
    const { messages, conversation, context } = importFixture(openAIImporter, 'openai-requests.jsonl');
    expect(messages).toHaveLength(6);
    expect(messages.at(-1)).toMatchObject({
      role: 'assistant',
      metadata: { origin: 'openai', line: 2, record: 5 },
    });
    expect(messageText(messages.at(-1)!)).toContain('Bumped relay from 1.4.2 to 1.4.3');
    expect(conversation.tools).toHaveLength(2);
    expect(conversation.model).toBe('gpt-4.1');
    expect(context.stats).toEqual({ recordsRead: 3, recordsUsed: 1, skipped: { 'superseded request': 2 } });
    expectValidForOpenAI(messages);
  });

  it('reads a single message line as JSON Lines of one message', () => {
    const { messages } = importWith(precisImporter, '{"role":"user","content":"hi"}\n');
    expect(messages).toEqual([{ role: 'user', content: 'hi', metadata: { origin: 'precis', line: 1 } }]);
  });

  it('takes the last of equally long requests, unwrapping batch bodies', () => {
    const request = (content: string) =>
      JSON.stringify({
        custom_id: content,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: 'm', messages: [{ role: 'user', content }] },
      });
    const { messages } = importWith(openAIImporter, [request('first'), request('second')].join('\n'));
    expect(messages.map(messageText)).toEqual(['second']);
  });
});

describe('provider JSON: large documents', () => {
  // Speed on this input is measured in bench/importers.bench.mjs; here, what comes out of it.
  it('reads a 3 MB request body', () => {
    const imported = importWith(openAIImporter, providerJsonLarge());
    expect(imported.messages).toHaveLength(10_001);
    expect(imported.messages.at(-1)).toMatchObject({ role: 'user', content: 'y'.repeat(2_000_000) });
  });
});

const sharedSessions = hasSharedSessions
  ? readdirSync(sessionsDir).filter((name) => name !== 'MANIFEST.md')
  : [];
const providerSessions = sharedSessions.filter(
  (name) => claims(readFileSync(join(sessionsDir, name), 'utf8'), name).length > 0,
);

describe.skipIf(!hasSharedSessions)('real sessions in ../shared/data/sessions', () => {
  it('claims none of the sessions in agent formats', () => {
    expect(providerSessions).toEqual([]);
  });

  it.skipIf(providerSessions.length === 0).each(providerSessions)(
    '%s imports valid with its probe facts',
    (name) => {
      const text = readFileSync(join(sessionsDir, name), 'utf8');
      const importer = importers.find((candidate) => claims(text, name)[0] === candidate.format)!;
      const { messages, context } = importWith(importer, text, { file: name });
      expectStatsAddUp(context);
      const repaired = repairMessages(messages, { provider: 'openai' });
      expectValidForOpenAI(repaired.messages);
      const survival = factSurvival(loadProbes(name), repaired.messages);
      expect(survival.kept / survival.facts).toBeGreaterThanOrEqual(0.98);
    },
  );
});
