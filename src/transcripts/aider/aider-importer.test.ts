import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { aiderLarge, aiderPathological, aiderUnclosedBlock } from '../../../bench/inputs/importer-inputs.mjs';
import {
  expectStatsAddUp,
  expectValidWithoutRepairs,
  importWith,
} from '../../../test/support/importer-harness.js';
import {
  factSurvival,
  hasSharedSessions,
  loadProbes,
  renderForProbes,
  sessionsDir,
} from '../../../test/support/probe-facts.js';
import { propertyRuns } from '../../../test/support/property-runs.js';
import { TranscriptImportError } from '../../errors/index.js';
import { messageText, toolCallsOf, toolResultsOf } from '../../messages/content.js';
import type {
  AssistantContentPart,
  AssistantMessage,
  Message,
  ToolCallPart,
  ToolMessage,
} from '../../messages/types.js';
import { repairMessages, validateMessages } from '../../messages/validate/index.js';
import type { ImportOptions } from '../transcript-importer.js';
import { aiderEditBlockResult, aiderImporter, filesAddedToChat } from './aider-importer.js';

// Fixtures end in .txt, not .md: Biome formats markdown and would rewrite aider's two-space line ends.
const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

const importText = (text: string, options: ImportOptions = {}) => importWith(aiderImporter, text, options);

const calls = (messages: readonly Message[]): ToolCallPart[] => messages.flatMap(toolCallsOf);
const resultText = (messages: readonly Message[], toolCallId: string): string => {
  for (const message of messages) {
    for (const result of toolResultsOf(message)) {
      if (result.toolCallId === toolCallId && result.output.type === 'text') return result.output.value;
    }
  }
  throw new Error(`no result for ${toolCallId}`);
};
const textOf = (message: Message | undefined): string => {
  if (message === undefined) return '';
  if (typeof message.content === 'string') return message.content;
  return message.content.map((part) => ('text' in part ? part.text : '')).join('\n');
};

/** Every line of the file without aider's prefixes and edit-block syntax, whitespace collapsed. */
function contentLines(text: string): string[] {
  return text
    .split('\n')
    .map((line) =>
      line
        .replace(/^(?:#### ?|> ?|####$)/, '')
        .replace(/\s+/g, ' ')
        .trim(),
    )
    .filter((line) => line !== '' && !/^(?:`{3,}\w*|<{5,9} SEARCH|={5,9}|>{5,9} REPLACE)$/.test(line));
}

describe('aiderImporter.detect', () => {
  it('recognises the session header, or the file name with #### and > lines', () => {
    expect(aiderImporter.detect({ head: fixture('aider-classic.chat-history.txt') })).toMatch(
      /aider chat started at/,
    );
    const noHeader = fixture('aider-classic.chat-history.txt').replace(/^# aider chat started at .*$/gm, '');
    expect(aiderImporter.detect({ head: noHeader, fileName: '.aider.chat.history.md' })).toMatch(/named/);
    expect(aiderImporter.detect({ head: noHeader })).toMatch(/#### input and > output/);
  });

  it('does not claim SpecStory exports, JSON or plain markdown', () => {
    const specStory = readFileSync(
      new URL('../specstory/fixtures/cursor-classic.specstory.txt', import.meta.url),
      'utf8',
    );
    expect(aiderImporter.detect({ head: specStory })).toBeUndefined();
    expect(
      aiderImporter.detect({ head: `${specStory}\n# aider chat started at 2024-01-01 00:00:00\n` }),
    ).toBeUndefined();
    expect(
      aiderImporter.detect({ head: '[{"content":"# aider chat started at 2024-01-01"}]' }),
    ).toBeUndefined();
    expect(aiderImporter.detect({ head: '# Notes\n\n#### A heading\n\n> a quote\n' })).toBeUndefined();
  });

  it.skipIf(!hasSharedSessions)('claims the shared aider session and no other shared session', () => {
    for (const name of readdirSync(sessionsDir).filter((file) => file !== 'MANIFEST.md')) {
      const head = readFileSync(join(sessionsDir, name), 'utf8').slice(0, 64 * 1024);
      const evidence = aiderImporter.detect({ head, fileName: name });
      if (name.startsWith('aider-md__')) expect(evidence, name).toBeDefined();
      else expect(evidence, name).toBeUndefined();
    }
  });
});

