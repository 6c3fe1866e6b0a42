import { InvalidArgumentError } from '../errors/index.js';
import { describeValue, isRecord } from '../internal/json-shapes.js';
import { stableStringify } from '../internal/stable-json.js';

/**
 * A small JSON Schema checker for what precis asks LLMs to produce, so no validator dependency is needed.
 *
 * Supported: `type` (a name or a list of names among `jsonSchemaTypes`), `properties`, `required`, `items`,
 * `enum`, `const`, `additionalProperties` (`false` or a schema), `minItems` / `maxItems`, `minLength` /
 * `maxLength`, `minimum` / `maximum`, and the boolean schemas `true` / `false`. Annotations (`title`,
 * `description`, `default`, `examples`, `$schema`, `$id`) are ignored. Any other keyword is refused by
 * `checkJsonSchemaDefinition`, because silently ignoring `anyOf` or `$ref` would pass output it should reject.
 */

export const jsonSchemaTypes = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'] as const;
export type JsonSchemaType = (typeof jsonSchemaTypes)[number];

export interface JsonSchemaIssue {
  /** Where in the value, e.g. `sections[2].title`; empty for the value itself. */
  path: string;
  message: string;
}

type Schema = Record<string, unknown> | boolean;

const annotationKeywords = ['title', 'description', 'default', 'examples', '$schema', '$id', '$comment'];
const validationKeywords = [
  'type',
  'properties',
  'required',
  'items',
  'enum',
  'const',
  'additionalProperties',
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
];
const countKeywords = ['minItems', 'maxItems', 'minLength', 'maxLength'];

/**
 * Throws `InvalidArgumentError` naming `option` and the schema path when `schema` is not a schema this checker
 * understands completely.
 */
export function checkJsonSchemaDefinition(schema: unknown, option = 'jsonSchema'): void {
  const fail = (path: string, reason: string): never => {
    throw new InvalidArgumentError(option, path === '' ? reason : `at ${path}: ${reason}`);
  };
  const visit = (node: unknown, path: string): void => {
    if (typeof node === 'boolean') return;
    if (!isRecord(node)) fail(path, `a schema must be an object or a boolean, got ${describeValue(node)}`);
    const record = node as Record<string, unknown>;
    for (const keyword of Object.keys(record)) {
      if (!annotationKeywords.includes(keyword) && !validationKeywords.includes(keyword)) {
        fail(path, `unsupported keyword "${keyword}" (supported: ${validationKeywords.join(', ')})`);
      }
    }
    const { type, properties, required, items, additionalProperties } = record;
    if (type !== undefined) {
      const names = Array.isArray(type) ? type : [type];
      for (const name of names) {
        if (!(jsonSchemaTypes as readonly unknown[]).includes(name)) {
          fail(
            joinPath(path, 'type'),
            `unknown type ${describeValue(name)} (expected ${jsonSchemaTypes.join(', ')})`,
          );
        }
      }
    }
    if (properties !== undefined) {
      if (!isRecord(properties)) fail(joinPath(path, 'properties'), 'expected an object of schemas');
      for (const [name, property] of Object.entries(properties as Record<string, unknown>)) {
        visit(property, joinPath(joinPath(path, 'properties'), name));
      }
    }
    if (
      required !== undefined &&
      (!Array.isArray(required) || !required.every((name) => typeof name === 'string'))
    ) {
      fail(joinPath(path, 'required'), 'expected an array of property names');
    }
    if (record.enum !== undefined && !Array.isArray(record.enum))
      fail(joinPath(path, 'enum'), 'expected an array');
    if (items !== undefined) visit(items, joinPath(path, 'items'));
    if (additionalProperties !== undefined)
      visit(additionalProperties, joinPath(path, 'additionalProperties'));
    for (const keyword of countKeywords) {
      const value = record[keyword];
      if (value !== undefined && (!Number.isSafeInteger(value) || (value as number) < 0)) {
        fail(joinPath(path, keyword), `expected a non-negative integer, got ${describeValue(value)}`);
      }
    }
    for (const keyword of ['minimum', 'maximum']) {
      const value = record[keyword];
      if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value))) {
        fail(joinPath(path, keyword), `expected a number, got ${describeValue(value)}`);
      }
    }
  };
  visit(schema, '');
}

/**
 * Checks `value` against `schema` and returns every problem found, in document order; an empty list means the
 * value matches. Assumes a schema `checkJsonSchemaDefinition` accepts.
 */
