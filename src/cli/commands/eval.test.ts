import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { judgeRubric } from '../../eval/judge.js';
import type { EvalReport } from '../../eval/run-eval.js';
import { cli } from '../run-cli.test-support.js';
import {
  belowMinPass,
  findProbeFile,
  parseBudget,
  parseBudgets,
  parseMinPass,
  parsePoints,
  renderProgressBar,
} from './eval.js';

const examples = join(import.meta.dirname, '..', '..', '..', 'examples', 'transcripts');
const session = join(examples, 'fix-retry-backoff.openai.json');

/** Runs `precis eval` on the shipped example with its probe file, at `budget`, with further `options`. */
function evalWithProbes(budget: string, ...options: string[]) {
  return cli('eval', session, '--probes', examples, '--budget', budget, ...options);
}

/** Runs `precis eval` on the shipped example with generated probes, at `budget`, with further `options`. */
function evalGenerating(budget: string, ...options: string[]) {
  return cli('eval', session, '--generate', '--budget', budget, ...options);
}

describe('precis eval', () => {
  it('prints a side-by-side table of probe pass rates for the shipped example', async () => {
    const { exitCode, stdout, stderr } = await evalWithProbes('10%');
    expect(stderr).toContain('read ');
    expect(exitCode).toBe(0);
    expect(stdout).toContain('Probes passed at a budget of 10% of each session');
    expect(stdout).toMatch(/session\s+tokens\s+budget\s+truncation\s+head\+tail\s+precis/);
    expect(stdout).toMatch(/fix-retry-backoff\.openai\.json\s+[\d,]+\s+[\d,]+\s+\d+\/12 \d+%/);
    for (const row of [
      'recall',
      'artifact',
      'decision',
      'continuation',
      'first_offset <0.35',
      'fact survival',
    ])
      expect(stdout).toContain(row);
  });

  it('--json gives the full report', async () => {
    const { exitCode, stdout } = await evalWithProbes('3000', '--json');
    expect(exitCode).toBe(0);
    const report = JSON.parse(stdout) as EvalReport;
    expect(report.budget).toEqual({ tokens: 3000 });
    expect(report.compressors).toEqual(['truncation', 'head+tail', 'precis']);
    expect(report.results).toHaveLength(3);
    for (const result of report.results) {
      expect(result.budgetTokens).toBe(3000);
      expect(result.probes).toHaveLength(12);
    }
  });

  it('runs several budgets and writes the markdown and HTML reports beside the usual output', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'precis-eval-report-'));
    const markdown = join(directory, 'report.md');
    const html = join(directory, 'report.html');
    const { exitCode, stdout, stderr } = await evalWithProbes(
      '5%,3000',
      '--json',
      '--markdown',
      markdown,
      '--report',
      html,
    );
    expect(exitCode).toBe(0);
    expect(stderr).toContain(`wrote ${markdown}`);
    expect(stderr).toContain(`wrote ${html}`);
    const reports = JSON.parse(stdout) as EvalReport[];
    expect(reports.map((report) => report.budget)).toEqual([{ ratio: 0.05 }, { tokens: 3000 }]);

    const text = readFileSync(markdown, 'utf8');
    expect(text).toContain('## Pass rate by budget');
    expect(text).toContain('## Budget: 5% of each session');
    expect(text).toContain('## Budget: 3,000 tokens');
    expect(text).toContain('| `fix-retry-backoff.openai.json` |');
    const page = readFileSync(html, 'utf8');
    expect(page.startsWith('<!doctype html>')).toBe(true);
    // 12 probes per budget in the drill-down, with their questions from the probe file.
    expect(page.match(/<details class="probe"/g)).toHaveLength(24);
    expect(page).toContain('Reference answer.');

    const tables = await evalWithProbes('5%,10%');
    expect(tables.stdout).toContain('Probes passed at a budget of 5% of each session');
    expect(tables.stdout).toContain('Probes passed at a budget of 10% of each session');
  });

  it('fails with io-error when a report cannot be written', async () => {
    const missingDirectory = join(mkdtempSync(join(tmpdir(), 'precis-eval-')), 'no', 'report.html');
    const { exitCode, stderr } = await evalWithProbes('10%', '--report', missingDirectory);
    expect(exitCode).toBe(66);
    expect(stderr).toContain(`io-error: ${missingDirectory}`);
  });

  it('fails clearly on a missing probe file, a bad budget, or missing options', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'precis-eval-'));
    const missing = await cli('eval', session, '--probes', empty, '--budget', '10%');
    expect(missing.exitCode).toBe(66);
    expect(missing.stderr).toContain('no probe file');
    expect(missing.stderr).toContain(join(empty, 'fix-retry-backoff.probes.json'));

    writeFileSync(join(empty, 'fix-retry-backoff.probes.json'), '{"session": "x", "probes": [{}]}');
    const malformed = await cli('eval', session, '--probes', empty, '--budget', '10%');
    expect(malformed.exitCode).toBe(2);
    expect(malformed.stderr).toContain('field probes[0].id');

    expect((await evalWithProbes('150%')).exitCode).toBe(2);
    expect((await cli('eval', session, '--budget', '10%')).stderr).toContain('--probes');
    expect((await cli('eval', session, '--probes', examples)).stderr).toContain('--budget');
    expect((await cli('eval', '--probes', examples, '--budget', '5%')).exitCode).toBe(2);
  });
});

