// Scaling of the transcript importers (and two text helpers) on the large and pathological inputs their
// unit tests read. The tests check what comes out; the speed is measured here, because a timed unit test
// fails on a busy shared machine. Each input is built at scale 1 (the unit test's size) and at scale 2: a
// linear parser takes about 2x as long on the doubled input, a quadratic one about 4x. "old bound ms" is the
// wall-time limit the unit test used to assert, for reference only.

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

const parse = (importer) => (text) =>
  importer.parse(text, createImportContext()).conversation.messages.length;

function aiderLarge(scale) {
  const parts = [];
  for (let session = 0; session < 300 * scale; session++) {
    parts.push(
      `# aider chat started at 2024-01-01 00:${String(session % 60).padStart(2, '0')}:00`,
      '',
      '> Aider v0.1  ',
      '',
    );
    for (let turn = 0; turn < 10; turn++) {
      parts.push(
        `#### change ${turn}  `,
        '> 1 prompt tokens, 1 completion tokens, $0 cost  ',
        '',
        'Here:',
        '',
      );
      parts.push(
        'f.py',
        '```python',
        '<<<<<<< SEARCH',
        `a = ${turn}`,
        '=======',
        `a = ${turn + 1}`,
        '>>>>>>> REPLACE',
        '```',
        '',
      );
      parts.push('> Applied edit to f.py  ', '');
    }
  }
  parts.push('#### dump  ', '', '```', 'y'.repeat(1_500_000 * scale), '```', '');
  return parts.join('\n');
}

const aiderPathological = (scale) =>
  `#### go  \n\n${'```\n<<<<<<< SEARCH\n<think>\n► **THINKING**\n<thinking-content-ab>\n> half\n'.repeat(15_000 * scale)}`;

function claudeCodeLarge(scale) {
  const record = (fields) =>
    JSON.stringify({
      parentUuid: null,
      isSidechain: false,
      userType: 'external',
      cwd: '/tmp/project',
      sessionId: 'session-1',
      version: '1.0.0',
      gitBranch: 'main',
      timestamp: '2025-01-01T00:00:00.000Z',
      ...fields,
    });
  const lines = [record({ type: 'user', uuid: 'u0', message: { role: 'user', content: 'start' } })];
  for (let index = 1; index <= 5000 * scale; index++) {
    lines.push(
      record({
        type: 'assistant',
        uuid: `a${index}`,
        message: {
          id: `msg_${index}`,
          type: 'message',
          role: 'assistant',
          model: 'claude-test',
          content: [
            { type: 'tool_use', id: `toolu_${index}`, name: 'Read', input: { file_path: `/f${index}` } },
          ],
        },
      }),
      record({
        type: 'user',
        uuid: `r${index}`,
        message: {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: `toolu_${index}`,
              content: index === 1 ? 'y'.repeat(2_000_000 * scale) : 'ok',
            },
          ],
        },
      }),
    );
  }
  return lines.join('\n');
}

function codexLarge(scale) {
  const envelope = (payload) =>
    JSON.stringify({ timestamp: '2025-10-03T10:00:00.000Z', type: 'response_item', payload });
  const lines = [
    JSON.stringify({ timestamp: '2025-10-03T10:00:00.000Z', type: 'session_meta', payload: { id: 'big' } }),
  ];
  for (let turn = 0; turn < 3000 * scale; turn++) {
    lines.push(
      envelope({ type: 'message', role: 'user', content: [{ type: 'input_text', text: `step ${turn}` }] }),
      envelope({
        type: 'function_call',
        name: 'shell',
        arguments: '{"command":["ls"]}',
        call_id: `c${turn}`,
      }),
      envelope({ type: 'function_call_output', call_id: `c${turn}`, output: 'a.txt\nb.txt' }),
    );
  }
  lines.push(
    envelope({
      type: 'function_call',
      name: 'shell',
      arguments: '{"command":["cat","big"]}',
      call_id: 'big',
    }),
    envelope({
      type: 'function_call_output',
      call_id: 'big',
      output: JSON.stringify({ output: 'x'.repeat(2_000_000 * scale) }),
    }),
  );
  return lines.join('\n');
}

