import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { InvalidArgumentError, PrecisError } from '../errors/index.js';
import {
  type ArchiveEntry,
  type ArchiveStore,
  archiveHandle,
  checkEntryShape,
  mergedMessageIds,
} from './archive-store.js';

export interface SqliteArchiveOptions {
  /** The database file. Its parent directory is created when missing (not in read-only mode). */
  path: string;
  /**
   * Open an existing archive for reading only: `put` throws, nothing on disk changes.
   * @default false
   */
  readonly?: boolean;
  /**
   * When an entry was archived; injectable so tests and replays are deterministic.
   * @default () => new Date()
   */
  clock?: () => Date;
  /**
   * How long a write waits for another process holding the archive's write lock before failing.
   * @default 5000
   */
  busyTimeoutMs?: number;
}

/** What `list` reports about an entry, without its (possibly large) content. */
export interface ArchiveEntrySummary {
  handle: string;
  kind: ArchiveEntry['kind'];
  strategy: string;
  messageIds: string[];
  /** ISO 8601 time of the first `put`. */
  createdAt: string;
  /** UTF-8 size of the stored JSON content. */
  sizeBytes: number;
}

export const archiveListOrders = ['oldest-first', 'newest-first'] as const;
export type ArchiveListOrder = (typeof archiveListOrders)[number];

export interface ArchiveListOptions {
  kind?: ArchiveEntry['kind'];
  strategy?: string;
  /** Only entries archived from this message. */
  messageId?: string;
  /** @default 'oldest-first' */
  order?: ArchiveListOrder;
  /** At most this many entries; all when omitted. */
  limit?: number;
  /** @default 0 */
  offset?: number;
}

export interface SqliteArchive extends ArchiveStore {
  /** The database file as given. */
  readonly path: string;
  /** Number of archived originals. */
  readonly size: number;
  list(options?: ArchiveListOptions): ArchiveEntrySummary[];
  /** Closes the database; any later call throws an `io-error`. Safe to call twice. */
  close(): void;
}

/**
 * Marks a database as a precis archive (`PRAGMA application_id`, the bytes "PRCS"), so a foreign SQLite file
 * is recognised before anything is written to it.
 */
const applicationId = 0x50524353;

interface Migration {
  version: number;
  statements: readonly string[];
}

/** Applied in order, each once, inside one write transaction; append new versions, never edit old ones. */
const migrations: readonly Migration[] = [
  {
    version: 1,
    statements: [
      `CREATE TABLE archive_entries (
        handle TEXT PRIMARY KEY NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('messages', 'tool-output', 'text')),
        strategy TEXT NOT NULL,
        message_ids TEXT NOT NULL,
        content TEXT NOT NULL,
        size_bytes INTEGER NOT NULL,
        created_at TEXT NOT NULL
      )`,
      'CREATE INDEX archive_entries_created_at ON archive_entries (created_at)',
    ],
  },
  {
    // Index entries (one handle for a summary's spans). SQLite cannot change a CHECK constraint in place: the
    // table is copied into one with the new constraint, rowids kept (listing orders by them).
    version: 2,
    statements: [
      `CREATE TABLE archive_entries_v2 (
        handle TEXT PRIMARY KEY NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('messages', 'tool-output', 'text', 'index')),
        strategy TEXT NOT NULL,
        message_ids TEXT NOT NULL,
        content TEXT NOT NULL,
        size_bytes INTEGER NOT NULL,
        created_at TEXT NOT NULL
      )`,
      `INSERT INTO archive_entries_v2 (rowid, handle, kind, strategy, message_ids, content, size_bytes, created_at)
       SELECT rowid, handle, kind, strategy, message_ids, content, size_bytes, created_at FROM archive_entries`,
      'DROP TABLE archive_entries',
      'ALTER TABLE archive_entries_v2 RENAME TO archive_entries',
      'CREATE INDEX archive_entries_created_at ON archive_entries (created_at)',
    ],
  },
];
const latestVersion = migrations.reduce((latest, migration) => Math.max(latest, migration.version), 0);

type Driver = typeof BetterSqlite3;
type Database = BetterSqlite3.Database;

let driver: Driver | undefined;

/** Loaded on first use so the CLI's other commands and in-memory users never pay for the native module. */
function loadDriver(): Driver {
  if (driver === undefined) {
    try {
      driver = createRequire(import.meta.url)('better-sqlite3') as Driver;
    } catch (error) {
      throw new PrecisError(
        'io-error',
        `the SQLite archive needs the better-sqlite3 package, which could not be loaded: ${reasonOf(error)}`,
        { cause: error },
      );
    }
  }
  return driver;
}

