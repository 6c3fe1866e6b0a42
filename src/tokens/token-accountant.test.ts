import fc from 'fast-check';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { countTokens as countGpt4oChat } from 'gpt-tokenizer/model/gpt-4o';
import { describe, expect, it } from 'vitest';
import { propertyRuns } from '../../test/support/property-runs.js';
import { InvalidArgumentError, InvalidMessageError } from '../errors/index.js';
import type { Conversation, Message, ToolDefinition } from '../messages/types.js';
import { createCalibratedCounter } from './calibrated-counter.js';
import { createO200kCounter } from './o200k-counter.js';
import { providerFraming } from './provider-framing.js';
import { createTokenAccountant, defaultFileTokens, defaultImageTokens } from './token-accountant.js';
import type { TokenCounter } from './token-counter.js';

const bare = (text: string) => countTokens(text, { disallowedSpecial: new Set() });

/** A real o200k counter that also records what it was asked to count. */
function recordingCounter(): TokenCounter & { texts: string[] } {
  const inner = createO200kCounter();
  const texts: string[] = [];
  return {
    encodingName: inner.encodingName,
    texts,
    count(text) {
      texts.push(text);
      return inner.count(text);
    },
  };
}

const readInput = { path: 'src/index.ts' };
const readOutput = 'export const answer = 42;\n';
const bashInput = { command: 'npm test -- --run', timeoutMs: 60_000 };
const bashOutput = 'Tests: 12 passed, 0 failed\nDone in 3.2s';

/** A small agent turn with parallel tool calls: two reads and a shell command. */
function agentConversation(): Conversation {
  return {
    messages: [
      { role: 'system', content: 'You are a careful coding agent.' },
      { id: 'u1', role: 'user', content: 'Run the tests and show me src/index.ts and src/util.ts.' },
      {
        id: 'a1',
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'I should read both files and run the tests in parallel.' },
          { type: 'text', text: 'Reading the files and running the tests.' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'read_file', input: readInput },
          { type: 'tool-call', toolCallId: 'c2', toolName: 'read_file', input: { path: 'src/util.ts' } },
          { type: 'tool-call', toolCallId: 'c3', toolName: 'bash', input: bashInput },
        ],
      },
      {
        id: 't1',
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c1',
            toolName: 'read_file',
            output: { type: 'text', value: readOutput },
          },
          {
            type: 'tool-result',
            toolCallId: 'c2',
            toolName: 'read_file',
            output: { type: 'error-text', value: 'ENOENT: no such file' },
          },
          {
            type: 'tool-result',
            toolCallId: 'c3',
            toolName: 'bash',
            output: { type: 'json', value: { exitCode: 0, stdout: bashOutput } },
          },
        ],
      },
      { id: 'a2', role: 'assistant', content: 'All 12 tests pass; src/util.ts does not exist.' },
    ],
    tools: [
      {
        name: 'read_file',
        description: 'Read a UTF-8 file from the workspace.',
        inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      },
      {
        name: 'bash',
        inputSchema: {
          type: 'object',
          properties: { command: { type: 'string' }, timeoutMs: { type: 'number' } },
          required: ['command'],
        },
      },
    ],
  };
}

