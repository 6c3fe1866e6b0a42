import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { messageConversation } from '../../test/arbitraries/messages.js';
import { propertyRuns } from '../../test/support/property-runs.js';
import { isPrecisError } from '../errors/index.js';
import { toolOutputText } from '../messages/content.js';
import type { Message } from '../messages/types.js';
import {
  assistantMessage,
  systemMessage,
  toolCall,
  toolMessage,
  toolResult,
  userMessage,
} from '../testing/index.js';
import { type ArchiveStore, createMemoryArchive, putIndex } from './archive-store.js';
import { executeExpandTool, expand, expandTool, formatArchiveEntry } from './expand.js';
import { createSqliteArchive } from './sqlite-archive.js';

const messages: Message[] = [
  systemMessage('You are a coding agent.', { id: 'm0' }),
  userMessage('Fix the retry backoff in src/retry.ts; cap it at 30 s.', { id: 'm1' }),
  assistantMessage(
    [
      { type: 'reasoning', text: 'Read the file first.' },
      { type: 'text', text: 'Looking at the retry code.' },
      toolCall('read_file', { path: 'src/retry.ts' }, 'call_1'),
    ],
    { id: 'm2' },
  ),
  toolMessage(
    toolResult({ toolCallId: 'call_1', toolName: 'read_file' }, 'export const maxDelayMs = 60_000;'),
    toolResult(
      { toolCallId: 'call_1', toolName: 'read_file' },
      { type: 'error-text', value: 'ENOENT: src/retry.test.ts' },
    ),
  ),
  userMessage([
    { type: 'text', text: 'Here is a screenshot.' },
    { type: 'image', image: 'iVBORw0KGgo=', mediaType: 'image/png' },
    { type: 'file', data: 'https://example.com/log.txt', mediaType: 'text/plain', filename: 'log.txt' },
  ]),
];

function archiveWithSamples(archive: ArchiveStore = createMemoryArchive()) {
  return {
    archive,
    messagesHandle: archive.put({
      kind: 'messages',
      content: messages,
      messageIds: ['m0', 'm1'],
      strategy: 'drop',
    }),
    outputHandle: archive.put({
      kind: 'tool-output',
      content: { type: 'json', value: { exitCode: 1, stderr: 'FAIL test/retry.test.ts' } },
      messageIds: ['m3'],
      strategy: 'stub-tool-outputs',
    }),
    textHandle: archive.put({
      kind: 'text',
      content: 'The long original prose.\n\nSecond paragraph.',
      messageIds: ['m2'],
      strategy: 'prose',
    }),
  };
}

const unknownHandle = 'h-0123456789abcdef0123';

describe('expand', () => {
  it('returns the stored entry', () => {
    const { archive, messagesHandle } = archiveWithSamples();
    expect(expand(archive, messagesHandle)).toEqual({
      handle: messagesHandle,
      kind: 'messages',
      content: messages,
      messageIds: ['m0', 'm1'],
      strategy: 'drop',
    });
    expect(expand(archive, `  ${messagesHandle}\n`).handle).toBe(messagesHandle);
  });

  it('throws invalid-argument naming an unknown handle', () => {
    const { archive } = archiveWithSamples();
    for (const handle of [unknownHandle, 'not-a-handle', '']) {
      let thrown: unknown;
      try {
        expand(archive, handle);
      } catch (error) {
        thrown = error;
      }
      expect(isPrecisError(thrown)).toBe(true);
      expect(thrown).toMatchObject({ code: 'invalid-argument', option: 'handle' });
      if (handle !== '') expect((thrown as Error).message).toContain(handle);
    }
  });
});

describe('expandTool', () => {
  it('is a JSON-serialisable tool definition that tells the model when to call it', () => {
    expect(expandTool.name).toBe('expand_context');
    expect(expandTool.description).toContain('archived: h-');
    expect(JSON.parse(JSON.stringify(expandTool))).toEqual({
      name: 'expand_context',
      description: expandTool.description,
      inputSchema: {
        type: 'object',
        properties: {
          handle: { type: 'string', description: expect.stringContaining('h-') },
          page: { type: 'integer', minimum: 1, description: expect.stringContaining('page') },
        },
        required: ['handle'],
        additionalProperties: false,
      },
    });
  });
});

