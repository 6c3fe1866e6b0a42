/**
 * fast-check arbitraries of OpenAI Chat Completions input as real clients and servers write it: system or
 * developer prompts, user turns with images, audio and files, assistant replies with text, refusals, reasoning and
 * parallel tool calls (arguments in odd but valid JSON and now and then invalid JSON), the tool messages that
 * answer them, legacy function calls, unicode, names, and extra fields precis does not know.
 *
 * Every known part is in the canonical form a converter can reproduce without keeping the raw wire part; only
 * part types no converter knows (`video_url`, ...) need that.
 */
import fc from 'fast-check';
import type {
  OpenAIChatMessage,
  OpenAIChatRequest,
  OpenAITool,
} from '../../src/messages/convert/openai-types.js';

type WireObject = Record<string, unknown>;

// JSON.parse never makes null-prototype objects, which fast-check generates by default.
function record<T>(
  model: { [K in keyof T]: fc.Arbitrary<T[K]> },
  constraints: { requiredKeys?: (keyof T)[] } = {},
) {
  const requiredKeys = constraints.requiredKeys ?? (Object.keys(model) as (keyof T)[]);
  return fc.record(model, { requiredKeys, noNullPrototype: true });
}

function dictionary<T>(
  key: fc.Arbitrary<string>,
  value: fc.Arbitrary<T>,
  constraints: fc.DictionaryConstraints = {},
) {
  return fc.dictionary(key, value, { ...constraints, noNullPrototype: true });
}

/** Names of extra fields: none of them is a field of the OpenAI format at any level. */
const extraFieldNames = ['x_trace_id', 'cache_control', 'extra_content', 'annotations', 'prefix'] as const;

const text: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom('', 'Hello, world!', 'héllo 👋🏽 世界', 'line one\nline two', 'ok'),
  },
);

/** Mostly none: real messages rarely carry fields beyond the format. */
const extraFields: fc.Arbitrary<WireObject | undefined> = fc.oneof(
  { weight: 5, arbitrary: fc.constant(undefined) },
  {
    weight: 1,
    arbitrary: dictionary(fc.constantFrom(...extraFieldNames), fc.jsonValue({ maxDepth: 2 }), {
      minKeys: 1,
      maxKeys: 2,
    }),
  },
);

/** Now and then adds unknown extra fields to what `arbitrary` generates. */
function withExtra<T extends WireObject>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T> {
  return fc
    .tuple(arbitrary, extraFields)
    .map(([value, extra]) => (extra === undefined ? value : { ...extra, ...value }));
}

const name = fc.constantFrom('alice', 'bob', 'agent_1', 'Zoë');
const base64 = fc.base64String({ maxLength: 24 });
const toolName = fc.constantFrom('get_weather', 'search', 'read_file', 'run_shell', 'outil_été');
const toolCallId = fc.stringMatching(/^call_[A-Za-z0-9]{6,10}$/);

const textPart = withExtra(record({ type: fc.constant('text' as const), text }));

const imageUrl = fc.oneof(
  fc.constantFrom('https://example.com/cat.png', 'http://img.test/a.jpg?size=large'),
  fc.webUrl(),
  fc
    .tuple(fc.constantFrom('image/png', 'image/jpeg', 'image/webp'), base64)
    .map(([type, data]) => `data:${type};base64,${data}`),
);

const imagePart = withExtra(
  record({
    type: fc.constant('image_url' as const),
    image_url: record(
      { url: imageUrl, detail: fc.constantFrom('auto', 'low', 'high') },
      { requiredKeys: ['url'] },
    ),
  }),
);

const audioPart = withExtra(
  record({
    type: fc.constant('input_audio' as const),
    input_audio: record({ data: base64, format: fc.constantFrom('wav', 'mp3') }),
  }),
);

