import { describe, expect, it } from 'vitest';
import { createMemoryArchive } from '../archive/archive-store.js';
import { expand } from '../archive/expand.js';
import { assignIds } from '../messages/ids.js';
import type { IdentifiedMessage, Part } from '../messages/types.js';
import { createTokenAccountant } from '../tokens/index.js';
import { minTrimmedTokens, trimLastTurnTexts } from './trim-last-turn.js';

const accountant = createTokenAccountant();
const count = (text: string) => accountant.countText(text);

function log(lines: number, tag = 'run'): string {
  return Array.from(
    { length: lines },
    (_, line) => `src/module${line}.ts:${line}: ${tag} check ${line} passed`,
  ).join('\n');
}

/** The last turn of an agent: one call, its output(s), as `bash` results. */
function lastTurn(...outputs: Array<string | { type: 'json'; value: unknown }>): IdentifiedMessage[] {
  return assignIds([
    { role: 'user', content: 'Run the tests.' },
    {
      role: 'assistant',
      content: outputs.map((_, index) => ({
        type: 'tool-call' as const,
        toolCallId: `call-${index}`,
        toolName: 'bash',
        input: { command: `npm test -- part${index}` },
      })),
    },
    {
      role: 'tool',
      content: outputs.map((output, index) => ({
        type: 'tool-result' as const,
        toolCallId: `call-${index}`,
        toolName: 'bash',
        output: typeof output === 'string' ? { type: 'text' as const, value: output } : (output as never),
      })),
    },
  ]);
}

/** A last turn whose calls (after `lead`, a text) have all run: each answered `ok`. */
function answeredCalls(
  lead: string,
  ...calls: Array<{ toolName: string; input: unknown }>
): IdentifiedMessage[] {
  return assignIds([
    { role: 'user', content: 'Change the module.' },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: lead },
        ...calls.map(({ toolName, input }, index) => ({
          type: 'tool-call' as const,
          toolCallId: `call-${index}`,
          toolName,
          input,
        })),
      ],
    },
    {
      role: 'tool',
      content: calls.map(({ toolName }, index) => ({
        type: 'tool-result' as const,
        toolCallId: `call-${index}`,
        toolName,
        output: { type: 'text' as const, value: 'ok' },
      })),
    },
  ]);
}

function outputValue(message: IdentifiedMessage, index = 0): string {
  const part = (message.content as Part[])[index]!;
  return part.type === 'tool-result' ? String((part.output as { value: unknown }).value) : '';
}

