import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { propertyRuns } from '../../../test/support/property-runs.js';
import { InvalidArgumentError } from '../../errors/index.js';
import type { Message } from '../../messages/types.js';
import { createTokenAccountant } from '../../tokens/index.js';
import type { Compressor } from '../compressors.js';
import { offsetBuckets } from '../fact-score.js';
import { judgeDimensions, judgeRubric, type ScoredJudgement } from '../judge.js';
import { type Probe, probeTypes } from '../probes.js';
import { type EvalReport, type EvalSession, evaluateSessions } from '../run-eval.js';
import { escapeHtml as escapeText } from './escape-html.js';
import {
  judgedReports,
  judgeFailure,
  scriptedAnswer,
  scriptedReason,
} from './judged-reports.test-support.js';
import { renderHtml } from './render-html.js';

// Facts and names with everything that must be escaped: markup, ampersands, both quotes, Japanese.
const nastyFact = '</script><script>alert("x & y")</script>';
const probes: Probe[] = [
  {
    id: 'error',
    type: 'recall',
    question: 'Which error <b>broke</b> the build & why?',
    answer: `It said "x < y" and 'エラー'.`,
    facts: ['x < y && "z"', 'エラー: 接続が拒否されました'],
    minFacts: 1,
    firstOffset: 0.1,
  },
  {
    id: 'file',
    type: 'artifact',
    question: 'Which file changed?',
    answer: 'src/a|b.ts',
    facts: ['src/a|b.ts', nastyFact],
    minFacts: 2,
    firstOffset: 0.5,
  },
  {
    id: 'next',
    type: 'continuation',
    question: 'What is next?',
    answer: 'Ship it.',
    facts: ['ship it'],
    minFacts: 1,
    firstOffset: 0.9,
  },
];
const user = (content: string): Message => ({ role: 'user', content });
const messages = [
  user('The build failed: x < y && "z" (エラー: 接続が拒否されました).'),
  user(`Changed src/a|b.ts to drop ${nastyFact}. ${'More words here. '.repeat(40)}`),
  user('Now ship it.'),
];
const nastySession = `<img src=x onerror="alert(1)">&'日本'.json`;
const sessions: EvalSession[] = [
  { name: 'alpha.json', conversation: { messages }, probes },
  { name: nastySession, conversation: { messages }, probes: probes.slice(0, 2) },
];
const compressors: Compressor[] = [
  { name: 'everything', compress: (conversation) => conversation.messages },
  { name: 'tail "last"', compress: (conversation) => conversation.messages.slice(-1) },
  { name: 'head <1>', compress: (conversation) => conversation.messages.slice(0, 1) },
];
const probesBySession = Object.fromEntries(sessions.map((session) => [session.name, session.probes]));
const accountant = createTokenAccountant();

function reportsAt(clock: () => number = () => 0): EvalReport[] {
  return [{ ratio: 0.5 }, { tokens: 100 }].map((budget) =>
    evaluateSessions({ sessions, compressors, budget, accountant, clock }),
  );
}

const count = (html: string, pattern: RegExp) => (html.match(pattern) ?? []).length;
const tagsOf = (html: string) =>
  new Set([...html.matchAll(/<\/?([a-zA-Z][\w-]*)/g)].map((match) => match[1]!));
const pageTags = [
  ...[
    'html',
    'head',
    'meta',
    'link',
    'title',
    'style',
    'body',
    'header',
    'div',
    'h1',
    'h2',
    'h3',
    'p',
    'form',
  ],
  ...['fieldset', 'legend', 'label', 'input', 'select', 'option', 'main', 'section', 'figure', 'figcaption'],
  ...['table', 'caption', 'thead', 'tbody', 'tr', 'th', 'td', 'span', 'strong', 'code', 'details', 'summary'],
  ...['h4', 'ul', 'li', 'br'],
  ...['script', 'svg', 'g', 'rect', 'line', 'polyline', 'polygon', 'circle', 'text', 'tspan'],
];