const filename = fc.constantFrom('report.pdf', 'notes – final.pdf', 'a');
const filePart = withExtra(
  record({
    type: fc.constant('file' as const),
    file: fc.oneof(
      record(
        { file_data: base64.map((data) => `data:application/pdf;base64,${data}`), filename },
        { requiredKeys: ['file_data'] },
      ),
      record(
        { file_id: fc.stringMatching(/^file-[A-Za-z0-9]{4,12}$/), filename },
        { requiredKeys: ['file_id'] },
      ),
    ),
  }),
);

/** Part types from servers and future versions that no converter knows. */
const unknownPart: fc.Arbitrary<WireObject> = fc.oneof(
  record({
    type: fc.constant('video_url'),
    video_url: record({ url: fc.constant('https://example.com/v.mp4') }),
  }),
  record({ type: fc.constant('input_text_v2'), value: text, weight: fc.nat(9) }),
);

const userPart: fc.Arbitrary<WireObject> = fc.oneof(
  { weight: 4, arbitrary: textPart },
  { weight: 2, arbitrary: imagePart },
  { weight: 1, arbitrary: audioPart },
  { weight: 1, arbitrary: filePart },
  { weight: 1, arbitrary: unknownPart },
);

const systemMessage = withExtra(
  record(
    {
      role: fc.constantFrom('system' as const, 'developer' as const),
      content: fc.oneof(
        { weight: 4, arbitrary: text },
        { weight: 1, arbitrary: fc.array(textPart, { maxLength: 3 }) },
      ),
      name,
    },
    { requiredKeys: ['role', 'content'] },
  ),
);

const userMessage = withExtra(
  record(
    {
      role: fc.constant('user' as const),
      content: fc.oneof(
        { weight: 3, arbitrary: text },
        { weight: 2, arbitrary: fc.array(userPart, { maxLength: 4 }) },
      ),
      name,
    },
    { requiredKeys: ['role', 'content'] },
  ),
);

const argumentsObject = dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), {
  maxKeys: 4,
});

/** Arguments as models write them: mostly compact JSON, sometimes spaced or oddly formatted, rarely broken. */
const argumentsText: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: argumentsObject.map((value) => JSON.stringify(value)) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(argumentsObject, fc.constantFrom<string | number>(1, 2, '\t', ' '))
      .map(([value, indent]) => JSON.stringify(value, null, indent)),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '{"value": 1.0}',
      '{"n":1e3}',
      '{ "big": 12345678901234567890 }',
      '{"zero":-0}',
      '{"s":"\\u00e9t\\u00e9"}',
      '"just a string"',
      '[1, 2]',
    ),
  },
  { weight: 1, arbitrary: argumentsObject.map((value) => JSON.stringify(value).slice(0, -1)) },
  { weight: 1, arbitrary: fc.constantFrom('', 'not json', '{"unterminated": ') },
);

const toolResultContent: fc.Arbitrary<string | WireObject[]> = fc.oneof(
  { weight: 4, arbitrary: text },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.stringify(value)) },
  { weight: 1, arbitrary: fc.array(textPart, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.array(fc.oneof(textPart, unknownPart), { minLength: 1, maxLength: 2 }) },
);

interface ToolExchange {
  call: WireObject;
  result: WireObject;
}

const functionExchange: fc.Arbitrary<ToolExchange> = record({
  id: toolCallId,
  name: toolName,
  arguments: argumentsText,
  callExtra: extraFields,
  content: toolResultContent,
  resultExtra: extraFields,
}).map(({ id, name, arguments: argumentsValue, callExtra, content, resultExtra }) => ({
  call: { ...callExtra, id, type: 'function', function: { name, arguments: argumentsValue } },
  result: { ...resultExtra, role: 'tool', tool_call_id: id, content },
}));

const customExchange: fc.Arbitrary<ToolExchange> = record({ id: toolCallId, input: text, content: text }).map(
  ({ id, input, content }) => ({
    call: { id, type: 'custom', custom: { name: 'apply_patch', input } },
    result: { role: 'tool', tool_call_id: id, content },
  }),
);

