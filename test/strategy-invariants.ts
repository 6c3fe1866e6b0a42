import fc from 'fast-check';
import { expect } from 'vitest';
import { createMemoryArchive } from '../src/archive/archive-store.js';
import { requestOnly } from '../src/messages/content.js';
import { assignIds } from '../src/messages/ids.js';
import type { IdentifiedMessage, Message } from '../src/messages/types.js';
import { validateMessages } from '../src/messages/validate/index.js';
import type { Strategy, StrategyContext } from '../src/strategies/strategy.js';
import { createTokenAccountant, type TokenAccountant } from '../src/tokens/index.js';
import { messageConversation } from './arbitraries/messages.js';
import { propertyRuns } from './support/property-runs.js';

/**
 * The invariants every strategy keeps, checked by fast-check over generated conversations (see
 * `src/strategies/strategy.ts`): valid stays valid, preserved messages come out as the same objects (or with
 * only the parts before their request archived), every
 * action's handle expands to the original, messages no action names are returned untouched, the result is
 * deterministic and idempotent, and the conversation never grows.
 */
export interface StrategyInvariantOptions {
  /** Conversations to try; ids are assigned when missing. */
  conversations: fc.Arbitrary<Message[]>;
  numRuns?: number;
  accountant?: TokenAccountant;
  /** Replays one fast-check run (the seed a failure printed). */
  seed?: number;
}

const sharedAccountant = createTokenAccountant();

/** A strategy's context for a unit test: budget 0 (always over it), a fresh in-memory archive, nothing preserved. */
export function strategyContext(overrides: Partial<StrategyContext> = {}): StrategyContext {
  return {
    budgetTokens: 0,
    accountant: sharedAccountant,
    archive: createMemoryArchive(),
    preservedIds: new Set(),
    ...overrides,
  };
}

export function checkStrategyInvariants(strategy: Strategy, options: StrategyInvariantOptions): void {
  const { conversations, accountant = sharedAccountant, seed } = options;
  // PRECIS_PROPERTY_RUNS=N runs every strategy's invariants on at least N conversations (a long soak).
  const numRuns = propertyRuns(options.numRuns ?? 150);
  const scenario = conversations.chain((conversation) => {
    const messages = assignIds(conversation);
    return fc.record({
      messages: fc.constant(messages),
      preserved: fc.subarray(messages.map((message) => message.id)),
      budgetRatio: fc.double({ min: 0, max: 1.2, noNaN: true }),
    });
  });
  fc.assert(
    fc.property(scenario, ({ messages, preserved, budgetRatio }) => {
      const totalBefore = accountant.countConversation(messages).totalTokens;
      const context = (): StrategyContext => ({
        budgetTokens: Math.floor(totalBefore * budgetRatio),
        accountant,
        archive: createMemoryArchive(),
        preservedIds: new Set(preserved),
      });
      const first = context();
      const result = strategy.apply(messages, first);

      const check = { provider: 'any', allowPendingToolCalls: true } as const;
      if (validateMessages(messages, check).valid) {
        expect(validateMessages(result.messages, check).issues).toEqual([]);
      }
      const byId = new Map(messages.map((message) => [message.id, message]));
      const outputById = new Map(result.messages.map((message) => [message.id, message]));
      for (const id of preserved) {
        const original = byId.get(id)!;
        const kept = outputById.get(id);
        // The parts before a request (a framework's example or notes) are the one thing a strategy may archive.
        if (kept !== original) expect(requestPartOf(kept)).toEqual(requestPartOf(original));
      }

      const touched = new Set(result.actions.flatMap((action) => action.messageIds));
      for (const message of result.messages) {
        const original = byId.get(message.id);
        if (original !== undefined && !touched.has(message.id)) {
          expect(message).toBe(original);
        }
      }
      for (const action of result.actions) {
        expect(action.strategy).toBe(strategy.name);
        if (action.handle === undefined) continue;
        const entry = first.archive.get(action.handle);
        expect(entry).toBeDefined();
        if (entry === undefined) continue;
        if (entry.kind === 'messages') {
          for (const archived of entry.content as IdentifiedMessage[]) {
            expect(archived).toEqual(byId.get(archived.id));
          }
        } else {
          const originals = entry.messageIds.map((id) => JSON.stringify(byId.get(id)));
          expect(originals.some((text) => text.includes(JSON.stringify(entry.content)))).toBe(true);
        }
      }

      const totalAfter = accountant.countConversation(result.messages).totalTokens;
      expect(totalAfter).toBeLessThanOrEqual(totalBefore);

      expect(strategy.apply(messages, context())).toEqual(result);
      const again = strategy.apply(result.messages, first);
      expect(again.messages).toEqual(result.messages);
      expect(again.actions).toEqual([]);
    }),
    { numRuns, ...(seed === undefined ? {} : { seed }), ...replayedFailure() },
  );
  // A generator that never makes the strategy act would prove nothing. Counted on a fixed sample: how often a
  // random run acts varies from seed to seed far more than its size suggests (fast-check draws small values
  // first), and a count on the random runs failed now and then with nothing wrong.
  const sample = fc.sample(scenario, { numRuns, seed: 0x5eed });
  const acting = sample.filter(({ messages, preserved, budgetRatio }) => {
    const totalBefore = accountant.countConversation(messages).totalTokens;
    const context: StrategyContext = {
      budgetTokens: Math.floor(totalBefore * budgetRatio),
      accountant,
      archive: createMemoryArchive(),
      preservedIds: new Set(preserved),
    };
    return strategy.apply(messages, context).actions.length > 0;
  }).length;
  expect(acting).toBeGreaterThan(numRuns / 20);
}

