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
import type { Message, Part } from '../types.js';
import { repairMessages } from './repair-messages.js';
import { validateMessages } from './validate-messages.js';
import { type ValidationTarget, validationTargets } from './validation-issue.js';

/** The issues as `type@index`, the shortest readable form. */
function issuesOf(messages: Message[], provider: ValidationTarget = 'any', allowPendingToolCalls = false) {
  return validateMessages(messages, { provider, allowPendingToolCalls }).issues.map(
    (issue) => `${issue.type}@${issue.index}`,
  );
}

describe('validateMessages', () => {
  it('accepts a well-formed conversation with parallel calls answered in any order', () => {
    const conversation = [
      system(),
      user(),
      assistant(text('looking'), call('a'), call('b'), call('c')),
      tool(result('c')),
      tool(result('a'), result('b')),
      user([text('thanks')]),
      { role: 'assistant', content: 'done' } as const,
    ];
    for (const provider of validationTargets) {
      expect(validateMessages(conversation, { provider })).toEqual({ valid: true, issues: [] });
    }
    expect(validateMessages([])).toEqual({ valid: true, issues: [] });
  });

  it('reports a result that answers no call of the preceding assistant message', () => {
    const { issues } = validateMessages([user(), assistant(call('a')), tool(result('a'), result('b'))]);
    expect(issues).toEqual([
      {
        type: 'orphaned-tool-result',
        index: 2,
        path: 'content[1]',
        toolCallId: 'b',
        message: expect.stringContaining('tool call b'),
      },
    ]);
  });

  it('pairs results with the nearest preceding assistant message only', () => {
    const conversation = [
      user(),
      assistant(call('a')),
      tool(result('a')),
      assistant(text('next')),
      tool(result('a')),
    ];
    expect(issuesOf(conversation, 'openai')).toEqual(['orphaned-tool-result@4']);
  });

  it('reports a second result for the same call', () => {
    expect(issuesOf([user(), assistant(call('a')), tool(result('a')), tool(result('a'))])).toEqual([
      'duplicate-tool-result@3',
    ]);
  });

  it('reports calls without results, with the path of the call', () => {
    const { issues } = validateMessages([user(), assistant(call('a'), call('b')), tool(result('a'))]);
    expect(issues).toEqual([
      expect.objectContaining({ type: 'missing-tool-result', index: 1, path: 'content[1]', toolCallId: 'b' }),
    ]);
  });

  it('accepts provider-executed calls answered inside the assistant message', () => {
    const server = call('s', { toolName: 'web_search', providerExecuted: true });
    expect(issuesOf([user(), assistant(server, { ...result('s'), toolName: 'web_search' })])).toEqual([]);
    // A provider-executed call without its inline result still needs a result.
    expect(issuesOf([user(), assistant(server)])).toEqual(['missing-tool-result@1']);
    // An inline result must answer a call of the same message.
    expect(issuesOf([user(), assistant(text('x'), result('zzz'))])).toEqual(['orphaned-tool-result@1']);
    // The inline result answers the call, so one in a tool message is a second result.
    expect(issuesOf([user(), assistant(server, result('s')), tool(result('s'))])).toEqual([
      'duplicate-tool-result@2',
    ]);
  });

  it('reports tool messages before the first assistant message, for every provider', () => {
    for (const provider of validationTargets) {
      expect(issuesOf([tool(result('a')), user(), assistant(text('x'))], provider)).toEqual([
        'leading-tool-message@0',
      ]);
    }
  });

  it('reports results separated from their calls by a user message, for every provider', () => {
    for (const provider of validationTargets) {
      expect(issuesOf([user(), assistant(call('a')), user('wait'), tool(result('a'))], provider)).toContain(
        'misplaced-tool-message@3',
      );
    }
  });

  it('treats a system message between calls and results per provider', () => {
    const conversation = [user(), assistant(call('a')), system(), tool(result('a'))];
    // OpenAI keeps the system message in place, where it splits the call from its result.
    expect(issuesOf(conversation, 'openai')).toEqual(['misplaced-tool-message@3']);
    // Anthropic moves it to the system prompt, after which the result follows its call directly.
    expect(issuesOf(conversation, 'anthropic')).toEqual(['misplaced-system-message@2']);
    expect(issuesOf(conversation, 'any')).toEqual(['misplaced-system-message@2']);
  });

  it('requires system messages at the start for Anthropic only', () => {
    const conversation = [system(), user(), system('late'), assistant(text('x'))];
    expect(issuesOf(conversation, 'openai')).toEqual([]);
    expect(issuesOf(conversation, 'anthropic')).toEqual(['misplaced-system-message@2']);
    expect(issuesOf(conversation, 'any')).toEqual(['misplaced-system-message@2']);
  });

  it('requires a user message first for Anthropic only', () => {
    const conversation = [system(), assistant(text('hello'))];
    expect(issuesOf(conversation, 'openai')).toEqual([]);
    expect(issuesOf(conversation, 'anthropic')).toEqual(['first-message-not-user@1']);
    expect(issuesOf([system()], 'anthropic')).toEqual([]);
  });

  it('requires alternating roles for Anthropic only, with tool messages on the user side', () => {
    const conversation = [user(), user(), assistant(text('a')), assistant(text('b'))];
    expect(issuesOf(conversation, 'openai')).toEqual([]);
    expect(issuesOf(conversation, 'anthropic')).toEqual([
      'consecutive-same-role@1',
      'consecutive-same-role@3',
    ]);
    const toolThenUser = [
      user(),
      assistant(call('a')),
      tool(result('a')),
      user('more'),
      assistant(text('ok')),
    ];
    expect(issuesOf(toolThenUser, 'anthropic')).toEqual([]);
  });

  it('reports empty messages, but not tool-call-only assistants or signed reasoning', () => {
    const signed = {
      type: 'reasoning' as const,
      text: '',
      providerOptions: { anthropic: { signature: 's' } },
    };
    const redacted = {
      type: 'reasoning' as const,
      text: '',
      providerOptions: { anthropic: { redactedData: 'r' } },
    };
    const conversation: Message[] = [
      user(''),
      user([]),
      user([text(''), text('')]),
      assistant({ type: 'reasoning', text: '' }),
      // Unlike content.ts, provider options do not make an empty text part content.
      assistant({ ...text(''), providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } }),
      { role: 'tool', content: [] },
      system(''),
    ];
    expect(issuesOf(conversation, 'openai')).toEqual(
      conversation.map((_message, index) => `empty-message@${index}`),
    );
    expect(issuesOf([user(), assistant(signed, call('a')), tool(result('a')), assistant(redacted)])).toEqual(
      [],
    );
  });

  it('sets empty messages aside when checking the other rules', () => {
    expect(issuesOf([user(), assistant(text('')), user('again')], 'anthropic')).toEqual([
      'empty-message@1',
      'consecutive-same-role@2',
    ]);
    expect(issuesOf([user(), assistant(call('a')), user(''), tool(result('a'))])).toEqual([
      'empty-message@2',
    ]);
  });

  it('reports a tool call id used before', () => {
    const conversation = [
      user(),
      assistant(call('a')),
      tool(result('a')),
      user(),
      assistant(call('a')),
      tool(result('a')),
    ];
    const { issues } = validateMessages(conversation);
    expect(issues).toEqual([
      expect.objectContaining({
        type: 'duplicate-tool-call-id',
        index: 4,
        path: 'content[0]',
        toolCallId: 'a',
      }),
    ]);
    expect(issuesOf([user(), assistant(call('a'), call('a')), tool(result('a'), result('a'))])).toEqual([
      'duplicate-tool-call-id@1',
    ]);
  });

  it('lets the last assistant message wait for results with allowPendingToolCalls', () => {
    const midTurn = [user(), assistant(call('a'), call('b')), tool(result('a'))];
    expect(issuesOf(midTurn, 'any', true)).toEqual([]);
    expect(issuesOf([user(), assistant(call('a'))], 'anthropic', true)).toEqual([]);
    expect(issuesOf(midTurn, 'any', false)).toEqual(['missing-tool-result@1']);
    // Only the last assistant message, and only while no user message followed it.
    expect(issuesOf([user(), assistant(call('a')), user(), assistant(call('b'))], 'any', true)).toEqual([
      'missing-tool-result@1',
    ]);
    expect(issuesOf([user(), assistant(call('a')), user('stop')], 'any', true)).toEqual([
      'missing-tool-result@1',
    ]);
  });

  it('orders issues by message index', () => {
    const { issues } = validateMessages([assistant(call('a')), user(''), system(), tool(result('b'))]);
    const indexes = issues.map((issue) => issue.index);
    expect(indexes).toEqual([...indexes].sort((a, b) => a - b));
    expect(issues.length).toBeGreaterThan(3);
  });

  it('throws a typed error for input that is not messages', () => {
    const bad = [user(), { role: 'robot', content: 'beep' }] as unknown as Message[];
    expect(() => validateMessages(bad)).toThrow(InvalidMessageError);
    try {
      validateMessages([
        user(),
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 7 }] },
      ] as never);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidMessageError);
      expect(error).toMatchObject({ index: 1, path: 'content[0].toolCallId' });
    }
    expect(() => validateMessages('nope' as never)).toThrow(InvalidMessageError);
  });

  it('throws a typed error for unknown options', () => {
    expect(() => validateMessages([], { provider: 'gemini' as never })).toThrow(InvalidArgumentError);
    expect(() => validateMessages([], { allowPendingToolCalls: 'yes' as never })).toThrow(
      /allowPendingToolCalls/,
    );
  });
});