describe('createTokenAccountant: content', () => {
  it('counts string content exactly like the bare encoder', () => {
    const accountant = createTokenAccountant();
    const text = 'Hello, world! Ça va? 日本語 🚀 <|endoftext|>';
    expect(accountant.measureMessage({ role: 'user', content: text }).contentTokens).toBe(bare(text));
  });

  it('property: content equals the bare encoder over the text of every part', () => {
    const accountant = createTokenAccountant();
    const text = fc.string({ unit: 'grapheme', maxLength: 80 });
    fc.assert(
      fc.property(
        text,
        text,
        fc.string({ maxLength: 20 }),
        fc.dictionary(fc.string(), fc.string()),
        (a, b, name, input) => {
          const message: Message = {
            role: 'assistant',
            content: [
              { type: 'text', text: a },
              { type: 'reasoning', text: b },
              { type: 'tool-call', toolCallId: 'x', toolName: name, input },
            ],
          };
          const expected = bare(a) + bare(b) + bare(name) + bare(JSON.stringify(input));
          expect(accountant.measureMessage(message).contentTokens).toBe(expected);
        },
      ),
      { numRuns: propertyRuns(200) },
    );
  });

  it('counts tool results: text, JSON, content items and denials', () => {
    const accountant = createTokenAccountant();
    const message: Message = {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'a',
          toolName: 't',
          output: { type: 'text', value: 'plain output' },
        },
        {
          type: 'tool-result',
          toolCallId: 'b',
          toolName: 't',
          output: { type: 'json', value: { ok: [1, 2] } },
        },
        {
          type: 'tool-result',
          toolCallId: 'c',
          toolName: 't',
          output: {
            type: 'content',
            value: [
              { type: 'text', text: 'see the chart' },
              { type: 'image-url', url: 'https://example.com/chart.png' },
              { type: 'file-data', data: 'JVBERi0=', mediaType: 'application/pdf' },
            ],
          },
        },
        { type: 'tool-result', toolCallId: 'd', toolName: 't', output: { type: 'execution-denied' } },
      ],
    };
    expect(accountant.measureMessage(message).contentTokens).toBe(
      bare('plain output') +
        bare('{"ok":[1,2]}') +
        bare('see the chart') +
        defaultImageTokens.openai +
        defaultFileTokens +
        bare('Tool execution denied.'),
    );
  });

  it('estimates images and binary files, decodes text files, and takes configured estimates', () => {
    const csv = 'name,score\nada,10\ngrace,12\n';
    const message: Message = {
      role: 'user',
      content: [
        { type: 'image', image: new Uint8Array([137, 80, 78, 71]), mediaType: 'image/png' },
        { type: 'file', data: Buffer.from(csv).toString('base64'), mediaType: 'text/csv' },
        { type: 'file', data: new TextEncoder().encode(csv), mediaType: 'text/plain' },
        { type: 'file', data: 'https://example.com/report.pdf', mediaType: 'application/pdf' },
      ],
    };
    const openai = createTokenAccountant({ provider: 'openai' }).measureMessage(message);
    expect(openai.contentTokens).toBe(defaultImageTokens.openai + 2 * bare(csv) + defaultFileTokens);
    const anthropic = createTokenAccountant({ provider: 'anthropic' }).measureMessage(message);
    expect(anthropic.contentTokens).toBe(defaultImageTokens.anthropic + 2 * bare(csv) + defaultFileTokens);
    const configured = createTokenAccountant({ imageTokens: 85, fileTokens: 500 }).measureMessage(message);
    expect(configured.contentTokens).toBe(85 + 2 * bare(csv) + 500);
  });
});

describe('createTokenAccountant: countText', () => {
  it('counts a text like the counter, long or short, cached by content, and scaled when calibrated', () => {
    let calls = 0;
    const base = createO200kCounter();
    const counting = {
      encodingName: base.encodingName,
      count: (text: string) => {
        calls++;
        return base.count(text);
      },
    };
    const accountant = createTokenAccountant({ counter: counting });
    const long = 'src/retry.ts:12: expected 1180 to be at most 1000\n'.repeat(40);
    expect(accountant.countText(long)).toBe(base.count(long));
    expect(accountant.countText(long)).toBe(base.count(long));
    expect(calls).toBe(1);
    expect(accountant.countText('short text')).toBe(base.count('short text'));
    expect(accountant.countText('')).toBe(0);
    const calibrated = createCalibratedCounter({ base, initialRatio: 1.5 });
    expect(createTokenAccountant({ counter: calibrated }).countText(long)).toBe(
      Math.round(base.count(long) * 1.5),
    );
    expect(() => accountant.countText(42 as never)).toThrow(
      expect.objectContaining({ code: 'invalid-argument' }),
    );
  });
});

