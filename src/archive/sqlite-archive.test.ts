import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type BetterSqlite3 from 'better-sqlite3';
import { buildSync } from 'esbuild';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { messageConversation } from '../../test/arbitraries/messages.js';
import { propertyRuns } from '../../test/support/property-runs.js';
import { isPrecisError, type PrecisError } from '../errors/index.js';
import type { JSONValue, Message } from '../messages/types.js';
import {
  assistantMessage,
  systemMessage,
  toolCall,
  toolMessage,
  toolResult,
  userMessage,
} from '../testing/index.js';
import {
  type ArchiveEntry,
  type ArchiveStore,
  archiveHandle,
  createMemoryArchive,
  putIndex,
} from './archive-store.js';
import { createSqliteArchive, type SqliteArchive } from './sqlite-archive.js';

const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;

let directory: string;
const opened: SqliteArchive[] = [];

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'precis-archive-'));
});

afterEach(() => {
  for (const archive of opened.splice(0)) archive.close();
  rmSync(directory, { recursive: true, force: true });
});

function open(options: Partial<Parameters<typeof createSqliteArchive>[0]> = {}): SqliteArchive {
  const archive = createSqliteArchive({ path: join(directory, 'archive.db'), ...options });
  opened.push(archive);
  return archive;
}

/** The typed error `run` throws; fails the test when it does not throw one. */
function caught(run: () => unknown): PrecisError {
  try {
    run();
  } catch (error) {
    if (isPrecisError(error)) return error;
    throw error;
  }
  throw new Error('expected a PrecisError');
}

const tricky = [
  'plain ascii',
  'emoji 🧪🚀 and CJK 漢字 and RTL שלום and combining é',
  'NUL \u0000 and controls \u0001\u001f\u007f and a BOM \ufeff',
  'lone surrogates \ud800 and \udfff, reversed \udc00\ud800',
  'line endings \r\n and \r and \n and tab \t',
  'quotes " \' ` and backslashes \\ \\\\ and a fake escape \\u0041',
  '\u2028\u2029 separators',
  'x'.repeat(200_000),
];

const conversation: Message[] = [
  systemMessage('You are a coding agent.', { id: 'm0' }),
  userMessage('Fix the retry backoff — it must cap at 30 s. 🧪', { id: 'm1' }),
  assistantMessage(
    [
      { type: 'reasoning', text: '<think>look at src/retry.ts</think>' },
      { type: 'text', text: tricky[2]! },
      toolCall(
        'read_file',
        { path: 'src/retry.ts', range: [1, 40], nested: { a: null, b: [true, 1.5e-7] } },
        'c1',
      ),
    ],
    { id: 'm2', metadata: { origin: 'openai', pinned: false } },
  ),
  toolMessage(
    toolResult({ toolCallId: 'c1', toolName: 'read_file' }, tricky[3]!),
    toolResult({ toolCallId: 'c1', toolName: 'read_file' }, { json: { exit: 1, out: [1, 'two', null] } }),
  ),
  userMessage([{ type: 'image', image: 'aGVsbG8=', mediaType: 'image/png' }], {
    providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } },
  }),
];

