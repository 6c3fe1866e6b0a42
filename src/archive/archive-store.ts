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
  const first: unknown = Array.isArray(content) ? content[0] : undefined;
  if (typeof first !== 'object' || first === null) {
    if (typeof content !== 'object' || content === null || Array.isArray(content))
      return `h-${hashText(`${kind}\u0000${serialise(content)}`, 20)}`;
    // One object (a tool output): a strategy names the handle in its stub, then puts the same object.
    let known = objectHandles.get(content);
    if (known === undefined) {
      known = new Map();
      objectHandles.set(content, known);
    }
    let handle = known.get(kind);
    if (handle === undefined) {
      handle = `h-${hashText(`${kind}\u0000${serialise(content)}`, 20)}`;
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
  const handle = `h-${hashText(`${kind}\u0000${serialise(content)}`, 20)}`;
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
 * Serialisations of archived messages: spans that grow by a few turns per fold round are archived again and
 * again, and messages are never changed in place once they exist, so each is serialised once.
 */
const serialisedMessages = new WeakMap<object, string>();

/**
 * `stableStringify(content)`, with the items of a message array serialised once each: the stable JSON of an
 * array is its items' stable JSON joined by commas in brackets.
 */
function serialise(content: ArchiveEntry['content']): string {
  if (!Array.isArray(content)) return stableStringify(content);
  const items = content.map((item: unknown) => {
    if (typeof item !== 'object' || item === null) return stableStringify(item);
    let text = serialisedMessages.get(item);
    if (text === undefined) {
      text = stableStringify(item);
      serialisedMessages.set(item, text);
    }
    return text;
  });
  return `[${items.join(',')}]`;
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
