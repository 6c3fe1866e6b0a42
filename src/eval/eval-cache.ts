import { appendFileSync, readFileSync, truncateSync } from 'node:fs';
import { InvalidJsonError, PrecisError } from '../errors/index.js';
import { hashText } from '../internal/hash.js';
import { stableStringify } from '../internal/stable-json.js';
import type { Conversation, JSONValue } from '../messages/types.js';
import type { EvalBudget } from './run-eval.js';

/** What a cached score depends on: change any of them and the entry no longer applies. */
export interface EvalCacheKeyParts {
  /** The session's content (not its file name): an edited transcript is a different session. */
  session: Conversation;
  compressor: string;
  budget: EvalBudget;
  /** The compression point, 0..1. */
  point: number;
  /** The probe's content: question, reference answer, facts. */
  probe: JSONValue | object;
  /** `Judge.id`: judge model, answerer model, rubric. */
  judge: string;
  /**
   * The compressed context the answer was given from, when known: a compressor whose code changed gives
   * another context, and so another key, even under the same name.
   */
  context?: string;
}

/** A content hash of everything a judge score depends on. */
export function evalCacheKey(parts: EvalCacheKeyParts): string {
  const { session, compressor, budget, point, probe, judge, context } = parts;
  return hashText(
    stableStringify({
      session: hashText(stableStringify(session), 32),
      compressor,
      budget,
      point,
      probe,
      judge,
      context: context === undefined ? null : hashText(context, 32),
    }),
    32,
  );
}

export interface EvalCache {
  get(key: string): JSONValue | undefined;
  /** Stores and appends to the file at once, so an interrupted run keeps what it has scored. */
  set(key: string, value: JSONValue): void;
  readonly size: number;
}

export interface CreateEvalCacheOptions {
  /** A JSON-lines file, one `{"key": …, "value": …}` per line. Created on the first `set`. */
  path: string;
}

/**
 * A cache of scored probes in a JSON-lines file, so a re-run skips what was already scored. Appending one
 * line per entry keeps writes cheap and crash-safe: a last line cut off by a crash is ignored on load and cut
 * away on the next write; a later entry with the same key wins.
 *
 * @throws InvalidJsonError naming the file and line of a malformed entry (other than a cut-off last line)
 * @throws PrecisError `io-error` when the file exists and cannot be read
 */
export function createEvalCache(options: CreateEvalCacheOptions): EvalCache {
  const { path } = options;
  const entries = new Map<string, JSONValue>();
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new PrecisError('io-error', `${path}: ${(error as Error).message}`, { cause: error });
  }
  const lines = text.split('\n');
  const complete = text.endsWith('\n') || text === '';
  lines.forEach((line, index) => {
    if (line.trim() === '') return;
    const last = index === lines.length - 1;
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch (error) {
      // The last line without a newline is a write a crash interrupted.
      if (last && !complete) return;
      throw new InvalidJsonError(`not a cache entry: ${(error as Error).message}`, {
        file: path,
        line: index + 1,
      });
    }
    if (
      typeof entry !== 'object' ||
      entry === null ||
      typeof (entry as { key?: unknown }).key !== 'string' ||
      !('value' in entry)
    )
      throw new InvalidJsonError('expected {"key": string, "value": …}', { file: path, line: index + 1 });
    const { key, value } = entry as { key: string; value: JSONValue };
    entries.set(key, value);
  });
  // A cut-off last line is cut away before the next write, so it cannot glue itself to that entry.
  let cutOffAt = complete ? undefined : Buffer.byteLength(text.slice(0, text.lastIndexOf('\n') + 1));

  return {
    get: (key) => entries.get(key),
    set(key, value) {
      try {
        if (cutOffAt !== undefined) truncateSync(path, cutOffAt);
        appendFileSync(path, `${JSON.stringify({ key, value })}\n`);
      } catch (error) {
        throw new PrecisError('io-error', `${path}: ${(error as Error).message}`, { cause: error });
      }
      cutOffAt = undefined;
      entries.set(key, value);
    },
    get size() {
      return entries.size;
    },
  };
}
