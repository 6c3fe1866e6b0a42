import { createHash } from 'node:crypto';
import { InvalidArgumentError } from '../errors/index.js';
import { stableKey } from '../internal/stable-key.js';
import type { JSONValue, Message } from '../messages/types.js';

/**
 * Where originals go when a strategy stubs, summarizes or drops something, so nothing is ever lost: each is
 * stored under a content-addressed handle that an agent (or a person) can expand back to the exact original.
 * Synchronous on purpose: strategies are pure, synchronous functions, and both stores (memory, SQLite) are.
 */
export interface ArchiveEntry {
  /** `h-` + a content hash: the same original always gets the same handle. */
  handle: string;
  /**
   * What was archived: whole messages, one tool output, a text span, or an index: the handles of several
   * archived originals (a summary's folded spans and the outputs stubbed inside them), so one handle reaches all.
   */
  kind: 'messages' | 'tool-output' | 'text' | 'index';
  /** The original, byte-identical once serialised; an index's handles, oldest first. */
  content: JSONValue | Message[];
  /** Ids of the messages it came from. */
  messageIds: string[];
  /** The strategy that archived it. */
  strategy: string;
}

export interface ArchiveStore {
  /**
   * Stores an original. Idempotent: putting the same content again returns the same handle and keeps the first
   * kind, strategy and content, but adds the message ids the entry did not list yet (the same text archived
   * from a re-sent task and from its first copy names both messages).
   */
  put(entry: Omit<ArchiveEntry, 'handle'>): string;
  get(handle: string): ArchiveEntry | undefined;
  has(handle: string): boolean;
}

/** Hex digits of a content hash in a handle. */
const handleHexChars = 20;

/** Handles as `archiveHandle` makes them, to find them inside text (a stub, a note, what an agent passes). */
export const handlePattern = new RegExp(`h-[0-9a-f]{${handleHexChars}}`, 'g');
/** A string that is one handle and nothing else. */
const wholeHandle = new RegExp(`^${handlePattern.source}$`);

/** The handle of an original: depends on its kind and content only. */
export function archiveHandle(kind: ArchiveEntry['kind'], content: ArchiveEntry['content']): string {
  const first: unknown = Array.isArray(content) ? content[0] : undefined;
  if (typeof first !== 'object' || first === null) {
    if (typeof content !== 'object' || content === null || Array.isArray(content))
      return contentHandle(kind, content);
    // One object (a tool output): a strategy names the handle in its stub, then puts the same object.
    let known = objectHandles.get(content);
    if (known === undefined) {
      known = new Map();
      objectHandles.set(content, known);
    }
    let handle = known.get(kind);
    if (handle === undefined) {
      handle = contentHandle(kind, content);
      known.set(kind, handle);
    }
    return handle;
  }
  // The same span (the same message objects) is handled again by the marker, the archive and every fold round.
  const items = content as readonly unknown[];
  let known = spanHandles.get(first);
  if (known === undefined) {
    known = [];
    spanHandles.set(first, known);
  }
  const match = known.find(
    (span) =>
      span.kind === kind &&
      span.items.length === items.length &&
      span.items.every((item, index) => items[index] === item),
  );
  if (match !== undefined) return match.handle;
  const handle = contentHandle(kind, content);
  if (known.length >= maxSpansPerFirstItem) known.shift();
  known.push({ kind, items: [...items], handle });
  return handle;
}

/** Handles of single archived objects, by kind (originals are never changed in place once they exist). */
const objectHandles = new WeakMap<object, Map<ArchiveEntry['kind'], string>>();

/** Handles of message spans by their first message, with the exact items each was made from. */
const spanHandles = new WeakMap<
  object,
  Array<{ kind: ArchiveEntry['kind']; items: readonly unknown[]; handle: string }>
>();
/** Spans remembered per first message: a fold tries a few span lengths from the same start. */
const maxSpansPerFirstItem = 8;

/**
 * Keys of archived messages: spans that grow by a few turns per fold round are archived again and again, and
 * messages are never changed in place once they exist, so each is keyed once.
 */
const messageKeys = new WeakMap<object, string>();

