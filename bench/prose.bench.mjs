// compressProse throughput and compression: `npm run build && node bench/prose.bench.mjs`.
//
// Two inputs: the long user/assistant text parts (>= 2,000 characters) of the sessions in ../shared/data/sessions
// (skipped when absent), each compressed on its own as the strategy does; and one synthetic 1 MB text (prose,
// lists, headings and code blocks) compressed in one call, which shows the pass stays linear. MB/s counts the
// input's UTF-8 bytes and includes the o200k counting compressProse does; ratio is output / input o200k tokens.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importTranscript } from '../dist/index.js';
import { compressProse } from '../dist/strategies/extractive-prose/compress-prose.js';
import { createO200kCounter } from '../dist/tokens/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const sessionsDirectory = join(here, '..', '..', 'shared', 'data', 'sessions');
const passes = Number(process.env.BENCH_PASSES ?? 5);
const keepRatio = Number(process.env.BENCH_KEEP_RATIO ?? 0.5);
const counter = createO200kCounter();

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const megabytes = (texts) => texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0) / 1e6;

function measure(name, texts) {
  // One untimed pass warms the tokenizer's merge cache and the JIT, as a long-running agent would be.
  const outputs = texts.map((text) => compressProse(text, { keepRatio }));
  const times = [];
  for (let pass = 0; pass < passes; pass++) {
    const start = performance.now();
    for (const text of texts) compressProse(text, { keepRatio });
    times.push(performance.now() - start);
  }
  const ms = median(times);
  const tokensIn = texts.reduce((sum, text) => sum + counter.count(text), 0);
  const tokensOut = outputs.reduce((sum, text) => sum + counter.count(text), 0);
  const changed = outputs.filter((output, index) => output !== texts[index]).length;
  const size = megabytes(texts);
  console.log(
    [
      name.padEnd(28),
      `${texts.length} texts`.padStart(10),
      `${size.toFixed(2)} MB`.padStart(9),
      `${ms.toFixed(1)} ms`.padStart(11),
      `${(size / (ms / 1000)).toFixed(1)} MB/s`.padStart(11),
      `tokens ${tokensIn} -> ${tokensOut} (${((100 * tokensOut) / tokensIn).toFixed(1)}%)`,
      `${changed} changed`,
    ].join('  '),
  );
}

function sessionProse() {
  let files;
  try {
    files = readdirSync(sessionsDirectory).filter((name) => name !== 'MANIFEST.md');
  } catch {
    return undefined;
  }
  const texts = [];
  for (const file of files.sort()) {
    let conversation;
    try {
      conversation = importTranscript(readFileSync(join(sessionsDirectory, file), 'utf8'), {
        file,
      }).conversation;
    } catch {
      continue;
    }
    for (const message of conversation.messages) {
      if (message.role !== 'user' && message.role !== 'assistant') continue;
      const parts =
        typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
      for (const part of parts) if (part.type === 'text' && part.text.length >= 2000) texts.push(part.text);
    }
  }
  return texts;
}

function syntheticText(targetBytes) {
  let state = 12345;
  const random = (count) => {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    return (state >>> 16) % count;
  };
  const words = (
    'the retry logic backoff queue cache parser config handler request response timeout worker test build ' +
    'module function value error result state token budget message session agent file path change'
  ).split(' ');
  const openers = ['We', 'The', 'Then', 'It', 'This', 'Next,', 'Finally,', 'Mr. Smith said'];
  const extras = [
    ' because the old approach failed',
    ' in src/retry/backoff.ts',
    ' (e.g. with v1.2.3)',
    ' instead of polling',
    ' at https://example.com/a.b',
    ' with TypeError: x is undefined',
    '',
    '',
    '',
  ];
  const sentence = () => {
    const length = 6 + random(14);
    const body = Array.from({ length }, () => words[random(words.length)]).join(' ');
    return `${openers[random(openers.length)]} ${body}${extras[random(extras.length)]}.`;
  };
  const blocks = [];
  let size = 0;
  while (size < targetBytes) {
    const kind = random(10);
    let block;
    if (kind === 0) block = `## Section ${blocks.length}`;
    else if (kind === 1)
      block = '```ts\nconst value = compute(1.5);\nif (value > 2) throw new Error("bad. Value.");\n```';
    else if (kind <= 3)
      block = Array.from({ length: 2 + random(4) }, () => `- ${sentence()} ${sentence()}`).join('\n');
    else block = Array.from({ length: 3 + random(8) }, sentence).join(' ');
    blocks.push(block);
    size += block.length + 2;
  }
  return blocks.join('\n\n');
}

console.log(`compressProse, keepRatio ${keepRatio}, median of ${passes} passes`);
const sessions = sessionProse();
if (sessions === undefined) console.log(`sessions: ${sessionsDirectory} not found, skipping`);
else if (sessions.length === 0) console.log('sessions: no text part of 2,000 characters or more');
else measure('sessions (long text parts)', sessions);
measure('synthetic 1 MB, one text', [syntheticText(1_000_000)]);
