import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { beforeAll, describe, expect, it } from 'vitest';
import { fromOpenAI } from '../messages/convert/openai.js';
import { validateMessages } from '../messages/validate/index.js';
import { cli } from './run-cli.test-support.js';

let dir: string;
const openAIChat = [
  { role: 'system', content: 'You are a coding agent.' },
  { role: 'user', content: 'Fix the failing test in src/retry.ts' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [
      {
        id: 'call_a',
        type: 'function',
        function: { name: 'read_file', arguments: '{"path":"src/retry.ts"}' },
      },
      { id: 'call_b', type: 'function', function: { name: 'bash', arguments: '{"command":"npm test"}' } },
    ],
  },
  { role: 'tool', tool_call_id: 'call_a', content: 'export function retry() {\n  return 1;\n}\n' },
  {
    role: 'tool',
    tool_call_id: 'call_b',
    content: 'FAIL src/retry.test.ts > retries 3 times\nexpected 3, got 1',
  },
  { role: 'assistant', content: 'The loop exits early; I will fix it.' },
];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'precis-cli-'));
  writeFileSync(join(dir, 'chat.json'), JSON.stringify(openAIChat, null, 2));
  writeFileSync(join(dir, 'broken.json'), '[\n  {"role": "user", "content": "hi"},\n  {"role": \n]');
  writeFileSync(
    join(dir, 'bad-role.json'),
    JSON.stringify([
      { role: 'user', content: 'a' },
      { role: 'robot', content: 'b' },
    ]),
  );
  // A tool result whose call is missing, and a call that never got a result.
  writeFileSync(
    join(dir, 'broken-pairs.json'),
    JSON.stringify([
      { role: 'user', content: 'go' },
      { role: 'tool', tool_call_id: 'ghost', content: 'orphan' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } },
        ],
      },
      { role: 'user', content: 'and?' },
    ]),
  );
});

describe('precis --help and errors', () => {
  it('prints help and version', async () => {
    const help = await cli('--help');
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toMatch(/Commands:\n {2}count/);
    expect((await cli('--version')).stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    expect((await cli('count', '--help')).stdout).toMatch(/^Usage: precis count <file>/);
  });

  it('rejects unknown commands and options with code: message', async () => {
    const unknown = await cli('squash', 'x.json');
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toMatch(/^invalid-argument: unknown command "squash"/);
    const option = await cli('count', join(dir, 'chat.json'), '--colour');
    expect(option.exitCode).toBe(2);
    expect(option.stderr).toMatch(/^invalid-argument: --colour: /);
    const to = await cli('convert', join(dir, 'chat.json'), '--to', 'gemini');
    expect(to.stderr).toBe(
      'invalid-argument: --to: "gemini" is not one of openai, anthropic, ai-sdk, precis\n',
    );
  });

  it('names file, line and column of malformed JSON and exits 65', async () => {
    const result = await cli('count', join(dir, 'broken.json'));
    expect(result.exitCode).toBe(65);
    expect(result.stderr).toMatch(new RegExp(`^invalid-json: ${join(dir, 'broken.json')}:4:1: invalid JSON`));
  });

  it('skips a malformed message with a warning naming it, or fails on it with --strict', async () => {
    const lenient = await cli('count', join(dir, 'bad-role.json'));
    expect(lenient.exitCode).toBe(0);
    expect(lenient.stderr).toMatch(/2 records: 1 used, 1 skipped \(1 malformed\)/);
    expect(lenient.stderr).toMatch(/warning: .*unknown role "robot"/);
    const strict = await cli('count', join(dir, 'bad-role.json'), '--strict');
    expect(strict.exitCode).toBe(65);
    expect(strict.stderr).toMatch(/^invalid-transcript: .*bad-role\.json.*unknown role "robot"/);
  });

  it('reports a missing file as io-error', async () => {
    const result = await cli('count', join(dir, 'nope.json'));
    expect(result.exitCode).toBe(66);
    expect(result.stderr).toMatch(/^io-error: .*nope\.json: no such file/);
  });
});

describe('precis count', () => {
  it('counts content exactly in o200k and breaks it down', async () => {
    const result = await cli('count', join(dir, 'chat.json'), '--json');
    expect(result.exitCode).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.format).toBe('openai');
    expect(report.messageCount).toBe(6);
    // Content = exact o200k of each piece of text the messages carry.
    const pieces = [
      'You are a coding agent.',
      'Fix the failing test in src/retry.ts',
      'export function retry() {\n  return 1;\n}\n',
      'FAIL src/retry.test.ts > retries 3 times\nexpected 3, got 1',
      'The loop exits early; I will fix it.',
    ];
    const textTokens = pieces.reduce((sum, text) => sum + countTokens(text), 0);
    expect(report.contentTokens).toBeGreaterThanOrEqual(textTokens);
    expect(report.totalTokens).toBe(
      report.contentTokens + report.framingTokens + report.toolSchemaTokens + report.replyPrimingTokens,
    );
    expect(report.byTool.read_file.callCount).toBe(1);
    expect(report.byTool.bash.resultCount).toBe(1);
    expect(report.largestMessages[0].tokens ?? report.largestMessages[0].totalTokens).toBeGreaterThan(0);
  });

  it('agrees exactly with o200k on the text of a plain conversation', async () => {
    const texts = [
      'Résumé the café’s 3 failing tests 🚀',
      'const x = { "a": [1, 2.5e3] };\n\tconsole.log(x)',
      '日本語のテキストも数えます。',
    ];
    const file = join(dir, 'plain.json');
    writeFileSync(
      file,
      JSON.stringify(texts.map((content, i) => ({ role: i % 2 ? 'assistant' : 'user', content }))),
    );
    const report = JSON.parse((await cli('count', file, '--json')).stdout);
    expect(report.contentTokens).toBe(texts.reduce((sum, text) => sum + countTokens(text), 0));
  });

  it('prints a readable table with window usage for a known model', async () => {
    const result = await cli('count', join(dir, 'chat.json'), '--model', 'gpt-4o');
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/tokens \(o200k_base, openai framing\)/);
    expect(result.stdout).toMatch(
      /gpt-4o: \d+\.\d% of 111,616 usable tokens \(128,000 window - 16,384 output reserve\)/,
    );
    expect(result.stdout).toMatch(/By tool\ntool +calls +results +tokens +share/);
    expect(result.stdout).toMatch(/Largest messages \(top 6\)/);
  });

  it('needs an explicit window for an unknown model', async () => {
    const result = await cli('count', join(dir, 'chat.json'), '--model', 'my-local-llm');
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/^unknown-model: unknown model "my-local-llm"/m);
    expect(
      (await cli('count', join(dir, 'chat.json'), '--model', 'my-local-llm', '--context-window', '32768'))
        .exitCode,
    ).toBe(0);
  });
});

