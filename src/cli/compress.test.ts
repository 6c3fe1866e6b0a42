import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type LoopbackServer,
  openAIReply,
  startLoopbackServer,
} from '../llm/loopback-server.test-support.js';
import { fromOpenAI } from '../messages/convert/openai.js';
import { validateMessages } from '../messages/validate/index.js';
import { createTokenAccountant } from '../tokens/index.js';
import { parseBudget } from './commands/compress.js';
import { cli, cliWithEnv } from './run-cli.test-support.js';

const example = new URL('../../examples/transcripts/fix-retry-backoff.openai.json', import.meta.url).pathname;
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'precis-compress-'));
});

describe('precis compress / expand', () => {
  it('compresses to 10% as OpenAI messages, and every handle in the output expands to its original', async () => {
    const store = join(dir, 'archive.db');
    const result = await cli('compress', example, '--budget', '10%', '--to', 'openai', '--store', store);
    expect(result.stderr).toMatch(/compressed 35,765 → [\d,]+ tokens .*budget 3,576: met/);
    expect(result.stderr).toContain('stub-tool-outputs');
    expect(result.stderr).toContain(`archived in ${store}`);
    expect(result.exitCode).toBe(0);
    const output = JSON.parse(result.stdout);
    const conversation = fromOpenAI(output);
    expect(validateMessages(conversation.messages, { provider: 'openai' }).issues).toEqual([]);
    expect(
      createTokenAccountant({ provider: 'openai' }).countConversation(conversation).totalTokens,
    ).toBeLessThanOrEqual(3576);

    const handles = [...new Set(result.stdout.match(/h-[0-9a-f]{20}/g) ?? [])];
    expect(handles.length).toBeGreaterThan(0);
    const original = readFileSync(example, 'utf8');
    let checked = 0;
    let indexes = 0;
    // The summary names an index of what it archived: the handles it lists are followed too.
    for (let next = 0; next < handles.length; next++) {
      const handle = handles[next]!;
      const expanded = await cli('expand', handle, '--store', store, '--json');
      expect(expanded.exitCode, expanded.stderr).toBe(0);
      const entry = JSON.parse(expanded.stdout);
      expect(entry.handle).toBe(handle);
      if (entry.kind === 'index') {
        indexes++;
        for (const listed of entry.content) if (!handles.includes(listed)) handles.push(listed);
        const listing = await cli('expand', handle, '--store', store);
        for (const listed of entry.content) expect(listing.stdout).toContain(`\n- ${listed}: `);
      }
      if (entry.kind === 'tool-output' && entry.content.type === 'text') {
        // Stubbed tool outputs come back byte-identical to the transcript's tool message content.
        expect(original).toContain(JSON.stringify(entry.content.value));
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(0);
    expect(indexes).toBeGreaterThan(0);
    const text = await cli('expand', handles[0]!, '--store', store);
    expect(text.stdout).toMatch(new RegExp(`^Archived \\S+ ${handles[0]}`));
  });

  it('prints the full report as JSON with --report and keeps originals in memory with --no-store', async () => {
    const cwdStore = join(process.cwd(), '.precis', 'archive.db');
    const existed = existsSync(cwdStore);
    const result = await cli(
      'compress',
      example,
      '--budget',
      '5000',
      '--no-store',
      '--report',
      '--keep-recent',
      '1',
    );
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toContain('in memory only (--no-store): their handles cannot be expanded later');
    const json = result.stderr.slice(result.stderr.indexOf('\n{') + 1);
    const report = JSON.parse(json);
    expect(report).toMatchObject({ tokensBefore: 35765, budgetTokens: 5000, withinBudget: true });
    expect(report.actions.length).toBeGreaterThan(0);
    expect(existsSync(cwdStore)).toBe(existed);
    const output = JSON.parse(result.stdout);
    expect(output.messages.every((message: { id?: string }) => typeof message.id === 'string')).toBe(true);
  });

  it('merges into the summary of its own earlier output, read back as OpenAI messages', async () => {
    const first = await cli('compress', example, '--budget', '8%', '--to', 'openai', '--no-store');
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.stderr).not.toContain('read back from the text');
    const saved = join(dir, 'compressed.openai.json');
    writeFileSync(saved, first.stdout);
    const second = await cli('compress', saved, '--budget', '60%', '--no-store');
    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.stderr).toContain('a summary read back from the text (no precis metadata): merged into');
    const messages = JSON.parse(second.stdout).messages as Array<{ metadata?: { origin?: string } }>;
    expect(messages.filter((message) => message.metadata?.origin === 'summary')).toHaveLength(1);
  });

  it('runs the named strategies given with --strategy, in order', async () => {
    const result = await cli(
      'compress',
      example,
      '--budget',
      '50%',
      '--no-store',
      '--report',
      '--strategy',
      'stub-tool-outputs, fold-into-summary',
    );
    expect(result.exitCode).toBe(0);
    const report = JSON.parse(result.stderr.slice(result.stderr.indexOf('\n{') + 1));
    const names = [...new Set(report.strategies.map((strategy: { name: string }) => strategy.name))];
    expect(names[0]).toBe('stub-tool-outputs');
    expect(names.every((name) => name === 'stub-tool-outputs' || name === 'fold-into-summary')).toBe(true);
    const unknown = await cli(
      'compress',
      example,
      '--budget',
      '50%',
      '--no-store',
      '--strategy',
      'stub,fold',
    );
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toMatch(
      /--strategy.*unknown strategy "stub"; expected default or one of strip-reasoning, /,
    );
  });

  it('fails with budget-exceeded under --strict when the budget cannot be met', async () => {
    const result = await cli('compress', example, '--budget', '100', '--no-store', '--strict');
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(/budget-exceeded: could not compact to the budget of 100 tokens/);
    expect(result.stdout).toBe('');
  });

  it('keeps the recent turns within --recent-share of the room, as a share or a percentage', async () => {
    const run = (share: string) =>
      cli(
        'compress',
        example,
        '--budget',
        '10%',
        '--no-store',
        '--keep-recent',
        '4',
        '--recent-share',
        share,
      );
    const narrow = await run('0.05');
    expect(narrow.exitCode).toBe(0);
    expect(narrow.stderr).toMatch(/would take more than 5% of the \d+ tokens left beside the system prompt/);
    const wide = await run('100%');
    expect(wide.exitCode).toBe(0);
    expect(wide.stderr).not.toContain('recentTurnsMaxShare');
    for (const bad of ['0', '1.5', '150%', 'half']) {
      const rejected = await run(bad);
      expect(rejected.exitCode).toBe(2);
      expect(rejected.stderr).toContain(
        `--recent-share: expected a share above 0 and at most 1 (0.5 or 50%), got "${bad}"`,
      );
    }
  });

  it('rejects bad options and unknown handles', async () => {
    expect((await cli('compress', example)).exitCode).toBe(2);
    expect((await cli('compress', example, '--budget', '0%', '--no-store')).exitCode).toBe(2);
    expect((await cli('compress', example, '--budget', '10', '--store', 'x', '--no-store')).exitCode).toBe(2);
    const store = join(dir, 'archive.db');
    await cli('compress', example, '--budget', '50%', '--store', store);
    const missing = await cli('expand', 'h-00000000000000000000', '--store', store);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain('no archived original has the handle');
  });

  it('parses budgets as tokens or a share of the input', () => {
    expect(parseBudget('8000', 35765)).toBe(8000);
    expect(parseBudget('10%', 35765)).toBe(3576);
    expect(parseBudget('12.5%', 1000)).toBe(125);
    for (const bad of ['-5', '10 tokens', '150%', '0', '1e3']) expect(() => parseBudget(bad, 100)).toThrow();
  });
});

