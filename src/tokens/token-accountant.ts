import { InvalidArgumentError, InvalidMessageError } from '../errors/index.js';
import { sha256 } from '../internal/hash.js';
import { describeValue } from '../internal/json-shapes.js';
import { stableStringify } from '../internal/stable-json.js';
import { toolOutputText } from '../messages/content.js';
import type { Provider } from '../messages/provider.js';
import {
  type Conversation,
  type DataContent,
  type Message,
  type Role,
  roles,
  type ToolDefinition,
  type ToolResultOutput,
} from '../messages/types.js';
import { isCalibratedCounter } from './calibrated-counter.js';
import { createO200kCounter } from './o200k-counter.js';
import { type ProviderFraming, providerFraming } from './provider-framing.js';
import type { TokenCounter } from './token-counter.js';

/**
 * Estimated tokens of one image, whose pixels we do not know. The largest a resized image costs: OpenAI
 * gpt-4o high detail tops out at 6 tiles (85 + 6 × 170 = 1105); Anthropic charges width × height / 750 on
 * images scaled to at most ~1.15 megapixels (about 1600).
 */
export const defaultImageTokens = { openai: 1105, anthropic: 1600 } as const satisfies Record<
  Provider,
  number
>;

/**
 * Estimated tokens of one non-text file (PDF, audio, ...): the top of Anthropic's 1,500-3,000 tokens per PDF
 * page, for one page, since the page count is unknown. Text files are decoded and counted exactly.
 */
export const defaultFileTokens = 3000;

export interface TokenAccountantOptions {
  /** Counts text; a calibrated counter is scaled at read time, so its cache survives ratio updates. @default createO200kCounter() */
  counter?: TokenCounter;
  /** Whose chat format the framing follows. @default 'openai' */
  provider?: Provider;
  /** Message and tool-definition counts kept by content hash; 0 turns caching off. @default 10000 */
  cacheSize?: number;
  /** Tokens per image part or image tool-result item. @default defaultImageTokens[provider] */
  imageTokens?: number;
  /** Tokens per non-text file part or file tool-result item. @default defaultFileTokens */
  fileTokens?: number;
  /** Replaces some of the provider's framing constants (see `providerFraming`). */
  framing?: Partial<ProviderFraming>;
}

export interface MessageTokenCount {
  /** The text the message carries (text, reasoning, tool names and arguments, tool output) plus media estimates. */
  contentTokens: number;
  /** What the provider's chat format adds around it. */
  framingTokens: number;
  totalTokens: number;
}

export interface MessageTokenEntry extends MessageTokenCount {
  /** Position in the conversation. */
  index: number;
  id?: string;
  role: Role;
}

/** Tokens attributed to one tool: its calls (name, arguments, framing) and its results (output, framing). */
export interface ToolTokenCount {
  callCount: number;
  resultCount: number;
  callTokens: number;
  resultTokens: number;
  totalTokens: number;
}

export interface ConversationTokenCount {
  /** `contentTokens + framingTokens + toolSchemaTokens + replyPrimingTokens`. */
  totalTokens: number;
  /** Content of all messages. */
  contentTokens: number;
  /** Framing of all messages (not the reply priming). */
  framingTokens: number;
  /** System messages, content and framing; also in `byRole.system`. */
  systemTokens: number;
  /** The tool definitions: names, descriptions, JSON schemas and per-tool and per-request overheads. */
  toolSchemaTokens: number;
  /** The primer of the reply; 0 for an empty conversation. */
  replyPrimingTokens: number;
  /** One entry per message, in order. */
  messages: MessageTokenEntry[];
  /** Message totals by role. */
  byRole: Record<Role, number>;
  /** Tool calls and results by tool name (a null-prototype record). Overlaps `byRole`: a different cut. */
  byTool: Record<string, ToolTokenCount>;
}