/** Expected numbers of chart marks and drill-down elements, from the reports' own data. */
function expectedMarks(reports: readonly EvalReport[]) {
  const compressorNames = reports[0]!.compressors;
  const compressors = compressorNames.length;
  let charts = 1;
  let lines = compressors;
  let points = compressors * reports.length;
  let radars = 0;
  let typeBars = 0;
  let offsetBars = 0;
  let dimensionBars = 0;
  let tokenBars = 0;
  let probeRows = 0;
  const judgements = { scored: 0, invalid: 0, failed: 0 };
  for (const report of reports) {
    const judged = report.judge !== undefined;
    const several = report.points.length > 1;
    charts += 3 + compressors + (judged ? 1 + compressors : 0) + (several ? 1 : 0);
    radars += compressors * (judged ? 2 : 1);
    if (several) {
      lines += compressors;
      points += compressors * report.points.length;
    }
    for (const total of report.totals) {
      typeBars += probeTypes.filter((type) => total.byType[type].probes > 0).length;
      offsetBars += offsetBuckets.filter((bucket) => total.byOffset[bucket].probes > 0).length;
      if (total.judge !== undefined && total.judge.scored > 0) dimensionBars += judgeDimensions.length;
    }
    tokenBars += report.sessions.length * (report.compressors.length + 1);
    for (const session of report.sessions)
      probeRows += report.results.find((result) => result.session === session)!.probes.length;
    for (const result of report.results)
      for (const probe of result.probes) if (probe.judge !== undefined) judgements[probe.judge.status]++;
  }
  return {
    charts,
    lines,
    points,
    radars,
    verticalBars: typeBars + offsetBars + dimensionBars,
    tokenBars,
    sessions: reports.reduce((sum, report) => sum + report.sessions.length, 0),
    probeRows,
    judgements,
    criteria: judgements.scored * judgeRubric.length,
  };
}