describe('createSqliteArchive', () => {
  it('round-trips messages, tool outputs and awkward text byte-identically', () => {
    const archive = open();
    const originals: Omit<ArchiveEntry, 'handle'>[] = [
      {
        kind: 'messages',
        content: conversation,
        messageIds: ['m0', 'm1', 'm2'],
        strategy: 'drop-oldest-turns',
      },
      {
        kind: 'tool-output',
        content: { type: 'text', value: tricky[4]! },
        messageIds: ['m3'],
        strategy: 'stub',
      },
      ...tricky.map((text, i) => ({
        kind: 'text' as const,
        content: text,
        messageIds: [`t${i}`],
        strategy: 'prose',
      })),
      {
        kind: 'text',
        content: { deep: [[[{ '': '', 'key with space': -12.5 }]]], big: 1e300 },
        messageIds: [],
        strategy: 'x',
      },
    ];
    const handles = originals.map((original) => archive.put(original));
    expect(new Set(handles).size).toBe(originals.length);
    expect(archive.size).toBe(originals.length);

    originals.forEach((original, i) => {
      const handle = handles[i]!;
      expect(handle).toBe(archiveHandle(original.kind, original.content));
      const entry = archive.get(handle);
      expect(entry).toEqual({ ...original, handle });
      expect(JSON.stringify(entry?.content)).toBe(JSON.stringify(original.content));
      expect(archive.has(handle)).toBe(true);
    });
    // Each lone surrogate survives as itself (JSON escapes them, so UTF-8 storage cannot replace them).
    expect(archive.get(handles[5]!)?.content).toBe(tricky[3]);
  });

  it('keeps -0, which JSON.stringify would write as 0', () => {
    const archive = open();
    const content = { zero: -0, list: [-0, 0, '-0', 'precis-negative-zero'], nested: { '-0': [-0] } };
    const handle = archive.put({ kind: 'text', content, messageIds: [], strategy: 's' });
    const stored = archive.get(handle)?.content as typeof content;
    expect(stored).toEqual(content);
    expect(Object.is(stored.zero, -0)).toBe(true);
    expect(Object.is(stored.list[1], 0)).toBe(true);
    expect(
      archive.get(archive.put({ kind: 'text', content: -0, messageIds: [], strategy: 's' }))?.content,
    ).toBe(-0);
  });

  it('stores binary message data as the base64 the handle was computed from', () => {
    const archive = open();
    const bytes = new Uint8Array([0, 1, 2, 250, 255]);
    const messages: Message[] = [
      userMessage([
        { type: 'image', image: bytes, mediaType: 'image/png' },
        { type: 'file', data: Buffer.from('%PDF-1.7'), mediaType: 'application/pdf', filename: 'a.pdf' },
        { type: 'image', image: new URL('https://example.com/a.png') },
        { type: 'file', data: bytes.buffer, mediaType: 'application/octet-stream' },
      ]),
    ];
    const handle = archive.put({ kind: 'messages', content: messages, messageIds: ['m1'], strategy: 's' });
    const stored = archive.get(handle)?.content as Message[];
    expect(stored[0]?.content).toEqual([
      { type: 'image', image: 'AAEC+v8=', mediaType: 'image/png' },
      {
        type: 'file',
        data: Buffer.from('%PDF-1.7').toString('base64'),
        mediaType: 'application/pdf',
        filename: 'a.pdf',
      },
      { type: 'image', image: 'https://example.com/a.png' },
      { type: 'file', data: 'AAEC+v8=', mediaType: 'application/octet-stream' },
    ]);
    expect(archiveHandle('messages', stored)).toBe(handle);
  });

  it('puts idempotently: the same content keeps one row, its first metadata and every message id', () => {
    let now = Date.parse('2025-01-01T00:00:00.000Z');
    const archive = open({ clock: () => new Date(now++) });
    const first = archive.put({
      kind: 'text',
      content: { a: 1, b: [2] },
      messageIds: ['m1'],
      strategy: 'first',
    });
    const again = archive.put({
      kind: 'text',
      content: { b: [2], a: 1 },
      messageIds: ['m9'],
      strategy: 'second',
    });
    expect(again).toBe(first);
    expect(archive.size).toBe(1);
    expect(archive.get(first)).toMatchObject({ messageIds: ['m1', 'm9'], strategy: 'first' });
    expect(archive.list()).toEqual([
      expect.objectContaining({ handle: first, createdAt: '2025-01-01T00:00:00.000Z' }),
    ]);
    expect(archive.list({ messageId: 'm9' }).map((summary) => summary.handle)).toEqual([first]);
    // Same content under another kind is another original.
    expect(
      archive.put({ kind: 'tool-output', content: { a: 1, b: [2] }, messageIds: [], strategy: 's' }),
    ).not.toBe(first);
    expect(archive.size).toBe(2);
  });

  it('reopens a closed archive with everything in it, creating missing parent directories', () => {
    const path = join(directory, 'nested', 'deeper', '.precis', 'archive.db');
    const clock = () => new Date('2025-06-01T12:00:00.000Z');
    const writer = createSqliteArchive({ path, clock });
    const handle = writer.put({
      kind: 'messages',
      content: conversation,
      messageIds: ['m0'],
      strategy: 'drop',
    });
    writer.close();
    writer.close();

    const reader = createSqliteArchive({ path });
    opened.push(reader);
    expect(reader.path).toBe(path);
    expect(reader.get(handle)?.content).toEqual(conversation);
    const [summary] = reader.list();
    expect(summary).toEqual({
      handle,
      kind: 'messages',
      strategy: 'drop',
      messageIds: ['m0'],
      createdAt: '2025-06-01T12:00:00.000Z',
      sizeBytes: Buffer.byteLength(JSON.stringify(conversation), 'utf8'),
    });
  });

  it('uses the WAL journal and marks the file as a precis archive with a schema version', () => {
    open().close();
    const raw = new Database(join(directory, 'archive.db'), { readonly: true });
    try {
      expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(raw.pragma('application_id', { simple: true })).toBe(0x50524353);
      expect(raw.prepare('SELECT version FROM precis_schema').pluck().all()).toEqual([1, 2]);
    } finally {
      raw.close();
    }
  });

  it('throws io-error on any use after close', () => {
    const archive = open();
    archive.close();
    for (const use of [
      () => archive.get('h-00000000000000000000'),
      () => archive.has('h-00000000000000000000'),
      () => archive.size,
      () => archive.list(),
      () => archive.put({ kind: 'text', content: 'x', messageIds: [], strategy: 's' }),
    ]) {
      const error = caught(use);
      expect(error.code).toBe('io-error');
      expect(error.message).toContain('closed');
    }
  });

  it('rejects malformed entries and options with invalid-argument', () => {
    const archive = open();
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const bad: unknown[] = [
      { kind: 'summary', content: 'x', messageIds: [], strategy: 's' },
      { kind: 'text', content: 'x', messageIds: [1], strategy: 's' },
      { kind: 'text', content: 'x', messageIds: 'm1', strategy: 's' },
      { kind: 'text', content: 'x', messageIds: [], strategy: 7 },
      { kind: 'text', content: undefined, messageIds: [], strategy: 's' },
      { kind: 'text', content: circular, messageIds: [], strategy: 's' },
      { kind: 'index', content: [], messageIds: [], strategy: 's' },
      { kind: 'index', content: ['h-0123'], messageIds: [], strategy: 's' },
      { kind: 'index', content: 'h-0123456789abcdef0123', messageIds: [], strategy: 's' },
    ];
    for (const entry of bad) {
      expect(caught(() => archive.put(entry as ArchiveEntry)).code).toBe('invalid-argument');
    }
    expect(archive.size).toBe(0);
    expect(caught(() => archive.list({ limit: -1 })).code).toBe('invalid-argument');
    expect(caught(() => archive.list({ order: 'sideways' as 'oldest-first' })).code).toBe('invalid-argument');
    expect(caught(() => open({ path: '' })).code).toBe('invalid-argument');
    expect(caught(() => open({ busyTimeoutMs: -1 })).code).toBe('invalid-argument');
  });

  it('lists summaries filtered by kind, strategy and message id, in either order, with paging', () => {
    let now = Date.parse('2025-01-01T00:00:00.000Z');
    const archive = open({
      clock: () => {
        now += 1000;
        return new Date(now);
      },
    });
    const a = archive.put({ kind: 'text', content: 'a', messageIds: ['m1', 'm2'], strategy: 'prose' });
    const b = archive.put({ kind: 'tool-output', content: 'b', messageIds: ['m2'], strategy: 'stub' });
    const c = archive.put({ kind: 'text', content: 'c', messageIds: ['m3'], strategy: 'stub' });
    const handles = (options?: Parameters<SqliteArchive['list']>[0]) =>
      archive.list(options).map((s) => s.handle);
    expect(handles()).toEqual([a, b, c]);
    expect(handles({ order: 'newest-first' })).toEqual([c, b, a]);
    expect(handles({ kind: 'text' })).toEqual([a, c]);
    expect(handles({ strategy: 'stub' })).toEqual([b, c]);
    expect(handles({ messageId: 'm2' })).toEqual([a, b]);
    expect(handles({ messageId: 'm' })).toEqual([]);
    expect(handles({ kind: 'text', strategy: 'stub' })).toEqual([c]);
    expect(handles({ limit: 1, offset: 1 })).toEqual([b]);
    expect(handles({ limit: 0 })).toEqual([]);
    expect(archive.list({ limit: 1 })[0]).toEqual({
      handle: a,
      kind: 'text',
      strategy: 'prose',
      messageIds: ['m1', 'm2'],
      createdAt: '2025-01-01T00:00:01.000Z',
      sizeBytes: 3,
    });
  });

  it('migrates a version 1 file to index entries, keeping its rows, their order and its readers', () => {
    const path = join(directory, 'archive.db');
    // A file as precis wrote it before index entries: the version 1 schema with two rows.
    const raw = new Database(path);
    raw.pragma('application_id = 1347568467');
    raw.exec(`CREATE TABLE precis_schema (version INTEGER PRIMARY KEY NOT NULL, applied_at TEXT NOT NULL);
      INSERT INTO precis_schema VALUES (1, '2025-01-01T00:00:00.000Z');
      CREATE TABLE archive_entries (
        handle TEXT PRIMARY KEY NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('messages', 'tool-output', 'text')),
        strategy TEXT NOT NULL, message_ids TEXT NOT NULL, content TEXT NOT NULL,
        size_bytes INTEGER NOT NULL, created_at TEXT NOT NULL);
      CREATE INDEX archive_entries_created_at ON archive_entries (created_at);`);
    const old = [archiveHandle('text', 'b'), archiveHandle('text', 'a')];
    const insert = raw.prepare('INSERT INTO archive_entries VALUES (?, ?, ?, ?, ?, ?, ?)');
    insert.run(old[0], 'text', 'prose', '["m2"]', '"b"', 3, '2025-01-01T00:00:00.000Z');
    insert.run(old[1], 'text', 'prose', '["m1"]', '"a"', 3, '2025-01-01T00:00:00.000Z');
    expect(() => insert.run('h-x', 'index', 's', '[]', '[]', 2, 'now')).toThrow(/CHECK/);
    raw.close();

    // Read-only opening leaves it at version 1 and reads it.
    const reader = open({ readonly: true });
    expect(reader.get(old[1]!)?.content).toBe('a');
    reader.close();
    const archive = open();
    expect(archive.list().map((entry) => entry.handle)).toEqual(old);
    const index = archive.put({ kind: 'index', content: old, messageIds: ['s1'], strategy: 'fold' });
    expect(archive.get(index)).toEqual({
      handle: index,
      kind: 'index',
      content: old,
      messageIds: ['s1'],
      strategy: 'fold',
    });
    expect(archive.list({ kind: 'index' }).map((entry) => entry.handle)).toEqual([index]);
    archive.close();
    const after = new Database(path, { readonly: true });
    try {
      expect(after.prepare('SELECT version FROM precis_schema').pluck().all()).toEqual([1, 2]);
      expect(after.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(
        after
          .prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'archive_entries_created_at'")
          .pluck()
          .get(),
      ).toBe(1);
    } finally {
      after.close();
    }
  });

  describe('read-only mode', () => {
    it('reads an existing archive and refuses writes with io-error, leaving the file unchanged', () => {
      const handle = open().put({ kind: 'text', content: 'kept', messageIds: [], strategy: 's' });
      const reader = open({ readonly: true });
      expect(reader.get(handle)?.content).toBe('kept');
      expect(reader.size).toBe(1);
      for (const content of ['new', 'kept']) {
        const error = caught(() => reader.put({ kind: 'text', content, messageIds: [], strategy: 's' }));
        expect(error.code).toBe('io-error');
        expect(error.message).toContain('read-only');
        expect(error.message).toContain(join(directory, 'archive.db'));
      }
      expect(reader.size).toBe(1);
    });

    it('does not create a missing file', () => {
      const path = join(directory, 'missing', 'archive.db');
      const error = caught(() => createSqliteArchive({ path, readonly: true }));
      expect(error.code).toBe('io-error');
      expect(error.message).toContain(path);
      expect(() => statSync(dirname(path))).toThrow();
    });
  });

  describe('files that are not precis archives', () => {
    function expectRejected(path: string, reason: RegExp, options: { readonly?: boolean } = {}): void {
      const before = statSync(path).isFile() ? readFileSync(path) : undefined;
      const error = caught(() => createSqliteArchive({ path, ...options }));
      expect(error.code).toBe('io-error');
      expect(error.message).toContain(path);
      expect(error.message).toMatch(reason);
      if (before !== undefined) expect(readFileSync(path).equals(before)).toBe(true);
    }

    it('rejects random bytes and text files without touching them', () => {
      const random = join(directory, 'random.db');
      writeFileSync(random, Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256)));
      expectRejected(random, /not a precis archive/);
      const text = join(directory, 'notes.txt');
      writeFileSync(text, '# notes\n'.repeat(200));
      expectRejected(text, /not a precis archive/);
      expectRejected(text, /not a precis archive/, { readonly: true });
    });

    it('rejects an SQLite database of another application without touching it', () => {
      const path = join(directory, 'other.db');
      const raw = new Database(path);
      raw.exec("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users VALUES (1, 'ada')");
      raw.close();
      expectRejected(path, /other tables \(users\)/);
      expectRejected(path, /other tables \(users\)/, { readonly: true });
      const check = new Database(path, { readonly: true });
      expect(check.pragma('journal_mode', { simple: true })).toBe('delete');
      check.close();

      const marked = join(directory, 'marked.db');
      const other = new Database(marked);
      other.pragma('application_id = 42');
      other.close();
      expectRejected(marked, /another application/);
    });

    it('rejects an archive from a newer schema', () => {
      open().close();
      const raw = new Database(join(directory, 'archive.db'));
      raw.prepare("INSERT INTO precis_schema VALUES (99, 'later')").run();
      raw.close();
      expectRejected(join(directory, 'archive.db'), /newer precis \(schema version 99/);
      expectRejected(join(directory, 'archive.db'), /newer precis/, { readonly: true });
    });

    it('rejects a directory, and an empty file in read-only mode, but initialises an empty file', () => {
      const folder = join(directory, 'folder.db');
      mkdirSync(folder);
      expectRejected(folder, /cannot open archive/);
      const empty = join(directory, 'empty.db');
      writeFileSync(empty, '');
      expectRejected(empty, /empty/, { readonly: true });
      const archive = open({ path: empty });
      expect(archive.put({ kind: 'text', content: 'x', messageIds: [], strategy: 's' })).toMatch(/^h-/);
    });
  });

  describe('concurrency', () => {
    it('lets two connections to the same file write and read each other’s entries', () => {
      const first = open();
      const second = open();
      const handles: string[] = [];
      for (let i = 0; i < 50; i++) {
        const writer = i % 2 === 0 ? first : second;
        handles.push(
          writer.put({ kind: 'text', content: `entry ${i}`, messageIds: [`m${i}`], strategy: 's' }),
        );
        // Both write the same original too: still one row.
        writer.put({ kind: 'text', content: 'shared', messageIds: [], strategy: 's' });
      }
      expect(first.size).toBe(51);
      expect(second.size).toBe(51);
      for (const [i, handle] of handles.entries()) {
        expect(first.get(handle)?.content).toBe(`entry ${i}`);
        expect(second.get(handle)?.content).toBe(`entry ${i}`);
      }
    });

    it('waits for another writer’s lock, then fails with io-error after the busy timeout', () => {
      const archive = open({ busyTimeoutMs: 50 });
      const raw = new Database(join(directory, 'archive.db'));
      try {
        raw.exec('BEGIN IMMEDIATE');
        const started = Date.now();
        const error = caught(() =>
          archive.put({ kind: 'text', content: 'x', messageIds: [], strategy: 's' }),
        );
        expect(Date.now() - started).toBeGreaterThanOrEqual(40);
        expect(error.code).toBe('io-error');
        expect(error.message).toMatch(/locked|busy/i);
        expect(error.message).toContain(join(directory, 'archive.db'));
        // Readers are not blocked by a writer in WAL mode.
        expect(archive.size).toBe(0);
      } finally {
        raw.exec('ROLLBACK');
        raw.close();
      }
      expect(archive.put({ kind: 'text', content: 'x', messageIds: [], strategy: 's' })).toMatch(/^h-/);
    });

    it('reports a lock held past the timeout while opening as a lock, not as a foreign file', () => {
      const path = join(directory, 'archive.db');
      const raw = new Database(path);
      try {
        raw.exec('BEGIN EXCLUSIVE');
        const error = caught(() => open({ busyTimeoutMs: 20 }));
        expect(error.code).toBe('io-error');
        expect(error.message).toMatch(/^cannot open archive .*archive\.db: database is locked/);
      } finally {
        raw.exec('ROLLBACK');
        raw.close();
      }
      expect(open().size).toBe(0);
    });

    describe('separate processes', () => {
      let bundleDirectory: string;
      const sourceDirectory = dirname(fileURLToPath(import.meta.url));

      beforeAll(() => {
        // Child processes run plain JavaScript: bundle the store (not the native driver) for them.
        bundleDirectory = mkdtempSync(join(tmpdir(), 'precis-archive-bundle-'));
        buildSync({
          entryPoints: [join(sourceDirectory, 'sqlite-archive.ts')],
          outfile: join(bundleDirectory, 'sqlite-archive.mjs'),
          bundle: true,
          format: 'esm',
          platform: 'node',
          external: ['better-sqlite3'],
          logLevel: 'silent',
        });
        writeFileSync(
          join(bundleDirectory, 'writer.mjs'),
          `import { createRequire } from 'node:module';
import { createSqliteArchive } from './sqlite-archive.mjs';
const [path, name, count, startAt] = process.argv.slice(2);
const driverLoaded = () => Object.keys(createRequire(import.meta.url).cache).some((key) => key.includes('better-sqlite3'));
const loadedBefore = driverLoaded();
while (Date.now() < Number(startAt)) {}
const archive = createSqliteArchive({ path });
for (let i = 0; i < Number(count); i++) {
  archive.put({ kind: 'text', content: name + ' ' + i, messageIds: [name + i], strategy: name });
  archive.put({ kind: 'text', content: 'shared ' + i, messageIds: [], strategy: name });
}
archive.close();
console.log(JSON.stringify({ loadedBefore, loadedAfter: driverLoaded() }));
`,
        );
      });

      afterAll(() => {
        rmSync(bundleDirectory, { recursive: true, force: true });
      });

      function runWriter(path: string, name: string, count: number, startAt: number): Promise<string> {
        return new Promise((resolvePromise, reject) => {
          const child = spawn(
            process.execPath,
            [join(bundleDirectory, 'writer.mjs'), path, name, `${count}`, `${startAt}`],
            {
              env: { ...process.env, NODE_PATH: resolve(sourceDirectory, '../../node_modules') },
              stdio: ['ignore', 'pipe', 'pipe'],
            },
          );
          let output = '';
          let errors = '';
          child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
          child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
          child.on('error', reject);
          child.on('close', (code) =>
            code === 0
              ? resolvePromise(output)
              : reject(new Error(`writer ${name} exited ${code}: ${errors}`)),
          );
        });
      }

      it('two processes creating and writing one new archive at once leave it consistent', async () => {
        const path = join(directory, 'shared', 'archive.db');
        const count = 300;
        const startAt = Date.now() + 1500;
        const outputs = await Promise.all([
          runWriter(path, 'a', count, startAt),
          runWriter(path, 'b', count, startAt),
        ]);
        for (const output of outputs) {
          // The native driver is loaded by the first archive opened, not by importing the module.
          expect(JSON.parse(output)).toEqual({ loadedBefore: false, loadedAfter: true });
        }

        const archive = open({ path });
        expect(archive.size).toBe(3 * count);
        for (const name of ['a', 'b']) {
          for (let i = 0; i < count; i++) {
            const handle = archiveHandle('text', `${name} ${i}`);
            expect(archive.get(handle)).toEqual({
              handle,
              kind: 'text',
              content: `${name} ${i}`,
              messageIds: [`${name}${i}`],
              strategy: name,
            });
          }
        }
        expect(archive.list({ strategy: 'a' }).length + archive.list({ strategy: 'b' }).length).toBe(
          3 * count,
        );
        const raw = new Database(path, { readonly: true });
        expect(raw.pragma('integrity_check', { simple: true })).toBe('ok');
        expect(raw.prepare('SELECT version FROM precis_schema').pluck().all()).toEqual([1, 2]);
        raw.close();
      });
    });
  });
});

