import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidJsonError, isPrecisError } from '../errors/index.js';
import { InvalidProbeFileError, loadProbeFile, parseProbeFile } from './probes.js';

const example = join(
  import.meta.dirname,
  '..',
  '..',
  'examples',
  'transcripts',
  'fix-retry-backoff.probes.json',
);

const probe = (overrides: Record<string, unknown> = {}) => ({
  id: 'p1',
  type: 'recall',
  question: 'What failed?',
  answer: 'The retry test.',
  facts: ['expected 99', 'retry.test.ts'],
  min_facts: 1,
  first_offset: 0.2,
  ...overrides,
});
const file = (probes: unknown[], extra: Record<string, unknown> = {}) => ({
  session: 's.json',
  probes,
  ...extra,
});

function errorOf(value: unknown): InvalidProbeFileError {
  try {
    parseProbeFile(value, { file: 'x.probes.json' });
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidProbeFileError);
    return error as InvalidProbeFileError;
  }
  throw new Error('expected parseProbeFile to throw');
}

describe('parseProbeFile', () => {
  it('reads a valid file into camelCase fields', () => {
    const parsed = parseProbeFile(file([probe()], { content_chars: 120 }), { file: 'x' });
    expect(parsed).toEqual({
      session: 's.json',
      contentChars: 120,
      probes: [
        {
          id: 'p1',
          type: 'recall',
          question: 'What failed?',
          answer: 'The retry test.',
          facts: ['expected 99', 'retry.test.ts'],
          minFacts: 1,
          firstOffset: 0.2,
        },
      ],
    });
  });

  it.each([
    ['a non-object file', [], '', /expected an object/],
    ['a missing session', { probes: [] }, 'session', /non-empty string/],
    ['probes not an array', { session: 's', probes: {} }, 'probes', /expected an array/],
    ['a probe not an object', file([3]), 'probes[0]', /expected an object, got number/],
    ['an unknown type', file([probe({ type: 'trivia' })]), 'probes[0].type', /one of recall, artifact/],
    ['empty facts', file([probe({ facts: [] })]), 'probes[0].facts', /non-empty array/],
    ['a fact not a string', file([probe({ facts: ['ok', 7] })]), 'probes[0].facts[1]', /non-empty string/],
    ['min_facts above facts', file([probe({ min_facts: 3 })]), 'probes[0].min_facts', /from 1 to 2, got 3/],
    ['min_facts zero', file([probe({ min_facts: 0 })]), 'probes[0].min_facts', /from 1 to 2/],
    ['first_offset above 1', file([probe({ first_offset: 1.5 })]), 'probes[0].first_offset', /0 to 1/],
    ['a missing question', file([probe({ question: undefined })]), 'probes[0].question', /non-empty/],
    ['a duplicate id', file([probe(), probe()]), 'probes[1].id', /duplicate probe id "p1"/],
    ['bad content_chars', file([], { content_chars: -1 }), 'content_chars', /non-negative integer/],
  ])('rejects %s, naming the file and field', (_label, value, path, reason) => {
    const error = errorOf(value);
    expect(error.code).toBe('invalid-argument');
    expect(error.file).toBe('x.probes.json');
    expect(error.path).toBe(path);
    expect(error.reason).toMatch(reason);
    expect(error.message).toContain('x.probes.json');
    if (path !== '') expect(error.message).toContain(`field ${path}`);
  });
});

describe('loadProbeFile', () => {
  it('loads the shipped example', () => {
    const loaded = loadProbeFile(example);
    expect(loaded.session).toBe('fix-retry-backoff.openai.json');
    expect(loaded.probes.length).toBeGreaterThan(5);
    expect(new Set(loaded.probes.map((entry) => entry.type))).toEqual(
      new Set(['recall', 'artifact', 'decision', 'continuation']),
    );
  });

  it('names the file when it is missing, not JSON, or malformed', () => {
    const directory = mkdtempSync(join(tmpdir(), 'precis-probes-'));
    const missing = join(directory, 'none.probes.json');
    expect(() => loadProbeFile(missing)).toThrow(expect.objectContaining({ code: 'io-error' }));
    expect(() => loadProbeFile(missing)).toThrow(missing);

    const broken = join(directory, 'broken.probes.json');
    writeFileSync(broken, '{"session": "s", "probes": [');
    expect(() => loadProbeFile(broken)).toThrow(InvalidJsonError);

    const wrong = join(directory, 'wrong.probes.json');
    writeFileSync(wrong, JSON.stringify(file([probe({ type: 'x' })])));
    try {
      loadProbeFile(wrong);
      expect.unreachable();
    } catch (error) {
      expect(isPrecisError(error)).toBe(true);
      expect((error as InvalidProbeFileError).file).toBe(wrong);
    }
  });
});
