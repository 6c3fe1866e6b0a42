import type { TokenCounter } from '../../tokens/index.js';
import { createO200kCounter } from '../../tokens/index.js';
import { checkShare } from '../strategy-support.js';

export interface CompressProseOptions {
  /**
   * Share of the prose's tokens to keep. Code blocks, headings, tables and list markers are kept on top of
   * it, so the whole text shrinks less than this when it holds much code. A number in (0, 1]; 1 keeps all.
   * @default 0.5
   */
  keepRatio?: number;
}

/**
 * What replaces each run of dropped sentences. A text whose prose already holds it has been compressed and
 * comes back unchanged: that is what makes `compressProse` idempotent, so repeated compactions never
 * compound the loss on one text (the known flaw of sentence-ratio compactors).
 */
export const elisionMarker = '[…]';

/** Sentences costing no more than the marker plus this many tokens are never worth dropping. */
const markerSlackTokens = 1;

/**
 * Ranking is by score / tokens^lengthPenalty: 1 would favour short sentences too much (value per token), 0
 * would let one long sentence crowd out several informative ones.
 */
const lengthPenalty = 0.35;

/** Most tokens a cut can add or remove where the pieces on either side of it meet. */
const cutToleranceTokens = 8;

let sharedCounter: TokenCounter | undefined;
function counter(): TokenCounter {
  sharedCounter ??= createO200kCounter();
  return sharedCounter;
}

// ------------------------------------------------------------------------------------------- structure

/** One piece of the text: kept verbatim (`fixed`, `blank`) or split into sentences (`prose`). */
type Segment =
  | { kind: 'fixed'; text: string }
  | { kind: 'blank'; text: string }
  | { kind: 'prose'; prefix: string; body: string; end: string };