describe('createTokenAccountant: framing', () => {
  it('OpenAI: 3 per message plus the role, and 3 to prime the reply, as gpt-tokenizer encodes gpt-4o chats', () => {
    const chat = [
      { role: 'system', content: 'You are helpful.' },
      { role: 'user', content: 'Hello there, how are you?' },
      { role: 'assistant', content: 'Fine, thanks.' },
    ] as const;
    const count = createTokenAccountant().countConversation(chat.map((message) => ({ ...message })));
    expect(count.framingTokens).toBe(12);
    expect(count.replyPrimingTokens).toBe(3);
    expect(count.totalTokens).toBe(countGpt4oChat(chat.map((message) => ({ ...message }))));
  });

  it('OpenAI: +1 and the name for a named message, tool call and per-result framing', () => {
    const accountant = createTokenAccountant({ provider: 'openai' });
    const named: Message = { role: 'user', content: 'hi', providerOptions: { openai: { name: 'alice' } } };
    expect(accountant.measureMessage(named).framingTokens).toBe(4 + 1 + bare('alice'));
    const conversation = agentConversation();
    const [, , calls, results] = conversation.messages as [Message, Message, Message, Message];
    expect(accountant.measureMessage(calls).framingTokens).toBe(4 + 3 * 3);
    // Each result is its own `tool` message on the wire.
    expect(accountant.measureMessage(results).framingTokens).toBe(3 * 4);
  });

  it('Anthropic: documented estimates, overridable per accountant', () => {
    const conversation = agentConversation();
    const [, , calls, results] = conversation.messages as [Message, Message, Message, Message];
    const framing = providerFraming.anthropic;
    const accountant = createTokenAccountant({ provider: 'anthropic' });
    expect(accountant.measureMessage({ role: 'user', content: 'hi' }).framingTokens).toBe(
      framing.messageTokens,
    );
    expect(accountant.measureMessage(calls).framingTokens).toBe(
      framing.messageTokens + 3 * framing.toolCallTokens,
    );
    expect(accountant.measureMessage(results).framingTokens).toBe(
      framing.toolMessageTokens + 3 * framing.toolResultTokens,
    );
    const named: Message = { role: 'user', content: 'hi', providerOptions: { openai: { name: 'alice' } } };
    expect(accountant.measureMessage(named).framingTokens).toBe(framing.messageTokens);
    const tuned = createTokenAccountant({ provider: 'anthropic', framing: { messageTokens: 7 } });
    expect(tuned.measureMessage({ role: 'user', content: 'hi' }).framingTokens).toBe(7);
    expect(tuned.countConversation([{ role: 'user', content: 'hi' }]).replyPrimingTokens).toBe(
      framing.replyPrimingTokens,
    );
  });

  it('keeps content and framing separately countable', () => {
    const accountant = createTokenAccountant();
    const message: Message = { role: 'user', content: 'one two three' };
    const measured = accountant.measureMessage(message);
    expect(measured).toEqual({ contentTokens: 3, framingTokens: 4, totalTokens: 7 });
    expect(accountant.countMessage(message)).toBe(7);
  });
});

