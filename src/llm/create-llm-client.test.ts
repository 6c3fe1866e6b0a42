import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors/index.js';
import { userMessage } from '../testing/message-builders.js';
import { createLlmClient } from './create-llm-client.js';
import {
  anthropicReply,
  openAIReply,
  recordingSleep,
  useLoopbackServer,
} from './loopback-server.test-support.js';
import { isProviderError } from './provider-error.js';

const server = useLoopbackServer();

const messages = [userMessage('hello')];

describe('createLlmClient', () => {
  it('builds an openai-compatible client from PRECIS_LLM and talks to the endpoint', async () => {
    server.script({ body: openAIReply('hi from ollama') });
    const llm = createLlmClient({
      env: { PRECIS_LLM: `openai-compatible:${server.url}/v1#qwen2.5`, OPENAI_API_KEY: 'sk-x' },
    });
    expect(llm.id).toBe('openai-compatible:qwen2.5');
    expect((await llm.complete({ messages })).text).toBe('hi from ollama');
    expect(server.requests[0]?.path).toBe('/v1/chat/completions');
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
  });

  it('builds an anthropic client with ANTHROPIC_BASE_URL', async () => {
    server.script({ body: anthropicReply('hi from claude') });
    const llm = createLlmClient({
      llm: 'anthropic:claude-haiku-4-5',
      env: { ANTHROPIC_API_KEY: 'sk-ant', ANTHROPIC_BASE_URL: server.url },
    });
    expect(llm.id).toBe('anthropic:claude-haiku-4-5');
    expect((await llm.complete({ messages })).text).toBe('hi from claude');
    expect(server.requests[0]?.headers['x-api-key']).toBe('sk-ant');
  });

  it('builds an openai client with OPENAI_BASE_URL and the bearer key', async () => {
    server.script({ body: openAIReply('hi from openai') });
    const llm = createLlmClient({
      llm: 'openai:gpt-4o-mini',
      env: { OPENAI_API_KEY: 'sk-oai', OPENAI_BASE_URL: `${server.url}/v1` },
    });
    expect(llm.id).toBe('openai:gpt-4o-mini');
    await llm.complete({ messages });
    expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-oai');
  });

  it('applies the configured timeout and transport options', async () => {
    server.script({ hang: true }, { hang: true });
    const { sleep, delays } = recordingSleep();
    const llm = createLlmClient({
      llm: `openai-compatible:${server.url}/v1#m`,
      timeoutMs: 100,
      maxAttempts: 2,
      sleep,
      env: {},
    });
    const error = await llm.complete({ messages }).catch((caught: unknown) => caught);
    expect(isProviderError(error) && error.kind === 'timeout').toBe(true);
    expect(delays).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });

  it('accepts a resolved configuration and a bare spec string', () => {
    const fromConfig = createLlmClient({
      config: { provider: 'openai-compatible', model: 'm', baseURL: server.url },
    });
    expect(fromConfig.id).toBe('openai-compatible:m');
    expect(createLlmClient(`openai-compatible:${server.url}#m2`).id).toBe('openai-compatible:m2');
  });

  it('says when no LLM is configured', () => {
    expect(() => createLlmClient({ env: {} })).toThrow(InvalidArgumentError);
    expect(() => createLlmClient({ env: {} })).toThrow('PRECIS_LLM');
    expect(() =>
      createLlmClient({
        config: { provider: 'anthropic', model: 'c', baseURL: 'https://api.anthropic.com' },
      }),
    ).toThrow('ANTHROPIC_API_KEY');
  });
});
