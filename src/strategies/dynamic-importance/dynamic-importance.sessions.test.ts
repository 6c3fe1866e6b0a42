import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasSharedSessions, loadProbes, sessionsDir } from '../../../test/support/probe-facts.js';
import { strategiesByName } from '../../engine/named-strategies.js';
import { createPrecisCompressor, precisCompressor } from '../../eval/compressors.js';
import { type EvalSession, evaluateSessions } from '../../eval/run-eval.js';
import { createTokenAccountant } from '../../tokens/index.js';
import { importTranscript } from '../../transcripts/import-transcript.js';
import { foldIntoSummary } from '../fold-into-summary/fold-into-summary.js';
import { dynamicImportance } from './dynamic-importance.js';

// Probe pass rate at a 10% budget on the shared real sessions, next to the default pipeline (skipped when
// ../shared is absent). The numbers are printed for the record.
describe.skipIf(!hasSharedSessions)('dynamicImportance on the shared sessions at 10%', () => {
  it('reports probe pass rates next to the default pipeline (52 of 159 at least)', () => {
    const sessions: EvalSession[] = readdirSync(sessionsDir)
      .filter((name) => name !== 'MANIFEST.md')
      .sort()
      .map((name) => ({
        name,
        conversation: importTranscript(readFileSync(join(sessionsDir, name), 'utf8'), { file: name })
          .conversation,
        probes: loadProbes(name),
      }));
    const cheap = strategiesByName(['strip-reasoning', 'remove-filler', 'compact-json-outputs']);
    const report = evaluateSessions({
      sessions,
      budget: { ratio: 0.1 },
      accountant: createTokenAccountant(),
      compressors: [
        precisCompressor,
        createPrecisCompressor({
          name: 'dynamic',
          strategies: [...cheap, dynamicImportance(), foldIntoSummary()],
        }),
        createPrecisCompressor({
          name: 'dynamic-only',
          strategies: [dynamicImportance(), foldIntoSummary()],
        }),
      ],
    });
    for (const total of report.totals)
      console.log(
        `${total.compressor}: probes ${total.total.passed}/${total.total.probes} passed (${(total.total.passRate * 100).toFixed(1)}%), facts ${(total.total.factSurvival * 100).toFixed(1)}%, within budget ${total.withinBudget}/${total.sessions}, ratio ${total.ratio.toFixed(3)}`,
      );
    for (const result of report.results)
      if (!result.withinBudget)
        console.log(
          `over budget: ${result.compressor} ${result.session} ${result.tokensAfter} > ${result.budgetTokens}`,
        );
    // Dynamic importance trails the default pipeline (58 vs 70 of 159 at the last measurement). A floor under its
    // own number, not a share of the default's: the default gaining must not fail this test.
    const [, dynamic] = report.totals;
    expect(dynamic!.total.passed).toBeGreaterThanOrEqual(52);
  }, 240_000);
});