describe('renderHtml', () => {
  const reports = reportsAt();
  const html = renderHtml({ reports, probes: probesBySession });

  it('is one self-contained document: no external resources, a CSP that forbids them, one inline script', () => {
    expect(html.startsWith('<!doctype html>\n<html lang="en">')).toBe(true);
    expect(html).toContain(
      `content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"`,
    );
    expect(html).not.toMatch(/\b(src|href)="(?!data:)/);
    expect(html).not.toMatch(/url\(|@import|https?:\/\/(?!www\.w3\.org\/2000\/svg")/);
    expect(count(html, /<script/g)).toBe(1);
    expect(count(html, /<style/g)).toBe(1);
  });

  it('escapes every name, question, answer and fact', () => {
    for (const tag of tagsOf(html)) expect(pageTags).toContain(tag);
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<b>');
    expect(html).toContain('&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;&#39;日本&#39;.json');
    expect(html).toContain(
      '<code>&lt;/script&gt;&lt;script&gt;alert(&quot;x &amp; y&quot;)&lt;/script&gt;</code>',
    );
    expect(html).toContain('Which error &lt;b&gt;broke&lt;/b&gt; the build &amp; why?');
    expect(html).toContain('It said &quot;x &lt; y&quot; and &#39;エラー&#39;.');
    expect(html).toContain('data-compressor="tail &quot;last&quot;"');
    expect(html).toContain('<input type="checkbox" name="compressor" value="head &lt;1&gt;" checked>');
  });

  it('draws the charts the data asks for', () => {
    const expected = expectedMarks(reports);
    expect(count(html, /<svg /g)).toBe(expected.charts);
    expect(count(html, /<polyline class="line"/g)).toBe(expected.lines);
    expect(count(html, /class="point"/g)).toBe(expected.points);
    expect(count(html, /<polygon class="radar-area"/g)).toBe(expected.radars);
    expect(count(html, /<rect class="bar"/g)).toBe(expected.verticalBars + expected.tokenBars);
    expect(count(html, /<details class="session">/g)).toBe(expected.sessions);
    expect(count(html, /<details class="probe"/g)).toBe(expected.probeRows);
    // No decision probes: no decision bars, and the radar marks the axis with a dash.
    expect(html).not.toMatch(/class="bar"[^>]*data-type="decision"/);
    expect(html).toMatch(/>decision<tspan class="radar-value"[^>]*>–<\/tspan>/);
  });

  it('marks each fact kept or lost per compressor in the drill-down', () => {
    // head <1> keeps the first message: the recall facts, not the artifact ones.
    const error = html.slice(html.indexOf('<details class="probe" data-type="recall">'));
    const factRow =
      /<tr><td class="fact"><code>x &lt; y &amp;&amp; &quot;z&quot;<\/code><\/td>(.*?)<\/tr>/.exec(error)!;
    expect(factRow[1]).toBe(
      '<td class="kept" data-compressor="everything">✓ kept</td>' +
        '<td class="lost" data-compressor="tail &quot;last&quot;">✗ lost</td>' +
        '<td class="kept" data-compressor="head &lt;1&gt;">✓ kept</td>',
    );
    expect(error).toMatch(/<p class="answer"><strong>Reference answer\.<\/strong>/);
  });

  it('without the probes, shows the lost facts only and says so', () => {
    const bare = renderHtml({ reports });
    expect(bare).toContain('Only the lost facts are known');
    expect(bare).not.toContain('Reference answer');
    expect(count(bare, /<details class="probe"/g)).toBe(expectedMarks(reports).probeRows);
    // The continuation fact is lost only by head <1>, so it is still listed.
    expect(bare).toContain('<code>ship it</code>');
  });

  it('is deterministic: wall time and dates only when asked for', () => {
    let now = 0;
    const slow = reportsAt(() => (now += 3.7));
    expect(renderHtml({ reports: slow, probes: probesBySession })).toBe(html);
    expect(html).not.toMatch(/generated|\d ms/);
    const dated = renderHtml({
      reports: slow,
      probes: probesBySession,
      generatedAt: '2025-01-02',
      includeTime: true,
      title: 'Nightly <eval>',
    });
    expect(dated).toContain('generated 2025-01-02');
    expect(dated).toMatch(/<td>\d+ ms<\/td>/);
    expect(dated).toContain('<h1>Nightly &lt;eval&gt;</h1>');
  });

  it('rejects unusable reports with the field that is wrong', () => {
    expect(() => renderHtml({ reports: [] })).toThrow(InvalidArgumentError);
    const broken = structuredClone(reports);
    (broken[0]!.results[1]!.probes[0] as { missing: unknown }).missing = 'everything';
    expect(() => renderHtml({ reports: broken })).toThrow(
      /^reports\[0\]\.results\[1\]\.probes\[0\]\.missing: /,
    );
  });

  it('keeps any text inside its element: no tag but the page’s own, whatever the names and facts', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 30 }),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }),
        fc.string({ unit: 'grapheme', maxLength: 30 }),
        (session, fact, compressor) => {
          const report = structuredClone(reports[1]!);
          const name = report.sessions[0]!;
          report.sessions[0] = `x${session}`;
          for (const result of report.results) if (result.session === name) result.session = `x${session}`;
          const rename = (old: string) => (old === 'everything' ? `y${compressor}` : old);
          report.compressors = report.compressors.map(rename);
          for (const result of report.results) result.compressor = rename(result.compressor);
          for (const total of report.totals) total.compressor = rename(total.compressor);
          const custom = {
            [`x${session}`]: [{ ...probes[0]!, facts: [fact], question: fact, answer: fact }],
          };
          const page = renderHtml({ reports: [report], probes: custom });
          for (const tag of tagsOf(page)) expect(pageTags).toContain(tag);
          expect(count(page, /<script/g)).toBe(1);
          expect(count(page, /<\/script>/g)).toBe(1);
        },
      ),
      { numRuns: propertyRuns(40) },
    );
  });
});

/** The HTML of one element (and what it holds) that starts at `start`: enough of it to search in. */
const slice = (html: string, start: string, end: string) => {
  const from = html.indexOf(start);
  expect(from, start).toBeGreaterThanOrEqual(0);
  const to = html.indexOf(end, from + start.length);
  expect(to, end).toBeGreaterThan(from);
  return html.slice(from, to + end.length);
};