describe('parseBudget and findProbeFile', () => {
  it('reads shares and token counts', () => {
    expect(parseBudget('10%')).toEqual({ ratio: 0.1 });
    expect(parseBudget('2.5%')).toEqual({ ratio: 0.025 });
    expect(parseBudget('8000')).toEqual({ tokens: 8000 });
    for (const bad of ['0%', '101%', '-5', 'ten', '0', '1.5'])
      expect(() => parseBudget(bad)).toThrow(/--budget/);
  });

  it('reads a comma-separated list of budgets, each once', () => {
    expect(parseBudgets('10%')).toEqual([{ ratio: 0.1 }]);
    expect(parseBudgets('5%,10%,8000')).toEqual([{ ratio: 0.05 }, { ratio: 0.1 }, { tokens: 8000 }]);
    expect(() => parseBudgets('5%,,10%')).toThrow(/--budget/);
    expect(() => parseBudgets('10%,10.0%')).toThrow(/10% is given twice/);
  });

  it('tries the full file name first, then one extension less at a time', () => {
    const directory = mkdtempSync(join(tmpdir(), 'precis-probes-'));
    writeFileSync(join(directory, 'a.probes.json'), '{}');
    expect(findProbeFile(directory, '/x/a.openai.json')).toBe(join(directory, 'a.probes.json'));
    writeFileSync(join(directory, 'a.openai.json.probes.json'), '{}');
    expect(findProbeFile(directory, '/x/a.openai.json')).toBe(join(directory, 'a.openai.json.probes.json'));
  });
});

describe('precis eval: strategies, points, generated probes, CI gate', () => {
  it('--strategies picks from the registry and always adds truncation as the baseline', async () => {
    const { exitCode, stdout } = await evalWithProbes(
      '10%',
      '--strategies',
      'precis,extractive,stubs-only',
      '--json',
    );
    expect(exitCode).toBe(0);
    const report = JSON.parse(stdout) as EvalReport;
    expect(report.compressors).toEqual(['truncation', 'precis', 'extractive', 'stubs-only']);
    const unknown = await evalWithProbes('10%', '--strategies', 'magic');
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain(
      '--strategies: unknown strategy "magic": expected one of truncation, head+tail',
    );
  });

  it('--generate derives probes from the session; --points evaluates the prefixes', async () => {
    const { exitCode, stdout } = await evalGenerating(
      '20%',
      '--points',
      '50%,1',
      '--strategies',
      'truncation,precis',
    );
    expect(exitCode).toBe(0);
    expect(stdout).toContain('at 50% of the session');
    expect(stdout).toContain('at 100% of the session');
    const json = await evalGenerating('20%', '--points', '0.5,1', '--json');
    const report = JSON.parse(json.stdout) as EvalReport;
    expect(report.points).toEqual([0.5, 1]);
    expect(report.results[0]!.points).toHaveLength(2);
    expect(report.results[0]!.probes.map((probe) => probe.id)).toContain('task');
    const both = await cli('eval', session, '--generate', '--probes', examples, '--budget', '10%');
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toContain('--generate');
  });

  it('--min-pass exits 1 when a strategy other than truncation is below, 0 otherwise', async () => {
    const strict = await evalWithProbes('5%', '--min-pass', '0.99');
    expect(strict.exitCode).toBe(1);
    expect(strict.stderr).toMatch(/below --min-pass 0\.99: precis passed \d+\/12/);
    expect(strict.stderr).not.toContain('truncation passed');
    const lenient = await evalWithProbes('5%', '--min-pass', '0%');
    expect(lenient.exitCode).toBe(0);
    expect((await evalWithProbes('5%', '--min-pass', '2')).exitCode).toBe(2);
  });

  it('names a file that is not a session, and an unconfigured judge, with a clear error', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'precis-eval-'));
    const notes = join(directory, 'notes.md');
    writeFileSync(notes, '# Notes\n\nNothing here.\n');
    const notSession = await cli('eval', notes, '--generate', '--budget', '10%');
    expect(notSession.exitCode).not.toBe(0);
    expect(notSession.stderr).toContain(`${notes} is not a session transcript`);
    const judge = await evalGenerating('10%', '--judge', 'anthropic:claude-haiku-4-5');
    expect(judge.exitCode).toBe(2);
    expect(judge.stderr).toContain('ANTHROPIC_API_KEY');
  });
});

