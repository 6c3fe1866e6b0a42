import { InvalidArgumentError } from '../errors/index.js';
import { isRecord } from '../internal/json-shapes.js';
import { ProviderError } from './provider-error.js';

/** Waits `delayMs`; rejects with the signal's reason as soon as `abortSignal` fires. */
export type Sleep = (delayMs: number, abortSignal?: AbortSignal) => Promise<void>;

/** How the adapters talk HTTP: shared by every provider so timeouts and retries behave the same everywhere. */
export interface LlmTransportOptions {
  /**
   * The `fetch` to use; inject one for proxies, logging or tests.
   * @default globalThis.fetch
   */
  fetch?: typeof globalThis.fetch;
  /**
   * Time one HTTP attempt may take, from sending the request to the last byte of the response.
   * @default 60_000
   */
  timeoutMs?: number;
  /**
   * Attempts per call, the first one included. Only retryable failures are tried again.
   * @default 3
   */
  maxAttempts?: number;
  /**
   * Longest wait a `retry-after` header can ask for; longer requests are shortened to this.
   * @default 30_000
   */
  maxRetryAfterMs?: number;
  /**
   * Backoff before the first retry when the server gives no `retry-after`; doubles with each retry.
   * @default 500
   */
  initialBackoffMs?: number;
  /**
   * Longest backoff between attempts when the server gives no `retry-after`.
   * @default 8_000
   */
  maxBackoffMs?: number;
  /**
   * Waits between attempts; inject one so tests do not wait.
   * @default a `setTimeout` that the abort signal cancels
   */
  sleep?: Sleep;
  /**
   * Source of jitter in [0, 1).
   * @default Math.random
   */
  random?: () => number;
  /**
   * Clock for `retry-after` HTTP dates, in epoch milliseconds.
   * @default Date.now
   */
  now?: () => number;
}

export interface HttpTransportOptions extends LlmTransportOptions {
  /** Named in every error, e.g. `openai`. */
  provider: string;
}

export interface JsonPostRequest {
  url: string;
  headers: Record<string, string>;
  /** Serialised with `JSON.stringify`. */
  body: unknown;
  abortSignal?: AbortSignal;
  /** Overrides the transport's `timeoutMs` for this call. */
  timeoutMs?: number;
}

