import { mapProse } from '../internal/markdown-fences.js';
import { codeSpan } from '../ledger/index.js';
import { createO200kCounter, type TokenCounter } from '../tokens/index.js';
import { rememberO200kCount } from '../tokens/o200k-counter.js';
import { type AnchoredSummary, capChars, itemSalience } from './anchored-summary.js';
import { countJoinedLines } from './count-joined-lines.js';

export interface RenderAnchoredSummaryOptions {
  /**
   * Cap on the rendered text's tokens: sections are cut by their share of it, or under 1,500 tokens lines are
   * chosen one by one, the most value per token first. @default no cap
   */
  maxTokens?: number;
  /** @default the exact o200k counter */
  counter?: TokenCounter;
  /**
   * Characters of the intent shown; 0 shows none. Lower it when the task message itself is still in the
   * conversation: repeating it would spend the summary's room on text the model already sees. Without it, the
   * intent (the task only the summary holds) may take more than its share under a cap: up to 30% of the room.
   * @default no cap
   */
  maxIntentChars?: number;
  /**
   * The one handle the header names: that of an archived index of the record's handles, which the caller stores
   * (archive's `putIndex`). Expanding it lists them all, so they are not listed in an `Archived` section.
   * @default none: the header names the first three handles and the `Archived` section lists every one
   */
  indexHandle?: string;
  /**
   * The lines the conversation around the summary shows (`conversationLines` of its other messages): an item of
   * a ranked section (code, commands, errors, results, excerpts…) every line of which is among them is left out,
   * since the model reads it there, and its room goes to lines it does not see. Files, tasks and state rows are
   * always shown. @default none
   */
  conversationLines?: ReadonlySet<string>;
}

/** A section as the closing line names it: `excerpts`, not `excerpts (verbatim)`. */
function closingName(title: string): string {
  return title.replace(/ \(verbatim\)$/, '').toLowerCase();
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const groups: T[][] = [];
  for (let index = 0; index < items.length; index += size) groups.push(items.slice(index, index + size));
  return groups;
}

/** What a section's `## Title` line and the blank line before it are reckoned at, before they are counted. */
const sectionHeadingTokens = 6;

/** Below this (a lone `}`, an import line), a line is not worth a summary's room. */
const minSalience = 0.15;

const wordPattern = /[A-Za-z_$][\w$]{2,}/g;

/**
 * How rare each line's words are among the section's lines, 0 (every word everywhere) to about 1 (words
 * found nowhere else): a specific line (`skipPermissions?: boolean`) says more than one of twenty variations on
 * the same names. An inverse document frequency, averaged over the line's distinct words.
 */
function raritiesOf(lines: readonly string[]): number[] {
  // Each line's distinct words, as numbers, are found once: they give the frequencies and the line's score.
  const wordNumbers = new Map<string, number>();
  const frequency: number[] = [];
  const lastLine: number[] = [];
  const wordsOfLines = lines.map((line, lineIndex) => {
    const distinct: number[] = [];
    for (const word of line.match(wordPattern) ?? []) {
      let number = wordNumbers.get(word);
      if (number === undefined) {
        number = frequency.length;
        wordNumbers.set(word, number);
        frequency.push(0);
        lastLine.push(-1);
      }
      if (lastLine[number] === lineIndex) continue;
      lastLine[number] = lineIndex;
      frequency[number]!++;
      distinct.push(number);
    }
    return distinct;
  });
  const scale = Math.log(lines.length + 1);
  // Each word's term once (the value every line that has it would compute), summed in the line's word order.
  const inverseFrequency = frequency.map((count) => Math.log((lines.length + 1) / count));
  return wordsOfLines.map((words) => {
    if (words.length === 0 || scale === 0) return 0;
    let sum = 0;
    for (const number of words) sum += inverseFrequency[number]!;
    return sum / words.length / scale;
  });
}

type LinePolicy = 'prefix' | 'first' | 'latest' | 'salient';

interface RenderedSection {
  title: string;
  /** Share of `maxTokens`. */
  weight: number;
  lines: string[];
  /**
   * Under a cap, which lines stay: the lines before the first that does not fit (a text read in order), the
   * first that fit (tasks, in their order), the latest (state), or the most salient.
   */
  keep: LinePolicy;
  /** Under a cap, the share of the room the section may take whatever its weight. */
  minShare?: number;
  /** Under a small cap (`chooseByValue`), the share of the room the section's lines take first, in their order. */
  smallMinShare?: number;
  /**
   * Under a small cap, a shorter form of each line, shown where the line does not fit (a file's row without what
   * changed in it: the path is the fact a later step looks for).
   */
  shortLines?: string[];
  /** Salient sections: how many of the first lines rank `favouredFactor` times their salience. @default 0 */
  favoured?: number;
  /**
   * Salient sections: the last line ranks `favouredLastFactor` times its salience. The latest request is where
   * the work stands once the turns that held it are folded; the earliest ones have the most distinctive words.
   */
  favouredLast?: boolean;
  /**
   * Salient sections: of lines that differ only in numbers, the latest may show beside the most salient one.
   * Outcomes: the first `Actual count: 2` shows the bug, `Successfully applied fix v6.` where the work stands.
   */
  latestOfShape?: boolean;
}

/**
 * How much more a favoured line weighs:
 * - code written into a file that was there before, over the lines of files the session created: what an edit
 *   changed is what reading the file again cannot tell, and the project's diff is made of it; a new file (a
 *   test, a repro script, a module) can be read back whole, and its many lines crowd the edits out. On the
 *   shared sessions at 10%, 3 and 4 did best (+3 probes; 1.5 nothing, 6 and more lost one at 20%);
 * - an excerpt holding what its call went to find (`soughtExcerpts`), over other dense lines: +2 probes at 10%
 *   and +3 at 20%, one lost at 5% (3 to 10 alike; 2 or applied to command results as well lost at 10%).
 */
const favouredFactor = 3;

/**
 * How much more the favoured last line weighs (`favouredLast`: the latest request). An agent loop folds the turn
 * that held the request in flight: on the shared sessions and two held-out sets, 10 passed 4 more probes and lost
 * 2 (3 of the 4 asked what was pending at the end); `favouredFactor` (3) passed 2 more and lost 1.
 */
const favouredLastFactor = 10;

