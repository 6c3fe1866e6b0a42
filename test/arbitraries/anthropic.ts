/**
 * fast-check arbitraries of Anthropic Messages API input as clients write it: a system prompt (string, or text
 * blocks with cache_control), alternating user and assistant turns, thinking with signatures and redacted
 * thinking, parallel tool_use blocks answered by tool_result blocks at the start of the next user turn (string,
 * text and image content, is_error true, false or absent), sometimes followed by user text, images and
 * documents, server tool use with web search / fetch results, unicode, unknown extra fields on blocks and
 * messages, and now and then a block type or source no converter knows.
 */
import fc from 'fast-check';
import type {
  AnthropicMessage,
  AnthropicMessagesRequest,
  AnthropicTool,
} from '../../src/messages/convert/anthropic-types.js';

type WireObject = Record<string, unknown>;

// Wire objects come from JSON.parse, so they have Object.prototype; fast-check would also make null-prototype ones.
function record<T>(model: { [K in keyof T]: fc.Arbitrary<T[K]> }): fc.Arbitrary<T>;
function record<T, R extends keyof T>(
  model: { [K in keyof T]: fc.Arbitrary<T[K]> },
  constraints: { requiredKeys: R[] },
): fc.Arbitrary<Pick<T, R> & Partial<T>>;
function record<T>(
  model: { [K in keyof T]: fc.Arbitrary<T[K]> },
  constraints: { requiredKeys?: (keyof T)[] } = {},
): fc.Arbitrary<Partial<T>> {
  const options = { ...constraints, noNullPrototype: true } as unknown as { requiredKeys: [] };
  return fc.record(model, options) as fc.Arbitrary<Partial<T>>;
}

function dictionary<T>(
  key: fc.Arbitrary<string>,
  value: fc.Arbitrary<T>,
  constraints: { minKeys?: number; maxKeys?: number } = {},
): fc.Arbitrary<Record<string, T>> {
  return fc.dictionary(key, value, { ...constraints, noNullPrototype: true });
}

/** Names of extra fields: none is a field of the Anthropic format on any block or message. */
const extraFieldNames = ['x_trace_id', 'x_note', 'client_meta'] as const;

const text: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom('', 'Hello, world!', 'héllo 👋🏽 世界', 'line one\nline two', 'ok'),
  },
);

/** `arbitrary` about once in `times` values, undefined otherwise (which is also what it shrinks to). */
function onceIn<T>(times: number, arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> {
  return fc.oneof(
    { withCrossShrink: true },
    { weight: times - 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary },
  );
}

/** Small JSON values: big ones only slow the run down without finding more. */
const json: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 2.5, '', 'x'),
  fc.string({ maxLength: 8 }),
  fc.integer(),
  fc.array(fc.oneof(fc.string({ maxLength: 4 }), fc.integer()), { maxLength: 3 }),
  dictionary(
    fc.string({ maxLength: 4 }),
    fc.oneof(fc.string({ maxLength: 4 }), fc.boolean(), fc.constant(null)),
    {
      maxKeys: 3,
    },
  ),
);

const extraFields: fc.Arbitrary<WireObject | undefined> = onceIn(
  5,
  dictionary(fc.constantFrom(...extraFieldNames), json, { minKeys: 1, maxKeys: 2 }),
);

/** Now and then adds unknown extra fields to what `arbitrary` generates. */
function withExtra<T extends WireObject>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T> {
  return fc
    .tuple(arbitrary, extraFields)
    .map(([value, extra]) => (extra === undefined ? value : { ...value, ...extra }));
}

const cacheControl = record(
  { type: fc.constant('ephemeral' as const), ttl: fc.constantFrom('5m' as const, '1h' as const) },
  { requiredKeys: ['type'] },
);

