import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from '@langchain/core/messages';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { propertyRuns } from '../../../test/support/property-runs.js';
import { InvalidMessageError } from '../../errors/index.js';
import { unknownToolName } from '../../messages/convert/placeholders.js';
import { assignIds, messageContentHash } from '../../messages/ids.js';
import { createLangChainMessageCache } from './langchain-message-cache.js';
import { fromLangChainMessages } from './langchain-messages.js';

/** What the cache must return: a full conversion, as the middleware did before it had one. */
function fullConversion(messages: readonly BaseMessage[]) {
  const converted = assignIds(fromLangChainMessages(messages));
  return { messages: converted, hashes: converted.map(messageContentHash) };
}

function outcome(convert: () => unknown) {
  try {
    return { value: convert() };
  } catch (error) {
    if (!(error instanceof InvalidMessageError)) throw error;
    return { error: { message: error.message, index: error.index, path: error.path } };
  }
}

function toolStep(step: number): BaseMessage[] {
  return [
    new AIMessage({
      id: `ai-${step}`,
      content: `Reading module ${step}.`,
      tool_calls: [
        { type: 'tool_call', id: `call-${step}`, name: 'read_file', args: { path: `m${step}.ts` } },
      ],
    }),
    new ToolMessage({ id: `tool-${step}`, tool_call_id: `call-${step}`, content: `contents of m${step}.ts` }),
  ];
}

// A given id equal to the id another message would derive: a later message can change an earlier derived id.
const derivedId = `m-${messageContentHash({ role: 'user', content: 'same' })}`;

type Spec =
  | { kind: 'human' | 'system'; text: string; id: string | undefined }
  | {
      kind: 'ai';
      text: string;
      id: string | undefined;
      calls: Array<{ id: string | undefined; name: string }>;
    }
  | {
      kind: 'tool';
      text: string;
      id: string | undefined;
      callId: string;
      name: string | undefined;
      error: boolean;
    };

const text = fc.constantFrom('same', 'other', 'hi');
const id = fc.constantFrom(undefined, undefined, undefined, 'a', 'b', derivedId, `${derivedId}-1`);
const callId = fc.constantFrom('c1', 'c2', 'c3');
const spec: fc.Arbitrary<Spec> = fc.oneof(
  fc.record({ kind: fc.constantFrom('human' as const, 'system' as const), text, id }),
  fc.record({
    kind: fc.constant('ai' as const),
    text,
    id,
    calls: fc.array(
      fc.record({
        // A call without an id cannot be converted: the error must name the same message as a full conversion.
        id: fc.oneof({ weight: 9, arbitrary: callId }, { weight: 1, arbitrary: fc.constant(undefined) }),
        name: fc.constantFrom('zoom', 'crop'),
      }),
      { maxLength: 2 },
    ),
  }),
  fc.record({
    kind: fc.constant('tool' as const),
    text,
    id,
    callId,
    name: fc.constantFrom(undefined, undefined, 'zoom'),
    error: fc.boolean(),
  }),
);

function build(spec: Spec): BaseMessage {
  const id = spec.id === undefined ? {} : { id: spec.id };
  switch (spec.kind) {
    case 'human':
      return new HumanMessage({ content: spec.text, ...id });
    case 'system':
      return new SystemMessage({ content: spec.text, ...id });
    case 'ai':
      return new AIMessage({
        content: spec.text,
        tool_calls: spec.calls.map((call) => ({
          type: 'tool_call' as const,
          name: call.name,
          args: {},
          ...(call.id === undefined ? {} : { id: call.id }),
        })),
        ...id,
      });
    default:
      return new ToolMessage({
        content: spec.text,
        tool_call_id: spec.callId,
        ...(spec.name === undefined ? {} : { name: spec.name }),
        ...(spec.error ? { status: 'error' as const } : {}),
        ...id,
      });
  }
}

/** How the agent's history changes between two model calls. */
type Edit =
  | { type: 'append'; specs: Spec[] }
  | { type: 'drop' | 'duplicate'; at: number }
  | { type: 'replace'; at: number; spec: Spec }
  | { type: 'reassign-content'; at: number; text: string }
  | { type: 'reassign-id'; at: number; id: string | undefined }
  | { type: 'restart'; specs: Spec[] };

const position = fc.nat({ max: 20 });
const edit: fc.Arbitrary<Edit> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ type: fc.constant('append' as const), specs: fc.array(spec, { maxLength: 3 }) }),
  },
  fc.record({ type: fc.constantFrom('drop' as const, 'duplicate' as const), at: position }),
  fc.record({ type: fc.constant('replace' as const), at: position, spec }),
  fc.record({ type: fc.constant('reassign-content' as const), at: position, text }),
  fc.record({ type: fc.constant('reassign-id' as const), at: position, id }),
  fc.record({ type: fc.constant('restart' as const), specs: fc.array(spec, { maxLength: 4 }) }),
);

