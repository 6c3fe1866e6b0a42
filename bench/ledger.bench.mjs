// Ledger build throughput on the real sessions in ../shared/data/sessions: the messages are imported and given
// ids first (not timed), then the ledger is folded and snapshotted, median of several passes, MB/s of session text.
// Also the cost of one incremental add on the largest session, and of rendering.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildLedger, createLedger, renderLedger } from '../dist/ledger/index.js';
import { assignIds } from '../dist/messages/ids.js';
import { importTranscript } from '../dist/transcripts/import-transcript.js';

const here = dirname(fileURLToPath(import.meta.url));
const sessionsDir = process.env.PRECIS_SESSIONS_DIR ?? join(here, '..', '..', 'shared', 'data', 'sessions');
let files;
try {
  files = readdirSync(sessionsDir)
    .filter((name) => name !== 'MANIFEST.md')
    .sort();
} catch {
  console.log(`ledger.bench: ${sessionsDir} not found, skipping`);
  process.exit(0);
}

const passes = 9;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const rows = [];
let totalMb = 0;
let totalMs = 0;
let largest;
for (const file of files) {
  const text = readFileSync(join(sessionsDir, file), 'utf8');
  const megabytes = Buffer.byteLength(text) / 1e6;
  const messages = assignIds(importTranscript(text, { file }).conversation.messages);
  const times = [];
  let snapshot;
  for (let pass = 0; pass < passes; pass++) {
    const start = performance.now();
    snapshot = buildLedger(messages);
    times.push(performance.now() - start);
  }
  const ms = median(times);
  totalMb += megabytes;
  totalMs += ms;
  if (largest === undefined || megabytes > largest.megabytes) largest = { file, megabytes, messages };
  rows.push([
    file.slice(0, 48),
    megabytes.toFixed(2),
    String(messages.length),
    String(snapshot.files.length),
    String(snapshot.commands.length),
    String(snapshot.errors.length),
    ms.toFixed(2),
    (megabytes / (ms / 1000)).toFixed(1),
  ]);
}

const table = (header, body) => {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const line = (cells) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
};
console.log(`Ledger build (fold + snapshot, median of ${passes} passes)`);
console.log(table(['session', 'MB', 'messages', 'files', 'commands', 'errors', 'ms', 'MB/s'], rows));
console.log(
  `\nAll sessions: ${totalMb.toFixed(2)} MB in ${totalMs.toFixed(1)} ms = ${(totalMb / (totalMs / 1000)).toFixed(1)} MB/s`,
);

// Incremental: fold all but the last message, then time adding the last one (no snapshot).
const { messages } = largest;
const addTimes = [];
for (let pass = 0; pass < passes; pass++) {
  const ledger = createLedger();
  ledger.addAll(messages.slice(0, -1));
  const start = performance.now();
  ledger.add(messages.at(-1));
  addTimes.push(performance.now() - start);
}
const ledger = createLedger();
ledger.addAll(messages);
const snapshot = ledger.snapshot();
const renderTimes = [];
for (let pass = 0; pass < passes; pass++) {
  const start = performance.now();
  renderLedger(snapshot, { maxTokens: 2000 });
  renderTimes.push(performance.now() - start);
}
console.log(
  `Largest session (${largest.file}): one incremental add ${median(addTimes).toFixed(3)} ms; render capped at 2000 tokens ${median(renderTimes).toFixed(1)} ms`,
);