/** A record where each optional key shows up about a third of the time. */
function sometimes<T extends WireObject>(
  required: fc.Arbitrary<T>,
  optional: { [K in string]: fc.Arbitrary<unknown> },
) {
  const optionalArbitraries = Object.entries(optional).map(([key, arbitrary]) =>
    onceIn(3, arbitrary).map((value) => [key, value] as const),
  );
  return fc.tuple(required, ...optionalArbitraries).map(([value, ...entries]) => ({
    ...value,
    ...Object.fromEntries(entries.filter(([, field]) => field !== undefined)),
  }));
}

const base64 = fc.base64String({ maxLength: 24 });
const imageMediaType = fc.constantFrom('image/png', 'image/jpeg', 'image/gif', 'image/webp');
const url = fc.oneof(
  fc.constantFrom('https://example.com/cat.png', 'http://img.test/a.pdf?x=1', 'HTTPS://Example.com/%C3%A9'),
  fc
    .tuple(fc.constantFrom('a.test', 'docs.example.com', 'xn--bcher-kva.example'), fc.nat(999))
    .map(([host, page]) => `https://${host}/page/${page}`),
);
const toolName = fc.constantFrom('get_weather', 'search_docs', 'read_file', 'run_shell');

const citation = record({
  type: fc.constant('char_location'),
  cited_text: text,
  document_index: fc.nat(3),
  start_char_index: fc.nat(100),
  end_char_index: fc.nat(200),
});

const textBlock = withExtra(
  sometimes(record({ type: fc.constant('text' as const), text }), {
    cache_control: cacheControl,
    citations: fc.array(citation, { maxLength: 2 }),
  }),
);

const imageSource = fc.oneof(
  {
    weight: 3,
    arbitrary: record({ type: fc.constant('base64'), media_type: imageMediaType, data: base64 }),
  },
  { weight: 2, arbitrary: record({ type: fc.constant('url'), url }) },
  {
    weight: 1,
    arbitrary: record({ type: fc.constant('file'), file_id: fc.stringMatching(/^file_[a-z0-9]{4}$/) }),
  },
);

const imageBlock = withExtra(
  sometimes(record({ type: fc.constant('image' as const), source: imageSource }), {
    cache_control: cacheControl,
  }),
);

const documentSource = fc.oneof(
  {
    weight: 3,
    arbitrary: record({
      type: fc.constant('base64'),
      media_type: fc.constant('application/pdf'),
      data: base64,
    }),
  },
  {
    weight: 3,
    arbitrary: record({ type: fc.constant('text'), media_type: fc.constant('text/plain'), data: text }),
  },
  { weight: 2, arbitrary: record({ type: fc.constant('url'), url }) },
  {
    weight: 1,
    arbitrary: record({
      type: fc.constant('content'),
      content: fc.oneof(text, fc.array(record({ type: fc.constant('text'), text }), { maxLength: 2 })),
    }),
  },
);

const documentBlock = withExtra(
  sometimes(record({ type: fc.constant('document' as const), source: documentSource }), {
    title: fc.oneof(text, fc.constant(null)),
    context: text,
    citations: record({ enabled: fc.boolean() }),
    cache_control: cacheControl,
  }),
);

/** Block types no converter knows (or knows only in the other role): carried verbatim. */
const unknownBlock = fc.oneof(
  record({ type: fc.constant('future_block'), payload: json }),
  record({ type: fc.constant('container_upload'), file_id: fc.stringMatching(/^file_[a-z0-9]{4}$/) }),
  record({
    type: fc.constant('search_result'),
    source: url,
    title: text,
    content: fc.array(textBlock, { maxLength: 1 }),
  }),
);

const userBlock = fc.oneof(
  { weight: 6, arbitrary: textBlock },
  { weight: 2, arbitrary: imageBlock },
  { weight: 2, arbitrary: documentBlock },
  { weight: 1, arbitrary: unknownBlock },
);

const userContent = fc.oneof(
  { weight: 2, arbitrary: text },
  { weight: 3, arbitrary: fc.array(userBlock, { minLength: 1, maxLength: 3 }) },
);

