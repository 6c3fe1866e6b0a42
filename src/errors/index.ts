export {
  describeLocation,
  type InputLocation,
  InvalidArgumentError,
  InvalidJsonError,
  InvalidMessageError,
  TranscriptImportError,
  UnknownModelError,
} from './input-errors.js';
export {
  errorCodes,
  isPrecisError,
  PrecisError,
  type PrecisErrorCode,
  type PrecisErrorOptions,
} from './precis-error.js';
