import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { messageConversation } from '../../test/arbitraries/messages.js';
import { propertyRuns } from '../../test/support/property-runs.js';
import { InvalidArgumentError, InvalidMessageError } from '../errors/index.js';
import { fromOpenAI } from '../messages/convert/openai.js';
import type { Conversation, Message } from '../messages/types.js';
import { createTokenAccountant } from '../tokens/index.js';
import {
  checkCompressionPoints,
  compressAtPoints,
  compressPreparedPoints,
  contentShares,
  defaultCompressionPoints,
  prefixLength,
  prepareCompressionPoints,
} from './compression-points.js';
import {
  type Compressor,
  fullContextCompressor,
  headTailCompressor,
  precisCompressor,
  truncationCompressor,
} from './compressors.js';
import { renderForProbes, scoreProbes } from './fact-score.js';
import { loadProbeFile } from './probes.js';

const examples = join(import.meta.dirname, '..', '..', 'examples', 'transcripts');
const example: Conversation = fromOpenAI(
  JSON.parse(readFileSync(join(examples, 'fix-retry-backoff.openai.json'), 'utf8')),
);
const probes = loadProbeFile(join(examples, 'fix-retry-backoff.probes.json')).probes;
const accountant = createTokenAccountant();

/** Records what it was given and replies with a one-message "summary" that names every input's text. */
function recordingCompressor() {
  const inputs: Message[][] = [];
  const compressor: Compressor = {
    name: 'recording',
    compress(conversation) {
      inputs.push(conversation.messages);
      return [
        { role: 'user', content: `summary of ${inputs.length}: ${renderForProbes(conversation.messages)}` },
      ];
    },
  };
  return { compressor, inputs };
}

describe('prefixLength', () => {
  const user = (content: string): Message => ({ role: 'user', content });
  it('cuts after the last message that ends by the point, keeping tool results with their call', () => {
    const messages: Message[] = [
      user('aaaa'),
      {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: 'c', toolName: 'x', input: {} }],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c', toolName: 'x', output: { type: 'text', value: 'bbbb' } },
        ],
      },
      user('cccc'),
    ];
    // Lengths: 4, 1 ("x"), 4, 4 plus one separator each after the first: ends at 4, 6, 11, 16 of 16.
    expect(contentShares(messages)).toEqual([4 / 16, 6 / 16, 11 / 16, 1]);
    expect(prefixLength(messages, 0.1)).toBe(1);
    expect(prefixLength(messages, 0.25)).toBe(1);
    // The call ends by 0.4, its result does not: they go together.
    expect(prefixLength(messages, 0.4)).toBe(3);
    expect(prefixLength(messages, 0.99)).toBe(3);
    expect(prefixLength(messages, 1)).toBe(4);
    expect(prefixLength([], 0.5)).toBe(0);
  });

  it('on generated conversations: grows with the point, reaches the end at 1, never starts with a tool message after', () => {
    fc.assert(
      fc.property(
        messageConversation({ valid: true, maxTurns: 6 }),
        fc.array(fc.double({ min: 0.01, max: 1, noNaN: true }), { minLength: 2, maxLength: 4 }),
        (messages, points) => {
          const lengths = [...points].sort((a, b) => a - b).map((point) => prefixLength(messages, point));
          for (let index = 1; index < lengths.length; index++)
            expect(lengths[index]!).toBeGreaterThanOrEqual(lengths[index - 1]!);
          expect(prefixLength(messages, 1)).toBe(messages.length);
          for (const length of lengths) expect(messages[length]?.role).not.toBe('tool');
        },
      ),
      { numRuns: propertyRuns(200) },
    );
  });
});