describe('createTokenAccountant: conversations', () => {
  it('counts tool schemas: name, description, JSON schema and per-tool and per-request overheads', () => {
    const { tools = [] } = agentConversation();
    const schemaTokens = (tool: ToolDefinition) =>
      bare(tool.name) + bare(tool.description ?? '') + bare(JSON.stringify(tool.inputSchema));
    const openai = createTokenAccountant({ provider: 'openai' });
    expect(openai.countTools(tools)).toBe(12 + tools.reduce((sum, tool) => sum + 7 + schemaTokens(tool), 0));
    const anthropic = createTokenAccountant({ provider: 'anthropic' });
    expect(anthropic.countTools(tools)).toBe(
      346 + tools.reduce((sum, tool) => sum + 8 + schemaTokens(tool), 0),
    );
    expect(openai.countTools([])).toBe(0);
  });

  it('breaks a conversation with parallel tool calls down by message, role and tool', () => {
    const conversation = agentConversation();
    const count = createTokenAccountant().countConversation(conversation);
    const readCalls =
      bare('read_file') * 2 + bare(JSON.stringify(readInput)) + bare('{"path":"src/util.ts"}');
    const readResults = bare(readOutput) + bare('ENOENT: no such file');
    expect(count.byTool.read_file).toEqual({
      callCount: 2,
      resultCount: 2,
      callTokens: readCalls + 2 * 3,
      resultTokens: readResults + 2 * 4,
      totalTokens: readCalls + readResults + 2 * 3 + 2 * 4,
    });
    const bashResult = bare(JSON.stringify({ exitCode: 0, stdout: bashOutput }));
    expect(count.byTool.bash).toEqual({
      callCount: 1,
      resultCount: 1,
      callTokens: bare('bash') + bare(JSON.stringify(bashInput)) + 3,
      resultTokens: bashResult + 4,
      totalTokens: bare('bash') + bare(JSON.stringify(bashInput)) + 3 + bashResult + 4,
    });
    expect(Object.keys(count.byTool).sort()).toEqual(['bash', 'read_file']);

    expect(count.messages.map((entry) => [entry.index, entry.id, entry.role])).toEqual([
      [0, undefined, 'system'],
      [1, 'u1', 'user'],
      [2, 'a1', 'assistant'],
      [3, 't1', 'tool'],
      [4, 'a2', 'assistant'],
    ]);
    expect('id' in (count.messages[0] ?? {})).toBe(false);
    expect(count.systemTokens).toBe(bare('You are a careful coding agent.') + 4);
    expect(count.byRole.system).toBe(count.systemTokens);
    expect(count.byRole.tool).toBe(count.messages[3]?.totalTokens);
    expect(count.byRole.tool).toBe(readResults + bashResult + 3 * 4);
    const sumOf = (values: number[]) => values.reduce((sum, value) => sum + value, 0);
    expect(sumOf(Object.values(count.byRole))).toBe(count.contentTokens + count.framingTokens);
    expect(sumOf(count.messages.map((entry) => entry.totalTokens))).toBe(
      count.contentTokens + count.framingTokens,
    );
    expect(count.toolSchemaTokens).toBe(createTokenAccountant().countTools(conversation.tools ?? []));
    expect(count.totalTokens).toBe(
      count.contentTokens + count.framingTokens + count.toolSchemaTokens + count.replyPrimingTokens,
    );
    // A bare message array is a conversation without tools.
    const bareCount = createTokenAccountant().countConversation(conversation.messages);
    expect(bareCount.toolSchemaTokens).toBe(0);
    expect(bareCount.totalTokens).toBe(count.totalTokens - count.toolSchemaTokens);
    // The total alone, without the breakdown, for either input, Anthropic framing too.
    expect(createTokenAccountant().countTotal(conversation)).toBe(count.totalTokens);
    expect(createTokenAccountant().countTotal(conversation.messages)).toBe(bareCount.totalTokens);
    const anthropic = createTokenAccountant({ provider: 'anthropic' });
    expect(anthropic.countTotal(conversation)).toBe(anthropic.countConversation(conversation).totalTokens);
  });

  it('counts an empty conversation as nothing', () => {
    const count = createTokenAccountant().countConversation([]);
    expect(count.totalTokens).toBe(0);
    expect(createTokenAccountant().countTotal({ messages: [], tools: [] })).toBe(0);
    expect(count.messages).toEqual([]);
  });
});

