import { toolOutputText } from '../../messages/content.js';
import type {
  IdentifiedMessage,
  JSONObject,
  JSONValue,
  Part,
  ToolResultOutput,
  ToolResultPart,
} from '../../messages/types.js';
import type { Strategy, StrategyAction, StrategyContext, StrategyResult } from '../strategy.js';
import { checkCount, checkStrategyInput, rewriteOldestFirst } from '../strategy-support.js';

export interface CompactJsonOutputsOptions {
  /** Outputs smaller than this many tokens are left alone: too little to gain. @default 50 */
  minTokens?: number;
}

const strategyName = 'compact-json-outputs';

/**
 * Compacted JSON shorter by less than this share of its characters is left as it was: JSON that is already
 * minified gains a few tokens at most (0.4% on a real 6k-token MCP output), not worth a rewrite, an archived
 * original and counting the new text. Pretty-printed JSON saves 8–40%.
 */
const minCharacterSaving = 0.02;

/**
 * Compacts JSON tool outputs: drops object fields whose value is null, `""`, `[]` or `{}` (recursively, so an
 * object emptied by that goes too; array items are kept, since their positions mean something) and minifies.
 * Applies to `json` / `error-json` outputs, and to `text` / `error-text` outputs and text items of `content`
 * outputs that parse as a JSON object or array; each keeps its output type (a text output stays text, holding
 * the minified JSON). Text is re-serialised from its own tokens, so numbers and string escapes stay exactly as
 * written (no precision loss on big integers).
 *
 * An output is replaced only when that saves tokens (and at least 2% of its characters); its original is
 * archived (`tool-output`) and the handle is in the action. No stub text is added, since the compacted output
 * carries the same information.
 * Does nothing when the conversation is within budget; otherwise handles outputs oldest first and stops as
 * soon as the budget holds. Preserved messages are skipped.
 */
export function compactJsonOutputs(options: CompactJsonOutputsOptions = {}): Strategy {
  const { minTokens = 50 } = options;
  checkCount('minTokens', minTokens);
  return {
    name: strategyName,
    apply(messages, context) {
      checkStrategyInput(messages);
      return applyCompactJson(messages, context, minTokens);
    },
  };
}

function applyCompactJson(
  messages: readonly IdentifiedMessage[],
  context: StrategyContext,
  minTokens: number,
): StrategyResult {
  const actions: StrategyAction[] = [];
  const count = (text: string) => context.accountant.countText(text);
  const rewrite = (message: IdentifiedMessage): IdentifiedMessage | undefined => {
    if (typeof message.content === 'string') return undefined;
    if (message.role !== 'tool' && message.role !== 'assistant') return undefined;
    if (context.preservedIds.has(message.id)) return undefined;
    let changed = false;
    const parts = (message.content as readonly Part[]).map((part) => {
      if (part.type !== 'tool-result') return part;
      const before = toolOutputText(part.output);
      // A text has at most as many tokens as characters: short ones are skipped before any work. Outputs
      // holding no JSON are found by the (cheap) compaction attempt, before anything is tokenized.
      if (before.length < Math.max(1, minTokens)) return part;
      const compacted = compactToolOutput(part.output);
      if (compacted === undefined) return part;
      const after = toolOutputText(compacted);
      if (after.length > before.length * (1 - minCharacterSaving)) return part;
      const tokensBefore = count(before);
      if (tokensBefore < minTokens) return part;
      const tokensAfter = count(after);
      if (tokensAfter >= tokensBefore) return part;
      const handle = context.archive.put({
        kind: 'tool-output',
        content: part.output as unknown as JSONValue,
        messageIds: [message.id],
        strategy: strategyName,
      });
      actions.push({
        type: 'compact-json-output',
        strategy: strategyName,
        messageIds: [message.id],
        handle,
        tokensBefore,
        tokensAfter,
        description: `compacted the JSON output of ${part.toolName} (${part.toolCallId}): ${tokensBefore} → ${tokensAfter} tokens`,
      });
      changed = true;
      return { ...part, output: compacted } satisfies ToolResultPart;
    });
    return changed ? ({ ...message, content: parts } as IdentifiedMessage) : undefined;
  };
  return { messages: rewriteOldestFirst(messages, context, rewrite), actions, warnings: [] };
}

/** The output with its JSON compacted, or undefined when it holds no JSON or nothing changes. */
export function compactToolOutput(output: ToolResultOutput): ToolResultOutput | undefined {
  switch (output.type) {
    case 'json':
    case 'error-json': {
      const value = pruneJsonValue(output.value);
      return value === output.value ? undefined : { ...output, value };
    }
    case 'text':
    case 'error-text': {
      const value = compactJsonText(output.value);
      return value === undefined ? undefined : { ...output, value };
    }
    case 'content': {
      let changed = false;
      const value = output.value.map((item) => {
        if (item.type !== 'text') return item;
        const text = compactJsonText(item.text);
        if (text === undefined) return item;
        changed = true;
        return { ...item, text };
      });
      return changed ? { ...output, value } : undefined;
    }
    default:
      return undefined;
  }
}