/** A message without the parts before its request (and without `requestPart`), as the request must come out. */
function requestPartOf(message: Message | undefined): unknown {
  if (message === undefined) return undefined;
  const { requestPart, ...metadata } = message.metadata ?? {};
  expect(typeof requestPart).toBe('number');
  return { ...requestOnly(message), metadata };
}

const fillers = ['Great question! ', 'Sure! I would be happy to help. ', 'Absolutely! '];
const closers = [' Let me know if you need anything else!', '\n\nHope this helps!'];

function bigText(seed: number, lines: number, error: boolean): string {
  const body = Array.from(
    { length: lines },
    (_, line) => `line ${line} of output ${seed}: value=${(seed * 7 + line) % 13}`,
  );
  if (error)
    body.splice(
      Math.floor(lines / 2),
      0,
      'Traceback (most recent call last):',
      `ValueError: bad value ${seed}`,
    );
  return body.join('\n');
}

function prettyJson(seed: number, items: number): string {
  const value = Array.from({ length: items }, (_, index) => ({
    id: seed * 100 + index,
    name: `item ${index}`,
    note: index % 2 === 0 ? null : '',
    tags: index % 3 === 0 ? [] : ['a', 'b'],
    nested: { empty: {}, big: 1234567890, kept: index },
  }));
  return JSON.stringify(value, null, 2).replace('1234567890', '12345678901234567890');
}

/** Base64 of `bytes` pseudo-random bytes from `seed`: an image or key pasted into a message. */
export function base64Blob(seed: number, bytes: number): string {
  let state = seed + 1;
  const data = Uint8Array.from({ length: bytes }, () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state >> 16;
  });
  return Buffer.from(data).toString('base64');
}

/** `text` with a data URI of a few hundred bytes in its middle line. */
function withBlob(text: string, seed: number): string {
  const lines = text.split('\n');
  const middle = Math.floor(lines.length / 2);
  lines.splice(middle, 0, `<img src="data:image/png;base64,${base64Blob(seed, 200 + (seed % 7) * 150)}">`);
  return lines.join('\n');
}

