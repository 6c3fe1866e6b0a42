import { describe, expect, it } from 'vitest';
import {
  checkStrategyInvariants,
  richConversation,
  strategyContext,
} from '../../../test/strategy-invariants.js';
import { InvalidArgumentError } from '../../errors/index.js';
import { assignIds } from '../../messages/ids.js';
import type { ToolMessage } from '../../messages/types.js';
import { createConversationBuilder } from '../../testing/message-builders.js';
import { createTokenAccountant } from '../../tokens/index.js';
import {
  compactJsonOutputs,
  compactJsonText,
  compactToolOutput,
  pruneJsonValue,
} from './compact-json-outputs.js';

const accountant = createTokenAccountant();

const records = Array.from({ length: 12 }, (_, index) => ({
  id: index,
  title: `Issue ${index}`,
  assignee: null,
  labels: [],
  body: '',
  meta: { extra: {}, closed: index % 2 === 0 },
}));

describe('pruneJsonValue', () => {
  it('drops null, empty string, empty array and empty object fields recursively, keeping array items', () => {
    expect(
      pruneJsonValue({ a: null, b: '', c: [], d: {}, e: { f: null }, g: [null, {}, 1], h: 0, i: false }),
    ).toEqual({
      g: [null, {}, 1],
      h: 0,
      i: false,
    });
  });

  it('returns the same value when nothing is dropped', () => {
    const value = { a: [1, { b: 2 }] };
    expect(pruneJsonValue(value)).toBe(value);
  });
});

describe('compactJsonText', () => {
  it('minifies and prunes, keeping numbers, escapes and key order as written', () => {
    const text =
      '{\n  "z": 12345678901234567890,\n  "a": "caf\\u00e9",\n  "n": null,\n  "x": 1.50,\n  "l": [ {}, [] ]\n}';
    expect(compactJsonText(text)).toBe('{"z":12345678901234567890,"a":"caf\\u00e9","x":1.50,"l":[{},[]]}');
  });

  it('leaves non-JSON, scalars, invalid JSON and compact JSON alone', () => {
    expect(compactJsonText('hello {')).toBeUndefined();
    expect(compactJsonText('42')).toBeUndefined();
    expect(compactJsonText('{"a": 1,}')).toBeUndefined();
    expect(compactJsonText('{"a":1} trailing')).toBeUndefined();
    expect(compactJsonText('{"a":1}')).toBeUndefined();
    expect(compactJsonText('['.repeat(300) + ']'.repeat(300))).toBeUndefined();
  });
});

describe('compactToolOutput', () => {
  it('keeps the output type', () => {
    expect(compactToolOutput({ type: 'error-text', value: '{ "error": "boom", "trace": null }' })).toEqual({
      type: 'error-text',
      value: '{"error":"boom"}',
    });
    expect(compactToolOutput({ type: 'json', value: { a: null, b: 1 } })).toEqual({
      type: 'json',
      value: { b: 1 },
    });
    expect(compactToolOutput({ type: 'content', value: [{ type: 'text', text: '[ 1, 2 ]' }] })).toEqual({
      type: 'content',
      value: [{ type: 'text', text: '[1,2]' }],
    });
    expect(compactToolOutput({ type: 'execution-denied' })).toBeUndefined();
  });
});

describe('compactJsonOutputs', () => {
  const build = () =>
    assignIds(
      createConversationBuilder()
        .user('List the issues')
        .tools([
          { name: 'list_issues', input: {}, output: JSON.stringify(records, null, 2) },
          { name: 'list_issues', input: {}, output: { type: 'json', value: records } },
          { name: 'list_issues', input: {}, output: '{"small": null}' },
        ])
        .build(),
    );

  it('compacts large JSON outputs, archives the originals and saves tokens', () => {
    const messages = build();
    const context = strategyContext();
    const result = compactJsonOutputs().apply(messages, context);
    expect(result.actions).toHaveLength(2);
    const text = (result.messages[2] as ToolMessage).content[0]!;
    expect(text).toMatchObject({ type: 'tool-result', toolCallId: 'call_1', toolName: 'list_issues' });
    expect(text.type === 'tool-result' && text.output).toEqual({
      type: 'text',
      value: JSON.stringify(
        records.map(({ id, title, meta }) => ({ id, title, meta: { closed: meta.closed } })),
      ),
    });
    const json = (result.messages[3] as ToolMessage).content[0]!;
    expect(json.type === 'tool-result' && json.output.type).toBe('json');
    expect(result.messages[4]).toBe(messages[4]);
    for (const action of result.actions) {
      expect(action.tokensAfter).toBeLessThan(action.tokensBefore);
      const original = messages.find((message) => message.id === action.messageIds[0]) as ToolMessage;
      expect(context.archive.get(action.handle!)?.content).toEqual(
        original.content[0]!.type === 'tool-result' ? original.content[0]!.output : undefined,
      );
    }
    expect(accountant.countConversation(result.messages).totalTokens).toBeLessThan(
      accountant.countConversation(messages).totalTokens,
    );
  });

  it('respects minTokens, preserved messages and a budget that already holds', () => {
    const messages = build();
    expect(compactJsonOutputs({ minTokens: 100_000 }).apply(messages, strategyContext()).actions).toEqual([]);
    const preserved = new Set(messages.map((message) => message.id));
    expect(
      compactJsonOutputs().apply(messages, strategyContext({ preservedIds: preserved })).actions,
    ).toEqual([]);
    expect(compactJsonOutputs().apply(messages, strategyContext({ budgetTokens: 1e9 })).actions).toEqual([]);
    expect(() => compactJsonOutputs({ minTokens: 1.5 })).toThrow(InvalidArgumentError);
  });

  it('leaves minified JSON that would lose less than 2% of its characters', () => {
    // One empty field among many filled ones: compacting saves a few characters and perhaps a token.
    const rows = Array.from({ length: 40 }, (_, id) => ({
      id,
      title: `Issue ${id} in the parser`,
      done: false,
    }));
    const almost = JSON.stringify({ rows, next: null });
    const worth = JSON.stringify({ rows: rows.slice(0, 4), next: null, cursor: '', labels: [] });
    const messages = assignIds(
      createConversationBuilder()
        .user('List the issues.')
        .tools([{ name: 'list_issues', input: {}, output: almost }])
        .tools([{ name: 'list_issues', input: { page: 2 }, output: worth }])
        .build(),
    );
    expect(compactJsonText(almost)).toHaveLength(almost.length - ',"next":null'.length);
    const result = compactJsonOutputs().apply(messages, strategyContext());
    expect(result.actions.map((action) => action.messageIds[0])).toEqual([messages[4]!.id]);
    expect(result.messages[2]).toBe(messages[2]);
  });

  it('keeps the invariants on generated conversations', () => {
    checkStrategyInvariants(compactJsonOutputs(), { conversations: richConversation() });
  });
});
