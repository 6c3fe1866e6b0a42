import { hashText } from '../internal/hash.js';
import { stableStringify } from '../internal/stable-json.js';
import type { JSONValue, Message } from '../messages/types.js';

/**
 * Where originals go when a strategy stubs, summarizes or drops something, so nothing is ever lost: each is
 * stored under a content-addressed handle that an agent (or a person) can expand back to the exact original.
 * Synchronous on purpose: strategies are pure, synchronous functions, and both stores (memory, SQLite) are.
 */
export interface ArchiveEntry {
  /** `h-` + a content hash: the same original always gets the same handle. */
  handle: string;
  /** What was archived: whole messages, one tool output, a text span. */
  kind: 'messages' | 'tool-output' | 'text';
  /** The original, byte-identical once serialised. */
  content: JSONValue | Message[];
  /** Ids of the messages it came from. */
  messageIds: string[];
  /** The strategy that archived it. */
  strategy: string;
}

export interface ArchiveStore {
  /** Stores an original (idempotent: putting the same content again returns the same handle). */
  put(entry: Omit<ArchiveEntry, 'handle'>): string;
  get(handle: string): ArchiveEntry | undefined;
  has(handle: string): boolean;
}

/** The handle of an original: depends on its kind and content only. */
export function archiveHandle(kind: ArchiveEntry['kind'], content: ArchiveEntry['content']): string {
  return `h-${hashText(`${kind}\u0000${stableStringify(content)}`, 20)}`;
}

/** An in-memory archive for library use and tests. */
export function createMemoryArchive(): ArchiveStore & { readonly size: number } {
  const entries = new Map<string, ArchiveEntry>();
  return {
    put(entry) {
      const handle = archiveHandle(entry.kind, entry.content);
      if (!entries.has(handle)) entries.set(handle, { ...entry, handle });
      return handle;
    },
    get: (handle) => entries.get(handle),
    has: (handle) => entries.has(handle),
    get size() {
      return entries.size;
    },
  };
}
