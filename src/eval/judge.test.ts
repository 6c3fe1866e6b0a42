import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors/index.js';
import { ProviderError } from '../llm/provider-error.js';
import type { JSONValue, Message } from '../messages/types.js';
import { createScriptedLlmClient } from '../testing/scripted-llm-client.js';
import {
  createJudge,
  type JudgeCriterion,
  judgementsOf,
  judgeReplySchema,
  judgeRubric,
  type ProbeJudgement,
  renderContext,
  scoreRubric,
  summarizeJudgements,
} from './judge.js';

const probe = {
  type: 'recall' as const,
  question: 'Which error did the first test run report?',
  answer: 'ZeroDivisionError: division by zero in retry.py line 12.',
};
const context: Message[] = [
  { role: 'user', content: 'Fix the retry backoff in retry.py.' },
  {
    role: 'assistant',
    content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'bash', input: { command: 'pytest -x' } }],
  },
  {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: 'c1',
        toolName: 'bash',
        output: { type: 'text', value: 'ZeroDivisionError: division by zero' },
      },
    ],
  },
];

/** Per-criterion scores chosen so every dimension has a round hand-computed value. */
const scores: Record<string, number> = {
  'accuracy.details': 4, // weight 2
  'accuracy.no-invention': 1, // weight 1 → (2·4 + 1)/3 = 3
  'context-awareness.state': 5, // weight 2
  'context-awareness.history': 2, // → (10 + 2)/3 = 4
  'artifact-trail.files': 1, // weight 2
  'artifact-trail.changes': 4, // → (2 + 4)/3 = 2
  'completeness.parts': 3, // weight 1
  'completeness.reference': 0, // weight 2 → (3 + 0)/3 = 1
  'continuity.resume': 5,
  'continuity.decisions': 5, // → 5
  'instruction-following.question': 4,
  'instruction-following.constraints': 2, // equal weights → 3
};
const expectedDimensions = {
  accuracy: 3,
  'context-awareness': 4,
  'artifact-trail': 2,
  completeness: 1,
  continuity: 5,
  'instruction-following': 3,
};
// (3 + 4 + 2 + 1 + 5 + 3) / 6
const expectedOverall = 3;

function reply(values: Record<string, number> = scores): string {
  return JSON.stringify(
    Object.fromEntries(Object.entries(values).map(([id, score]) => [id, { reason: `because ${id}`, score }])),
  );
}

describe('scoreRubric', () => {
  it('weights criteria within a dimension and averages the dimensions (hand-computed)', () => {
    const result = scoreRubric(scores);
    for (const [dimension, value] of Object.entries(expectedDimensions))
      expect(result.dimensions[dimension as keyof typeof expectedDimensions]).toBeCloseTo(value, 12);
    expect(result.overall).toBeCloseTo(expectedOverall, 12);
  });

  it('uses the weights of a custom rubric', () => {
    const rubric: JudgeCriterion[] = [
      ...judgeRubric.filter((criterion) => criterion.dimension !== 'accuracy'),
      { id: 'a', dimension: 'accuracy', weight: 3, description: 'a' },
      { id: 'b', dimension: 'accuracy', weight: 1, description: 'b' },
    ];
    const custom = { ...scores, a: 5, b: 1 };
    // accuracy = (3·5 + 1)/4 = 4; overall = (4 + 4 + 2 + 1 + 5 + 3)/6 = 19/6
    const result = scoreRubric(custom, rubric);
    expect(result.dimensions.accuracy).toBe(4);
    expect(result.overall).toBeCloseTo(19 / 6, 12);
  });

  it('refuses a missing score and a rubric without some dimension', () => {
    const { 'continuity.resume': _, ...missing } = scores;
    expect(() => scoreRubric(missing)).toThrow(/scores\.continuity\.resume/);
    expect(() => scoreRubric(scores, judgeRubric.slice(0, 10))).toThrow(/instruction-following/);
    expect(() => scoreRubric(scores, [...judgeRubric, { ...judgeRubric[0]!, id: 'x', weight: 0 }])).toThrow(
      InvalidArgumentError,
    );
  });
});

