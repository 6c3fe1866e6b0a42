// Token accounting benchmark: `npm run build && node bench/tokens.bench.mjs`.
//
// Reads the development sessions in ../../shared/data/sessions (relative to the repository), turns each into
// precis text messages, and compares the cached accountant with a bare gpt-tokenizer pass over the same texts.
// Importers do not exist yet, so the extraction is crude: JSON / JSONL records (or `messages` / `history`
// entries) become one message each, whose text is the string leaves of the record's message content, minus
// discriminators, ids, signatures and inline image data; markdown is split on headers and `---` separators.
// Every figure is the median of several passes (BENCH_PASSES, default 7; 3 for the multi-second rows). The
// machines are shared: expect ±30% between runs on small sessions, and read the TOTAL row first.
// BENCH_FULL=1 also times the unguarded whitespace and emoji rows (about 10 s each).

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createO200kCounter, createTokenAccountant } from '../dist/tokens/index.js';
import { clearO200kCaches } from '../dist/tokens/o200k-counter.js';

const here = dirname(fileURLToPath(import.meta.url));
const sessionsDirectory = join(here, '..', '..', 'shared', 'data', 'sessions');
const passes = Number(process.env.BENCH_PASSES ?? 7);
const cheapPasses = passes * 3;
const full = process.env.BENCH_FULL === '1';
const slowPasses = Math.min(passes, 3);

// The same module instance the counter loads, so both sides share one merge cache.
const require = createRequire(join(here, '..', 'dist', 'tokens', 'o200k-counter.js'));
const encoding = require('gpt-tokenizer/encoding/o200k_base');
const plainText = { disallowedSpecial: new Set() };
const bareCount = (text) => encoding.countTokens(text, plainText);

// ---------------------------------------------------------------------------------------------- helpers

function median(values) {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Median milliseconds of `fn` over `count` passes; `prepare` runs untimed before each pass. */
function time(count, fn, prepare = () => undefined) {
  const samples = [];
  let result;
  for (let pass = 0; pass < count; pass++) {
    const input = prepare(pass);
    const start = performance.now();
    result = fn(input, pass);
    samples.push(performance.now() - start);
  }
  return { ms: median(samples), result };
}

function seededText(length, alphabet, seed) {
  let state = seed >>> 0;
  const characters = new Array(length);
  for (let index = 0; index < length; index++) {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    characters[index] = alphabet[(state >>> 16) % alphabet.length];
  }
  return characters.join('');
}

function cpuMs() {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

const megabytes = (texts) => texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0) / 1e6;
const format = (value, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : '—');

function printTable(title, header, rows) {
  const widths = header.map((cell, column) =>
    Math.max(cell.length, ...rows.map((row) => String(row[column]).length)),
  );
  const line = (cells) =>
    cells
      .map((cell, column) =>
        column === 0 ? String(cell).padEnd(widths[column]) : String(cell).padStart(widths[column]),
      )
      .join('  ');
  console.log(`\n${title}`);
  console.log(line(header));
  console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const row of rows) console.log(line(row));
}

// ------------------------------------------------------------------------------------------- extraction

const skippedKeys = new Set(['type', 'id', 'tool_use_id', 'signature', 'media_type', 'cache_control']);

function stringLeaves(value, out) {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const item of value) stringLeaves(item, out);
  else if (value !== null && typeof value === 'object') {
    if (value.type === 'image') return;
    for (const [key, item] of Object.entries(value)) if (!skippedKeys.has(key)) stringLeaves(item, out);
  }
}

function recordToMessage(record) {
  if (record === null || typeof record !== 'object') return undefined;
  const message = record.message !== null && typeof record.message === 'object' ? record.message : record;
  if (typeof message.role !== 'string' || !('content' in message)) return undefined;
  const leaves = [];
  stringLeaves(message.content, leaves);
  const text = leaves.join('\n');
  if (text === '') return undefined;
  return { role: message.role === 'assistant' ? 'assistant' : 'user', content: text };
}

