import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { propertyRuns } from '../../../test/support/property-runs.js';
import { messageText, toolCallsOf, toolResultsOf } from '../../messages/content.js';
import type { Message, ToolCallPart } from '../../messages/types.js';
import { repairPlaceholders, validateMessages } from '../../messages/validate/index.js';
import { createImportContext } from '../transcript-importer.js';
import { createTranscriptBuilder, type TranscriptBuilderOptions } from './transcript-builder.js';

const call = (toolCallId: string, toolName = 'shell'): ToolCallPart => ({
  type: 'tool-call',
  toolCallId,
  toolName,
  input: { command: toolCallId },
});
const text = (value: string) => ({ type: 'text' as const, text: value });
const output = (value: string) => ({ type: 'text' as const, value });
const result = (toolCallId: string, value = `out ${toolCallId}`, toolName = 'bash') => ({
  toolCallId,
  toolName,
  output: output(value),
});

type Setup = Omit<TranscriptBuilderOptions, 'origin' | 'context'>;

function setup(options: Setup = {}) {
  const context = createImportContext({ file: 'log.jsonl' });
  return { context, builder: createTranscriptBuilder({ origin: 'test', context, ...options }) };
}

/** The marks the Codex and gptme importers keep. */
const codexMarks: Setup = {
  renameCallIds: 'counter',
  placeholderMetadata: { placeholder: true },
  orphanedResultKey: 'orphanedToolResult',
};
/** Chat histories (mini-swe-agent, SWE-agent, OpenHands). */
const chatHistory: Setup = { answerCallsUntil: 'next-assistant-message' };

