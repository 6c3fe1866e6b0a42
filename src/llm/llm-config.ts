import { InvalidArgumentError } from '../errors/index.js';
import { describeValue } from '../internal/json-shapes.js';
import { checkPositiveInteger } from './http-transport.js';

export const llmProviders = ['openai', 'anthropic', 'openai-compatible'] as const;
export type LlmProvider = (typeof llmProviders)[number];

/** What a spec string such as `openai:gpt-4o-mini` says. */
export interface LlmSpec {
  provider: LlmProvider;
  model: string;
  /** Only `openai-compatible` specs carry their endpoint. */
  baseURL?: string;
}

/** Everything needed to build a client: the spec with its endpoint and key resolved. */
export interface LlmConfig {
  provider: LlmProvider;
  model: string;
  baseURL: string;
  /** Absent for keyless local servers. */
  apiKey?: string;
  timeoutMs?: number;
}

/** Environment variables read, in one place. */
export type LlmEnvironment = Readonly<Record<string, string | undefined>>;

export interface ResolveLlmConfigOptions {
  /** A spec string or a parsed spec. Falls back to `PRECIS_LLM`. */
  llm?: string | LlmSpec;
  /**
   * The API key. Falls back to `OPENAI_API_KEY` (openai), `ANTHROPIC_API_KEY` (anthropic) or
   * `PRECIS_LLM_API_KEY` (openai-compatible: a vendor key is never sent to an arbitrary endpoint).
   */
  apiKey?: string;
  /** Overrides the endpoint. Falls back to the spec's URL, then `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL`. */
  baseURL?: string;
  /** Time one HTTP attempt may take. */
  timeoutMs?: number;
  /**
   * Where the environment variables come from; inject one for tests or embedding.
   * @default process.env
   */
  env?: LlmEnvironment;
}

export const defaultBaseUrls = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
} as const;

const usage = 'expected openai:<model>, anthropic:<model> or openai-compatible:<base URL>#<model>';

/**
 * Parses `openai:gpt-4o-mini`, `anthropic:claude-haiku-4-5` or
 * `openai-compatible:http://127.0.0.1:11434/v1#qwen2.5`. The model is everything after the provider (it may
 * contain colons, as Ollama tags do); an openai-compatible spec splits URL and model at the first `#`.
 *
 * @throws InvalidArgumentError naming `option` (the option or environment variable the spec came from)
 */
export function parseLlmSpec(spec: string, option = 'llm'): LlmSpec {
  if (typeof spec !== 'string') throw new InvalidArgumentError(option, `${usage}, got ${typeof spec}`);
  const text = spec.trim();
  const colon = text.indexOf(':');
  const provider = colon === -1 ? text : text.slice(0, colon);
  const rest = colon === -1 ? '' : text.slice(colon + 1).trim();
  if (!(llmProviders as readonly string[]).includes(provider)) {
    throw new InvalidArgumentError(option, `unknown provider in "${text}": ${usage}`);
  }
  if (provider === 'openai-compatible') {
    const hash = rest.indexOf('#');
    const baseURL = hash === -1 ? rest : rest.slice(0, hash).trim();
    const model = hash === -1 ? '' : rest.slice(hash + 1).trim();
    if (baseURL === '' || model === '') throw new InvalidArgumentError(option, `"${text}": ${usage}`);
    checkHttpUrl(baseURL, option);
    return { provider, model, baseURL };
  }
  if (rest === '') throw new InvalidArgumentError(option, `no model in "${text}": ${usage}`);
  return { provider: provider as LlmProvider, model: rest };
}

/** The spec string of a spec: `parseLlmSpec(formatLlmSpec(spec))` gives `spec` back. */
export function formatLlmSpec(spec: LlmSpec): string {
  if (spec.provider === 'openai-compatible') return `${spec.provider}:${spec.baseURL ?? ''}#${spec.model}`;
  return `${spec.provider}:${spec.model}`;
}