/**
 * Below this cap, a summary's lines are chosen one by one by value per token (`chooseByValue`) rather than by
 * shares of the cap: shares of ~1,500 tokens among a dozen sections are smaller than many a line, and leave
 * most sections nothing. On the shared sessions and two held-out sets (518 probes, each at 5/10/20%), a
 * threshold of 1,000 to 2,000 tokens passed 8 to 12 more than shares alone (12 at 1,500; +3 of 507 on a third,
 * blind, set); choosing by value under every cap passed fewer at 10% and 20%.
 */
const smallSummaryTokens = 1500;

/**
 * How fast a section's further lines lose value in `chooseByValue`: its (k+1)-th line is worth its weight /
 * (k+1)^0.7. 1 (and 1.5) kept fewer probes on the shared and held-out sets, both at 5% and at 10%.
 */
const lineValueDecay = 0.7;

/**
 * The weight of the code edits replaced: the old text is what a probe of "what was it before" asks for, and it
 * rarely is elsewhere. On the shared and held-out sets (333 probes at 5/10/20%, both compressors), 0.03 and 0.04
 * passed 9 more than without the section (0.04: +2 at 10%), 0.06 and 0.1 fewer: their lines pushed code written
 * and commands out.
 */
const replacedWeight = 0.04;

/** The `minShare` of an uncapped intent: the task only the summary holds anchors everything else. */
const intentMinShare = 0.3;

/**
 * The `smallMinShare` of the files: by value per token a file's row, which grows with what changed in it, lost to
 * shorter lines (a session's main file left out for `Glob` commands). On the shared sessions and held-out set 1,
 * 0.15 and 0.2 passed 4 more probes, 0.25 2 more (held-out 2 the same, 3 one fewer); applied to larger caps too,
 * 0.2 lost 2 on held-out 3.
 */
const filesSmallMinShare = 0.15;

interface SectionOptions {
  maxIntentChars: number;
  indexHandle: string | undefined;
  conversationLines: ReadonlySet<string> | undefined;
}

/** The sections of `summary`, without the items of ranked sections the conversation shows. */
function sectionsOf(summary: AnchoredSummary, options: SectionOptions): RenderedSection[] {
  const sections = allSectionsOf(summary, options.maxIntentChars, options.indexHandle);
  const { conversationLines } = options;
  if (conversationLines === undefined || conversationLines.size === 0) return sections;
  return sections.map((section) =>
    section.keep === 'salient' ? withoutShownItems(section, conversationLines) : section,
  );
}

/**
 * `section` without the items whose every line the conversation shows (the favoured count kept in step; a
 * favoured last item in view leaves no favoured last item).
 */
function withoutShownItems(section: RenderedSection, shown: ReadonlySet<string>): RenderedSection {
  const favoured = section.favoured ?? 0;
  let favouredLeft = favoured;
  let lastInView = false;
  const lines = section.lines.filter((item, index) => {
    const pieces = item.split('\n').map((piece, at) => (at === 0 ? lineCore(piece) : piece.trim()));
    const inView =
      pieces.some((piece) => piece !== '') && pieces.every((piece) => piece === '' || shown.has(piece));
    if (inView && index < favoured) favouredLeft--;
    if (inView && index === section.lines.length - 1) lastInView = true;
    return !inView;
  });
  if (lines.length === section.lines.length) return section;
  return {
    ...section,
    lines,
    ...(section.favoured === undefined ? {} : { favoured: favouredLeft }),
    ...(section.favouredLast === true && lastInView ? { favouredLast: false } : {}),
  };
}

/**
 * Each section's `## Title`, in the order the rendering shows them (`parseRenderedSummary` reads them back).
 */
export const sectionTitles = {
  intent: 'Session intent',
  constraints: 'User requests and constraints',
  files: 'Files',
  locations: 'Code locations cited',
  definitions: 'Definitions looked at (verbatim)',
  decisions: 'Decisions',
  errors: 'Errors → fixes',
  failedApproaches: 'Failed approaches',
  commands: 'Commands',
  code: 'Code written (verbatim)',
  replaced: 'Code replaced (verbatim)',
  scripts: 'Scripts and commands written',
  currentState: 'Current state',
  tasks: 'Open tasks / blockers',
  nextSteps: 'Next steps',
  results: 'Command results (verbatim)',
  excerpts: 'Excerpts (verbatim)',
  archived: 'Archived',
} as const;

function allSectionsOf(
  summary: AnchoredSummary,
  maxIntentChars: number,
  indexHandle?: string,
): RenderedSection[] {
  const intent =
    summary.intent === undefined || maxIntentChars === 0
      ? undefined
      : capChars(summary.intent, maxIntentChars);
  const fileRows = summary.files.map((file) => `- ${codeSpan(file.path)} ${file.status}`);
  const files = summary.files.map(
    (file, index) => `${fileRows[index]}${file.detail === undefined ? '' : `: ${file.detail}`}`,
  );
  const open = summary.tasks.filter((task) => !task.done).map((task) => `- [ ] ${task.text}`);
  const done = summary.tasks.filter((task) => task.done).map((task) => `- [x] ${task.text}`);
  return [
    {
      title: sectionTitles.intent,
      weight: 0.12,
      ...(maxIntentChars === Number.POSITIVE_INFINITY ? { minShare: intentMinShare } : {}),
      // Line by line: under a small cap the task's first lines show rather than none of it.
      lines: intent === undefined ? [] : intentLines(intent),
      keep: 'prefix',
    },
    // Weighted up from 0.08 once short requests went in whole: on the shared and held-out sessions together,
    // 0.12 kept the most probes at 10% and 20%.
    {
      title: sectionTitles.constraints,
      weight: 0.12,
      lines: bullets(summary.constraints),
      keep: 'salient',
      favouredLast: true,
    },
    // In the order the session touched them: identifier density says nothing about a file's row (it ranked short
    // paths above long ones and left rows out with room to spare), and the recent turns show the latest files.
    {
      title: sectionTitles.files,
      weight: 0.12,
      lines: files,
      keep: 'first',
      smallMinShare: filesSmallMinShare,
      shortLines: fileRows,
    },
    {
      title: sectionTitles.locations,
      weight: 0.04,
      lines: summary.locations.map((location) => `- ${codeSpan(location)}`),
      keep: 'first',
    },
    // What the agent read and talked about: where the functions it works on are, and their signatures.
    {
      title: sectionTitles.definitions,
      weight: 0.04,
      lines: bullets(summary.definitions),
      keep: 'salient',
    },
    { title: sectionTitles.decisions, weight: 0.1, lines: bullets(summary.decisions), keep: 'salient' },
    { title: sectionTitles.errors, weight: 0.12, lines: bullets(summary.errors), keep: 'salient' },
    {
      title: sectionTitles.failedApproaches,
      weight: 0.04,
      lines: bullets(summary.failedApproaches),
      keep: 'salient',
    },
    { title: sectionTitles.commands, weight: 0.08, lines: bullets(summary.commands), keep: 'salient' },
    // Weights follow what the lines hold: on the shared sessions, code written carried the most probe facts per
    // token (38 per thousand shown), excerpts the fewest (8).
    {
      title: sectionTitles.code,
      weight: 0.2,
      ...favouredFirst(summary.changes, summary.createdCode),
      keep: 'salient',
    },
    // What an edit took out: what the code said before, which neither the file nor the code written shows.
    {
      title: sectionTitles.replaced,
      weight: replacedWeight,
      lines: bullets(summary.replacedCode),
      keep: 'salient',
    },
    { title: sectionTitles.scripts, weight: 0.08, lines: bullets(summary.scripts), keep: 'salient' },
    { title: sectionTitles.currentState, weight: 0.04, lines: bullets(summary.currentState), keep: 'first' },
    { title: sectionTitles.tasks, weight: 0.05, lines: [...open, ...done], keep: 'first' },
    { title: sectionTitles.nextSteps, weight: 0.04, lines: bullets(summary.nextSteps), keep: 'first' },
    {
      title: sectionTitles.results,
      weight: 0.16,
      lines: bullets(summary.results),
      keep: 'salient',
      latestOfShape: true,
    },
    {
      title: sectionTitles.excerpts,
      weight: 0.05,
      ...favouredFirst(summary.soughtExcerpts, summary.excerpts),
      keep: 'salient',
    },
    {
      title: sectionTitles.archived,
      weight: 0.03,
      lines: indexHandle === undefined ? chunks(summary.handles, 8).map((group) => group.join(', ')) : [],
      keep: 'first',
    },
  ];
}

