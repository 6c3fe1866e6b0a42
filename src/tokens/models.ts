import { InvalidArgumentError, UnknownModelError } from '../errors/index.js';

export const modelProviders = ['openai', 'anthropic', 'google'] as const;
export type ModelProvider = (typeof modelProviders)[number];

/** `none`: no local tokenizer; count with a calibrated counter (see `createCalibratedCounter`). */
export const modelTokenizers = ['o200k', 'cl100k', 'none'] as const;
export type ModelTokenizer = (typeof modelTokenizers)[number];

export interface ModelInfo {
  id: string;
  provider: ModelProvider;
  /** Tokens the model can attend to: input plus output where the provider counts them together. */
  contextWindow: number;
  maxOutputTokens: number;
  tokenizer: ModelTokenizer;
}

/**
 * A snapshot of the providers' published model pages (late 2025), not a live source: pass an explicit
 * `contextWindow` for anything newer or different (1M-token betas, fine-tunes, local models).
 * GPT-5's 400k window includes its 128k output, which is why its input is capped at 272k.
 */
const knownModels: readonly ModelInfo[] = [
  { id: 'gpt-4o', provider: 'openai', contextWindow: 128_000, maxOutputTokens: 16_384, tokenizer: 'o200k' },
  {
    id: 'gpt-4o-mini',
    provider: 'openai',
    contextWindow: 128_000,
    maxOutputTokens: 16_384,
    tokenizer: 'o200k',
  },
  {
    id: 'gpt-4.1',
    provider: 'openai',
    contextWindow: 1_047_576,
    maxOutputTokens: 32_768,
    tokenizer: 'o200k',
  },
  {
    id: 'gpt-4.1-mini',
    provider: 'openai',
    contextWindow: 1_047_576,
    maxOutputTokens: 32_768,
    tokenizer: 'o200k',
  },
  {
    id: 'gpt-4.1-nano',
    provider: 'openai',
    contextWindow: 1_047_576,
    maxOutputTokens: 32_768,
    tokenizer: 'o200k',
  },
  { id: 'o3', provider: 'openai', contextWindow: 200_000, maxOutputTokens: 100_000, tokenizer: 'o200k' },
  { id: 'o4-mini', provider: 'openai', contextWindow: 200_000, maxOutputTokens: 100_000, tokenizer: 'o200k' },
  { id: 'gpt-5', provider: 'openai', contextWindow: 400_000, maxOutputTokens: 128_000, tokenizer: 'o200k' },
  {
    id: 'gpt-5-mini',
    provider: 'openai',
    contextWindow: 400_000,
    maxOutputTokens: 128_000,
    tokenizer: 'o200k',
  },
  {
    id: 'gpt-5-nano',
    provider: 'openai',
    contextWindow: 400_000,
    maxOutputTokens: 128_000,
    tokenizer: 'o200k',
  },
  {
    id: 'claude-opus-4-5',
    provider: 'anthropic',
    contextWindow: 200_000,
    maxOutputTokens: 64_000,
    tokenizer: 'none',
  },
  {
    id: 'claude-opus-4-1',
    provider: 'anthropic',
    contextWindow: 200_000,
    maxOutputTokens: 32_000,
    tokenizer: 'none',
  },
  {
    id: 'claude-opus-4',
    provider: 'anthropic',
    contextWindow: 200_000,
    maxOutputTokens: 32_000,
    tokenizer: 'none',
  },
  {
    id: 'claude-sonnet-4-5',
    provider: 'anthropic',
    contextWindow: 200_000,
    maxOutputTokens: 64_000,
    tokenizer: 'none',
  },
  {
    id: 'claude-sonnet-4',
    provider: 'anthropic',
    contextWindow: 200_000,
    maxOutputTokens: 64_000,
    tokenizer: 'none',
  },
  {
    id: 'claude-haiku-4-5',
    provider: 'anthropic',
    contextWindow: 200_000,
    maxOutputTokens: 64_000,
    tokenizer: 'none',
  },
  {
    id: 'claude-3-7-sonnet',
    provider: 'anthropic',
    contextWindow: 200_000,
    maxOutputTokens: 64_000,
    tokenizer: 'none',
  },
  {
    id: 'claude-3-5-haiku',
    provider: 'anthropic',
    contextWindow: 200_000,
    maxOutputTokens: 8_192,
    tokenizer: 'none',
  },
  {
    id: 'gemini-2.5-pro',
    provider: 'google',
    contextWindow: 1_048_576,
    maxOutputTokens: 65_536,
    tokenizer: 'none',
  },
  {
    id: 'gemini-2.5-flash',
    provider: 'google',
    contextWindow: 1_048_576,
    maxOutputTokens: 65_536,
    tokenizer: 'none',
  },
  {
    id: 'gemini-2.0-flash',
    provider: 'google',
    contextWindow: 1_048_576,
    maxOutputTokens: 8_192,
    tokenizer: 'none',
  },
];

/** Ids of every model in the registry. */
export const knownModelIds: readonly string[] = knownModels.map((model) => model.id);

