import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { messageConversation } from '../../../test/arbitraries/messages.js';
import { propertyRuns } from '../../../test/support/property-runs.js';
import {
  assistant,
  call,
  result,
  system,
  text,
  tool,
  user,
} from '../../../test/support/validity-builders.js';
import { InvalidArgumentError, InvalidMessageError } from '../../errors/index.js';
import { requestOnly, typedRequest } from '../content.js';
import type { Message, Part, ToolResultPart } from '../types.js';
import { repairMessages, repairPlaceholders } from './repair-messages.js';
import { validateMessages } from './validate-messages.js';
import { type RepairType, type ValidationTarget, validationTargets } from './validation-issue.js';

const placeholder = (toolCallId: string, toolName = 'bash'): ToolResultPart => ({
  type: 'tool-result',
  toolCallId,
  toolName,
  output: { type: 'error-text', value: '[no result recorded]' },
});

const repairTypesOf = (
  messages: Message[],
  provider: ValidationTarget = 'any',
  allowPendingToolCalls = false,
) =>
  repairMessages(messages, { provider, allowPendingToolCalls }).repairs.map(
    (repair) => `${repair.type}@${repair.index}`,
  );

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

describe('repairMessages', () => {
  it('returns a valid conversation unchanged, message for message, without repairs', () => {
    const conversation = [
      system(),
      user(),
      assistant(call('a'), call('b')),
      tool(result('b')),
      tool(result('a')),
    ];
    const { messages, repairs } = repairMessages(conversation);
    expect(repairs).toEqual([]);
    expect(messages).toEqual(conversation);
    expect(firstDifference(messages, conversation)).toBe(-1);
    expect(messages).not.toBe(conversation);
  });

  it('drops empty messages, then merges what the drop brought together (Anthropic only)', () => {
    const conversation = [user('a'), assistant(text('')), user('b', 'u2'), assistant(text('ok'))];
    const anthropic = repairMessages(conversation, { provider: 'anthropic' });
    expect(anthropic.messages).toEqual([user([text('a'), text('b')]), assistant(text('ok'))]);
    expect(anthropic.repairs).toEqual([
      { type: 'drop-empty-message', index: 1, description: expect.any(String) },
      { type: 'merge-messages', index: 2, id: 'u2', description: expect.stringContaining('user message 0') },
    ]);
    expect(repairMessages(conversation, { provider: 'openai' }).messages).toEqual([
      conversation[0],
      conversation[2],
      conversation[3],
    ]);
  });

  it('moves late system messages to the start in their order for Anthropic, not for OpenAI', () => {
    const late = system('late');
    const conversation = [
      system('first'),
      user(),
      assistant(call('a')),
      late,
      tool(result('a')),
      system('later'),
    ];
    const anthropic = repairMessages(conversation, { provider: 'anthropic' });
    expect(anthropic.messages).toEqual([
      system('first'),
      late,
      system('later'),
      user(),
      assistant(call('a')),
      tool(result('a')),
    ]);
    expect(anthropic.repairs.map((repair) => `${repair.type}@${repair.index}`)).toEqual([
      'move-system-message@3',
      'move-system-message@5',
    ]);
    // OpenAI takes system messages anywhere, but not between calls and results: the results move up instead.
    const openai = repairMessages(conversation, { provider: 'openai' });
    expect(openai.messages).toEqual([
      system('first'),
      user(),
      assistant(call('a')),
      tool(result('a')),
      late,
      system('later'),
    ]);
    expect(openai.repairs.map((repair) => repair.type)).toEqual(['move-tool-message']);
  });

  it('drops tool messages that come before any assistant message', () => {
    expect(repairMessages([tool(result('a')), user(), assistant(text('x'))]).messages).toEqual([
      user(),
      assistant(text('x')),
    ]);
    expect(repairTypesOf([tool(result('a')), user(), assistant(text('x'))], 'openai')).toEqual([
      'drop-leading-tool-message@0',
    ]);
  });

  it('drops orphaned results, and tool messages left empty by that', () => {
    const conversation = [user(), assistant(call('a')), tool(result('a'), result('b')), tool(result('c'))];
    const { messages, repairs } = repairMessages(conversation);
    expect(messages).toEqual([user(), assistant(call('a')), tool(result('a'))]);
    expect(repairs).toEqual([
      expect.objectContaining({ type: 'drop-orphaned-tool-result', index: 2, toolCallId: 'b' }),
      expect.objectContaining({ type: 'drop-orphaned-tool-result', index: 3, toolCallId: 'c' }),
      expect.objectContaining({ type: 'drop-empty-message', index: 3 }),
    ]);
    expect(messages[0]).toBe(conversation[0]);
    expect(messages[1]).toBe(conversation[1]);
  });

  it('drops orphaned inline results, and an assistant message left empty by that', () => {
    const conversation = [user(), assistant(text('a'), result('x')), user('more'), assistant(result('y'))];
    expect(repairMessages(conversation, { provider: 'openai' }).messages).toEqual([
      user(),
      assistant(text('a')),
      user('more'),
    ]);
    expect(repairTypesOf(conversation, 'openai')).toEqual([
      'drop-orphaned-tool-result@1',
      'drop-orphaned-tool-result@3',
      'drop-empty-message@3',
    ]);
  });

  it('keeps results of a dropped assistant message with the assistant message before it', () => {
    const conversation = [user(), assistant(call('a')), assistant(result('zzz')), tool(result('a'))];
    expect(repairMessages(conversation).messages).toEqual([user(), assistant(call('a')), tool(result('a'))]);
  });

  it('drops a second result for the same call', () => {
    const conversation = [user(), assistant(call('a')), tool(result('a', 'one')), tool(result('a', 'two'))];
    expect(repairMessages(conversation).messages).toEqual([
      user(),
      assistant(call('a')),
      tool(result('a', 'one')),
    ]);
    expect(repairTypesOf(conversation)).toEqual(['drop-duplicate-tool-result@3', 'drop-empty-message@3']);
  });

  it('moves results up past a user message that separates them from their calls', () => {
    const interruption = user('also check the docs');
    const conversation = [
      user(),
      assistant(call('a'), call('b')),
      tool(result('b')),
      interruption,
      tool(result('a')),
    ];
    for (const provider of validationTargets) {
      const { messages, repairs } = repairMessages(conversation, { provider });
      expect(messages).toEqual([
        user(),
        assistant(call('a'), call('b')),
        tool(result('b')),
        tool(result('a')),
        interruption,
      ]);
      expect(repairs).toEqual([expect.objectContaining({ type: 'move-tool-message', index: 4 })]);
    }
  });

  it('adds an explicit error result after the assistant turn for calls without one', () => {
    const conversation = [
      user(),
      assistant(call('a'), call('b', { toolName: 'read_file' }), call('c')),
      tool(result('a')),
      user('go on'),
    ];
    const { messages, repairs } = repairMessages(conversation);
    expect(messages).toEqual([
      user(),
      conversation[1],
      tool(result('a')),
      tool(placeholder('b', 'read_file'), placeholder('c')),
      user('go on'),
    ]);
    expect(repairs).toEqual([
      expect.objectContaining({ type: 'add-missing-tool-result', index: 1, toolCallId: 'b' }),
      expect.objectContaining({ type: 'add-missing-tool-result', index: 1, toolCallId: 'c' }),
    ]);
    expect(repairPlaceholders.missingToolResult).toBe('[no result recorded]');
  });

  it('leaves the calls of the last assistant message pending with allowPendingToolCalls', () => {
    const midTurn = [user(), assistant(call('a'), call('b')), tool(result('a'))];
    expect(repairMessages(midTurn, { allowPendingToolCalls: true })).toEqual({
      messages: midTurn,
      repairs: [],
    });
    expect(repairMessages(midTurn).messages.at(-1)).toEqual(tool(placeholder('b')));
    // Earlier assistant messages, and a last one a user message already followed, get results all the same.
    const earlier = [user(), assistant(call('a')), user('?'), assistant(call('b'))];
    expect(repairMessages(earlier, { allowPendingToolCalls: true }).messages).toEqual([
      user(),
      assistant(call('a')),
      tool(placeholder('a')),
      user('?'),
      assistant(call('b')),
    ]);
    expect(repairTypesOf([user(), assistant(call('a')), user('stop')], 'any', true)).toEqual([
      'add-missing-tool-result@1',
    ]);
  });

  it('renames a reused tool call id and the results answering it, avoiding ids in use', () => {
    const conversation = [
      user(),
      assistant(call('a'), call('a-2')),
      tool(result('a'), result('a-2')),
      user(),
      assistant(call('a'), { type: 'tool-approval-request', approvalId: 'p', toolCallId: 'a' }),
      tool(result('a', 'second')),
    ];
    const { messages, repairs } = repairMessages(conversation);
    expect(messages.slice(0, 4)).toEqual(conversation.slice(0, 4));
    expect(messages[4]).toEqual(
      assistant(call('a-3'), { type: 'tool-approval-request', approvalId: 'p', toolCallId: 'a-3' }),
    );
    expect(messages[5]).toEqual(tool(result('a-3', 'second')));
    expect(repairs).toEqual([
      expect.objectContaining({
        type: 'rename-tool-call',
        index: 4,
        toolCallId: 'a',
        description: expect.stringContaining('a-3'),
      }),
    ]);
  });

  it('pairs results with reused ids in one message in order', () => {
    const conversation = [
      user(),
      assistant(call('a'), call('a')),
      tool(result('a', 'first')),
      tool(result('a', 'second')),
    ];
    expect(repairMessages(conversation).messages).toEqual([
      user(),
      assistant(call('a'), call('a-2')),
      tool(result('a', 'first')),
      tool(result('a-2', 'second')),
    ]);
    // A renamed call without a result gets the placeholder under its new id.
    expect(
      repairMessages([user(), assistant(call('a'), call('a')), tool(result('a'))]).messages.at(-1),
    ).toEqual(tool(placeholder('a-2')));
  });

  it('starts an Anthropic conversation with a user message', () => {
    const conversation = [system(), assistant(text('Hello, how can I help?')), user('fix it')];
    const { messages, repairs } = repairMessages(conversation, { provider: 'anthropic' });
    expect(messages).toEqual([system(), user('[conversation continues]'), ...conversation.slice(1)]);
    expect(repairs).toEqual([expect.objectContaining({ type: 'insert-user-message', index: 1 })]);
    expect(repairMessages(conversation, { provider: 'openai' }).repairs).toEqual([]);
    expect(repairTypesOf([tool(result('a')), assistant(text('hi'))], 'anthropic')).toEqual([
      'drop-leading-tool-message@0',
      'insert-user-message@1',
    ]);
  });

  it('merges consecutive same-role messages for Anthropic, keeping the first id and any pin', () => {
    const conversation: Message[] = [
      { role: 'user', content: 'one', id: 'u1', metadata: { origin: 'cli' } },
      { role: 'user', content: [text('two')], id: 'u2', metadata: { pinned: true, origin: 'other' } },
      {
        role: 'user',
        content: 'three',
        providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } },
      },
      { role: 'assistant', content: 'a', id: 'a1' },
      assistant(text('b')),
    ];
    const { messages, repairs } = repairMessages(conversation, { provider: 'anthropic' });
    expect(messages).toEqual([
      {
        role: 'user',
        id: 'u1',
        content: [text('one'), text('two'), text('three')],
        metadata: { origin: 'cli', pinned: true },
        providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } },
      },
      { role: 'assistant', id: 'a1', content: [text('a'), text('b')] },
    ]);
    expect(repairs.map((repair) => [repair.type, repair.index, repair.id])).toEqual([
      ['merge-messages', 1, 'u2'],
      ['merge-messages', 2, undefined],
      ['merge-messages', 4, undefined],
    ]);
    expect(repairMessages(conversation, { provider: 'openai' }).repairs).toEqual([]);
  });

  it('merges a demonstration with the task after it into the task, and demonstrations alone into one', () => {
    const demo = (content: string): Message => ({ role: 'user', content, metadata: { demo: true } });
    const task: Message = { role: 'user', content: 'Fix the parser.', metadata: { origin: 'swe-agent' } };
    const [withTask] = repairMessages([demo('Here is a demonstration.'), task], {
      provider: 'anthropic',
    }).messages;
    expect(withTask).toMatchObject({ role: 'user', metadata: { origin: 'swe-agent' } });
    expect(withTask!.metadata).not.toHaveProperty('demo');
    const [demos] = repairMessages([demo('One demonstration.'), demo('Another.')], {
      provider: 'anthropic',
    }).messages;
    expect(demos!.metadata).toEqual({ demo: true });
  });

  it("merges a drop marker with the message after it into that message, not a stub (nor the marker's)", () => {
    const marker = (content: string, handle: string): Message => ({
      role: 'assistant',
      content,
      metadata: { origin: 'stub', strategy: 'drop-oldest-turns', handle },
    });
    const answer = {
      role: 'assistant',
      content: [{ type: 'text', text: 'The .env file is out of the repository now.' }],
      metadata: { origin: 'claude-code', uuid: 'a4510e3b' },
      id: 'msg-answer',
    } as Message;
    const request: Message = { role: 'user', content: 'Remove .env from the repository.' };
    const mergedAfterRequest = (...run: Message[]) => {
      const { messages } = repairMessages([request, ...run], { provider: 'anthropic' });
      expect(messages).toHaveLength(2);
      return messages[1]!;
    };
    const merged = mergedAfterRequest(marker('[2 earlier messages archived: h-9c20]', 'h-9c20'), answer);
    expect(merged.metadata).toEqual({ origin: 'claude-code', uuid: 'a4510e3b' });
    expect(merged.content).toHaveLength(2);
    // Its id too: the message an archive or a later step knows it by.
    expect((merged as { id?: string }).id).toBe('msg-answer');
    // Without an origin of its own, the content keeps none of the marker's fields.
    const bare = mergedAfterRequest(marker('[2 earlier messages archived: h-9c20]', 'h-9c20'), {
      ...answer,
      metadata: { uuid: 'a4510e3b' },
    });
    expect(bare.metadata).toEqual({ uuid: 'a4510e3b' });
    // Markers alone stay a marker (the first's).
    const markers = mergedAfterRequest(
      marker('[2 earlier messages archived: h-1]', 'h-1'),
      marker('[4 earlier messages archived: h-2]', 'h-2'),
    );
    expect(markers.metadata).toEqual({ origin: 'stub', strategy: 'drop-oldest-turns', handle: 'h-1' });
  });

  it('merges harness notes with the request after them into the request, which knows where it starts', () => {
    const note = (content: string): Message => ({ role: 'user', content, metadata: { harness: true } });
    const request: Message = {
      role: 'user',
      content: [{ type: 'text', text: 'Fix the parser.' }],
      metadata: { origin: 'claude-code' },
    };
    const run = [
      note('Caveat: local commands follow.'),
      note('<command-name>/clear</command-name>'),
      request,
    ];
    const [merged] = repairMessages(run, { provider: 'anthropic' }).messages;
    expect(merged!.metadata).toEqual({ origin: 'claude-code', requestPart: 2 });
    expect(requestOnly(merged!).content).toEqual(request.content);
    // Merged again with a note before it, the request still starts after every note.
    const [again] = repairMessages([note('Another note.'), merged!], { provider: 'anthropic' }).messages;
    expect(again!.metadata?.requestPart).toBe(3);
    expect(requestOnly(again!).content).toEqual(request.content);
    // A request first, or notes alone: no request part.
    const [first] = repairMessages([request, note('Later note.')], { provider: 'anthropic' }).messages;
    expect(first!.metadata).not.toHaveProperty('requestPart');
    expect(requestOnly(first!)).toBe(first);
    const [notes] = repairMessages([note('One.'), note('Two.')], { provider: 'anthropic' }).messages;
    expect(notes!.metadata).toEqual({ harness: true });
  });

  it('merges a command with the prompt it expanded to, which the request knows the start of', () => {
    const note: Message = {
      role: 'user',
      content: 'Caveat: local commands follow.',
      metadata: { harness: true },
    };
    const command: Message = {
      role: 'user',
      content: '<command-name>/review</command-name>',
      metadata: { origin: 'claude-code', command: '/review' },
    };
    const expansion: Message = {
      role: 'user',
      content: [
        { type: 'text', text: 'Review the diff.' },
        { type: 'text', text: 'List risks.' },
      ],
      metadata: { origin: 'claude-code', expansion: true },
    };
    const [merged] = repairMessages([note, command, expansion], { provider: 'anthropic' }).messages;
    expect(merged!.content).toHaveLength(4);
    expect(merged!.metadata).toEqual({
      origin: 'claude-code',
      command: '/review',
      requestPart: 1,
      expansionPart: 2,
    });
    // Merged again after another note, both starts move with it.
    const [again] = repairMessages([note, merged!], { provider: 'anthropic' }).messages;
    expect(again!.metadata).toMatchObject({ requestPart: 2, expansionPart: 3 });
    // An expansion alone is no request's, and one before a request is not the request's end.
    const [alone] = repairMessages([expansion, expansion], { provider: 'anthropic' }).messages;
    expect(alone!.metadata).toEqual({ origin: 'claude-code', expansion: true });
    const [first] = repairMessages([expansion, command], { provider: 'anthropic' }).messages;
    expect(first!.metadata).not.toHaveProperty('expansionPart');
    expect(first!.metadata).not.toHaveProperty('expansion');
  });

  it("keeps a format rejection's mark only on a merge of rejections alone", () => {
    const rejection = (text: string): Message => ({
      role: 'user',
      content: text,
      metadata: { harness: true, formatError: true },
    });
    const [both] = repairMessages([rejection('found 2 actions.'), rejection('found 3 actions.')], {
      provider: 'anthropic',
    }).messages;
    expect(both!.metadata).toMatchObject({ harness: true, formatError: true });
    const [mixed] = repairMessages([rejection('found 2 actions.'), { role: 'user', content: 'Try again.' }], {
      provider: 'anthropic',
    }).messages;
    expect(mixed!.metadata).not.toHaveProperty('formatError');
  });

  it('marks the parts harness notes put between two requests, and keeps the marks through a second merge', () => {
    const note = (text: string): Message => ({ role: 'user', content: text, metadata: { harness: true } });
    const [merged] = repairMessages(
      [
        note('Caveat.'),
        { role: 'user', content: 'Fix it.' },
        note('Output.'),
        { role: 'user', content: 'Again.' },
      ],
      { provider: 'anthropic' },
    ).messages;
    expect(merged!.metadata).toEqual({ requestPart: 1, harnessParts: [2] });
    const [again] = repairMessages([note('Another caveat.'), merged!], { provider: 'anthropic' }).messages;
    expect(again!.metadata).toEqual({ requestPart: 2, harnessParts: [3] });
    // Harness notes alone are one harness note, with no marks.
    const [notes] = repairMessages([note('One.'), note('Two.')], { provider: 'anthropic' }).messages;
    expect(notes!.metadata).toEqual({ harness: true });
  });

  it('ends the typed request where harness notes merged after it start, and keeps every file they read', () => {
    const request: Message = { role: 'user', content: 'Explain @src/a.ts and @src/b.ts.' };
    const read = (path: string): Message => ({
      role: 'user',
      content: `Called the Read tool with the following input: {"file_path":"${path}"}`,
      metadata: { harness: true, contextFiles: [path] },
    });
    const [merged] = repairMessages([request, read('src/a.ts'), read('src/b.ts')], {
      provider: 'anthropic',
    }).messages;
    expect(merged!.content).toHaveLength(3);
    expect(merged!.metadata).toEqual({
      expansionPart: 1,
      harnessParts: [1, 2],
      contextFiles: ['src/a.ts', 'src/b.ts'],
    });
    expect(typedRequest(merged!).content).toEqual([{ type: 'text', text: request.content }]);
    // Notes before the request are not its end.
    const [before] = repairMessages([read('src/a.ts'), request], { provider: 'anthropic' }).messages;
    expect(before!.metadata).toEqual({ requestPart: 1, contextFiles: ['src/a.ts'] });
  });

  it('merges an assistant message whose provider-executed calls are answered inline with the next one', () => {
    const server = call('s', { providerExecuted: true });
    const conversation = [user(), assistant(server, result('s')), assistant(call('a')), tool(result('a'))];
    expect(repairMessages(conversation).messages).toEqual([
      user(),
      assistant(server, result('s'), call('a')),
      tool(result('a')),
    ]);
  });

  it('never mutates its input', () => {
    const conversation = deepFreeze([
      tool(result('z')),
      user('', 'e'),
      assistant(call('a'), call('a')),
      user('x'),
      tool(result('a')),
      system(),
      user('y'),
    ]);
    const before = JSON.stringify(conversation);
    expect(() => repairMessages(conversation)).not.toThrow();
    expect(JSON.stringify(conversation)).toBe(before);
  });

  it('throws typed errors for bad input and options', () => {
    expect(() => repairMessages([{ role: 'user' }] as never)).toThrow(InvalidMessageError);
    expect(() => repairMessages([], { provider: 'OpenAI' as never })).toThrow(InvalidArgumentError);
  });
});