describe('aiderImporter.parse, two sessions in one file', () => {
  const { messages, metadata, conversation, context } = importText(
    fixture('aider-classic.chat-history.txt'),
    {
      file: 'history.md',
    },
  );

  it('opens the first session with a system message and a later one with a harness note, each holding the header and the banner', () => {
    const openers = messages.filter((message) => message.metadata?.session !== undefined);
    expect(openers.map((message) => message.role)).toEqual(['system', 'user']);
    expect(openers.map((message) => message.content)).toEqual([
      [
        '# aider chat started at 2024-06-03 10:12:01',
        'Aider v0.38.0',
        'Models: gpt-4o with diff edit format, weak model gpt-3.5-turbo',
        'Git repo: .git with 42 files',
        'Repo-map: using 1024 tokens',
      ].join('\n'),
      expect.stringContaining(
        '# aider chat started at 2024-06-03 11:00:45\nAider v0.38.0\nModels: claude-3-5',
      ),
    ]);
    expect(openers.map((message) => message.metadata)).toEqual([
      { origin: 'aider', line: 2, record: 0, session: 1, timestamp: '2024-06-03T10:12:01' },
      { origin: 'aider', line: 100, record: 9, session: 2, timestamp: '2024-06-03T11:00:45', harness: true },
    ]);
  });

  it('records the sessions, their models and edit formats in metadata', () => {
    expect(metadata).toEqual({
      format: 'aider',
      startedAt: '2024-06-03T10:12:01',
      endedAt: '2024-06-03T11:00:45',
      extra: {
        sessionCount: 2,
        sessions: [
          {
            line: 2,
            startedAt: '2024-06-03T10:12:01',
            model: 'gpt-4o',
            editFormat: 'diff',
            aiderVersion: '0.38.0',
          },
          {
            line: 100,
            startedAt: '2024-06-03T11:00:45',
            model: 'claude-3-5-sonnet-20240620',
            editFormat: 'diff',
            aiderVersion: '0.38.0',
          },
        ],
        models: ['gpt-4o', 'claude-3-5-sonnet-20240620'],
      },
    });
    expect(conversation.model).toBeUndefined();
    expect(messages.find((message) => message.role === 'assistant')?.metadata?.model).toBe('gpt-4o');
  });

  it('joins #### lines into one prompt, a lone #### being a blank line', () => {
    expect(messages[1]).toEqual({
      role: 'user',
      content:
        'the slugify helper breaks on accented input like "Crème brûlée" — 日本語もお願い\n\nplease fix it and add a test',
      metadata: { origin: 'aider', line: 9, record: 2 },
    });
  });

  it('keeps aider output as user messages marked aiderOutput, verbatim without the > prefix', () => {
    expect(messages[2]).toEqual({
      role: 'user',
      content: '2210 prompt tokens, 64 completion tokens, $0.012010 cost',
      metadata: { origin: 'aider', line: 12, record: 3, aiderOutput: true, harness: true },
    });
    expect(messages[4]!.content).toBe(
      'app/text.py\ntests/test_text.py\nAdd these files to the chat? yes\n3120 prompt tokens, 410 completion tokens, $0.021750 cost',
    );
  });

  it('turns SEARCH/REPLACE blocks into edit calls, byte-exact, between the prose they interrupt', () => {
    const reply = messages[5] as AssistantMessage;
    expect(reply.role).toBe('assistant');
    expect((reply.content as AssistantContentPart[]).map((part) => part.type)).toEqual([
      'text',
      'tool-call',
      'tool-call',
      'tool-call',
      'text',
    ]);
    expect(textOf(reply)).toContain('#### Plan\n\n1. Normalise with `unicodedata`.');
    expect(textOf(reply)).toContain(
      '```text\n#### not a user line\n> not aider output\n---\n_**User**_\n```',
    );
    expect(calls([reply]).map((call) => call.input)).toEqual([
      { path: 'app/text.py', search: 'import re\n', replace: 'import re\nimport unicodedata\n' },
      {
        path: 'app/text.py',
        search: 'def slugify(value):\n    return re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-")\n',
        replace:
          'def slugify(value):\n    value = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode()\n' +
          '    return re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-")\n',
      },
      {
        path: 'tests/test_text.py',
        search: '',
        replace:
          'from app.text import slugify\n\n\ndef test_accents():\n    assert slugify("Crème brûlée") == "creme-brulee"\n',
      },
    ]);
    expect(textOf(reply)).not.toContain('<<<<<<< SEARCH');
  });

  it('answers the parallel edit calls in one tool message from the Applied edit lines of the next record', () => {
    const tool = messages[6] as ToolMessage;
    expect(tool.role).toBe('tool');
    expect(tool.content.map((part) => [part.type === 'tool-result' && part.output])).toEqual([
      [{ type: 'text', value: 'Applied edit to app/text.py' }],
      [{ type: 'text', value: 'Applied edit to app/text.py' }],
      [{ type: 'text', value: 'Applied edit to tests/test_text.py' }],
    ]);
    // The rest of that output, test failure included, is what aider fed back: a user message.
    const fedBack = messages[7]!;
    expect(fedBack.metadata).toMatchObject({ aiderOutput: true, record: 7 });
    expect(fedBack.content).toContain("E   AssertionError: assert 'creme-brulee-' == 'creme-brulee'");
    expect(fedBack.content).toContain('Allow creation of new file tests/test_text.py? yes');
    expect(fedBack.content).not.toContain('Applied edit');
  });

  it('keeps fences inside SEARCH/REPLACE text, and answers edits aider said nothing about neutrally', () => {
    const docs = calls(messages).find((call) => (call.input as { path: string }).path === 'docs/USAGE.md')!;
    expect(docs.input).toEqual({
      path: 'docs/USAGE.md',
      search: '## Slugs\n\n```python\nslugify("a b")\n```\n',
      replace: '## Slugs\n\n```python\nslugify("Crème brûlée")  # "creme-brulee"\n```\n',
    });
    expect(resultText(messages, docs.toolCallId)).toBe(aiderEditBlockResult);
  });

  it('ends on the last edit call of an aborted session, answered neutrally', () => {
    const last = calls(messages).at(-1)!;
    expect(last.input).toEqual({
      path: 'app/text.py',
      search: 'def slugify(value):\n',
      replace: 'def make_slug(value):\n',
    });
    expect(messages.at(-1)).toMatchObject({ role: 'tool' });
    expect(resultText(messages, last.toolCallId)).toBe(aiderEditBlockResult);
  });

  it('is valid for OpenAI as imported, counts every record and loses no line', () => {
    expectValidWithoutRepairs(messages);
    expectStatsAddUp(context);
    expect(context.warnings).toEqual([]);
    const rendered = renderForProbes(messages).replace(/\s+/g, ' ');
    for (const line of contentLines(fixture('aider-classic.chat-history.txt')))
      expect(rendered).toContain(line);
  });

  it('reads the same file without its two-space line ends, and with CRLF line ends', () => {
    const stripped = importText(fixture('aider-classic.chat-history.txt').replace(/[ \t]+$/gm, '')).messages;
    expect(calls(stripped).map((call) => call.input)).toEqual(calls(messages).map((call) => call.input));
    // Without the line ends nothing tells a reply's `#### ` heading from user input: the one difference.
    const headingAt = stripped.findIndex((message) => message.content === 'Plan');
    expect(stripped[headingAt]?.role).toBe('user');
    const withoutHeading = stripped.filter((_, index) => index !== headingAt);
    expect(withoutHeading.map((message) => message.role)).toEqual(messages.map((message) => message.role));
    const crlf = importText(fixture('aider-classic.chat-history.txt').replace(/\n/g, '\r\n')).messages;
    expect(crlf).toEqual(messages);
  });
});