const signature = fc.base64String({ minLength: 4, maxLength: 40 });

const thinkingBlock = fc.oneof(
  {
    weight: 5,
    arbitrary: withExtra(record({ type: fc.constant('thinking'), thinking: text, signature })),
  },
  { weight: 2, arbitrary: withExtra(record({ type: fc.constant('redacted_thinking'), data: signature })) },
  // Unsigned thinking is refused by the API but occurs in logs; it must survive unchanged.
  { weight: 1, arbitrary: record({ type: fc.constant('thinking'), thinking: text }) },
);

const toolInput = dictionary(fc.constantFrom('path', 'query', 'city', 'limit', 'options'), json, {
  maxKeys: 3,
});

interface ServerToolSpec {
  name: 'web_search' | 'web_fetch';
  input: WireObject;
  content: unknown;
  extra: WireObject | undefined;
}

const webSearchResult = record(
  {
    type: fc.constant('web_search_result'),
    url,
    title: text,
    encrypted_content: base64,
    page_age: fc.oneof(fc.constant(null), fc.constantFrom('2 days ago', 'April 30, 2025')),
  },
  { requiredKeys: ['type', 'url', 'title', 'encrypted_content'] },
);

const serverTool: fc.Arbitrary<ServerToolSpec> = fc.oneof(
  record({
    name: fc.constant('web_search' as const),
    input: record({ query: text }),
    content: fc.oneof(
      fc.array(webSearchResult, { maxLength: 3 }),
      record({
        type: fc.constant('web_search_tool_result_error'),
        error_code: fc.constantFrom('max_uses_exceeded', 'unavailable'),
      }),
    ),
    extra: extraFields,
  }),
  record({
    name: fc.constant('web_fetch' as const),
    input: record({ url }),
    content: fc.oneof(
      record({
        type: fc.constant('web_fetch_result'),
        url,
        retrieved_at: fc.constant('2025-09-10T12:00:00Z'),
      }),
      record({
        type: fc.constant('web_fetch_tool_result_error'),
        error_code: fc.constant('url_not_accessible'),
      }),
    ),
    extra: extraFields,
  }),
);

interface ToolCallSpec {
  name: string;
  input: WireObject;
  extra: WireObject | undefined;
  cacheControl: WireObject | undefined;
}

const toolCall: fc.Arbitrary<ToolCallSpec> = record({
  name: toolName,
  input: toolInput,
  extra: extraFields,
  cacheControl: onceIn(6, cacheControl),
});

interface AssistantSpec {
  asString: string | undefined;
  thinking: WireObject | undefined;
  before: WireObject[];
  server: ServerToolSpec | undefined;
  after: WireObject[];
  calls: ToolCallSpec[];
  unknown: WireObject | undefined;
  extra: WireObject | undefined;
}

const assistantSpec: fc.Arbitrary<AssistantSpec> = record({
  asString: onceIn(4, text),
  thinking: onceIn(2, thinkingBlock),
  before: fc.array(textBlock, { maxLength: 2 }),
  server: onceIn(4, serverTool),
  after: fc.array(textBlock, { maxLength: 1 }),
  calls: fc.array(toolCall, { maxLength: 3 }),
  unknown: onceIn(10, unknownBlock),
  extra: extraFields,
});

const toolResultItem = fc.oneof(
  { weight: 6, arbitrary: textBlock },
  { weight: 2, arbitrary: imageBlock },
  { weight: 1, arbitrary: documentBlock },
);

/** A tool_result without its tool_use_id, which the assembly fills in. Content is now and then left out. */
const toolResultBody = withExtra(
  sometimes(
    record({
      type: fc.constant('tool_result' as const),
      content: fc.oneof(
        { weight: 7, arbitrary: fc.oneof(text, fc.array(toolResultItem, { maxLength: 3 })) },
        { weight: 1, arbitrary: fc.constant(undefined) },
      ),
    }).map(({ content, ...rest }) => (content === undefined ? rest : { ...rest, content })),
    { is_error: fc.boolean(), cache_control: cacheControl },
  ),
);