const toolExchanges = fc.uniqueArray(
  fc.oneof({ weight: 6, arbitrary: functionExchange }, { weight: 1, arbitrary: customExchange }),
  { minLength: 1, maxLength: 3, selector: (exchange) => exchange.call.id },
);

const reasoning: fc.Arbitrary<WireObject> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({}) },
  { weight: 2, arbitrary: record({ reasoning_content: text }) },
  { weight: 1, arbitrary: record({ reasoning: text }) },
);

/** Fields an assistant message may have besides content and calls. */
const assistantFields: fc.Arbitrary<WireObject> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({}) },
  {
    weight: 1,
    arbitrary: record(
      {
        name,
        refusal: fc.constant(null),
        audio: fc.oneof(fc.constant(null), record({ id: fc.stringMatching(/^audio_[a-z0-9]{6}$/) })),
      },
      { requiredKeys: [] },
    ),
  },
);

const assistantContentPart: fc.Arbitrary<WireObject> = fc.oneof(
  { weight: 4, arbitrary: textPart },
  { weight: 1, arbitrary: withExtra(record({ type: fc.constant('refusal'), refusal: text })) },
  { weight: 1, arbitrary: unknownPart },
);

/** An assistant reply without tool calls. */
const assistantReply: fc.Arbitrary<WireObject[]> = fc
  .tuple(
    fc.oneof(
      { weight: 4, arbitrary: record({ content: text }) },
      { weight: 2, arbitrary: record({ content: fc.array(assistantContentPart, { maxLength: 3 }) }) },
      { weight: 1, arbitrary: record({ content: fc.constant(null), refusal: text }) },
      { weight: 1, arbitrary: record({ content: text, tool_calls: fc.constant([]) }) },
      // Pydantic-style dumps write every optional field, unset ones as null.
      {
        weight: 1,
        arbitrary: record({ content: text, tool_calls: fc.constant(null), function_call: fc.constant(null) }),
      },
    ),
    reasoning,
    assistantFields,
    extraFields,
  )
  .map(([content, thoughts, fields, extra]) => [
    { ...extra, ...fields, ...thoughts, role: 'assistant', ...content },
  ]);

const toolCallContent: fc.Arbitrary<WireObject> = fc.oneof(
  fc.constant({ content: null }),
  fc.constant({}),
  fc.constant({ content: '' }),
  record({ content: text }),
  record({ content: fc.array(textPart, { minLength: 1, maxLength: 2 }) }),
);

/** An assistant message calling tools (in parallel), then one tool message per call. */
const toolTurn: fc.Arbitrary<WireObject[]> = fc
  .tuple(toolCallContent, toolExchanges, reasoning, assistantFields, extraFields)
  .map(([content, exchanges, thoughts, fields, extra]) => [
    {
      ...extra,
      ...fields,
      ...thoughts,
      role: 'assistant',
      ...content,
      tool_calls: exchanges.map((e) => e.call),
    },
    ...exchanges.map((exchange) => exchange.result),
  ]);

/** The pre-tools protocol: an assistant `function_call` answered by a `function` message. */
const legacyFunctionTurn: fc.Arbitrary<WireObject[]> = record({
  name: toolName,
  arguments: argumentsText,
  content: fc.option(text, { nil: null }),
}).map(({ name: functionName, arguments: argumentsValue, content }) => [
  { role: 'assistant', content: null, function_call: { name: functionName, arguments: argumentsValue } },
  { role: 'function', name: functionName, content },
]);

/** A tool message whose call was cut off the front of the conversation. */
const orphanToolResult: fc.Arbitrary<WireObject[]> = record({
  id: toolCallId,
  content: toolResultContent,
}).map(({ id, content }) => [{ role: 'tool', tool_call_id: `orphan_${id}`, content }]);

const assistantStep: fc.Arbitrary<WireObject[]> = fc.oneof(
  { weight: 4, arbitrary: assistantReply },
  { weight: 4, arbitrary: toolTurn },
  { weight: 1, arbitrary: legacyFunctionTurn },
  { weight: 1, arbitrary: orphanToolResult },
);

