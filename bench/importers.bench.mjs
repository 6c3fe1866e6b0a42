// Scaling of the transcript importers (and two text helpers) on the large and pathological inputs their
// unit tests read; the importers' inputs come from inputs/importer-inputs.mjs, which the tests import too.
// The tests check what comes out; the speed is measured here, because a timed unit test fails on a busy
// shared machine. Each input is built at scale 1 (the unit test's size) and at scale 2: a linear parser
// takes about 2x as long on the doubled input, a quadratic one about 4x. "old bound ms" is the wall-time
// limit the unit test used to assert, for reference only.

import { referencesIn } from '../dist/ledger/references.js';
import { aiderImporter } from '../dist/transcripts/aider/aider-importer.js';
import { claudeCodeImporter } from '../dist/transcripts/claude-code/claude-code-importer.js';
import { codexImporter } from '../dist/transcripts/codex/codex-importer.js';
import { gptmeImporter } from '../dist/transcripts/gptme/gptme-importer.js';
import { miniSweAgentImporter } from '../dist/transcripts/mini-swe-agent/mini-swe-agent-importer.js';
import { openHandsImporter } from '../dist/transcripts/openhands/openhands-importer.js';
import { openAIImporter } from '../dist/transcripts/provider-json/provider-json-importer.js';
import { trimBlankLines } from '../dist/transcripts/specstory/fence-scanner.js';
import { specStoryImporter } from '../dist/transcripts/specstory/specstory-importer.js';
import { sweAgentImporter } from '../dist/transcripts/swe-agent/swe-agent-importer.js';
import { createImportContext } from '../dist/transcripts/transcript-importer.js';
import {
  aiderLarge,
  aiderPathological,
  claudeCodeLarge,
  codexLarge,
  gptmeLarge,
  miniSweAgentLarge,
  openHandsLarge,
  providerJsonLarge,
  specStoryLarge,
  specStoryPathological,
  sweAgentLarge,
} from './inputs/importer-inputs.mjs';

const parse = (importer) => (text) =>
  importer.parse(text, createImportContext()).conversation.messages.length;

const cases = [
  {
    name: 'aider: 3000 edit blocks + 1.5 MB line',
    oldBoundMs: 3000,
    build: aiderLarge,
    run: parse(aiderImporter),
  },
  {
    name: 'aider: 15k unclosed SEARCH blocks',
    oldBoundMs: 3000,
    build: aiderPathological,
    run: parse(aiderImporter),
  },
  {
    name: 'claude-code: 5000 tool calls + 2 MB result',
    oldBoundMs: 5000,
    build: claudeCodeLarge,
    run: parse(claudeCodeImporter),
  },
  { name: 'codex: 3000 calls + 2 MB output', oldBoundMs: 3000, build: codexLarge, run: parse(codexImporter) },
  {
    name: 'gptme: 4000 records + 50k fences',
    oldBoundMs: 3000,
    build: gptmeLarge,
    run: parse(gptmeImporter),
  },
  {
    name: 'mini-swe-agent: 3 MB x2 + 200k unclosed fences',
    oldBoundMs: 3000,
    build: miniSweAgentLarge,
    run: parse(miniSweAgentImporter),
  },
  {
    name: 'openhands: 2 MB params + 200k open params',
    oldBoundMs: 3000,
    build: openHandsLarge,
    run: parse(openHandsImporter),
  },
  {
    name: 'provider-json: 10k messages + 2 MB',
    oldBoundMs: 3000,
    build: providerJsonLarge,
    run: parse(openAIImporter),
  },
  {
    name: 'specstory: 4000 calls + 1.5 MB fence',
    oldBoundMs: 3000,
    build: specStoryLarge,
    run: parse(specStoryImporter),
  },
  {
    name: 'specstory: 20k unclosed fences and tags',
    oldBoundMs: 3000,
    build: specStoryPathological,
    run: parse(specStoryImporter),
  },
  {
    name: 'swe-agent: 100k fences + 2 MB observation',
    oldBoundMs: 3000,
    build: sweAgentLarge,
    run: parse(sweAgentImporter),
  },
  {
    name: 'trimBlankLines: 200k blank lines around and inside',
    oldBoundMs: 500,
    build: (scale) => {
      const blanks = '\n '.repeat(200_000 * scale);
      return `${blanks}x${blanks}y${blanks}`;
    },
    run: trimBlankLines,
  },
  {
    name: 'referencesIn: long word and path runs',
    oldBoundMs: 200,
    build: (scale) => `${'a'.repeat(200_000 * scale)}#1 ${'b/'.repeat(50_000 * scale)}#2`,
    run: referencesIn,
  },
];

const passes = 7;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
/** Milliseconds for one call, timed over `repeats` calls so that tiny inputs still give a readable figure. */
function sampleMs(run, input, repeats) {
  globalThis.gc?.();
  const start = performance.now();
  for (let repeat = 0; repeat < repeats; repeat++) run(input);
  return (performance.now() - start) / repeats;
}

const rows = [];
let worstRatio = 0;
for (const { name, oldBoundMs, build, run } of cases) {
  const single = build(1);
  const double = build(2);
  // Warm up both sizes, and repeat calls that are too quick to time one by one.
  const repeats = Math.min(1000, Math.max(1, Math.ceil(20 / sampleMs(run, single, 1))));
  sampleMs(run, double, 1);
  // The two sizes alternate, so a change in the machine's load falls on both.
  const singleTimes = [];
  const doubleTimes = [];
  for (let pass = 0; pass < passes; pass++) {
    singleTimes.push(sampleMs(run, single, repeats));
    doubleTimes.push(sampleMs(run, double, repeats));
  }
  const singleMs = median(singleTimes);
  const doubleMs = median(doubleTimes);
  const megabytes = Buffer.byteLength(single) / 1e6;
  const ratio = doubleMs / singleMs;
  worstRatio = Math.max(worstRatio, ratio);
  rows.push([
    name,
    megabytes.toFixed(2),
    singleMs.toFixed(2),
    doubleMs.toFixed(2),
    ratio.toFixed(2),
    (megabytes / (singleMs / 1000)).toFixed(1),
    String(oldBoundMs),
  ]);
}

const table = (header, body) => {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const line = (cells) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
};
console.log(`Importer scaling on large and pathological inputs (median of ${passes} passes)`);
console.log(table(['case', 'MB', 'ms 1x', 'ms 2x', '2x/1x', 'MB/s', 'old bound ms'], rows));
console.log(`\nWorst 2x/1x ratio: ${worstRatio.toFixed(2)} (about 2 is linear, about 4 is quadratic)`);