// Properties ---------------------------------------------------------------------------------------------

const runs = { numRuns: propertyRuns(5000) };
const targetArbitrary = fc.constantFrom(...validationTargets);

function isPlaceholderResult(part: Part): boolean {
  return (
    part.type === 'tool-result' &&
    part.output.type === 'error-text' &&
    part.output.value === repairPlaceholders.missingToolResult
  );
}

/** Every piece of text a message shows the model, one string each. */
function textsOf(message: Message): string[] {
  if (typeof message.content === 'string') return [message.content];
  return (message.content as Part[]).flatMap(textsOfPart);
}

function textsOfPart(part: Part): string[] {
  switch (part.type) {
    case 'text':
    case 'reasoning':
      return [part.text];
    case 'tool-call':
      return [JSON.stringify(part.input)];
    case 'tool-result':
      return [JSON.stringify(part.output)];
    default:
      return [];
  }
}

/** Index of the first message that is not the very same object, -1 when all are. */
function firstDifference(actual: readonly Message[], expected: readonly Message[]): number {
  const length = Math.max(actual.length, expected.length);
  for (let index = 0; index < length; index++) if (actual[index] !== expected[index]) return index;
  return -1;
}

describe('repairMessages properties', () => {
  it('makes any conversation valid for every provider', () => {
    fc.assert(
      fc.property(messageConversation(), (messages) => {
        const repaired = repairMessages(messages).messages;
        const issues = validationTargets.flatMap(
          (provider) => validateMessages(repaired, { provider }).issues,
        );
        expect(issues).toEqual([]);
      }),
      runs,
    );
  });

  it('makes any conversation valid for the provider it repairs for', () => {
    fc.assert(
      fc.property(
        messageConversation(),
        targetArbitrary,
        fc.boolean(),
        (messages, provider, allowPendingToolCalls) => {
          const repaired = repairMessages(messages, { provider, allowPendingToolCalls }).messages;
          expect(validateMessages(repaired, { provider, allowPendingToolCalls }).issues).toEqual([]);
        },
      ),
      runs,
    );
  });

  it('is idempotent', () => {
    fc.assert(
      fc.property(
        messageConversation(),
        targetArbitrary,
        fc.boolean(),
        (messages, provider, allowPendingToolCalls) => {
          const once = repairMessages(messages, { provider, allowPendingToolCalls });
          const twice = repairMessages(once.messages, { provider, allowPendingToolCalls });
          expect([twice.repairs, firstDifference(twice.messages, once.messages)]).toEqual([[], -1]);
        },
      ),
      runs,
    );
  });

  it('changes something exactly when validation finds an issue, and leaves valid conversations alone', () => {
    const conversations = fc.oneof(
      messageConversation(),
      messageConversation({ valid: true }),
      messageConversation({ valid: true, pendingToolCalls: true }),
    );
    fc.assert(
      fc.property(
        conversations,
        targetArbitrary,
        fc.boolean(),
        (messages, provider, allowPendingToolCalls) => {
          const options = { provider, allowPendingToolCalls };
          const { valid } = validateMessages(messages, options);
          const { messages: repaired, repairs } = repairMessages(messages, options);
          expect(repairs.length === 0).toBe(valid);
          expect(valid && firstDifference(repaired, messages) !== -1).toBe(false);
        },
      ),
      runs,
    );
  });

  it('invents no content other than the placeholders', () => {
    fc.assert(
      fc.property(messageConversation(), targetArbitrary, (messages, provider) => {
        const known = new Set(messages.flatMap(textsOf));
        known.add(repairPlaceholders.conversationStart);
        const texts = repairMessages(messages, { provider }).messages.flatMap((message) =>
          typeof message.content === 'string'
            ? [message.content]
            : (message.content as Part[]).flatMap((part) =>
                isPlaceholderResult(part) ? [] : textsOfPart(part),
              ),
        );
        expect(texts.filter((piece) => !known.has(piece))).toEqual([]);
      }),
      runs,
    );
  });

  it('keeps every surviving message id once, in order except for moved messages, and reports the others', () => {
    fc.assert(
      fc.property(messageConversation(), targetArbitrary, (messages, provider) => {
        const { messages: repaired, repairs } = repairMessages(messages, { provider });
        const inputIds = messages.flatMap((message) => (message.id === undefined ? [] : [message.id]));
        const outputIds = repaired.flatMap((message) => (message.id === undefined ? [] : [message.id]));
        const movedIds = new Set(
          repairs.filter((repair) => repair.type.startsWith('move-')).map((repair) => repair.id),
        );
        const stayed = (id: string) => !movedIds.has(id);
        const surviving = new Set(outputIds);
        const removing: RepairType[] = ['drop-empty-message', 'drop-leading-tool-message', 'merge-messages'];
        const removed = new Set(
          repairs.filter((repair) => removing.includes(repair.type)).map((repair) => repair.id),
        );
        expect({
          duplicated: outputIds.length - surviving.size,
          order: outputIds.filter(stayed),
          unreported: inputIds.filter((id) => !surviving.has(id) && !removed.has(id)),
        }).toEqual({
          duplicated: 0,
          order: inputIds.filter((id) => surviving.has(id) && stayed(id)),
          unreported: [],
        });
      }),
      runs,
    );
  });

  it('copies only messages it changes and never mutates its input', () => {
    fc.assert(
      fc.property(messageConversation(), targetArbitrary, (messages, provider) => {
        const before = JSON.stringify(messages);
        const byId = new Map(
          messages.flatMap((message) => (message.id === undefined ? [] : [[message.id, message]])),
        );
        const needlessCopies = repairMessages(deepFreeze(messages), { provider }).messages.filter(
          (message) => {
            const original = message.id === undefined ? undefined : byId.get(message.id);
            return (
              original !== undefined &&
              original !== message &&
              JSON.stringify(message) === JSON.stringify(original)
            );
          },
        );
        expect([needlessCopies, JSON.stringify(messages) === before]).toEqual([[], true]);
      }),
      runs,
    );
  });

  it('adds no placeholder to the last assistant turn with allowPendingToolCalls', () => {
    const conversations = fc.oneof(
      messageConversation(),
      messageConversation({ valid: true, pendingToolCalls: true }),
    );
    fc.assert(
      fc.property(conversations, targetArbitrary, (messages, provider) => {
        const repaired = repairMessages(messages, { provider, allowPendingToolCalls: true }).messages;
        const last = repaired.findLastIndex((message) => message.role === 'assistant');
        const after = repaired.slice(last + 1);
        if (last === -1 || after.some((message) => message.role !== 'tool')) return;
        expect(after.some((message) => (message.content as Part[]).some(isPlaceholderResult))).toBe(false);
      }),
      runs,
    );
  });

  it('answers every call of a pending turn once allowPendingToolCalls is off', () => {
    fc.assert(
      fc.property(messageConversation({ valid: true, pendingToolCalls: true }), (messages) => {
        const pending = repairMessages(messages, { allowPendingToolCalls: true }).repairs;
        const { messages: repaired, repairs } = repairMessages(messages);
        const lastAssistant = messages.findLastIndex((message) => message.role === 'assistant');
        const unexpected = repairs.filter(
          (repair) => repair.type !== 'add-missing-tool-result' || repair.index !== lastAssistant,
        );
        expect([pending, unexpected, validateMessages(repaired).valid]).toEqual([[], [], true]);
      }),
      runs,
    );
  });
});