describe('createJudge', () => {
  it('asks the answerer, then scores the answer through the schema (hand-computed)', async () => {
    const client = createScriptedLlmClient({
      id: 'scripted:judge',
      script: ['The first run failed with ZeroDivisionError: division by zero.', reply()],
    });
    const judge = createJudge({ client });
    const result = await judge.evaluate({ probe, context });
    expect(result.status).toBe('scored');
    if (result.status !== 'scored') return;
    expect(result.answer).toBe('The first run failed with ZeroDivisionError: division by zero.');
    expect(result.attempts).toBe(1);
    expect(result.overall).toBeCloseTo(expectedOverall, 12);
    expect(result.dimensions.completeness).toBeCloseTo(1, 12);
    expect(result.criteria.find((criterion) => criterion.id === 'accuracy.details')).toEqual({
      id: 'accuracy.details',
      dimension: 'accuracy',
      weight: 2,
      score: 4,
      reason: 'because accuracy.details',
    });

    const [answerCall, judgeCall] = client.calls;
    // The answerer gets the context and the question, not the reference answer.
    expect(answerCall!.system).toContain('ZeroDivisionError: division by zero');
    expect(answerCall!.system).toContain('[tool]');
    expect(JSON.stringify(answerCall)).not.toContain(probe.answer);
    expect(answerCall!.messages).toEqual([{ role: 'user', content: probe.question }]);
    expect(answerCall!.jsonSchema).toBeUndefined();
    // The judge gets the schema, the question, the reference answer, the answer and the context.
    expect(judgeCall!.jsonSchema).toEqual(judgeReplySchema());
    const prompt = judgeCall!.messages[0]!.content as string;
    for (const piece of [probe.question, probe.answer, result.answer, 'pytest -x', 'continuity.resume'])
      expect(prompt).toContain(piece);
    expect(judge.id).toMatch(/^judge=scripted:judge;answerer=scripted:judge;rubric=[0-9a-f]{8}$/);
    // A verdict is a JSON value (the eval cache stores it as one) and survives the trip through JSON.
    const stored: JSONValue = result;
    expect(JSON.parse(JSON.stringify(stored))).toEqual(result);
  });

  it('reads JSON from prose around it when the client does not parse it', async () => {
    const client = createScriptedLlmClient({
      script: ['answer', `Here you go:\n\`\`\`json\n${reply()}\n\`\`\``],
    });
    const result = await createJudge({ client }).evaluate({ probe, context: 'rendered context' });
    expect(result).toMatchObject({ status: 'scored', overall: expectedOverall });
  });

  it('prefers the client’s parsed JSON', async () => {
    const client = createScriptedLlmClient({
      script: ['answer', { text: 'ignored', json: JSON.parse(reply({ ...scores, 'continuity.resume': 2 })) }],
    });
    const result = await createJudge({ client }).evaluate({ probe, context });
    // continuity = (2·2 + 5)/3 = 3, overall = (3 + 4 + 2 + 1 + 3 + 3)/6 = 16/6
    expect(result.status === 'scored' && result.dimensions.continuity).toBe(3);
    expect(result.status === 'scored' && result.overall).toBeCloseTo(16 / 6, 12);
  });

  it('retries an invalid reply once and uses the second', async () => {
    const outOfRange = reply({ ...scores, 'accuracy.details': 7 });
    const client = createScriptedLlmClient({ script: ['answer', outOfRange, reply()] });
    const result = await createJudge({ client }).evaluate({ probe, context });
    expect(result).toMatchObject({ status: 'scored', attempts: 2, overall: expectedOverall });
    expect(client.calls).toHaveLength(3);
  });

  it('reports two invalid replies as invalid, with what was wrong, and never a score', async () => {
    const { 'artifact-trail.files': _, ...missing } = scores;
    const invalidOutput = new ProviderError('the JSON reply does not match the schema', {
      provider: 'openai',
      kind: 'invalid-output',
      retryable: false,
    });
    for (const [first, second] of [
      ['not json at all', reply(missing)],
      [{ error: invalidOutput }, reply({ ...scores, 'completeness.parts': 2.5 })],
    ] as const) {
      const client = createScriptedLlmClient({ script: ['answer', first, second, reply()] });
      const result = await createJudge({ client }).evaluate({ probe, context });
      expect(result.status).toBe('invalid');
      expect(result).not.toHaveProperty('overall');
      expect(result.attempts).toBe(2);
      if (result.status === 'invalid') expect(result.problems).toHaveLength(2);
      // The third (valid) step is never asked for.
      expect(client.calls).toHaveLength(3);
    }
    const client = createScriptedLlmClient({ script: ['answer', 'nope', reply(missing)] });
    const result = await createJudge({ client }).evaluate({ probe, context });
    expect(result.status === 'invalid' && result.problems).toEqual([
      'no JSON in the reply',
      expect.stringContaining('artifact-trail.files'),
    ]);
  });

  it('throws provider failures other than invalid output (the caller decides)', async () => {
    const failure = new ProviderError('HTTP 503', {
      provider: 'openai',
      kind: 'http-status',
      retryable: true,
    });
    const client = createScriptedLlmClient({ script: ['answer', { error: failure }] });
    await expect(createJudge({ client }).evaluate({ probe, context })).rejects.toBe(failure);
  });

  it('uses a separate answerer when given, and refuses bad options', async () => {
    const answerer = createScriptedLlmClient({ id: 'scripted:answerer', script: ['the answer'] });
    const client = createScriptedLlmClient({ script: [reply()] });
    const judge = createJudge({ client, answerer, maxAttempts: 1 });
    expect(await judge.evaluate({ probe, context })).toMatchObject({
      status: 'scored',
      answer: 'the answer',
    });
    expect(judge.id).toContain('answerer=scripted:answerer');
    expect(() => createJudge({ client, maxAttempts: 0 })).toThrow(/maxAttempts/);
    expect(() => createJudge({ client, rubric: [...judgeRubric, { ...judgeRubric[0]! }] })).toThrow(
      /rubric\[12\]\.id/,
    );
  });
});

