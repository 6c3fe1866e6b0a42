import type { TestRunner } from './shell-command.js';

/** Counts and failing tests read from a test runner's summary lines. */
export interface TestSummary {
  /** The runner whose summary format matched (may differ from the command's, e.g. `npm test` running vitest). */
  runner: TestRunner;
  passed?: number;
  failed?: number;
  skipped?: number;
  /** Names of failing tests, verbatim, in order of appearance (at most `maxFailingTests`). */
  failingTests: string[];
  /** The runner's own summary lines, verbatim (trimmed, the last two distinct): its words, not our counts. */
  summaryLines?: string[];
}

const maxFailingTests = 20;
const durationSuffix = /\s+(?:\(?\d+(?:\.\d+)?\s*m?s\)?|\[\d+(?:\.\d+)?m?s\])$/;

function pushDistinct(list: string[], name: string): void {
  const trimmed = name.trim().replace(durationSuffix, '');
  if (trimmed !== '' && list.length < maxFailingTests && !list.includes(trimmed)) list.push(trimmed);
}

function countsOf(text: string, pattern: RegExp): Map<string, number> {
  const counts = new Map<string, number>();
  for (const match of text.matchAll(pattern)) {
    const key = match[2]!.toLowerCase();
    counts.set(key, (counts.get(key) ?? 0) + Number(match[1]));
  }
  return counts;
}

function withCounts(
  summary: TestSummary,
  passed: number | undefined,
  failed: number | undefined,
  skipped: number | undefined,
): TestSummary {
  if (passed !== undefined) summary.passed = passed;
  if (failed !== undefined) summary.failed = failed;
  if (skipped !== undefined) summary.skipped = skipped;
  return summary;
}

function sumDefined(...values: Array<number | undefined>): number | undefined {
  const defined = values.filter((value): value is number => value !== undefined);
  return defined.length === 0 ? undefined : defined.reduce((total, value) => total + value, 0);
}

// Each format first checks for a literal its summary line cannot match without: most outputs are not test
// runs, and a look for a word costs less than a pass of the line patterns over a long output.

function pytest(text: string): TestSummary | undefined {
  // `==== 1 failed, 2 passed in 0.12s ====` or, with -q, the same without the rules.
  if (!text.includes(' in ')) return undefined;
  const lines = [
    ...text.matchAll(
      /^=*\s*((?:\d+ (?:passed|failed|skipped|errors?|xfailed|xpassed|deselected|warnings?|rerun)(?:, )?)+) in [\d.]+s\b.*$/gm,
    ),
  ];
  const last = lines.at(-1);
  if (last === undefined) return undefined;
  const counts = countsOf(last[1]!, /(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)/g);
  const summary: TestSummary = { runner: 'pytest', failingTests: [] };
  for (const match of text.matchAll(/^(?:FAILED|ERROR) (\S+::\S+|\S+\.py)/gm))
    pushDistinct(summary.failingTests, match[1]!);
  return withCounts(
    summary,
    counts.get('passed') ?? 0,
    sumDefined(counts.get('failed'), counts.get('error'), counts.get('errors')) ?? 0,
    counts.get('skipped') ?? 0,
  );
}

function unittest(text: string): TestSummary | undefined {
  if (!text.includes('Ran ')) return undefined;
  const ran = [...text.matchAll(/^Ran (\d+) tests? in [\d.]+s/gm)].at(-1);
  if (ran === undefined) return undefined;
  const outcome = /^(OK|FAILED)(?: \(([^)]*)\))?\s*$/m.exec(text.slice(ran.index));
  const details = new Map<string, number>();
  for (const match of (outcome?.[2] ?? '').matchAll(/(\w+)=(\d+)/g)) details.set(match[1]!, Number(match[2]));
  const failed = (details.get('failures') ?? 0) + (details.get('errors') ?? 0);
  const skipped = details.get('skipped') ?? 0;
  const total = Number(ran[1]);
  const summary: TestSummary = { runner: 'unittest', failingTests: [] };
  for (const match of text.matchAll(/^(?:FAIL|ERROR): (\S+(?: \([^)]*\))?)/gm))
    pushDistinct(summary.failingTests, match[1]!);
  return withCounts(
    summary,
    Math.max(0, total - failed - skipped - (details.get('expected failures') ?? 0)),
    failed,
    skipped,
  );
}