export interface TokenCacheStats {
  /** Lookups of messages and tool definitions answered from the cache. */
  hits: number;
  /** Lookups that had to count. */
  misses: number;
  /** Entries in the content-hash cache. */
  entries: number;
}

export interface TokenAccountant {
  readonly provider: Provider;
  readonly counter: TokenCounter;
  /**
   * Tokens of a text on its own (no framing), as `counter` counts it, with long texts cached by content:
   * strategies measure the same tool outputs and prose again on every pass.
   */
  countText(text: string): number;
  /** Content plus framing tokens of one message. */
  countMessage(message: Message): number;
  /** Content and framing tokens of one message, separately. */
  measureMessage(message: Message): MessageTokenCount;
  /** Tokens of tool definitions as sent with a request, per-request overhead included; 0 for none. */
  countTools(tools: readonly ToolDefinition[]): number;
  countConversation(input: Conversation | readonly Message[]): ConversationTokenCount;
  /**
   * `countConversation(input).totalTokens` without the breakdown: what a compaction loop asks after each step,
   * so no per-message entries are built.
   */
  countTotal(input: Conversation | readonly Message[]): number;
  stats(): TokenCacheStats;
  clearCache(): void;
}

/**
 * Counts in two currencies: `scaled` tokens come from the counter and are multiplied by a calibrated
 * counter's current ratio when read; `fixed` tokens (framing constants, media estimates) are already in the
 * provider's tokens.
 */
interface Tally {
  contentScaled: number;
  contentFixed: number;
  framingScaled: number;
  framingFixed: number;
}

interface ToolShare extends Tally {
  toolName: string;
  kind: 'call' | 'result';
}

/** What one part adds to its message: content tokens, or a tool call's or result's share. */
type PartTally = Pick<Tally, 'contentScaled' | 'contentFixed'> | ToolShare;

/** The fields a part's tally is computed from, checked by reference like a message's. */
function partFields(part: Record<string, unknown>): readonly unknown[] {
  return [part.type, part.text, part.toolName, part.input, part.output, part.data, part.mediaType];
}

function sameFields(known: readonly unknown[], fields: readonly unknown[]): boolean {
  return known.every((field, position) => field === fields[position]);
}

interface MessageTally extends Tally {
  tools: ToolShare[];
}

interface IdentityEntry<Value> {
  /** The fields the value was computed from, checked by reference: reassigning one invalidates the entry. */
  fields: readonly unknown[];
  value: Value;
}

function emptyTally(): Tally {
  return { contentScaled: 0, contentFixed: 0, framingScaled: 0, framingFixed: 0 };
}

const textMediaType =
  /^(?:text\/|application\/(?:json|xml|javascript|yaml|x-yaml|x-ndjson)\b|[^;]*\+(?:json|xml)\b)/i;

