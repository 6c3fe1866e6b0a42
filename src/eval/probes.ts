import { readFileSync } from 'node:fs';
import { PrecisError } from '../errors/index.js';
import { isRecord } from '../internal/json-shapes.js';
import { parseJsonText } from '../internal/parse-json.js';

/** The four probe types of Factory's study (see `../shared/data/probes/README.md`). */
export const probeTypes = ['recall', 'artifact', 'decision', 'continuation'] as const;
export type ProbeType = (typeof probeTypes)[number];

/** One question about a session, answerable only if enough of its verbatim facts survive compression. */
export interface Probe {
  /** Short id, unique within its file. */
  id: string;
  type: ProbeType;
  question: string;
  /** Reference answer, for an LLM judge or a person. */
  answer: string;
  /** Short verbatim strings of the session; matched whitespace-collapsed and case-sensitive. */
  facts: string[];
  /** How many facts must survive for the probe to pass (`min_facts` in the file). */
  minFacts: number;
  /** 0..1: where the earliest fact first appears in the session (`first_offset` in the file). */
  firstOffset: number;
}

/** A probe file: `<session file name>.probes.json`. */
export interface ProbeFile {
  /** The session's file name. */
  session: string;
  /** Model-visible characters of the session as the probe authors measured them (`content_chars`). */
  contentChars?: number;
  probes: Probe[];
}

/** A probe file whose shape is wrong. Names the file and the field, e.g. `probes[3].min_facts`. */
export class InvalidProbeFileError extends PrecisError {
  readonly file: string | undefined;
  readonly path: string;
  readonly reason: string;

  constructor(reason: string, location: { file?: string | undefined; path: string }) {
    const where = [location.file, location.path === '' ? undefined : `field ${location.path}`]
      .filter((part) => part !== undefined)
      .join(', ');
    // A probe file is input the user names on the command line, like an option value: exit code 2.
    super('invalid-argument', `${where === '' ? '' : `${where}: `}${reason}`);
    this.name = 'InvalidProbeFileError';
    this.file = location.file;
    this.path = location.path;
    this.reason = reason;
  }
}

export interface ParseProbeFileOptions {
  /** Named in errors. */
  file?: string;
}

const describe = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;

/**
 * Checks a parsed probe file against the shared format and returns it typed. Every rule of the format's
 * README is enforced: known type, non-empty facts, `1 <= min_facts <= facts.length`, `0 <= first_offset <= 1`,
 * ids unique within the file.
 *
 * @throws InvalidProbeFileError naming the file and the offending field
 */
export function parseProbeFile(value: unknown, options: ParseProbeFileOptions = {}): ProbeFile {
  const { file } = options;
  const fail = (path: string, reason: string): never => {
    throw new InvalidProbeFileError(reason, { file, path });
  };
  if (!isRecord(value))
    return fail('', `expected an object with "session" and "probes", got ${describe(value)}`);
  const string = (record: Record<string, unknown>, key: string, path: string): string => {
    const field = record[key];
    if (typeof field !== 'string' || field === '')
      return fail(path, `expected a non-empty string, got ${describe(field)}`);
    return field;
  };
  const session = string(value, 'session', 'session');
  const contentChars = value.content_chars;
  if (contentChars !== undefined && (!Number.isInteger(contentChars) || (contentChars as number) < 0))
    fail('content_chars', `expected a non-negative integer, got ${JSON.stringify(contentChars)}`);
  if (!Array.isArray(value.probes)) return fail('probes', `expected an array, got ${describe(value.probes)}`);

  const seen = new Set<string>();
  const probes = value.probes.map((entry: unknown, index): Probe => {
    const at = `probes[${index}]`;
    if (!isRecord(entry)) return fail(at, `expected an object, got ${describe(entry)}`);
    const id = string(entry, 'id', `${at}.id`);
    if (seen.has(id)) fail(`${at}.id`, `duplicate probe id "${id}"`);
    seen.add(id);
    const type = entry.type;
    if (!(probeTypes as readonly unknown[]).includes(type))
      fail(`${at}.type`, `expected one of ${probeTypes.join(', ')}, got ${JSON.stringify(type)}`);
    const facts = entry.facts;
    if (!Array.isArray(facts) || facts.length === 0)
      return fail(`${at}.facts`, `expected a non-empty array of strings, got ${describe(facts)}`);
    facts.forEach((fact: unknown, factIndex) => {
      if (typeof fact !== 'string' || fact.trim() === '')
        fail(`${at}.facts[${factIndex}]`, `expected a non-empty string, got ${describe(fact)}`);
    });
    const minFacts = entry.min_facts;
    if (!Number.isInteger(minFacts) || (minFacts as number) < 1 || (minFacts as number) > facts.length)
      fail(
        `${at}.min_facts`,
        `expected an integer from 1 to ${facts.length}, got ${JSON.stringify(minFacts)}`,
      );
    const firstOffset = entry.first_offset;
    if (typeof firstOffset !== 'number' || !(firstOffset >= 0 && firstOffset <= 1))
      fail(`${at}.first_offset`, `expected a number from 0 to 1, got ${JSON.stringify(firstOffset)}`);
    return {
      id,
      type: type as ProbeType,
      question: string(entry, 'question', `${at}.question`),
      answer: string(entry, 'answer', `${at}.answer`),
      facts: facts as string[],
      minFacts: minFacts as number,
      firstOffset: firstOffset as number,
    };
  });
  return { session, ...(contentChars === undefined ? {} : { contentChars: contentChars as number }), probes };
}

/**
 * Reads and checks a probe file.
 *
 * @throws PrecisError `io-error` when the file cannot be read, InvalidJsonError when it is not JSON,
 *   InvalidProbeFileError when its shape is wrong
 */
export function loadProbeFile(path: string): ProbeFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    throw new PrecisError('io-error', `${path}: ${reason}`, { cause: error });
  }
  return parseProbeFile(parseJsonText(text, { file: path }), { file: path });
}