function vitest(text: string): TestSummary | undefined {
  if (!text.includes('Tests')) return undefined;
  const line = [...text.matchAll(/^\s*Tests\s{2,}((?:\d+ \w+(?: \| )?)+)\s*\(\d+\)/gm)].at(-1);
  if (line === undefined) return undefined;
  const counts = countsOf(line[1]!, /(\d+) (passed|failed|skipped|todo)/g);
  const summary: TestSummary = { runner: 'vitest', failingTests: [] };
  for (const match of text.matchAll(/^\s*FAIL\s+(\S+ > .+)$/gm))
    pushDistinct(summary.failingTests, match[1]!);
  if (summary.failingTests.length === 0)
    for (const match of text.matchAll(/^\s*[×✗✕]\s+(.+)$/gm)) pushDistinct(summary.failingTests, match[1]!);
  return withCounts(
    summary,
    counts.get('passed') ?? 0,
    counts.get('failed') ?? 0,
    sumDefined(counts.get('skipped'), counts.get('todo')) ?? 0,
  );
}

function jest(text: string): TestSummary | undefined {
  if (!text.includes('Tests:')) return undefined;
  const line = [...text.matchAll(/^Tests:\s+(.*\d+ total)\s*$/gm)].at(-1);
  if (line === undefined) return undefined;
  const counts = countsOf(line[1]!, /(\d+) (passed|failed|skipped|todo|pending)/g);
  const summary: TestSummary = { runner: 'jest', failingTests: [] };
  for (const match of text.matchAll(/^\s*● (?!Console\b)(.+)$/gm))
    pushDistinct(summary.failingTests, match[1]!);
  if (summary.failingTests.length === 0)
    for (const match of text.matchAll(/^\s*[✕×]\s+(.+)$/gm)) pushDistinct(summary.failingTests, match[1]!);
  return withCounts(
    summary,
    counts.get('passed') ?? 0,
    counts.get('failed') ?? 0,
    sumDefined(counts.get('skipped'), counts.get('todo'), counts.get('pending')) ?? 0,
  );
}

function mocha(text: string): TestSummary | undefined {
  if (!text.includes(' passing')) return undefined;
  const passing = /^\s*(\d+) passing\b/m.exec(text);
  if (passing === null) return undefined;
  const failing = /^\s*(\d+) failing\b/m.exec(text);
  const pending = /^\s*(\d+) pending\b/m.exec(text);
  const summary: TestSummary = { runner: 'mocha', failingTests: [] };
  if (failing !== null) {
    const after = text.slice(failing.index + failing[0].length);
    for (const match of after.matchAll(/^\s{2}(\d+)\) (.+)$/gm))
      pushDistinct(summary.failingTests, match[2]!);
  }
  return withCounts(
    summary,
    Number(passing[1]),
    failing === null ? 0 : Number(failing[1]),
    pending === null ? 0 : Number(pending[1]),
  );
}

function goTest(text: string): TestSummary | undefined {
  const failedNames = [...text.matchAll(/^\s*--- FAIL: (\S+)/gm)];
  const passedCount = [...text.matchAll(/^\s*--- PASS: /gm)].length;
  const skippedCount = [...text.matchAll(/^\s*--- SKIP: /gm)].length;
  const packageLines = /^(?:ok|FAIL|---)\s+\S+\s+(?:[\d.]+s|\(cached\))/m.test(text);
  if (failedNames.length + passedCount + skippedCount === 0 && !packageLines) return undefined;
  const summary: TestSummary = { runner: 'go test', failingTests: [] };
  for (const match of failedNames) pushDistinct(summary.failingTests, match[1]!);
  if (failedNames.length + passedCount + skippedCount === 0) return summary;
  return withCounts(summary, passedCount, failedNames.length, skippedCount);
}

function cargoTest(text: string): TestSummary | undefined {
  if (!text.includes('test result: ')) return undefined;
  const results = [
    ...text.matchAll(/^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored/gm),
  ];
  if (results.length === 0) return undefined;
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const match of results) {
    passed += Number(match[1]);
    failed += Number(match[2]);
    skipped += Number(match[3]);
  }
  const summary: TestSummary = { runner: 'cargo test', failingTests: [] };
  for (const match of text.matchAll(/^test (\S+) \.\.\. FAILED$/gm))
    pushDistinct(summary.failingTests, match[1]!);
  return withCounts(summary, passed, failed, skipped);
}

