import { describe, expect, it } from 'vitest';
import type { Message } from '../messages/types.js';
import { factSurvival, offsetBucketOf, renderForProbes, scoreProbes, sumTallies } from './fact-score.js';
import type { Probe } from './probes.js';

const probe = (id: string, facts: string[], overrides: Partial<Probe> = {}): Probe => ({
  id,
  type: 'recall',
  question: '?',
  answer: '.',
  facts,
  minFacts: facts.length,
  firstOffset: 0.1,
  ...overrides,
});

const messages: Message[] = [
  { role: 'system', content: 'You are a coding agent.' },
  { role: 'user', content: 'Fix   the\n\nflaky test in test/retry.test.ts' },
  {
    role: 'assistant',
    content: [
      { type: 'reasoning', text: 'The jitter is probably the cause.' },
      { type: 'text', text: 'Running it.' },
      {
        type: 'tool-call',
        toolCallId: 'c1',
        toolName: 'bash',
        input: { command: 'grep -n "retry\\\\(" src/*.ts', options: { timeout: 30, tags: ['nightly'] } },
      },
    ],
  },
  {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: 'c1',
        toolName: 'bash',
        output: { type: 'text', value: '日本語 ok' },
      },
    ],
  },
];

describe('renderForProbes', () => {
  it('renders text, reasoning, tool names, raw input strings and outputs', () => {
    const text = renderForProbes(messages);
    expect(text).toContain('The jitter is probably the cause.');
    expect(text).toContain('bash');
    // Raw, not JSON-escaped: the quote and backslashes are as the tool received them.
    expect(text).toContain('grep -n "retry\\\\(" src/*.ts');
    expect(text).not.toContain('\\"retry');
    expect(text).toContain('30');
    expect(text).toContain('nightly');
    expect(text).toContain('日本語 ok');
  });
});

describe('scoreProbes', () => {
  it('collapses whitespace on both sides, matches case-sensitively, and honours min_facts', () => {
    const score = scoreProbes(
      [
        probe('spaces', ['Fix the flaky test', 'flaky  test\nin']),
        probe('case', ['fix the flaky test']),
        probe('quote', ['"retry\\\\("']),
        probe('two-of-three', ['jitter', 'nowhere', '日本語'], { minFacts: 2, type: 'decision' }),
        probe('one-of-two', ['nowhere', 'elsewhere'], { minFacts: 1, type: 'artifact', firstOffset: 0.8 }),
      ],
      messages,
    );
    expect(score.probes.map((result) => [result.id, result.passed, result.factsKept])).toEqual([
      ['spaces', true, 2],
      ['case', false, 0],
      ['quote', true, 1],
      ['two-of-three', true, 2],
      ['one-of-two', false, 0],
    ]);
    expect(score.probes[3]!.missing).toEqual(['nowhere']);
    expect(score.total).toEqual({
      passed: 3,
      probes: 5,
      passRate: 0.6,
      factsKept: 5,
      facts: 9,
      factSurvival: 5 / 9,
    });
    expect(score.byType.recall).toMatchObject({ passed: 2, probes: 3 });
    expect(score.byType.decision).toMatchObject({ passed: 1, probes: 1 });
    expect(score.byType.artifact).toMatchObject({ passed: 0, probes: 1 });
    expect(score.byType.continuation).toMatchObject({ passed: 0, probes: 0, passRate: 0 });
    expect(score.byOffset['<0.35']).toMatchObject({ passed: 3, probes: 4 });
    expect(score.byOffset['>=0.7']).toMatchObject({ passed: 0, probes: 1 });
  });

  it('puts offsets into the README buckets and sums tallies by recomputing rates', () => {
    expect([0, 0.349, 0.35, 0.699, 0.7, 1].map(offsetBucketOf)).toEqual([
      '<0.35',
      '<0.35',
      '0.35-0.7',
      '0.35-0.7',
      '>=0.7',
      '>=0.7',
    ]);
    const one = { passed: 1, probes: 1, passRate: 1, factsKept: 1, facts: 1, factSurvival: 1 };
    const other = { passed: 0, probes: 3, passRate: 0, factsKept: 1, facts: 3, factSurvival: 1 / 3 };
    expect(sumTallies([one, other])).toEqual({
      passed: 1,
      probes: 4,
      passRate: 0.25,
      factsKept: 2,
      facts: 4,
      factSurvival: 0.5,
    });
  });

  it('reports fact survival with the missing facts by probe', () => {
    expect(factSurvival([probe('a', ['jitter', 'absent'])], messages)).toEqual({
      facts: 2,
      kept: 1,
      missing: [{ probe: 'a', fact: 'absent' }],
    });
  });
});
