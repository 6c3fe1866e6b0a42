/**
 * LangChain hands the middleware the agent's whole history before every model call, as the same message
 * objects call after call (LangGraph's state keeps them; only new and replaced messages are new objects).
 * Converting and hashing the history each time would cost O(N) per call and O(N²) over an agent loop; this
 * cache converts and hashes each message object once and reuses the result while the object is unchanged.
 */

import type { BaseMessage } from '@langchain/core/messages';
import { InvalidMessageError } from '../../errors/index.js';
import { unknownToolName } from '../../messages/convert/placeholders.js';
import { assignIds, messageContentHash } from '../../messages/ids.js';
import type { IdentifiedMessage, Message } from '../../messages/types.js';
import { fromLangChainMessage, recordToolNames } from './langchain-messages.js';

/** `assignIds(fromLangChainMessages(messages))`, with the content hash of each message. */
export interface ConvertedLangChainMessages {
  messages: IdentifiedMessage[];
  hashes: string[];
}

export interface LangChainMessageCacheStats {
  /** Messages converted from LangChain's shape. */
  convertedMessages: number;
  /** Message content hashes computed (`messageContentHash`, derived ids included). */
  hashedMessages: number;
}

export interface LangChainMessageCache {
  /**
   * The same result as `assignIds(fromLangChainMessages(messages))` plus content hashes, converting and hashing
   * only the message objects it has not seen (or whose fields were reassigned since).
   * @throws InvalidMessageError naming the message index and field, as `fromLangChainMessages` does
   */
  convert(messages: readonly BaseMessage[]): ConvertedLangChainMessages;
  /**
   * `messageContentHash`, remembered by message object: the messages it converted, and any other message
   * hashed before, cost nothing more.
   */
  hash(message: Message): string;
  stats(): LangChainMessageCacheStats;
}

interface Entry {
  /** The fields conversion reads, as they were converted: a reassigned field makes the entry stale. */
  fields: readonly unknown[];
  message: Message;
  hash: string;
  /**
   * A tool message without a `name` takes the name of its call from an earlier message: the name it got, which
   * the same message after a different history may not get.
   */
  borrowedToolName: { toolCallId: string; toolName: string } | undefined;
}

type MessageRecord = Record<string, unknown>;

/** What `fromLangChainMessage` reads of a message besides its class, which an object cannot change. */
function fieldsOf(message: MessageRecord): unknown[] {
  return [
    message.id,
    message.content,
    message.tool_calls,
    message.tool_call_id,
    message.name,
    message.status,
  ];
}

function hasFields(message: MessageRecord, fields: readonly unknown[]): boolean {
  return (
    fields[0] === message.id &&
    fields[1] === message.content &&
    fields[2] === message.tool_calls &&
    fields[3] === message.tool_call_id &&
    fields[4] === message.name &&
    fields[5] === message.status
  );
}

/**
 * A conversion cache for one middleware, shared by its conversations: entries are keyed by message object (a
 * WeakMap, so they go with the messages) and do not depend on the history around them, except a borrowed tool
 * name, which is checked against the history each time. Treat converted messages as immutable: reassigning a
 * field (`content`, `tool_calls`, `id`, ...) is noticed, editing content blocks in place is not.
 */
export function createLangChainMessageCache(): LangChainMessageCache {
  const entries = new WeakMap<object, Entry>();
  const hashes = new WeakMap<Message, string>();
  let convertedMessages = 0;
  let hashedMessages = 0;

  function hash(message: Message): string {
    let known = hashes.get(message);
    if (known === undefined) {
      known = messageContentHash(message);
      hashedMessages++;
      hashes.set(message, known);
    }
    return known;
  }

  function cachedEntry(source: BaseMessage, toolNames: ReadonlyMap<string, string>): Entry | undefined {
    if (typeof source !== 'object' || source === null) return undefined;
    const entry = entries.get(source);
    if (entry === undefined || !hasFields(source as unknown as MessageRecord, entry.fields)) return undefined;
    const borrowed = entry.borrowedToolName;
    if (
      borrowed !== undefined &&
      (toolNames.get(borrowed.toolCallId) ?? unknownToolName) !== borrowed.toolName
    )
      return undefined;
    return entry;
  }

  function convertEntry(source: BaseMessage, index: number, toolNames: ReadonlyMap<string, string>): Entry {
    let borrowedFrom: string | undefined;
    const message = fromLangChainMessage(source, index, (toolCallId) => {
      borrowedFrom = toolCallId;
      return toolNames.get(toolCallId);
    });
    convertedMessages++;
    const part = message.role === 'tool' ? message.content[0] : undefined;
    const entry: Entry = {
      fields: fieldsOf(source as unknown as MessageRecord),
      message,
      hash: hash(message),
      borrowedToolName:
        borrowedFrom !== undefined && part?.type === 'tool-result'
          ? { toolCallId: borrowedFrom, toolName: part.toolName }
          : undefined,
    };
    entries.set(source, entry);
    return entry;
  }

  return {
    convert(sources) {
      if (!Array.isArray(sources))
        throw new InvalidMessageError('expected an array of LangChain messages', { path: '' });
      const toolNames = new Map<string, string>();
      const messages: Message[] = [];
      const contentHashes: string[] = [];
      let withoutId = 0;
      sources.forEach((source, index) => {
        const entry = cachedEntry(source, toolNames) ?? convertEntry(source, index, toolNames);
        recordToolNames(entry.message, toolNames);
        messages.push(entry.message);
        contentHashes.push(entry.hash);
        if (entry.message.id === undefined) withoutId++;
      });
      if (withoutId === 0) return { messages: messages as IdentifiedMessage[], hashes: contentHashes };
      // A derived id depends on the whole list (earlier duplicates, ids taken anywhere): derived afresh.
      hashedMessages += withoutId;
      const identified = assignIds(messages);
      identified.forEach((message, index) => {
        hashes.set(message, contentHashes[index]!);
      });
      return { messages: identified, hashes: contentHashes };
    },
    hash,
    stats: () => ({ convertedMessages, hashedMessages }),
  };
}