// A reference checker written straight from the rules, quadratic and without the repair engine's view of the
// conversation, to check `validateMessages` against.

function referenceIsEmpty(message: Message): boolean {
  if (typeof message.content === 'string') return message.content === '';
  return (message.content as Part[]).every(
    (part) =>
      (part.type === 'text' && part.text === '') ||
      (part.type === 'reasoning' &&
        part.text === '' &&
        Object.values(part.providerOptions ?? {}).every((options) => Object.keys(options).length === 0)),
  );
}

const partsOf = (message: Message): Part[] =>
  typeof message.content === 'string' ? [] : (message.content as Part[]);
const callIdsOf = (message: Message) =>
  message.role === 'assistant'
    ? partsOf(message).flatMap((part) => (part.type === 'tool-call' ? [part.toolCallId] : []))
    : [];
const resultIdsOf = (message: Message) =>
  partsOf(message).flatMap((part) => (part.type === 'tool-result' ? [part.toolCallId] : []));

function referenceProblems(messages: Message[], provider: ValidationTarget, allowPending: boolean): string[] {
  const problems: string[] = [];
  const anthropic = provider !== 'openai';
  messages.forEach((message, index) => {
    if (referenceIsEmpty(message)) problems.push(`empty ${index}`);
  });
  const allCalls = messages.flatMap(callIdsOf);
  if (new Set(allCalls).size !== allCalls.length) problems.push('reused call id');
  const lastAssistant = messages.map((message) => message.role).lastIndexOf('assistant');
  messages.forEach((message, index) => {
    if (message.role === 'tool') {
      let before = index - 1;
      while (before >= 0 && messages[before]!.role === 'tool') before--;
      if (messages[before]?.role !== 'assistant') problems.push(`tool ${index} does not follow an assistant`);
    }
    if (message.role !== 'assistant') return;
    const calls = callIdsOf(message);
    const results = resultIdsOf(message);
    let after = index + 1;
    while (messages[after]?.role === 'tool') results.push(...resultIdsOf(messages[after++]!));
    for (const id of results) if (!calls.includes(id)) problems.push(`orphan ${id} after ${index}`);
    if (new Set(results).size !== results.length) problems.push(`duplicate result after ${index}`);
    const pending = allowPending && index === lastAssistant && after === messages.length;
    for (const id of calls) if (!results.includes(id) && !pending) problems.push(`missing ${id} of ${index}`);
  });
  if (anthropic) {
    const firstOther = messages.findIndex((message) => message.role !== 'system');
    if (firstOther !== -1) {
      if (messages.slice(firstOther).some((message) => message.role === 'system'))
        problems.push('late system');
      if (messages[firstOther]!.role !== 'user') problems.push('not user first');
    }
    messages.forEach((message, index) => {
      const previous = messages[index - 1];
      if (previous?.role === message.role && (message.role === 'user' || message.role === 'assistant')) {
        problems.push(`same role ${index}`);
      }
    });
  }
  return problems;
}

