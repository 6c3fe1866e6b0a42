import fc from 'fast-check';
import type {
  AssistantContentPart,
  AssistantMessage,
  Message,
  ReasoningPart,
  SystemMessage,
  TextPart,
  ToolContentPart,
  ToolMessage,
  ToolResultOutput,
  ToolResultPart,
  UserMessage,
} from '../../src/messages/types.js';

export interface MessageConversationOptions {
  /**
   * Only conversations valid for every provider: systems first, then a user message, alternating turns,
   * every tool call answered directly after its assistant message (results of parallel calls shuffled and
   * spread over one or more tool messages), unique tool call ids, no empty messages.
   * Otherwise valid conversations broken in every way the validator knows (see `brokenConversation`).
   * @default false
   */
  valid?: boolean;
  /**
   * With `valid`: end with an assistant message with tool calls and a random subset of their results
   * (often not all, which is valid only with `allowPendingToolCalls`).
   * @default false
   */
  pendingToolCalls?: boolean;
  /** @default 6 */
  maxTurns?: number;
}

/**
 * Conversations in the precis message model. No text in them contains `[`, so the repair placeholders
 * (`[no result recorded]`, `[conversation continues]`) never occur in generated input. Message ids, where
 * present, are unique.
 */
export function messageConversation(options: MessageConversationOptions = {}): fc.Arbitrary<Message[]> {
  const { valid = false, pendingToolCalls = false, maxTurns = 6 } = options;
  if (valid) return validConversation(pendingToolCalls, maxTurns);
  return fc.oneof(
    { weight: 4, arbitrary: brokenConversation(maxTurns) },
    { weight: 1, arbitrary: messageSoup(maxTurns * 3) },
  );
}

// Building blocks ---------------------------------------------------------------------------------------

const words = [
  'run the tests',
  'ok',
  'fix the bug',
  'done',
  'src/index.ts',
  'exit 1',
  '{"a":1}',
  ' ',
  'é',
  '\n',
];
const textArbitrary = fc.oneof(
  fc.constantFrom(...words),
  fc.string({ minLength: 1, maxLength: 12 }).filter((text) => !text.includes('[')),
);
const toolNameArbitrary = fc.constantFrom('read_file', 'bash', 'edit', 'search');

const outputArbitrary: fc.Arbitrary<ToolResultOutput> = fc.oneof(
  textArbitrary.map((value) => ({ type: 'text' as const, value })),
  textArbitrary.map((value) => ({ type: 'error-text' as const, value })),
  fc.record({ lines: fc.nat(100), path: textArbitrary }).map((value) => ({ type: 'json' as const, value })),
  textArbitrary.map((text) => ({ type: 'content' as const, value: [{ type: 'text' as const, text }] })),
);

const textPartArbitrary: fc.Arbitrary<TextPart> = textArbitrary.map((text) => ({ type: 'text', text }));

/** Non-empty reasoning: visible text, or an empty text that carries a signature or redacted data. */
const reasoningPartArbitrary: fc.Arbitrary<ReasoningPart> = fc.oneof(
  textArbitrary.map((text): ReasoningPart => ({ type: 'reasoning', text })),
  fc.constantFrom<ReasoningPart>(
    { type: 'reasoning', text: '', providerOptions: { anthropic: { signature: 'sig-1' } } },
    { type: 'reasoning', text: '', providerOptions: { anthropic: { redactedData: 'opaque' } } },
  ),
);

/** Empty by the validator's rules. */
const emptyContentArbitrary = fc.constantFrom<'' | TextPart[]>(
  '',
  [],
  [{ type: 'text', text: '' }],
  [
    { type: 'text', text: '' },
    { type: 'text', text: '' },
  ],
);

function userMessage(content: UserMessage['content']): UserMessage {
  return { role: 'user', content };
}

const userArbitrary: fc.Arbitrary<UserMessage> = fc.oneof(
  textArbitrary.map(userMessage),
  fc.array(textPartArbitrary, { minLength: 1, maxLength: 2 }).map(userMessage),
);

const systemArbitrary: fc.Arbitrary<SystemMessage> = textArbitrary.map((content) => ({
  role: 'system',
  content,
}));