/**
 * `h-` + the first 20 hex digits of the SHA-256 of `kind`, a NUL and the content's `stableKey`. A message array's
 * key is its items' keys in brackets: each item is keyed once and fed to the hash in turn, rather than joined
 * into one long string first.
 */
function contentHandle(kind: ArchiveEntry['kind'], content: ArchiveEntry['content']): string {
  const hash = createHash('sha256').update(`${kind}\u0000`);
  if (!Array.isArray(content)) hash.update(stableKey(content));
  else {
    hash.update('[');
    for (const item of content as readonly unknown[]) hash.update(itemKey(item));
    hash.update(']');
  }
  return `h-${hash.digest('hex').slice(0, handleHexChars)}`;
}

function itemKey(item: unknown): string {
  if (typeof item !== 'object' || item === null) return stableKey(item);
  let key = messageKeys.get(item);
  if (key === undefined) {
    key = stableKey(item);
    messageKeys.set(item, key);
  }
  return key;
}

/**
 * The message ids of an entry put again: `known` followed by those of `added` it lacks, in order; `undefined`
 * when it lacks none (the usual case: strategies put the same original from the same messages on every pass).
 */
export function mergedMessageIds(known: readonly string[], added: readonly string[]): string[] | undefined {
  if (added.length <= known.length && added.every((id, index) => known[index] === id)) return undefined;
  const seen = new Set(known);
  const merged = [...known];
  for (const id of added) {
    if (seen.has(id)) continue;
    seen.add(id);
    merged.push(id);
  }
  return merged.length === known.length ? undefined : merged;
}

/**
 * The one handle that reaches all of `handles`: the handle itself when there is one, otherwise that of an index
 * entry listing them (`undefined` when there are none). `putIndex` stores that entry.
 */
export function indexHandleOf(handles: readonly string[]): string | undefined {
  return handles.length <= 1 ? handles[0] : archiveHandle('index', [...handles]);
}

/** `indexHandleOf(handles)`, with the index entry stored when there is one. */
export function putIndex(
  archive: ArchiveStore,
  handles: readonly string[],
  from: Pick<ArchiveEntry, 'messageIds' | 'strategy'>,
): string | undefined {
  if (handles.length <= 1) return handles[0];
  return archive.put({ kind: 'index', content: [...handles], ...from });
}

/**
 * Checks an entry's kind, and that an index lists handles.
 * @throws {InvalidArgumentError} naming `kind` or `content`.
 */
export function checkEntryShape(entry: Pick<ArchiveEntry, 'kind' | 'content'>): void {
  const { kind, content } = entry;
  if (!(archiveKinds as readonly unknown[]).includes(kind)) {
    throw new InvalidArgumentError('kind', `must be one of ${archiveKinds.join(', ')}, got ${String(kind)}`);
  }
  if (kind !== 'index') return;
  if (
    !Array.isArray(content) ||
    content.length === 0 ||
    !content.every((item) => typeof item === 'string' && wholeHandle.test(item))
  ) {
    throw new InvalidArgumentError(
      'content',
      'of an index must be a non-empty array of handles ("h-" and 20 hex digits)',
    );
  }
}

export const archiveKinds = [
  'messages',
  'tool-output',
  'text',
  'index',
] as const satisfies readonly ArchiveEntry['kind'][];

/** An in-memory archive for library use and tests. */
export function createMemoryArchive(): ArchiveStore & { readonly size: number } {
  const entries = new Map<string, ArchiveEntry>();
  return {
    put(entry) {
      checkEntryShape(entry);
      const handle = archiveHandle(entry.kind, entry.content);
      const known = entries.get(handle);
      if (known === undefined) entries.set(handle, { ...entry, messageIds: [...entry.messageIds], handle });
      else {
        const messageIds = mergedMessageIds(known.messageIds, entry.messageIds);
        // A new entry object: one that a caller got earlier does not change under it.
        if (messageIds !== undefined) entries.set(handle, { ...known, messageIds });
      }
      return handle;
    },
    get: (handle) => entries.get(handle),
    has: (handle) => entries.has(handle),
    get size() {
      return entries.size;
    },
  };
}
