import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { messageConversation } from '../../test/arbitraries/messages.js';
import { propertyRuns } from '../../test/support/property-runs.js';
import { InvalidMessageError } from '../errors/index.js';
import { fromOpenAI } from '../messages/convert/openai.js';
import type { Conversation, Message } from '../messages/types.js';
import { collapseWhitespace, renderForProbes, scoreProbes } from './fact-score.js';
import { factFrom, generateProbes } from './generate-probes.js';
import { parseProbeFile, probeTypes } from './probes.js';

const examples = join(import.meta.dirname, '..', '..', 'examples', 'transcripts');
const example: Conversation = fromOpenAI(
  JSON.parse(readFileSync(join(examples, 'fix-retry-backoff.openai.json'), 'utf8')),
);

/** Back to the file format, so the shared parser checks every rule of it. */
function toFileFormat(file: ReturnType<typeof generateProbes>) {
  return {
    session: file.session,
    content_chars: file.contentChars,
    probes: file.probes.map(({ minFacts, firstOffset, ...probe }) => ({
      ...probe,
      min_facts: minFacts,
      first_offset: firstOffset,
    })),
  };
}

const small: Message[] = [
  { role: 'system', content: 'You are a coding agent.' },
  {
    role: 'user',
    content: 'Fix the crash in parser.py when the input is empty. Keep the public API unchanged.',
  },
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Let me run the tests first.' },
      {
        type: 'tool-call',
        toolCallId: 'c1',
        toolName: 'bash',
        input: { command: 'pytest tests/test_parser.py' },
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
        output: { type: 'error-text', value: 'IndexError: list index out of range\nexit code 1' },
      },
    ],
  },
  {
    role: 'assistant',
    content: [
      {
        type: 'text',
        text: 'I will use an early return in `parse_tokens` instead of a try/except, because the empty case is expected.',
      },
      {
        type: 'tool-call',
        toolCallId: 'c2',
        toolName: 'edit_file',
        input: {
          path: 'src/parser.py',
          old_string: 'def parse_tokens(tokens):\n',
          new_string: 'def parse_tokens(tokens):\n    if not tokens:\n        return []\n',
        },
      },
    ],
  },
  {
    role: 'tool',
    content: [
      { type: 'tool-result', toolCallId: 'c2', toolName: 'edit_file', output: { type: 'text', value: 'ok' } },
    ],
  },
  { role: 'user', content: 'Now add a regression test for it.' },
];

describe('factFrom', () => {
  it('takes the first usable line, cut at a word boundary to 80 characters', () => {
    expect(factFrom('  \nab\n  Hello world  \nmore')).toBe('Hello world');
    const long = `${'word '.repeat(30)}end`;
    const fact = factFrom(long)!;
    expect(fact.length).toBeLessThanOrEqual(80);
    expect(long).toContain(fact);
    expect(fact.endsWith('word')).toBe(true);
    expect(factFrom('ab\n\n')).toBeUndefined();
  });
});

describe('generateProbes', () => {
  it('asks the four kinds of question of a small session, with verbatim facts', () => {
    const file = generateProbes(small, { session: 'small.json' });
    const byId = Object.fromEntries(file.probes.map((probe) => [probe.id, probe]));
    expect(Object.keys(byId)).toEqual([
      'task',
      'error-1',
      'files-changed',
      'change-1',
      'decision-1',
      'continuation',
    ]);
    expect(byId.task).toMatchObject({
      type: 'recall',
      facts: ['Fix the crash in parser.py when the input is empty.', 'Keep the public API unchanged.'],
      minFacts: 1,
    });
    expect(byId['error-1']).toMatchObject({
      question: 'What was the first error message of the session (from `pytest tests/test_parser.py`)?',
      facts: ['IndexError: list index out of range'],
    });
    expect(byId['files-changed']).toMatchObject({ type: 'artifact', facts: ['src/parser.py'] });
    expect(byId['change-1']!.facts).toEqual(['parse_tokens', 'if not tokens:']);
    expect(byId['decision-1']).toMatchObject({
      type: 'decision',
      question: 'What did the agent decide about `parse_tokens`, and why?',
      facts: ['I will use an early return in `parse_tokens` instead of a try/except, because'],
    });
    expect(byId.continuation).toMatchObject({
      type: 'continuation',
      facts: ['Now add a regression test for it.', 'src/parser.py'],
      minFacts: 2,
    });
    // first_offset as the format measures it: the earliest fact in the collapsed rendered text.
    const text = collapseWhitespace(renderForProbes(small));
    const offset = text.indexOf('IndexError: list index out of range') / text.length;
    expect(byId['error-1']!.firstOffset).toBeCloseTo(offset, 3);
    // After the system prompt: 'You are a coding agent.' and one separator.
    expect(byId.task!.firstOffset).toBeCloseTo(24 / text.length, 3);
  });

  it('on the shipped example: valid probe file, every probe passes on the full session, deterministic', () => {
    const file = generateProbes(example, { session: 'fix-retry-backoff.openai.json' });
    expect(parseProbeFile(toFileFormat(file))).toEqual(file);
    for (const type of probeTypes) expect(file.probes.some((probe) => probe.type === type)).toBe(true);
    expect(file.probes.length).toBeGreaterThanOrEqual(10);
    expect(scoreProbes(file.probes, example.messages).total.passRate).toBe(1);
    for (const probe of file.probes)
      for (const fact of probe.facts) expect(fact.length).toBeGreaterThanOrEqual(4);
    expect(generateProbes(example, { session: 'fix-retry-backoff.openai.json' })).toEqual(file);
    // The questions name no fact of their own probe in full (they would give the answer away).
    for (const probe of file.probes.filter((probe) => probe.type !== 'artifact'))
      for (const fact of probe.facts) expect(probe.question).not.toContain(fact);
  });

  it('on generated conversations: a valid probe file whose probes all pass on the session itself', () => {
    fc.assert(
      fc.property(messageConversation({ valid: true, maxTurns: 6 }), (messages) => {
        const file = generateProbes(messages);
        expect(() => parseProbeFile(toFileFormat(file))).not.toThrow();
        expect(scoreProbes(file.probes, messages).total.passed).toBe(file.probes.length);
      }),
      { numRuns: propertyRuns(150) },
    );
  });

  it('refuses malformed messages naming the index and the field', () => {
    const broken = [small[0], { role: 'user', content: [{ type: 'text', text: 5 }] }];
    expect(() => generateProbes(broken as unknown as Message[])).toThrow(InvalidMessageError);
    try {
      generateProbes(broken as unknown as Message[]);
    } catch (error) {
      expect(error).toMatchObject({ index: 1, path: 'content[0].text' });
    }
  });
});