/** Prose lines of the intent longer than this are shown a sentence per line. */
const maxIntentLineChars = 200;

/**
 * The intent's lines, a long prose line (not code in a fence) split after each sentence: the intent is kept as a
 * prefix of its lines, so a task written as one long paragraph showed nothing under a small cap rather than its
 * first sentences (held-out sessions at 5%: a 117-token line needed a 540-token summary).
 */
function intentLines(intent: string): string[] {
  const sentencePerLine = (line: string) =>
    line.length <= maxIntentLineChars
      ? line
      : line
          .split(sentenceEnd)
          .filter((sentence) => sentence !== '')
          .join('\n');
  return mapProse(intent, (prose) => prose.split('\n').map(sentencePerLine).join('\n')).split('\n');
}

/** After a sentence's end: `. `, `! `, `? ` (the space dropped), or a CJK full stop or mark. */
const sentenceEnd = /(?<=[.!?])\s+(?=\S)|(?<=[。！？])/;

/** A section's bulleted lines, the `favoured` items first (and counted) and the `rest` not among them after. */
function favouredFirst(
  favoured: readonly string[],
  rest: readonly string[],
): Pick<RenderedSection, 'lines' | 'favoured'> {
  const first = new Set(favoured);
  const items = [...favoured, ...rest.filter((item) => !first.has(item))];
  return { lines: bullets(items), favoured: favoured.length };
}

/** Items as bullets; an item of several lines keeps them (code indentation too), indented under its bullet. */
function bullets(items: readonly string[]): string[] {
  return items.map((item) => `- ${item.replaceAll('\n', '\n  ')}`);
}

/** Lines `lines` of `section`, in their order, but those an earlier section shows. */
function linesAmong(
  section: FittedSection,
  lines: Iterable<number>,
  shownElsewhere: ReadonlySet<number> | undefined,
): FittedLines {
  const keptIndexes = [...lines].filter((index) => !shownElsewhere?.has(index)).sort((a, b) => a - b);
  return {
    kept: keptIndexes.map((index) => section.lines[index]!),
    keptIndexes,
    keptTokens: keptIndexes.map((index) => section.lineTokens[index]!),
    left: section.lines.length - keptIndexes.length - (shownElsewhere?.size ?? 0),
  };
}

/** Every line of a section but those shown elsewhere: the section uncapped. */
function allLines(section: FittedSection, shownElsewhere: ReadonlySet<number> | undefined): FittedLines {
  return linesAmong(section, section.lines.keys(), shownElsewhere);
}

/**
 * What a line says, without its bullet and the code span around it (and a command's `→ status`, an error's
 * `(from …)`).
 */
function lineCore(line: string): string {
  const bare = line.startsWith('- ') ? line.slice(2) : line;
  const span = /^`([^`]+)`(?: → [^`]*| \(from .*\))?$/.exec(bare);
  return (span?.[1] ?? bare).trim();
}

/**
 * Per section, line index → core for the lines whose core another section's line has too (undefined for a
 * section with none): the only lines that can have been shown already.
 */
function sharedCores(
  sections: ReadonlyArray<{ lines: readonly string[] }>,
): Array<Map<number, string> | undefined> {
  const cores = sections.map((section) => section.lines.map(lineCore));
  const sectionsOfCore = new Map<string, number>();
  const repeated = new Set<string>();
  cores.forEach((lineCores, sectionIndex) => {
    for (const core of lineCores) {
      const first = sectionsOfCore.get(core);
      if (first === undefined) sectionsOfCore.set(core, sectionIndex);
      else if (first !== sectionIndex) repeated.add(core);
    }
  });
  return cores.map((lineCores) => {
    const shared = new Map<number, string>();
    lineCores.forEach((core, lineIndex) => {
      if (repeated.has(core)) shared.set(lineIndex, core);
    });
    return shared.size === 0 ? undefined : shared;
  });
}

/** A salient line with its numbers masked: lines that differ only in numbers (`settings1 = …`) show once. */
function lineShape(line: string): string {
  return line.replace(/\d+/g, '#');
}

interface FitCandidate {
  line: string;
  index: number;
  score: number;
  /** The line's shape (`shapeOf`), for salient sections, worked out when first needed. */
  shape?: string;
}

/** The lines of a section kept under a cap, with their counts, and how many were left out. */
interface FittedLines {
  kept: string[];
  /** Their indexes among the section's lines. */
  keptIndexes: number[];
  keptTokens: number[];
  left: number;
}