describe('createTranscriptBuilder', () => {
  it('merges records of one response and places results after their call, in the order they came', () => {
    const { builder, context } = setup();
    builder.user('go', { line: 1 });
    builder.assistant([text('two calls')], { line: 2 }, { merge: true });
    builder.assistant([call('a'), call('b')], { line: 3 }, { merge: true });
    expect(builder.toolResult({ toolCallId: 'b', output: output('B') }, { line: 4 })).toBe('answered');
    expect(builder.toolResult({ toolCallId: 'a', output: output('A') }, { line: 5 })).toBe('answered');
    builder.assistant([text('done')], { line: 6 }, { merge: true });
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

  it('starts a new assistant message after results, and when merging is not asked for', () => {
    const { builder } = setup();
    builder.assistant([call('a')], { line: 1 }, { merge: true });
    builder.toolResult({ toolCallId: 'a', output: output('A') }, { line: 2 });
    builder.assistant([text('after the result')], { line: 3 }, { merge: true });
    builder.assistant([text('separate')], { line: 4 });
    builder.assistant('text content is never merged', { line: 5 }, { merge: true });
    expect(builder.finish().map((message) => message.role)).toEqual([
      'assistant',
      'tool',
      'assistant',
      'assistant',
      'assistant',
    ]);
  });

  it('moves a late result up to its call, past a user message, with a warning', () => {
    const { builder, context } = setup(chatHistory);
    builder.user('go', {});
    builder.assistant([call('a'), call('b')], { record: 1 });
    builder.toolResult(result('b'), {});
    builder.user('meanwhile', {});
    expect(builder.toolResult(result('a'), { record: 4 })).toBe('answered');
    const messages = builder.finish();
    expect(messages.map((message) => message.role)).toStrictEqual([
      'user',
      'assistant',
      'tool',
      'tool',
      'user',
    ]);
    expect(validateMessages(messages, { provider: 'openai' }).valid).toBe(true);
    expect(context.warnings).toStrictEqual([
      {
        type: 'import-warning',
        message: 'tool result for a came after other messages; moved up to its tool call',
        file: 'log.jsonl',
        record: 4,
      },
    ]);
  });

  it('keeps a result that answers no open call as a user message, text and all', () => {
    const { builder, context } = setup(chatHistory);
    builder.user('go', {});
    builder.assistant([call('a')], {});
    builder.toolResult(result('a'), {});
    expect(builder.toolResult(result('a', 'again'), { origin: 'test', record: 3 })).toBe('orphaned');
    expect(builder.toolResult(result('zzz', 'from nowhere'), {})).toBe('orphaned');
    const messages = builder.finish();
    expect(messages.slice(3)).toStrictEqual([
      {
        role: 'user',
        content: 'again',
        metadata: { origin: 'test', record: 3, orphanedToolCallId: 'a', toolName: 'bash' },
      },
      {
        role: 'user',
        content: 'from nowhere',
        metadata: { origin: 'test', orphanedToolCallId: 'zzz', toolName: 'bash' },
      },
    ]);
    expect(validateMessages(messages, { provider: 'openai' }).valid).toBe(true);
    expect(context.warnings).toHaveLength(2);
  });

  it('moves a late result up, keeps unknown and second results as user text, renames reused ids', () => {
    const { builder, context } = setup(codexMarks);
    builder.assistant([call('a')], { line: 1 });
    builder.user('interrupting', { line: 2 });
    expect(builder.toolResult({ toolCallId: 'a', output: output('late') }, { line: 3 })).toBe('answered');
    expect(builder.toolResult({ toolCallId: 'a', output: output('again') }, { line: 4 })).toBe('orphaned');
    expect(builder.toolResult({ toolCallId: 'zzz', output: output('stray') }, { line: 5 })).toBe('orphaned');
    expect(builder.toolResult({ toolCallId: 'zzz', output: output('') }, { line: 6 })).toBe('dropped');
    builder.assistant([call('a')], { line: 7 });
    builder.toolResult({ toolCallId: 'a', output: output('second call') }, { line: 8 });
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

  it('renames a reused call id and links its result to the new name', () => {
    const { builder, context } = setup(chatHistory);
    builder.user('go', {});
    builder.assistant([call('call_1', 'bash')], {});
    builder.toolResult(result('call_1'), {});
    builder.assistant([call('call_1', 'editor')], {});
    builder.toolResult(result('call_1', 'second', '(unknown tool)'), {});
    const messages = builder.finish();
    expect(messages[3]!.content).toMatchObject([{ toolCallId: 'call_1-2' }]);
    expect(messages[4]!.content).toMatchObject([{ toolCallId: 'call_1-2', toolName: 'editor' }]);
    expect(validateMessages(messages, { provider: 'openai' }).valid).toBe(true);
    expect(context.warnings[0]!.message).toBe('tool call id call_1 was already used; renamed call_1-2');
  });

  it('answers calls left open by the next assistant message or the end with placeholders', () => {
    const { builder, context } = setup(chatHistory);
    builder.user('go', {});
    builder.assistant([call('a', 'bash'), call('b', 'bash')], { record: 1 });
    builder.toolResult(result('a'), {});
    builder.user('interrupt', {});
    builder.assistant([call('c', 'bash')], { record: 4 });
    const messages = builder.finish();
    expect(messages.map((message) => message.role)).toStrictEqual([
      'user',
      'assistant',
      'tool',
      'tool',
      'user',
      'assistant',
      'tool',
    ]);
    expect(messages[3]).toStrictEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'b',
          toolName: 'bash',
          output: { type: 'error-text', value: '[no result recorded]' },
        },
      ],
      metadata: { origin: 'test', synthetic: true },
    });
    expect(validateMessages(messages, { provider: 'openai' }).valid).toBe(true);
    expect(context.warnings.map((warning) => warning.record)).toStrictEqual([1, 4]);
  });

  it('answers calls left without a result with an explicit error result', () => {
    const { builder, context } = setup(codexMarks);
    builder.assistant([call('a'), call('b')], { line: 9 });
    builder.toolResult({ toolCallId: 'b', output: output('B') }, { line: 10 });
    expect(builder.openCall('a')).toStrictEqual(call('a'));
    expect(builder.openCall('b')).toBeUndefined();
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

  it('lets a call wait to the end, or only until the next assistant message', () => {
    const records = (builder: ReturnType<typeof setup>['builder']) => {
      builder.assistant([call('a')], { line: 1 });
      builder.assistant([text('moving on')], { line: 2 });
      return builder.toolResult({ toolCallId: 'a', output: output('late') }, { line: 3 });
    };
    const end = setup();
    expect(records(end.builder)).toBe('answered');
    expect(end.builder.finish().map((message) => message.role)).toEqual(['assistant', 'tool', 'assistant']);

    const chat = setup(chatHistory);
    expect(records(chat.builder)).toBe('orphaned');
    expect(chat.builder.finish().map((message) => message.role)).toEqual([
      'assistant',
      'tool',
      'assistant',
      'user',
    ]);
    // The call ended when the next assistant message came, before its result was read.
    expect(chat.context.warnings.map((warning) => [warning.line, warning.message])).toEqual([
      [1, expect.stringContaining('tool call a (shell) has no result')],
      [3, expect.stringContaining('another assistant message came after the call')],
    ]);
  });

  it('gives every call of a record a result when the record repeats an id, answering the first', () => {
    for (const options of [chatHistory, codexMarks]) {
      const { builder } = setup(options);
      builder.assistant([call('x'), call('x')], { line: 1 });
      expect(builder.toolResult({ toolCallId: 'x', output: output('first') }, { line: 2 })).toBe('answered');
      const messages = builder.finish();
      expect(validateMessages(messages, { provider: 'openai' }).issues).toEqual([]);
      const [first, second] = toolCallsOf(messages[0]!);
      expect(toolResultsOf(messages[1]!)[0]).toMatchObject({
        toolCallId: first!.toolCallId,
        output: output('first'),
      });
      expect(toolResultsOf(messages[2]!)[0]).toMatchObject({
        toolCallId: second!.toolCallId,
        output: { type: 'error-text', value: repairPlaceholders.missingToolResult },
      });
    }
  });

  it('adds what it is given: empty content, string content and provider options stay as they are', () => {
    const { builder } = setup();
    const providerOptions = { openai: { name: 'bob' } };
    builder.system('', {});
    builder.user([], {}, { providerOptions });
    builder.assistant('', {});
    builder.assistant([text(''), call('a')], {}, { providerOptions });
    builder.toolResult({ toolCallId: 'a', output: output(''), providerOptions }, {});
    expect(builder.finish()).toStrictEqual([
      { role: 'system', content: '', metadata: { origin: 'test' } },
      { role: 'user', content: [], metadata: { origin: 'test' }, providerOptions },
      { role: 'assistant', content: '', metadata: { origin: 'test' } },
      { role: 'assistant', content: [text(''), call('a')], metadata: { origin: 'test' }, providerOptions },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'a', toolName: 'shell', output: output(''), providerOptions },
        ],
        metadata: { origin: 'test' },
      },
    ]);
  });

  it('does not register calls the provider ran itself', () => {
    const { builder, context } = setup();
    builder.assistant(
      [
        { ...call('ws', 'web_search'), providerExecuted: true },
        { type: 'tool-result', toolCallId: 'ws', toolName: 'web_search', output: output('done') },
      ],
      { line: 1 },
    );
    expect(builder.openCall('ws')).toBeUndefined();
    expect(builder.finish()).toHaveLength(1);
    expect(context.warnings).toEqual([]);
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
    const options = fc.constantFrom<Setup>({}, codexMarks, chatHistory);
    fc.assert(
      fc.property(options, fc.array(step, { maxLength: 30 }), (setupOptions, steps) => {
        const { builder } = setup(setupOptions);
        const results: string[] = [];
        steps.forEach((item, position) => {
          if (item.kind === 'user') builder.user(`user ${position}`, { line: position });
          else if (item.kind === 'assistant') {
            builder.assistant(
              item.call === undefined ? [text(`text ${position}`)] : [call(`c${item.call}`)],
              { line: position },
              { merge: position % 2 === 0 },
            );
          } else {
            results.push(`result ${position}`);
            builder.toolResult(
              { toolCallId: `c${item.call}`, output: output(`result ${position}`) },
              { line: position },
            );
          }
        });
        const messages: Message[] = builder.finish();
        expect(validateMessages(messages, { provider: 'openai' }).issues).toEqual([]);
        const allText = messages.map(messageText).join('\n');
        for (const result of results) expect(allText).toContain(result);
      }),
      { numRuns: propertyRuns(400) },
    );
  });
});