describe('renderContext and summarizeJudgements', () => {
  it('labels each message with its role and keeps tool input strings raw', () => {
    expect(renderContext(context)).toBe(
      '[user]\nFix the retry backoff in retry.py.\n\n[assistant]\nbash\n\npytest -x\n\n[tool]\nZeroDivisionError: division by zero',
    );
  });

  it('averages over scored probes only', () => {
    const base = scoreRubric(scores);
    const scored = { status: 'scored' as const, answer: '', criteria: [], attempts: 1, ...base };
    const better = { ...scored, overall: 5, dimensions: { ...base.dimensions, accuracy: 5 } };
    const summary = summarizeJudgements([
      scored,
      better,
      { status: 'invalid', answer: '', attempts: 2, problems: [] },
      { status: 'failed' },
    ]);
    expect(summary).toMatchObject({ scored: 2, invalid: 1, failed: 1, overall: 4 });
    expect(summary.dimensions.accuracy).toBe(4);
    expect(summarizeJudgements([]).overall).toBe(0);
  });

  it('judgementsOf takes the verdicts of the judged probes, in order', () => {
    const invalid: ProbeJudgement = { status: 'invalid', answer: '', attempts: 2, problems: ['no JSON'] };
    const failed = { status: 'failed' as const, error: 'timeout' };
    const probes: Array<{ id: string; judge?: ProbeJudgement | typeof failed }> = [
      { id: 'a', judge: invalid },
      { id: 'b' },
      { id: 'c', judge: failed },
    ];
    expect(judgementsOf(probes)).toEqual([invalid, failed]);
    expect(judgementsOf(probes.slice(1, 2))).toEqual([]);
  });
});