/** What an LLM answers for the anchored sections of a span. */
const sectionsReply = JSON.stringify({
  intent: '',
  constraints: [],
  decisions: [
    { decision: 'Retry with exponential backoff', rationale: 'the upstream API rate-limits bursts' },
  ],
  errorsAndFixes: [],
  failedApproaches: [],
  currentState: ['LLM-WRITTEN STATE: the backoff is in place'],
  tasks: [{ text: 'Add a test for the backoff', done: false }],
  nextSteps: [],
});

describe('precis compress --llm', () => {
  let server: LoopbackServer;
  beforeAll(async () => {
    server = await startLoopbackServer();
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(() => {
    server.reset();
  });

  const budget = '2000';
  const spec = () => `openai-compatible:${server.url}/v1#test-model`;

  function checkOutput(stdout: string, budgetTokens = 2000) {
    const conversation = fromOpenAI(JSON.parse(stdout));
    expect(validateMessages(conversation.messages, { provider: 'openai' }).issues).toEqual([]);
    expect(
      createTokenAccountant({ provider: 'openai' }).countConversation(conversation).totalTokens,
    ).toBeLessThanOrEqual(budgetTokens);
    return conversation;
  }

  it('folds old turns with llm-anchored through a real OpenAI-compatible endpoint and names the LLM', async () => {
    server.script(...Array.from({ length: 6 }, () => ({ body: openAIReply(sectionsReply) })));
    // A budget with room for the LLM's prose next to every ledger fact the deterministic summary shows.
    const roomyCompress = ['compress', example, '--budget', '8000', '--to', 'openai', '--no-store'];
    const result = await cli(...roomyCompress, '--llm', spec(), '--llm-timeout', '5000', '--report');
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toMatch(
      /^llm: openai-compatible:test-model \(1 summary written with it, 0 warnings\)$/m,
    );
    expect(result.stderr).toMatch(/budget 8,000: met/);
    expect(result.stderr).toContain('llm-anchored');
    // The LLM's items are in the summary (how many show depends on the room the budget leaves).
    expect(result.stdout).toContain('- [ ] Add a test for the backoff');
    expect(result.stderr).toMatch(/prose sections by openai-compatible:test-model \(\d+ calls?\)/);
    expect(result.stdout).toContain(
      'Retry with exponential backoff — because the upstream API rate-limits bursts',
    );
    checkOutput(result.stdout, 8000);

    expect(server.requests.length).toBeGreaterThanOrEqual(1);
    for (const request of server.requests) {
      expect(request.method).toBe('POST');
      expect(request.path).toBe('/v1/chat/completions');
      const body = request.body as {
        model: string;
        messages: Array<{ role: string; content: string }>;
        response_format: { type: string };
      };
      expect(body.model).toBe('test-model');
      expect(body.response_format.type).toBe('json_schema');
      expect(body.messages[0]?.role).toBe('system');
      expect(body.messages.at(-1)?.content).toContain('```transcript');
    }

    // PRECIS_LLM in the environment does the same without --llm.
    server.reset();
    server.script(...Array.from({ length: 6 }, () => ({ body: openAIReply(sectionsReply) })));
    const fromEnvironment = await cliWithEnv({ PRECIS_LLM: spec() }, ...roomyCompress);
    expect(fromEnvironment.exitCode, fromEnvironment.stderr).toBe(0);
    expect(fromEnvironment.stderr).toContain('llm: openai-compatible:test-model');
    expect(fromEnvironment.stdout).toContain('- [ ] Add a test for the backoff');
  });

  it('still returns a valid, within-budget result with a warning when the endpoint answers 500', async () => {
    const failure = {
      status: 500,
      headers: { 'retry-after': '0' },
      body: { error: { message: 'Internal meltdown' } },
    };
    server.script(...Array.from({ length: 12 }, () => failure));
    const result = await cli(
      'compress',
      example,
      '--budget',
      budget,
      '--to',
      'openai',
      '--no-store',
      '--llm',
      spec(),
    );
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toMatch(
      /^warning: the summarizer failed: openai-compatible: HTTP 500.*folded the span with the deterministic record instead/m,
    );
    expect(result.stderr).toMatch(
      /^llm: openai-compatible:test-model \(0 summaries written with it, [1-9]\d* warnings?\)$/m,
    );
    expect(result.stderr).toMatch(/budget 2,000: met/);
    const conversation = checkOutput(result.stdout);
    // The deterministic summary took over; no error text leaked into the conversation.
    expect(result.stdout).toContain('[precis summary of ');
    expect(result.stdout).not.toContain('Internal meltdown');
    expect(result.stdout).not.toContain('HTTP 500');
    expect(conversation.messages.length).toBeGreaterThan(0);
    expect(server.requests.length).toBeGreaterThanOrEqual(3);
  });

  // Each is rejected before any request reaches the endpoint. Options are thunks: the endpoint's URL is known
  // only once the server is up.
  it.each([
    {
      rejected: 'an LLM strategy without an LLM',
      options: () => ['--strategy', 'stub-tool-outputs,llm-anchored'],
      stderr: 'invalid-argument: --strategy: llm-anchored needs an LLM: pass --llm <spec>',
    },
    {
      rejected: 'an unknown provider',
      options: () => ['--llm', 'bogus:model'],
      stderr: /^invalid-argument: --llm: unknown provider in "bogus:model"/,
    },
    {
      rejected: 'a malformed --llm-timeout',
      options: () => ['--llm', spec(), '--llm-timeout', 'soon'],
      stderr: '--llm-timeout: expected a positive number of milliseconds',
    },
    {
      rejected: '--llm-timeout without an LLM',
      options: () => ['--llm-timeout', '100'],
      stderr: '--llm-timeout: needs an LLM',
    },
    {
      rejected: 'a provider without its API key',
      options: () => ['--llm', 'openai:gpt-4o-mini'],
      stderr: 'OPENAI_API_KEY',
    },
  ])('rejects $rejected, naming the option', async ({ options, stderr }) => {
    const result = await cli('compress', example, '--budget', budget, '--no-store', ...options());
    expect(result.exitCode).toBe(2);
    // A string matches as a substring.
    expect(result.stderr).toMatch(stderr);
    expect(server.requests).toEqual([]);
  });
});