describe('validateMessages against the reference checker', () => {
  const options = fc.record({ provider: fc.constantFrom(...validationTargets), allowPending: fc.boolean() });

  it('agrees on arbitrary, mostly broken conversations', () => {
    fc.assert(
      fc.property(messageConversation(), options, (messages, { provider, allowPending }) => {
        const { valid } = validateMessages(messages, { provider, allowPendingToolCalls: allowPending });
        expect(valid).toBe(referenceProblems(messages, provider, allowPending).length === 0);
      }),
      { numRuns: propertyRuns(5000) },
    );
  });

  it('agrees that generated valid conversations are valid for every provider', () => {
    fc.assert(
      fc.property(messageConversation({ valid: true }), (messages) => {
        for (const provider of validationTargets) {
          expect(referenceProblems(messages, provider, false)).toEqual([]);
          expect(validateMessages(messages, { provider }).issues).toEqual([]);
        }
      }),
      { numRuns: propertyRuns(5000) },
    );
  });

  it('agrees that repaired conversations are valid', () => {
    fc.assert(
      fc.property(messageConversation(), options, (messages, { provider, allowPending }) => {
        const repaired = repairMessages(messages, { provider, allowPendingToolCalls: allowPending }).messages;
        expect(referenceProblems(repaired, provider, allowPending)).toEqual([]);
      }),
      { numRuns: propertyRuns(5000) },
    );
  });
});