function gptmeLarge(scale) {
  const line = (fields) => JSON.stringify({ timestamp: '2025-01-01T10:00:00.000000', ...fields });
  const lines = [line({ role: 'user', content: 'dump' })];
  for (let turn = 0; turn < 2000 * scale; turn++) {
    lines.push(line({ role: 'assistant', content: `step ${turn}\n\`\`\`shell\necho ${turn}\n\`\`\`` }));
    lines.push(line({ role: 'system', content: `Ran command: \`echo ${turn}\`` }));
  }
  lines.push(line({ role: 'assistant', content: '```text\nsome output line\n```\n'.repeat(50_000 * scale) }));
  return lines.join('\n');
}

function miniSweAgentLarge(scale) {
  const huge = 'x'.repeat(3_000_000 * scale);
  const messages = [
    { role: 'user', content: 'task' },
    { role: 'assistant', content: '```bash\n'.repeat(200_000 * scale) },
    { role: 'user', content: 'Please always provide EXACTLY ONE action' },
    { role: 'assistant', content: `THOUGHT ${huge}\n\n\`\`\`bash\ncat big\n\`\`\`` },
    { role: 'user', content: `<returncode>0</returncode>\n<output>\n${huge}\n</output>` },
  ];
  return JSON.stringify({ info: {}, messages, trajectory_format: 'mini-swe-agent-1' });
}

function openHandsLarge(scale) {
  const big = 'z\n'.repeat(1_000_000 * scale);
  const messages = [
    { role: 'system', content: 'You are OpenHands agent, a helpful AI assistant.' },
    { role: 'user', content: 'task' },
    {
      role: 'assistant',
      content: `Write it.\n<function=str_replace_editor>\n<parameter=command>create</parameter>\n<parameter=file_text>${big}</parameter>\n</function>`,
    },
    { role: 'user', content: `EXECUTION RESULT of [str_replace_editor]:\n${big}` },
    { role: 'user', content: 'next' },
    {
      role: 'assistant',
      content: `<function=f>\n${'<parameter=a>'.repeat(200_000 * scale)}</function>${'</parameter>'.repeat(1000 * scale)}`,
    },
  ];
  return JSON.stringify({ messages });
}

function providerJsonLarge(scale) {
  const messages = [];
  for (let turn = 0; turn < 5000 * scale; turn++) {
    messages.push(
      { role: 'user', content: `question ${turn}` },
      { role: 'assistant', content: `answer ${turn}` },
    );
  }
  messages.push({ role: 'user', content: 'y'.repeat(2_000_000 * scale) });
  return JSON.stringify({ model: 'gpt-4o', messages });
}

function specStoryLarge(scale) {
  const segments = ['_**User**_', '', 'go', '', '---', '', '_**Assistant**_', ''];
  for (let index = 0; index < 4000 * scale; index++) {
    segments.push(
      `Step ${index}`,
      '',
      '---',
      '',
      '```bash',
      `echo ${index}`,
      '```',
      '',
      '```',
      `out ${index}`,
      '```',
      '',
      '---',
      '',
    );
  }
  segments.push('```', 'x'.repeat(1_500_000 * scale), '```');
  return segments.join('\n');
}

const specStoryPathological = (scale) =>
  `_**User**_\n\nhi\n\n---\n\n_**Assistant**_\n\n${'```\n<think>\n<details>\n<tool-use x>\n'.repeat(20_000 * scale)}`;

function sweAgentLarge(scale) {
  const history = [
    { role: 'user', content: 'task' },
    { role: 'assistant', content: `${'```\n'.repeat(100_000 * scale)}then\n\`\`\`\ncat big\n\`\`\`` },
    { role: 'user', content: 'y'.repeat(2_000_000 * scale) },
  ];
  return JSON.stringify({ environment: 'swe_main', trajectory: [], history, info: {} });
}

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