describe('renderHtml with a judge and several compression points', async () => {
  const reports = await judgedReports({ sessions, compressors });
  const html = renderHtml({ reports, probes: probesBySession });
  const expected = expectedMarks(reports);

  it('draws the judge radars and dimension bars, and pass rate by compression point', () => {
    expect(expected.judgements).toEqual({ scored: 20, invalid: 6, failed: 4 });
    expect(count(html, /<svg /g)).toBe(expected.charts);
    expect(count(html, /<figure class="radar judge-radar"/g)).toBe(compressors.length * reports.length);
    expect(count(html, /<polygon class="radar-area"/g)).toBe(expected.radars);
    expect(count(html, /<rect class="bar"/g)).toBe(expected.verticalBars + expected.tokenBars);
    expect(count(html, /<rect class="bar"[^>]*data-dimension="continuity"/g)).toBe(
      compressors.length * reports.length,
    );
    expect(count(html, /<polyline class="line"/g)).toBe(expected.lines);
    expect(count(html, /class="point"/g)).toBe(expected.points);
    expect(count(html, /<div class="card points">/g)).toBe(reports.length);
    expect(count(html, /<table class="judge-totals">/g)).toBe(reports.length);
    // everything: 4 probes scored, recall 4.94…, artifact 3.05…: every dimension 4 on average.
    const judgeTotals = slice(html, '<table class="judge-totals">', '</table>');
    const everything = slice(judgeTotals, '<tr data-compressor="everything">', '</tr>');
    expect(count(everything, /<td>4\.00<\/td>/g)).toBe(judgeDimensions.length);
    expect(everything).toContain('>4 / 1 / 0</td>');
    // tail keeps the last message only: both recall calls failed, artifacts scored 1 (continuity 2).
    const tail = slice(judgeTotals, '<tr data-compressor="tail &quot;last&quot;">', '</tr>');
    expect(tail).toContain('1.17</td>');
    expect(tail).toContain('>2 / 1 / 2</td>');
    expect(html).toContain('judged by judge=scripted:judge &lt;v1&gt;;answerer=scripted:judge &lt;v1&gt;');
    // Pass rate and judge overall per point: at 50% only the recall probes are answerable.
    expect(html).toMatch(
      /<tr data-compressor="everything"><th scope="row"><span class="swatch"[^>]*><\/span>everything<\/th><td>100\.0% \(2\/2\)<br><span class="muted">judge 3\.06<\/span><\/td><td>100\.0% \(5\/5\)<br><span class="muted">judge 4\.00<\/span><\/td><\/tr>/,
    );
  });

  it('draws no bar and a dash for a compressor with nothing scored (its means of 0 are no verdict)', () => {
    const none = structuredClone(reports.slice(0, 1));
    Object.assign(none[0]!.totals[1]!.judge!, { scored: 0, invalid: 3, failed: 2, overall: 0 });
    const page = renderHtml({ reports: none });
    expect(count(page, /<rect class="bar"[^>]*data-dimension=/g)).toBe(
      (compressors.length - 1) * judgeDimensions.length,
    );
    const judgeTotals = slice(page, '<table class="judge-totals">', '</table>');
    expect(judgeTotals).toMatch(
      /tail &quot;last&quot;<\/th><td class="judge-total"><span class="meter"><span style="width:0%;[^"]*"><\/span><\/span>–<\/td>(<td>–<\/td>){6}<td class="judge-counts"[^>]*>0 \/ 3 \/ 2<\/td>/,
    );
  });

  it('shows each answer and verdict in the drill-down: scores and reasons, or what went wrong', () => {
    expect(count(html, /<div class="judgement scored"/g)).toBe(expected.judgements.scored);
    expect(count(html, /<div class="judgement invalid"/g)).toBe(expected.judgements.invalid);
    expect(count(html, /<div class="judgement failed"/g)).toBe(expected.judgements.failed);
    expect(count(html, /<tr class="criterion">/g)).toBe(expected.criteria);
    const error = slice(html, '<details class="probe" data-type="recall">', '</details>');
    const scored = slice(
      error,
      '<div class="judgement scored" data-compressor="everything">',
      '<div class="judgement failed"',
    );
    expect(scored).toContain('overall <strong>4.94</strong> / 5');
    expect(scored).toContain(`<p>${escapeText(scriptedAnswer(probes[0]!.question))}</p>`);
    expect(scored).toContain('<li data-dimension="continuity">continuity <strong>4.67</strong></li>');
    expect(scored).toContain(
      `<tr class="criterion"><td><code>continuity.decisions</code></td><td>1</td><td class="criterion-score">4</td><td class="reason">${escapeText(scriptedReason('continuity.decisions'))}</td></tr>`,
    );
    expect(scored).toContain('By compression point: 50% ✓ 3.06 · 100% ✓ 4.94');
    const failed = slice(
      error,
      '<div class="judgement failed" data-compressor="tail &quot;last&quot;">',
      '<div class="judgement scored"',
    );
    expect(failed).toContain('judge call failed, not scored');
    expect(failed).toContain(`<code>${escapeText(judgeFailure)}</code>`);
    expect(failed).not.toContain('Answer');
    const next = slice(html, '<details class="probe" data-type="continuation">', '</details>');
    const invalid = slice(next, '<div class="judgement invalid" data-compressor="everything">', '</ul>');
    expect(invalid).toContain('invalid verdict: no usable reply in 2 attempts, not scored');
    expect(
      count(invalid, /<li><span class="label">attempt \d<\/span> <code>[^<]*expected at most 5, got 9/g),
    ).toBe(2);
    expect(invalid).toContain(escapeText(scriptedAnswer(probes[2]!.question)));
    // The verdict badges carry the judge's word too.
    expect(error).toContain('<span class="verdict-judge judge-scored">4.94</span>');
    expect(error).toContain('<span class="verdict-judge judge-failed">failed</span>');
  });

  it('is byte-identical for the same input, whatever the wall time', async () => {
    let now = 0;
    const slow = await judgedReports({ sessions, compressors, clock: () => (now += 11.3) });
    expect(slow[0]!.totals[0]!.timeMs).toBeGreaterThan(0);
    expect(renderHtml({ reports: slow, probes: probesBySession })).toBe(html);
    // A report that went through JSON (the CLI's --json) renders the same.
    expect(renderHtml({ reports: JSON.parse(JSON.stringify(reports)), probes: probesBySession })).toBe(html);
  });

  it('rejects a malformed verdict with the field that is wrong', () => {
    // The first point's verdicts are not the top-level ones (those are the last point's): checked too.
    const broken = structuredClone(reports);
    const early = broken[1]!.results[0]!.points[0]!.probes[0]!.judge as { overall: unknown };
    early.overall = 'high';
    expect(() => renderHtml({ reports: broken })).toThrow(
      /^reports\[1\]\.results\[0\]\.points\[0\]\.probes\[0\]\.judge\.overall: /,
    );
    const noProblems = structuredClone(reports);
    (noProblems[1]!.results[0]!.probes[2]!.judge as { problems: unknown }).problems = 'all of them';
    expect(() => renderHtml({ reports: noProblems })).toThrow(
      /^reports\[1\]\.results\[0\]\.probes\[2\]\.judge\.problems: expected an array/,
    );
    const unknown = structuredClone(reports);
    (unknown[0]!.results[2]!.probes[0]!.judge as { status: string }).status = 'guessed';
    expect(() => renderHtml({ reports: unknown })).toThrow(
      /^reports\[0\]\.results\[2\]\.probes\[0\]\.judge\.status: .*"guessed"/,
    );
    const noScore = structuredClone(reports);
    const criterion = (noScore[0]!.results[0]!.probes[0]!.judge as ScoredJudgement).criteria[3]!;
    (criterion as { score: unknown }).score = '5';
    expect(() => renderHtml({ reports: noScore })).toThrow(
      /^reports\[0\]\.results\[0\]\.probes\[0\]\.judge\.criteria\[3\]\.score: /,
    );
    const noDimension = structuredClone(reports);
    delete (noDimension[0]!.totals[1]!.judge!.dimensions as Partial<Record<string, number>>).continuity;
    expect(() => renderHtml({ reports: noDimension })).toThrow(
      /^reports\[0\]\.totals\[1\]\.judge\.dimensions\.continuity: /,
    );
    const badPoint = structuredClone(reports);
    badPoint[0]!.points = [0, 1];
    expect(() => renderHtml({ reports: badPoint })).toThrow(/^reports\[0\]\.points\[0\]: /);
  });

  it('keeps any answer, reason, problem and error inside its element', () => {
    const judgedInFirst = Object.values(expectedMarks(reports.slice(0, 1)).judgements).reduce(
      (sum, value) => sum + value,
    );
    expect(judgedInFirst).toBe(15);
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 40 }),
        fc.string({ unit: 'grapheme', maxLength: 40 }),
        fc.string({ unit: 'grapheme', maxLength: 40 }),
        (answer, reason, problem) => {
          const report = structuredClone(reports[0]!);
          for (const result of report.results)
            for (const probe of result.probes) {
              const judge = probe.judge!;
              if (judge.status === 'failed') judge.error = problem;
              else {
                judge.answer = answer;
                if (judge.status === 'invalid') judge.problems = [problem, reason];
                else for (const criterion of judge.criteria) criterion.reason = reason;
              }
            }
          const page = renderHtml({ reports: [report], probes: probesBySession });
          for (const tag of tagsOf(page)) expect(pageTags).toContain(tag);
          expect(count(page, /<script/g)).toBe(1);
          expect(count(page, /<\/script>/g)).toBe(1);
          expect(count(page, /<div class="judgement /g)).toBe(judgedInFirst);
        },
      ),
      { numRuns: propertyRuns(30) },
    );
  });
});

