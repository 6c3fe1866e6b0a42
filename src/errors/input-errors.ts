import { PrecisError, type PrecisErrorOptions } from './precis-error.js';

/** Where in the input a problem sits. Every field is optional because not every source has lines. */
export interface InputLocation {
  /** The file the input came from, when it came from one. */
  file?: string;
  /** Index of the message (or record) in the input array. */
  index?: number;
  /** Path of the offending field inside that message, e.g. `content[2].toolCallId`. */
  path?: string;
  /** Index of the record in a transcript (a JSON array entry, a markdown section). */
  record?: number;
  /** 1-based line and column in the file. */
  line?: number;
  column?: number;
}

export function describeLocation(location: InputLocation): string {
  const parts: string[] = [];
  if (location.file !== undefined) {
    let where = location.file;
    if (location.line !== undefined) where += `:${location.line}`;
    if (location.column !== undefined) where += `:${location.column}`;
    parts.push(where);
  } else if (location.line !== undefined) {
    parts.push(`line ${location.line}${location.column === undefined ? '' : `, column ${location.column}`}`);
  }
  if (location.record !== undefined) parts.push(`record ${location.record}`);
  if (location.index !== undefined) parts.push(`message ${location.index}`);
  if (location.path !== undefined && location.path !== '') parts.push(`field ${location.path}`);
  return parts.join(', ');
}

function withLocation(message: string, location: InputLocation): string {
  const where = describeLocation(location);
  return where === '' ? message : `${where}: ${message}`;
}

/** A message (or part of one) that does not have the shape precis accepts. */
export class InvalidMessageError extends PrecisError {
  readonly file: string | undefined;
  readonly index: number | undefined;
  readonly path: string | undefined;
  readonly reason: string;

  constructor(reason: string, location: InputLocation = {}, options: PrecisErrorOptions = {}) {
    super('invalid-message', withLocation(reason, location), options);
    this.name = 'InvalidMessageError';
    this.reason = reason;
    this.file = location.file;
    this.index = location.index;
    this.path = location.path;
  }
}

/** Text that should have been JSON (or JSONL) and is not. */
export class InvalidJsonError extends PrecisError {
  readonly file: string | undefined;
  readonly line: number | undefined;
  readonly column: number | undefined;

  constructor(reason: string, location: InputLocation = {}, options: PrecisErrorOptions = {}) {
    super('invalid-json', withLocation(reason, location), options);
    this.name = 'InvalidJsonError';
    this.file = location.file;
    this.line = location.line;
    this.column = location.column;
  }
}

/** An option that is missing, out of range or of the wrong type. Names the option. */
export class InvalidArgumentError extends PrecisError {
  readonly option: string;

  constructor(option: string, reason: string, options: PrecisErrorOptions = {}) {
    super('invalid-argument', `${option}: ${reason}`, options);
    this.name = 'InvalidArgumentError';
    this.option = option;
  }
}

/** A model name the registry does not know, used where a context window is needed. */
export class UnknownModelError extends PrecisError {
  readonly model: string;

  constructor(model: string, hint = 'pass an explicit context window') {
    super('unknown-model', `unknown model "${model}": ${hint}`);
    this.name = 'UnknownModelError';
    this.model = model;
  }
}

/** A transcript record that cannot be read: names the file and the line or record. */
export class TranscriptImportError extends PrecisError {
  readonly file: string | undefined;
  readonly line: number | undefined;
  readonly record: number | undefined;
  readonly reason: string;

  constructor(reason: string, location: InputLocation = {}, options: PrecisErrorOptions = {}) {
    super('invalid-transcript', withLocation(reason, location), options);
    this.name = 'TranscriptImportError';
    this.reason = reason;
    this.file = location.file;
    this.line = location.line;
    this.record = location.record;
  }
}