describe('aiderImporter.parse, what aider wrote in the user’s place', () => {
  const history = [
    '# aider chat started at 2025-09-22 12:04:00',
    '',
    '> Aider v0.83.1  ',
    '',
    '#### /ask  ',
    '',
    '> Aider v0.83.1  ',
    '> Main model: openrouter/qwen/qwen3-coder with ask edit format  ',
    '',
    '#### /model openrouter/deepseek/deepseek-chat-v3.1  ',
    '',
    '#### /home/dev/app.py crashes on start, why?  ',
    '',
    'It imports a missing module.',
    '',
    '> Tokens: 310 sent, 1.0k received.  ',
    '> # 1 SEARCH/REPLACE block failed to match!',
    '',
    '## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in app.py',
    '<<<<<<< SEARCH',
    'import missing',
    '',
    'Just reply with fixed versions of the block above that failed to match.  ',
    '',
    '#### /ask what does app.py import?  ',
    '',
    '#### /code  ',
    '#### Please remove the import.  ',
    '',
    '#### /add app.py  ',
    '',
    // aider logs a request command, then the request it sends the model on its own line.
    '#### /code drop the unused import  ',
    '',
    '#### drop the unused import  ',
    '',
    // The same in multi-line mode: the request on the lines after the command.
    '#### /ask  ',
    '#### why does it crash?  ',
    '',
    '#### why does it crash?  ',
    '',
    // An answer to aider's own question that aider logged as input: the user answered aider, not the model.
    "#### Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: skip  ",
    '',
  ].join('\n');
  const { messages } = importText(history);
  const users = messages.filter((message) => message.role === 'user');

  it('marks its commands, its output and answers to its questions as harness notes, the requests not', () => {
    expect(users.map((message) => [message.content, message.metadata?.harness === true])).toEqual([
      ['/ask', true],
      ['Aider v0.83.1\nMain model: openrouter/qwen/qwen3-coder with ask edit format', true],
      ['/model openrouter/deepseek/deepseek-chat-v3.1', true],
      ['/home/dev/app.py crashes on start, why?', false],
      [expect.stringMatching(/^Tokens: 310 sent/), true],
      ['/ask what does app.py import?', false],
      ['/code\nPlease remove the import.', false],
      ['/add app.py', true],
      ['/code drop the unused import', true],
      ['drop the unused import', false],
      ['/ask\nwhy does it crash?', true],
      ['why does it crash?', false],
      ["Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: skip", true],
    ]);
    expect(users[2]!.metadata).toMatchObject({ command: '/model' });
    expect(users[3]!.metadata).not.toHaveProperty('command');
    expect(users[8]!.metadata).toMatchObject({ command: '/code' });
  });

  it('reads a multi-line output with blank lines inside as one entry, up to its line break', () => {
    expect(users[4]!.content).toBe(
      [
        'Tokens: 310 sent, 1.0k received.',
        '# 1 SEARCH/REPLACE block failed to match!',
        '',
        '## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in app.py',
        '<<<<<<< SEARCH',
        'import missing',
        '',
        'Just reply with fixed versions of the block above that failed to match.',
      ].join('\n'),
    );
    expect(messages.filter((message) => message.role === 'assistant')).toHaveLength(1);
  });
});