const fenceOpenPattern = /^ {0,3}(`{3,}|~{3,})/;
const fenceClosePattern = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;
const blankPattern = /^[ \t]*$/;
const headingPattern = /^ {0,3}#{1,6}(?:[ \t]|$)/;
const tableOrHtmlPattern = /^[ \t]*[|<]/;
const ruleLinePattern = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const indentedCodePattern = /^(?: {4}|\t)/;
/** Leading indentation, block quote markers and one list marker (with an optional task box). */
const prefixPattern = /^[ \t]*(?:>[ \t]?)*[ \t]*(?:(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)(?:\[[ xX]\][ \t]+)?)?/;

/** Splits a text into lines with their endings, then into fenced code, fixed lines, blanks and prose blocks. */
function segmentText(text: string): Segment[] {
  const segments: Segment[] = [];
  const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  let open: { kind: 'prose'; prefix: string; body: string; end: string } | undefined;
  let index = 0;
  while (index < lines.length) {
    const raw = lines[index]!;
    const end = raw.endsWith('\r\n') ? '\r\n' : raw.endsWith('\n') ? '\n' : '';
    const line = raw.slice(0, raw.length - end.length);
    const fence = fenceOpenPattern.exec(line);
    if (fence) {
      // A closing fence uses the same character, is at least as long, and carries nothing else; an
      // unclosed fence runs to the end of the text.
      const marker = fence[1]!;
      let closing = index + 1;
      for (; closing < lines.length; closing++) {
        const candidate = fenceClosePattern.exec(lines[closing]!.replace(/\r?\n$/, ''));
        if (candidate && candidate[1]![0] === marker[0] && candidate[1]!.length >= marker.length) break;
      }
      const last = Math.min(closing, lines.length - 1);
      segments.push({ kind: 'fixed', text: lines.slice(index, last + 1).join('') });
      open = undefined;
      index = last + 1;
      continue;
    }
    if (blankPattern.test(line)) {
      segments.push({ kind: 'blank', text: raw });
      open = undefined;
    } else if (
      headingPattern.test(line) ||
      tableOrHtmlPattern.test(line) ||
      ruleLinePattern.test(line) ||
      (open === undefined && indentedCodePattern.test(line) && !/^\s*(?:[-*+]|\d{1,9}[.)])\s/.test(line))
    ) {
      segments.push({ kind: 'fixed', text: raw });
      open = undefined;
    } else {
      const prefix = prefixPattern.exec(line)![0];
      const marked = /[>*+\-\d]/.test(prefix);
      if (open !== undefined && !marked) {
        // A continuation line of the open paragraph or list item (hard-wrapped prose).
        open.body += open.end + line;
        open.end = end;
      } else {
        open = { kind: 'prose', prefix, body: line.slice(prefix.length), end };
        segments.push(open);
      }
    }
    index++;
  }
  return segments;
}

// ------------------------------------------------------------------------------------------- sentences

/** Words whose trailing period does not end a sentence. */
const abbreviations = new Set([
  'e.g',
  'i.e',
  'cf',
  'vs',
  'mr',
  'mrs',
  'ms',
  'dr',
  'prof',
  'sr',
  'jr',
  'st',
  'no',
  'nos',
  'fig',
  'figs',
  'approx',
  'incl',
  'inc',
  'ltd',
  'co',
  'corp',
  'al',
  'dept',
  'est',
  'min',
  'max',
  'vol',
  'ca',
  'resp',
  'sec',
  'ch',
  'eq',
  'ref',
  // Months: `Jan. 5` is a date, not two sentences (`mar` and `may` are words that can end one).
  'jan',
  'feb',
  'apr',
  'jun',
  'jul',
  'aug',
  'sep',
  'sept',
  'oct',
  'nov',
  'dec',
]);
const dottedAbbreviationPattern = /^(?:\p{L}\.)+\p{L}$/u;
/** An initial (`A. B. Smith`): one capital letter. Merging `plan B. Then` into one sentence is the safe error. */
const initialPattern = /^\p{Lu}$/u;
/**
 * Terminal punctuation, closing quotes or brackets or emphasis, then the whitespace after them; or a full-width
 * stop (`。`, `！`, `？`: Chinese and Japanese put no space after a sentence) and its closing brackets.
 */
const boundaryPattern = /[.!?…]+["'”’)\]*_]*(\s+)|[。！？]+[」』）】〉》"”’]*(\s*)/g;
const lowercaseStartPattern = /\p{Ll}/u;

/** Sentence ranges `[start, end)` in `body` (whitespace between sentences belongs to neither). */
function splitSentences(body: string): number[] {
  const ranges: number[] = [];
  let start = body.search(/\S/);
  if (start < 0) return ranges;
  const codeSpans: number[] = [];
  for (const span of body.matchAll(/`[^`\n]*`/g)) codeSpans.push(span.index, span.index + span[0].length);
  let spanIndex = 0;
  boundaryPattern.lastIndex = 0;
  for (let match = boundaryPattern.exec(body); match !== null; match = boundaryPattern.exec(body)) {
    const next = match.index + match[0].length;
    if (next >= body.length) break;
    const sentenceEnd = next - (match[1] ?? match[2] ?? '').length;
    while (spanIndex < codeSpans.length && codeSpans[spanIndex + 1]! <= match.index) spanIndex += 2;
    if (spanIndex < codeSpans.length && codeSpans[spanIndex]! <= match.index) continue;
    if (lowercaseStartPattern.test(body[next]!)) continue;
    if (body[match.index] === '.' && body[match.index + 1] !== '.' && isAbbreviation(body, match.index))
      continue;
    if (sentenceEnd > start) {
      ranges.push(start, sentenceEnd);
      start = next;
    }
  }
  const end = body.trimEnd().length;
  if (end > start) ranges.push(start, end);
  return ranges;
}