export function checkJsonSchema(value: unknown, schema: unknown): JsonSchemaIssue[] {
  const issues: JsonSchemaIssue[] = [];
  checkNode(value, schema as Schema, '', issues);
  return issues;
}

function checkNode(value: unknown, schema: Schema, path: string, issues: JsonSchemaIssue[]): void {
  if (schema === true) return;
  if (schema === false) {
    issues.push({ path, message: 'no value is allowed here' });
    return;
  }
  if (schema.type !== undefined) {
    const names = (Array.isArray(schema.type) ? schema.type : [schema.type]) as JsonSchemaType[];
    if (!names.some((name) => hasType(value, name))) {
      issues.push({ path, message: `expected ${names.join(' or ')}, got ${describeValue(value)}` });
      // The other keywords would only repeat the same mismatch.
      return;
    }
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((option) => sameJson(option, value))) {
    const options = schema.enum.map((option) => JSON.stringify(option)).join(', ');
    issues.push({ path, message: `expected one of ${options}, got ${describeValue(value)}` });
  }
  if (schema.const !== undefined && !sameJson(schema.const, value)) {
    issues.push({ path, message: `expected ${JSON.stringify(schema.const)}, got ${describeValue(value)}` });
  }
  if (typeof value === 'string') checkString(value, schema, path, issues);
  else if (typeof value === 'number') checkNumber(value, schema, path, issues);
  else if (Array.isArray(value)) checkArray(value, schema, path, issues);
  else if (isRecord(value)) checkObject(value, schema, path, issues);
}

function hasType(value: unknown, type: JsonSchemaType): boolean {
  switch (type) {
    case 'object':
      return isRecord(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
  }
}

function checkString(
  value: string,
  schema: Record<string, unknown>,
  path: string,
  issues: JsonSchemaIssue[],
) {
  // Code points, as JSON Schema counts them, not UTF-16 units.
  const length = [...value].length;
  if (typeof schema.minLength === 'number' && length < schema.minLength) {
    issues.push({ path, message: `expected at least ${schema.minLength} characters, got ${length}` });
  }
  if (typeof schema.maxLength === 'number' && length > schema.maxLength) {
    issues.push({ path, message: `expected at most ${schema.maxLength} characters, got ${length}` });
  }
}

function checkNumber(
  value: number,
  schema: Record<string, unknown>,
  path: string,
  issues: JsonSchemaIssue[],
) {
  if (typeof schema.minimum === 'number' && value < schema.minimum) {
    issues.push({ path, message: `expected at least ${schema.minimum}, got ${value}` });
  }
  if (typeof schema.maximum === 'number' && value > schema.maximum) {
    issues.push({ path, message: `expected at most ${schema.maximum}, got ${value}` });
  }
}

function checkArray(
  value: unknown[],
  schema: Record<string, unknown>,
  path: string,
  issues: JsonSchemaIssue[],
) {
  if (typeof schema.minItems === 'number' && value.length < schema.minItems) {
    issues.push({ path, message: `expected at least ${schema.minItems} items, got ${value.length}` });
  }
  if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) {
    issues.push({ path, message: `expected at most ${schema.maxItems} items, got ${value.length}` });
  }
  if (schema.items === undefined) return;
  value.forEach((item, position) => {
    checkNode(item, schema.items as Schema, `${path}[${position}]`, issues);
  });
}

function checkObject(
  value: Record<string, unknown>,
  schema: Record<string, unknown>,
  path: string,
  issues: JsonSchemaIssue[],
) {
  const properties = isRecord(schema.properties) ? (schema.properties as Record<string, Schema>) : {};
  if (Array.isArray(schema.required)) {
    for (const name of schema.required as string[]) {
      if (!Object.hasOwn(value, name))
        issues.push({ path: joinPath(path, name), message: 'required, missing' });
    }
  }
  for (const [name, property] of Object.entries(value)) {
    const propertyPath = joinPath(path, name);
    if (Object.hasOwn(properties, name)) checkNode(property, properties[name]!, propertyPath, issues);
    else if (schema.additionalProperties === false) {
      issues.push({ path: propertyPath, message: 'not an allowed property' });
    } else if (schema.additionalProperties !== undefined) {
      checkNode(property, schema.additionalProperties as Schema, propertyPath, issues);
    }
  }
}

/** `a.b`, or `a["odd key"]` for keys that are not identifiers. */
function joinPath(path: string, key: string): string {
  if (/^[A-Za-z_$][\w$]*$/.test(key)) return path === '' ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}

function sameJson(left: unknown, right: unknown): boolean {
  return stableStringify(left) === stableStringify(right);
}
