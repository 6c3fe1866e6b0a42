/**
 * The AI SDK hands the middleware and `prepareStep` the whole conversation on every step (the middleware gets
 * it rebuilt as new objects each time). Checking and hashing every message of it would cost O(N) hashes per
 * step and O(N²) over an agent loop; this cache compares the prompt with recent ones instead, which needs no
 * serialisation (the rebuilt messages share their strings, which compare in constant time), and checks and
 * hashes only the messages after the longest prefix it shares with one of them.
 */

import { messageContentHash } from '../../messages/ids.js';
import { parseMessages } from '../../messages/parse.js';
import type { Message } from '../../messages/types.js';
import { structurallyEqual } from '../structurally-equal.js';

export interface PromptKeyCacheOptions {
  /** Recent prompts a new one is compared with: one per conversation followed. @default 16 */
  maxPrompts?: number;
}

export interface PromptKeys {
  /** The prompt, checked as `parseMessages` checks it (the same objects). */
  messages: Message[];
  /**
   * A key per message, its content hash (`messageContentHash`): the framework resends the uncompacted
   * history, so content identifies a conversation.
   */
  keys: readonly string[];
}

export interface PromptKeyCacheStats {
  /** Messages checked with `parseMessages`. */
  checkedMessages: number;
  /** Message content hashes computed. */
  hashedMessages: number;
}

export interface PromptKeyCache {
  /**
   * `parseMessages(prompt)` and the content hash of each message, checking and hashing only the messages
   * after the longest prefix the prompt shares with a recent one.
   * @throws InvalidMessageError with the message index and field path, as `parseMessages` does
   */
  read(prompt: unknown): PromptKeys;
  stats(): PromptKeyCacheStats;
}

interface RecentPrompt {
  messages: readonly unknown[];
  keys: readonly string[];
}

function sharedPrefixLength(left: readonly unknown[], right: readonly unknown[]): number {
  const limit = Math.min(left.length, right.length);
  let length = 0;
  while (length < limit && structurallyEqual(left[length], right[length])) length++;
  return length;
}

/**
 * A prompt cache for one integration, shared by its conversations. Treat prompt messages as immutable: a
 * message edited in place after it was read may keep its old key.
 */
export function createPromptKeyCache(options: PromptKeyCacheOptions = {}): PromptKeyCache {
  const { maxPrompts = 16 } = options;
  /** Most recently read first. */
  const recent: RecentPrompt[] = [];
  let checkedMessages = 0;
  let hashedMessages = 0;

  return {
    read(prompt) {
      // Anything but an array is refused by parseMessages.
      if (!Array.isArray(prompt)) return { messages: parseMessages(prompt), keys: [] };
      let best: RecentPrompt | undefined;
      let shared = 0;
      for (const entry of recent) {
        const length = sharedPrefixLength(entry.messages, prompt);
        if (length > shared) {
          best = entry;
          shared = length;
        }
      }
      const rest = prompt.slice(shared);
      checkedMessages += rest.length;
      try {
        parseMessages(rest);
      } catch (error) {
        // The shared prefix was checked before: the whole prompt fails at the same message, with its index.
        parseMessages(prompt);
        throw error;
      }
      const keys = best === undefined ? [] : best.keys.slice(0, shared);
      for (const message of rest) keys.push(messageContentHash(message as Message));
      hashedMessages += rest.length;
      // A prompt that continues a recent one takes its place: one entry per conversation.
      if (best !== undefined && shared === best.messages.length) recent.splice(recent.indexOf(best), 1);
      recent.unshift({ messages: [...prompt], keys });
      if (recent.length > maxPrompts) recent.length = maxPrompts;
      return { messages: prompt as Message[], keys };
    },
    stats: () => ({ checkedMessages, hashedMessages }),
  };
}