function extractMessages(file) {
  const raw = readFileSync(join(sessionsDirectory, file), 'utf8');
  if (file.endsWith('.md')) {
    return raw
      .split(/^(?=#{1,6} )|^-{3,}[ \t]*$/m)
      .filter((chunk) => chunk.trim() !== '')
      .map((chunk) => ({
        role: /_\*\*User\*\*_|^#### /m.test(chunk) ? 'user' : 'assistant',
        content: chunk,
      }));
  }
  let records;
  if (file.endsWith('.jsonl')) {
    records = raw
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line));
  } else {
    const document = JSON.parse(raw);
    records = Array.isArray(document) ? document : (document.messages ?? document.history ?? []);
  }
  return records.map(recordToMessage).filter((message) => message !== undefined);
}

// ------------------------------------------------------------------------------------------ cold load

function coldLoad() {
  const script = `
    const start = performance.now();
    const tokens = await import(${JSON.stringify(new URL('../dist/tokens/index.js', import.meta.url).href)});
    const imported = performance.now();
    const counter = tokens.createO200kCounter();
    counter.count('hello world');
    const counted = performance.now();
    process.stdout.write(JSON.stringify({ importMs: imported - start, firstCountMs: counted - imported }));
  `;
  const samples = [];
  for (let pass = 0; pass < passes; pass++) {
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    samples.push(JSON.parse(output));
  }
  return {
    importMs: median(samples.map((sample) => sample.importMs)),
    firstCountMs: median(samples.map((sample) => sample.firstCountMs)),
  };
}

// --------------------------------------------------------------------------------------------- sessions

function benchSession(messages) {
  const texts = messages.map((message) => message.content);
  const size = megabytes(texts);
  // Warm the tokenizer's merge cache once so neither side pays for it alone.
  for (const text of texts) bareCount(text);

  // CPU time of this process (user + system) besides wall time: the machines are shared, and other processes
  // stretch wall time far more than they stretch our CPU time.
  const bare = { cpu: [], wall: [] };
  const first = { cpu: [], wall: [] };
  let tokens = 0;
  for (let pass = 0; pass < passes; pass++) {
    let cpuStart = cpuMs();
    let wallStart = performance.now();
    let sum = 0;
    for (const text of texts) sum += bareCount(text);
    bare.wall.push(performance.now() - wallStart);
    bare.cpu.push(cpuMs() - cpuStart);
    const accountant = createTokenAccountant();
    cpuStart = cpuMs();
    wallStart = performance.now();
    tokens = accountant.countConversation(messages).contentTokens;
    first.wall.push(performance.now() - wallStart);
    first.cpu.push(cpuMs() - cpuStart);
    if (tokens !== sum) throw new Error(`content tokens ${tokens} differ from the bare count ${sum}`);
  }
  // The same from cold caches on both sides (gpt-tokenizer's merge cache, the pieces precis' counter remembers).
  const cold = { bare: [], first: [] };
  for (let pass = 0; pass < passes; pass++) {
    clearO200kCaches();
    let cpuStart = cpuMs();
    for (const text of texts) bareCount(text);
    cold.bare.push(cpuMs() - cpuStart);
    clearO200kCaches();
    const accountant = createTokenAccountant();
    cpuStart = cpuMs();
    accountant.countConversation(messages);
    cold.first.push(cpuMs() - cpuStart);
  }

  const accountant = createTokenAccountant();
  accountant.countConversation(messages);
  const warm = time(cheapPasses, () => accountant.countConversation(messages));
  const copies = time(
    cheapPasses,
    (copy) => accountant.countConversation(copy),
    () => messages.map((message) => ({ ...message })),
  );

  // Append one new message (a changed copy of the longest one, so it misses) to the cached conversation.
  const longest = messages.reduce((best, message) =>
    message.content.length > best.content.length ? message : best,
  );
  const appended = (pass) => ({ role: 'user', content: `${longest.content}\n(appended, pass ${pass})` });
  const append = time(
    passes,
    (conversation) => accountant.countConversation(conversation),
    (pass) => [...messages, appended(pass)],
  );
  const alone = time(
    passes,
    (message) => bareCount(message.content),
    (pass) => appended(pass + passes),
  );

  return {
    messages: messages.length,
    size,
    tokens,
    bareMs: median(bare.cpu),
    firstMs: median(first.cpu),
    bareWallMs: median(bare.wall),
    firstWallMs: median(first.wall),
    coldBareMs: median(cold.bare),
    coldFirstMs: median(cold.first),
    warmMs: warm.ms,
    copiesMs: copies.ms,
    appendMs: append.ms,
    appendedKb: Buffer.byteLength(appended(0).content) / 1e3,
    aloneMs: alone.ms,
  };
}