function apply(list: BaseMessage[], change: Edit): BaseMessage[] {
  const at = list.length === 0 ? 0 : 'at' in change ? change.at % list.length : 0;
  const target = list[at];
  switch (change.type) {
    case 'append':
      return [...list, ...change.specs.map(build)];
    case 'restart':
      return change.specs.map(build);
    case 'drop':
      return list.filter((_, index) => index !== at);
    case 'duplicate':
      return target === undefined ? list : [...list, target];
    case 'replace':
      return list.map((message, index) => (index === at ? build(change.spec) : message));
    case 'reassign-content':
      // LangChain messages are mutable: an object the cache has seen may come back with a field reassigned.
      if (target !== undefined) target.content = change.text;
      return [...list];
    default:
      if (target !== undefined) Object.assign(target, { id: change.id });
      return [...list];
  }
}

describe('createLangChainMessageCache', () => {
  it('returns what a full conversion returns, through any edits of the history', () => {
    fc.assert(
      fc.property(
        fc.array(spec, { maxLength: 4 }),
        fc.array(edit, { minLength: 1, maxLength: 12 }),
        (initial, edits) => {
          const cache = createLangChainMessageCache();
          let list = initial.map(build);
          for (const change of [undefined, ...edits]) {
            if (change !== undefined) list = apply(list, change);
            const expected = outcome(() => fullConversion(list));
            expect(outcome(() => cache.convert(list))).toEqual(expected);
          }
        },
      ),
      { numRuns: propertyRuns(300) },
    );
  });

  it('converts and hashes each message of a 200-step loop once', () => {
    const cache = createLangChainMessageCache();
    let history: BaseMessage[] = [new HumanMessage({ id: 'task', content: 'Read every module.' })];
    for (let step = 0; step < 200; step++) {
      history = [...history, ...toolStep(step)];
      expect(cache.convert(history).messages).toHaveLength(history.length);
    }
    // 401 messages: converted and hashed once each, where converting the whole history each step costs 40,400.
    expect(cache.stats()).toEqual({ convertedMessages: 401, hashedMessages: 401 });

    // A history rewritten by a compaction: only the objects that were not seen are converted.
    const summary = new HumanMessage({ id: 'summary', content: 'Modules 0 to 189 were read.' });
    const compacted = [history[0]!, summary, ...history.slice(-20)];
    expect(cache.convert(compacted)).toEqual(fullConversion(compacted));
    expect(cache.stats()).toEqual({ convertedMessages: 402, hashedMessages: 402 });
    // A hash asked for a converted message is remembered, not computed again.
    const converted = cache.convert(compacted).messages;
    expect(converted.map(cache.hash)).toEqual(converted.map(messageContentHash));
    expect(cache.stats().hashedMessages).toBe(402);
  });

  it('converts a message again when a field it reads was reassigned', () => {
    const cache = createLangChainMessageCache();
    const message = new HumanMessage({ id: 'u', content: 'before' });
    cache.convert([message]);
    message.content = 'after';
    expect(cache.convert([message]).messages).toEqual([{ role: 'user', content: 'after', id: 'u' }]);
    expect(cache.stats().convertedMessages).toBe(2);
  });

  it('gives a tool message without a name the name of its call in each history', () => {
    const cache = createLangChainMessageCache();
    const zoom = new AIMessage({ id: 'a1', content: '', tool_calls: [{ id: 'c1', name: 'zoom', args: {} }] });
    const crop = new AIMessage({ id: 'a2', content: '', tool_calls: [{ id: 'c1', name: 'crop', args: {} }] });
    const result = new ToolMessage({ id: 't', tool_call_id: 'c1', content: 'done' });
    const toolNameIn = (messages: BaseMessage[]) => {
      const last = cache.convert(messages).messages.at(-1);
      return last?.role === 'tool'
        ? last.content[0]?.type === 'tool-result' && last.content[0].toolName
        : undefined;
    };
    expect(toolNameIn([zoom, result])).toBe('zoom');
    expect(toolNameIn([crop, result])).toBe('crop');
    expect(toolNameIn([result])).toBe(unknownToolName);
    expect(toolNameIn([zoom, result])).toBe('zoom');
  });

  it('names the message and field of bad input after a converted prefix', () => {
    const cache = createLangChainMessageCache();
    const history = [new HumanMessage({ id: 'u', content: 'hi' }), ...toolStep(0)];
    cache.convert(history);
    const bad = new AIMessage({ content: '', tool_calls: [{ name: 'read_file', args: {} }] });
    const error = outcome(() => cache.convert([...history, bad])).error;
    expect(error).toMatchObject({ index: 3, path: 'tool_calls[0].id' });
    expect(() => cache.convert('not a list' as never)).toThrow(InvalidMessageError);
  });
});