describe('executeExpandTool', () => {
  it('renders archived messages as role-labelled text with tool calls and outputs', () => {
    const { archive, messagesHandle } = archiveWithSamples();
    const text = executeExpandTool(archive, { handle: messagesHandle });
    expect(text).toBe(
      [
        `Archived messages ${messagesHandle} (drop from m0, m1):`,
        '',
        '[system m0]',
        'You are a coding agent.',
        '',
        '[user m1]',
        'Fix the retry backoff in src/retry.ts; cap it at 30 s.',
        '',
        '[assistant m2]',
        '(reasoning)',
        'Read the file first.',
        'Looking at the retry code.',
        '(tool call read_file call_1)',
        '{"path":"src/retry.ts"}',
        '',
        '[tool]',
        '(tool result read_file call_1)',
        'export const maxDelayMs = 60_000;',
        '(tool result read_file call_1, error)',
        'ENOENT: src/retry.test.ts',
        '',
        '[user]',
        'Here is a screenshot.',
        '(image image/png, 12 characters of base64)',
        '(file log.txt text/plain https://example.com/log.txt)',
      ].join('\n'),
    );
  });

  it('renders tool outputs and text as their text', () => {
    const { archive, outputHandle, textHandle } = archiveWithSamples();
    expect(executeExpandTool(archive, { handle: outputHandle })).toBe(
      `Archived tool-output ${outputHandle} (stub-tool-outputs from m3):\n\n{"exitCode":1,"stderr":"FAIL test/retry.test.ts"}`,
    );
    expect(executeExpandTool(archive, { handle: textHandle })).toBe(
      `Archived text ${textHandle} (prose from m2):\n\nThe long original prose.\n\nSecond paragraph.`,
    );
    const samples: [unknown, string][] = [
      ['raw output\nline 2', 'raw output\nline 2'],
      [{ type: 'error-text', value: 'boom' }, 'boom'],
      [{ type: 'execution-denied' }, 'Tool execution denied.'],
      [toolResult({ toolCallId: 'c', toolName: 'bash' }, 'from a whole part'), 'from a whole part'],
      [{ type: 'text', value: 42 }, '{\n  "type": "text",\n  "value": 42\n}'],
      [[1, 'two'], '[\n  1,\n  "two"\n]'],
    ];
    for (const [content, expected] of samples) {
      const entry = {
        handle: 'h-x',
        kind: 'tool-output' as const,
        content: content as never,
        messageIds: [],
        strategy: 's',
      };
      expect(formatArchiveEntry(entry)).toBe(`Archived tool-output h-x (s):\n\n${expected}`);
    }
    expect(
      formatArchiveEntry({
        handle: 'h-x',
        kind: 'messages',
        content: { not: 'messages' },
        messageIds: [],
        strategy: 's',
      }),
    ).toBe('Archived messages h-x (s):\n\n{\n  "not": "messages"\n}');
  });

  it('accepts a JSON string, a bare handle, or a stub quoting one', () => {
    const { archive, textHandle } = archiveWithSamples();
    const expected = executeExpandTool(archive, { handle: textHandle });
    expect(executeExpandTool(archive, JSON.stringify({ handle: textHandle }))).toBe(expected);
    expect(executeExpandTool(archive, textHandle)).toBe(expected);
    expect(executeExpandTool(archive, { handle: `[tool output: 40 KB, archived: ${textHandle}]` })).toBe(
      expected,
    );
    expect(executeExpandTool(archive, { handle: ` ${textHandle} ` })).toBe(expected);
    expect(executeExpandTool(archive, `{"handle": "${textHandle}`)).toBe(expected);
  });

  it('answers unknown, missing or ambiguous handles with an error message instead of throwing', () => {
    const { archive, textHandle, outputHandle } = archiveWithSamples();
    const unknown = executeExpandTool(archive, { handle: unknownHandle });
    expect(unknown).toMatch(/^Error: /);
    expect(unknown).toContain(unknownHandle);
    expect(unknown).toContain('archived: h-');
    expect(executeExpandTool(archive, { handle: 'the big log' })).toContain('"the big log"');
    for (const input of [undefined, null, {}, { handle: '' }, { handle: 7 }, '', '{"handle": ']) {
      expect(executeExpandTool(archive, input)).toMatch(/^Error: expand_context needs a handle/);
    }
    const several = executeExpandTool(archive, { handle: `${textHandle} and ${outputHandle}` });
    expect(several).toMatch(/^Error: .*several handles/);
  });

  describe('with an SQLite archive', () => {
    let directory: string | undefined;
    afterEach(() => {
      if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
    });

    it('expands from the file and reports an unreadable archive as an error message', () => {
      directory = mkdtempSync(join(tmpdir(), 'precis-expand-'));
      const archive = createSqliteArchive({ path: join(directory, 'archive.db') });
      const { messagesHandle } = archiveWithSamples(archive);
      expect(expand(archive, messagesHandle).content).toEqual(messages);
      expect(executeExpandTool(archive, { handle: messagesHandle })).toContain(
        '[user m1]\nFix the retry backoff',
      );
      archive.close();
      const text = executeExpandTool(archive, { handle: messagesHandle });
      expect(text).toMatch(/^Error: the archive could not be read \(archive .* is closed\)/);
    });
  });

  it('lists what an index names, with kind, source, size and first line, so one handle reaches them all', () => {
    const { archive, messagesHandle, outputHandle, textHandle } = archiveWithSamples();
    const index = putIndex(archive, [messagesHandle, outputHandle, unknownHandle, textHandle], {
      messageIds: ['summary-1'],
      strategy: 'fold-into-summary',
    })!;
    const sizes = [messagesHandle, outputHandle, textHandle].map((handle) =>
      formatArchiveEntry(archive.get(handle)!)
        .split('\n\n')
        .slice(1)
        .join('\n\n')
        .length.toLocaleString('en-US'),
    );
    expect(executeExpandTool(archive, { handle: index })).toBe(
      [
        `Archived index ${index} (fold-into-summary from summary-1):`,
        '',
        '4 archived originals; expand any by its handle:',
        `- ${messagesHandle}: 5 messages of m0, m1 (drop), ${sizes[0]} characters — You are a coding agent.`,
        `- ${outputHandle}: tool output of m3 (stub-tool-outputs), ${sizes[1]} characters — {"exitCode":1,"stderr":"FAIL test/retry.test.ts"}`,
        `- ${unknownHandle} (not in this archive)`,
        `- ${textHandle}: text of m2 (prose), ${sizes[2]} characters — The long original prose.`,
      ].join('\n'),
    );
    // Without the archive to look in, the handles alone.
    expect(formatArchiveEntry(archive.get(index)!)).toContain(`\n- ${outputHandle}\n- ${unknownHandle}\n`);
    // An index that extends another lists the other's originals in its place: one flat list, each once.
    const extended = putIndex(archive, [index, outputHandle, 'h-4444444444abcdef0123'], {
      messageIds: ['summary-1'],
      strategy: 'fold-into-summary',
    })!;
    const listed = executeExpandTool(archive, { handle: extended }).split('\n').slice(2);
    expect(listed[0]).toBe('5 archived originals; expand any by its handle:');
    expect(listed.slice(1).map((line) => line.slice(2, 24))).toEqual([
      messagesHandle,
      outputHandle,
      unknownHandle,
      textHandle,
      'h-4444444444abcdef0123',
    ]);
  });

  it('pages a long original: pages join back to the whole, each says where it is and how to go on', () => {
    const { archive, messagesHandle } = archiveWithSamples();
    const whole = executeExpandTool(archive, { handle: messagesHandle });
    expect(executeExpandTool(archive, { handle: messagesHandle }, { pageChars: whole.length })).toBe(whole);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200 }), (pageChars) => {
        const first = executeExpandTool(archive, { handle: messagesHandle }, { pageChars });
        const count = Number(/page 1 of (\d+)/.exec(first)?.[1]);
        expect(count).toBeGreaterThan(1);
        let joined = '';
        for (let page = 1; page <= count; page++) {
          const text = executeExpandTool(archive, { handle: messagesHandle, page }, { pageChars });
          const lines = text.split('\n');
          if (page > 1)
            expect(lines.shift()).toBe(`[${messagesHandle}, page ${page} of ${count}, continued]`);
          const footer = lines.pop();
          expect(footer).toBe(
            page === count
              ? `[${messagesHandle}, page ${page} of ${count}: the end]`
              : `[${messagesHandle}, page ${page} of ${count}; for more call expand_context with {"handle": "${messagesHandle}", "page": ${page + 1}}]`,
          );
          const body = lines.join('\n');
          expect(body.length).toBeLessThanOrEqual(pageChars);
          joined += body;
        }
        expect(joined).toBe(whole);
        const beyond = executeExpandTool(archive, { handle: messagesHandle, page: count + 1 }, { pageChars });
        expect(beyond).toBe(
          `Error: ${messagesHandle} has ${count} pages; ask for a page from 1 to ${count}.`,
        );
      }),
      { numRuns: propertyRuns(100) },
    );
  });

  it('formats an original once while a model pages through it, and again once a put adds the ids it lists', () => {
    const { archive, messagesHandle, outputHandle, textHandle } = archiveWithSamples();
    const reads: string[] = [];
    const counting: ArchiveStore = {
      put: (entry) => archive.put(entry),
      has: (handle) => archive.has(handle),
      get: (handle) => {
        reads.push(handle);
        return archive.get(handle);
      },
    };
    const index = putIndex(counting, [messagesHandle, outputHandle, textHandle], {
      messageIds: ['summary-1'],
      strategy: 'fold-into-summary',
    })!;
    const pageChars = 150;
    const first = executeExpandTool(counting, { handle: index }, { pageChars });
    const count = Number(/page 1 of (\d+)/.exec(first)?.[1]);
    expect(count).toBeGreaterThan(1);
    // The listing read every original once; each later page reads only the index itself.
    expect(reads).toEqual([index, messagesHandle, outputHandle, textHandle]);
    reads.length = 0;
    for (let page = 2; page <= count; page++)
      executeExpandTool(counting, { handle: index, page }, { pageChars });
    expect(reads).toEqual(Array.from({ length: count - 1 }, () => index));
    // A put of the same text from another message lists that message too, at once.
    const before = executeExpandTool(counting, { handle: textHandle });
    archive.put({
      kind: 'text',
      content: 'The long original prose.\n\nSecond paragraph.',
      messageIds: ['m9'],
      strategy: 'prose',
    });
    const after = executeExpandTool(counting, { handle: textHandle });
    expect(before).toContain('(prose from m2):');
    expect(after).toContain('(prose from m2, m9):');
  });

  it('never splits a surrogate pair across pages', () => {
    const archive = createMemoryArchive();
    const handle = archive.put({ kind: 'text', content: '🧪'.repeat(50), messageIds: [], strategy: 's' });
    const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
    for (const pageChars of [1, 25, 26, 27]) {
      for (let page = 1; page <= 8; page++) {
        const text = executeExpandTool(archive, { handle, page }, { pageChars });
        expect(text).not.toMatch(lone);
      }
    }
  });

  it('answers a page that is not a whole number from 1 with an error message; takes one written as text', () => {
    const { archive, textHandle } = archiveWithSamples();
    for (const page of [0, -1, 1.5, 'two', true]) {
      expect(executeExpandTool(archive, { handle: textHandle, page })).toMatch(
        /^Error: "page" must be a whole number/,
      );
    }
    expect(executeExpandTool(archive, { handle: textHandle, page: 2 })).toBe(
      `Error: ${textHandle} is one page long; ask for page 1 or leave "page" out.`,
    );
    const whole = executeExpandTool(archive, { handle: textHandle });
    expect(executeExpandTool(archive, { handle: textHandle, page: '1' })).toBe(whole);
    expect(executeExpandTool(archive, JSON.stringify({ handle: textHandle, page: 1 }))).toBe(whole);
    expect(executeExpandTool(archive, { handle: textHandle, page: null })).toBe(whole);
    for (const pageChars of [0, 2.5, Number.NaN]) {
      const error = (() => {
        try {
          executeExpandTool(archive, { handle: textHandle }, { pageChars });
        } catch (caught) {
          return caught;
        }
      })();
      expect(isPrecisError(error) && error.code === 'invalid-argument' && error.message).toContain(
        'pageChars',
      );
    }
  });

  it('lets errors that are not precis errors through', () => {
    const broken: ArchiveStore = {
      put: () => 'h-x',
      has: () => false,
      get: () => {
        throw new TypeError('bug');
      },
    };
    expect(() => executeExpandTool(broken, { handle: unknownHandle })).toThrow(TypeError);
  });

  it('shows every text and tool output of arbitrary archived conversations', () => {
    const archive = createMemoryArchive();
    fc.assert(
      fc.property(messageConversation(), (conversation) => {
        const handle = archive.put({
          kind: 'messages',
          content: conversation,
          messageIds: [],
          strategy: 's',
        });
        const text = executeExpandTool(archive, { handle }, { pageChars: Number.MAX_SAFE_INTEGER });
        for (const message of conversation) {
          expect(text).toContain(`[${message.role}`);
          if (typeof message.content === 'string') {
            expect(text).toContain(message.content);
            continue;
          }
          for (const part of message.content) {
            if (part.type === 'text' || part.type === 'reasoning') expect(text).toContain(part.text);
            if (part.type === 'tool-result') expect(text).toContain(toolOutputText(part.output));
          }
        }
      }),
      { numRuns: propertyRuns(300) },
    );
  });
});