// ------------------------------------------------------------------------------------------ pathological

function benchPathological() {
  const guarded = createO200kCounter();
  const unguarded = createO200kCounter({ longRunGuardChars: Number.POSITIVE_INFINITY });
  // gpt-tokenizer caches merges per piece, so every pass starts from an empty merge cache: otherwise the second
  // counter would time the cache the first one filled.
  const fresh = (texts) => (pass) => {
    encoding.clearMergeCache();
    clearO200kCaches();
    return texts[pass];
  };
  const inputs = {
    '100k random letters': (pass) => seededText(100_000, 'abcdefghijklmnopqrstuvwxyz', pass + 1),
    '100k spaces and one x': (pass) => `${' '.repeat(100_000 - 1 - pass)}x${' '.repeat(pass)}`,
    '100k UTF-16 units of emoji': (pass) => seededText(50_000, ['😀', '🎉', '🔥', '🚀', '✅'], pass + 1),
    '1 MB base64': (pass) =>
      Buffer.from(
        seededText(750_000, 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,\n', pass + 1),
      ).toString('base64'),
    // Enough distinct pieces to churn gpt-tokenizer's merge cache (100k entries): counted without it.
    '4 MB base64 (random bytes)': (pass) =>
      Buffer.from(
        seededText(
          3_000_000,
          Array.from({ length: 256 }, (_, code) => String.fromCharCode(code)),
          pass + 1,
        ),
        'latin1',
      ).toString('base64'),
    '1 MB minified JSON': (pass) =>
      JSON.stringify(
        Array.from({ length: 14_000 }, (_, id) => ({
          id,
          name: seededText(10, 'abcdefghij', id * 31 + pass),
          score: id / 7,
          tags: ['a', 'b'],
        })),
      ),
  };
  const runUnguarded = new Set(['100k random letters', '1 MB base64', '1 MB minified JSON']);
  if (full) {
    runUnguarded.add('100k spaces and one x');
    runUnguarded.add('100k UTF-16 units of emoji');
  }
  const rows = [];
  for (const [name, make] of Object.entries(inputs)) {
    const slow = /^\d MB/.test(name) || runUnguarded.has(name);
    const count = slow ? slowPasses : passes;
    const texts = Array.from({ length: count }, (_, pass) => make(pass));
    const withGuard = time(count, (text) => guarded.count(text), fresh(texts));
    let unguardedMs = '(BENCH_FULL=1)';
    let change = '—';
    if (runUnguarded.has(name)) {
      const withoutGuard = time(count, (text) => unguarded.count(text), fresh(texts));
      const guardedLast = guarded.count(texts.at(-1));
      unguardedMs = format(withoutGuard.ms, 0);
      change = `${format(((guardedLast - withoutGuard.result) / withoutGuard.result) * 100, 3)}%`;
    }
    rows.push([
      name,
      format(megabytes([texts[0]]), 2),
      withGuard.result,
      format(withGuard.ms, 0),
      unguardedMs,
      change,
    ]);
  }
  return rows;
}

// ------------------------------------------------------------------------------------------------- main

const cold = coldLoad();
printTable(
  `Cold load (fresh processes, median of ${passes})`,
  ['step', 'ms'],
  [
    ['import dist/tokens/index.js', format(cold.importMs)],
    ['first count (loads o200k)', format(cold.firstCountMs)],
  ],
);

if (!existsSync(sessionsDirectory)) {
  console.log(`\nSessions skipped: ${sessionsDirectory} does not exist.`);
} else {
  const files = readdirSync(sessionsDirectory)
    .filter((file) => /\.(json|jsonl|traj|md)$/.test(file) && file !== 'MANIFEST.md')
    .sort();
  const rows = [];
  const totals = {
    messages: 0,
    size: 0,
    tokens: 0,
    bareMs: 0,
    firstMs: 0,
    bareWallMs: 0,
    firstWallMs: 0,
    coldBareMs: 0,
    coldFirstMs: 0,
    warmMs: 0,
    copiesMs: 0,
    appendMs: 0,
    aloneMs: 0,
  };
  for (const file of files) {
    const messages = extractMessages(file);
    if (messages.length === 0) continue;
    const result = benchSession(messages);
    for (const key of Object.keys(totals)) totals[key] += result[key];
    rows.push([
      file.length > 44 ? `${file.slice(0, 41)}...` : file,
      result.messages,
      format(result.size, 2),
      result.tokens,
      format(result.size / (result.bareMs / 1000)),
      format(result.size / (result.firstMs / 1000)),
      format(result.firstMs / result.bareMs, 2),
      format(result.firstWallMs / result.bareWallMs, 2),
      format(result.coldFirstMs / result.coldBareMs, 2),
      format(result.warmMs, 2),
      format(result.copiesMs, 2),
      `${format(result.appendMs, 2)} (${format(result.appendedKb, 0)} KB)`,
      format(result.aloneMs, 2),
    ]);
  }
  rows.push([
    'TOTAL (sums)',
    totals.messages,
    format(totals.size, 2),
    totals.tokens,
    format(totals.size / (totals.bareMs / 1000)),
    format(totals.size / (totals.firstMs / 1000)),
    format(totals.firstMs / totals.bareMs, 2),
    format(totals.firstWallMs / totals.bareWallMs, 2),
    format(totals.coldFirstMs / totals.coldBareMs, 2),
    format(totals.warmMs, 2),
    format(totals.copiesMs, 2),
    format(totals.appendMs, 2),
    format(totals.aloneMs, 2),
  ]);
  printTable(
    `Sessions (${sessionsDirectory}; median of ${passes} passes)`,
    [
      'session',
      'msgs',
      'MB',
      'tokens',
      'bare MB/s',
      'first MB/s',
      'first/bare',
      '(wall)',
      'cold',
      'warm ms',
      'copies ms',
      'append ms (msg)',
      'msg bare ms',
    ],
    rows,
  );
  console.log(
    [
      '',
      'bare: gpt-tokenizer countTokens over the same texts. first: a fresh accountant counting the conversation',
      '(hashing, guard scan, caching included; target first/bare <= 1.10). MB/s and first/bare use process CPU',
      "time; (wall) is the same ratio in wall time; cold: first/bare with both sides' caches emptied before each",
      "pass (gpt-tokenizer's merge cache, the pieces precis' counter remembers). warm: re-count of the same message",
      'objects (identity hits). copies: re-count of shallow copies (content-hash hits). append: re-count after',
      'appending one uncached message (the longest one, changed); msg bare: that message alone, bare.',
    ].join('\n'),
  );
}

printTable(
  `Pathological inputs (guard at 1000 characters; unguarded rows median of ${slowPasses})`,
  ['input', 'MB', 'tokens', 'guarded ms', 'unguarded ms', 'count change'],
  benchPathological(),
);