function isEmptyJson(value: JSONValue): boolean {
  if (value === null || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}

/**
 * `value` without object fields that are null, `""`, `[]` or `{}` (after pruning their own content). Returns
 * `value` itself when nothing was dropped, so callers can tell.
 */
export function pruneJsonValue(value: JSONValue): JSONValue {
  if (Array.isArray(value)) {
    let changed = false;
    const items = value.map((item) => {
      const pruned = pruneJsonValue(item);
      if (pruned !== item) changed = true;
      return pruned;
    });
    return changed ? items : value;
  }
  if (value === null || typeof value !== 'object') return value;
  let changed = false;
  const result: JSONObject = {};
  for (const [key, field] of Object.entries(value)) {
    const pruned = pruneJsonValue(field);
    if (pruned !== field) changed = true;
    if (isEmptyJson(pruned)) {
      changed = true;
      continue;
    }
    result[key] = pruned;
  }
  return changed ? result : value;
}

/**
 * A JSON object or array written as text, pruned like `pruneJsonValue` and minified; numbers, strings and key
 * order stay exactly as written. Undefined when the text is not one JSON object or array, or is already compact.
 */
export function compactJsonText(text: string): string | undefined {
  const first = /\S/.exec(text)?.[0];
  if (first !== '{' && first !== '[') return undefined;
  const tree = parseRawJson(text);
  if (tree === undefined) return undefined;
  const compacted = serializeRaw(pruneRaw(tree));
  return compacted === text ? undefined : compacted;
}

/** JSON with strings and numbers kept as their source text. */
type RawJson =
  | { kind: 'object'; entries: Array<[key: string, value: RawJson]> }
  | { kind: 'array'; items: RawJson[] }
  | { kind: 'scalar'; raw: string };

const maxDepth = 256;
const stringToken = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const numberToken = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const literalToken = /true|false|null/y;
const whitespace = /[ \t\n\r]*/y;

/** Strict JSON (RFC 8259) into a raw tree; undefined on any syntax error or nesting deeper than 256. */
function parseRawJson(text: string): RawJson | undefined {
  let position = 0;
  const skip = () => {
    whitespace.lastIndex = position;
    whitespace.exec(text);
    position = whitespace.lastIndex;
  };
  const token = (pattern: RegExp): string | undefined => {
    pattern.lastIndex = position;
    const match = pattern.exec(text);
    if (match === null) return undefined;
    position = pattern.lastIndex;
    return match[0];
  };
  const value = (depth: number): RawJson | undefined => {
    if (depth > maxDepth) return undefined;
    skip();
    const character = text[position];
    if (character === '{') {
      position++;
      const entries: Array<[string, RawJson]> = [];
      skip();
      if (text[position] === '}') {
        position++;
        return { kind: 'object', entries };
      }
      for (;;) {
        skip();
        const key = token(stringToken);
        if (key === undefined) return undefined;
        skip();
        if (text[position] !== ':') return undefined;
        position++;
        const field = value(depth + 1);
        if (field === undefined) return undefined;
        entries.push([key, field]);
        skip();
        if (text[position] === ',') {
          position++;
          continue;
        }
        if (text[position] !== '}') return undefined;
        position++;
        return { kind: 'object', entries };
      }
    }
    if (character === '[') {
      position++;
      const items: RawJson[] = [];
      skip();
      if (text[position] === ']') {
        position++;
        return { kind: 'array', items };
      }
      for (;;) {
        const item = value(depth + 1);
        if (item === undefined) return undefined;
        items.push(item);
        skip();
        if (text[position] === ',') {
          position++;
          continue;
        }
        if (text[position] !== ']') return undefined;
        position++;
        return { kind: 'array', items };
      }
    }
    const pattern =
      character === '"'
        ? stringToken
        : character === 't' || character === 'f' || character === 'n'
          ? literalToken
          : numberToken;
    const raw = token(pattern);
    return raw === undefined ? undefined : { kind: 'scalar', raw };
  };
  const tree = value(0);
  skip();
  return tree !== undefined && position === text.length ? tree : undefined;
}

/** The tree without empty object fields, recursively; array items stay (pruned inside). */
function pruneRaw(node: RawJson): RawJson {
  switch (node.kind) {
    case 'scalar':
      return node;
    case 'array':
      return { kind: 'array', items: node.items.map(pruneRaw) };
    case 'object': {
      const entries: Array<[string, RawJson]> = [];
      for (const [key, field] of node.entries) {
        const pruned = pruneRaw(field);
        if (!isEmptyRaw(pruned)) entries.push([key, pruned]);
      }
      return { kind: 'object', entries };
    }
  }
}

function isEmptyRaw(node: RawJson): boolean {
  if (node.kind === 'scalar') return node.raw === 'null' || node.raw === '""';
  return node.kind === 'array' ? node.items.length === 0 : node.entries.length === 0;
}

function serializeRaw(node: RawJson): string {
  switch (node.kind) {
    case 'scalar':
      return node.raw;
    case 'array':
      return `[${node.items.map(serializeRaw).join(',')}]`;
    case 'object':
      return `{${node.entries.map(([key, field]) => `${key}:${serializeRaw(field)}`).join(',')}}`;
  }
}