/** The text of a text-like file given inline, or undefined when it is binary or only referenced by URL. */
function inlineFileText(data: DataContent, mediaType: string): string | undefined {
  if (!textMediaType.test(mediaType) || data instanceof URL) return undefined;
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  if (data instanceof Uint8Array)
    return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8');
  if (/^https?:\/\//i.test(data)) return undefined;
  if (data.startsWith('data:')) {
    const comma = data.indexOf(',');
    if (comma < 0) return undefined;
    const body = data.slice(comma + 1);
    if (data.slice(0, comma).endsWith(';base64')) return Buffer.from(body, 'base64').toString('utf8');
    try {
      return decodeURIComponent(body);
    } catch {
      return undefined;
    }
  }
  return Buffer.from(data, 'base64').toString('utf8');
}

function isBinary(value: unknown): boolean {
  return value instanceof Uint8Array || value instanceof ArrayBuffer;
}

/**
 * A cache key for a serialisation. Short ones are their own key (V8 hashes short strings cheaply, and a native
 * call costs more than the hash); they contain `\u0000` or `[`, which a base64 digest never does.
 */
function hashDigest(serialised: string): string {
  return serialised.length <= 128 ? serialised : sha256(serialised, 'base64');
}

function lengthPrefixed(text: string): string {
  return text.length + ':' + text;
}

/**
 * A prefix-free serialisation of one part. The common bulky parts (text, reasoning, text tool output) are
 * written length-prefixed, which costs a string copy instead of JSON escaping; the rest as JSON. Key order in
 * that JSON follows the object, so a reordered copy only misses the cache.
 */
function partKey(part: unknown): string {
  const record = part as Record<string, unknown>;
  if (record.providerOptions === undefined) {
    if ((record.type === 'text' || record.type === 'reasoning') && typeof record.text === 'string') {
      return (record.type === 'text' ? 'T' : 'R') + lengthPrefixed(record.text);
    }
    const output = record.output as Record<string, unknown> | undefined;
    if (
      record.type === 'tool-result' &&
      typeof record.toolCallId === 'string' &&
      typeof record.toolName === 'string' &&
      (output?.type === 'text' || output?.type === 'error-text') &&
      typeof output.value === 'string'
    ) {
      return (
        'O' +
        lengthPrefixed(record.toolCallId) +
        lengthPrefixed(record.toolName) +
        lengthPrefixed(output.type) +
        lengthPrefixed(output.value)
      );
    }
  }
  const binary = isBinary(record.image) || isBinary(record.data);
  return 'J' + lengthPrefixed(binary ? stableStringify(part) : JSON.stringify(part));
}

/** Hash of role, content and provider options (never the id or metadata); undefined when not serialisable. */
function messageKey(message: Message): string | undefined {
  try {
    let key = message.role + '\u0000';
    if (typeof message.content === 'string') key += 'S' + lengthPrefixed(message.content);
    else {
      key += 'A';
      for (const part of message.content as readonly unknown[]) key += partKey(part);
    }
    if (message.providerOptions !== undefined) key += 'P' + JSON.stringify(message.providerOptions);
    return hashDigest(key);
  } catch {
    return undefined;
  }
}

function toolKey(tool: ToolDefinition): string | undefined {
  try {
    return hashDigest('D' + JSON.stringify([tool.name, tool.description ?? null, tool.inputSchema ?? null]));
  } catch {
    return undefined;
  }
}

/** The messages and tool definitions of what `countConversation` takes, checked. */
function conversationParts(input: Conversation | readonly Message[]): {
  messages: readonly Message[];
  tools: readonly ToolDefinition[];
} {
  if (Array.isArray(input)) return { messages: input, tools: [] };
  const conversation = input as Conversation;
  if (typeof conversation !== 'object' || conversation === null || !Array.isArray(conversation.messages))
    throw new InvalidMessageError('expected a message array or a conversation with "messages"');
  if (conversation.tools !== undefined && !Array.isArray(conversation.tools))
    throw new InvalidMessageError('expected an array', { path: 'tools' });
  return { messages: conversation.messages, tools: conversation.tools ?? [] };
}

function nullPrototypeRecord<Value>(): Record<string, Value> {
  return Object.create(null) as Record<string, Value>;
}

function requireTokenOption(option: string, value: number): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new InvalidArgumentError(option, `expected a non-negative integer, got ${String(value)}`);
  }
}

/**
 * Counts messages, tool definitions and whole conversations, remembering each message's count under a hash of
 * its content: a growing conversation is counted once, and a re-count after appending a message costs that
 * message. Messages are looked up first by identity (a WeakMap on the parts array, or on the message when its
 * content is a string), then by its parts (a message rebuilt from counted parts, as strategies rebuild them,
 * counts only its new parts), then by content hash (a bounded LRU map), so a copy of a message, or one with a
 * new id or metadata, is still a hit. Treat counted messages as immutable: reassigning `content` or a part's
 * field is noticed, editing a part's output or input object in place is not.
 */
