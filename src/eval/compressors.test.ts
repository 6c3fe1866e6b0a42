import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { messageConversation } from '../../test/arbitraries/messages.js';
import { propertyRuns } from '../../test/support/property-runs.js';
import { createMemoryArchive } from '../archive/archive-store.js';
import { InvalidArgumentError } from '../errors/index.js';
import { fromOpenAI } from '../messages/convert/openai.js';
import type { Conversation, Message } from '../messages/types.js';
import { repairPlaceholders, validateMessages } from '../messages/validate/index.js';
import { uploadSession } from '../strategies/llm-strategies.test-support.js';
import { parseAnchoredSummary } from '../summary/index.js';
import { createTokenAccountant } from '../tokens/index.js';
import {
  type Compressor,
  compressorNames,
  createCompressor,
  createLoopCompressor,
  headTailCompressor,
  parseCompressorList,
  precisCompressor,
  truncationCompressor,
} from './compressors.js';
import { renderForProbes } from './fact-score.js';

const accountant = createTokenAccountant();
const examplePath = join(
  import.meta.dirname,
  '..',
  '..',
  'examples',
  'transcripts',
  'fix-retry-backoff.openai.json',
);
const example: Conversation = fromOpenAI(JSON.parse(readFileSync(examplePath, 'utf8')));
const tokens = (messages: readonly Message[]) => accountant.countConversation(messages).totalTokens;
const validity = { provider: 'any', allowPendingToolCalls: true } as const;

/** Tool call ids answered in a message list, to check no call lost its results. */
function pairs(messages: readonly Message[]) {
  const calls = new Set<string>();
  const results = new Set<string>();
  for (const message of messages) {
    if (typeof message.content === 'string') continue;
    for (const part of message.content) {
      if (part.type === 'tool-call') calls.add(part.toolCallId);
      if (part.type === 'tool-result') results.add(part.toolCallId);
    }
  }
  return { calls, results };
}

describe.each([truncationCompressor, headTailCompressor])('$name', (compressor: Compressor) => {
  it.each([0.05, 0.1, 0.3, 0.6])(
    'fits %s of the example, valid, keeping calls with their results',
    (share) => {
      const budget = Math.floor(tokens(example.messages) * share);
      const output = compressor.compress(example, budget, { accountant });
      expect(tokens(output)).toBeLessThanOrEqual(budget);
      expect(tokens(output)).toBeGreaterThan(budget * 0.5);
      expect(validateMessages(output, validity)).toEqual({ valid: true, issues: [] });
      const { calls, results } = pairs(output);
      expect([...calls].filter((id) => !results.has(id))).toEqual([]);
      // The system prompt is always the first message (the head of head+tail starts there too).
      expect(output[0]).toBe(example.messages[0]);
    },
  );

  it('returns the conversation unchanged when it fits', () => {
    const output = compressor.compress(example, tokens(example.messages), { accountant });
    expect(output).toEqual(example.messages);
  });

  it('is deterministic', () => {
    const budget = Math.floor(tokens(example.messages) * 0.2);
    expect(compressor.compress(example, budget, { accountant })).toEqual(
      compressor.compress(example, budget, { accountant }),
    );
  });

  it('on generated conversations: valid, within budget unless nothing but the system prompt is left', () => {
    fc.assert(
      fc.property(
        messageConversation({ valid: true, maxTurns: 8 }),
        fc.double({ min: 0, max: 1.2, noNaN: true }),
        (messages, share) => {
          const budget = Math.floor(tokens(messages) * share);
          const output = compressor.compress({ messages }, budget, { accountant });
          expect(validateMessages(output, validity).valid).toBe(true);
          const kept = output.filter((message) => message.role !== 'system');
          if (kept.length > 0) expect(tokens(output)).toBeLessThanOrEqual(budget);
          // Every kept message comes from the input, is a repair placeholder, or is the repair's merge of input
          // messages (head and tail meeting at two assistant messages).
          const inputParts = messages.flatMap((message): unknown[] =>
            typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content,
          );
          for (const message of output) {
            if (messages.includes(message) || message.role === 'user') continue;
            const parts = typeof message.content === 'string' ? [message.content] : message.content;
            for (const part of parts) expect(inputParts).toContainEqual(part);
          }
        },
      ),
      { numRuns: propertyRuns(300) },
    );
  });
});

describe('truncationCompressor', () => {
  it('keeps the most recent messages: its output ends like the input', () => {
    const budget = Math.floor(tokens(example.messages) * 0.1);
    const output = truncationCompressor.compress(example, budget, { accountant });
    expect(output.at(-1)).toBe(example.messages.at(-1));
    // Repair may put a `[conversation continues]` user message before a tail that starts with the assistant.
    const tail = output
      .slice(1)
      .filter((message) => message.content !== repairPlaceholders.conversationStart);
    expect(tail.length).toBeGreaterThanOrEqual(output.length - 2);
    expect(tail).toEqual(example.messages.slice(example.messages.length - tail.length));
  });
});