/**
 * The LLM configuration from options, then the environment; undefined when neither names an LLM (no `llm`
 * option, no `PRECIS_LLM`). Empty environment variables count as unset.
 *
 * @throws InvalidArgumentError naming the option or environment variable that is malformed, or the key
 *   variable when openai or anthropic has no API key
 */
export function resolveLlmConfig(options: ResolveLlmConfigOptions = {}): LlmConfig | undefined {
  const { llm, apiKey, baseURL, timeoutMs, env = process.env } = options;
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  checkPositiveInteger('timeoutMs', timeoutMs);
  let spec: LlmSpec;
  if (llm === undefined) {
    const fromEnvironment = read('PRECIS_LLM');
    if (fromEnvironment === undefined) return undefined;
    spec = parseLlmSpec(fromEnvironment, 'PRECIS_LLM');
  } else spec = typeof llm === 'string' ? parseLlmSpec(llm) : checkSpec(llm);

  const keyVariable = apiKeyVariables[spec.provider];
  const key = apiKey ?? read(keyVariable);
  if (key === undefined && spec.provider !== 'openai-compatible') {
    throw new InvalidArgumentError(
      keyVariable,
      `not set: the ${spec.provider} provider needs an API key (set ${keyVariable} or pass apiKey)`,
    );
  }
  const config: LlmConfig = {
    provider: spec.provider,
    model: spec.model,
    baseURL: resolveBaseUrl(spec, baseURL, read),
  };
  if (key !== undefined) config.apiKey = key;
  if (timeoutMs !== undefined) config.timeoutMs = timeoutMs;
  return config;
}

/** True for endpoints on this machine (loopback), where content does not leave it. */
export function isLocalEndpoint(baseURL: string): boolean {
  let hostname: string;
  try {
    hostname = new URL(baseURL).hostname;
  } catch {
    return false;
  }
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/**
 * Whether secrets are redacted before content is sent: `redact` when given, otherwise true unless `baseURL` is a
 * local endpoint (content leaves the machine unless the endpoint is known to be local).
 *
 * @throws InvalidArgumentError when `redact` is not a boolean or `baseURL` not a string
 */
export function resolveRedact(redact: unknown, baseURL: unknown): boolean {
  if (redact !== undefined && typeof redact !== 'boolean')
    throw new InvalidArgumentError('redact', `expected a boolean, got ${describeValue(redact)}`);
  if (baseURL !== undefined && typeof baseURL !== 'string')
    throw new InvalidArgumentError('baseURL', `expected a string, got ${describeValue(baseURL)}`);
  return redact ?? (baseURL === undefined || !isLocalEndpoint(baseURL));
}

const apiKeyVariables: Record<LlmProvider, string> = {
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  'openai-compatible': 'PRECIS_LLM_API_KEY',
};

const baseUrlVariables: Record<LlmProvider, string | undefined> = {
  openai: 'OPENAI_BASE_URL',
  anthropic: 'ANTHROPIC_BASE_URL',
  'openai-compatible': undefined,
};

function resolveBaseUrl(
  spec: LlmSpec,
  baseURL: string | undefined,
  read: (name: string) => string | undefined,
): string {
  if (baseURL !== undefined) return checkHttpUrl(baseURL, 'baseURL');
  if (spec.baseURL !== undefined) return spec.baseURL;
  const variable = baseUrlVariables[spec.provider];
  const fromEnvironment = variable === undefined ? undefined : read(variable);
  if (variable !== undefined && fromEnvironment !== undefined) return checkHttpUrl(fromEnvironment, variable);
  return spec.provider === 'anthropic' ? defaultBaseUrls.anthropic : defaultBaseUrls.openai;
}

function checkSpec(spec: LlmSpec): LlmSpec {
  if (typeof spec !== 'object' || spec === null) throw new InvalidArgumentError('llm', usage);
  const text =
    spec.provider === 'openai-compatible' ? formatLlmSpec(spec) : `${String(spec.provider)}:${spec.model}`;
  return parseLlmSpec(text);
}

function checkHttpUrl(value: string, option: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError(option, `not a URL: "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidArgumentError(option, `expected an http(s) URL, got "${value}"`);
  }
  return value;
}
