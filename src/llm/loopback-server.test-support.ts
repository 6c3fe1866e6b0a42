/**
 * A real HTTP server on 127.0.0.1 for the adapter tests: it answers from a script and records every request,
 * so tests can assert both what the adapters send and how they handle each kind of reply.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { isProviderError, type ProviderError } from './provider-error.js';

export interface ScriptedReply {
  /** @default 200 */
  status?: number;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as is, instead of `body`. */
  rawBody?: string;
  /** Never answer at all. */
  hang?: boolean;
  /** Send status and headers, then never finish the body. */
  hangAfterHeaders?: boolean;
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The body parsed as JSON (undefined when it is not JSON). */
  body: unknown;
}

export interface LoopbackServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  requests: ReceivedRequest[];
  /** Queues replies, answered in order; an exhausted script answers 418 so the test fails loudly. */
  script(...replies: ScriptedReply[]): void;
  /** Forgets recorded requests and unused replies. */
  reset(): void;
  close(): Promise<void>;
}

export async function startLoopbackServer(): Promise<LoopbackServer> {
  const requests: ReceivedRequest[] = [];
  const replies: ScriptedReply[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      requests.push({
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        body,
      });
      answer(response, replies.shift());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    script: (...more) => {
      replies.push(...more);
    },
    reset: () => {
      requests.length = 0;
      replies.length = 0;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The loopback server of a test file (or of the `describe` block it is called in): started before its tests,
 * reset before each test, closed after them. The handle reads through to the running server.
 */
export function useLoopbackServer(): LoopbackServer {
  let running: LoopbackServer | undefined;
  beforeAll(async () => {
    running = await startLoopbackServer();
  });
  afterAll(() => running?.close());
  beforeEach(() => {
    running?.reset();
  });
  const server = (): LoopbackServer => {
    if (running === undefined)
      throw new Error('the loopback server runs only while the tests that use it run');
    return running;
  };
  return {
    get url() {
      return server().url;
    },
    get requests() {
      return server().requests;
    },
    script: (...replies) => server().script(...replies),
    reset: () => server().reset(),
    close: () => server().close(),
  };
}

/** The `ProviderError` the promise rejects with; anything else (a success, another error) fails the test. */
export async function providerFailure(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!isProviderError(error)) throw new Error(`expected a ProviderError, got ${String(error)}`);
  return error;
}

function answer(response: ServerResponse, reply: ScriptedReply | undefined): void {
  if (reply === undefined) {
    response.writeHead(418, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: { message: 'the test script has no reply for this request' } }));
    return;
  }
  if (reply.hang === true) return;
  const text = reply.rawBody ?? (reply.body === undefined ? '' : JSON.stringify(reply.body));
  response.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
  if (reply.hangAfterHeaders === true) {
    response.write(text.slice(0, 10));
    return;
  }
  response.end(text);
}

/** A Chat Completions reply body. */
export function openAIReply(
  text: string | null,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    model: 'test-model-2024',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
    ...extra,
  };
}

/** A Messages API reply body. */
export function anthropicReply(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-test',
    content: text === '' ? [] : [{ type: 'text', text }],
    stop_reason: 'end_turn',
    usage: { input_tokens: 20, output_tokens: 7 },
    ...extra,
  };
}

/** An injectable sleep that records the delays asked for and returns at once. */
export function recordingSleep(): { sleep: (delayMs: number) => Promise<void>; delays: number[] } {
  const delays: number[] = [];
  return {
    delays,
    sleep: async (delayMs) => {
      delays.push(delayMs);
    },
  };
}
