/**
 * Recognises "the prompt does not fit the context window" errors of OpenAI, Anthropic and Google (and the
 * OpenAI-compatible servers that copy OpenAI's wording), whatever shape they arrive in: an SDK error object
 * (OpenAI and Anthropic SDKs, AI SDK `APICallError` with its `responseBody`, LangChain wrappers with `cause`),
 * a parsed or raw HTTP body, or a bare message string. The numbers the message states are extracted.
 */

export const overflowProviders = ['openai', 'anthropic', 'google', 'unknown'] as const;
/** Whose wording was recognised; `unknown` for a generic context-length message (a code alone counts as `openai`'s). */
export type OverflowProvider = (typeof overflowProviders)[number];

export interface ContextOverflow {
  provider: OverflowProvider;
  /** The provider's message (the one that matched, or the first one found for a code-only match). */
  message: string;
  /** Input tokens the request had, when the message states them. */
  requestTokens?: number;
  /** The limit the input (or input plus output) had to fit, when stated. */
  maxTokens?: number;
  /** Output tokens the request reserved (`max_tokens`), when stated. */
  outputTokens?: number;
}

type StatedNumbers = { [Key in 'requestTokens' | 'maxTokens' | 'outputTokens']?: number | undefined };

interface Pattern {
  provider: OverflowProvider;
  expression: RegExp;
  /** Reads the numbers of a match; `numberOf` strips thousands separators. */
  numbers?: (match: RegExpExecArray) => StatedNumbers;
}

const numberOf = (text: string | undefined): number | undefined => {
  if (text === undefined) return undefined;
  const value = Number(text.replace(/[,_\s]/g, ''));
  return Number.isFinite(value) ? value : undefined;
};

const digits = String.raw`(\d[\d,_]*)`;