/** `arbitrary`'s value once in `odds` draws, undefined otherwise. */
function sometimes<T>(arbitrary: fc.Arbitrary<T>, odds: number): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight: odds - 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });
}

function toolResult(toolCallId: string, toolName: string, output: ToolResultOutput): ToolResultPart {
  return { type: 'tool-result', toolCallId, toolName, output };
}

// Valid conversations ------------------------------------------------------------------------------------

/** One assistant message and the tool messages answering it, before call ids are assigned. */
interface StepDraft {
  lead: Array<TextPart | ReasoningPart>;
  stringContent: boolean;
  calls: Array<{
    toolName: string;
    input: { path: string };
    output: ToolResultOutput;
    orderKey: number;
    split: boolean;
  }>;
  serverCall: ToolResultOutput | undefined;
}

const stepArbitrary: fc.Arbitrary<StepDraft> = fc.record({
  lead: fc.array(fc.oneof(textPartArbitrary, reasoningPartArbitrary), { maxLength: 2 }),
  stringContent: fc.boolean(),
  calls: fc.array(
    fc.record({
      toolName: toolNameArbitrary,
      input: fc.record({ path: textArbitrary }),
      output: outputArbitrary,
      orderKey: fc.nat(),
      split: fc.boolean(),
    }),
    { maxLength: 3 },
  ),
  serverCall: sometimes(outputArbitrary, 4),
});

interface TurnDraft {
  user: UserMessage;
  steps: StepDraft[];
}

const turnArbitrary: fc.Arbitrary<TurnDraft> = fc.record({
  user: userArbitrary,
  steps: fc.array(stepArbitrary, { minLength: 1, maxLength: 3 }),
});

interface ConversationDraft {
  systems: SystemMessage[];
  turns: TurnDraft[];
  /** Which results of the final pending step to keep (pending conversations only). */
  pendingKeep: boolean[];
  /** Bit i % 31 set: message i has an id. */
  idMask: number;
}

function validConversation(pendingToolCalls: boolean, maxTurns: number): fc.Arbitrary<Message[]> {
  return fc
    .record({
      systems: fc.array(systemArbitrary, { maxLength: 2 }),
      turns: fc.array(turnArbitrary, { maxLength: maxTurns }),
      pendingKeep: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
      idMask: fc.nat(),
    })
    .map((draft) => buildValid(draft, pendingToolCalls));
}

function buildValid(draft: ConversationDraft, pendingToolCalls: boolean): Message[] {
  const messages: Message[] = [...draft.systems];
  let callCount = 0;
  const nextCallId = () => `call-${++callCount}`;
  draft.turns.forEach((turn, turnIndex) => {
    messages.push(turn.user);
    const isLastTurn = turnIndex === draft.turns.length - 1;
    turn.steps.forEach((step, stepIndex) => {
      const isLastStep = stepIndex === turn.steps.length - 1;
      const pending = pendingToolCalls && isLastTurn && isLastStep;
      // Only the last step of a turn may go without client-side calls: assistant after assistant is invalid.
      const calls = !isLastStep && step.calls.length === 0 ? [fallbackCall] : step.calls;
      const pendingCalls = pending && calls.length === 0 ? [fallbackCall] : calls;
      pushStep(messages, step, pendingCalls, nextCallId, pending ? draft.pendingKeep : undefined);
    });
  });
  if (pendingToolCalls && draft.turns.length === 0) {
    messages.push(userMessage('go'));
    pushStep(messages, emptyStep, [fallbackCall], nextCallId, draft.pendingKeep);
  }
  return withIds(messages, draft.idMask);
}

const fallbackCall: StepDraft['calls'][number] = {
  toolName: 'bash',
  input: { path: 'ls' },
  output: { type: 'text', value: 'README.md' },
  orderKey: 0,
  split: false,
};
const emptyStep: StepDraft = { lead: [], stringContent: false, calls: [], serverCall: undefined };