function isAbbreviation(body: string, dotIndex: number): boolean {
  let wordStart = dotIndex;
  while (wordStart > 0 && !/\s/.test(body[wordStart - 1]!)) wordStart--;
  const word = body.slice(wordStart, dotIndex).replace(/^[([{"'`*_]+/, '');
  return (
    abbreviations.has(word.toLowerCase()) || dottedAbbreviationPattern.test(word) || initialPattern.test(word)
  );
}

// ------------------------------------------------------------------------------------------- scoring

const decisionPattern =
  /\b(?:decided|decide to|decision|instead of|because|chose|choose|chosen|opted|will use|we'll use|going with|won't|will not|should not|shouldn't|must not|mustn't|do not|don't|never|always|trade-?off|so that)\b/i;
const errorPattern =
  /\b(?:errors?|failed|fails|failing|failure|exception|traceback|panic|fatal|crash(?:ed|es)?|segfault|timed out|timeout|not found|cannot|ENOENT|EACCES|\w+(?:Error|Exception))\b/i;
const stackLinePattern = /(?:^|\s)at\s+[\w$.<>[\]]+\s*\(?[^\s()]+:\d+(?::\d+)?\)?|File "[^"]+", line \d+/;
const pathPattern =
  /(?:^|[\s(`'"[])(?:(?:\.{1,2}|~)?\/[\w.@-]+(?:\/[\w.@-]+)*|[\w.@-]+(?:\/[\w.@-]+){2,}|[\w.@-]+\/[\w@-]*\.\w+)|\b[\w-]+\.(?:tsx?|jsx?|mjs|cjs|py|rs|go|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|json|ya?ml|toml|md|txt|sh|css|scss|html|sql|lock|cfg|ini|xml|gradle)\b/;
const urlPattern = /\bhttps?:\/\/\S/;
const backtickPattern = /`[^`\n]+`/;
const digitPattern = /\d/;
const fillerPattern =
  /^(?:sure|great|okay|ok|alright|thanks|thank you|certainly|of course|absolutely|happy to|glad to|i hope|hope this|let me know|feel free|no problem|you're welcome|perfect|awesome|good question|i see|got it)\b/i;
const wordPattern = /[a-z0-9_]{3,}/g;
const stopwords = new Set(
  (
    'the and for that this with you are was were but not have has had from they will would there their what ' +
    'which when can all your our its into then than also just been some more about out any one now let get ' +
    'here how should could did does may might each other such only very like make sure need want yes its ' +
    'these those them who whom why where being over under again once both few most own same too while'
  ).split(' '),
);

interface Sentence {
  /** Segment index and the sentence's start/end in that segment's body. */
  segment: number;
  start: number;
  end: number;
  /** Tokens of the sentence with the whitespace before it (the way the text tokenizes). */
  tokens: number;
  score: number;
}

/** Key-term weights: TF-IDF over the text's own sentences, built on integer term ids and typed arrays. */
function keyTermScores(
  texts: readonly string[],
  duplicate: Uint8Array,
): { terms: Float64Array; density: Float64Array } {
  // Stopwords share the map under id -1, so each word costs one lookup.
  const termIds = new Map<string, number>();
  for (const word of stopwords) termIds.set(word, -1);
  let nextId = 0;
  const flat: number[] = [];
  const offsets = new Int32Array(texts.length + 1);
  const density = new Float64Array(texts.length);
  for (let index = 0; index < texts.length; index++) {
    let words = 0;
    let content = 0;
    const lower = texts[index]!.toLowerCase();
    wordPattern.lastIndex = 0;
    for (let match = wordPattern.exec(lower); match !== null; match = wordPattern.exec(lower)) {
      words++;
      const word = match[0];
      let id = termIds.get(word);
      if (id === undefined) {
        id = nextId++;
        termIds.set(word, id);
      }
      if (id < 0) continue;
      content++;
      flat.push(id);
    }
    density[index] = words === 0 ? 0 : content / words;
    offsets[index + 1] = flat.length;
  }
  const termCount = nextId;
  const documentFrequency = new Int32Array(termCount);
  const termFrequency = new Int32Array(termCount);
  const lastSeen = new Int32Array(termCount).fill(-1);
  for (let index = 0; index < texts.length; index++) {
    // A repeated sentence would make its own words look like key terms.
    if (duplicate[index] === 1) continue;
    for (let at = offsets[index]!; at < offsets[index + 1]!; at++) {
      const id = flat[at]!;
      termFrequency[id]!++;
      if (lastSeen[id] !== index) {
        lastSeen[id] = index;
        documentFrequency[id]!++;
      }
    }
  }
  const weight = new Float64Array(termCount);
  for (let id = 0; id < termCount; id++) {
    // Terms the text repeats (key terms) but not in every sentence (glue) weigh most.
    weight[id] =
      documentFrequency[id] === 0
        ? 0
        : Math.log1p(termFrequency[id]! - 1) * Math.log1p(texts.length / documentFrequency[id]!);
  }
  const terms = new Float64Array(texts.length);
  lastSeen.fill(-1);
  let highest = 0;
  for (let index = 0; index < texts.length; index++) {
    let sum = 0;
    let distinct = 0;
    for (let at = offsets[index]!; at < offsets[index + 1]!; at++) {
      const id = flat[at]!;
      if (lastSeen[id] === index) continue;
      lastSeen[id] = index;
      sum += weight[id]!;
      distinct++;
    }
    const value = distinct === 0 ? 0 : sum / Math.sqrt(distinct);
    terms[index] = value;
    if (value > highest) highest = value;
  }
  if (highest > 0) for (let index = 0; index < texts.length; index++) terms[index] = terms[index]! / highest;
  return { terms, density };
}

/** How much a sentence is worth keeping, before its length is taken into account. */
function signalScore(text: string): number {
  let score = 0;
  if (decisionPattern.test(text)) score += 2;
  if (errorPattern.test(text)) score += 2;
  if (stackLinePattern.test(text)) score += 1.5;
  if (pathPattern.test(text)) score += 1.5;
  if (urlPattern.test(text)) score += 1;
  if (backtickPattern.test(text)) score += 1;
  if (digitPattern.test(text)) score += 0.5;
  if (fillerPattern.test(text)) score -= 2;
  return score;
}

// ------------------------------------------------------------------------------------------- main

/**
 * Extractive compression of prose: keeps the most informative sentences, in their original order, within
 * `keepRatio` of the prose's o200k tokens, and marks each run of dropped sentences with `[…]`.
 *
 * - Fenced code blocks (``` or ~~~, any length; a closing fence is the same character and at least as long;
 *   an unclosed fence runs to the end) are kept byte-for-byte, as are headings, tables, rules, indented code
 *   and blank lines. A kept list item keeps its marker and indentation; a dropped run of whole paragraphs or
 *   items becomes one marker line.
 * - Sentences split on `.`, `!`, `?` or an ellipsis followed by whitespace and a word that does not start in
 *   lowercase, or on a full-width `。`, `！` or `？` (Chinese and Japanese), never after known abbreviations
 *   (e.g., i.e., Mr., vs., U.S., Jan.), initials (A. B. Smith) or inside inline code; decimals, versions,
 *   paths, URLs and file names have no whitespace after their dots, so they never split.
 * - Score: position (first sentence of the text and of each paragraph), key terms (TF-IDF over the text's
 *   sentences), decisions, errors and stack lines, file paths, URLs, backticked identifiers, numbers and
 *   content-word density, minus filler; ranked by score per square root of tokens.
 * - Three sentences or fewer, a text that already holds the marker in its prose, and a result that would not
 *   be shorter in both characters and tokens all come back unchanged, so the output never grows and
 *   `compressProse(compressProse(x)) === compressProse(x)`.
 */
export function compressProse(text: string, options: CompressProseOptions = {}): string {
  const { keepRatio = 0.5 } = options;
  checkShare('keepRatio', keepRatio);
  if (keepRatio === 1 || text.length === 0) return text;
  const segments = segmentText(text);

  const sentences: Sentence[] = [];
  const sentenceTexts: string[] = [];
  const firstOfSegment = new Set<number>();
  for (let segmentIndex = 0; segmentIndex < segments.length; segmentIndex++) {
    const segment = segments[segmentIndex]!;
    if (segment.kind !== 'prose') continue;
    // Already compressed: the second pass is a no-op.
    if (segment.body.includes(elisionMarker)) return text;
    const ranges = splitSentences(segment.body);
    for (let at = 0; at < ranges.length; at += 2) {
      if (at === 0) firstOfSegment.add(sentences.length);
      sentences.push({
        segment: segmentIndex,
        start: ranges[at]!,
        end: ranges[at + 1]!,
        tokens: 0,
        score: 0,
      });
      sentenceTexts.push(segment.body.slice(ranges[at]!, ranges[at + 1]!));
    }
  }
  if (sentences.length <= 3) return text;

  const count = counter();
  const markerTokens = count.count(` ${elisionMarker}`);
  const duplicate = new Uint8Array(sentences.length);
  const seen = new Set<string>();
  for (let index = 0; index < sentences.length; index++) {
    if (seen.has(sentenceTexts[index]!)) duplicate[index] = 1;
    else seen.add(sentenceTexts[index]!);
  }
  const { terms, density } = keyTermScores(sentenceTexts, duplicate);
  let proseTokens = 0;
  for (let index = 0; index < sentences.length; index++) {
    const sentence = sentences[index]!;
    const body = (segments[sentence.segment] as { body: string }).body;
    // Counted with the whitespace before it, as the sentence tokenizes inside the text; counted once.
    const previous = sentences[index - 1];
    const from =
      previous !== undefined && previous.segment === sentence.segment ? previous.end : sentence.start;
    sentence.tokens = count.count(body.slice(from, sentence.end));
    proseTokens += sentence.tokens;
    let score = 1 + signalScore(sentenceTexts[index]!) + 1.5 * terms[index]! + density[index]!;
    if (index === 0) score += 3;
    else if (firstOfSegment.has(index))
      score += /[-*+\d]/.test((segments[sentence.segment] as { prefix: string }).prefix) ? 0.5 : 1;
    // A sentence said before adds little the second time.
    if (duplicate[index] === 1) score *= 0.25;
    sentence.score = Math.max(0.1, score);
  }

  // Greedy by value per token, within the budget; each new run of dropped sentences costs a marker.
  const target = Math.floor(keepRatio * proseTokens);
  const priority = new Float64Array(sentences.length);
  for (let index = 0; index < sentences.length; index++) {
    const sentence = sentences[index]!;
    priority[index] = sentence.score / Math.max(sentence.tokens, 4) ** lengthPenalty;
  }
  const order = Array.from(sentences.keys()).sort(
    (left, right) => priority[right]! - priority[left]! || left - right,
  );
  const kept = new Uint8Array(sentences.length);
  let used = 0;
  for (const index of order) {
    const sentence = sentences[index]!;
    const left = index > 0 && sentences[index - 1]!.segment === sentence.segment && kept[index - 1] === 0;
    const right =
      index + 1 < sentences.length &&
      sentences[index + 1]!.segment === sentence.segment &&
      kept[index + 1] === 0;
    const cost = sentence.tokens + markerTokens * Math.max(0, Number(left) + Number(right) - 1);
    if (used + cost <= target || sentence.tokens <= markerTokens + markerSlackTokens) {
      kept[index] = 1;
      used += cost;
    }
  }
  if (kept.every((flag) => flag === 1)) return text;

  const output = renderText(segments, sentences, kept);
  if (output.length >= text.length) return text;
  // The per-sentence counts are exact up to a few tokens at each cut (where BPE pre-tokens meet), so a
  // clear estimated saving needs no recount; a narrow one is checked exactly.
  let saved = 0;
  let runs = 0;
  for (let index = 0; index < sentences.length; index++) {
    if (kept[index] === 1) continue;
    saved += sentences[index]!.tokens;
    if (index === 0 || kept[index - 1] === 1 || sentences[index - 1]!.segment !== sentences[index]!.segment) {
      runs++;
      saved -= markerTokens;
    }
  }
  if (saved <= cutToleranceTokens * runs + 16 && count.count(output) >= count.count(text)) return text;
  return output;
}

/** Puts the kept sentences back in order, with one marker per run of dropped sentences. */
function renderText(segments: readonly Segment[], sentences: readonly Sentence[], kept: Uint8Array): string {
  const pieces: string[] = [];
  let pendingBlank = '';
  // True right after a prose block that was dropped whole: a following whole-dropped block joins its marker.
  let afterDroppedBlock = false;
  let sentenceIndex = 0;
  for (let segmentIndex = 0; segmentIndex < segments.length; segmentIndex++) {
    const segment = segments[segmentIndex]!;
    if (segment.kind === 'blank') {
      pendingBlank += segment.text;
      continue;
    }
    if (segment.kind === 'fixed') {
      pieces.push(pendingBlank, segment.text);
      pendingBlank = '';
      afterDroppedBlock = false;
      continue;
    }
    const first = sentenceIndex;
    while (sentenceIndex < sentences.length && sentences[sentenceIndex]!.segment === segmentIndex)
      sentenceIndex++;
    const last = sentenceIndex;
    if (first === last) {
      pieces.push(pendingBlank, segment.prefix, segment.body, segment.end);
      pendingBlank = '';
      afterDroppedBlock = false;
      continue;
    }
    let anyKept = false;
    for (let index = first; index < last; index++) if (kept[index] === 1) anyKept = true;
    if (!anyKept && afterDroppedBlock) {
      // Joins the marker line above; the blank lines in between go with it.
      pendingBlank = '';
      continue;
    }
    pieces.push(pendingBlank);
    pendingBlank = '';
    if (!anyKept) {
      pieces.push(segment.prefix, elisionMarker, segment.end);
      afterDroppedBlock = true;
      continue;
    }
    afterDroppedBlock = false;
    const body = segment.body;
    pieces.push(segment.prefix, body.slice(0, sentences[first]!.start));
    for (let index = first; index < last; index++) {
      const sentence = sentences[index]!;
      const gap = index === first ? '' : body.slice(sentences[index - 1]!.end, sentence.start);
      if (kept[index] === 1) pieces.push(gap, body.slice(sentence.start, sentence.end));
      else if (index === first || kept[index - 1] === 1) pieces.push(gap, elisionMarker);
    }
    pieces.push(body.slice(sentences[last - 1]!.end), segment.end);
  }
  pieces.push(pendingBlank);
  return pieces.join('');
}