function enrich(message: Message, choice: number, seed: number): Message {
  if (message.role === 'tool') {
    const content = message.content.map((part) => {
      if (part.type !== 'tool-result') return part;
      const isError = part.output.type === 'error-text' || part.output.type === 'error-json';
      const lines = 20 + (seed % 5) * 60;
      switch (choice) {
        case 0:
        case 1:
          return {
            ...part,
            output: { type: isError ? 'error-text' : 'text', value: bigText(seed, lines, choice === 1) },
          };
        case 2:
          return {
            ...part,
            output: { type: isError ? 'error-text' : 'text', value: prettyJson(seed, 3 + (seed % 20)) },
          };
        case 3:
          return {
            ...part,
            output: {
              type: isError ? 'error-json' : 'json',
              value: JSON.parse(prettyJson(seed, 2 + (seed % 10))),
            },
          };
        case 4:
          return {
            ...part,
            output: { type: isError ? 'error-text' : 'text', value: withBlob(bigText(seed, 8, false), seed) },
          };
        default:
          return part;
      }
    }) as typeof message.content;
    return { ...message, content };
  }
  if (message.role === 'user') {
    if (choice === 4) return withExample(message, seed);
    if (choice === 5 && typeof message.content === 'string')
      return { ...message, content: withBlob(message.content, seed) };
    return message;
  }
  if (message.role !== 'assistant') return message;
  const thought = `<think>${bigText(seed, 10, false)}</think>\n`;
  const decorate = (text: string) => {
    switch (choice) {
      case 0:
        return `${fillers[seed % fillers.length]}${text}`;
      case 1:
        return `${text}${closers[seed % closers.length]}`;
      case 2:
        return `${thought}${text}`;
      default:
        return text;
    }
  };
  if (typeof message.content === 'string') return { ...message, content: decorate(message.content) };
  const content = message.content.map((part, index) =>
    part.type === 'text' && index === 0 ? { ...part, text: decorate(part.text) } : part,
  );
  if (choice === 3) content.unshift({ type: 'reasoning', text: bigText(seed, 15, false) });
  // A call that writes a long file: a long string argument beside its short ones; some also carry a long
  // nested one (a MultiEdit's replacement), so that one call can have two texts to trim.
  if (choice === 4)
    return {
      ...message,
      content: content.map((part) =>
        part.type === 'tool-call'
          ? {
              ...part,
              input: {
                ...(part.input as object),
                content: bigText(seed, 20 + (seed % 5) * 60, false),
                ...(seed % 3 === 0
                  ? {
                      edits: [
                        { old_string: 'a', new_string: bigText(seed + 7, 20 + (seed % 4) * 50, false) },
                      ],
                    }
                  : {}),
              },
            }
          : part,
      ),
    };
  return { ...message, content };
}

/**
 * A user message with a worked example in front of its request, as OpenHands and merged SWE-agent
 * demonstrations have it (`metadata.requestPart`), sometimes too short to be worth a stub.
 */
function withExample(message: Message & { role: 'user' }, seed: number): Message {
  const example = `Here is an example of how to work.\n${bigText(seed, 2 + (seed % 4) * 20, false)}\n--- END OF EXAMPLE ---\n`;
  const request =
    typeof message.content === 'string'
      ? [{ type: 'text' as const, text: message.content }]
      : message.content;
  return {
    ...message,
    content: [{ type: 'text', text: example }, ...request],
    metadata: { ...message.metadata, requestPart: 1 },
  };
}

/**
 * Valid conversations (sometimes ending in pending tool calls) with big tool outputs (plain, with a
 * traceback, pretty JSON, JSON values), long tool-call arguments, filler, `<think>` spans, reasoning parts and
 * worked examples in front of user requests mixed in.
 */
export function richConversation(maxTurns = 5): fc.Arbitrary<Message[]> {
  return fc
    .boolean()
    .chain((pendingToolCalls) => messageConversation({ valid: true, pendingToolCalls, maxTurns }))
    .chain((messages) =>
      fc
        .array(fc.tuple(fc.nat(7), fc.nat(1000)), { minLength: messages.length, maxLength: messages.length })
        .map((choices) =>
          messages.map((message, index) => enrich(message, choices[index]![0], choices[index]![1])),
        ),
    );
}

/**
 * A failure fast-check reported, replayed alone: PRECIS_PROPERTY_SEED and PRECIS_PROPERTY_PATH are the `seed` and
 * `path` of its report (the generated conversations are random, so a rare counterexample shows once).
 */
function replayedFailure(): { seed: number; path?: string; endOnFailure: true } | Record<string, never> {
  const seed = process.env.PRECIS_PROPERTY_SEED;
  if (seed === undefined) return {};
  const path = process.env.PRECIS_PROPERTY_PATH;
  return { seed: Number(seed), ...(path === undefined ? {} : { path }), endOnFailure: true };
}
