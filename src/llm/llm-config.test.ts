import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors/index.js';
import {
  formatLlmSpec,
  isLocalEndpoint,
  type LlmSpec,
  parseLlmSpec,
  resolveLlmConfig,
  resolveRedact,
} from './llm-config.js';

function thrown(run: () => unknown): InvalidArgumentError {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidArgumentError) return error;
    throw error;
  }
  throw new Error('expected an InvalidArgumentError');
}

describe('parseLlmSpec', () => {
  it('reads the three providers', () => {
    expect(parseLlmSpec('openai:gpt-4o-mini')).toEqual({ provider: 'openai', model: 'gpt-4o-mini' });
    expect(parseLlmSpec(' anthropic:claude-haiku-4-5 ')).toEqual({
      provider: 'anthropic',
      model: 'claude-haiku-4-5',
    });
    expect(parseLlmSpec('openai-compatible:http://127.0.0.1:11434/v1#qwen2.5:7b')).toEqual({
      provider: 'openai-compatible',
      baseURL: 'http://127.0.0.1:11434/v1',
      model: 'qwen2.5:7b',
    });
  });

  it('refuses malformed specs, naming the option it came from', () => {
    const cases = [
      ['gpt-4o-mini', 'unknown provider'],
      ['azure:gpt-4o', 'unknown provider'],
      ['openai:', 'no model'],
      ['anthropic', 'no model'],
      ['openai-compatible:http://127.0.0.1:11434/v1', 'openai-compatible:<base URL>#<model>'],
      ['openai-compatible:#qwen', 'openai-compatible:<base URL>#<model>'],
      ['openai-compatible:localhost:11434#qwen', 'expected an http(s) URL'],
      ['openai-compatible:not a url#qwen', 'not a URL'],
    ] as const;
    for (const [spec, reason] of cases) {
      const error = thrown(() => parseLlmSpec(spec, '--llm'));
      expect(error.option).toBe('--llm');
      expect(error.message).toContain(reason);
    }
  });

  it('round-trips through formatLlmSpec', () => {
    const model = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,30}$/);
    const spec: fc.Arbitrary<LlmSpec> = fc.oneof(
      fc.record({ provider: fc.constantFrom('openai' as const, 'anthropic' as const), model }),
      fc.record({
        provider: fc.constant('openai-compatible' as const),
        model,
        baseURL: fc.webUrl().filter((url) => !url.includes('#')),
      }),
    );
    fc.assert(
      fc.property(spec, (value) => {
        expect(parseLlmSpec(formatLlmSpec(value))).toEqual(value);
      }),
    );
  });
});

