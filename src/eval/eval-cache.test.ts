import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidJsonError } from '../errors/index.js';
import { createEvalCache, type EvalCacheKeyParts, evalCacheKey } from './eval-cache.js';

const directory = () => mkdtempSync(join(tmpdir(), 'precis-eval-cache-'));
const parts: EvalCacheKeyParts = {
  session: { messages: [{ role: 'user', content: 'Fix the bug.' }] },
  compressor: 'precis',
  budget: { ratio: 0.1 },
  point: 0.5,
  probe: { id: 'task', question: 'What was the task?', facts: ['Fix the bug.'] },
  judge: 'judge=openai:gpt-4o-mini;answerer=openai:gpt-4o-mini;rubric=abcd1234',
};

describe('evalCacheKey', () => {
  it('changes with every part and only with content', () => {
    const key = evalCacheKey(parts);
    expect(key).toMatch(/^[0-9a-f]{32}$/);
    expect(evalCacheKey({ ...parts, probe: { ...(parts.probe as object) } })).toBe(key);
    const variants: EvalCacheKeyParts[] = [
      { ...parts, session: { messages: [{ role: 'user', content: 'Fix the bug!' }] } },
      { ...parts, compressor: 'truncation' },
      { ...parts, budget: { ratio: 0.2 } },
      { ...parts, budget: { tokens: 1000 } },
      { ...parts, point: 1 },
      { ...parts, probe: { ...(parts.probe as object), question: 'What was asked?' } },
      { ...parts, judge: 'judge=other' },
      { ...parts, context: 'compressed text' },
    ];
    const keys = variants.map(evalCacheKey);
    expect(new Set([key, ...keys]).size).toBe(variants.length + 1);
    expect(evalCacheKey({ ...parts, context: 'compressed text' })).toBe(keys.at(-1));
  });
});

describe('createEvalCache', () => {
  it('persists entries across instances; a later entry wins', () => {
    const path = join(directory(), 'cache.jsonl');
    const cache = createEvalCache({ path });
    expect(cache.get('a')).toBeUndefined();
    cache.set('a', { overall: 3 });
    cache.set('b', [1, 'two']);
    cache.set('a', { overall: 4 });
    expect(cache.get('a')).toEqual({ overall: 4 });
    expect(readFileSync(path, 'utf8').split('\n')).toHaveLength(4);

    const again = createEvalCache({ path });
    expect(again.size).toBe(2);
    expect(again.get('a')).toEqual({ overall: 4 });
    expect(again.get('b')).toEqual([1, 'two']);
  });

  it('ignores a last line cut off by a crash and keeps appending cleanly', () => {
    const path = join(directory(), 'cache.jsonl');
    writeFileSync(path, '{"key":"a","value":1}\n{"key":"b","val');
    const cache = createEvalCache({ path });
    expect(cache.size).toBe(1);
    cache.set('c', 3);
    const reloaded = createEvalCache({ path });
    expect([reloaded.get('a'), reloaded.get('b'), reloaded.get('c')]).toEqual([1, undefined, 3]);
  });

  it('refuses a malformed entry, naming the file and the line', () => {
    const path = join(directory(), 'cache.jsonl');
    writeFileSync(path, '{"key":"a","value":1}\nnot json\n');
    expect(() => createEvalCache({ path })).toThrow(InvalidJsonError);
    expect(() => createEvalCache({ path })).toThrow(`${path}:2`);
    writeFileSync(path, '{"value":1}\n');
    expect(() => createEvalCache({ path })).toThrow(/expected \{"key"/);
  });

  it('fails with io-error when the file cannot be written', () => {
    const cache = createEvalCache({ path: join(directory(), 'missing', 'cache.jsonl') });
    expect(() => cache.set('a', 1)).toThrow(expect.objectContaining({ code: 'io-error' }));
  });
});