export function createTokenAccountant(options: TokenAccountantOptions = {}): TokenAccountant {
  const {
    counter = createO200kCounter(),
    provider = 'openai',
    cacheSize = 10_000,
    imageTokens = defaultImageTokens[provider] ?? defaultImageTokens.openai,
    fileTokens = defaultFileTokens,
    framing: framingOverrides = {},
  } = options;
  if (!(provider in providerFraming)) {
    throw new InvalidArgumentError('provider', `expected one of ${Object.keys(providerFraming).join(', ')}`);
  }
  requireTokenOption('cacheSize', cacheSize);
  requireTokenOption('imageTokens', imageTokens);
  requireTokenOption('fileTokens', fileTokens);
  const framing: ProviderFraming = { ...providerFraming[provider], ...framingOverrides };
  for (const [name, value] of Object.entries(framing)) requireTokenOption(`framing.${name}`, value);

  // Cache counts of the exact base counter; the calibration ratio is applied when reading.
  const calibrated = isCalibratedCounter(counter) ? counter : undefined;
  const exact = calibrated?.base ?? counter;
  const count = (text: string): number => (text.length === 0 ? 0 : exact.count(text));

  let identityCache = new WeakMap<object, IdentityEntry<MessageTally | number>>();
  const hashCache = new Map<string, MessageTally | number>();
  let hits = 0;
  let misses = 0;

  function cached<Value extends MessageTally | number>(
    object: object,
    fields: readonly unknown[],
    keyOf: () => string | undefined,
    compute: () => Value,
    assemble: () => Value | undefined = () => undefined,
  ): Value {
    if (cacheSize === 0) {
      misses++;
      return compute();
    }
    const known = identityCache.get(object);
    if (known !== undefined && sameFields(known.fields, fields)) {
      hits++;
      return known.value as Value;
    }
    const assembled = assemble();
    if (assembled !== undefined) {
      identityCache.set(object, { fields, value: assembled });
      hits++;
      return assembled;
    }
    const key = keyOf();
    if (key !== undefined) {
      const value = hashCache.get(key);
      if (value !== undefined) {
        hashCache.delete(key);
        hashCache.set(key, value);
        identityCache.set(object, { fields, value });
        hits++;
        return value as Value;
      }
    }
    misses++;
    const value = compute();
    if (key !== undefined) {
      hashCache.set(key, value);
      if (hashCache.size > cacheSize) hashCache.delete(hashCache.keys().next().value as string);
      identityCache.set(object, { fields, value });
    }
    return value;
  }

  const ratio = (): number => calibrated?.ratio ?? 1;
  // Long texts only: short ones count faster than a lookup pays for, and would crowd the cache.
  const textCache = new Map<string, number>();
  const minCachedTextLength = 256;
  const maxCachedTexts = 20_000;
  const countBase = (text: string): number => {
    if (text.length < minCachedTextLength) return count(text);
    let tokens = textCache.get(text);
    if (tokens === undefined) {
      tokens = count(text);
      if (textCache.size >= maxCachedTexts) textCache.delete(textCache.keys().next().value as string);
      textCache.set(text, tokens);
    }
    return tokens;
  };
  const resolve = (scaled: number, fixed: number, currentRatio: number): number =>
    (currentRatio === 1 ? scaled : Math.round(scaled * currentRatio)) + fixed;

  // Each counted part's tally, by identity: a message rebuilt from counted parts (reasoning dropped, one output
  // stubbed, a copy with new metadata) adds them up instead of serialising, hashing and looking up its texts.
  let partTallies = new WeakMap<object, IdentityEntry<PartTally>>();

  function messageFraming(message: Message): MessageTally {
    const tally: MessageTally = { ...emptyTally(), tools: [] };
    tally.framingFixed += message.role === 'tool' ? framing.toolMessageTokens : framing.messageTokens;
    const name = provider === 'openai' ? message.providerOptions?.openai?.name : undefined;
    if (typeof name === 'string' && name !== '') {
      tally.framingFixed += framing.nameTokens;
      tally.framingScaled += count(name);
    }
    return tally;
  }

  function addPart(tally: MessageTally, part: PartTally): void {
    if ('kind' in part) addShare(tally, part);
    else {
      tally.contentScaled += part.contentScaled;
      tally.contentFixed += part.contentFixed;
    }
  }

  /** The tally of a part counted before, while its fields are the ones it was counted from. */
  function countedPart(part: unknown): PartTally | undefined {
    if (typeof part !== 'object' || part === null) return undefined;
    const entry = partTallies.get(part);
    return entry !== undefined && sameFields(entry.fields, partFields(part as Record<string, unknown>))
      ? entry.value
      : undefined;
  }

  /**
   * The tally of a message some of whose parts were counted before (a strategy's rewrite: only its new parts,
   * usually a short stub, are counted); undefined when none was, so that a copy is looked up by content.
   */
  function tallyOfCountedParts(message: Message, index: number | undefined): MessageTally | undefined {
    if (typeof message.content === 'string') return undefined;
    const known = (message.content as readonly unknown[]).map(countedPart);
    if (known.every((tally) => tally === undefined)) return undefined;
    return tallyMessage(message, index, known);
  }

  /** `known`: the parts' earlier tallies when the caller has looked them up already. */
  function tallyMessage(
    message: Message,
    index: number | undefined,
    known?: ReadonlyArray<PartTally | undefined>,
  ): MessageTally {
    const fail = (reason: string, path: string): never => {
      throw new InvalidMessageError(reason, index === undefined ? { path } : { index, path });
    };
    const tally = messageFraming(message);
    if (typeof message.content === 'string') {
      tally.contentScaled += countBase(message.content);
      return tally;
    }
    const parts = message.content as readonly unknown[];
    for (let position = 0; position < parts.length; position++) {
      const part = parts[position] as Record<string, unknown> | null;
      const path = `content[${position}]`;
      if (typeof part !== 'object' || part === null) fail('expected a content part object', path);
      const record = part as Record<string, unknown>;
      const counted = known === undefined ? countedPart(record) : known[position];
      if (counted !== undefined) {
        addPart(tally, counted);
        continue;
      }
      const value = tallyPart(record, path, fail);
      if (cacheSize !== 0) partTallies.set(record, { fields: partFields(record), value });
      addPart(tally, value);
    }
    return tally;
  }

  function tallyPart(
    record: Record<string, unknown>,
    path: string,
    fail: (reason: string, path: string) => never,
  ): PartTally {
    switch (record.type) {
      case 'text':
      case 'reasoning':
        if (typeof record.text !== 'string') fail('expected a string', `${path}.text`);
        return { contentScaled: countBase(record.text as string), contentFixed: 0 };
      case 'image':
        return { contentScaled: 0, contentFixed: imageTokens };
      case 'file': {
        const text =
          typeof record.mediaType === 'string' && record.data !== undefined
            ? inlineFileText(record.data as DataContent, record.mediaType)
            : undefined;
        return text === undefined
          ? { contentScaled: 0, contentFixed: fileTokens }
          : { contentScaled: countBase(text), contentFixed: 0 };
      }
      case 'tool-call': {
        if (typeof record.toolName !== 'string') fail('expected a string', `${path}.toolName`);
        let argumentsText: string;
        try {
          argumentsText =
            typeof record.input === 'string' ? record.input : JSON.stringify(record.input ?? null);
        } catch {
          return fail('tool call input is not JSON-serialisable', `${path}.input`);
        }
        return {
          ...emptyTally(),
          toolName: record.toolName as string,
          kind: 'call',
          contentScaled: count(record.toolName as string) + countBase(argumentsText),
          framingFixed: framing.toolCallTokens,
        };
      }
      case 'tool-result': {
        if (typeof record.toolName !== 'string') fail('expected a string', `${path}.toolName`);
        const share: ToolShare = {
          ...emptyTally(),
          toolName: record.toolName as string,
          kind: 'result',
          framingFixed: framing.toolResultTokens,
        };
        tallyOutput(record.output, share, `${path}.output`, fail);
        return share;
      }
      case 'tool-approval-request':
      case 'tool-approval-response':
        // Client-side approval bookkeeping: never sent to the model as text.
        return { contentScaled: 0, contentFixed: 0 };
      default:
        return fail(`unknown part type ${JSON.stringify(record.type)}`, `${path}.type`);
    }
  }

  function addShare(tally: MessageTally, share: ToolShare): void {
    tally.contentScaled += share.contentScaled;
    tally.contentFixed += share.contentFixed;
    tally.framingScaled += share.framingScaled;
    tally.framingFixed += share.framingFixed;
    tally.tools.push(share);
  }

  function tallyOutput(
    output: unknown,
    share: ToolShare,
    path: string,
    fail: (reason: string, path: string) => never,
  ): void {
    if (typeof output !== 'object' || output === null) fail('expected a tool result output object', path);
    const typed = output as ToolResultOutput;
    if (typed.type === 'content') {
      if (!Array.isArray(typed.value)) fail('expected an array', `${path}.value`);
      for (const item of typed.value) {
        if (item.type === 'text') share.contentScaled += countBase(item.text);
        else if (item.type === 'image-url' || item.type === 'image-data') share.contentFixed += imageTokens;
        else if (item.type === 'media' && item.mediaType.startsWith('image/'))
          share.contentFixed += imageTokens;
        else share.contentFixed += fileTokens;
      }
      return;
    }
    if (!['text', 'error-text', 'json', 'error-json', 'execution-denied'].includes(typed.type)) {
      fail(`unknown output type ${JSON.stringify(typed.type)}`, `${path}.type`);
    }
    let text: string | undefined;
    try {
      text = toolOutputText(typed);
    } catch {
      fail('tool result output is not JSON-serialisable', `${path}.value`);
    }
    share.contentScaled += countBase(text ?? '');
  }

  function checkShape(message: Message, index: number | undefined): void {
    const location = (path: string) => (index === undefined ? { path } : { index, path });
    if (typeof message !== 'object' || message === null) {
      throw new InvalidMessageError('expected a message object', location(''));
    }
    if (!(roles as readonly string[]).includes(message.role)) {
      throw new InvalidMessageError(`unknown role ${JSON.stringify(message.role)}`, location('role'));
    }
    if (typeof message.content !== 'string' && !Array.isArray(message.content)) {
      throw new InvalidMessageError('expected a string or an array of parts', location('content'));
    }
  }

  function messageTally(message: Message, index: number | undefined): MessageTally {
    checkShape(message, index);
    // A copy of a message (a new id, new metadata) shares its parts array: looked up by that array, it is
    // a hit without hashing the content.
    return cached(
      typeof message.content === 'string' ? message : message.content,
      [message.role, message.content, message.providerOptions],
      () => messageKey(message),
      () => tallyMessage(message, index),
      () => tallyOfCountedParts(message, index),
    );
  }

  function measure(tally: Tally, currentRatio: number): MessageTokenCount {
    const contentTokens = resolve(tally.contentScaled, tally.contentFixed, currentRatio);
    const framingTokens = resolve(tally.framingScaled, tally.framingFixed, currentRatio);
    return { contentTokens, framingTokens, totalTokens: contentTokens + framingTokens };
  }

  function toolDefinitionTokens(tool: ToolDefinition, index: number, currentRatio: number): number {
    if (typeof tool !== 'object' || tool === null || typeof tool.name !== 'string') {
      throw new InvalidMessageError('expected a tool definition with a name', { path: `tools[${index}]` });
    }
    const scaled = cached(
      tool,
      [tool.name, tool.description, tool.inputSchema],
      () => toolKey(tool),
      () => {
        try {
          return (
            count(tool.name) + count(tool.description ?? '') + count(JSON.stringify(tool.inputSchema ?? null))
          );
        } catch {
          throw new InvalidMessageError('tool input schema is not JSON-serialisable', {
            path: `tools[${index}].inputSchema`,
          });
        }
      },
    );
    return resolve(scaled, framing.toolDefinitionTokens, currentRatio);
  }

  function toolsTokens(tools: readonly ToolDefinition[], currentRatio: number): number {
    if (tools.length === 0) return 0;
    let total = framing.toolDefinitionsTokens;
    tools.forEach((tool, index) => {
      total += toolDefinitionTokens(tool, index, currentRatio);
    });
    return total;
  }

  return {
    provider,
    counter,
    countText(text) {
      if (typeof text !== 'string')
        throw new InvalidArgumentError('text', `expected a string to count, got ${describeValue(text)}`);
      return resolve(countBase(text), 0, ratio());
    },
    countMessage(message) {
      return measure(messageTally(message, undefined), ratio()).totalTokens;
    },
    measureMessage(message) {
      return measure(messageTally(message, undefined), ratio());
    },
    countTools(tools) {
      return toolsTokens(tools, ratio());
    },
    countConversation(input) {
      const { messages, tools } = conversationParts(input);
      const currentRatio = ratio();
      const byRole: Record<Role, number> = { system: 0, user: 0, assistant: 0, tool: 0 };
      const byTool = nullPrototypeRecord<ToolTokenCount>();
      const entries: MessageTokenEntry[] = [];
      let contentTokens = 0;
      let framingTokens = 0;
      messages.forEach((message, index) => {
        const tally = messageTally(message, index);
        const measured = measure(tally, currentRatio);
        const entry: MessageTokenEntry = { index, role: message.role, ...measured };
        if (typeof message.id === 'string') entry.id = message.id;
        entries.push(entry);
        contentTokens += measured.contentTokens;
        framingTokens += measured.framingTokens;
        byRole[message.role] += measured.totalTokens;
        for (const share of tally.tools) {
          const tokens =
            resolve(share.contentScaled, share.contentFixed, currentRatio) +
            resolve(share.framingScaled, share.framingFixed, currentRatio);
          let tool = byTool[share.toolName];
          if (tool === undefined) {
            tool = { callCount: 0, resultCount: 0, callTokens: 0, resultTokens: 0, totalTokens: 0 };
            byTool[share.toolName] = tool;
          }
          if (share.kind === 'call') {
            tool.callCount++;
            tool.callTokens += tokens;
          } else {
            tool.resultCount++;
            tool.resultTokens += tokens;
          }
          tool.totalTokens += tokens;
        }
      });
      const toolSchemaTokens = toolsTokens(tools, currentRatio);
      const replyPrimingTokens = messages.length > 0 ? framing.replyPrimingTokens : 0;
      return {
        totalTokens: contentTokens + framingTokens + toolSchemaTokens + replyPrimingTokens,
        contentTokens,
        framingTokens,
        systemTokens: byRole.system,
        toolSchemaTokens,
        replyPrimingTokens,
        messages: entries,
        byRole,
        byTool,
      };
    },
    countTotal(input) {
      const { messages, tools } = conversationParts(input);
      const currentRatio = ratio();
      let total = toolsTokens(tools, currentRatio) + (messages.length > 0 ? framing.replyPrimingTokens : 0);
      for (let index = 0; index < messages.length; index++)
        total += measure(messageTally(messages[index]!, index), currentRatio).totalTokens;
      return total;
    },
    stats() {
      return { hits, misses, entries: hashCache.size };
    },
    clearCache() {
      identityCache = new WeakMap();
      partTallies = new WeakMap();
      hashCache.clear();
      textCache.clear();
      hits = 0;
      misses = 0;
    },
  };
}