/** The abort signal and timeout an `LlmRequest` sets for its call, as `postJson` takes them (absent ones left out). */
export function callLimits(request: {
  abortSignal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
}): Pick<JsonPostRequest, 'abortSignal' | 'timeoutMs'> {
  const { abortSignal, timeoutMs } = request;
  return {
    ...(abortSignal === undefined ? {} : { abortSignal }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  };
}

export interface JsonPostResponse {
  status: number;
  headers: Headers;
  /** The parsed JSON body. */
  body: unknown;
  requestId?: string;
  /** Attempts made, the successful one included. */
  attempts: number;
}

export interface HttpTransport {
  /**
   * Posts JSON and returns the parsed JSON answer of a 2xx response. Retries retryable failures (429, 408, 409,
   * 5xx, network errors, timeouts) with backoff, honouring `retry-after`.
   *
   * @throws ProviderError for every failure, after the last attempt
   * @throws the abort signal's reason when the signal fires, at once and without retrying
   */
  postJson(request: JsonPostRequest): Promise<JsonPostResponse>;
}

const bodyExcerptLength = 500;
const retryableStatuses: readonly number[] = [408, 409, 429];

/** Whether a response with this status may succeed when sent again. */
export function isRetryableStatus(status: number): boolean {
  return retryableStatuses.includes(status) || status >= 500;
}

/**
 * The wait a response asks for, in milliseconds: `retry-after-ms` (OpenAI), else `retry-after` as seconds or
 * as an HTTP date. Undefined when there is no usable header. Never negative.
 */
export function parseRetryAfter(headers: Headers, nowMs: number = Date.now()): number | undefined {
  const milliseconds = headers.get('retry-after-ms');
  if (milliseconds !== null && /^\s*\d+(\.\d+)?\s*$/.test(milliseconds)) return Number(milliseconds);
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Number(value) * 1000;
  // HTTP dates start with the day name; Date.parse alone would also read "-5" as a year.
  if (!/^\s*[A-Za-z]{3}/.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

/** The request id a provider puts in its response headers. */
function requestIdOf(headers: Headers): string | undefined {
  return headers.get('x-request-id') ?? headers.get('request-id') ?? undefined;
}

/** A `setTimeout` the signal cancels. */
export const sleepWithAbort: Sleep = (delayMs, abortSignal) =>
  new Promise((resolve, reject) => {
    if (abortSignal?.aborted) {
      reject(abortSignal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortSignal?.reason);
    };
    const timer = setTimeout(() => {
      abortSignal?.removeEventListener('abort', onAbort);
      resolve();
    }, delayMs);
    abortSignal?.addEventListener('abort', onAbort, { once: true });
  });

/** Throws `InvalidArgumentError` naming `option` unless `value` is a positive integer (or absent). */
export function checkPositiveInteger(option: string, value: number | undefined): void {
  if (value === undefined) return;
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new InvalidArgumentError(option, `expected a positive integer, got ${String(value)}`);
  }
}

function checkNonNegative(option: string, value: number): void {
  if (!Number.isFinite(value) || value < 0) {
    throw new InvalidArgumentError(option, `expected a non-negative number, got ${String(value)}`);
  }
}

/** `LlmTransportOptions` with their defaults, `fetch` aside: what the retry loops of every adapter read. */
export type RetrySettings = Required<Omit<LlmTransportOptions, 'fetch'>>;

export function retrySettings(options: LlmTransportOptions): RetrySettings {
  const {
    timeoutMs = 60_000,
    maxAttempts = 3,
    maxRetryAfterMs = 30_000,
    initialBackoffMs = 500,
    maxBackoffMs = 8_000,
    sleep = sleepWithAbort,
    random = Math.random,
    now = Date.now,
  } = options;
  return { timeoutMs, maxAttempts, maxRetryAfterMs, initialBackoffMs, maxBackoffMs, sleep, random, now };
}

/** A failed attempt: the error, and the wait the provider asked for before the next one. */
export interface AttemptFailure {
  error: ProviderError;
  retryAfterMs?: number;
}

/**
 * Between attempts: throws the failure's error when it is not retryable or `attempt` was the last one; otherwise
 * waits the `retry-after` the provider asked for (capped at `maxRetryAfterMs`), else a backoff that doubles with
 * each attempt up to `maxBackoffMs`.
 *
 * @throws the abort signal's reason when the signal fires during the wait
 */
export async function waitBeforeRetry(
  settings: RetrySettings,
  failure: AttemptFailure,
  attempt: number,
  abortSignal: AbortSignal | undefined,
): Promise<void> {
  const { maxAttempts, maxRetryAfterMs, initialBackoffMs, maxBackoffMs, sleep, random } = settings;
  const { error, retryAfterMs } = failure;
  if (!error.retryable || attempt >= maxAttempts) throw error;
  const ceiling = Math.min(maxBackoffMs, initialBackoffMs * 2 ** (attempt - 1));
  // Half fixed, half random: spreads clients that failed together without ever retrying at once.
  const backoffMs = ceiling / 2 + (random() * ceiling) / 2;
  await sleep(retryAfterMs === undefined ? backoffMs : Math.min(retryAfterMs, maxRetryAfterMs), abortSignal);
  abortSignal?.throwIfAborted();
}

type AttemptResult = { ok: true; response: JsonPostResponse } | ({ ok: false } & AttemptFailure);

/** The one place where HTTP outcomes become `ProviderError`s, and where retries happen. */
export function createHttpTransport(options: HttpTransportOptions): HttpTransport {
  const { provider, fetch: fetchFunction = globalThis.fetch } = options;
  const retry = retrySettings(options);
  const { timeoutMs: defaultTimeoutMs, now } = retry;
  checkPositiveInteger('timeoutMs', defaultTimeoutMs);
  checkPositiveInteger('maxAttempts', retry.maxAttempts);
  checkNonNegative('maxRetryAfterMs', retry.maxRetryAfterMs);
  checkNonNegative('initialBackoffMs', retry.initialBackoffMs);
  checkNonNegative('maxBackoffMs', retry.maxBackoffMs);

  async function attemptOnce(
    request: JsonPostRequest,
    body: string,
    attempt: number,
  ): Promise<AttemptResult> {
    const { abortSignal } = request;
    const timeoutMs = request.timeoutMs ?? defaultTimeoutMs;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onAbort = () => controller.abort(abortSignal?.reason);
    abortSignal?.addEventListener('abort', onAbort, { once: true });

    const failure = (cause: unknown, status?: number, requestId?: string): AttemptResult => {
      if (abortSignal?.aborted) throw abortSignal.reason;
      const details = {
        provider,
        retryable: true,
        attempts: attempt,
        ...(status === undefined ? {} : { status }),
        ...(requestId === undefined ? {} : { requestId }),
      };
      if (timedOut) {
        const message = `no complete response within ${timeoutMs} ms (timeoutMs) from ${request.url}`;
        return { ok: false, error: new ProviderError(message, { ...details, kind: 'timeout' }, { cause }) };
      }
      const reason = cause instanceof Error ? describeNetworkError(cause) : String(cause);
      const message = `request to ${request.url} failed: ${reason}`;
      return { ok: false, error: new ProviderError(message, { ...details, kind: 'network' }, { cause }) };
    };

    try {
      let response: Response;
      try {
        response = await fetchFunction(request.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json', ...request.headers },
          body,
          signal: controller.signal,
        });
      } catch (error) {
        return failure(error);
      }
      const requestId = requestIdOf(response.headers);
      let text: string;
      try {
        text = await response.text();
      } catch (error) {
        return failure(error, response.status, requestId);
      }
      const details = {
        provider,
        status: response.status,
        attempts: attempt,
        bodyExcerpt: text.slice(0, bodyExcerptLength),
        ...(requestId === undefined ? {} : { requestId }),
      };
      if (!response.ok) {
        const retryable = shouldRetry(response);
        const message = `HTTP ${response.status}${statusText(response)}${providerMessage(text)}`;
        const error = new ProviderError(message, { ...details, kind: 'http-status', retryable });
        const retryAfterMs = parseRetryAfter(response.headers, now());
        return retryAfterMs === undefined ? { ok: false, error } : { ok: false, error, retryAfterMs };
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (cause) {
        const message = `HTTP ${response.status} response is not JSON`;
        const error = new ProviderError(
          message,
          { ...details, kind: 'invalid-response', retryable: false },
          { cause },
        );
        return { ok: false, error };
      }
      const result: JsonPostResponse = {
        status: response.status,
        headers: response.headers,
        body: parsed,
        attempts: attempt,
      };
      if (requestId !== undefined) result.requestId = requestId;
      return { ok: true, response: result };
    } finally {
      clearTimeout(timer);
      abortSignal?.removeEventListener('abort', onAbort);
    }
  }

  return {
    async postJson(request) {
      checkPositiveInteger('timeoutMs', request.timeoutMs);
      const { abortSignal } = request;
      abortSignal?.throwIfAborted();
      const body = JSON.stringify(request.body);
      for (let attempt = 1; ; attempt++) {
        const result = await attemptOnce(request, body, attempt);
        if (result.ok) return result.response;
        await waitBeforeRetry(retry, result, attempt, abortSignal);
      }
    },
  };
}

/** OpenAI and Anthropic tell clients whether to retry in `x-should-retry`; the status decides otherwise. */
function shouldRetry(response: Response): boolean {
  const header = response.headers.get('x-should-retry');
  if (header === 'true') return true;
  if (header === 'false') return false;
  return isRetryableStatus(response.status);
}

function statusText(response: Response): string {
  return response.statusText === '' ? '' : ` ${response.statusText}`;
}

/** The provider's own explanation: `error.message` in both OpenAI's and Anthropic's error bodies. */
function providerMessage(text: string): string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return text.trim() === '' ? '' : `: ${text.trim().slice(0, 200)}`;
  }
  if (!isRecord(body)) return '';
  const { error } = body;
  if (typeof error === 'string') return `: ${error}`;
  if (isRecord(error) && typeof error.message === 'string') {
    const type = typeof error.type === 'string' ? ` (${error.type})` : '';
    return `: ${error.message}${type}`;
  }
  return typeof body.message === 'string' ? `: ${body.message}` : '';
}

/** Node's fetch hides the useful part (ECONNREFUSED, ...) in `cause`. */
function describeNetworkError(error: Error): string {
  const cause = error.cause;
  if (cause instanceof Error && cause.message !== '' && cause.message !== error.message) {
    return `${error.message} (${cause.message})`;
  }
  return error.message;
}