function pushStep(
  messages: Message[],
  step: StepDraft,
  calls: StepDraft['calls'],
  nextCallId: () => string,
  keep: boolean[] | undefined,
): void {
  const content: AssistantContentPart[] = [...step.lead];
  if (step.serverCall !== undefined) {
    const toolCallId = nextCallId();
    content.push(
      {
        type: 'tool-call',
        toolCallId,
        toolName: 'web_search',
        input: { query: 'x' },
        providerExecuted: true,
      },
      toolResult(toolCallId, 'web_search', step.serverCall),
    );
  }
  const answered = calls.map((call) => {
    const toolCallId = nextCallId();
    content.push({ type: 'tool-call', toolCallId, toolName: call.toolName, input: call.input });
    return { ...call, result: toolResult(toolCallId, call.toolName, call.output) };
  });
  if (content.length === 0) content.push({ type: 'text', text: 'ok' });
  const onlyText = content.length === 1 && content[0]!.type === 'text';
  const assistant: AssistantMessage = {
    role: 'assistant',
    content: step.stringContent && onlyText ? (content[0] as TextPart).text : content,
  };
  messages.push(assistant);

  const results = answered
    .filter((_call, callIndex) => keep === undefined || keep[callIndex] === true)
    .sort((a, b) => a.orderKey - b.orderKey);
  let current: ToolMessage | undefined;
  for (const call of results) {
    if (current === undefined || call.split) {
      current = { role: 'tool', content: [] };
      messages.push(current);
    }
    current.content.push(call.result);
  }
}

/** Gives message i a unique id when bit `i % 31` of `mask` is set; the others keep none. */
function withIds(messages: readonly Message[], mask: number): Message[] {
  return messages.map((message, index) => {
    const { id: _id, ...rest } = message;
    return (mask >> (index % 31)) & 1 ? ({ ...rest, id: `msg-${index}` } as Message) : (rest as Message);
  });
}

// Broken conversations -----------------------------------------------------------------------------------

/** Tool call ids shared by calls and results of random messages, so they often answer, clash or miss. */
const callIdArbitrary = fc.constantFrom('call-1', 'call-2', 'call-3', 'call-4', 'call-9', 'other');

const looseToolCallArbitrary = fc.record({
  type: fc.constant('tool-call' as const),
  toolCallId: callIdArbitrary,
  toolName: toolNameArbitrary,
  input: fc.record({ path: textArbitrary }),
});

/** A provider-executed call with its inline result, whose id sometimes does not match. */
const serverCallArbitrary = fc
  .record({ callId: callIdArbitrary, resultId: callIdArbitrary, same: fc.boolean(), output: outputArbitrary })
  .map(({ callId, resultId, same, output }): AssistantContentPart[] => [
    { type: 'tool-call', toolCallId: callId, toolName: 'web_search', input: {}, providerExecuted: true },
    toolResult(same ? callId : resultId, 'web_search', output),
  ]);

const looseAssistantArbitrary: fc.Arbitrary<AssistantMessage> = fc.oneof(
  textArbitrary.map((content): AssistantMessage => ({ role: 'assistant', content })),
  emptyContentArbitrary.map((content): AssistantMessage => ({ role: 'assistant', content })),
  fc
    .tuple(
      fc.array(fc.oneof(textPartArbitrary, reasoningPartArbitrary, looseToolCallArbitrary), { maxLength: 4 }),
      sometimes(serverCallArbitrary, 3),
      sometimes(
        callIdArbitrary.map(
          (toolCallId): AssistantContentPart => ({
            type: 'tool-approval-request',
            approvalId: 'ap-1',
            toolCallId,
          }),
        ),
        5,
      ),
      // An inline result without a provider-executed call.
      sometimes(fc.record({ toolCallId: callIdArbitrary, output: outputArbitrary }), 6),
    )
    .map(([parts, server, approval, inline]): AssistantMessage => {
      const content: AssistantContentPart[] = [...parts, ...(server ?? [])];
      if (approval !== undefined) content.push(approval);
      if (inline !== undefined) content.push(toolResult(inline.toolCallId, 'bash', inline.output));
      return { role: 'assistant', content };
    }),
);

