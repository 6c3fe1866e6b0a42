import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors/index.js';
import {
  callLimits,
  createHttpTransport,
  type HttpTransportOptions,
  isRetryableStatus,
  parseRetryAfter,
} from './http-transport.js';
import {
  providerFailure as failure,
  recordingSleep,
  startLoopbackServer,
  useLoopbackServer,
} from './loopback-server.test-support.js';
import { isProviderError } from './provider-error.js';

const server = useLoopbackServer();

function transport(options: Partial<HttpTransportOptions> = {}) {
  const recorder = recordingSleep();
  const created = createHttpTransport({
    provider: 'test',
    sleep: recorder.sleep,
    random: () => 0,
    ...options,
  });
  return { transport: created, delays: recorder.delays };
}

const post = (path = '/endpoint', extra: { timeoutMs?: number; abortSignal?: AbortSignal } = {}) => ({
  url: `${server.url}${path}`,
  headers: { 'x-custom': 'yes' },
  body: { hello: 'world' },
  ...extra,
});

describe('createHttpTransport', () => {
  it('posts JSON and returns the parsed body with the request id', async () => {
    server.script({ body: { ok: true }, headers: { 'x-request-id': 'req-42' } });
    const { transport: http } = transport();
    const response = await http.postJson(post());
    expect(response).toMatchObject({ status: 200, body: { ok: true }, requestId: 'req-42', attempts: 1 });
    const [received] = server.requests;
    expect(received?.method).toBe('POST');
    expect(received?.path).toBe('/endpoint');
    expect(received?.headers['content-type']).toBe('application/json');
    expect(received?.headers['x-custom']).toBe('yes');
    expect(received?.body).toEqual({ hello: 'world' });
  });

  it('reads the request id from request-id too', async () => {
    server.script({ body: {}, headers: { 'request-id': 'req_anthropic' } });
    const response = await transport().transport.postJson(post());
    expect(response.requestId).toBe('req_anthropic');
  });

  it('waits what retry-after says (seconds) after a 429 and then succeeds', async () => {
    server.script({
      status: 429,
      headers: { 'retry-after': '2' },
      body: { error: { message: 'slow down' } },
    });
    server.script({ body: { ok: 1 } });
    const { transport: http, delays } = transport();
    const response = await http.postJson(post());
    expect(response.attempts).toBe(2);
    expect(delays).toEqual([2000]);
    expect(server.requests).toHaveLength(2);
  });

  it('honours retry-after as an HTTP date and retry-after-ms', async () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    server.script({ status: 503, headers: { 'retry-after': 'Wed, 01 Jan 2025 00:00:07 GMT' } });
    server.script({ status: 429, headers: { 'retry-after-ms': '1500', 'retry-after': '9' } });
    server.script({ body: {} });
    const { transport: http, delays } = transport({ now: () => now });
    await http.postJson(post());
    expect(delays).toEqual([7000, 1500]);
  });

  it('caps retry-after at maxRetryAfterMs', async () => {
    server.script({ status: 429, headers: { 'retry-after': '3600' } }, { body: {} });
    const { transport: http, delays } = transport({ maxRetryAfterMs: 5000 });
    await http.postJson(post());
    expect(delays).toEqual([5000]);
  });

  it('retries a 500 with exponential backoff and jitter, then succeeds', async () => {
    server.script({ status: 500 }, { status: 502 }, { body: { done: true } });
    const { transport: http, delays } = transport({ initialBackoffMs: 100, random: () => 0.5 });
    const response = await http.postJson(post());
    expect(response.body).toEqual({ done: true });
    // ceiling 100 then 200; half fixed plus half of the ceiling times the jitter draw.
    expect(delays).toEqual([75, 150]);
  });

  it('gives up after maxAttempts with the last failure', async () => {
    server.script({ status: 503 }, { status: 503 }, { status: 503, headers: { 'x-request-id': 'last' } });
    const { transport: http, delays } = transport();
    const error = await failure(http.postJson(post()));
    expect(error).toMatchObject({
      code: 'provider-error',
      kind: 'http-status',
      status: 503,
      retryable: true,
      attempts: 3,
      requestId: 'last',
    });
    expect(delays).toHaveLength(2);
    expect(server.requests).toHaveLength(3);
  });

  it.each([400, 401, 403, 404])('does not retry HTTP %i', async (status) => {
    server.script({
      status,
      body: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } },
      headers: { 'request-id': 'req-x' },
    });
    const error = await failure(transport().transport.postJson(post()));
    expect(error).toMatchObject({
      kind: 'http-status',
      status,
      retryable: false,
      attempts: 1,
      requestId: 'req-x',
    });
    expect(error.message).toContain(`HTTP ${status}`);
    expect(error.message).toContain('invalid x-api-key (authentication_error)');
    expect(error.bodyExcerpt).toContain('invalid x-api-key');
    expect(server.requests).toHaveLength(1);
  });

  it('follows x-should-retry over the status', async () => {
    server.script({ status: 500, headers: { 'x-should-retry': 'false' } });
    const error = await failure(transport().transport.postJson(post()));
    expect(error.retryable).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it('times out a server that never answers, naming the timeout, and retries it', async () => {
    server.script({ hang: true }, { hang: true });
    const { transport: http } = transport({ maxAttempts: 2 });
    const started = Date.now();
    const error = await failure(http.postJson(post('/endpoint', { timeoutMs: 150 })));
    expect(Date.now() - started).toBeLessThan(5000);
    expect(error).toMatchObject({ kind: 'timeout', retryable: true, attempts: 2 });
    expect(error.message).toContain('150 ms (timeoutMs)');
    expect(server.requests).toHaveLength(2);
  });

  it('times out a body that never finishes', async () => {
    server.script({ hangAfterHeaders: true, body: { long: 'x'.repeat(100) } });
    const error = await failure(transport({ maxAttempts: 1, timeoutMs: 150 }).transport.postJson(post()));
    expect(error).toMatchObject({ kind: 'timeout', retryable: true, status: 200 });
  });

  it('reports an unreachable endpoint as a retryable network error', async () => {
    const closed = await startLoopbackServer();
    const url = closed.url;
    await closed.close();
    const { transport: http, delays } = transport({ maxAttempts: 2 });
    const error = await failure(http.postJson({ url, headers: {}, body: {} }));
    expect(error).toMatchObject({ kind: 'network', retryable: true, attempts: 2, status: undefined });
    expect(error.message).toContain(url);
    expect(delays).toHaveLength(1);
  });

  it('does not retry a 2xx body that is not JSON', async () => {
    server.script({ rawBody: '<html>proxy error</html>' }, { body: {} });
    const error = await failure(transport().transport.postJson(post()));
    expect(error).toMatchObject({ kind: 'invalid-response', retryable: false, status: 200 });
    expect(error.bodyExcerpt).toBe('<html>proxy error</html>');
    expect(server.requests).toHaveLength(1);
  });

  it('sends nothing when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(
      transport().transport.postJson(post('/x', { abortSignal: controller.signal })),
    ).rejects.toThrow('stop');
    expect(server.requests).toHaveLength(0);
  });

  it('aborts a request in flight at once, without retrying', async () => {
    server.script({ hang: true }, { body: {} });
    const controller = new AbortController();
    const started = Date.now();
    const pending = transport().transport.postJson(post('/x', { abortSignal: controller.signal }));
    setTimeout(() => controller.abort(), 50);
    const error = await pending.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect((error as Error).name).toBe('AbortError');
    expect(isProviderError(error)).toBe(false);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(server.requests).toHaveLength(1);
  });

  it('aborts while waiting out a retry-after', async () => {
    server.script({ status: 429, headers: { 'retry-after': '20' } });
    const controller = new AbortController();
    // The real sleep: the abort must cut a 20 s wait short.
    const http = createHttpTransport({ provider: 'test' });
    const started = Date.now();
    const pending = http.postJson(post('/x', { abortSignal: controller.signal }));
    setTimeout(() => controller.abort(new Error('user cancelled')), 100);
    await expect(pending).rejects.toThrow('user cancelled');
    expect(Date.now() - started).toBeLessThan(5000);
    expect(server.requests).toHaveLength(1);
  });

  it('refuses bad options, naming them', () => {
    expect(() => createHttpTransport({ provider: 'test', maxAttempts: 0 })).toThrow(InvalidArgumentError);
    expect(() => createHttpTransport({ provider: 'test', timeoutMs: -1 })).toThrow('timeoutMs');
    expect(() => createHttpTransport({ provider: 'test', maxRetryAfterMs: Number.NaN })).toThrow(
      'maxRetryAfterMs',
    );
  });
});