describe('resolveLlmConfig', () => {
  it('is undefined when nothing names an LLM', () => {
    expect(resolveLlmConfig({ env: {} })).toBeUndefined();
    expect(resolveLlmConfig({ env: { PRECIS_LLM: '  ', OPENAI_API_KEY: 'k' } })).toBeUndefined();
  });

  it('reads PRECIS_LLM and the provider key and base URL variables', () => {
    expect(
      resolveLlmConfig({
        env: {
          PRECIS_LLM: 'openai:gpt-4o-mini',
          OPENAI_API_KEY: 'sk-1',
          OPENAI_BASE_URL: 'https://openrouter.ai/api/v1',
        },
      }),
    ).toEqual({
      provider: 'openai',
      model: 'gpt-4o-mini',
      apiKey: 'sk-1',
      baseURL: 'https://openrouter.ai/api/v1',
    });
    expect(
      resolveLlmConfig({ env: { PRECIS_LLM: 'anthropic:claude-haiku-4-5', ANTHROPIC_API_KEY: 'sk-ant' } }),
    ).toEqual({
      provider: 'anthropic',
      model: 'claude-haiku-4-5',
      apiKey: 'sk-ant',
      baseURL: 'https://api.anthropic.com',
    });
  });

  it('prefers options to the environment', () => {
    const config = resolveLlmConfig({
      llm: 'anthropic:claude-sonnet-4-5',
      apiKey: 'from-option',
      baseURL: 'http://127.0.0.1:9000',
      timeoutMs: 5000,
      env: {
        PRECIS_LLM: 'openai:gpt-4o-mini',
        ANTHROPIC_API_KEY: 'from-env',
        ANTHROPIC_BASE_URL: 'https://proxy.example',
      },
    });
    expect(config).toEqual({
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      apiKey: 'from-option',
      baseURL: 'http://127.0.0.1:9000',
      timeoutMs: 5000,
    });
  });

  it('accepts a parsed spec', () => {
    const config = resolveLlmConfig({
      llm: { provider: 'openai-compatible', model: 'llama3', baseURL: 'http://localhost:8080/v1' },
      env: {},
    });
    expect(config).toEqual({
      provider: 'openai-compatible',
      model: 'llama3',
      baseURL: 'http://localhost:8080/v1',
    });
  });

  it('never sends a vendor key to an openai-compatible endpoint', () => {
    const env = { OPENAI_API_KEY: 'sk-openai', ANTHROPIC_API_KEY: 'sk-ant' };
    const keyless = resolveLlmConfig({ llm: 'openai-compatible:https://llm.example/v1#m', env });
    expect(keyless?.apiKey).toBeUndefined();
    const keyed = resolveLlmConfig({
      llm: 'openai-compatible:https://llm.example/v1#m',
      env: { ...env, PRECIS_LLM_API_KEY: 'sk-own' },
    });
    expect(keyed?.apiKey).toBe('sk-own');
  });

  it('names the variable or option that is wrong', () => {
    expect(thrown(() => resolveLlmConfig({ env: { PRECIS_LLM: 'gpt-4' } })).option).toBe('PRECIS_LLM');
    expect(thrown(() => resolveLlmConfig({ llm: 'gpt-4', env: {} })).option).toBe('llm');
    expect(thrown(() => resolveLlmConfig({ llm: 'openai:gpt-4o', env: {} })).option).toBe('OPENAI_API_KEY');
    expect(
      thrown(() => resolveLlmConfig({ llm: 'anthropic:claude', env: { ANTHROPIC_API_KEY: '' } })).option,
    ).toBe('ANTHROPIC_API_KEY');
    const badUrl = { llm: 'openai:gpt-4o', env: { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: 'ftp://x' } };
    expect(thrown(() => resolveLlmConfig(badUrl)).option).toBe('OPENAI_BASE_URL');
    expect(
      thrown(() => resolveLlmConfig({ llm: 'openai:gpt-4o', apiKey: 'k', timeoutMs: 0, env: {} })).option,
    ).toBe('timeoutMs');
  });
});

describe('isLocalEndpoint', () => {
  it('is true for loopback hosts only', () => {
    expect(
      ['http://127.0.0.1:11434/v1', 'http://localhost:1234', 'http://[::1]:8000/v1', 'http://127.1.2.3'].map(
        isLocalEndpoint,
      ),
    ).toEqual([true, true, true, true]);
    expect(
      ['https://api.openai.com/v1', 'http://192.168.1.5:11434', 'nonsense'].map(isLocalEndpoint),
    ).toEqual([false, false, false]);
  });
});

describe('resolveRedact', () => {
  it('takes redact when given, otherwise redacts unless the endpoint is local', () => {
    expect(resolveRedact(false, 'https://api.openai.com/v1')).toBe(false);
    expect(resolveRedact(true, 'http://localhost:11434/v1')).toBe(true);
    expect(resolveRedact(undefined, undefined)).toBe(true);
    expect(resolveRedact(undefined, 'https://api.openai.com/v1')).toBe(true);
    expect(resolveRedact(undefined, 'http://127.0.0.1:8080/v1')).toBe(false);
  });

  it('rejects a redact that is not a boolean and a baseURL that is not a string', () => {
    expect(() => resolveRedact('yes', undefined)).toThrow(InvalidArgumentError);
    expect(() => resolveRedact(undefined, 42)).toThrow(/baseURL/);
  });
});
