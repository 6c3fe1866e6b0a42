import { PrecisError, type PrecisErrorOptions } from '../errors/index.js';

/**
 * What went wrong with a provider call:
 * - `http-status`: the endpoint answered with a non-2xx status;
 * - `timeout`: no complete answer within `timeoutMs`;
 * - `network`: the request did not reach the endpoint or the connection broke;
 * - `invalid-response`: a 2xx answer that is not the wire format (not JSON, no choices, ...);
 * - `invalid-output`: a well-formed answer whose content is unusable (no text, or JSON that does not parse or
 *   does not match the requested schema), so callers can fall back.
 */
export const providerErrorKinds = [
  'http-status',
  'timeout',
  'network',
  'invalid-response',
  'invalid-output',
] as const;
export type ProviderErrorKind = (typeof providerErrorKinds)[number];

export interface ProviderErrorDetails {
  /** Provider of the client that failed, e.g. `openai`, `anthropic`, `openai-compatible`. */
  provider: string;
  kind: ProviderErrorKind;
  /** Whether the same request may succeed when sent again. */
  retryable: boolean;
  /** HTTP status, when there was a response. */
  status?: number;
  /** The provider's request id (`x-request-id` / `request-id` header), for support tickets. */
  requestId?: string;
  /** The start of the response body, for diagnosis. */
  bodyExcerpt?: string;
  /** How many HTTP attempts were made before giving up. */
  attempts?: number;
  /** For `invalid-output`: what is wrong with the output, one entry per problem. */
  issues?: readonly string[];
}

const providerBrand = Symbol.for('precis.provider-error');

/** A provider call that failed. Carries what a caller needs to decide between retrying, falling back and giving up. */
export class ProviderError extends PrecisError {
  readonly provider: string;
  readonly kind: ProviderErrorKind;
  readonly retryable: boolean;
  readonly status: number | undefined;
  readonly requestId: string | undefined;
  readonly bodyExcerpt: string | undefined;
  readonly attempts: number | undefined;
  readonly issues: readonly string[];
  /** Brand read by `isProviderError`; a symbol so it survives duplicated module copies. */
  readonly [providerBrand] = true;

  constructor(message: string, details: ProviderErrorDetails, options: PrecisErrorOptions = {}) {
    super('provider-error', `${details.provider}: ${message}`, options);
    this.name = 'ProviderError';
    this.provider = details.provider;
    this.kind = details.kind;
    this.retryable = details.retryable;
    this.status = details.status;
    this.requestId = details.requestId;
    this.bodyExcerpt = details.bodyExcerpt;
    this.attempts = details.attempts;
    this.issues = details.issues ?? [];
  }

  static override isInstance(error: unknown): error is ProviderError {
    return (
      typeof error === 'object' &&
      error !== null &&
      (error as Record<symbol, unknown>)[providerBrand] === true
    );
  }
}

export function isProviderError(error: unknown): error is ProviderError {
  return ProviderError.isInstance(error);
}
