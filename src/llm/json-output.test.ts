import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JSONValue } from '../messages/types.js';
import { extractJson, parseJsonOutput, readJsonReply } from './json-output.js';
import { buildLlmResponse } from './llm-request.js';
import { isProviderError } from './provider-error.js';

describe('extractJson', () => {
  it('reads a whole reply, a fenced one, and one inside prose', () => {
    expect(extractJson(' {"a": 1} ')).toEqual({ a: 1 });
    expect(extractJson('```json\n[1, 2]\n```')).toEqual([1, 2]);
    expect(extractJson('Result: {"path": "a/{b}.ts", "q": "say \\"}\\""} — hope that helps')).toEqual({
      path: 'a/{b}.ts',
      q: 'say "}"',
    });
  });

  it('skips brackets that are not JSON and honours the allowed openers', () => {
    expect(extractJson('see [note 1] and {"ok": true}')).toEqual({ ok: true });
    expect(extractJson('[1] then {"ok": true}', '{')).toEqual({ ok: true });
    expect(extractJson('no json here')).toBeUndefined();
    expect(extractJson('{"open": ')).toBeUndefined();
  });

  it('finds any object embedded in prose without brackets', () => {
    const prose = fc.string({ maxLength: 40 }).filter((text) => !/[{}[\]"]/.test(text));
    const object = fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });
    fc.assert(
      fc.property(prose, object, prose, fc.constantFrom(0, 2), (before, value, after, indent) => {
        const text = `${before}\n${JSON.stringify(value, null, indent)}\n${after}`;
        expect(extractJson(text, '{')).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });
});

describe('parseJsonOutput', () => {
  const schema: JSONValue = { type: 'array', items: { type: 'integer' } };

  it('returns the JSON matching the schema, looking only for arrays when the schema wants one', () => {
    expect(parseJsonOutput('{"x": 1} or rather [1, 2]', schema, { provider: 'p' })).toEqual([1, 2]);
  });

  it('throws invalid-output errors with the request id and an excerpt', () => {
    let caught: unknown;
    try {
      parseJsonOutput('[1, "two", 3.5]', schema, { provider: 'p', requestId: 'r1' });
    } catch (error) {
      caught = error;
    }
    expect(isProviderError(caught)).toBe(true);
    expect(caught).toMatchObject({
      kind: 'invalid-output',
      retryable: false,
      requestId: 'r1',
      bodyExcerpt: '[1, "two", 3.5]',
      issues: ['[1]: expected integer, got string "two"', '[2]: expected integer, got number 3.5'],
    });
    expect((caught as Error).message).toBe(
      'p: the JSON reply does not match the schema: [1]: expected integer, got string "two"; [2]: expected integer, got number 3.5',
    );
  });
});

describe('readJsonReply', () => {
  const schema: JSONValue = {
    type: 'object',
    properties: { items: { type: 'array', items: { type: 'integer' } } },
    required: ['items'],
  };
  const built = (text: string) =>
    buildLlmResponse({
      provider: 'p',
      text,
      jsonSchema: schema,
      model: undefined,
      finishReason: undefined,
      usage: undefined,
      requestId: undefined,
      warnings: [],
    });

  it("takes a built-in client's JSON as the client checked it, and checks it for another schema", () => {
    const response = built('{"items": [1, 2]}');
    expect(readJsonReply(response, schema)).toEqual({ ok: true, value: { items: [1, 2] } });
    // The check is not repeated for the schema the client checked against: a value changed since goes through.
    response.json = { items: ['changed'] };
    expect(readJsonReply(response, schema)).toEqual({ ok: true, value: { items: ['changed'] } });
    const copy = structuredClone(schema);
    expect(readJsonReply(response, copy)).toEqual({
      ok: false,
      problem: 'items[0]: expected integer, got string "changed"',
    });
  });

  it("checks any other client's json, or else the JSON in its text", () => {
    expect(readJsonReply({ text: '', json: { items: [3] } }, schema)).toEqual({
      ok: true,
      value: { items: [3] },
    });
    expect(readJsonReply({ text: 'Here: {"items": [4]} done' }, schema)).toEqual({
      ok: true,
      value: { items: [4] },
    });
    expect(readJsonReply({ text: '{"items": [1]}', json: { items: 'x' } }, schema)).toEqual({
      ok: false,
      problem: 'items: expected array, got string "x"',
    });
    expect(readJsonReply({ text: 'no json here' }, schema)).toEqual({
      ok: false,
      problem: 'no JSON in the reply',
    });
    // A bare list is not the object the schema asks for.
    expect(readJsonReply({ text: '[1, 2]' }, schema)).toMatchObject({ ok: false });
    expect(readJsonReply({ text: '{"items": ["a", "b", "c", "d", "e"]}' }, schema)).toEqual({
      ok: false,
      problem:
        'items[0]: expected integer, got string "a"; items[1]: expected integer, got string "b"; ' +
        'items[2]: expected integer, got string "c"; and 2 more',
    });
  });
});