describe('aiderImporter.parse, an edit block aider could not apply', () => {
  const block = (search: string) => [
    'app.py',
    '```python',
    '<<<<<<< SEARCH',
    search,
    '=======',
    '>>>>>>> REPLACE',
    '```',
    '',
  ];
  const history = [
    '# aider chat started at 2025-09-22 12:04:00',
    '',
    '#### Drop both imports.  ',
    '',
    ...block('import a'),
    ...block('import b'),
    '> Tokens: 1.0k sent, 200 received.  ',
    '> Applied edit to app.py  ',
    '> # 1 SEARCH/REPLACE block failed to match!',
    '',
    '## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in app.py',
    '<<<<<<< SEARCH',
    'import b',
    '=======',
    '>>>>>>> REPLACE',
    '',
    'Just reply with fixed versions of the block above that failed to match.  ',
    '',
  ].join('\n');
  const { messages } = importText(history);

  it('answers the block it names with an error, the others with what aider printed, and keeps the report', () => {
    const [first, second] = calls(messages);
    expect(resultText(messages, first!.toolCallId)).toBe('Applied edit to app.py');
    const failed = messages.flatMap(toolResultsOf).find((result) => result.toolCallId === second!.toolCallId);
    expect(failed?.output).toEqual({
      type: 'error-text',
      value: 'SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in app.py',
    });
    expect(textOf(messages.at(-1))).toContain('## SearchReplaceNoExactMatch: This SEARCH block failed');
  });
});

