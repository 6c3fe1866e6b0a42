import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors/index.js';
import type { JSONValue } from '../messages/types.js';
import { checkJsonSchema, checkJsonSchemaDefinition } from './json-schema-check.js';

/** The tightest schema `value` matches: exact types, every key required, no other keys. */
function schemaOf(value: JSONValue): JSONValue {
  if (value === null) return { type: 'null' };
  if (Array.isArray(value)) return { type: 'array', minItems: value.length, maxItems: value.length };
  switch (typeof value) {
    case 'string':
      return { type: 'string', enum: [value] };
    case 'number':
      return { type: Number.isInteger(value) ? 'integer' : 'number', minimum: value, maximum: value };
    case 'boolean':
      return { type: 'boolean' };
    default:
      return {
        type: 'object',
        properties: Object.fromEntries(Object.entries(value).map(([key, item]) => [key, schemaOf(item)])),
        required: Object.keys(value),
        additionalProperties: false,
      };
  }
}

const jsonValue = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<JSONValue>;
const jsonObject = fc.dictionary(fc.string({ maxLength: 6 }), jsonValue, { minKeys: 1, maxKeys: 5 });

describe('checkJsonSchema', () => {
  const schema = {
    type: 'object',
    properties: {
      title: { type: 'string', minLength: 1, maxLength: 5 },
      count: { type: 'integer', minimum: 0 },
      ratio: { type: 'number', maximum: 1 },
      tags: { type: 'array', items: { type: 'string' }, maxItems: 2 },
      state: { enum: ['open', 'done'] },
      note: { type: ['string', 'null'] },
      nested: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
      fixed: { const: { a: [1] } },
    },
    required: ['title', 'count'],
    additionalProperties: false,
  };

  it('accepts a matching value', () => {
    const value = {
      title: 'héllo',
      count: 3,
      ratio: 0.5,
      tags: ['a'],
      state: 'done',
      note: null,
      nested: { ok: true, more: 1 },
      fixed: { a: [1] },
    };
    expect(checkJsonSchema(value, schema)).toEqual([]);
  });

  it('reports every problem with its path', () => {
    const value = {
      title: '',
      count: 1.5,
      ratio: 2,
      tags: ['a', 3, 'c'],
      state: 'closed',
      note: 4,
      nested: {},
      fixed: { a: [2] },
      'odd key': 1,
    };
    expect(checkJsonSchema(value, schema)).toEqual([
      { path: 'title', message: 'expected at least 1 characters, got 0' },
      { path: 'count', message: 'expected integer, got number 1.5' },
      { path: 'ratio', message: 'expected at most 1, got 2' },
      { path: 'tags', message: 'expected at most 2 items, got 3' },
      { path: 'tags[1]', message: 'expected string, got number 3' },
      { path: 'state', message: 'expected one of "open", "done", got string "closed"' },
      { path: 'note', message: 'expected string or null, got number 4' },
      { path: 'nested.ok', message: 'required, missing' },
      { path: 'fixed', message: 'expected {"a":[1]}, got an object' },
      { path: '["odd key"]', message: 'not an allowed property' },
    ]);
  });

  it('reports missing required properties and a wrong root type', () => {
    expect(checkJsonSchema({}, schema).map((issue) => issue.path)).toEqual(['title', 'count']);
    expect(checkJsonSchema([], schema)).toEqual([{ path: '', message: 'expected object, got an array' }]);
  });

  it('checks additional properties against a schema, and boolean schemas', () => {
    const map = { type: 'object', additionalProperties: { type: 'number' } };
    expect(checkJsonSchema({ a: 1, b: 'x' }, map)).toEqual([
      { path: 'b', message: 'expected number, got string "x"' },
    ]);
    expect(checkJsonSchema('anything', true)).toEqual([]);
    expect(checkJsonSchema(1, false)).toHaveLength(1);
  });

  it('accepts every value under the empty schema', () => {
    fc.assert(fc.property(jsonValue, (value) => checkJsonSchema(value, {}).length === 0));
  });

  it('accepts every value under its own tightest schema', () => {
    fc.assert(
      fc.property(jsonValue, (value) => {
        expect(checkJsonSchema(value, schemaOf(value))).toEqual([]);
      }),
    );
  });

  it('reports a removed required key at its path, and an added key as not allowed', () => {
    fc.assert(
      fc.property(jsonObject, fc.nat(), (value, pick) => {
        const keys = Object.keys(value);
        const removed = keys[pick % keys.length]!;
        const schema = schemaOf(value);
        const without = Object.fromEntries(Object.entries(value).filter(([key]) => key !== removed));
        expect(checkJsonSchema(without, schema).map((issue) => issue.message)).toEqual(['required, missing']);
        let extra = `${removed}+`;
        while (keys.includes(extra)) extra += '+';
        const added = { ...value, [extra]: 1 };
        expect(checkJsonSchema(added, schema).map((issue) => issue.message)).toEqual([
          'not an allowed property',
        ]);
      }),
    );
  });
});

describe('checkJsonSchemaDefinition', () => {
  it('accepts the supported subset with annotations', () => {
    expect(() =>
      checkJsonSchemaDefinition({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        title: 'summary',
        type: 'object',
        description: 'what we need',
        properties: { a: { type: ['string', 'null'], default: null }, b: { items: true } },
        additionalProperties: false,
      }),
    ).not.toThrow();
  });

  it('refuses what it cannot check, naming the option and the schema path', () => {
    const refused = [
      [{ anyOf: [] }, 'unsupported keyword "anyOf"'],
      [{ properties: { a: { $ref: '#/x' } } }, 'at properties.a: unsupported keyword "$ref"'],
      [{ type: 'text' }, 'at type: unknown type string "text"'],
      [{ items: 3 }, 'at items: a schema must be an object or a boolean'],
      [{ required: 'a' }, 'at required'],
      [{ minItems: -1 }, 'at minItems'],
      ['object', 'a schema must be an object or a boolean'],
    ] as const;
    for (const [schema, message] of refused) {
      let caught: unknown;
      try {
        checkJsonSchemaDefinition(schema, 'summarySchema');
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(InvalidArgumentError);
      expect((caught as InvalidArgumentError).option).toBe('summarySchema');
      expect((caught as Error).message).toContain(message);
    }
  });
});
