import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, UnknownModelError } from '../errors/index.js';
import { getModelInfo, knownModelIds, resolveModel } from './models.js';

describe('getModelInfo', () => {
  it('knows every model of the brief', () => {
    for (const id of [
      'gpt-4o',
      'gpt-4o-mini',
      'gpt-4.1',
      'gpt-4.1-mini',
      'gpt-4.1-nano',
      'o3',
      'o4-mini',
      'gpt-5',
      'gpt-5-mini',
      'gpt-5-nano',
      'claude-opus-4-5',
      'claude-opus-4-1',
      'claude-opus-4',
      'claude-sonnet-4-5',
      'claude-sonnet-4',
      'claude-haiku-4-5',
      'claude-3-7-sonnet',
      'claude-3-5-haiku',
      'gemini-2.5-pro',
      'gemini-2.5-flash',
      'gemini-2.0-flash',
    ]) {
      expect(getModelInfo(id)?.id).toBe(id);
    }
    expect(knownModelIds).toHaveLength(21);
  });

  it('returns the published numbers', () => {
    expect(getModelInfo('gpt-4o')).toEqual({
      id: 'gpt-4o',
      provider: 'openai',
      contextWindow: 128_000,
      maxOutputTokens: 16_384,
      tokenizer: 'o200k',
    });
    expect(getModelInfo('claude-sonnet-4-5')).toMatchObject({
      provider: 'anthropic',
      contextWindow: 200_000,
      maxOutputTokens: 64_000,
      tokenizer: 'none',
    });
    expect(getModelInfo('gemini-2.5-pro')).toMatchObject({ provider: 'google', contextWindow: 1_048_576 });
  });

  it.each([
    ['claude-sonnet-4-5-20250929', 'claude-sonnet-4-5'],
    ['claude-sonnet-4-20250514', 'claude-sonnet-4'],
    ['claude-opus-4-1-20250805', 'claude-opus-4-1'],
    ['claude-3-5-haiku-latest', 'claude-3-5-haiku'],
    ['anthropic/claude-sonnet-4-5', 'claude-sonnet-4-5'],
    ['openai:gpt-4o', 'gpt-4o'],
    ['openai/gpt-4o-mini-2024-07-18', 'gpt-4o-mini'],
    ['gpt-4.1-nano-2025-04-14', 'gpt-4.1-nano'],
    ['OpenAI:GPT-5-Mini', 'gpt-5-mini'],
    ['o4-mini-2025-04-16', 'o4-mini'],
    ['models/gemini-2.5-flash', 'gemini-2.5-flash'],
    ['gemini-2.5-pro-preview-06-05', 'gemini-2.5-pro'],
    ['us.anthropic.claude-sonnet-4-5-20250929-v1:0', 'claude-sonnet-4-5'],
    ['claude-opus-4-5@20251101', 'claude-opus-4-5'],
    ['ft:gpt-4o-mini:acme::abc123', 'gpt-4o-mini'],
  ])('matches %s to %s', (name, id) => {
    expect(getModelInfo(name)?.id).toBe(id);
  });

  it.each(['gpt-4', 'gpt-5.1', 'claude-opus-4-6', 'claude-sonnet-5', 'llama-3.1-70b', 'mygpt-4o', ''])(
    'does not guess for %j',
    (name) => {
      expect(getModelInfo(name)).toBeUndefined();
    },
  );

  it('returns a copy the caller may change', () => {
    const info = getModelInfo('gpt-4o');
    if (info) info.contextWindow = 1;
    expect(getModelInfo('gpt-4o')?.contextWindow).toBe(128_000);
  });
});

describe('resolveModel', () => {
  it('uses the registry window and reserves the maximum output by default', () => {
    expect(resolveModel({ model: 'gpt-5-2025-08-07' })).toMatchObject({
      contextWindow: 400_000,
      outputReserve: 128_000,
      provider: 'openai',
      tokenizer: 'o200k',
    });
    expect(resolveModel({ model: 'anthropic/claude-3-5-haiku-20241022' })).toMatchObject({
      contextWindow: 200_000,
      outputReserve: 8_192,
      provider: 'anthropic',
      tokenizer: 'none',
    });
  });

  it('takes explicit numbers, and a quarter of an explicit window as the default reserve', () => {
    expect(resolveModel({ model: 'claude-sonnet-4-5', outputReserve: 16_000 })).toMatchObject({
      contextWindow: 200_000,
      outputReserve: 16_000,
    });
    expect(resolveModel({ model: 'claude-sonnet-4-5', contextWindow: 1_000_000 })).toMatchObject({
      contextWindow: 1_000_000,
      outputReserve: 64_000,
    });
    expect(resolveModel({ model: 'gpt-4o', contextWindow: 32_000 }).outputReserve).toBe(8_000);
  });

  it('accepts unknown models with an explicit window, guessing the provider from the name', () => {
    expect(resolveModel({ model: 'claude-opus-4-6', contextWindow: 200_000 })).toMatchObject({
      provider: 'anthropic',
      tokenizer: 'none',
      outputReserve: 16_384,
      info: undefined,
    });
    expect(resolveModel({ model: 'openai/gpt-5.1', contextWindow: 400_000 })).toMatchObject({
      provider: 'openai',
      tokenizer: 'o200k',
    });
    expect(resolveModel({ model: 'qwen2.5-coder:32b', contextWindow: 32_768 })).toMatchObject({
      provider: undefined,
      tokenizer: 'none',
      outputReserve: 8_192,
    });
    expect(resolveModel({ contextWindow: 100_000, outputReserve: 0 })).toMatchObject({
      contextWindow: 100_000,
      outputReserve: 0,
      provider: undefined,
    });
  });

  it('throws UnknownModelError for an unknown model without a window', () => {
    expect(() => resolveModel({ model: 'claude-opus-4-6' })).toThrow(UnknownModelError);
    try {
      resolveModel({ model: 'mystery-model' });
    } catch (error) {
      expect(error).toMatchObject({ code: 'unknown-model', model: 'mystery-model' });
    }
  });

  it.each([
    [{}, 'contextWindow'],
    [{ model: '  ' }, 'model'],
    [{ contextWindow: -1 }, 'contextWindow'],
    [{ contextWindow: 0 }, 'contextWindow'],
    [{ contextWindow: 1000.5 }, 'contextWindow'],
    [{ contextWindow: Number.NaN }, 'contextWindow'],
    [{ model: 'gpt-4o', outputReserve: -5 }, 'outputReserve'],
    [{ model: 'gpt-4o', outputReserve: 128_000 }, 'outputReserve'],
    [{ contextWindow: 8000, outputReserve: 9000 }, 'outputReserve'],
  ])('rejects %j', (options, option) => {
    let thrown: unknown;
    try {
      resolveModel(options);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidArgumentError);
    expect(thrown).toMatchObject({ option });
  });
});