describe('precis convert', () => {
  it('round-trips OpenAI through Anthropic and precis with nothing lost', async () => {
    const anthropic = await cli(
      'convert',
      join(dir, 'chat.json'),
      '--to',
      'anthropic',
      '--out',
      join(dir, 'chat.anthropic.json'),
    );
    expect(anthropic.exitCode).toBe(0);
    expect(anthropic.stderr).toContain('read ');
    const body = JSON.parse(readFileSync(join(dir, 'chat.anthropic.json'), 'utf8'));
    expect(body.system).toBe('You are a coding agent.');
    expect(body.messages[1].content.map((block: { type: string }) => block.type)).toEqual([
      'tool_use',
      'tool_use',
    ]);
    expect(body.messages[2].content.map((block: { type: string }) => block.type)).toEqual([
      'tool_result',
      'tool_result',
    ]);

    const back = await cli('convert', join(dir, 'chat.anthropic.json'), '--to', 'openai');
    expect(back.exitCode).toBe(0);
    const messages = JSON.parse(back.stdout);
    expect(Array.isArray(messages)).toBe(true);
    expect(messages.map((m: { role: string }) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'tool',
      'assistant',
    ]);
    expect(messages[4].content).toBe(openAIChat[4]!.content);
  });

  it('writes precis with ids and AI SDK without them', async () => {
    const precis = JSON.parse((await cli('convert', join(dir, 'chat.json'), '--to', 'precis')).stdout);
    expect(precis.messages.every((m: { id?: string }) => typeof m.id === 'string')).toBe(true);
    const aiSdk = JSON.parse((await cli('convert', join(dir, 'chat.json'), '--to', 'ai-sdk')).stdout);
    expect(aiSdk.some((m: { id?: string }) => 'id' in m)).toBe(false);
    expect(aiSdk[2].content[0]).toMatchObject({
      type: 'tool-call',
      toolName: 'read_file',
      input: { path: 'src/retry.ts' },
    });
  });

  it('repairs for the target and reports every repair on stderr', async () => {
    const result = await cli('convert', join(dir, 'broken-pairs.json'), '--to', 'openai');
    expect(result.exitCode).toBe(0);
    const repairs = result.stderr.split('\n').filter((line) => line.startsWith('repair: '));
    expect(repairs.length).toBeGreaterThanOrEqual(2);
    expect(result.stderr).toMatch(/repair: message 1: dropped tool message 1/);
    const output = JSON.parse(result.stdout);
    expect(validateMessages(fromOpenAI(output).messages, { provider: 'openai' }).valid).toBe(true);
    expect(
      output.find((m: { role: string; tool_call_id?: string }) => m.tool_call_id === 'c1')?.content,
    ).toBe('[no result recorded]');
  });
});
