import { hashText } from '../internal/hash.js';
import { stableKey } from '../internal/stable-key.js';
import type { IdentifiedMessage, Message } from './types.js';

/** Hash of what a message says: role, content and provider options. Ids and metadata do not count. */
export function messageContentHash(message: Message): string {
  return hashText(
    stableKey({
      role: message.role,
      content: message.content,
      providerOptions: message.providerOptions,
    }),
  );
}

/**
 * Gives every message an id. A given id is kept. Otherwise the id is derived from the content hash and the
 * number of earlier messages with the same content, so it does not depend on unrelated messages before it:
 * the same append-only conversation yields the same ids every time it is passed in, and dropping one message
 * does not renumber the others. Ids that would collide with a given id get a numeric suffix.
 */
export function assignIds(messages: readonly Message[]): IdentifiedMessage[] {
  const seen = new Map<string, number>();
  const taken = new Set<string>();
  for (const message of messages) if (message.id !== undefined) taken.add(message.id);
  return messages.map((message) => {
    if (message.id !== undefined) return message as IdentifiedMessage;
    const id = derivedMessageId(message, seen, taken);
    taken.add(id);
    return { ...message, id };
  });
}

/**
 * The id `assignIds` gives a message without one: content hash plus its occurrence count so far (`occurrences`
 * is updated), with a suffix when that would collide with a `taken` id. For callers that assign ids one
 * message at a time, as `assignIds` does for a whole list; the caller records the id in `taken`.
 */
export function derivedMessageId(
  message: Message,
  occurrences: Map<string, number>,
  taken: ReadonlySet<string>,
): string {
  const hash = messageContentHash(message);
  const occurrence = occurrences.get(hash) ?? 0;
  occurrences.set(hash, occurrence + 1);
  let id = occurrence === 0 ? `m-${hash}` : `m-${hash}-${occurrence}`;
  for (let suffix = 1; taken.has(id); suffix++) id = `m-${hash}-${occurrence}x${suffix}`;
  return id;
}

/** The messages without precis' own fields, ready for the AI SDK or any `ModelMessage` consumer. */
export function stripPrecisFields(messages: readonly Message[]): Message[] {
  return messages.map(({ id: _id, metadata: _metadata, ...rest }) => rest as Message);
}
