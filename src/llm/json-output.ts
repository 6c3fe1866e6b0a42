import { isRecord } from '../internal/json-shapes.js';
import type { JSONValue } from '../messages/types.js';
import { checkJsonSchema } from './json-schema-check.js';
import type { LlmResponse } from './llm-client.js';
import { ProviderError } from './provider-error.js';

/** Candidates tried before giving up, so a long reply full of braces cannot make extraction quadratic. */
const maxCandidates = 20;

/** The instruction added to the system prompt in JSON mode, for models that do not enforce the schema. */
export function jsonOutputInstruction(schema: JSONValue): string {
  return [
    'Respond with a single JSON value that matches the JSON Schema below.',
    'Output only the JSON: no prose before or after it, no Markdown code fences.',
    '',
    JSON.stringify(schema),
  ].join('\n');
}

/**
 * The JSON a model reply holds: the whole reply when it parses, otherwise the first object (or array) in it
 * that parses, so prose around the JSON or a Markdown fence does not matter. `openers` limits what counts as
 * the start of a value (`{` for an object). Undefined when nothing parses.
 */
export function extractJson(text: string, openers = '{['): JSONValue | undefined {
  const whole = tryParse(text.trim());
  if (
    whole !== undefined &&
    (typeof whole !== 'object' || whole === null || openers.includes(openerOf(whole)))
  ) {
    return whole;
  }
  let candidates = 0;
  for (let start = 0; start < text.length && candidates < maxCandidates; start++) {
    if (!openers.includes(text[start]!)) continue;
    const end = closingIndex(text, start);
    if (end === undefined) continue;
    candidates++;
    const parsed = tryParse(text.slice(start, end + 1));
    if (parsed !== undefined) return parsed;
  }
  return undefined;
}

/**
 * Parses a JSON-mode reply and checks it against `schema`.
 *
 * @throws ProviderError of kind `invalid-output` (not retryable) when there is no JSON or it does not match
 */
export function parseJsonOutput(
  text: string,
  schema: JSONValue,
  context: { provider: string; requestId?: string | undefined },
): JSONValue {
  const details = {
    provider: context.provider,
    kind: 'invalid-output' as const,
    retryable: false,
    bodyExcerpt: text.slice(0, 500),
    ...(context.requestId === undefined ? {} : { requestId: context.requestId }),
  };
  const value = extractJson(text, openersFor(schema));
  if (value === undefined) {
    throw new ProviderError('JSON was requested but the reply holds no parsable JSON', details);
  }
  const issues = schemaIssues(value, schema);
  if (issues.length > 0) {
    throw new ProviderError(`the JSON reply does not match the schema: ${describeIssues(issues)}`, {
      ...details,
      issues,
    });
  }
  return value;
}

/** Replies whose `json` a built-in client checked, and against which schema (see `setCheckedJson`). */
const checkedReplies = new WeakMap<LlmResponse, JSONValue>();

/**
 * Sets `response.json` to the JSON of its text checked against `schema` (`parseJsonOutput`), and records the
 * check so `readJsonReply` does not repeat it. What the built-in clients do with every JSON-mode reply.
 *
 * @throws ProviderError of kind `invalid-output` (not retryable) when there is no JSON or it does not match
 */
export function setCheckedJson(
  response: LlmResponse,
  schema: JSONValue,
  context: { provider: string; requestId?: string | undefined },
): void {
  response.json = parseJsonOutput(response.text, schema, context);
  checkedReplies.set(response, schema);
}

/** The JSON of a reply checked against a schema, or what is wrong with it. */
export type JsonReply = { ok: true; value: JSONValue } | { ok: false; problem: string };

/**
 * The JSON of a reply to a request with `jsonSchema: schema`, checked against the schema once per reply. A
 * built-in client's reply was checked before the client returned it, so its `json` is taken as is. Any other
 * client's reply is checked here: its `json`, or else the JSON in its text, since an `LlmClient` need not check
 * (`createScriptedLlmClient` does not).
 */
export function readJsonReply(response: LlmResponse, schema: JSONValue): JsonReply {
  if (response.json !== undefined && checkedReplies.get(response) === schema)
    return { ok: true, value: response.json };
  const value = response.json ?? extractJson(response.text ?? '', openersFor(schema));
  if (value === undefined) return { ok: false, problem: 'no JSON in the reply' };
  const issues = schemaIssues(value, schema);
  return issues.length > 0 ? { ok: false, problem: describeIssues(issues) } : { ok: true, value };
}

/** Every way `value` does not match `schema`, as `path: message`. */
function schemaIssues(value: JSONValue, schema: JSONValue): string[] {
  return checkJsonSchema(value, schema).map(
    (issue) => `${issue.path === '' ? '(root)' : issue.path}: ${issue.message}`,
  );
}

/** The first three issues, and how many more there are. */
function describeIssues(issues: readonly string[]): string {
  return issues.slice(0, 3).join('; ') + (issues.length > 3 ? `; and ${issues.length - 3} more` : '');
}

/** Where a value of the schema's top-level type can start. */
function openersFor(schema: JSONValue): string {
  if (!isRecord(schema)) return '{[';
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const objects = types.includes('object');
  const arrays = types.includes('array');
  if (objects && !arrays) return '{';
  if (arrays && !objects) return '[';
  return '{[';
}

function openerOf(value: object): string {
  return Array.isArray(value) ? '[' : '{';
}

function tryParse(text: string): JSONValue | undefined {
  try {
    return JSON.parse(text) as JSONValue;
  } catch {
    return undefined;
  }
}

/** Index of the bracket closing the one at `start`, skipping brackets inside strings. */
function closingIndex(text: string, start: number): number | undefined {
  let depth = 0;
  let inString = false;
  for (let index = start; index < text.length; index++) {
    const character = text[index];
    if (inString) {
      if (character === '\\') index++;
      else if (character === '"') inString = false;
    } else if (character === '"') inString = true;
    else if (character === '{' || character === '[') depth++;
    else if (character === '}' || character === ']') {
      depth--;
      if (depth === 0) return index;
    }
  }
  return undefined;
}