describe('precis eval --judge against an OpenAI-compatible endpoint', () => {
  it('runs the answerer and the blind judge over HTTP and reports the rubric scores', async () => {
    const requests: Array<{ messages: Array<{ content: unknown }>; response_format?: unknown }> = [];
    // Answers like a chat completions server: a JSON reply (scores of 4) when asked for JSON, prose otherwise.
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        requests.push(body);
        const content =
          body.response_format === undefined
            ? 'The retry delay is capped at 1000 ms in src/retry.ts.'
            : JSON.stringify(
                Object.fromEntries(
                  judgeRubric.map((criterion) => [criterion.id, { reason: 'Mostly there.', score: 4 }]),
                ),
              );
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            id: 'chatcmpl-1',
            model: body.model,
            choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const result = await evalWithProbes(
        '10%',
        '--strategies',
        'precis',
        '--judge',
        `openai-compatible:http://127.0.0.1:${port}/v1#judge-model`,
        '--concurrency',
        '2',
        '--json',
      );
      expect(result.stderr).not.toMatch(/error/i);
      expect(result.exitCode).toBe(0);
      const report = JSON.parse(result.stdout) as EvalReport;
      // Two compressors (precis and the truncation baseline) × 12 probes, each answered and judged.
      expect(requests.filter((request) => request.response_format === undefined)).toHaveLength(24);
      expect(requests.filter((request) => request.response_format !== undefined)).toHaveLength(24);
      for (const total of report.totals) {
        expect(total.judge).toMatchObject({ scored: 12, invalid: 0, failed: 0, overall: 4 });
        expect(Object.values(total.judge?.dimensions ?? {})).toEqual([4, 4, 4, 4, 4, 4]);
      }
      // Blind: no request names the strategy being judged.
      for (const request of requests)
        expect(JSON.stringify(request.messages)).not.toMatch(/truncation|precis compressor/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('option parsers and the progress bar', () => {
  it('reads points and --min-pass as shares or percentages', () => {
    expect(parsePoints('1,0.25,50%')).toEqual([0.25, 0.5, 1]);
    for (const bad of ['0', '1.5', 'half', '', '0.5,,1']) expect(() => parsePoints(bad)).toThrow(/--points/);
    expect(parseMinPass('0.5')).toBe(0.5);
    expect(parseMinPass('75%')).toBe(0.75);
    for (const bad of ['-1', '1.2', 'x', '150%']) expect(() => parseMinPass(bad)).toThrow(/--min-pass/);
  });

  it('draws a bar of the done share', () => {
    expect(renderProgressBar({ phase: 'judge', done: 3, total: 12, cached: 2 }, '10%', 8)).toBe(
      '[##------] 3/12 judge 10%, 2 cached',
    );
    expect(renderProgressBar({ phase: 'compress', done: 0, total: 0, cached: 0 }, '5%', 4)).toBe(
      '[####] 0/0 compress 5%',
    );
  });

  it('belowMinPass ignores truncation', () => {
    const tally = (passRate: number) => ({
      passed: 0,
      probes: 1,
      passRate,
      factsKept: 0,
      facts: 0,
      factSurvival: 0,
    });
    const report = {
      budget: { ratio: 0.1 },
      totals: [
        { compressor: 'truncation', total: tally(0) },
        { compressor: 'precis', total: tally(0.6) },
      ],
    } as unknown as EvalReport;
    expect(belowMinPass([report], 0.5)).toEqual([]);
    expect(belowMinPass([report], 0.7)).toEqual(['precis passed 0/1 (60.0%) at 10%']);
  });
});
