import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryArchive } from '../archive/archive-store.js';
import { expand } from '../archive/expand.js';
import { assignIds } from '../messages/ids.js';
import type { IdentifiedMessage, Part } from '../messages/types.js';
import { createTokenAccountant } from '../tokens/index.js';
import {
  keepHeadAndTail,
  minTrimmedOutputTokens,
  trimLastTurnOutputs,
  trimmedOutputMarker,
} from './trim-last-turn.js';

const accountant = createTokenAccountant();
const count = (text: string) => accountant.countText(text);
const handle = 'h-0123456789abcdef0123';

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

function outputValue(message: IdentifiedMessage, index = 0): string {
  const part = (message.content as Part[])[index]!;
  return part.type === 'tool-result' ? String((part.output as { value: unknown }).value) : '';
}

describe('keepHeadAndTail', () => {
  it('keeps the first and last lines byte for byte, the middle as a marker with its line count', () => {
    const text = `${log(200)}\nexit code 1`;
    const trimmed = keepHeadAndTail(text, 300, handle, count)!;
    const [head, tail] = trimmed.split(/\n?\[… \d+ lines of this output archived: h-[0-9a-f]+ …\]\n?/);
    expect(text.startsWith(head!)).toBe(true);
    expect(text.endsWith(tail!)).toBe(true);
    expect(tail!.endsWith('exit code 1')).toBe(true);
    const cut = text.split('\n').length - head!.split('\n').length - tail!.split('\n').length;
    expect(trimmed).toContain(trimmedOutputMarker(cut, handle));
    // About the tokens asked for (the marker costs ~20 more), head before tail.
    expect(count(trimmed)).toBeLessThanOrEqual(300 + 25);
    expect(count(head!)).toBeGreaterThan(count(tail!));
  });

  it('cuts a long unbroken line (minified JSON) in slices, and leaves text that would lose nothing', () => {
    const json = JSON.stringify(
      Array.from({ length: 600 }, (_, index) => ({ id: index, name: `item ${index}` })),
    );
    const trimmed = keepHeadAndTail(json, 250, handle, count)!;
    expect(trimmed).toMatch(
      /^\[\{"id":0,[^\n]*\n\[… 1 line of this output archived: h-[0-9a-f]+ …\]\n[^\n]*\}\]$/,
    );
    expect(count(trimmed)).toBeLessThan(count(json) / 4);
    expect(keepHeadAndTail('one line\ntwo lines\n', 250, handle, count)).toBeUndefined();
    expect(keepHeadAndTail('', 250, handle, count)).toBeUndefined();
  });

  it('property: a prefix and a suffix of the text around one marker, never longer than the text', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 120 }), { maxLength: 80 }),
        fc.integer({ min: 20, max: 400 }),
        (lines, maxTokens) => {
          const text = lines.join('\n');
          const trimmed = keepHeadAndTail(text, maxTokens, handle, count);
          if (trimmed === undefined) return;
          const match =
            /^([\s\S]*?)\n?\[… (\d+) lines? of this output archived: h-[0-9a-f]+ …\]\n?([\s\S]*)$/.exec(
              trimmed,
            );
          expect(match).not.toBeNull();
          expect(text.startsWith(match![1]!)).toBe(true);
          expect(text.endsWith(match![3]!)).toBe(true);
          expect(match![1]!.length + match![3]!.length).toBeLessThan(text.length);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('trimLastTurnOutputs', () => {
  it('trims the largest outputs first until the excess is saved, each expandable to the original', () => {
    const messages = lastTurn(log(300, 'big'), log(120, 'medium'), log(5, 'small'));
    const archive = createMemoryArchive();
    const ids = new Set(messages.slice(1).map((message) => message.id));
    const big = count(outputValue(messages[2]!, 0));
    const result = trimLastTurnOutputs(messages, ids, big - 400, { accountant, archive });
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
    const more = trimLastTurnOutputs(messages, ids, big * 3, { accountant, archive });
    expect(more.actions).toHaveLength(2);
    for (const trim of more.actions)
      expect(trim.tokensAfter).toBeGreaterThanOrEqual(minTrimmedOutputTokens - 30);
    expect(outputValue(more.messages[2]!, 2)).toBe(log(5, 'small'));
  });

  it('leaves outputs outside the last turn, non-text outputs, small cuts and trimmed outputs alone', () => {
    const messages = lastTurn(log(300), { type: 'json', value: { lines: log(300).split('\n') } });
    const archive = createMemoryArchive();
    const ids = new Set(messages.slice(1).map((message) => message.id));
    expect(
      trimLastTurnOutputs(messages, new Set([messages[0]!.id]), 5000, { accountant, archive }).actions,
    ).toEqual([]);
    // Saving a few lines is not worth a marker.
    expect(trimLastTurnOutputs(messages, ids, 60, { accountant, archive }).actions).toEqual([]);
    // Trimmed to ~1000 tokens, it is not trimmed again under a tighter budget (compacting again changes nothing).
    const once = trimLastTurnOutputs(messages, ids, count(log(300)) - 1000, { accountant, archive });
    expect(once.actions).toHaveLength(1);
    expect((once.messages[2]!.content as Part[])[1]).toEqual((messages[2]!.content as Part[])[1]);
    const twice = trimLastTurnOutputs(once.messages, ids, 5000, { accountant, archive });
    expect(twice.actions).toEqual([]);
    expect(twice.messages).toEqual(once.messages);
  });
});
