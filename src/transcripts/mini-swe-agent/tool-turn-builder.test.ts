import { describe, expect, it } from 'vitest';
import { TranscriptImportError } from '../../errors/index.js';
import type { AssistantMessage, ToolCallPart, ToolResultPart } from '../../messages/types.js';
import { validateMessages } from '../../messages/validate/index.js';
import { createImportContext } from '../transcript-importer.js';
import {
  contentText,
  createToolTurnBuilder,
  isoFromUnixSeconds,
  readJsonDocument,
} from './tool-turn-builder.js';

const call = (toolCallId: string, toolName = 'bash'): ToolCallPart => ({
  type: 'tool-call',
  toolCallId,
  toolName,
  input: { command: toolCallId },
});
const result = (toolCallId: string, value = `out ${toolCallId}`, toolName = 'bash'): ToolResultPart => ({
  type: 'tool-result',
  toolCallId,
  toolName,
  output: { type: 'text', value },
});
const assistant = (...calls: ToolCallPart[]): AssistantMessage => ({ role: 'assistant', content: calls });

function setup() {
  const context = createImportContext({ file: 'log.json' });
  return { context, builder: createToolTurnBuilder({ origin: 'test', context }) };
}

describe('createToolTurnBuilder', () => {
  it('moves a late result up to its call, past a user message, with a warning', () => {
    const { builder, context } = setup();
    builder.add({ role: 'user', content: 'go' });
    builder.add(assistant(call('a'), call('b')), { record: 1 });
    builder.addResult(result('b'));
    builder.add({ role: 'user', content: 'meanwhile' });
    expect(builder.addResult(result('a'), { location: { record: 4 } })).toBe(true);
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
        file: 'log.json',
        record: 4,
      },
    ]);
  });

  it('keeps a result that answers no open call as a user message, text and all', () => {
    const { builder, context } = setup();
    builder.add({ role: 'user', content: 'go' });
    builder.add(assistant(call('a')));
    builder.addResult(result('a'));
    expect(builder.addResult(result('a', 'again'), { metadata: { origin: 'test', record: 3 } })).toBe(false);
    expect(builder.addResult(result('zzz', 'from nowhere'))).toBe(false);
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

  it('answers calls left open by the next assistant message or the end with placeholders', () => {
    const { builder, context } = setup();
    builder.add({ role: 'user', content: 'go' });
    builder.add(assistant(call('a'), call('b')), { record: 1 });
    builder.addResult(result('a'));
    builder.add({ role: 'user', content: 'interrupt' });
    builder.add(assistant(call('c')), { record: 4 });
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

  it('renames a reused call id and links its result to the new name', () => {
    const { builder, context } = setup();
    builder.add({ role: 'user', content: 'go' });
    builder.add(assistant(call('call_1')));
    builder.addResult(result('call_1'));
    builder.add(assistant(call('call_1', 'editor')));
    builder.addResult(result('call_1', 'second', '(unknown tool)'));
    const messages = builder.finish();
    expect(messages[3]!.content).toMatchObject([{ toolCallId: 'call_1-2' }]);
    expect(messages[4]!.content).toMatchObject([{ toolCallId: 'call_1-2', toolName: 'editor' }]);
    expect(validateMessages(messages, { provider: 'openai' }).valid).toBe(true);
    expect(context.warnings[0]!.message).toBe('tool call id call_1 was already used; renamed call_1-2');
  });
});

describe('agent log readers', () => {
  it('contentText joins text parts and counts the others', () => {
    expect(contentText('plain')).toStrictEqual({ text: 'plain', otherParts: 0 });
    expect(contentText(null)).toStrictEqual({ text: '', otherParts: 0 });
    expect(
      contentText([
        { type: 'text', text: 'a', cache_control: { type: 'ephemeral' } },
        { type: 'image_url', image_url: { url: 'data:,' } },
        { type: 'text', text: 'b' },
      ]),
    ).toStrictEqual({ text: 'a\nb', otherParts: 1 });
    expect(contentText(42)).toBeUndefined();
  });

  it('isoFromUnixSeconds accepts plausible Unix seconds only', () => {
    expect(isoFromUnixSeconds(1_700_000_000.5)).toBe('2023-11-14T22:13:20.500Z');
    expect(isoFromUnixSeconds('1700000000')).toBeUndefined();
    expect(isoFromUnixSeconds(1_700_000_000_000)).toBeUndefined();
  });

  it('readJsonDocument names file and line of bad JSON, and skips a byte order mark', () => {
    const context = createImportContext({ file: 'x.json' });
    expect(readJsonDocument('\uFEFF{"a": 1}', context, 'a log')).toStrictEqual({ a: 1 });
    try {
      readJsonDocument('{\n  "a": 1,\n  oops\n}', context, 'a log');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(TranscriptImportError);
      expect(error).toMatchObject({ file: 'x.json', line: 3 });
    }
  });
});
