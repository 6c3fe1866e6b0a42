import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors/index.js';
import { fromOpenAI } from '../messages/convert/openai.js';
import { createScriptedLlmClient } from '../testing/scripted-llm-client.js';
import { createTokenAccountant } from '../tokens/index.js';
import { fullContextCompressor, headTailCompressor, truncationCompressor } from './compressors.js';
import { createEvalCache } from './eval-cache.js';
import { createJudge, judgeRubric } from './judge.js';
import { loadProbeFile } from './probes.js';
import { type EvalSession, evaluateSessions, runEval } from './run-eval.js';

const examples = join(import.meta.dirname, '..', '..', 'examples', 'transcripts');
const session: EvalSession = {
  name: 'fix-retry-backoff.openai.json',
  conversation: fromOpenAI(JSON.parse(readFileSync(join(examples, 'fix-retry-backoff.openai.json'), 'utf8'))),
  probes: loadProbeFile(join(examples, 'fix-retry-backoff.probes.json')).probes,
};
const accountant = createTokenAccountant();
const compressors = [fullContextCompressor, truncationCompressor, headTailCompressor];

describe('evaluateSessions', () => {
  it('on the shipped example: full context passes every probe, truncation at 10% far fewer', () => {
    const report = evaluateSessions({ sessions: [session], compressors, budget: { ratio: 0.1 }, accountant });
    expect(report.compressors).toEqual(['full', 'truncation', 'head+tail']);
    const [full, truncation, headTail] = report.results;
    const probes = session.probes.length;
    expect(full).toMatchObject({ compressor: 'full', withinBudget: false, ratio: 1 });
    expect(full!.total).toMatchObject({ passed: probes, probes, passRate: 1, factSurvival: 1 });
    for (const type of ['recall', 'artifact', 'decision', 'continuation'] as const)
      expect(full!.byType[type].passRate).toBe(1);

    expect(truncation!.budgetTokens).toBe(Math.floor(truncation!.tokensBefore * 0.1));
    expect(truncation!.withinBudget).toBe(true);
    expect(truncation!.ratio).toBeLessThanOrEqual(0.1);
    expect(truncation!.total.passRate).toBeLessThan(0.5);
    expect(headTail!.withinBudget).toBe(true);
    expect(headTail!.total.passRate).toBeLessThan(1);
    // Fact survival and pass rate agree with the per-probe results.
    expect(truncation!.total.passed).toBe(truncation!.probes.filter((probe) => probe.passed).length);

    expect(report.totals.map((total) => [total.compressor, total.total.passed])).toEqual(
      report.results.map((result) => [result.compressor, result.total.passed]),
    );
  });

  it('is deterministic apart from time, and sums totals over sessions', () => {
    const run = () =>
      evaluateSessions({
        sessions: [session, { ...session, name: 'again' }],
        compressors,
        budget: { tokens: 4000 },
        accountant,
        clock: () => 0,
      });
    const report = run();
    expect(JSON.stringify(report)).toBe(JSON.stringify(run()));
    const truncation = report.totals.find((total) => total.compressor === 'truncation')!;
    const single = report.results.find((result) => result.compressor === 'truncation')!;
    expect(truncation).toMatchObject({
      sessions: 2,
      tokensBefore: 2 * single.tokensBefore,
      tokensAfter: 2 * single.tokensAfter,
      withinBudget: 2,
      timeMs: 0,
    });
    expect(truncation.total.passed).toBe(2 * single.total.passed);
    expect(truncation.total.passRate).toBeCloseTo(single.total.passRate);
    expect(truncation.byType.recall.probes).toBe(2 * single.byType.recall.probes);
  });

  it('rejects unusable budgets and duplicate compressor names', () => {
    const base = { sessions: [session], compressors, accountant };
    expect(() => evaluateSessions({ ...base, budget: { ratio: 0 } })).toThrow(InvalidArgumentError);
    expect(() => evaluateSessions({ ...base, budget: { ratio: 1.5 } })).toThrow(/budget.ratio/);
    expect(() => evaluateSessions({ ...base, budget: { tokens: -3 } })).toThrow(/budget.tokens/);
    expect(() =>
      evaluateSessions({
        ...base,
        compressors: [truncationCompressor, truncationCompressor],
        budget: { ratio: 0.1 },
      }),
    ).toThrow(/two compressors are named "truncation"/);
    expect(() => evaluateSessions({ ...base, compressors: [], budget: { ratio: 0.1 } })).toThrow(
      /at least one/,
    );
  });
});

describe('evaluateSessions at compression points', () => {
  it('reports every point; the top-level numbers are the last point’s', () => {
    const report = evaluateSessions({
      sessions: [session],
      compressors: [truncationCompressor],
      budget: { ratio: 0.2 },
      points: [1, 0.5],
      accountant,
      clock: () => 0,
    });
    expect(report.points).toEqual([0.5, 1]);
    const [result] = report.results;
    expect(result!.points.map((point) => point.point)).toEqual([0.5, 1]);
    const [half, end] = result!.points;
    expect(half!.total.probes).toBeLessThan(end!.total.probes);
    expect(end!.total.probes).toBe(session.probes.length);
    expect(result).toMatchObject({ tokensBefore: end!.tokensBefore, total: end!.total, probes: end!.probes });
    expect(half!.tokensBefore).toBeLessThan(end!.tokensBefore);
    expect(() =>
      evaluateSessions({ sessions: [session], compressors, budget: { ratio: 0.2 }, points: [0] }),
    ).toThrow(/points/);
  });
});