/** Ordered: the most specific wording first. */
const patterns: readonly Pattern[] = [
  {
    // "prompt is too long: 208310 tokens > 200000 maximum"
    provider: 'anthropic',
    expression: new RegExp(
      String.raw`prompt is too long(?::\s*${digits}\s*tokens\s*>\s*${digits}\s*maximum)?`,
      'i',
    ),
    numbers: (match) => ({ requestTokens: numberOf(match[1]), maxTokens: numberOf(match[2]) }),
  },
  {
    // "input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000, decrease input length ..."
    provider: 'anthropic',
    expression: new RegExp(
      String.raw`exceed(?:s)? context limit(?::\s*${digits}\s*\+\s*${digits}\s*>\s*${digits})?`,
      'i',
    ),
    numbers: (match) => ({
      requestTokens: numberOf(match[1]),
      outputTokens: numberOf(match[2]),
      maxTokens: numberOf(match[3]),
    }),
  },
  {
    // "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."
    provider: 'google',
    expression: new RegExp(
      String.raw`(?:input token count\s*\(?${digits}\)?\s*)?exceeds the maximum number of tokens(?: allowed)?(?:\s*\(?${digits}\)?)?`,
      'i',
    ),
    numbers: (match) => ({ requestTokens: numberOf(match[1]), maxTokens: numberOf(match[2]) }),
  },
  {
    // Vertex AI: "the input token count is 1200000 but model only supports up to 1048576"
    provider: 'google',
    expression: new RegExp(
      `input token count is ${digits} but (?:the )?model only supports up to ${digits}`,
      'i',
    ),
    numbers: (match) => ({ requestTokens: numberOf(match[1]), maxTokens: numberOf(match[2]) }),
  },
  {
    // "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens"
    // (or "you requested 130532 tokens (126000 in the messages, 4532 in the completion)").
    provider: 'openai',
    expression: new RegExp(
      String.raw`maximum context length is ${digits} tokens(?:[^\d]{0,80}?(?:resulted in|requested)\s*${digits} tokens(?:\s*\(${digits} in the messages(?:,\s*${digits} in the (completion|functions))?)?)?`,
      'i',
    ),
    numbers: (match) => {
      const total = numberOf(match[2]);
      const inMessages = numberOf(match[3]);
      const rest = numberOf(match[4]);
      const completion = match[5]?.toLowerCase() === 'completion';
      return {
        maxTokens: numberOf(match[1]),
        requestTokens: completion && inMessages !== undefined ? inMessages : total,
        outputTokens: completion ? rest : undefined,
      };
    },
  },
  {
    // GPT-5 family: "Input tokens exceed the configured limit of 272000 tokens. Your messages resulted in 300000 tokens."
    provider: 'openai',
    expression: new RegExp(
      String.raw`input tokens exceed the configured limit of ${digits} tokens(?:[^\d]{0,80}?resulted in ${digits} tokens)?`,
      'i',
    ),
    numbers: (match) => ({ maxTokens: numberOf(match[1]), requestTokens: numberOf(match[2]) }),
  },
  {
    // Responses API: "Your input exceeds the context window of this model."
    provider: 'openai',
    expression: /input exceeds the context window/i,
  },
  {
    // Generic wording of gateways and local servers (vLLM, Ollama, Mistral, Bedrock, LangChain).
    provider: 'unknown',
    expression:
      /context[ _-]?(?:length|window)[ _-]?(?:exceeded|is exceeded)|exceeds? (?:the )?(?:model'?s? )?(?:maximum )?context (?:length|window|size)|too large for model with \d+ maximum context length|input is too long for (?:the )?requested model/i,
  },
];

/** Codes that mean a context overflow whatever the message says. */
const overflowCodes = new Set([
  'context_length_exceeded',
  'context_window_exceeded',
  'model_context_window_exceeded',
]);
/** Codes and statuses that mean something else even when the message mentions tokens (rate limits). */
const excludedCodes = new Set(['rate_limit_exceeded', 'insufficient_quota', 'resource_exhausted', 'tokens']);

const maxDepth = 6;
/** Bodies longer than this are not parsed as JSON: an overflow body is small. */
const maxBodyChars = 200_000;

interface Findings {
  texts: string[];
  codes: string[];
  statuses: number[];
}

function collect(value: unknown, findings: Findings, seen: Set<object>, depth: number): void {
  if (depth > maxDepth || value === null || value === undefined) return;
  if (typeof value === 'string') {
    const trimmed = value.trim();
    if ((trimmed.startsWith('{') || trimmed.startsWith('[')) && trimmed.length <= maxBodyChars) {
      try {
        collect(JSON.parse(trimmed) as unknown, findings, seen, depth + 1);
        return;
      } catch {
        // Not JSON after all: read it as a message.
      }
    }
    if (trimmed !== '') findings.texts.push(trimmed);
    return;
  }
  if (typeof value !== 'object' || seen.has(value)) return;
  seen.add(value);
  if (Array.isArray(value)) {
    for (const item of value.slice(0, 20)) collect(item, findings, seen, depth + 1);
    return;
  }
  const record = value as Record<string, unknown>;
  for (const key of ['code', 'type', 'status', 'reason']) {
    const field = record[key];
    if (typeof field === 'string') findings.codes.push(field.toLowerCase());
    if (typeof field === 'number') findings.statuses.push(field);
  }
  if (typeof record.statusCode === 'number') findings.statuses.push(record.statusCode);
  if (typeof record.message === 'string') collect(record.message, findings, seen, depth + 1);
  // Where SDKs and HTTP clients keep the provider's body, the wrapped error, or several attempts' errors.
  for (const key of [
    'error',
    'body',
    'responseBody',
    'data',
    'response',
    'cause',
    'lastError',
    'errors',
    'details',
  ]) {
    if (key in record) collect(record[key], findings, seen, depth + 1);
  }
}

/**
 * The context overflow an error reports, or undefined when it reports something else (a rate limit, a bad
 * parameter, a network failure). Never throws.
 */
export function parseOverflowError(error: unknown): ContextOverflow | undefined {
  const findings: Findings = { texts: [], codes: [], statuses: [] };
  try {
    collect(error, findings, new Set(), 0);
  } catch {
    // A getter that throws, a proxy: whatever was collected so far still counts.
  }
  if (findings.statuses.includes(429) || findings.codes.some((code) => excludedCodes.has(code)))
    return undefined;
  // The shortest text that matches: the provider's own message rather than an SDK's "400 {body}" wrapper of it.
  const texts = [...findings.texts].sort((left, right) => left.length - right.length);
  for (const pattern of patterns) {
    for (const text of texts) {
      const match = pattern.expression.exec(text);
      if (match === null) continue;
      const overflow: ContextOverflow = { provider: pattern.provider, message: text };
      const numbers = pattern.numbers?.(match) ?? {};
      for (const key of ['requestTokens', 'maxTokens', 'outputTokens'] as const) {
        const number = numbers[key];
        if (number !== undefined) overflow[key] = number;
      }
      return overflow;
    }
  }
  if (findings.codes.some((code) => overflowCodes.has(code)))
    return { provider: 'openai', message: findings.texts[0] ?? 'context_length_exceeded' };
  return undefined;
}

/** True when `error` reports that the prompt did not fit the model's context window. */
export function isOverflowError(error: unknown): boolean {
  return parseOverflowError(error) !== undefined;
}
