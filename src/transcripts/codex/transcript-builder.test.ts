import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { messageText, toolCallsOf, toolResultsOf } from '../../messages/content.js';
import type { Message } from '../../messages/types.js';
import { repairPlaceholders, validateMessages } from '../../messages/validate/index.js';
import { createImportContext } from '../transcript-importer.js';
import { createTranscriptBuilder } from './transcript-builder.js';

const call = (toolCallId: string, toolName = 'shell') => ({
  type: 'tool-call' as const,
  toolCallId,
  toolName,
  input: { command: toolCallId },
});
const text = (value: string) => ({ type: 'text' as const, text: value });
const output = (value: string) => ({ type: 'text' as const, value });

function setup() {
  const context = createImportContext({ file: 'log.jsonl' });
  return { context, builder: createTranscriptBuilder('test', context) };
}

describe('createTranscriptBuilder', () => {
  it('merges records of one response and places results after their call, in the order they came', () => {
    const { builder, context } = setup();
    builder.user('go', { line: 1 });
    builder.assistant([text('two calls')], { line: 2 });
    builder.assistant([call('a'), call('b')], { line: 3 });
    expect(builder.toolResult('b', output('B'), { line: 4 })).toBe('answered');
    expect(builder.toolResult('a', output('A'), { line: 5 })).toBe('answered');
    builder.assistant([text('done')], { line: 6 });
    const messages = builder.finish();
    expect(messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'tool',
      'assistant',
    ]);
    expect(toolCallsOf(messages[1]!).map((part) => part.toolCallId)).toEqual(['a', 'b']);
    expect(messages.slice(2, 4).map((message) => toolResultsOf(message)[0]?.toolCallId)).toEqual(['b', 'a']);
    expect(messages[1]!.metadata).toEqual({ origin: 'test', line: 2 });
    expect(context.warnings).toEqual([]);
  });

  it('starts a new assistant message after results, and when merging is turned off', () => {
    const { builder } = setup();
    builder.assistant([call('a')], { line: 1 });
    builder.toolResult('a', output('A'), { line: 2 });
    builder.assistant([text('after the result')], { line: 3 });
    builder.assistant([text('separate')], { line: 4 }, { merge: false });
    expect(builder.finish().map((message) => message.role)).toEqual([
      'assistant',
      'tool',
      'assistant',
      'assistant',
    ]);
  });

  it('moves a late result up, keeps unknown and second results as user text, renames reused ids', () => {
    const { builder, context } = setup();
    builder.assistant([call('a')], { line: 1 });
    builder.user('interrupting', { line: 2 });
    expect(builder.toolResult('a', output('late'), { line: 3 })).toBe('answered');
    expect(builder.toolResult('a', output('again'), { line: 4 })).toBe('orphaned');
    expect(builder.toolResult('zzz', output('stray'), { line: 5 })).toBe('orphaned');
    expect(builder.toolResult('zzz', output(''), { line: 6 })).toBe('dropped');
    builder.assistant([call('a')], { line: 7 });
    builder.toolResult('a', output('second call'), { line: 8 });
    const messages = builder.finish();
    expect(messages.map((message) => message.role)).toEqual([
      'assistant',
      'tool',
      'user',
      'user',
      'user',
      'assistant',
      'tool',
    ]);
    expect(messages.map(messageText)).toContain('stray');
    expect(messages[4]!.metadata).toMatchObject({ orphanedToolResult: 'zzz', line: 5 });
    expect(toolCallsOf(messages[5]!)[0]?.toolCallId).toBe('a#1');
    expect(toolResultsOf(messages[6]!)[0]?.toolCallId).toBe('a#1');
    expect(context.warnings.map((warning) => warning.line)).toEqual([3, 4, 5, 6, 7]);
    expect(validateMessages(messages, { provider: 'openai' }).issues).toEqual([]);
  });

  it('answers calls left without a result with an explicit error result', () => {
    const { builder, context } = setup();
    builder.assistant([call('a'), call('b')], { line: 9 });
    builder.toolResult('b', output('B'), { line: 10 });
    expect(builder.isOpenCall('a')).toBe(true);
    expect(builder.isOpenCall('b')).toBe(false);
    const messages = builder.finish();
    expect(messages.map((message) => message.role)).toEqual(['assistant', 'tool', 'tool']);
    expect(toolResultsOf(messages[2]!)[0]).toMatchObject({
      toolCallId: 'a',
      output: { type: 'error-text', value: repairPlaceholders.missingToolResult },
    });
    expect(messages[2]!.metadata).toEqual({ origin: 'test', placeholder: true });
    expect(context.warnings).toEqual([
      expect.objectContaining({
        line: 9,
        message: expect.stringContaining('tool call a (shell) has no result'),
      }),
    ]);
  });

  it('adds nothing for empty content, and keeps reasoning that carries provider data', () => {
    const { builder } = setup();
    expect(builder.user('', {})).toBe(false);
    expect(builder.system('', {})).toBe(false);
    expect(builder.assistant([text(''), { type: 'reasoning', text: '' }], {})).toBe(false);
    expect(
      builder.assistant(
        [{ type: 'reasoning', text: '', providerOptions: { openai: { reasoningEncryptedContent: 'x' } } }],
        {},
      ),
    ).toBe(true);
    expect(builder.finish()).toHaveLength(1);
  });

  it('keeps any record order valid for OpenAI and loses no result text', () => {
    type Step =
      | { kind: 'user' }
      | { kind: 'assistant'; call: number | undefined }
      | { kind: 'result'; call: number };
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.constant({ kind: 'user' as const }),
      fc.record({
        kind: fc.constant('assistant' as const),
        call: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
      }),
      fc.record({ kind: fc.constant('result' as const), call: fc.integer({ min: 0, max: 5 }) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
        const { builder } = setup();
        const results: string[] = [];
        steps.forEach((item, position) => {
          if (item.kind === 'user') builder.user(`user ${position}`, { line: position });
          else if (item.kind === 'assistant') {
            builder.assistant(
              item.call === undefined ? [text(`text ${position}`)] : [call(`c${item.call}`)],
              { line: position },
            );
          } else {
            results.push(`result ${position}`);
            builder.toolResult(`c${item.call}`, output(`result ${position}`), { line: position });
          }
        });
        const messages: Message[] = builder.finish();
        expect(validateMessages(messages, { provider: 'openai' }).issues).toEqual([]);
        const allText = messages.map(messageText).join('\n');
        for (const result of results) expect(allText).toContain(result);
      }),
      { numRuns: 300 },
    );
  });
});
