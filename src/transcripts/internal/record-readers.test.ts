import { describe, expect, it } from 'vitest';
import { TranscriptImportError } from '../../errors/index.js';
import { createImportContext } from '../transcript-importer.js';
import { contentText, fromOpenAIMessage, isoFromUnixSeconds, readJsonDocument } from './record-readers.js';

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

  it('fromOpenAIMessage passes on only the OpenAI fields, and names the log index of a bad message', () => {
    expect(
      fromOpenAIMessage({ role: 'user', content: 'hi', extra: { cost: 1 }, agent: 'main' }, 4),
    ).toStrictEqual({ role: 'user', content: 'hi' });
    expect(() => fromOpenAIMessage({ role: 'assistant', content: 'x', tool_calls: [{ id: 7 }] }, 4)).toThrow(
      expect.objectContaining({ index: 4, path: expect.stringContaining('tool_calls[0]') }),
    );
  });
});
