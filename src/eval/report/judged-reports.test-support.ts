import { createScriptedLlmClient } from '../../testing/scripted-llm-client.js';
import { createTokenAccountant } from '../../tokens/index.js';
import type { Compressor } from '../compressors.js';
import { createJudge, judgeRubric } from '../judge.js';
import { type EvalReport, type EvalSession, runEval } from '../run-eval.js';

/** Why the scripted judge fails on a recall probe whose context lost the Japanese error. */
export const judgeFailure = 'HTTP 503: <html>upstream "busy" & down</html>';

/** What the scripted answerer replies: the question back, with markup and a line break to escape. */
export const scriptedAnswer = (question: string) => `About "${question}":\n<i>see</i> the log & <b>diff</b>.`;

/** The scripted judge's reason for a criterion. */
export const scriptedReason = (id: string) => `${id}: "<ok>" & 'fine'`;

/**
 * An answerer and judge whose replies depend on the request only (never on call order), so reports are
 * the same whatever the concurrency:
 * - continuation probes always get a reply that breaks the schema (score 9): `invalid`;
 * - recall probes whose context lacks `エラー` make the call throw `judgeFailure`: `failed`;
 * - the rest are scored: 5 per criterion for recall, 3 for other types, 2 less when the context lacks
 *   `src/a|b.ts`; `continuity.decisions` always 4. So a recall probe over the whole session scores
 *   5, 5, 5, 5, 14/3, 5 (overall 4.94…), an artifact one 3, 3, 3, 3, 10/3, 3 (overall 3.05…).
 */
export function createScriptedJudge() {
  const client = createScriptedLlmClient({
    id: 'scripted:judge <v1>',
    whenExhausted: 'repeat-last',
    script: [
      (request) => {
        const prompt = request.messages[0]!.content as string;
        if (request.jsonSchema === undefined) return scriptedAnswer(prompt);
        const heading = prompt.split('\n')[0] ?? '';
        const context = prompt.slice(prompt.indexOf('<compressed-context>'));
        const type = /\((\w+) probe\)/.exec(heading)?.[1];
        if (type === 'continuation')
          return JSON.stringify(
            Object.fromEntries(judgeRubric.map((criterion) => [criterion.id, { reason: 'x', score: 9 }])),
          );
        if (type === 'recall' && !context.includes('エラー')) throw new Error(judgeFailure);
        const base = Math.max(0, (type === 'recall' ? 5 : 3) - (context.includes('src/a|b.ts') ? 0 : 2));
        return JSON.stringify(
          Object.fromEntries(
            judgeRubric.map((criterion) => [
              criterion.id,
              {
                reason: scriptedReason(criterion.id),
                score: criterion.id === 'continuity.decisions' ? 4 : base,
              },
            ]),
          ),
        );
      },
    ],
  });
  return createJudge({ client });
}

/** The sessions judged at two budgets (50% and 100 tokens) and two compression points (50% and the end). */
export async function judgedReports(options: {
  sessions: readonly EvalSession[];
  compressors: readonly Compressor[];
  clock?: () => number;
}): Promise<EvalReport[]> {
  const { sessions, compressors, clock = () => 0 } = options;
  const judge = createScriptedJudge();
  const accountant = createTokenAccountant();
  const reports: EvalReport[] = [];
  for (const budget of [{ ratio: 0.5 }, { tokens: 100 }])
    reports.push(
      await runEval({ sessions, compressors, budget, accountant, clock, judge, points: [0.5, 1] }),
    );
  return reports;
}
