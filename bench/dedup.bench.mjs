// Near-duplicate detection speed and quality: findNearDuplicates on 1,000 synthetic ~2 KB texts with planted
// exact and near copies (precision / recall against the planted pairs), then on the tool outputs of the
// shared sessions in ../shared/data/sessions when they exist. Run `npm run build` first: this reads dist/.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importTranscript } from '../dist/index.js';
import { toolOutputText } from '../dist/messages/content.js';
import { findNearDuplicates } from '../dist/strategies/deduplicate/find-near-duplicates.js';

const here = dirname(fileURLToPath(import.meta.url));
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

// Synthetic set: log- and code-like lines of random words; ~9% exact copies, ~25% near copies (numbers
// rewritten, a line inserted or deleted) of an earlier text, most of them of the text just before.
let state = 12345;
const random = () => {
  state = (Math.imul(state, 1103515245) + 12345) >>> 0;
  return state / 2 ** 32;
};
const vocabulary = Array.from({ length: 3000 }, (_, index) => `tok${index.toString(36)}`);
const line = () =>
  Array.from(
    { length: 6 + Math.floor(random() * 8) },
    () => vocabulary[Math.floor(random() * vocabulary.length)],
  ).join(' ');
const freshText = () => {
  const lines = [];
  let length = 0;
  while (length < 2000) {
    const next = `${Math.floor(random() * 1000)}: ${line()}`;
    lines.push(next);
    length += next.length + 1;
  }
  return lines.join('\n');
};
const nearCopy = (text) => {
  const lines = text.split('\n');
  const edits = 1 + Math.floor(random() * 2);
  for (let edit = 0; edit < edits; edit++) {
    const at = Math.floor(random() * lines.length);
    const kind = random();
    if (kind < 0.4) lines[at] = lines[at].replace(/^\d+/, String(Math.floor(random() * 1000)));
    else if (kind < 0.7) lines.splice(at, 0, `${Math.floor(random() * 1000)}: ${line()}`);
    else lines.splice(at, 1);
  }
  return lines.join('\n');
};
const texts = [];
const planted = []; // [earlier index, later index]
const family = []; // index -> index of the fresh text it was copied from, directly or not
for (let index = 0; index < 1000; index++) {
  const roll = random();
  if (index > 0 && roll < 0.34) {
    const source = random() < 0.6 ? index - 1 : Math.floor(random() * index);
    texts.push(roll < 0.09 ? texts[source] : nearCopy(texts[source]));
    planted.push([source, index]);
    family.push(family[source]);
  } else {
    texts.push(freshText());
    family.push(index);
  }
}
// A planted source counts as found when reported as a duplicate at all (it may point at any later copy of its
// family); a report is right when it points into the same family.
const chains = new Set(planted.map(([source]) => source));

const times = [];
let result;
for (let pass = 0; pass < 6; pass++) {
  const start = performance.now();
  result = findNearDuplicates(texts);
  if (pass > 0) times.push(performance.now() - start);
}
const reported = new Set(result.map((duplicate) => duplicate.index));
const truePositives = result.filter(
  (duplicate) => family[duplicate.index] === family[duplicate.duplicateOf],
).length;
const recalled = [...chains].filter((index) => reported.has(index)).length;
// The similarity each planted pair really has (exact Jaccard of word 5-shingles): recall of what the threshold asks.
const shingles = (text) => {
  const words = text.replace(/\s+/g, ' ').trim().split(' ');
  const set = new Set();
  for (let start = 0; start + 5 <= words.length; start++) set.add(words.slice(start, start + 5).join(' '));
  return set;
};
const jaccard = (left, right) => {
  let shared = 0;
  for (const item of left) if (right.has(item)) shared++;
  return shared / (left.size + right.size - shared);
};
const aboveThreshold = [...planted].filter(
  ([source, copy]) => jaccard(shingles(texts[source]), shingles(texts[copy])) >= 0.9,
);
const foundAbove = aboveThreshold.filter(([source]) => reported.has(source)).length;
const kilobytes = texts.reduce((sum, text) => sum + text.length, 0) / 1000;
console.log(
  `synthetic: ${texts.length} texts, ${kilobytes.toFixed(0)} KB, ${chains.size} planted duplicates -> ` +
    `${reported.size} reported in ${median(times).toFixed(1)} ms (median of ${times.length}); ` +
    `precision ${(truePositives / Math.max(1, reported.size)).toFixed(3)}, recall ${(recalled / chains.size).toFixed(3)}; ` +
    `recall ${(foundAbove / aboveThreshold.length).toFixed(3)} of the ${aboveThreshold.length} planted pairs whose exact Jaccard is >= 0.9`,
);

const sessionsDir = join(here, '..', '..', 'shared', 'data', 'sessions');
let files = [];
try {
  files = readdirSync(sessionsDir)
    .filter((name) => name !== 'MANIFEST.md')
    .sort();
} catch {
  console.log(`sessions: ${sessionsDir} not found, skipping`);
}
let allOutputs = 0;
let allMs = 0;
for (const file of files) {
  const { conversation } = importTranscript(readFileSync(join(sessionsDir, file), 'utf8'), { file });
  const outputs = [];
  const groups = [];
  for (const message of conversation.messages) {
    if (typeof message.content === 'string') continue;
    for (const part of message.content) {
      if (part.type !== 'tool-result') continue;
      const text = toolOutputText(part.output);
      if (text.length < 200) continue;
      outputs.push(text);
      groups.push(`tool:${part.toolName}`);
    }
  }
  const passTimes = [];
  let found;
  for (let pass = 0; pass < 4; pass++) {
    const start = performance.now();
    found = findNearDuplicates(outputs, { groups });
    if (pass > 0) passTimes.push(performance.now() - start);
  }
  const ms = median(passTimes);
  allOutputs += outputs.length;
  allMs += ms;
  const exact = found.filter((duplicate) => duplicate.similarity === 1).length;
  const megabytes = outputs.reduce((sum, text) => sum + text.length, 0) / 1e6;
  console.log(
    `${file.slice(0, 56).padEnd(56)} ${String(outputs.length).padStart(4)} outputs ${megabytes.toFixed(2)} MB ` +
      `${String(found.length).padStart(3)} duplicates (${exact} exact) ${ms.toFixed(1)} ms`,
  );
}
if (files.length > 0) console.log(`sessions: ${allOutputs} tool outputs, ${allMs.toFixed(1)} ms in total`);