describe('compressAtPoints', () => {
  it('feeds each point the previous output plus the messages since', () => {
    const { compressor, inputs } = recordingCompressor();
    const results = compressAtPoints({
      conversation: example,
      compressor,
      points: [1, 0.5, 0.25],
      budget: { ratio: 0.5 },
      accountant,
    });
    expect(results.map((result) => result.point)).toEqual([0.25, 0.5, 1]);
    const [first, second, third] = results;
    expect(inputs[0]).toEqual(example.messages.slice(0, first!.messageCount));
    expect(inputs[1]).toEqual([
      ...first!.messages,
      ...example.messages.slice(first!.messageCount, second!.messageCount),
    ]);
    expect(inputs[2]).toEqual([...second!.messages, ...example.messages.slice(second!.messageCount)]);
    expect(third!.messageCount).toBe(example.messages.length);
    expect(third!.reached).toBe(1);
    // The first summary is inside the last one: earlier rounds must survive later ones.
    expect(renderForProbes(third!.messages)).toContain('summary of 1: ');
    for (const result of results) {
      expect(result.budgetTokens).toBe(Math.floor(result.tokensBefore * 0.5));
      expect(result.tokensAfter).toBe(
        accountant.countConversation({ ...example, messages: result.messages }).totalTokens,
      );
    }
  });

  it('keeps only probes whose facts appeared before the point; all of them at the end', () => {
    const results = compressAtPoints({
      conversation: example,
      compressor: fullContextCompressor,
      budget: { tokens: 1000 },
      probes,
      accountant,
    });
    expect(results.map((result) => result.point)).toEqual([...defaultCompressionPoints]);
    const counts = results.map((result) => result.probes.length);
    expect(counts.at(-1)).toBe(probes.length);
    expect(counts[0]!).toBeLessThan(probes.length);
    for (let index = 1; index < results.length; index++) {
      const earlier = results[index - 1]!.probes.map((probe) => probe.id);
      const later = results[index]!.probes.map((probe) => probe.id);
      expect(later).toEqual(expect.arrayContaining(earlier));
    }
    for (const result of results) {
      // The full-context compressor keeps the prefix, so every kept probe passes there...
      expect(scoreProbes(result.probes, result.messages).total.passRate).toBe(1);
      // ...and each one left out needs a fact the prefix does not hold yet.
      const left = probes.filter((probe) => !result.probes.includes(probe));
      for (const score of scoreProbes(left, result.messages).probes) expect(score.passed).toBe(false);
      for (const probe of result.probes) expect(probe.firstOffset).toBeLessThanOrEqual(result.reached + 0.02);
    }
  });

  it('re-compacts the engine’s own output within budget at every point', () => {
    const results = compressAtPoints({
      conversation: example,
      compressor: precisCompressor,
      points: [0.5, 1],
      budget: { ratio: 0.15 },
      probes,
      accountant,
    });
    for (const result of results) expect(result.tokensAfter).toBeLessThanOrEqual(result.budgetTokens);
    const [half, end] = results;
    expect(end!.tokensIn).toBeLessThan(end!.tokensBefore);
    expect(half!.messages.some((message) => message.metadata?.origin === 'summary')).toBe(true);
  });

  it('refuses bad points and malformed messages with typed errors', () => {
    const compressor = fullContextCompressor;
    const budget = { ratio: 0.5 };
    for (const points of [[], [0], [1.5], [Number.NaN]])
      expect(() => compressAtPoints({ conversation: example, compressor, budget, points })).toThrow(
        InvalidArgumentError,
      );
    expect(checkCompressionPoints([1, 0.5, 0.5])).toEqual([0.5, 1]);
    const broken = {
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 7 },
      ],
    };
    try {
      compressAtPoints({ conversation: broken as unknown as Conversation, compressor, budget });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidMessageError);
      expect(error).toMatchObject({ index: 1, path: 'content' });
    }
  });
});

describe('prepareCompressionPoints and compressPreparedPoints', () => {
  /** A clock that ticks one millisecond per read, so `timeMs` is the same in every run. */
  const tickingClock = () => {
    let now = 0;
    return () => now++;
  };

  it('cuts, counts and picks the probes of each point once, without a compressor', () => {
    const prepared = prepareCompressionPoints({
      conversation: example,
      points: [1, 0.5, 0.25],
      budget: { ratio: 0.2 },
      probes,
      accountant,
    });
    expect(prepared.points.map((point) => point.point)).toEqual([0.25, 0.5, 1]);
    const shares = contentShares(example.messages);
    for (const point of prepared.points) {
      const prefix = example.messages.slice(0, point.messageCount);
      expect(point.messageCount).toBe(prefixLength(example.messages, point.point));
      expect(point.reached).toBe(shares[point.messageCount - 1]);
      expect(point.tokensBefore).toBe(
        accountant.countConversation({ ...example, messages: prefix }).totalTokens,
      );
      expect(point.budgetTokens).toBe(Math.floor(point.tokensBefore * 0.2));
      // The probes kept are exactly those whose facts the prefix already holds (every one at the end).
      const passing = scoreProbes(probes, prefix).probes.filter((score) => score.passed);
      if (point.messageCount < example.messages.length)
        expect(point.probes.map((probe) => probe.id)).toEqual(passing.map((score) => score.id));
      else expect(point.probes).toEqual(probes);
    }
    expect(prepared.points[0]!.probes.length).toBeLessThan(probes.length);
  });

  it('one preparation serves every compressor, giving what compressAtPoints gives, and stays unchanged', () => {
    const options = {
      conversation: example,
      points: [0.25, 0.5, 1],
      budget: { ratio: 0.15 },
      probes,
      accountant,
    };
    const prepared = prepareCompressionPoints(options);
    const before = structuredClone(prepared.points);
    for (const compressor of [truncationCompressor, headTailCompressor, precisCompressor]) {
      const shared = compressPreparedPoints({ prepared, compressor, clock: tickingClock() });
      const alone = compressAtPoints({ ...options, compressor, clock: tickingClock() });
      expect(shared).toEqual(alone);
      expect(shared.map((result) => result.timeMs)).toEqual([1, 1, 1]);
      // Each result owns its probe list: changing it cannot leak into the next compressor's results.
      shared[0]!.probes.length = 0;
    }
    expect(prepared.points).toEqual(before);
  });

  it('refuses bad points and malformed messages before any compressor runs', () => {
    expect(() =>
      prepareCompressionPoints({ conversation: example, budget: { ratio: 0.5 }, points: [0] }),
    ).toThrow(InvalidArgumentError);
    const broken = { messages: [{ role: 'user', content: 'hi' }, { role: 'tool' }] };
    try {
      prepareCompressionPoints({ conversation: broken as unknown as Conversation, budget: { ratio: 0.5 } });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidMessageError);
      expect(error).toMatchObject({ index: 1 });
    }
  });
});