/**
 * The lines of one section that fit a cap, chosen by `policy` (salient: the highest `itemSalience` first, ties
 * earlier first) and shown in their original order; lines that do not fit are skipped and counted. The ranking
 * is worked out once and each cap's choice remembered: a fold renders the same record under several caps.
 * `lineTokens` are the lines' counts; each takes its newline too.
 */
function lineFitter(
  lines: readonly string[],
  lineTokens: readonly number[],
  { policy, favoured, favouredLast, latestOfShape }: FitPolicy,
): LineFitter {
  let order: FitCandidate[] | undefined;
  const fitted = new Map<string, FittedLines>();
  const salient = policy === 'salient';
  let shapes: string[] | undefined;
  /** A salient line's shape: its numbers masked, the latest of its shape apart where `latestOfShape`. */
  const shapeOf = (index: number): string => {
    if (shapes === undefined) {
      shapes = lines.map(lineShape);
      if (latestOfShape) {
        const seen = new Set<string>();
        for (let line = shapes.length - 1; line >= 0; line--) {
          const shape = shapes[line]!;
          if (!seen.has(shape)) shapes[line] = `${shape}\n(latest)`;
          seen.add(shape);
        }
      }
    }
    return shapes[index]!;
  };
  const rank = (): FitCandidate[] => {
    // Rarity within each section: lines added to one section (an LLM's prose) never change what another shows.
    const rarities = salient ? raritiesOf(lines) : undefined;
    const ranked: FitCandidate[] = lines.map((line, index) => {
      if (rarities === undefined) return { line, index, score: 0 };
      const score = memoisedSalience(line) * (0.5 + rarities[index]!);
      // Favour only what clears the floor: an import stays below it wherever it was written.
      return {
        line,
        index,
        score:
          favouredLast && index === lines.length - 1 && score >= minSalience
            ? score * favouredLastFactor
            : index < favoured && score >= minSalience
              ? score * favouredFactor
              : score,
      };
    });
    if (salient) ranked.sort((a, b) => b.score - a.score || a.index - b.index);
    if (policy === 'latest') ranked.reverse();
    return ranked;
  };
  const fit = (maxTokens: number, shownElsewhere?: ReadonlySet<number>): FittedLines => {
    const key =
      shownElsewhere === undefined ? `${maxTokens}` : `${maxTokens}|${[...shownElsewhere].join(',')}`;
    const known = fitted.get(key);
    if (known !== undefined) return known;
    const chosen: FitCandidate[] = [];
    // Every line takes at least its newline: under a cap below one token nothing fits, whatever the ranking.
    if (maxTokens >= 1) {
      order ??= rank();
      // Salient lines that differ only in numbers (`settings1 = …`, `settings2 = …`) say the same thing once
      // (and the latest of them once more, where `latestOfShape`).
      const shown = new Set<string>();
      let used = 0;
      for (const candidate of order) {
        // Nothing more fits (every line takes a token at least).
        if (maxTokens - used < 1) break;
        if (shownElsewhere?.has(candidate.index)) continue;
        if (salient) {
          // Bare syntax and imports never fill the room left over: the archive has them. The ranking is by
          // score, so every later line is below the floor too.
          if (candidate.score < minSalience) break;
          candidate.shape ??= shapeOf(candidate.index);
          if (shown.has(candidate.shape)) continue;
        }
        const tokens = lineTokens[candidate.index]! + 1;
        if (used + tokens > maxTokens) {
          if (policy === 'prefix') break;
          continue;
        }
        chosen.push(candidate);
        if (salient) shown.add(candidate.shape!);
        used += tokens;
      }
      chosen.sort((a, b) => a.index - b.index);
    }
    const result = {
      kept: chosen.map((candidate) => candidate.line),
      keptIndexes: chosen.map((candidate) => candidate.index),
      keptTokens: chosen.map((candidate) => lineTokens[candidate.index]!),
      left: lines.length - chosen.length - (shownElsewhere?.size ?? 0),
    };
    fitted.set(key, result);
    return result;
  };
  let rankedIndexes: number[] | undefined;
  /** The indexes of the lines worth showing, best first. */
  const ranked = (): readonly number[] => {
    if (rankedIndexes === undefined) {
      order ??= rank();
      rankedIndexes = [];
      for (const candidate of order) {
        if (salient && candidate.score < minSalience) break;
        rankedIndexes.push(candidate.index);
      }
    }
    return rankedIndexes;
  };
  return { fit, ranked, shapeOf };
}

/** How a section's lines are chosen under a cap (see `RenderedSection`). */
interface FitPolicy {
  policy: LinePolicy;
  favoured: number;
  favouredLast: boolean;
  latestOfShape: boolean;
}

/** A section's fit policy, its defaults filled in. */
function fitPolicyOf(section: RenderedSection): FitPolicy {
  return {
    policy: section.keep,
    favoured: section.favoured ?? 0,
    favouredLast: section.favouredLast ?? false,
    latestOfShape: section.latestOfShape ?? false,
  };
}

function sameFitPolicy(a: FitPolicy, b: FitPolicy): boolean {
  return (
    a.policy === b.policy &&
    a.favoured === b.favoured &&
    a.favouredLast === b.favouredLast &&
    a.latestOfShape === b.latestOfShape
  );
}

interface LineFitter {
  fit(maxTokens: number, shownElsewhere?: ReadonlySet<number>): FittedLines;
  ranked(): readonly number[];
  /** The shape of a salient line: of lines sharing one, a section shows one. */
  shapeOf(index: number): string;
}

const memoisedSaliences = new Map<string, number>();

/** `itemSalience`, remembered per line: the same summary lines are ranked again in every fold round. */
function memoisedSalience(line: string): number {
  let salience = memoisedSaliences.get(line);
  if (salience === undefined) {
    if (memoisedSaliences.size >= maxMemoisedLines) memoisedSaliences.clear();
    salience = itemSalience(line);
    memoisedSaliences.set(line, salience);
  }
  return salience;
}

let defaultCounter: TokenCounter | undefined;

const memoisedCounts = new WeakMap<TokenCounter, Map<string, number>>();
const maxMemoisedLines = 50_000;

/** `counter` with per-line counts remembered (summary lines recur across renders and folds). */
function memoisedCounter(counter: TokenCounter): TokenCounter {
  let memo = memoisedCounts.get(counter);
  if (memo === undefined) {
    memo = new Map();
    memoisedCounts.set(counter, memo);
  }
  const counts = memo;
  return {
    encodingName: counter.encodingName,
    count(text: string): number {
      if (text.length > 2000) return counter.count(text);
      let tokens = counts.get(text);
      if (tokens === undefined) {
        if (counts.size >= maxMemoisedLines) counts.clear();
        tokens = counter.count(text);
        counts.set(text, tokens);
      }
      return tokens;
    },
  };
}