const turn: fc.Arbitrary<WireObject[]> = fc
  .tuple(userMessage, fc.array(assistantStep, { maxLength: 2 }))
  .map(([user, steps]) => [user, ...steps.flat()]);

export interface OpenAIConversationOptions {
  /**
   * Most user turns (a user message and up to two assistant steps) in one conversation.
   * @default 4
   */
  maxTurns?: number;
}

/** OpenAI chat message arrays: an optional system or developer prompt, then user turns and assistant steps. */
export function openAIConversation(
  options: OpenAIConversationOptions = {},
): fc.Arbitrary<OpenAIChatMessage[]> {
  const { maxTurns = 4 } = options;
  return fc
    .tuple(fc.option(systemMessage, { nil: undefined, freq: 2 }), fc.array(turn, { maxLength: maxTurns }))
    .map(
      ([system, turns]) =>
        [...(system === undefined ? [] : [system]), ...turns.flat()] as OpenAIChatMessage[],
    );
}

const jsonSchemaProperty = record(
  { type: fc.constantFrom('string', 'number', 'boolean', 'integer'), description: text },
  { requiredKeys: ['type'] },
);

const parameters = fc.oneof(
  fc.constant({ type: 'object', properties: {} }),
  dictionary(fc.stringMatching(/^[a-z_]{1,10}$/), jsonSchemaProperty, { maxKeys: 3 }).chain((properties) =>
    record(
      {
        type: fc.constant('object'),
        properties: fc.constant(properties),
        required: fc.subarray(Object.keys(properties)),
        additionalProperties: fc.constant(false),
      },
      { requiredKeys: ['type', 'properties'] },
    ),
  ),
);

const functionTool = withExtra(
  record({
    type: fc.constant('function' as const),
    function: withExtra(
      record(
        { name: toolName, description: text, parameters, strict: fc.constantFrom(true, false, null) },
        { requiredKeys: ['name'] },
      ),
    ),
  }),
);

const customTool = record({
  type: fc.constant('custom' as const),
  custom: record(
    {
      name: fc.constant('apply_patch'),
      description: text,
      format: fc.constant({ type: 'grammar', grammar: { syntax: 'lark', definition: 'start: /.+/' } }),
    },
    { requiredKeys: ['name'] },
  ),
});

/** A tool type from a server extension (or the Responses API) that no converter models. */
const unknownTool = fc.constant({ type: 'web_search_preview', search_context_size: 'low' });

/** OpenAI tool lists: mostly function tools, sometimes custom or unknown tool types. */
export function openAITools(): fc.Arbitrary<OpenAITool[]> {
  return fc.array(
    fc.oneof(
      { weight: 6, arbitrary: functionTool },
      { weight: 1, arbitrary: customTool },
      { weight: 1, arbitrary: unknownTool },
    ),
    { maxLength: 4 },
  ) as fc.Arbitrary<OpenAITool[]>;
}

/** Full request bodies: model, messages, tools sometimes, and request-level fields. */
export function openAIRequest(options: OpenAIConversationOptions = {}): fc.Arbitrary<OpenAIChatRequest> {
  return record(
    {
      model: fc.constantFrom('gpt-4o', 'gpt-5-mini', 'deepseek-chat'),
      messages: openAIConversation(options),
      tools: openAITools(),
      temperature: fc.constantFrom(0, 0.2, 1),
      tool_choice: fc.oneof(
        fc.constantFrom('auto', 'none', 'required'),
        toolName.map((functionName) => ({ type: 'function', function: { name: functionName } })),
      ),
      stream: fc.boolean(),
      max_completion_tokens: fc.nat(100_000),
      metadata: dictionary(fc.stringMatching(/^[a-z]{1,6}$/), fc.string({ maxLength: 10 }), { maxKeys: 2 }),
    },
    { requiredKeys: ['messages'] },
  ).map((request) => request as OpenAIChatRequest);
}