interface EntryRow {
  handle: string;
  kind: ArchiveEntry['kind'];
  strategy: string;
  message_ids: string;
  content: string;
}

interface SummaryRow {
  handle: string;
  kind: ArchiveEntry['kind'];
  strategy: string;
  message_ids: string;
  size_bytes: number;
  created_at: string;
}

/**
 * An archive in an SQLite file, for the CLI and long sessions: originals survive the process, and several
 * processes may write the same file at once (WAL journal, writers wait up to `busyTimeoutMs` for the lock).
 * Content is stored as JSON text; binary data in messages (`Uint8Array`, `ArrayBuffer`) comes back as the
 * base64 string and a `URL` as its href — the forms the handle is computed from, so the original's handle
 * and serialisation are unchanged.
 */
export function createSqliteArchive(options: SqliteArchiveOptions): SqliteArchive {
  const { path, readonly = false, clock = () => new Date(), busyTimeoutMs = 5000 } = options;
  if (typeof path !== 'string' || path === '') {
    throw new InvalidArgumentError('path', 'must be a non-empty string');
  }
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new InvalidArgumentError(
      'busyTimeoutMs',
      `must be a non-negative integer, got ${String(busyTimeoutMs)}`,
    );
  }

  const database = openDatabase(path, readonly, busyTimeoutMs);
  const statements = guard(path, 'prepare', () => {
    registerMergeIds(database, path);
    return prepareStatements(database);
  });

  function ensureOpen(): void {
    if (!database.open) throw new PrecisError('io-error', `archive ${path} is closed`);
  }

  return {
    path,
    put(entry) {
      const { kind, strategy, messageIds, content } = entry;
      checkEntryShape(entry);
      if (typeof strategy !== 'string') throw new InvalidArgumentError('strategy', 'must be a string');
      if (!Array.isArray(messageIds) || messageIds.some((id) => typeof id !== 'string')) {
        throw new InvalidArgumentError('messageIds', 'must be an array of strings');
      }
      const json = serializeContent(content);
      const handle = archiveHandle(kind, content);
      ensureOpen();
      if (readonly) {
        throw new PrecisError('io-error', `archive ${path} is open read-only: cannot store ${handle}`);
      }
      guard(path, `store ${handle}`, () =>
        statements.insert.run(
          handle,
          kind,
          strategy,
          JSON.stringify(messageIds),
          json,
          Buffer.byteLength(json, 'utf8'),
          clock().toISOString(),
        ),
      );
      return handle;
    },
    get(handle) {
      ensureOpen();
      if (typeof handle !== 'string') return undefined;
      const row = guard(path, `read ${handle}`, () => statements.get.get(handle));
      return row === undefined ? undefined : entryOf(path, row);
    },
    has(handle) {
      ensureOpen();
      if (typeof handle !== 'string') return false;
      return guard(path, `read ${handle}`, () => statements.has.get(handle)) !== undefined;
    },
    get size() {
      ensureOpen();
      return guard(path, 'count entries', () => statements.count.get() ?? 0);
    },
    list(listOptions = {}) {
      ensureOpen();
      return listEntries(database, path, listOptions);
    },
    close() {
      if (database.open) database.close();
    },
  };
}

/** The SQL function that merges a stored entry's message ids with those of a repeated put (JSON arrays). */
const mergeIdsFunction = 'precis_merge_message_ids';

function registerMergeIds(database: Database, path: string): void {
  database.function(mergeIdsFunction, { deterministic: true }, (stored, added, handle) => {
    const known = parseStored(path, String(handle), String(stored)) as string[];
    const merged = mergedMessageIds(known, JSON.parse(String(added)) as string[]);
    return merged === undefined ? stored : JSON.stringify(merged);
  });
}

function prepareStatements(database: Database) {
  const merged = `${mergeIdsFunction}(message_ids, excluded.message_ids, handle)`;
  return {
    // A repeated put keeps the first row and adds the message ids it lacked, in one statement, so writers in
    // other processes cannot interleave; the usual repeat (the same ids) neither calls the merge nor writes.
    insert: database.prepare<[string, string, string, string, string, number, string]>(
      `INSERT INTO archive_entries (handle, kind, strategy, message_ids, content, size_bytes, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (handle) DO UPDATE SET message_ids = ${merged} WHERE excluded.message_ids IS NOT message_ids`,
    ),
    get: database.prepare<[string], EntryRow>(
      'SELECT handle, kind, strategy, message_ids, content FROM archive_entries WHERE handle = ?',
    ),
    has: database.prepare<[string], number>('SELECT 1 FROM archive_entries WHERE handle = ?').pluck(),
    count: database.prepare<[], number>('SELECT count(*) FROM archive_entries').pluck(),
  };
}