describe('callLimits', () => {
  it("passes a request's abort signal and timeout on, leaving absent ones out", () => {
    const abortSignal = new AbortController().signal;
    expect(callLimits({ abortSignal, timeoutMs: 50 })).toEqual({ abortSignal, timeoutMs: 50 });
    const none = callLimits({ abortSignal: undefined, timeoutMs: undefined });
    expect(Object.keys(none)).toEqual([]);
    expect(Object.keys(callLimits({ timeoutMs: 5 }))).toEqual(['timeoutMs']);
  });
});

describe('isRetryableStatus', () => {
  it('retries 408, 409, 429 and 5xx only', () => {
    const retried = [200, 400, 401, 403, 404, 408, 409, 422, 429, 500, 503, 529].filter(isRetryableStatus);
    expect(retried).toEqual([408, 409, 429, 500, 503, 529]);
  });
});

describe('parseRetryAfter', () => {
  it('reads whole and fractional seconds', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 0, max: 9 }), (seconds, tenths) => {
        const headers = new Headers({ 'retry-after': `${seconds}.${tenths}` });
        expect(parseRetryAfter(headers, 0)).toBeCloseTo(seconds * 1000 + tenths * 100, 6);
      }),
    );
  });

  it('reads HTTP dates relative to now, never negative', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1_000_000_000, max: 2_000_000_000 }),
        fc.integer({ min: -3600, max: 3600 }),
        (nowSeconds, offsetSeconds) => {
          const now = nowSeconds * 1000;
          const headers = new Headers({ 'retry-after': new Date(now + offsetSeconds * 1000).toUTCString() });
          expect(parseRetryAfter(headers, now)).toBe(Math.max(0, offsetSeconds * 1000));
        },
      ),
    );
  });

  it('ignores what it cannot read', () => {
    expect(parseRetryAfter(new Headers(), 0)).toBeUndefined();
    expect(parseRetryAfter(new Headers({ 'retry-after': 'soon' }), 0)).toBeUndefined();
    expect(parseRetryAfter(new Headers({ 'retry-after': '-5' }), 0)).toBeUndefined();
  });
});