describe('both stores', () => {
  let sqliteDirectory: string;
  const stores: [string, () => ArchiveStore][] = [];
  let sqlite: SqliteArchive;

  beforeAll(() => {
    sqliteDirectory = mkdtempSync(join(tmpdir(), 'precis-archive-property-'));
    sqlite = createSqliteArchive({ path: join(sqliteDirectory, 'archive.db') });
    const memory = createMemoryArchive();
    stores.push(['memory', () => memory], ['sqlite', () => sqlite]);
  });

  afterAll(() => {
    sqlite.close();
    rmSync(sqliteDirectory, { recursive: true, force: true });
  });

  const kinds = fc.constantFrom<ArchiveEntry['kind']>('messages', 'tool-output', 'text');

  it('an index of one handle is that handle; of several, a stored entry listing them', () => {
    for (const [name, store] of stores) {
      const a = store().put({ kind: 'text', content: `${name} a`, messageIds: ['m1'], strategy: 's' });
      const b = store().put({ kind: 'text', content: `${name} b`, messageIds: ['m2'], strategy: 's' });
      const from = { messageIds: ['summary-1'], strategy: 'fold' };
      expect(putIndex(store(), [], from)).toBeUndefined();
      expect(putIndex(store(), [a], from)).toBe(a);
      const index = putIndex(store(), [a, b], from)!;
      expect(index).toBe(archiveHandle('index', [a, b]));
      expect(store().get(index)?.content, name).toEqual([a, b]);
      expect(putIndex(store(), [b, a], from)).not.toBe(index);
    }
  });
  const metadata = { messageIds: fc.array(fc.string(), { maxLength: 3 }), strategy: fc.string() };

  it('get(put(x)).content deep-equals x for arbitrary JSON content', () => {
    for (const [name, store] of stores) {
      fc.assert(
        fc.property(fc.jsonValue(), kinds, fc.record(metadata), (content, kind, fields) => {
          const handle = store().put({ kind, content: content as JSONValue, ...fields });
          const entry = store().get(handle);
          // As JSON means it: -0 is written 0, so a read from the file gives 0 where a cached entry keeps -0.
          const asJson = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;
          expect(asJson(entry?.content), name).toEqual(asJson(content));
          expect(JSON.stringify(entry?.content), name).toBe(JSON.stringify(content));
          expect(archiveHandle(kind, entry!.content)).toBe(handle);
          expect(store().has(handle)).toBe(true);
        }),
        { numRuns: propertyRuns(400) },
      );
    }
  });

  it('a repeated put adds the message ids the entry lacked, in the order first seen', () => {
    for (const [name, store] of stores) {
      fc.assert(
        fc.property(
          fc.string(),
          fc.array(fc.uniqueArray(fc.constantFrom('m1', 'm2', 'm3', 'm4'), { maxLength: 4 }), {
            minLength: 1,
            maxLength: 5,
          }),
          (content, idLists) => {
            // Content no other run puts: the entry starts with this run's first put.
            const text = `${name} ${JSON.stringify(idLists)} ${content}`;
            const handles = idLists.map((messageIds, index) =>
              store().put({ kind: 'text', content: text, messageIds, strategy: `s${index}` }),
            );
            expect(new Set(handles).size).toBe(1);
            const expected = [...new Set(idLists.flat())];
            expect(store().get(handles[0]!), name).toMatchObject({ messageIds: expected, strategy: 's0' });
          },
        ),
        { numRuns: propertyRuns(200) },
      );
    }
  });

  it('an entry got before a repeated put does not change under its holder', () => {
    const memory = createMemoryArchive();
    const handle = memory.put({ kind: 'text', content: 'task', messageIds: ['m1'], strategy: 's' });
    const before = memory.get(handle)!;
    memory.put({ kind: 'text', content: 'task', messageIds: ['m7'], strategy: 's' });
    expect(before.messageIds).toEqual(['m1']);
    expect(memory.get(handle)?.messageIds).toEqual(['m1', 'm7']);
  });

  it('get(put(messages)).content deep-equals the messages, for arbitrary conversations', () => {
    for (const [name, store] of stores) {
      fc.assert(
        fc.property(messageConversation(), fc.record(metadata), (messages, fields) => {
          const handle = store().put({ kind: 'messages', content: messages, ...fields });
          expect(store().get(handle)?.content, name).toEqual(messages);
          expect(archiveHandle('messages', store().get(handle)!.content)).toBe(handle);
        }),
        { numRuns: propertyRuns(200) },
      );
    }
  });
});