/** A scripted answerer + judge: answers name the probe's question; every criterion gets `score`. */
function scriptedJudgeClient(score: (question: string) => number | 'invalid', onCall = () => {}) {
  return createScriptedLlmClient({
    id: 'scripted:judge',
    whenExhausted: 'repeat-last',
    script: [
      async (request) => {
        onCall();
        await new Promise((resolve) => setTimeout(resolve, 1));
        const prompt = request.messages[0]!.content as string;
        if (request.jsonSchema === undefined) return `answer to: ${prompt}`;
        const question = prompt.split('\n')[1]!;
        const value = score(question);
        if (value === 'invalid') return 'no idea';
        return JSON.stringify(
          Object.fromEntries(judgeRubric.map((criterion) => [criterion.id, { reason: 'r', score: value }])),
        );
      },
    ],
  });
}

describe('runEval with a judge', () => {
  const small = { ...session, probes: session.probes.slice(0, 3) };

  it('judges every probe at every point, blind to the compressor, and summarises the scores', async () => {
    const [first, second, third] = small.probes;
    const client = scriptedJudgeClient((question) =>
      question === first!.question ? 5 : question === second!.question ? 2 : 'invalid',
    );
    const judge = createJudge({ client });
    const named = { ...truncationCompressor, name: 'zebra-strategy' };
    const report = await runEval({
      sessions: [small],
      compressors: [named],
      budget: { ratio: 0.3 },
      judge,
      accountant,
      clock: () => 0,
    });
    expect(report.judge).toBe(judge.id);
    const result = report.results[0]!;
    const verdicts = result.probes.map((probe) => probe.judge?.status);
    expect(verdicts).toEqual(['scored', 'scored', 'invalid']);
    expect(result.probes.find((probe) => probe.id === third!.id)!.judge).not.toHaveProperty('overall');
    // Means over the scored probes only: (5 + 2) / 2; the invalid one is counted, never scored as 0.
    expect(result.judge).toMatchObject({ scored: 2, invalid: 1, failed: 0, overall: 3.5 });
    expect(result.judge!.dimensions.continuity).toBe(3.5);
    expect(report.totals[0]!.judge).toEqual(result.judge);
    // 3 answers + 2 judge calls for the scored + 2 for the invalid one (retried once).
    expect(client.calls).toHaveLength(3 + 2 + 2);
    expect(JSON.stringify(client.calls)).not.toContain('zebra');
  });

  it('keeps to the concurrency limit, caches scored verdicts, and records failed calls', async () => {
    let inFlight = 0;
    let most = 0;
    const client = createScriptedLlmClient({
      whenExhausted: 'repeat-last',
      script: [
        async (request) => {
          inFlight++;
          most = Math.max(most, inFlight);
          await new Promise((resolve) => setTimeout(resolve, 2));
          inFlight--;
          if (request.jsonSchema === undefined) return 'an answer';
          return JSON.stringify(
            Object.fromEntries(judgeRubric.map((criterion) => [criterion.id, { reason: 'r', score: 4 }])),
          );
        },
      ],
    });
    const path = join(mkdtempSync(join(tmpdir(), 'precis-run-eval-')), 'cache.jsonl');
    const progress: string[] = [];
    const options = {
      sessions: [small],
      compressors: [truncationCompressor, headTailCompressor],
      budget: { ratio: 0.3 },
      points: [0.5, 1],
      judge: createJudge({ client }),
      concurrency: 2,
      accountant,
      clock: () => 0,
    };
    const report = await runEval({
      ...options,
      cache: createEvalCache({ path }),
      onProgress: ({ phase, done, total }) => progress.push(`${phase} ${done}/${total}`),
    });
    expect(most).toBe(2);
    const judged = report.results.flatMap((result) => result.points.flatMap((point) => point.probes));
    expect(judged.every((probe) => probe.judge?.status === 'scored')).toBe(true);
    expect(progress[0]).toBe('compress 1/2');
    expect(progress.at(-1)).toBe(`judge ${judged.length}/${judged.length}`);
    const calls = client.calls.length;
    expect(calls).toBe(2 * judged.length);

    // A re-run reads every verdict from the cache: no call at all, the same report.
    const again = await runEval({ ...options, cache: createEvalCache({ path }) });
    expect(client.calls.length).toBe(calls);
    expect(again).toEqual(report);

    const failing = createScriptedLlmClient({
      script: [{ error: new Error('connection reset') }],
      whenExhausted: 'repeat-last',
    });
    const failed = await runEval({ ...options, judge: createJudge({ client: failing }), points: [1] });
    expect(failed.results[0]!.probes[0]!.judge).toEqual({ status: 'failed', error: 'connection reset' });
    expect(failed.totals[0]!.judge).toMatchObject({ scored: 0, failed: 3 });
    await expect(runEval({ ...options, concurrency: 0 })).rejects.toThrow(/concurrency/);
  });
});