describe('aiderImporter.parse, newer aider output', () => {
  const { messages, metadata, context } = importText(fixture('aider-newer.chat-history.txt'));

  it('reads multi-line output entries whose continuation lines have no > prefix', () => {
    expect(messages[0]!.content).toContain(
      '/home/dev/.local/bin/aider --model deepseek/deepseek-reasoner --message fix the\n          failing build: run npm test first\nAider v0.74.2',
    );
    const runOutput = messages[2]!;
    expect(runOutput.metadata).toMatchObject({ aiderOutput: true });
    expect(runOutput.content).toBe(
      [
        '> widget@1.0.0 test',
        '> node --test',
        '',
        'not ok 1 - sums prices',
        '  expected: 30',
        '  actual: 29.999999999999996',
        'Add the output to the chat?',
        '(Y)es/(N)o [Yes]: y',
        'Added 9 lines of output to the chat.',
      ].join('\n'),
    );
    expect(messages[1]).toMatchObject({ role: 'user', content: '/run npm test' });
  });

  it('reads reasoning blocks, the whole edit format and diff-fenced blocks', () => {
    const first = messages[4] as AssistantMessage;
    expect(first.content).toEqual([
      { type: 'reasoning', text: 'Floating point: sum in cents, divide once.' },
      { type: 'text', text: 'Sum in integer cents:' },
      {
        type: 'tool-call',
        toolCallId: expect.any(String),
        toolName: 'write',
        input: {
          path: 'src/total.js',
          content:
            'export function total(prices) {\n  const cents = prices.reduce((sum, price) => sum + Math.round(price * 100), 0);\n  return cents / 100;\n}\n',
        },
      },
    ]);
    const writeCall = toolCallsOf(first)[0]!;
    expect(resultText(messages, writeCall.toolCallId)).toBe('Applied edit to src/total.js');
    expect(toolResultsOf(messages[5]!)[0]?.toolName).toBe('write');

    const second = messages[8] as AssistantMessage;
    expect((second.content as AssistantContentPart[])[0]).toEqual({
      type: 'reasoning',
      text: 'An empty list already gives 0; add a test only.',
    });
    const testCall = toolCallsOf(second)[0]!;
    expect(testCall.input).toEqual({
      path: 'test/total.test.js',
      search: '',
      replace:
        "import { total } from '../src/total.js';\nimport assert from 'node:assert';\nassert.equal(total([]), 0);\n",
    });
    expect(resultText(messages, testCall.toolCallId)).toBe('Applied edit to test/total.test.js');
  });

  it('takes model, edit format and version from the newer banner', () => {
    expect(metadata).toMatchObject({
      model: 'deepseek/deepseek-reasoner',
      extra: {
        sessionCount: 1,
        sessions: [expect.objectContaining({ editFormat: 'whole', aiderVersion: '0.74.2' })],
      },
    });
    expectValidWithoutRepairs(messages);
    expectStatsAddUp(context);
    const rendered = renderForProbes(messages).replace(/\s+/g, ' ');
    for (const line of contentLines(fixture('aider-newer.chat-history.txt'))) {
      if (!/THINKING|ANSWER|^-+$|thinking-content/.test(line)) expect(rendered).toContain(line);
    }
  });
});