describe('createTokenAccountant: cache', () => {
  it('hits on a re-count and counts only the appended message after an append', () => {
    const counter = recordingCounter();
    const accountant = createTokenAccountant({ counter });
    const { messages } = agentConversation();
    const first = accountant.countConversation(messages);
    expect(accountant.stats()).toEqual({ hits: 0, misses: 5, entries: 5 });
    counter.texts.length = 0;
    const second = accountant.countConversation(messages);
    expect(second).toEqual(first);
    expect(accountant.stats()).toMatchObject({ hits: 5, misses: 5 });
    expect(counter.texts).toEqual([]);

    const appended: Message = { role: 'user', content: 'Now create src/util.ts.' };
    const third = accountant.countConversation([...messages, appended]);
    expect(counter.texts).toEqual(['Now create src/util.ts.']);
    expect(accountant.stats()).toMatchObject({ hits: 10, misses: 6 });
    expect(third.totalTokens).toBe(first.totalTokens + bare('Now create src/util.ts.') + 4);
  });

  it('shares long texts between messages and countText: an edited message re-counts only what changed', () => {
    const counter = recordingCounter();
    const accountant = createTokenAccountant({ counter });
    const output = 'FAIL src/retry.test.ts > retries: expected 1180 to be at most 1000\n'.repeat(20);
    const result: Message = {
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'c1', toolName: 'bash', output: { type: 'text', value: output } },
      ],
    };
    accountant.countMessage(result);
    expect(accountant.countText(output)).toBe(bare(output));
    const edited: Message = {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'short thought' },
        { type: 'text', text: output },
      ],
    };
    counter.texts.length = 0;
    expect(accountant.countMessage(edited)).toBe(bare('short thought') + bare(output) + 4);
    expect(counter.texts).toEqual(['short thought']);
    accountant.clearCache();
    counter.texts.length = 0;
    accountant.countText(output);
    expect(counter.texts).toEqual([output]);
  });

  it('hits for a copy with a new id or metadata, misses for changed content', () => {
    const counter = recordingCounter();
    const accountant = createTokenAccountant({ counter });
    const original: Message = {
      id: 'a',
      role: 'assistant',
      content: [{ type: 'text', text: 'same words' }],
      metadata: { pinned: true },
    };
    accountant.countMessage(original);
    accountant.countMessage({ ...original, id: 'b', metadata: { origin: 'import' } });
    expect(accountant.stats()).toMatchObject({ hits: 1, misses: 1 });
    accountant.countMessage(structuredClone(original));
    expect(accountant.stats()).toMatchObject({ hits: 2, misses: 1 });
    const changed = accountant.countMessage({
      ...original,
      content: [{ type: 'text', text: 'other words here' }],
    });
    expect(accountant.stats()).toMatchObject({ hits: 2, misses: 2 });
    expect(changed).toBe(bare('other words here') + 4);
    // The same parts under another role or with provider options: framed anew, the parts not counted again.
    const counted = counter.texts.length;
    expect(accountant.countMessage({ ...original, role: 'user' } as Message)).toBe(bare('same words') + 4);
    accountant.countMessage({
      ...original,
      providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } },
    });
    expect(counter.texts.length).toBe(counted);
    expect(accountant.stats()).toMatchObject({ hits: 4, misses: 2 });
  });

  it('counts only the new parts of a message rebuilt from counted ones', () => {
    const counter = recordingCounter();
    const accountant = createTokenAccountant({ counter });
    const call = { type: 'tool-call' as const, toolCallId: 'c1', toolName: 'bash', input: { command: 'ls' } };
    const reasoning = { type: 'reasoning' as const, text: 'Let me think about the listing first.' };
    const original: Message = {
      role: 'assistant',
      content: [reasoning, { type: 'text', text: 'Listing.' }, call],
    };
    const total = accountant.countMessage(original);
    const stub = { type: 'text' as const, text: '[reasoning archived]' };
    const rewritten: Message = { role: 'assistant', content: [stub, ...original.content.slice(1)] as never };
    counter.texts.length = 0;
    expect(accountant.countMessage(rewritten)).toBe(total - bare(reasoning.text) + bare(stub.text));
    expect(counter.texts).toEqual([stub.text]);
    expect(accountant.countMessage(rewritten)).toBe(createTokenAccountant().countMessage(rewritten));
  });

  it('notices content reassigned on the same object', () => {
    const accountant = createTokenAccountant();
    const message: Message = { role: 'user', content: 'short' };
    expect(accountant.countMessage(message)).toBe(bare('short') + 4);
    message.content = 'a rather longer sentence than before';
    expect(accountant.countMessage(message)).toBe(bare('a rather longer sentence than before') + 4);
  });

  it('keeps at most cacheSize entries, evicting the least recently used', () => {
    const accountant = createTokenAccountant({ cacheSize: 2 });
    const make = (text: string): Message => ({ role: 'user', content: text });
    accountant.countMessage(make('one'));
    accountant.countMessage(make('two'));
    accountant.countMessage(make('one')); // refreshes "one"
    accountant.countMessage(make('three')); // evicts "two"
    expect(accountant.stats()).toEqual({ hits: 1, misses: 3, entries: 2 });
    accountant.countMessage(make('one'));
    accountant.countMessage(make('two'));
    expect(accountant.stats()).toEqual({ hits: 2, misses: 4, entries: 2 });
    const uncached = createTokenAccountant({ cacheSize: 0 });
    const message = make('one');
    uncached.countMessage(message);
    uncached.countMessage(message);
    expect(uncached.stats()).toEqual({ hits: 0, misses: 2, entries: 0 });
    accountant.clearCache();
    expect(accountant.stats()).toEqual({ hits: 0, misses: 0, entries: 0 });
  });

  it('caches tool definitions too', () => {
    const counter = recordingCounter();
    const accountant = createTokenAccountant({ counter });
    const { tools = [] } = agentConversation();
    const first = accountant.countTools(tools);
    counter.texts.length = 0;
    expect(accountant.countTools(structuredClone(tools))).toBe(first);
    expect(counter.texts).toEqual([]);
  });

  it('applies a calibrated ratio to cached counts without re-counting', () => {
    const calibrated = createCalibratedCounter({ base: recordingCounter(), initialRatio: 1 });
    const accountant = createTokenAccountant({ counter: calibrated, provider: 'anthropic' });
    const text = 'word '.repeat(400);
    const message: Message = { role: 'user', content: text };
    expect(accountant.measureMessage(message).contentTokens).toBe(bare(text));
    calibrated.observe({ estimatedTokens: 1000, reportedTokens: 2000 });
    const ratio = calibrated.ratio;
    expect(ratio).toBeGreaterThan(1);
    expect(accountant.measureMessage({ ...message }).contentTokens).toBe(Math.round(bare(text) * ratio));
    expect(accountant.stats()).toMatchObject({ hits: 1, misses: 1 });
  });
});