/**
 * The rendered summary's token count without a cap, estimated from memoised line counts (within a few tokens
 * of the exact count): what the record would take if it had all the room it wants.
 */
export function anchoredSummaryTokens(
  summary: AnchoredSummary,
  options: Pick<
    RenderAnchoredSummaryOptions,
    'counter' | 'maxIntentChars' | 'indexHandle' | 'conversationLines'
  > = {},
): number {
  return createAnchoredSummaryRenderer(summary, options).estimatedTokens;
}

/**
 * `Math.min(limit, anchoredSummaryTokens(summary, options))`, counting lines only until the sum reaches `limit`:
 * the estimate is a sum of counts that are never negative, so a part of it that reaches `limit` settles it.
 * Folding asks how much room a record wants up to the summary's cap, and records usually want more.
 */
export function anchoredSummaryTokensUpTo(
  summary: AnchoredSummary,
  limit: number,
  options: Pick<
    RenderAnchoredSummaryOptions,
    'counter' | 'maxIntentChars' | 'indexHandle' | 'conversationLines'
  > = {},
): number {
  const { maxIntentChars = Number.POSITIVE_INFINITY, indexHandle, conversationLines } = options;
  defaultCounter ??= createO200kCounter();
  const counter = memoisedCounter(options.counter ?? defaultCounter);
  // The terms of the renderer's estimate: the header, then per section its heading and each line's count and newline.
  let total = counter.count(header(summary, indexHandle));
  for (const section of sectionsOf(summary, { maxIntentChars, indexHandle, conversationLines })) {
    if (total >= limit) return limit;
    if (section.lines.length === 0) continue;
    total += sectionHeadingTokens;
    for (const line of section.lines) {
      total += counter.count(line) + 1;
      if (total >= limit) return limit;
    }
  }
  return Math.min(limit, total);
}

/** The header `header` writes: the message count and what `— archived:` names (handles, `…` when more). */
export const anchoredSummaryHeaderPattern =
  /^\[precis summary of (\d+) earlier messages?(?: — archived: ([^\]\n]*))?\]$/;

function header(summary: AnchoredSummary, indexHandle: string | undefined): string {
  const archived =
    indexHandle !== undefined
      ? ` — archived: ${indexHandle}`
      : summary.handles.length === 0
        ? ''
        : ` — archived: ${summary.handles.slice(0, 3).join(', ')}${summary.handles.length > 3 ? ', …' : ''}`;
  return `[precis summary of ${summary.messageCount} earlier ${summary.messageCount === 1 ? 'message' : 'messages'}${archived}]`;
}

/**
 * Markdown under a `[precis summary of N earlier messages — archived: h-…]` header, one `##` section per
 * non-empty section. With `maxTokens`, each section gets its share (unused shares go to the sections that
 * need more, and so does what whole lines leave; under 1,500 tokens lines are chosen one by one instead, the
 * most value per token first), lines that do not fit are left out and counted on one closing
 * line (`In the archive, not shown: files (3), commands (+12 more).`, when it fits), and a line an earlier
 * section shows (or the conversation, with `conversationLines`) is not repeated; the whole text is shrunk further until it fits (only the header when even that
 * is too much). Deterministic.
 */
export function renderAnchoredSummary(
  summary: AnchoredSummary,
  options: RenderAnchoredSummaryOptions = {},
): string {
  const { maxTokens, ...rest } = options;
  return createAnchoredSummaryRenderer(summary, rest).render(maxTokens);
}

interface BuiltText {
  text: string;
  /** The header's and each section's lines: `text` is their lines joined by newlines, blocks by blank lines. */
  blocks: string[][];
  /** The counts of those lines, where known. */
  blockTokens: Array<Array<number | undefined>>;
  /** Per section, the lines left out because an earlier section showed them. */
  shownElsewhere: Array<ReadonlySet<number> | undefined>;
  /**
   * Every section with lines left out, in order, as the closing line names it: `files (3)` when it shows none
   * (`none`), `commands (+12 more)` beside the lines it shows.
   */
  leftOut: ReadonlyArray<{ name: string; none: boolean }>;
  /** The text with its closing line, made once: naming the sections that show none, or (`all`) every one. */
  closed?: { none?: BuiltText; all?: BuiltText };
  tokens?: number;
}

export interface CreateAnchoredSummaryRendererOptions
  extends Omit<RenderAnchoredSummaryOptions, 'maxTokens'> {
  /**
   * A renderer of an earlier state of the record (the previous fold round's): the sections whose lines did
   * not change keep its rankings and counts instead of working them out again. @default none
   */
  previous?: AnchoredSummaryRenderer;
}

/** One section of a renderer, with what fitting its lines to caps has worked out. */
interface FittedSection {
  title: string;
  fit: FitPolicy;
  lines: readonly string[];
  lineTokens: readonly number[];
  /** The lines' short forms (`RenderedSection.shortLines`) and their counts, where the section has them. */
  short?: { lines: readonly string[]; tokens: readonly number[] };
  fitter: LineFitter;
  /** The section's tokens uncapped: its lines' counts plus their newlines. */
  natural: number;
}

/** The sections of each renderer, for a later renderer given it as `previous`. */
const renderedSections = new WeakMap<
  AnchoredSummaryRenderer,
  { counter: TokenCounter; sections: readonly FittedSection[] }
>();

export interface AnchoredSummaryRenderer {
  /** `anchoredSummaryTokens` of the record under the same options. */
  readonly estimatedTokens: number;
  /** `renderAnchoredSummary` of the record under the same options and `maxTokens`. */
  render(maxTokens?: number): string;
}

/**
 * Renders one record under several caps (what folding does while it looks for the cap that fits): the
 * sections, their rankings, line counts and rendered texts are worked out once and shared by every cap. The
 * record must not change while the renderer is in use.
 */