const looseToolArbitrary: fc.Arbitrary<ToolMessage> = fc
  .array(
    fc.oneof(
      { weight: 6, arbitrary: fc.tuple(callIdArbitrary, toolNameArbitrary, outputArbitrary) },
      { weight: 1, arbitrary: fc.constant('approval' as const) },
    ),
    { maxLength: 3 },
  )
  .map((items) => ({
    role: 'tool',
    content: items.map(
      (item): ToolContentPart =>
        item === 'approval'
          ? { type: 'tool-approval-response', approvalId: 'ap-1', approved: true }
          : toolResult(...item),
    ),
  }));

/** Any single message, often empty, with call ids from a small shared pool. */
const looseMessageArbitrary: fc.Arbitrary<Message> = fc.oneof(
  systemArbitrary,
  { arbitrary: emptyContentArbitrary.map((content): UserMessage => userMessage(content)), weight: 1 },
  { arbitrary: fc.constant<SystemMessage>({ role: 'system', content: '' }), weight: 1 },
  { arbitrary: userArbitrary, weight: 3 },
  { arbitrary: looseAssistantArbitrary, weight: 4 },
  { arbitrary: looseToolArbitrary, weight: 4 },
);

/** Random messages in random order: mostly nonsense, the validator's worst case. */
function messageSoup(maxLength: number): fc.Arbitrary<Message[]> {
  return fc
    .tuple(fc.array(looseMessageArbitrary, { maxLength }), fc.nat())
    .map(([messages, mask]) => withIds(messages, mask));
}

type Mutation =
  | { kind: 'remove'; at: number }
  | { kind: 'duplicate'; at: number }
  | { kind: 'move'; at: number; to: number }
  | { kind: 'insert'; at: number; message: Message }
  | { kind: 'drop-part'; at: number; part: number }
  | { kind: 'swap-with-next'; at: number };

const mutationArbitrary: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('remove' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('duplicate' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('move' as const), at: fc.nat(), to: fc.nat() }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), message: looseMessageArbitrary }),
  fc.record({ kind: fc.constant('drop-part' as const), at: fc.nat(), part: fc.nat() }),
  fc.record({ kind: fc.constant('swap-with-next' as const), at: fc.nat() }),
);

/**
 * A valid (sometimes pending) conversation with a few random mutations: removed, duplicated, moved,
 * swapped and inserted messages, dropped parts. Between them they produce orphaned results, calls
 * without results, leading tool messages, late system messages, consecutive same-role messages, user
 * text between calls and results, empty messages and reused tool call ids.
 */
function brokenConversation(maxTurns: number): fc.Arbitrary<Message[]> {
  return fc
    .tuple(
      fc.boolean().chain((pending) => validConversation(pending, maxTurns)),
      fc.array(mutationArbitrary, { minLength: 1, maxLength: 4 }),
    )
    .map(([messages, mutations]) => uniqueIds(mutations.reduce(mutate, messages)));
}

function mutate(messages: Message[], mutation: Mutation): Message[] {
  const length = messages.length;
  const result = [...messages];
  if (mutation.kind === 'insert') {
    result.splice(mutation.at % (length + 1), 0, mutation.message);
    return result;
  }
  if (length === 0) return result;
  const at = mutation.at % length;
  const message = messages[at]!;
  switch (mutation.kind) {
    case 'remove':
      result.splice(at, 1);
      break;
    case 'duplicate':
      result.splice(at, 0, message);
      break;
    case 'move':
      result.splice(at, 1);
      result.splice(mutation.to % length, 0, message);
      break;
    case 'swap-with-next':
      if (at + 1 < length) [result[at], result[at + 1]] = [messages[at + 1]!, message];
      break;
    case 'drop-part':
      if (typeof message.content !== 'string' && message.content.length > 0) {
        const content = [...message.content];
        content.splice(mutation.part % content.length, 1);
        result[at] = { ...message, content } as Message;
      }
      break;
  }
  return result;
}

/** Duplicated messages share an id (and an object); give the later copies ids of their own. */
function uniqueIds(messages: readonly Message[]): Message[] {
  const seen = new Set<string>();
  return messages.map((message, index) => {
    if (message.id === undefined) return message;
    if (!seen.has(message.id)) {
      seen.add(message.id);
      return message;
    }
    const id = `${message.id}-copy-${index}`;
    seen.add(id);
    return { ...message, id };
  });
}
