import { describe, expect, it } from 'vitest';
import { isPrecisError, PrecisError } from '../errors/index.js';
import { isProviderError, ProviderError } from './provider-error.js';

describe('ProviderError', () => {
  it('is a PrecisError with code provider-error and typed fields', () => {
    const cause = new Error('socket hang up');
    const error = new ProviderError(
      'HTTP 503',
      {
        provider: 'openai',
        kind: 'http-status',
        retryable: true,
        status: 503,
        requestId: 'req-1',
        attempts: 3,
      },
      { cause },
    );
    expect(isPrecisError(error)).toBe(true);
    expect(error.code).toBe('provider-error');
    expect(error.message).toBe('openai: HTTP 503');
    expect(error.name).toBe('ProviderError');
    expect(error).toMatchObject({
      status: 503,
      retryable: true,
      requestId: 'req-1',
      attempts: 3,
      issues: [],
    });
    expect(error.bodyExcerpt).toBeUndefined();
    expect(error.cause).toBe(cause);
  });

  it('is told apart from other errors, including plain provider-error PrecisErrors', () => {
    const error = new ProviderError('x', { provider: 'p', kind: 'timeout', retryable: true });
    expect(isProviderError(error)).toBe(true);
    expect(ProviderError.isInstance(error)).toBe(true);
    expect(isProviderError(new PrecisError('provider-error', 'scripted'))).toBe(false);
    expect(isProviderError(new Error('x'))).toBe(false);
    expect(isProviderError(null)).toBe(false);
  });
});
