// Import throughput per transcript format on the real sessions in ../shared/data/sessions: detection plus
// parsing into a precis conversation, median of several passes, MB/s by format.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importTranscript } from '../dist/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const sessionsDir = join(here, '..', '..', 'shared', 'data', 'sessions');
let files;
try {
  files = readdirSync(sessionsDir)
    .filter((name) => name !== 'MANIFEST.md')
    .sort();
} catch {
  console.log(`import.bench: ${sessionsDir} not found, skipping`);
  process.exit(0);
}

const passes = 7;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const rows = [];
const byFormat = new Map();
for (const file of files) {
  const text = readFileSync(join(sessionsDir, file), 'utf8');
  const megabytes = Buffer.byteLength(text) / 1e6;
  let result;
  const times = [];
  for (let pass = 0; pass < passes; pass++) {
    const start = performance.now();
    result = importTranscript(text, { file });
    times.push(performance.now() - start);
  }
  const ms = median(times);
  rows.push([
    file.slice(0, 48),
    result.format,
    megabytes.toFixed(2),
    String(result.conversation.messages.length),
    ms.toFixed(1),
    (megabytes / (ms / 1000)).toFixed(1),
  ]);
  const entry = byFormat.get(result.format) ?? { megabytes: 0, ms: 0, files: 0 };
  entry.megabytes += megabytes;
  entry.ms += ms;
  entry.files++;
  byFormat.set(result.format, entry);
}

// A synthetic large Claude Code style JSONL (several MB, one 1M-character tool result) to show linear behaviour.
const big = [];
for (let i = 0; i < 2000; i++) {
  big.push(
    JSON.stringify({
      type: 'user',
      uuid: `u${i}`,
      parentUuid: i ? `a${i - 1}` : null,
      sessionId: 's',
      timestamp: '2025-01-01T00:00:00Z',
      message: { role: 'user', content: `step ${i}: ${'please continue with the refactor. '.repeat(20)}` },
    }),
  );
  big.push(
    JSON.stringify({
      type: 'assistant',
      uuid: `a${i}`,
      parentUuid: `u${i}`,
      sessionId: 's',
      timestamp: '2025-01-01T00:00:01Z',
      message: {
        id: `msg${i}`,
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [{ type: 'text', text: `Working on step ${i}. `.repeat(30) }],
      },
    }),
  );
}
big.push(
  JSON.stringify({
    type: 'user',
    uuid: 'huge',
    parentUuid: 'a1999',
    sessionId: 's',
    timestamp: '2025-01-01T00:00:02Z',
    message: { role: 'user', content: 'x '.repeat(500_000) },
  }),
);
const bigText = big.join('\n');
const bigTimes = [];
let bigResult;
for (let pass = 0; pass < 3; pass++) {
  const start = performance.now();
  bigResult = importTranscript(bigText, { file: 'synthetic.jsonl' });
  bigTimes.push(performance.now() - start);
}
const bigMs = median(bigTimes);
const bigMb = Buffer.byteLength(bigText) / 1e6;
rows.push([
  'synthetic Claude Code JSONL (1M-char record)',
  bigResult.format,
  bigMb.toFixed(2),
  String(bigResult.conversation.messages.length),
  bigMs.toFixed(1),
  (bigMb / (bigMs / 1000)).toFixed(1),
]);

const table = (header, body) => {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const line = (cells) =>
    cells.map((c, i) => (i === 0 || i === 1 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
};
console.log(`Import throughput (median of ${passes} passes, detection included)`);
console.log(table(['session', 'format', 'MB', 'messages', 'ms', 'MB/s'], rows));
console.log('\nBy format');
console.log(
  table(
    ['format', 'files', 'MB', 'MB/s'],
    [...byFormat].map(([format, entry]) => [
      format,
      String(entry.files),
      entry.megabytes.toFixed(2),
      (entry.megabytes / (entry.ms / 1000)).toFixed(1),
    ]),
  ),
);