describe('trimLastTurnTexts', () => {
  it('trims the largest outputs first until the excess is saved, each expandable to the original', () => {
    const messages = lastTurn(log(300, 'big'), log(120, 'medium'), log(5, 'small'));
    const archive = createMemoryArchive();
    const ids = new Set(messages.slice(1).map((message) => message.id));
    const big = count(outputValue(messages[2]!, 0));
    const result = trimLastTurnTexts(messages, ids, big - 400, { accountant, archive });
    expect(result.actions).toHaveLength(1);
    const [action] = result.actions;
    expect(action).toMatchObject({
      type: 'trim-tool-output',
      strategy: 'recent-turns-share',
      tokensBefore: big,
    });
    expect(action!.tokensAfter).toBeLessThan(450);
    expect(outputValue(result.messages[2]!, 0)).toContain(`of this output archived: ${action!.handle} …]`);
    // The other outputs, the call and the request are the same objects.
    expect(outputValue(result.messages[2]!, 1)).toBe(outputValue(messages[2]!, 1));
    expect(result.messages.slice(0, 2)).toEqual(messages.slice(0, 2));
    expect(expand(archive, action!.handle!).content).toEqual({ type: 'text', value: log(300, 'big') });

    // A larger excess trims the next largest too, never below the floor.
    const more = trimLastTurnTexts(messages, ids, big * 3, { accountant, archive });
    expect(more.actions).toHaveLength(2);
    for (const trim of more.actions) expect(trim.tokensAfter).toBeGreaterThanOrEqual(minTrimmedTokens - 30);
    expect(outputValue(more.messages[2]!, 2)).toBe(log(5, 'small'));
  });

  it("keeps a submitted diff's changed lines, expandable, and leaves it alone once trimmed", () => {
    const context = (from: number) =>
      Array.from({ length: 40 }, (_, line) => `     settings_${from + line} = load("key_${from + line}")`);
    const changes = [
      '-        return obj.get_aggregation(using, ["__count"])["__count"]',
      '+        if any(isinstance(a, Subquery) for a in obj.annotations.values()):',
      '+            return obj.get_aggregation(using, ["__count"])["__count"]',
    ];
    const diff = [
      'diff --git a/django/db/models/sql/query.py b/django/db/models/sql/query.py',
      'index 9735ce10c8..14ff8c407a 100644',
      '--- a/django/db/models/sql/query.py',
      '+++ b/django/db/models/sql/query.py',
      '@@ -551,83 +551,84 @@ class Query(BaseExpression):',
      ...context(0),
      ...changes,
      ...context(40),
    ].join('\n');
    const messages = lastTurn(diff);
    const archive = createMemoryArchive();
    const ids = new Set(messages.slice(1).map((message) => message.id));
    const tokens = count(diff);
    const result = trimLastTurnTexts(messages, ids, tokens - minTrimmedTokens, { accountant, archive });
    const [action] = result.actions;
    const trimmed = outputValue(result.messages[2]!);
    for (const line of changes) expect(trimmed).toContain(`\n${line}\n`);
    expect(trimmed).not.toContain('settings_20');
    expect(trimmed.startsWith(`${diff.split('\n')[0]}\n`)).toBe(true);
    expect(trimmed).toContain(`of this output archived: ${action!.handle} …]`);
    expect(action!.tokensAfter).toBeLessThanOrEqual(minTrimmedTokens);
    expect(expand(archive, action!.handle!).content).toEqual({ type: 'text', value: diff });
    // Compacting again finds it trimmed already.
    expect(trimLastTurnTexts(result.messages, ids, 50, { accountant, archive }).actions).toEqual([]);
  });

  it('leaves outputs outside the last turn, images, small cuts and trimmed outputs alone', () => {
    const screenshot = {
      type: 'content',
      value: [{ type: 'image-data', data: 'A'.repeat(40_000), mediaType: 'image/png' }],
    };
    const messages = lastTurn(log(300), screenshot as never);
    const archive = createMemoryArchive();
    const ids = new Set(messages.slice(1).map((message) => message.id));
    expect(
      trimLastTurnTexts(messages, new Set([messages[0]!.id]), 5000, { accountant, archive }).actions,
    ).toEqual([]);
    // Saving a few lines is not worth a marker.
    expect(trimLastTurnTexts(messages, ids, 60, { accountant, archive }).actions).toEqual([]);
    // Trimmed to ~1000 tokens, it is not trimmed again under a tighter budget (compacting again changes nothing).
    const once = trimLastTurnTexts(messages, ids, count(log(300)) - 1000, { accountant, archive });
    expect(once.actions).toHaveLength(1);
    const twice = trimLastTurnTexts(once.messages, ids, 50_000, { accountant, archive });
    expect(twice.actions).toEqual([]);
    expect(twice.messages).toEqual(once.messages);
    // The image is the same part as before.
    expect((twice.messages[2]!.content as Part[])[1]).toBe((messages[2]!.content as Part[])[1]);
  });

  it('trims a JSON output as its JSON text, an error as an error, each expandable to the original', () => {
    const rows = Array.from({ length: 400 }, (_, id) => ({ id, name: `user-${id}`, active: id % 3 === 0 }));
    const json = { type: 'json' as const, value: { rows, total: rows.length } };
    const failure = { type: 'error-json' as const, value: { error: 'timeout', partial: rows } };
    const messages = lastTurn(json, failure as never);
    const archive = createMemoryArchive();
    const ids = new Set(messages.slice(1).map((message) => message.id));
    const result = trimLastTurnTexts(messages, ids, 50_000, { accountant, archive });
    expect(result.actions).toHaveLength(2);
    const [first, second] = (result.messages[2]!.content as Part[]).map((part) =>
      part.type === 'tool-result' ? part.output : undefined,
    );
    expect(first).toMatchObject({ type: 'text' });
    expect(second).toMatchObject({ type: 'error-text' });
    const text = (first as { value: string }).value;
    expect(text.startsWith('{"rows":[{"id":0,"name":"user-0"')).toBe(true);
    expect(text.endsWith(`"total":${rows.length}}`)).toBe(true);
    expect(count(text)).toBeLessThan(count(JSON.stringify(json.value)) / 4);
    const handles = result.actions.map((action) => action.handle!);
    expect(expand(archive, handles[0]!).content).toEqual(json);
    expect(expand(archive, handles[1]!).content).toEqual(failure);
    // A trimmed JSON output is text with a marker now: never trimmed again.
    expect(trimLastTurnTexts(result.messages, ids, 50_000, { accountant, archive }).actions).toEqual([]);
  });

  it("trims the longest string argument of a call in place, counted as the call's JSON counts it", () => {
    const content = log(400, 'written');
    const messages = answeredCalls('Writing it.', {
      toolName: 'Write',
      input: { file_path: 'src/module.ts', content, options: { mode: 'overwrite' } },
    });
    const archive = createMemoryArchive();
    const ids = new Set(messages.slice(1).map((message) => message.id));
    const before = accountant.countMessage(messages[1]!);
    const result = trimLastTurnTexts(messages, ids, before - 600, { accountant, archive });
    expect(result.actions).toHaveLength(1);
    const [action] = result.actions;
    expect(action).toMatchObject({ type: 'trim-tool-input', strategy: 'recent-turns-share' });
    const parts = result.messages[1]!.content as Part[];
    expect(parts[0]).toBe((messages[1]!.content as Part[])[0]);
    const call = parts[1]!;
    const input = call.type === 'tool-call' ? (call.input as Record<string, unknown>) : {};
    expect(input.file_path).toBe('src/module.ts');
    expect(input.options).toEqual({ mode: 'overwrite' });
    const trimmed = input.content as string;
    expect(trimmed).toContain(`of this argument archived: ${action!.handle} …]`);
    expect(content.startsWith(trimmed.split('\n[…')[0]!)).toBe(true);
    expect(expand(archive, action!.handle!).content).toBe(content);
    // The message shrank by what the action reports: the argument is measured as the call's JSON holds it.
    const after = accountant.countMessage(result.messages[1]!);
    expect(Math.abs(before - after - (action!.tokensBefore - action!.tokensAfter))).toBeLessThan(10);
    expect(after).toBeLessThanOrEqual(600 + 30);
    // The result is the same object; trimmed once, never again.
    expect(result.messages[2]).toBe(messages[2]);
    expect(trimLastTurnTexts(result.messages, ids, 50_000, { accountant, archive }).actions).toEqual([]);
    // A call without its result (awaiting approval, still to run) keeps its arguments whole.
    const pending = messages.slice(0, 2);
    expect(trimLastTurnTexts(pending, ids, 50_000, { accountant, archive }).actions).toEqual([]);
  });

  it("trims a nested argument (a MultiEdit's replacement) and a call's raw string input", () => {
    const replacement = log(300, 'replaced');
    const script = log(300, 'patched');
    const messages = answeredCalls(
      'Editing it.',
      {
        toolName: 'MultiEdit',
        input: { file_path: 'src/module.ts', edits: [{ old_string: 'a', new_string: replacement }] },
      },
      { toolName: 'apply_patch', input: script },
    );
    const archive = createMemoryArchive();
    const ids = new Set(messages.slice(1).map((message) => message.id));
    const result = trimLastTurnTexts(messages, ids, 50_000, { accountant, archive });
    expect(result.actions.map((action) => action.type)).toEqual(['trim-tool-input', 'trim-tool-input']);
    const [edit, patch] = (result.messages[1]!.content as Part[]).flatMap((part) =>
      part.type === 'tool-call' ? [part.input] : [],
    ) as [{ file_path: string; edits: Array<{ new_string: string }> }, string];
    expect(edit.edits[0]!.new_string).toContain('of this argument archived: h-');
    expect(edit.file_path).toBe('src/module.ts');
    expect(patch).toContain('of this argument archived: h-');
    const originals = result.actions.map((action) => expand(archive, action.handle!).content);
    expect(originals.sort()).toEqual([replacement, script].sort());
    expect(trimLastTurnTexts(result.messages, ids, 50_000, { accountant, archive }).actions).toEqual([]);
  });

  it('trims several texts of one part when one is not enough (two replacements, two text items)', () => {
    const first = log(300, 'first');
    const second = log(250, 'second');
    const messages = answeredCalls('Editing it.', {
      toolName: 'MultiEdit',
      input: {
        file_path: 'src/module.ts',
        edits: [
          { old_string: 'a', new_string: first },
          { old_string: 'b', new_string: second },
        ],
      },
    });
    const archive = createMemoryArchive();
    const ids = new Set(messages.slice(1).map((message) => message.id));
    const before = accountant.countMessage(messages[1]!);
    // More than the larger replacement alone can give.
    const result = trimLastTurnTexts(messages, ids, count(first) + 300, { accountant, archive });
    expect(result.actions.map((action) => action.type)).toEqual(['trim-tool-input', 'trim-tool-input']);
    const call = (result.messages[1]!.content as Part[])[1]!;
    const { edits } = (call.type === 'tool-call' ? call.input : {}) as {
      edits: Array<{ new_string: string }>;
    };
    for (const [index, action] of result.actions.entries()) {
      expect(edits[index]!.new_string).toContain(`of this argument archived: ${action.handle} …]`);
      expect(expand(archive, action.handle!).content).toBe([first, second][index]);
    }
    expect(before - accountant.countMessage(result.messages[1]!)).toBeGreaterThan(count(first) + 300 - 50);
    expect(trimLastTurnTexts(result.messages, ids, 50_000, { accountant, archive }).actions).toEqual([]);

    // Two long text items of one output: both trimmed in place, each marker naming the whole output.
    const output = {
      type: 'content' as const,
      value: [
        { type: 'text' as const, text: first },
        { type: 'text' as const, text: second },
      ],
    };
    const read = lastTurn(output as never);
    const readIds = new Set(read.slice(1).map((message) => message.id));
    const trimmed = trimLastTurnTexts(read, readIds, count(first) + 300, { accountant, archive });
    expect(trimmed.actions).toHaveLength(2);
    const part = (trimmed.messages[2]!.content as Part[])[0]!;
    const items = (part.type === 'tool-result' ? part.output : { value: [] }) as {
      value: Array<{ text: string }>;
    };
    for (const [index, item] of items.value.entries()) {
      expect(item.text).toContain(`of this output archived: ${trimmed.actions[index]!.handle} …]`);
      expect(item.text.startsWith([first, second][index]!.split('\n')[0]!)).toBe(true);
    }
    expect(expand(archive, trimmed.actions[1]!.handle!).content).toEqual(output);
    expect(trimLastTurnTexts(trimmed.messages, readIds, 50_000, { accountant, archive }).actions).toEqual([]);
  });

  it('trims the largest text of a content output in place, next to its images', () => {
    const image = { type: 'image-url' as const, url: 'https://example.com/screen.png' };
    const tree = { type: 'text' as const, text: log(400, 'node') };
    const caption = { type: 'text' as const, text: 'Accessibility tree:' };
    const output = { type: 'content' as const, value: [caption, image, tree] };
    const messages = lastTurn(output as never);
    const archive = createMemoryArchive();
    const ids = new Set(messages.slice(1).map((message) => message.id));
    const result = trimLastTurnTexts(messages, ids, count(tree.text) - 500, { accountant, archive });
    expect(result.actions).toHaveLength(1);
    const part = (result.messages[2]!.content as Part[])[0]!;
    const trimmed = part.type === 'tool-result' ? part.output : undefined;
    expect(trimmed).toMatchObject({ type: 'content', value: [caption, image, { type: 'text' }] });
    const items = (trimmed as { value: Array<{ text?: string }> }).value;
    expect(items[2]!.text).toContain(`of this output archived: ${result.actions[0]!.handle} …]`);
    expect(items[2]!.text!.startsWith(log(400, 'node').split('\n')[0]!)).toBe(true);
    expect(expand(archive, result.actions[0]!.handle!).content).toEqual(output);
    expect(trimLastTurnTexts(result.messages, ids, 50_000, { accountant, archive }).actions).toEqual([]);
  });
});