interface UserSpec {
  content: string | WireObject[];
  results: WireObject[];
  reversed: boolean;
  followUp: WireObject[] | undefined;
  orphan: WireObject | undefined;
  extra: WireObject | undefined;
}

const userSpec: fc.Arbitrary<UserSpec> = record({
  content: userContent as fc.Arbitrary<string | WireObject[]>,
  results: fc.array(toolResultBody, { minLength: 3, maxLength: 3 }),
  reversed: fc.boolean(),
  followUp: onceIn(2, fc.array(userBlock, { minLength: 1, maxLength: 2 })),
  orphan: onceIn(12, toolResultBody),
  extra: extraFields,
});

/** Builds the wire messages from the specs; tool ids come from a counter so they are unique. */
function assemble(
  first: UserSpec,
  turns: readonly [AssistantSpec, UserSpec][],
  last: AssistantSpec | undefined,
) {
  let counter = 0;
  const nextId = (prefix: string) => `${prefix}_${String(++counter).padStart(3, '0')}`;
  const messages: WireObject[] = [userMessage(first, [], nextId)];
  for (const [assistantTurn, userTurn] of turns) {
    const { message, callIds } = assistantMessage(assistantTurn, nextId);
    messages.push(message, userMessage(userTurn, callIds, nextId));
  }
  if (last !== undefined) messages.push(assistantMessage({ ...last, calls: [] }, nextId).message);
  return messages as unknown as AnthropicMessage[];
}

function message(role: 'user' | 'assistant', content: unknown, extra: WireObject | undefined): WireObject {
  return extra === undefined ? { role, content } : { role, content, ...extra };
}

function assistantMessage(spec: AssistantSpec, nextId: (prefix: string) => string) {
  const blocks: WireObject[] = [];
  if (spec.thinking !== undefined) blocks.push(spec.thinking);
  blocks.push(...spec.before);
  if (spec.server !== undefined) blocks.push(...serverToolBlocks(spec.server, nextId('srvtoolu')));
  blocks.push(...spec.after);
  const callIds = spec.calls.map(() => nextId('toolu'));
  spec.calls.forEach(({ name, input, extra, cacheControl }, order) => {
    const block: WireObject = { type: 'tool_use', id: callIds[order], name, input, ...extra };
    blocks.push(cacheControl === undefined ? block : { ...block, cache_control: cacheControl });
  });
  if (spec.unknown !== undefined) blocks.push(spec.unknown);
  // A plain reply is sometimes a string; tool calls always need blocks.
  const content = spec.asString !== undefined && callIds.length === 0 ? spec.asString : blocks;
  return { message: message('assistant', content, spec.extra), callIds };
}

function serverToolBlocks(spec: ServerToolSpec, id: string): WireObject[] {
  return [
    { type: 'server_tool_use', id, name: spec.name, input: spec.input },
    { type: `${spec.name}_tool_result`, tool_use_id: id, content: spec.content, ...spec.extra },
  ];
}

/** Answers every call at the start of the turn (in order or reversed), then sometimes more user blocks. */
function userMessage(
  spec: UserSpec,
  callIds: readonly string[],
  nextId: (prefix: string) => string,
): WireObject {
  const results = callIds.map((id, order) => ({
    ...spec.results[order % spec.results.length],
    tool_use_id: id,
  }));
  if (spec.reversed) results.reverse();
  if (spec.orphan !== undefined && callIds.length > 0)
    results.push({ ...spec.orphan, tool_use_id: nextId('orphan') });
  if (results.length === 0) return message('user', spec.content, spec.extra);
  return message('user', [...results, ...(spec.followUp ?? [])], spec.extra);
}