export function createAnchoredSummaryRenderer(
  summary: AnchoredSummary,
  options: CreateAnchoredSummaryRendererOptions = {},
): AnchoredSummaryRenderer {
  const { maxIntentChars = Number.POSITIVE_INFINITY, previous, indexHandle, conversationLines } = options;
  defaultCounter ??= createO200kCounter();
  const baseCounter = options.counter ?? defaultCounter;
  const counter = memoisedCounter(baseCounter);
  const sections = sectionsOf(summary, { maxIntentChars, indexHandle, conversationLines }).filter(
    (section) => section.lines.length > 0,
  );
  const earlier = previous === undefined ? undefined : renderedSections.get(previous);
  const reusable = earlier?.counter === baseCounter ? earlier.sections : [];
  const fitted = sections.map((section): FittedSection => {
    const fit = fitPolicyOf(section);
    const same = reusable.find(
      (candidate) =>
        candidate.title === section.title &&
        sameFitPolicy(candidate.fit, fit) &&
        candidate.lines.length === section.lines.length &&
        candidate.lines.every((line, index) => line === section.lines[index]),
    );
    if (same !== undefined) return same;
    // Line counts are memoised: folding renders the same lines many times.
    const lineTokens = section.lines.map((line) => counter.count(line));
    const { shortLines } = section;
    return {
      title: section.title,
      fit,
      lines: section.lines,
      lineTokens,
      ...(shortLines === undefined
        ? {}
        : { short: { lines: shortLines, tokens: shortLines.map((line) => counter.count(line)) } }),
      fitter: lineFitter(section.lines, lineTokens, fit),
      // The section's natural size.
      natural: lineTokens.reduce((sum, tokens) => sum + tokens + 1, 0),
    };
  });
  const shared = sharedCores(fitted);
  const headerText = header(summary, indexHandle);
  const headerTokens = counter.count(headerText);
  // The default counter is exact o200k: a text is counted from its lines' counts, which fitting has mostly.
  const countText = (entry: BuiltText) => {
    if (options.counter !== undefined) return counter.count(entry.text);
    const composed = countJoinedLines(entry.blocks, counter.count, entry.blockTokens);
    if (composed === undefined) return counter.count(entry.text);
    // Exact: the accountant counting the summary message finds it instead of counting the text again.
    rememberO200kCount(entry.text, composed);
    return composed;
  };
  const built = new Map<string, BuiltText>();
  /** The text under `caps` (all of every section when undefined) and its exact count, each made once. */
  const build = (caps: readonly number[] | undefined) =>
    buildWith(caps === undefined ? 'all' : caps.join(','), (index, shownElsewhere) => {
      const limit = caps?.[index];
      const section = fitted[index]!;
      return limit === undefined
        ? allLines(section, shownElsewhere)
        : section.fitter.fit(limit, shownElsewhere);
    });
  /**
   * The text showing the lines `linesOf` gives each section (told the section's lines whose core an earlier
   * section shows), made once per `key`.
   */
  const buildWith = (
    key: string,
    linesOf: (index: number, shownElsewhere: ReadonlySet<number> | undefined) => FittedLines,
  ): BuiltText => {
    let entry = built.get(key);
    if (entry === undefined) {
      const pieces = [headerText];
      // The text's lines, by block (the header, each section): what it is counted from.
      const blocks: string[][] = [[headerText]];
      const blockTokens: Array<Array<number | undefined>> = [[headerTokens]];
      // A section none of whose lines fit is named on one closing line, not given a heading of its own; one
      // that shows some is named there too with what it leaves out, when there is room (one line for all: a
      // note per section took ~10 tokens each, room a small summary needs for its lines).
      const leftOut: Array<{ name: string; none: boolean }> = [];
      // A line an earlier section shows (a command also among the scripts and excerpts) is shown once.
      const shownCores = new Set<string>();
      const shownElsewhereBySection: Array<ReadonlySet<number> | undefined> = [];
      fitted.forEach((section, index) => {
        const cores = shared[index];
        const shownIndexes =
          cores === undefined
            ? []
            : [...cores].filter(([, core]) => shownCores.has(core)).map(([lineIndex]) => lineIndex);
        const shownElsewhere = shownIndexes.length === 0 ? undefined : new Set(shownIndexes);
        shownElsewhereBySection.push(shownElsewhere);
        const { kept, keptIndexes, keptTokens, left } = linesOf(index, shownElsewhere);
        if (cores !== undefined)
          for (const lineIndex of keptIndexes) {
            const core = cores.get(lineIndex);
            if (core !== undefined) shownCores.add(core);
          }
        const name = closingName(section.title);
        // A section whose every line an earlier one shows gets no heading either: it would show nothing.
        if (kept.length === 0) {
          if (left > 0) leftOut.push({ name: `${name} (${left})`, none: true });
          return;
        }
        if (left > 0) leftOut.push({ name: `${name} (+${left} more)`, none: false });
        pieces.push(`## ${section.title}\n${kept.join('\n')}`);
        blocks.push([`## ${section.title}`, ...kept]);
        blockTokens.push([undefined, ...keptTokens]);
      });
      entry = {
        text: pieces.join('\n\n'),
        blocks,
        blockTokens,
        shownElsewhere: shownElsewhereBySection,
        leftOut,
      };
      built.set(key, entry);
    }
    return entry;
  };
  const tokensOf = (entry: BuiltText) => {
    entry.tokens ??= countText(entry);
    return entry.tokens;
  };
  /**
   * The text with the line that names the sections it shows nothing of (with `all`, every section it leaves
   * lines out of), by `closingName`. That line holds no fact, only where to look, so it comes last: it is added
   * when it fits beside the lines, never in their place.
   */
  const closedOf = (entry: BuiltText, all = false): BuiltText => {
    const named = entry.leftOut.filter((section) => all || section.none);
    if (named.length === 0) return entry;
    const kind = all ? 'all' : 'none';
    const made = entry.closed?.[kind];
    if (made !== undefined) return made;
    const closing = `In the archive, not shown: ${named.map((section) => section.name).join(', ')}.`;
    const closed: BuiltText = {
      text: `${entry.text}\n\n${closing}`,
      blocks: [...entry.blocks, [closing]],
      blockTokens: [...entry.blockTokens, [undefined]],
      shownElsewhere: entry.shownElsewhere,
      leftOut: [],
    };
    entry.closed = { ...entry.closed, [kind]: closed };
    return closed;
  };
  /**
   * `text` with its closing line where that fits `maxTokens`: naming every section with lines left out, else those
   * it shows nothing of, else none.
   */
  const withClosingLine = (text: BuiltText, maxTokens: number): string => {
    for (const all of [true, false]) {
      const closed = closedOf(text, all);
      if (tokensOf(closed) <= maxTokens) return closed.text;
    }
    return text.text;
  };
  /** The text under `caps` with the room left offered to the sections that want more, then the closing line. */
  const finish = (caps: readonly number[], text: BuiltText, maxTokens: number): string =>
    withClosingLine(withLeftover(caps, text, maxTokens), maxTokens);
  /**
   * The lines of a small summary (`smallSummaryTokens`), chosen one at a time within `room` tokens: the line
   * worth the most per token first, a section's next line being worth its weight / (k + 1)^0.7 with k lines
   * already shown (its first costs its heading too), so that each section's best lines come before more of the
   * heaviest; within a section, lines come in its policy's order (a prefix stops at the first that does not fit).
   * An uncapped intent first takes its `minShare`, the files their `smallMinShare`. A line another section shows,
   * or of a shape its section shows (salient lines that differ only in numbers), is not chosen; a line that does
   * not fit is shown in its short form where its section has one. Per section, the lines in their order.
   */
  const chooseByValue = (room: number): FittedLines[] => {
    const chosen: number[][] = fitted.map(() => []);
    const shownCores = new Set<string>();
    const shapes = fitted.map(() => new Set<string>());
    const orders = fitted.map((section) => {
      if (section.fit.policy === 'salient') return section.fitter.ranked();
      const all = section.lines.map((_, index) => index);
      return section.fit.policy === 'latest' ? all.reverse() : all;
    });
    const positions = fitted.map(() => 0);
    // Lines shown in their short form, per section.
    const shortened = fitted.map(() => new Set<number>());
    let left = room;
    const headingOf = (index: number) => (chosen[index]!.length === 0 ? sectionHeadingTokens : 0);
    /** Whether line `line` of section `index` is shown short: it does not fit whole, and has a short form. */
    const isShort = (index: number, line: number) =>
      fitted[index]!.short !== undefined && fitted[index]!.lineTokens[line]! + 1 + headingOf(index) > left;
    /** What the line costs as it would be shown (its section's heading too, for the first). */
    const costOf = (index: number, line: number) =>
      (isShort(index, line) ? fitted[index]!.short!.tokens[line]! : fitted[index]!.lineTokens[line]!) +
      1 +
      headingOf(index);
    const shapeOf = (index: number, line: number) =>
      fitted[index]!.fit.policy === 'salient' ? fitted[index]!.fitter.shapeOf(line) : undefined;
    /** Section `index`'s next line that may be shown and fits, or undefined when it has none. */
    const next = (index: number): number | undefined => {
      const order = orders[index]!;
      while (positions[index]! < order.length) {
        const line = order[positions[index]!]!;
        const core = shared[index]?.get(line);
        const shape = shapeOf(index, line);
        const repeated =
          (core !== undefined && shownCores.has(core)) || (shape !== undefined && shapes[index]!.has(shape));
        if (!repeated && costOf(index, line) <= left) return line;
        if (!repeated && fitted[index]!.fit.policy === 'prefix') positions[index] = order.length;
        else positions[index]!++;
      }
      return undefined;
    };
    const take = (index: number, line: number) => {
      if (isShort(index, line)) shortened[index]!.add(line);
      left -= costOf(index, line);
      chosen[index]!.push(line);
      positions[index]!++;
      const core = shared[index]?.get(line);
      if (core !== undefined) shownCores.add(core);
      const shape = shapeOf(index, line);
      if (shape !== undefined) shapes[index]!.add(shape);
    };
    fitted.forEach((section, index) => {
      const minShare = sections[index]!.minShare ?? sections[index]!.smallMinShare;
      if (minShare === undefined) return;
      // Its lines' own counts (as `natural`), up to the share.
      const share = Math.min(section.natural, Math.floor(room * minShare));
      let used = 0;
      for (let line = next(index); line !== undefined; line = next(index)) {
        used += costOf(index, line) - headingOf(index);
        if (used > share) break;
        take(index, line);
      }
    });
    for (;;) {
      let best: { index: number; line: number; value: number } | undefined;
      for (let index = 0; index < fitted.length; index++) {
        const line = next(index);
        if (line === undefined) continue;
        const value =
          sections[index]!.weight / (1 + chosen[index]!.length) ** lineValueDecay / costOf(index, line);
        if (best === undefined || value > best.value) best = { index, line, value };
      }
      if (best === undefined) break;
      take(best.index, best.line);
    }
    return fitted.map((section, index) => {
      const keptIndexes = [...chosen[index]!].sort((a, b) => a - b);
      const kept = new Set(keptIndexes);
      // Lines another section shows are not left out.
      const elsewhere = [...(shared[index] ?? [])].filter(
        ([line, core]) => !kept.has(line) && shownCores.has(core),
      ).length;
      const short = shortened[index]!;
      return {
        kept: keptIndexes.map((line) => (short.has(line) ? section.short! : section).lines[line]!),
        keptIndexes,
        keptTokens: keptIndexes.map((line) =>
          short.has(line) ? section.short!.tokens[line]! : section.lineTokens[line]!,
        ),
        left: section.lines.length - keptIndexes.length - elsewhere,
      };
    });
  };
  /** A small summary: the lines `chooseByValue` picks, the room cut by what the exact count finds over. */
  const renderSmall = (maxTokens: number): string => {
    let room = maxTokens - headerTokens;
    for (let attempt = 0; attempt < 5 && room > 0; attempt++) {
      const lines = chooseByValue(room);
      const text = buildWith(`value:${room}`, (index) => lines[index]!);
      const over = tokensOf(text) - maxTokens;
      if (over <= 0) return withClosingLine(text, maxTokens);
      room -= over + 2;
    }
    return headerText;
  };
  const natural = fitted.map((section) => section.natural);
  // Sums of line counts stand in for the whole text's count (o200k merges little across lines); only a text
  // that could be returned is counted exactly.
  const estimate = headerTokens + natural.reduce((sum, tokens) => sum + tokens + sectionHeadingTokens, 0);
  const render = (maxTokens: number | undefined): string => {
    if (maxTokens === undefined) return build(undefined).text;
    if (estimate <= maxTokens) {
      const full = build(undefined);
      if (tokensOf(full) <= maxTokens) return full.text;
    }
    if (headerTokens >= maxTokens) return headerText;
    if (maxTokens < smallSummaryTokens) return renderSmall(maxTokens);

    // The shares are cut until the text fits with its closing line, as when the line is shown; then the line's
    // room is offered to the sections too (a section's best line first). Where it never fits with the line,
    // the first cut that fits without it.
    let fitsWithoutClosing: { caps: number[]; text: BuiltText } | undefined;
    let scale = 1;
    for (let attempt = 0; attempt < 8; attempt++) {
      const available = Math.max(
        0,
        Math.floor((maxTokens - headerTokens - sections.length * sectionHeadingTokens) * scale),
      );
      const totalWeight = sections.reduce((sum, section) => sum + section.weight, 0);
      const caps = sections.map((section) => Math.floor((available * section.weight) / totalWeight));
      const spare = caps.reduce((sum, limit, index) => sum + Math.max(0, limit - natural[index]!), 0);
      const hungryWeight = sections.reduce(
        (sum, section, index) => sum + (natural[index]! > caps[index]! ? section.weight : 0),
        0,
      );
      const finalCaps = caps.map((limit, index) => {
        if (natural[index]! <= limit) return natural[index]!;
        const raised = limit + Math.floor((spare * sections[index]!.weight) / Math.max(hungryWeight, 1e-9));
        // Past its share (the others shrink to make room: the text is cut until it fits).
        const { minShare } = sections[index]!;
        if (minShare === undefined) return raised;
        return Math.max(raised, Math.min(natural[index]!, Math.floor(available * minShare)));
      });
      const text = build(finalCaps);
      if (tokensOf(text) <= maxTokens) {
        if (tokensOf(closedOf(text)) <= maxTokens) return finish(finalCaps, text, maxTokens);
        fitsWithoutClosing ??= { caps: finalCaps, text };
      }
      scale *= 0.8;
    }
    return fitsWithoutClosing === undefined
      ? headerText
      : finish(fitsWithoutClosing.caps, fitsWithoutClosing.text, maxTokens);
  };
  /**
   * Lines go whole, so a section's share is rarely used up; what the text leaves of `maxTokens` is offered to
   * the sections that want more: a line each first, then line by line by value per token. Line counts stand in
   * for the text's: when the fuller text overshoots, less is offered again.
   */
  const withLeftover = (caps: readonly number[], text: BuiltText, maxTokens: number): BuiltText => {
    const hungry = sections
      .map((section, index) => ({ index, weight: section.weight }))
      .filter(({ index }) => natural[index]! > caps[index]!)
      .sort((a, b) => b.weight - a.weight || a.index - b.index);
    /**
     * The lines of the sections that want more, using `room` more tokens (by the line counts: the text's count
     * may differ a little); undefined when none shows more. First each takes its best line that fits, heaviest
     * first, so that a small summary shows the best line of several sections rather than many lines of one; then
     * what is left goes to them a line at a time, the most value per token first: a section's k-th line of the
     * leftover is worth its weight / k^lineValueDecay (as `chooseByValue` values lines). Offered to each section in
     * turn, heaviest first, the leftover went to the first that could take lines, and those after it got none.
     * The lines are chosen here, not fitted to raised caps: under a raised cap a section's fit takes a longer line
     * it ranks higher in place of several chosen (and a fit per line cost this pass 3x its time).
     */
    const raise = (room: number): Map<number, Set<number>> | undefined => {
      let leftover = room;
      const states = new Map(
        hungry.map(({ index }) => {
          const section = fitted[index]!;
          const before = section.fitter.fit(caps[index]!, text.shownElsewhere[index]);
          const salient = section.fit.policy === 'salient';
          return [
            index,
            {
              shown: new Set(before.keptIndexes),
              // A salient section shows one line of a shape.
              shapes: salient
                ? new Set(before.keptIndexes.map((line) => section.fitter.shapeOf(line)))
                : undefined,
              // Lines taken after the first.
              taken: 0,
              // Lines of its ranking passed over: shown, not to be shown, or too long for a leftover that only
              // shrinks (one too long beside the section's heading is not offered again once the heading is in).
              position: 0,
            },
          ];
        }),
      );
      /** Section `index`'s next line that fits the leftover, and its cost (the first's with the heading). */
      const nextLine = (index: number) => {
        const section = fitted[index]!;
        const state = states.get(index)!;
        const shownElsewhere = text.shownElsewhere[index];
        const heading = state.shown.size === 0 ? sectionHeadingTokens : 0;
        const ranked = section.fitter.ranked();
        for (; state.position < ranked.length; state.position++) {
          const line = ranked[state.position]!;
          if (state.shown.has(line) || shownElsewhere?.has(line)) continue;
          if (state.shapes?.has(section.fitter.shapeOf(line)) === true) continue;
          const cost = section.lineTokens[line]! + 1 + heading;
          if (cost <= leftover) return { line, cost };
        }
        return undefined;
      };
      const take = (index: number, line: number, cost: number) => {
        const state = states.get(index)!;
        state.shown.add(line);
        state.shapes?.add(fitted[index]!.fitter.shapeOf(line));
        leftover -= cost;
      };
      let changed = false;
      for (const { index } of hungry) {
        const next = nextLine(index);
        if (next === undefined) continue;
        take(index, next.line, next.cost);
        changed = true;
      }
      for (;;) {
        let best: { index: number; line: number; cost: number; value: number } | undefined;
        for (const { index } of hungry) {
          const next = nextLine(index);
          if (next === undefined) continue;
          const value =
            sections[index]!.weight / (1 + states.get(index)!.taken) ** lineValueDecay / next.cost;
          if (best === undefined || value > best.value) best = { index, ...next, value };
        }
        if (best === undefined) break;
        take(best.index, best.line, best.cost);
        states.get(best.index)!.taken++;
        changed = true;
      }
      return changed ? new Map([...states].map(([index, state]) => [index, state.shown])) : undefined;
    };
    let room = maxTokens - tokensOf(text);
    for (let attempt = 0; attempt < 3 && room >= 2; attempt++) {
      const chosen = raise(room);
      if (chosen === undefined) return text;
      const fuller = buildWith(`leftover:${caps.join(',')}:${room}`, (index, shownElsewhere) => {
        const lines = chosen.get(index);
        const section = fitted[index]!;
        return lines === undefined
          ? section.fitter.fit(caps[index]!, shownElsewhere)
          : linesAmong(section, lines, shownElsewhere);
      });
      const over = tokensOf(fuller) - maxTokens;
      if (over <= 0) return fuller;
      room -= over + 2;
    }
    return text;
  };
  const rendered = new Map<number | undefined, string>();
  const renderer: AnchoredSummaryRenderer = {
    estimatedTokens: estimate,
    render(maxTokens) {
      let text = rendered.get(maxTokens);
      if (text === undefined) {
        text = render(maxTokens);
        rendered.set(maxTokens, text);
      }
      return text;
    },
  };
  renderedSections.set(renderer, { counter: baseCounter, sections: fitted });
  return renderer;
}
