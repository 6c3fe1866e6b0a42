import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { propertyRuns } from '../../../test/support/property-runs.js';
import { InvalidMessageError } from '../../errors/index.js';
import { messageContentHash } from '../../messages/ids.js';
import { parseMessages } from '../../messages/parse.js';
import { createPromptKeyCache } from './prompt-key-cache.js';

type PromptMessage = Record<string, unknown>;

/** What the cache must return: every message checked and hashed, as the integrations did before it. */
function fullRead(prompt: readonly PromptMessage[]) {
  const messages = parseMessages(prompt);
  return { messages, keys: messages.map(messageContentHash) };
}

function outcome(read: () => { messages: unknown; keys: readonly string[] }) {
  try {
    const { messages, keys } = read();
    return { value: { messages, keys: [...keys] } };
  } catch (error) {
    if (!(error instanceof InvalidMessageError)) throw error;
    return { error: { message: error.message, index: error.index, path: error.path } };
  }
}

/** One step of a tool loop, as the AI SDK builds it: the call and its result. */
function toolStep(step: number): PromptMessage[] {
  return [
    {
      role: 'assistant',
      content: [
        { type: 'text', text: `Reading module ${step}.` },
        {
          type: 'tool-call',
          toolCallId: `call-${step}`,
          toolName: 'read_file',
          input: { path: `m${step}.ts` },
        },
      ],
    },
    {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: `call-${step}`,
          toolName: 'read_file',
          output: { type: 'text', value: `contents of m${step}.ts `.repeat(50) },
        },
      ],
    },
  ];
}

const text = fc.constantFrom('same', 'other', 'hi');
const message: fc.Arbitrary<PromptMessage> = fc.oneof(
  fc.record({ role: fc.constant('system'), content: text }),
  fc.record({
    role: fc.constant('user'),
    content: fc.oneof(text, fc.array(fc.record({ type: fc.constant('text'), text }), { maxLength: 2 })),
  }),
  fc.record({
    role: fc.constant('assistant'),
    content: fc.array(
      fc.oneof(
        fc.record({ type: fc.constant('text'), text }),
        fc.record({
          type: fc.constant('tool-call'),
          // A number is not a valid id: the error must name the same message as a full check.
          toolCallId: fc.oneof(
            { weight: 9, arbitrary: fc.constantFrom('c1', 'c2') },
            { weight: 1, arbitrary: fc.constant(7) },
          ),
          toolName: fc.constantFrom('zoom', 'crop'),
          input: fc.record({ path: text }),
        }),
      ),
      { maxLength: 2 },
    ),
  }),
  fc.record({
    role: fc.constant('tool'),
    content: fc.array(
      fc.record({
        type: fc.constant('tool-result'),
        toolCallId: fc.constantFrom('c1', 'c2'),
        toolName: fc.constantFrom('zoom', 'crop'),
        output: fc.record({ type: fc.constantFrom('text', 'error-text'), value: text }),
      }),
      { minLength: 1, maxLength: 2 },
    ),
  }),
);

/** How the prompt of the next call differs from the previous one. */
type Edit =
  | { type: 'append'; messages: PromptMessage[] }
  | { type: 'rebuild' | 'reorder-keys' | 'truncate'; at: number }
  | { type: 'replace'; at: number; message: PromptMessage }
  | { type: 'switch'; conversation: number };

const position = fc.nat({ max: 20 });
const edit: fc.Arbitrary<Edit> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      type: fc.constant('append' as const),
      messages: fc.array(message, { maxLength: 3 }),
    }),
  },
  fc.record({
    type: fc.constantFrom('rebuild' as const, 'reorder-keys' as const, 'truncate' as const),
    at: position,
  }),
  fc.record({ type: fc.constant('replace' as const), at: position, message }),
  fc.record({ type: fc.constant('switch' as const), conversation: fc.nat({ max: 3 }) }),
);

function apply(prompt: PromptMessage[], change: Edit): PromptMessage[] {
  const at = prompt.length === 0 ? 0 : 'at' in change ? change.at % prompt.length : 0;
  switch (change.type) {
    case 'append':
      return [...prompt, ...change.messages];
    case 'rebuild':
      // The middleware gets the conversation rebuilt as new objects on every call.
      return structuredClone(prompt);
    case 'reorder-keys':
      // The same message written with its keys in another order: a different object shape, the same hash.
      return prompt.map((item, index) =>
        index === at ? Object.fromEntries(Object.entries(item).reverse()) : item,
      );
    case 'truncate':
      return prompt.slice(0, at);
    case 'replace':
      return prompt.map((item, index) => (index === at ? change.message : item));
    default:
      return prompt;
  }
}

describe('createPromptKeyCache', () => {
  it('returns what checking and hashing every message returns, through any sequence of prompts', () => {
    fc.assert(
      fc.property(fc.array(edit, { minLength: 1, maxLength: 14 }), (edits) => {
        const cache = createPromptKeyCache({ maxPrompts: 2 });
        // Several conversations at once, more than the cache keeps.
        const conversations: PromptMessage[][] = [[], [], [], []];
        let current = 0;
        for (const change of edits) {
          if (change.type === 'switch') current = change.conversation;
          conversations[current] = apply(conversations[current]!, change);
          const prompt = conversations[current]!;
          const expected = outcome(() => fullRead(prompt));
          expect(outcome(() => cache.read(prompt))).toEqual(expected);
          if (expected.value !== undefined) expect(cache.read(prompt).messages).toBe(prompt);
        }
      }),
      { numRuns: propertyRuns(300) },
    );
  });

  it('checks and hashes each message of a 200-step loop once, though every prompt is rebuilt', () => {
    const cache = createPromptKeyCache();
    let prompt: PromptMessage[] = [
      { role: 'system', content: 'You are a careful coding agent.' },
      { role: 'user', content: [{ type: 'text', text: 'Read every module.' }] },
    ];
    for (let step = 0; step < 200; step++) {
      prompt = [...structuredClone(prompt), ...toolStep(step)];
      expect(cache.read(prompt).keys).toHaveLength(prompt.length);
    }
    // 402 messages, each checked and hashed once, where a full read of every prompt costs 40,600 of each.
    expect(cache.stats()).toEqual({ checkedMessages: 402, hashedMessages: 402 });
    expect(cache.read(prompt).keys).toEqual(fullRead(prompt).keys);
  });

  it('names the message and field of a bad prompt after a known prefix', () => {
    const cache = createPromptKeyCache();
    const prompt = [{ role: 'user', content: 'hi' }, ...toolStep(0)];
    cache.read(prompt);
    const bad = {
      role: 'assistant',
      content: [{ type: 'tool-call', toolCallId: 1, toolName: 'x', input: {} }],
    };
    expect(outcome(() => cache.read([...prompt, bad])).error).toMatchObject({
      index: 3,
      path: 'content[0].toolCallId',
    });
    expect(() => cache.read('not a prompt')).toThrow(InvalidMessageError);
  });
});