function openDatabase(path: string, readonly: boolean, busyTimeoutMs: number): Database {
  const Driver = loadDriver();
  if (!readonly) {
    try {
      mkdirSync(dirname(resolve(path)), { recursive: true });
    } catch (error) {
      const reason = `cannot create the directory of archive ${path}: ${reasonOf(error)}`;
      throw new PrecisError('io-error', reason, { cause: error });
    }
  }
  let database: Database;
  try {
    database = new Driver(path, { readonly, fileMustExist: readonly, timeout: busyTimeoutMs });
  } catch (error) {
    throw new PrecisError('io-error', `cannot open archive ${path}: ${reasonOf(error)}`, { cause: error });
  }
  const deadline = Date.now() + busyTimeoutMs;
  for (;;) {
    try {
      initialise(database, path, readonly);
      return database;
    } catch (error) {
      // Processes initialising one new file at once can get SQLITE_BUSY without SQLite's busy handler ever
      // waiting (it refuses to wait where that could deadlock): retry the whole step until the timeout.
      if (isBusy(error) && Date.now() < deadline) {
        sleep(5 + Math.random() * 20);
        continue;
      }
      database.close();
      if (PrecisError.isInstance(error)) throw error;
      throw new PrecisError('io-error', `cannot open archive ${path}: ${reasonOf(error)}`, { cause: error });
    }
  }
}

