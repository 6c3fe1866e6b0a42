/**
 * Every error precis throws is a `PrecisError` with a `code` from this closed list, so callers (and the CLI)
 * can branch on `error.code` without string-matching messages.
 */
export const errorCodes = [
  'invalid-argument',
  'invalid-json',
  'invalid-message',
  'unsupported-format',
  'unknown-model',
  'invalid-conversation',
  'invalid-transcript',
  'io-error',
  'provider-error',
  'budget-exceeded',
] as const;

export type PrecisErrorCode = (typeof errorCodes)[number];

const brand = Symbol.for('precis.error');

export interface PrecisErrorOptions {
  cause?: unknown;
}

export class PrecisError extends Error {
  readonly code: PrecisErrorCode;
  /** Brand read by `isInstance`; a symbol so it never clashes with user fields. */
  readonly [brand] = true;

  constructor(code: PrecisErrorCode, message: string, options: PrecisErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'PrecisError';
    this.code = code;
  }

  /** Brand check that survives duplicated module copies, unlike `instanceof`. */
  static isInstance(error: unknown): error is PrecisError {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[brand] === true;
  }
}

export function isPrecisError(error: unknown): error is PrecisError {
  return PrecisError.isInstance(error);
}
