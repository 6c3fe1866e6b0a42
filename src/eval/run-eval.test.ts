import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors/index.js';
import { fromOpenAI } from '../messages/convert/openai.js';
import { createTokenAccountant } from '../tokens/index.js';
import { fullContextCompressor, headTailCompressor, truncationCompressor } from './compressors.js';
import { loadProbeFile } from './probes.js';
import { type EvalSession, evaluateSessions } from './run-eval.js';

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