describe('filesAddedToChat', () => {
  it('reads the files aider put into the chat: added, or listed and answered yes', () => {
    const output = [
      'Added src/Car.cs to the chat.',
      'Added 9 lines of output to the chat.',
      'Tokens: 3.2k sent, 222 received.',
      'package.json',
      "Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: y",
      'public/index.html',
      "Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: n",
      './tests/test_sqlite.py',
      'tests\\admin_views\\test_multidb.py',
      'Add these files to the chat? yes',
      'src/Car.cs',
      'Add file to the chat? (Y)es/(N)o [Yes]: y',
    ].join('\n');
    expect(filesAddedToChat(output)).toEqual([
      'src/Car.cs',
      'package.json',
      'tests/test_sqlite.py',
      'tests/admin_views/test_multidb.py',
    ]);
    expect(filesAddedToChat('Add these files to the chat? no\nAdded .aider* to .gitignore')).toEqual([]);
  });

  it('records them on the output message, which the ledger reads as reads', () => {
    const { messages } = importText(fixture('aider-classic.chat-history.txt'));
    expect(messages[4]!.metadata).toMatchObject({ contextFiles: ['app/text.py', 'tests/test_text.py'] });
  });
});

describe('aiderImporter.parse, malformed input', () => {
  it('keeps an edit block that never ends as text, with a warning naming line and record', () => {
    const { messages, context } = importText(fixture('aider-malformed.chat-history.txt'), {
      file: 'history.md',
    });
    expect(context.stats.skipped).toEqual({});
    expect(context.warnings).toEqual([
      expect.objectContaining({
        file: 'history.md',
        line: 11,
        record: 3,
        message: expect.stringContaining('SEARCH'),
      }),
    ]);
    expect(calls(messages)).toEqual([]);
    expect(textOf(messages[2])).toContain('<<<<<<< SEARCH\nversion="1.9.0",\n=======\nversion="2.0.0",');
    expect(messages.at(-1)?.content).toBe(
      'The LLM did not conform to the edit format.\nOnly 3 reflections allowed, stopping.',
    );
    expectValidWithoutRepairs(messages);
    expectStatsAddUp(context);
  });

  const damaged = [
    '# aider chat started at 2024-01-01 09:00:00',
    '',
    '> Aider v0.40.0  ',
    '',
    '#### hi  ',
    '',
    'hello',
    '',
    '# aider chat started at \u0000garbled',
    '',
    '> Aider v0.40.0  ',
    '> Models: gpt-4o with diff edit format  ',
    '',
    '#### again  ',
    '',
    'hello again',
    '',
  ].join('\n');

  it('skips a damaged session header with a counted warning; the session still starts', () => {
    const { messages, context, metadata } = importText(damaged, { file: 'history.md' });
    expect(context.stats.skipped).toEqual({ malformed: 1 });
    expect(context.warnings).toEqual([expect.objectContaining({ file: 'history.md', line: 9, record: 4 })]);
    expect(messages.map((message) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
      'user',
      'assistant',
    ]);
    expect(messages[3]).toMatchObject({ content: 'Aider v0.40.0\nModels: gpt-4o with diff edit format' });
    expect(metadata.extra?.sessionCount).toBe(2);
    expect(metadata.model).toBe('gpt-4o');
    expectStatsAddUp(context);
  });

  it('throws a TranscriptImportError naming file, line and record in strict mode', () => {
    let thrown: unknown;
    try {
      importText(damaged, { file: 'history.md', strict: true });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(TranscriptImportError);
    expect(thrown).toMatchObject({ code: 'invalid-transcript', file: 'history.md', line: 9, record: 4 });
    expect((thrown as Error).message).toMatch(/^history\.md:9, record 4: session header/);
  });
});

describe('aiderImporter.parse, robustness', () => {
  const pieces = [
    '# aider chat started at 2024-01-01 00:00:00',
    '#### do it  ',
    '####   ',
    '> Applied edit to a.py  ',
    '> 10 prompt tokens, 2 completion tokens, $0.01 cost  ',
    '> multi',
    'line  ',
    'a.py',
    '```python',
    '```',
    '<<<<<<< SEARCH',
    '=======',
    '>>>>>>> REPLACE',
    '<think>',
    '</think>',
    '► **THINKING**',
    '► **ANSWER**',
    '',
    'plain words',
    '日本語 ☕',
  ];

  it('never throws and always yields a valid conversation that keeps every piece of text', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 60 }), (lines) => {
        const text = lines.join('\n');
        const { messages, context } = importText(text);
        expect(validateMessages(messages, { provider: 'openai' }).issues).toEqual([]);
        expectStatsAddUp(context);
        const rendered = renderForProbes(messages);
        for (const word of ['plain words', '日本語 ☕', 'do it', 'multi']) {
          if (text.includes(word)) expect(rendered).toContain(word);
        }
      }),
      { numRuns: propertyRuns(300) },
    );
  });

  // These inputs are shared with bench/importers.bench.mjs, which measures their speed; here, what comes out
  // of them.
  it('reads large files and pathological ones without losing text', () => {
    const { messages, context } = importText(aiderLarge());
    expect(calls(messages)).toHaveLength(3000);
    expect(messages.at(-1)!.role).toBe('assistant');
    expect(messageText(messages.at(-1)!)).toBe(`\`\`\`\n${'y'.repeat(1_500_000)}\n\`\`\``);
    expect(context.warnings).toEqual([]);

    // Every block is unclosed: all of it stays the assistant's text, with one warning per block.
    const nasty = importText(aiderPathological());
    expect(nasty.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(calls(nasty.messages)).toEqual([]);
    expect(messageText(nasty.messages[1]!)).toBe(aiderUnclosedBlock.repeat(15_000).trimEnd());
    expect(nasty.context.warnings).toHaveLength(15_000);
  });
});