describe('createTokenAccountant: errors', () => {
  it('names the message and field of a malformed message', () => {
    const accountant = createTokenAccountant();
    const cases: Array<[unknown, string]> = [
      [{ role: 'robot', content: 'hi' }, 'role'],
      [{ role: 'user', content: 42 }, 'content'],
      [{ role: 'user', content: [{ type: 'video', url: 'x' }] }, 'content[0].type'],
      [{ role: 'user', content: [{ type: 'text', text: 7 }] }, 'content[0].text'],
      [
        { role: 'assistant', content: [{ type: 'tool-call', toolName: 't', input: { n: 1n } }] },
        'content[0].input',
      ],
      [
        { role: 'tool', content: [{ type: 'tool-result', toolName: 't', output: { type: 'nope' } }] },
        'content[0].output.type',
      ],
    ];
    for (const [message, path] of cases) {
      let thrown: unknown;
      try {
        accountant.countConversation([{ role: 'user', content: 'fine' }, message as Message]);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(InvalidMessageError);
      expect(thrown).toMatchObject({ index: 1, path });
      expect(() => accountant.countTotal([{ role: 'user', content: 'fine' }, message as Message])).toThrow(
        expect.objectContaining({ index: 1, path }),
      );
    }
    expect(() => accountant.countConversation({} as Conversation)).toThrow(InvalidMessageError);
    expect(() => accountant.countTotal({} as Conversation)).toThrow(InvalidMessageError);
    const badTools = { messages: [], tools: 'none' } as unknown as Conversation;
    expect(() => accountant.countTotal(badTools)).toThrow(expect.objectContaining({ path: 'tools' }));
  });

  it('rejects nonsense options', () => {
    expect(() => createTokenAccountant({ cacheSize: -1 })).toThrow(InvalidArgumentError);
    expect(() => createTokenAccountant({ imageTokens: 1.5 })).toThrow(InvalidArgumentError);
    expect(() => createTokenAccountant({ framing: { messageTokens: -3 } })).toThrow(InvalidArgumentError);
    expect(() => createTokenAccountant({ provider: 'cohere' as 'openai' })).toThrow(InvalidArgumentError);
  });
});