export interface AnthropicConversationOptions {
  /**
   * Most assistant-and-user turn pairs after the first user message.
   * @default 3
   */
  maxTurns?: number;
}

/** Anthropic message arrays: a user message, then assistant and user turns, sometimes a final assistant turn. */
export function anthropicMessages(
  options: AnthropicConversationOptions = {},
): fc.Arbitrary<AnthropicMessage[]> {
  const { maxTurns = 3 } = options;
  return fc
    .tuple(
      userSpec,
      fc.array(fc.tuple(assistantSpec, userSpec), { maxLength: maxTurns }),
      onceIn(3, assistantSpec),
    )
    .map(([first, turns, last]) => assemble(first, turns, last));
}

const systemBlock = withExtra(
  sometimes(record({ type: fc.constant('text' as const), text }), { cache_control: cacheControl }),
);

const system = fc.oneof(text, fc.array(systemBlock, { minLength: 1, maxLength: 3 }));

const inputSchema = fc.oneof(
  fc.constant({ type: 'object', properties: {} }),
  record({
    type: fc.constant('object'),
    properties: dictionary(
      fc.stringMatching(/^[a-z_]{1,8}$/),
      record({ type: fc.constantFrom('string', 'number', 'boolean') }),
      { maxKeys: 3 },
    ),
  }),
);

const customTool = withExtra(
  sometimes(record({ name: toolName, input_schema: inputSchema }), {
    description: text,
    cache_control: cacheControl,
    type: fc.constant('custom'),
  }),
);

const serverToolDefinition = fc.oneof(
  record(
    {
      type: fc.constant('web_search_20250305'),
      name: fc.constant('web_search'),
      max_uses: fc.integer({ min: 1, max: 10 }),
    },
    { requiredKeys: ['type', 'name'] },
  ),
  fc.constant({ type: 'web_fetch_20250910', name: 'web_fetch' }),
  fc.constant({ type: 'bash_20250124', name: 'bash' }),
);

/** Anthropic tool lists: mostly client tools, sometimes server tools. */
export function anthropicTools(): fc.Arbitrary<AnthropicTool[]> {
  return fc.array(
    fc.oneof({ weight: 3, arbitrary: customTool }, { weight: 1, arbitrary: serverToolDefinition }),
    {
      maxLength: 3,
    },
  ) as fc.Arbitrary<AnthropicTool[]>;
}

/** Full request bodies: model, system, messages, tools and request-level fields, each sometimes. */
export function anthropicRequest(
  options: AnthropicConversationOptions = {},
): fc.Arbitrary<AnthropicMessagesRequest> {
  return fc
    .tuple(
      anthropicMessages(options),
      sometimes(record({ max_tokens: fc.integer({ min: 1, max: 64_000 }) }), {
        model: fc.constantFrom('claude-sonnet-4-5', 'claude-opus-4-1', 'claude-haiku-4-5'),
        system,
        tools: anthropicTools(),
        temperature: fc.constantFrom(0, 0.5, 1),
        thinking: record({
          type: fc.constant('enabled'),
          budget_tokens: fc.integer({ min: 1024, max: 32_000 }),
        }),
        metadata: record({ user_id: fc.uuid() }),
        stream: fc.boolean(),
        tool_choice: fc.constantFrom({ type: 'auto' }, { type: 'any' }),
      }),
    )
    .map(([messages, fields]) => ({ ...fields, messages }) as AnthropicMessagesRequest);
}

/** Anthropic input as precis reads it: a request body or a bare message array. */
export function anthropicConversation(
  options: AnthropicConversationOptions = {},
): fc.Arbitrary<AnthropicMessagesRequest | AnthropicMessage[]> {
  return fc.oneof(
    { weight: 2, arbitrary: anthropicRequest(options) },
    { weight: 1, arbitrary: anthropicMessages(options) },
  );
}