const sharedSessions = hasSharedSessions
  ? readdirSync(sessionsDir).filter((name) => name.startsWith('aider-md__'))
  : [];

describe.skipIf(!hasSharedSessions)('aiderImporter on the real aider sessions', () => {
  it.each(sharedSessions)('%s imports valid for OpenAI and keeps every probe fact', (session) => {
    const text = readFileSync(join(sessionsDir, session), 'utf8');
    const { messages, context, metadata } = importText(text, { file: session });
    const repairs = repairMessages(messages, { provider: 'openai' }).repairs;
    const survival = factSurvival(loadProbes(session), messages);
    console.log(
      `${session}: ${messages.length} messages, ${calls(messages).length} tool calls, ${repairs.length} repairs, ` +
        `facts ${survival.kept}/${survival.facts}, ${metadata.extra?.sessionCount} sessions, ` +
        `${context.stats.recordsRead} records, warnings ${context.warnings.length}`,
    );
    expect(repairs).toEqual([]);
    expect(validateMessages(messages, { provider: 'openai' }).valid).toBe(true);
    expect(survival.missing).toEqual([]);
    expect(survival.kept / survival.facts).toBeGreaterThanOrEqual(0.98);
    expectStatsAddUp(context);
    const rendered = renderForProbes(messages).replace(/\s+/g, ' ');
    expect(contentLines(text).filter((line) => !rendered.includes(line))).toEqual([]);
  });
});
