import { describe, expect, it } from 'vitest';
import { detectFormat } from './detect-format.js';

describe('detectFormat', () => {
  it('recognises OpenAI by tool calls, tool_call_id, developer role and null content', () => {
    expect(
      detectFormat([
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: null, tool_calls: [] },
      ]),
    ).toEqual({
      format: 'openai',
      reason: 'message 1 has "tool_calls"',
    });
    expect(detectFormat([{ role: 'tool', tool_call_id: 'a', content: 'x' }]).format).toBe('openai');
    expect(detectFormat([{ role: 'developer', content: 'x' }]).format).toBe('openai');
    expect(
      detectFormat({ messages: [], tools: [{ type: 'function', function: { name: 'f' } }] }).format,
    ).toBe('openai');
  });

  it('recognises Anthropic by system field, blocks and tools', () => {
    expect(detectFormat({ system: 'be brief', messages: [] }).format).toBe('anthropic');
    expect(
      detectFormat([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x' }] }]).format,
    ).toBe('anthropic');
    expect(detectFormat([{ role: 'user', content: [{ type: 'image', source: {} }] }]).format).toBe(
      'anthropic',
    );
    expect(detectFormat({ messages: [], tools: [{ name: 'f', input_schema: {} }] }).format).toBe('anthropic');
  });

  it('recognises precis / AI SDK parts and falls back to precis for plain text', () => {
    expect(detectFormat([{ role: 'assistant', content: [{ type: 'tool-call' }] }]).format).toBe('precis');
    expect(detectFormat({ format: 'precis', messages: [] }).format).toBe('precis');
    expect(detectFormat([{ role: 'user', content: 'hi' }])).toEqual({
      format: 'precis',
      reason: 'plain text messages only: all formats agree',
    });
  });
});
