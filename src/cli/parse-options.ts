import { parseArgs } from 'node:util';
import { InvalidArgumentError } from '../errors/index.js';

type OptionSpec = Record<string, { type: 'string' | 'boolean'; short?: string }>;

export interface ParsedOptions<T extends OptionSpec> {
  values: { [K in keyof T]?: T[K]['type'] extends 'boolean' ? boolean : string };
  positionals: string[];
}

/**
 * `node:util.parseArgs` with precis' error style: an unknown option or a missing value becomes an
 * `InvalidArgumentError` naming the option, instead of Node's generic TypeError.
 */
export function parseOptions<const T extends OptionSpec>(argv: string[], options: T): ParsedOptions<T> {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true }) as ParsedOptions<T>;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const option = /'(-{1,2}[\w-]+)/.exec(message)?.[1] ?? 'arguments';
    throw new InvalidArgumentError(option, message.replace(/\.\s*To specify.*$/s, ''), { cause: error });
  }
}

/** Checks a string option against a closed list of values. */
export function oneOf<const T extends string>(
  option: string,
  value: string | undefined,
  allowed: readonly T[],
): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(option, `"${value}" is not one of ${allowed.join(', ')}`);
  }
  return value as T;
}

/** A positive integer option. */
export function positiveInteger(option: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number <= 0)
    throw new InvalidArgumentError(option, `expected a positive integer, got "${value}"`);
  return number;
}
