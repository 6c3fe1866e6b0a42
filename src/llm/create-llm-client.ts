import { InvalidArgumentError } from '../errors/index.js';
import { createAnthropicClient } from './anthropic-client.js';
import type { LlmTransportOptions } from './http-transport.js';
import type { LlmClient } from './llm-client.js';
import { type LlmConfig, type ResolveLlmConfigOptions, resolveLlmConfig } from './llm-config.js';
import { createOpenAICompatibleClient } from './openai-compatible-client.js';

export interface CreateLlmClientOptions
  extends ResolveLlmConfigOptions,
    Omit<LlmTransportOptions, 'timeoutMs'> {
  /** An already resolved configuration; when given, `llm`, `apiKey`, `baseURL` and `env` are not read. */
  config?: LlmConfig;
}

/**
 * The client a spec or configuration names: `createLlmClient({ llm: 'openai:gpt-4o-mini' })`,
 * `createLlmClient('anthropic:claude-haiku-4-5')`, or `createLlmClient()` to use `PRECIS_LLM`. Keys and
 * endpoints come from the options, then the environment (see `resolveLlmConfig`).
 *
 * @throws InvalidArgumentError when no LLM is configured, or naming the option or variable that is malformed
 */
export function createLlmClient(options: CreateLlmClientOptions | string = {}): LlmClient {
  const {
    config: given,
    llm,
    apiKey,
    baseURL,
    timeoutMs,
    env,
    ...transportOptions
  } = typeof options === 'string' ? { llm: options } : options;
  const config =
    given ??
    resolveLlmConfig({
      ...(llm === undefined ? {} : { llm }),
      ...(apiKey === undefined ? {} : { apiKey }),
      ...(baseURL === undefined ? {} : { baseURL }),
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...(env === undefined ? {} : { env }),
    });
  if (config === undefined) {
    throw new InvalidArgumentError(
      'llm',
      'no LLM configured: pass a spec such as openai:gpt-4o-mini, or set PRECIS_LLM',
    );
  }
  const transport = {
    ...transportOptions,
    ...(config.timeoutMs === undefined ? {} : { timeoutMs: config.timeoutMs }),
  };
  if (config.provider === 'anthropic') {
    if (config.apiKey === undefined) {
      throw new InvalidArgumentError('ANTHROPIC_API_KEY', 'not set: the anthropic provider needs an API key');
    }
    return createAnthropicClient({
      ...transport,
      model: config.model,
      apiKey: config.apiKey,
      baseURL: config.baseURL,
    });
  }
  return createOpenAICompatibleClient({
    ...transport,
    model: config.model,
    baseURL: config.baseURL,
    provider: config.provider,
    ...(config.apiKey === undefined ? {} : { apiKey: config.apiKey }),
  });
}