function isBusy(error: unknown): boolean {
  const cause = PrecisError.isInstance(error) ? error.cause : error;
  const code = (cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

function sleep(milliseconds: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, milliseconds);
}

/** Checks the file is a precis archive (or empty) before changing anything, then migrates it. */
function initialise(database: Database, path: string, readonly: boolean): void {
  const notArchive = (why: string) => new PrecisError('io-error', `${path} is not a precis archive: ${why}`);
  let tables: string[] = [];
  let foundApplicationId = 0;
  try {
    // One read transaction, so another process initialising the file cannot commit between the two reads.
    database.transaction(() => {
      foundApplicationId = database.pragma('application_id', { simple: true }) as number;
      tables = tableNames(database);
    })();
  } catch (error) {
    // Only SQLITE_NOTADB says what the file is; a lock held past the timeout or a permission problem does not.
    const foreign = (error as { code?: unknown }).code === 'SQLITE_NOTADB';
    const message = foreign ? `${path} is not a precis archive` : `cannot open archive ${path}`;
    throw new PrecisError('io-error', `${message}: ${reasonOf(error)}`, { cause: error });
  }
  const empty = tables.length === 0 && foundApplicationId === 0;
  if (!empty && (foundApplicationId !== applicationId || !tables.includes('precis_schema'))) {
    throw notArchive(
      tables.length === 0
        ? 'an SQLite database of another application'
        : `an SQLite database with other tables (${tables.slice(0, 5).join(', ')})`,
    );
  }
  if (readonly) {
    if (empty) throw notArchive('the database is empty');
    checkVersion(path, schemaVersion(database));
    return;
  }
  // Set outside the transaction (SQLite requires it); persistent, so readers get WAL too.
  database.pragma('journal_mode = WAL');
  // Durable across process crashes in WAL mode; only a power loss may lose the last commits.
  database.pragma('synchronous = NORMAL');
  // Another process may be initialising the same new file: decide again under the write lock.
  database
    .transaction(() => {
      const version = tableNames(database).includes('precis_schema') ? schemaVersion(database) : 0;
      checkVersion(path, version);
      if (version === 0) {
        database.pragma(`application_id = ${applicationId}`);
        database.exec(
          'CREATE TABLE precis_schema (version INTEGER PRIMARY KEY NOT NULL, applied_at TEXT NOT NULL)',
        );
      }
      const apply = database.prepare<[number, string]>(
        'INSERT INTO precis_schema (version, applied_at) VALUES (?, ?)',
      );
      for (const migration of migrations) {
        if (migration.version <= version) continue;
        for (const statement of migration.statements) database.exec(statement);
        apply.run(migration.version, new Date().toISOString());
      }
    })
    .immediate();
}

function tableNames(database: Database): string[] {
  return database
    .prepare<[], string>("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
    .pluck()
    .all();
}

function schemaVersion(database: Database): number {
  return database.prepare<[], number | null>('SELECT max(version) FROM precis_schema').pluck().get() ?? 0;
}

function checkVersion(path: string, version: number): void {
  if (version > latestVersion) {
    throw new PrecisError(
      'io-error',
      `archive ${path} was written by a newer precis (schema version ${version}; this version reads up to ${latestVersion})`,
    );
  }
}

function listEntries(database: Database, path: string, options: ArchiveListOptions): ArchiveEntrySummary[] {
  const { kind, strategy, messageId, order = 'oldest-first', limit, offset = 0 } = options;
  if (!archiveListOrders.includes(order)) {
    throw new InvalidArgumentError('order', `must be one of ${archiveListOrders.join(', ')}`);
  }
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 0)) {
    throw new InvalidArgumentError('limit', 'must be a non-negative integer');
  }
  if (!Number.isInteger(offset) || offset < 0) {
    throw new InvalidArgumentError('offset', 'must be a non-negative integer');
  }
  const conditions: string[] = [];
  const parameters: (string | number)[] = [];
  if (kind !== undefined) {
    conditions.push('kind = ?');
    parameters.push(kind);
  }
  if (strategy !== undefined) {
    conditions.push('strategy = ?');
    parameters.push(strategy);
  }
  if (messageId !== undefined) {
    conditions.push('EXISTS (SELECT 1 FROM json_each(message_ids) WHERE value = ?)');
    parameters.push(messageId);
  }
  const direction = order === 'oldest-first' ? 'ASC' : 'DESC';
  const sql =
    'SELECT handle, kind, strategy, message_ids, size_bytes, created_at FROM archive_entries' +
    (conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`) +
    ` ORDER BY created_at ${direction}, rowid ${direction} LIMIT ? OFFSET ?`;
  parameters.push(limit ?? -1, offset);
  const rows = guard(path, 'list entries', () =>
    database.prepare<unknown[], SummaryRow>(sql).all(...parameters),
  );
  return rows.map((row) => ({
    handle: row.handle,
    kind: row.kind,
    strategy: row.strategy,
    messageIds: parseStored(path, row.handle, row.message_ids) as string[],
    createdAt: row.created_at,
    sizeBytes: row.size_bytes,
  }));
}

function entryOf(path: string, row: EntryRow): ArchiveEntry {
  return {
    handle: row.handle,
    kind: row.kind,
    content: parseStored(path, row.handle, row.content) as ArchiveEntry['content'],
    messageIds: parseStored(path, row.handle, row.message_ids) as string[],
    strategy: row.strategy,
  };
}

function parseStored(path: string, handle: string, json: string): unknown {
  try {
    return JSON.parse(json);
  } catch (error) {
    throw new PrecisError('io-error', `archive ${path}: entry ${handle} is corrupt: ${reasonOf(error)}`, {
      cause: error,
    });
  }
}

/**
 * JSON text whose parse gets the same `archiveHandle` as the original: bytes as base64 (a
 * `Buffer`'s own `toJSON` is bypassed), bigints as strings, functions and symbols as null. Unlike
 * `JSON.stringify`, keeps `-0` (valid JSON, and `JSON.parse` reads it back), so stored content deep-equals
 * the original.
 */
function serializeContent(content: unknown): string {
  let json: string | undefined;
  let negativeZero: string | undefined;
  try {
    json = JSON.stringify(content, function replace(this: Record<string, unknown>, key, value: unknown) {
      if (Object.is(value, -0)) {
        // A placeholder no real string can equal, swapped for the literal afterwards.
        negativeZero ??= `precis-negative-zero-${randomUUID()}`;
        return negativeZero;
      }
      const original = this[key];
      if (original instanceof Uint8Array) {
        return Buffer.from(original.buffer, original.byteOffset, original.byteLength).toString('base64');
      }
      if (original instanceof ArrayBuffer) return Buffer.from(original).toString('base64');
      if (typeof value === 'bigint') return value.toString();
      if (typeof value === 'function' || typeof value === 'symbol') return null;
      return value;
    });
  } catch (error) {
    throw new InvalidArgumentError('content', `cannot be stored as JSON: ${reasonOf(error)}`, {
      cause: error,
    });
  }
  if (json === undefined) throw new InvalidArgumentError('content', 'must be a JSON value or messages');
  return negativeZero === undefined ? json : json.replaceAll(`"${negativeZero}"`, '-0');
}

/** Runs a database call, turning SQLite failures (busy past the timeout, disk full, ...) into `io-error`s. */
function guard<T>(path: string, action: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (PrecisError.isInstance(error)) throw error;
    throw new PrecisError('io-error', `archive ${path}: cannot ${action}: ${reasonOf(error)}`, {
      cause: error,
    });
  }
}

function reasonOf(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && !error.message.includes(code)
      ? `${error.message} (${code})`
      : error.message;
  }
  return String(error);
}