// A known id may start the name or follow a provider / deployment prefix: `anthropic/`, `openai:`, `models/`,
// `us.anthropic.`, `ft:`.
const prefixSeparators = new Set(['/', ':', '.']);

/**
 * What may follow a known id: nothing, a date or tag (`-20250929`, `-latest`, `@20250929`, `:0`). A short
 * number after a dash is a newer minor version (`claude-opus-4-6` is not `claude-opus-4`), and a dot
 * continues the version (`gpt-5.1` is not `gpt-5`).
 */
function isAllowedSuffix(suffix: string): boolean {
  if (suffix === '') return true;
  if (suffix.startsWith('@') || suffix.startsWith(':')) return true;
  if (!suffix.startsWith('-')) return false;
  return !/^-\d{1,2}(?:$|[-@:.])/.test(suffix);
}

/**
 * The registry entry for a model name. Matches dated and prefixed ids to the longest known id they contain
 * (`claude-sonnet-4-5-20250929`, `anthropic/claude-sonnet-4-5`, `openai:gpt-4o`); undefined when none fits.
 */
export function getModelInfo(model: string): ModelInfo | undefined {
  const name = model.trim().toLowerCase();
  let best: ModelInfo | undefined;
  for (let start = 0; start < name.length; start++) {
    if (start > 0 && !prefixSeparators.has(name[start - 1] ?? '')) continue;
    for (const candidate of knownModels) {
      if (best !== undefined && candidate.id.length <= best.id.length) continue;
      if (!name.startsWith(candidate.id, start)) continue;
      if (isAllowedSuffix(name.slice(start + candidate.id.length))) best = candidate;
    }
  }
  return best === undefined ? undefined : { ...best };
}

/** A provider guessed from a model name the registry does not know. */
function guessProvider(model: string): ModelProvider | undefined {
  const name = model.toLowerCase();
  if (name.includes('claude')) return 'anthropic';
  if (name.includes('gemini')) return 'google';
  if (/(?:^|[/:.])(?:gpt-|o\d|chatgpt)/.test(name)) return 'openai';
  return undefined;
}

export interface ResolveModelOptions {
  /** A model name, dated or prefixed ids included. */
  model?: string;
  /** Overrides the registry's window; required for models the registry does not know. */
  contextWindow?: number;
  /**
   * Tokens kept free for the reply. Defaults to the model's maximum output when the registry's window is used
   * (providers reject requests whose input plus `max_tokens` exceeds the window), and otherwise to a quarter of
   * the window, at most the model's maximum output (16,384 for unknown models).
   */
  outputReserve?: number;
}

export interface ResolvedModel {
  contextWindow: number;
  outputReserve: number;
  /** Undefined when the model is unknown and its name does not give the provider away. */
  provider: ModelProvider | undefined;
  tokenizer: ModelTokenizer;
  /** The registry entry, when the model is known. */
  info: ModelInfo | undefined;
}

const unknownModelMaxOutputTokens = 16_384;

function requireTokenCount(option: string, value: number, minimum: number): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum) {
    throw new InvalidArgumentError(
      option,
      `expected an integer of at least ${minimum}, got ${String(value)}`,
    );
  }
}

/**
 * The window and output reserve to budget with. Throws `UnknownModelError` for a model the registry does not
 * know when no `contextWindow` is given, and `InvalidArgumentError` for impossible numbers (a negative or
 * fractional count, a reserve that leaves no room for input).
 */
export function resolveModel(options: ResolveModelOptions): ResolvedModel {
  const { model, contextWindow, outputReserve } = options;
  if (model !== undefined && (typeof model !== 'string' || model.trim() === '')) {
    throw new InvalidArgumentError('model', 'expected a non-empty model name');
  }
  if (contextWindow !== undefined) requireTokenCount('contextWindow', contextWindow, 1);
  if (outputReserve !== undefined) requireTokenCount('outputReserve', outputReserve, 0);

  const info = model === undefined ? undefined : getModelInfo(model);
  if (info === undefined && contextWindow === undefined) {
    if (model === undefined)
      throw new InvalidArgumentError('contextWindow', 'pass a model or a contextWindow');
    throw new UnknownModelError(model);
  }
  const window = contextWindow ?? info!.contextWindow;
  const maxOutputTokens = info?.maxOutputTokens ?? unknownModelMaxOutputTokens;
  const reserve =
    outputReserve ??
    (contextWindow === undefined ? maxOutputTokens : Math.min(maxOutputTokens, Math.floor(window / 4)));
  if (reserve >= window) {
    throw new InvalidArgumentError(
      'outputReserve',
      `${reserve} leaves no room for input in a ${window}-token context window`,
    );
  }
  const provider = info?.provider ?? (model === undefined ? undefined : guessProvider(model));
  return {
    contextWindow: window,
    outputReserve: reserve,
    provider,
    tokenizer: info?.tokenizer ?? (provider === 'openai' ? 'o200k' : 'none'),
    info,
  };
}
