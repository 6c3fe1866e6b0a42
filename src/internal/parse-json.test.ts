import { describe, expect, it } from 'vitest';
import { InvalidJsonError } from '../errors/index.js';
import { lineAndColumn, looksLikeJsonLines, parseJsonLines, parseJsonText } from './parse-json.js';

describe('parseJsonText', () => {
  it('names file, line and column of a syntax error', () => {
    const text = '[\n  {"role": "user",\n   "content": "hi",}\n]';
    let caught: unknown;
    try {
      parseJsonText(text, { file: 'chat.json' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidJsonError);
    const error = caught as InvalidJsonError;
    expect(error.code).toBe('invalid-json');
    expect(error.file).toBe('chat.json');
    expect(error.line).toBe(3);
    expect(error.message).toMatch(/^chat\.json:3:\d+: invalid JSON/);
  });

  it('reports truncated input at its end', () => {
    expect(() => parseJsonText('{"a": [1, 2', { file: 'x.json' })).toThrow(/x\.json:1:\d+: invalid JSON/);
  });
});

describe('parseJsonLines', () => {
  it('skips blank lines and keeps line numbers', () => {
    expect(parseJsonLines('{"a":1}\n\n{"b":2}\n')).toEqual([
      { line: 1, value: { a: 1 } },
      { line: 3, value: { b: 2 } },
    ]);
  });

  it('names the bad line', () => {
    expect(() => parseJsonLines('{"a":1}\n{oops}\n', { file: 's.jsonl' })).toThrow(
      /^s\.jsonl:2: invalid JSON line/,
    );
  });

  it('tells JSON Lines from one document', () => {
    expect(looksLikeJsonLines('{"a":1}\n{"b":2}')).toBe(true);
    expect(looksLikeJsonLines('{\n"a": 1\n}')).toBe(false);
    expect(looksLikeJsonLines('[{"a":1}]')).toBe(false);
  });
});

describe('lineAndColumn', () => {
  it('is 1-based', () => {
    expect(lineAndColumn('ab\ncd', 0)).toEqual({ line: 1, column: 1 });
    expect(lineAndColumn('ab\ncd', 4)).toEqual({ line: 2, column: 2 });
  });
});
