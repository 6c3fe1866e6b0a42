import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { fromOpenAI } from '../messages/convert/openai.js';
import { validateMessages } from '../messages/validate/index.js';
import { createTokenAccountant } from '../tokens/index.js';
import type { CliIo } from './cli-io.js';
import { parseBudget } from './commands/compress.js';
import { runCli } from './run-cli.js';

async function cli(...argv: string[]) {
  const io: CliIo & { out: string; err: string } = {
    out: '',
    err: '',
    isTerminal: false,
    env: {},
    stdout: (text) => {
      io.out += text;
    },
    stderr: (text) => {
      io.err += text;
    },
  };
  const exitCode = await runCli(argv, io);
  return { exitCode, stdout: io.out, stderr: io.err };
}

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
    for (const handle of handles) {
      const expanded = await cli('expand', handle, '--store', store, '--json');
      expect(expanded.exitCode, expanded.stderr).toBe(0);
      const entry = JSON.parse(expanded.stdout);
      expect(entry.handle).toBe(handle);
      if (entry.kind === 'tool-output' && entry.content.type === 'text') {
        // Stubbed tool outputs come back byte-identical to the transcript's tool message content.
        expect(original).toContain(JSON.stringify(entry.content.value));
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(0);
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