const parsers: Record<TestRunner, ((text: string) => TestSummary | undefined) | undefined> = {
  pytest,
  unittest,
  vitest,
  jest,
  mocha,
  'go test': goTest,
  'cargo test': cargoTest,
  'npm test': undefined,
};
const detectionOrder = [pytest, unittest, vitest, jest, mocha, cargoTest] as const;

/**
 * The test summary in `text`. With a runner hint its format is tried first; without one (or when it does not
 * match) every format but `go test` is tried, since go's bare `ok pkg` lines are too loose to guess from.
 */
export function parseTestSummary(text: string, runner?: TestRunner): TestSummary | undefined {
  const summary = parseCounts(text, runner);
  if (summary === undefined) return undefined;
  const lines = summaryLinesOf(text);
  return lines.length === 0 ? summary : { ...summary, summaryLines: lines };
}

function parseCounts(text: string, runner?: TestRunner): TestSummary | undefined {
  const hinted = runner === undefined ? undefined : parsers[runner];
  const fromHint = hinted?.(text);
  if (fromHint !== undefined) return fromHint;
  for (const parse of detectionOrder) {
    if (parse === hinted) continue;
    const summary = parse(text);
    if (summary !== undefined) return summary;
  }
  return undefined;
}

/** Lines the runners above use for their totals: `Ran 3 tests in 0.1s`, `Tests  2 passed (2)`, `1 failed, 2 passed in 0.1s`, `ok\tpkg\t0.1s`. */
const summaryLinePattern =
  /^(?:=*\s*(?:\d+ (?:passed|failed|skipped|errors?)[, ]*)+ in [\d.]+s\b.*|Ran \d+ tests? in [\d.]+s|(?:OK|FAILED)(?: \([^)]*\))?|\s*Test(?:s| Files)(?::|\s{2,})\s*\d.*|Tests:\s+.*\d+ total|\s*\d+ (?:passing|failing|pending)\b.*|test result: .*|(?:ok|FAIL)\t\S+\t[\d.]+s)$/gm;

function summaryLinesOf(text: string): string[] {
  const lines: string[] = [];
  for (const match of text.matchAll(summaryLinePattern)) {
    const line = match[0].trim().slice(0, 200);
    if (line !== '' && !lines.includes(line)) lines.push(line);
  }
  return lines.slice(-3);
}

/** pytest's banner opening a run, colour codes aside: `==== test session starts ====`. */
const pytestSessionStart = /^(?:\u001b\[[\d;]*m)*=+ test session starts =+(?:\u001b\[[\d;]*m)*\r?$/gm;
/**
 * Where pytest's set-up header ends: `collected 8 items` (kept, a count), or the next banner or error when
 * collecting failed. A header is a few dozen lines: without an end in the first hundred, none is dropped.
 */
const pytestHeaderEnd = /^(?:\u001b\[[\d;]*m)*(?:collect|=|_|ERROR\b)/;
const maxHeaderLines = 100;

/**
 * `text` without pytest's set-up headers (the banner and what it prints before collecting: platform, rootdir,
 * plugins; with plugins such as astropy's, the date, interpreter, package versions and CI variables): the
 * environment of every run, the same each time, never how one ended.
 */
export function withoutTestRunHeaders(text: string): string {
  if (!text.includes('test session starts')) return text;
  let kept = '';
  let from = 0;
  pytestSessionStart.lastIndex = 0;
  for (let banner = pytestSessionStart.exec(text); banner !== null; banner = pytestSessionStart.exec(text)) {
    const end = headerEnd(text, banner.index + banner[0].length + 1);
    if (end === undefined) continue;
    kept += text.slice(from, banner.index);
    from = end;
    pytestSessionStart.lastIndex = end;
  }
  return kept + text.slice(from);
}

/** Where the line ending the header that goes on at `start` begins, if one does in `maxHeaderLines`. */
function headerEnd(text: string, start: number): number | undefined {
  for (let lineStart = start, count = 0; lineStart <= text.length && count < maxHeaderLines; count++) {
    const newline = text.indexOf('\n', lineStart);
    if (pytestHeaderEnd.test(text.slice(lineStart, newline === -1 ? text.length : newline))) return lineStart;
    if (newline === -1) return undefined;
    lineStart = newline + 1;
  }
  return undefined;
}