const chromiumPath = '/usr/bin/chromium';

describe('renderHtml in headless Chromium', () => {
  it('loads offline without errors, renders every chart, the judge and the points, and filters', async (context) => {
    context.skip(
      !existsSync(chromiumPath),
      `needs Debian chromium at ${chromiumPath} (apt-get install chromium); CI installs it`,
    );
    // Judged by the scripted answerer and judge at two compression points: every kind of element shows.
    const reports = await judgedReports({ sessions, compressors });
    const expected = expectedMarks(reports);
    const file = join(mkdtempSync(join(tmpdir(), 'precis-report-')), 'report.html');
    writeFileSync(file, renderHtml({ reports, probes: probesBySession }));
    const url = pathToFileURL(file).href;

    const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
      const requests: string[] = [];
      const problems: string[] = [];
      page.on('request', (request) => requests.push(request.url()));
      page.on('console', (message) => {
        if (message.type() === 'error' || message.type() === 'warning')
          problems.push(`console ${message.type()}: ${message.text()}`);
      });
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      // Anything but the file itself is blocked, and recorded above.
      await page.route('**/*', (route) =>
        route.request().url() === url ? route.continue() : route.abort('blockedbyclient'),
      );
      await page.goto(url, { waitUntil: 'load' });

      expect(await page.locator('svg.chart').count()).toBe(expected.charts);
      expect(await page.locator('svg.line-chart polyline.line').count()).toBe(expected.lines);
      expect(await page.locator('svg.line-chart .point').count()).toBe(expected.points);
      expect(await page.locator('polygon.radar-area').count()).toBe(expected.radars);
      expect(await page.locator('svg.bar-chart-vertical rect.bar').count()).toBe(expected.verticalBars);
      expect(await page.locator('svg.bar-chart-horizontal rect.bar').count()).toBe(expected.tokenBars);
      expect(await page.locator('details.session').count()).toBe(expected.sessions);
      expect(await page.locator('details.probe').count()).toBe(expected.probeRows);
      expect(await page.locator('figure.judge-radar svg.radar-chart').count()).toBe(
        compressors.length * reports.length,
      );
      expect(await page.locator('.point-chart svg.line-chart').count()).toBe(reports.length);
      expect(await page.locator('table.judge-totals tbody tr').count()).toBe(
        compressors.length * reports.length,
      );
      expect(await page.locator('table.point-totals tbody tr').count()).toBe(
        compressors.length * reports.length,
      );
      expect(await page.locator('.judgement.scored').count()).toBe(expected.judgements.scored);
      expect(await page.locator('.judgement.invalid').count()).toBe(expected.judgements.invalid);
      expect(await page.locator('.judgement.failed').count()).toBe(expected.judgements.failed);
      expect(await page.locator('tr.criterion').count()).toBe(expected.criteria);
      // Charts have a real size once laid out.
      for (const chart of ['svg.line-chart', '.point-chart svg.line-chart', 'figure.judge-radar svg']) {
        const box = await page.locator(chart).first().boundingBox();
        expect(box!.width, chart).toBeGreaterThan(chart === 'svg.line-chart' ? 400 : 250);
        expect(box!.height, chart).toBeGreaterThan(150);
      }
      const bar = await page.locator('rect.bar[data-dimension="accuracy"]').first().boundingBox();
      expect(bar!.height).toBeGreaterThan(20);

      // Escaped text reads back as the original text.
      const sessionSummary = page.locator('details.session > summary .session-name').nth(1);
      expect(await sessionSummary.textContent()).toBe(nastySession);
      await page.locator('details.session > summary').nth(0).click();
      const firstProbe = page.locator('details.probe').nth(1);
      await firstProbe.locator('summary').click();
      expect(await firstProbe.locator('td.fact code').allTextContents()).toEqual(probes[1]!.facts);
      expect(await page.locator('img').count()).toBe(0);
      // The recall probe: everything's answer and reasons, tail's failed call, read back as written.
      const recall = page.locator('details.probe').nth(0);
      await recall.locator('summary').click();
      const scored = recall.locator('.judgement.scored[data-compressor="everything"]');
      expect(await scored.isVisible()).toBe(true);
      expect(await scored.locator('.judge-answer p').textContent()).toBe(scriptedAnswer(probes[0]!.question));
      expect(await scored.locator('td.reason').allTextContents()).toEqual(
        judgeRubric.map((criterion) => scriptedReason(criterion.id)),
      );
      expect(await scored.locator('.judge-overall').textContent()).toBe('overall 4.94 / 5');
      const failed = recall.locator('.judgement.failed');
      expect(await failed.locator('.judge-error').textContent()).toBe(judgeFailure);
      expect(await failed.locator('.judge-error').isVisible()).toBe(true);

      // Filters: hide a compressor, a probe type, then one budget.
      // (Counted by figure and series group: a degenerate polygon or a flat line has no area, so is never :visible.)
      await page.getByRole('checkbox', { name: 'head <1>' }).uncheck();
      // One probe-type radar and one judge radar per budget; one line in the budget curve and per budget.
      expect(await page.locator('figure.radar:visible').count()).toBe(expected.radars - 2 * reports.length);
      expect(await page.locator('svg.line-chart g.series:visible').count()).toBe(
        expected.lines - 1 - reports.length,
      );
      expect(await recall.locator('.judgement:visible').count()).toBe(2);
      expect(await page.locator('rect.bar[data-dimension][data-compressor="head <1>"]:visible').count()).toBe(
        0,
      );
      await page.getByRole('checkbox', { name: 'artifact' }).uncheck();
      expect(await page.locator('details.probe[data-type="artifact"]:visible').count()).toBe(0);
      await page.locator('select[name="budget"]').selectOption('1');
      expect(await page.locator('section.budget[data-budget="0"]').isVisible()).toBe(false);
      expect(await page.locator('section.budget[data-budget="1"]').isVisible()).toBe(true);
      await page.locator('select[name="budget"]').selectOption('all');
      await page.getByRole('checkbox', { name: 'head <1>' }).check();
      expect(await page.locator('figure.radar:visible').count()).toBe(expected.radars);

      const screenshot = await page.screenshot({ fullPage: false });
      expect(screenshot.length).toBeGreaterThan(10_000);
      // Decode the PNG in a blank page's canvas and count distinct colours: a blank render has one.
      const canvas = await browser.newPage();
      const colours = (await canvas.evaluate(`(async () => {
        const image = new Image();
        image.src = 'data:image/png;base64,${screenshot.toString('base64')}';
        await image.decode();
        const canvas = document.createElement('canvas');
        canvas.width = image.width;
        canvas.height = image.height;
        const context = canvas.getContext('2d');
        context.drawImage(image, 0, 0);
        const data = context.getImageData(0, 0, image.width, image.height).data;
        const seen = new Set();
        for (let index = 0; index < data.length; index += 4 * 7)
          seen.add((data[index] << 16) | (data[index + 1] << 8) | data[index + 2]);
        return seen.size;
      })()`)) as number;
      expect(colours).toBeGreaterThan(20);

      expect(problems).toEqual([]);
      expect(requests).toEqual([url]);
    } finally {
      await browser.close();
    }
  }, 60_000);
});