describe('headTailCompressor', () => {
  it('keeps the start (system prompt and task) and the end', () => {
    const budget = Math.floor(tokens(example.messages) * 0.1);
    const output = headTailCompressor.compress(example, budget, { accountant });
    expect(output.slice(0, 2)).toEqual(example.messages.slice(0, 2));
    expect(output.at(-1)).toBe(example.messages.at(-1));
  });
});

describe('the strategy registry', () => {
  it('names every strategy after itself, and the baselines are the shared instances', () => {
    for (const name of compressorNames) expect(createCompressor(name).name).toBe(name);
    expect(createCompressor('truncation')).toBe(truncationCompressor);
    expect(createCompressor('precis')).toBe(precisCompressor);
  });

  it('pipeline variants fit the budget; extractive drops instead of folding into a summary', () => {
    const budget = Math.floor(tokens(example.messages) * 0.1);
    const outputs = Object.fromEntries(
      (['precis', 'extractive', 'stubs-only'] as const).map((name) => [
        name,
        createCompressor(name).compress(example, budget, { accountant }),
      ]),
    );
    for (const output of Object.values(outputs)) {
      expect(tokens(output)).toBeLessThanOrEqual(budget);
      expect(validateMessages(output, validity).valid).toBe(true);
    }
    const origins = (messages: Message[]) => messages.map((message) => message.metadata?.origin);
    expect(origins(outputs.precis!)).toContain('summary');
    expect(origins(outputs.extractive!)).not.toContain('summary');
    expect(origins(outputs['stubs-only']!)).not.toContain('summary');
    // The variants really differ from each other.
    expect(new Set(Object.values(outputs).map((output) => renderForProbes(output))).size).toBe(3);
  });

  it('reads a comma-separated list; an unknown name lists the known ones', () => {
    expect(parseCompressorList('truncation, precis,stubs-only').map((compressor) => compressor.name)).toEqual(
      ['truncation', 'precis', 'stubs-only'],
    );
    expect(() => parseCompressorList('precis,magic')).toThrow(InvalidArgumentError);
    expect(() => parseCompressorList('precis,magic')).toThrow(
      'strategies: unknown strategy "magic": expected one of truncation, head+tail, precis, extractive, stubs-only, precis-loop, full',
    );
    expect(() => parseCompressorList('precis,,truncation')).toThrow(/empty name/);
    expect(() => parseCompressorList('precis,precis')).toThrow(/precis is given twice/);
  });

  it('names the option the list came from in every error', () => {
    const errorOf = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        return error;
      }
      return expect.unreachable();
    };
    for (const list of ['precis,magic', 'precis,,truncation', 'precis,precis']) {
      const error = errorOf(() => parseCompressorList(list, '--strategies'));
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error).toMatchObject({ option: '--strategies' });
      expect((error as Error).message).toMatch(/^--strategies: /);
    }
    expect(errorOf(() => parseCompressorList('magic'))).toMatchObject({ option: 'strategies' });
    expect(errorOf(() => createCompressor('magic', 'compressors'))).toMatchObject({
      option: 'compressors',
      message: expect.stringMatching(/^compressors: unknown strategy "magic"/),
    });
  });
});

describe('createLoopCompressor', () => {
  it('replays the conversation as an agent loop: compacts again and again, merging into one summary', () => {
    const input: Conversation = { messages: uploadSession(24) };
    const budget = Math.floor(tokens(input.messages) * 0.05);
    const archive = createMemoryArchive();
    const output = createLoopCompressor({ archive }).compress(input, budget, { accountant });
    expect(tokens(output)).toBeLessThanOrEqual(budget);
    expect(validateMessages(output, validity).valid).toBe(true);
    const summaries = output.filter((message) => message.metadata?.origin === 'summary');
    expect(summaries).toHaveLength(1);
    // Each merge's index starts with the index of the summary before it: follow them back to the first fold.
    let handle = summaries[0]!.metadata!.handle as string;
    let folds = 0;
    for (let entry = archive.get(handle); entry?.kind === 'index'; entry = archive.get(handle)) {
      folds++;
      handle = (entry.content as string[])[0]!;
    }
    expect(folds).toBeGreaterThan(2);
    // The first turn, folded in the first compaction, is still in the record after every later one.
    const record = parseAnchoredSummary(summaries[0]!.metadata!.summary)!;
    expect(record.commands.join('\n')).toContain('npm test -- upload-0');
    expect(record.files.map((file) => file.path)).toContain('src/upload/part-0.ts');
    expect(createLoopCompressor().compress(input, budget, { accountant })).toEqual(output);
    expect(createCompressor('precis-loop').compress(input, budget, { accountant })).toEqual(output);
  });

  it('rejects a trigger below the budget, naming the option', () => {
    expect(() => createLoopCompressor({ triggerRatio: 0.5 })).toThrow(InvalidArgumentError);
    expect(() => createLoopCompressor({ triggerRatio: Number.NaN })).toThrow(/triggerRatio/);
  });
});
