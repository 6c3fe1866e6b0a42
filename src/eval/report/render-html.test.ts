import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../errors/index.js';
import type { Message } from '../../messages/types.js';
import { createTokenAccountant } from '../../tokens/index.js';
import type { Compressor } from '../compressors.js';
import { offsetBuckets } from '../fact-score.js';
import { type Probe, probeTypes } from '../probes.js';
import { type EvalReport, type EvalSession, evaluateSessions } from '../run-eval.js';
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
  ...['script', 'svg', 'g', 'rect', 'line', 'polyline', 'polygon', 'circle', 'text', 'tspan'],
];

/** Expected numbers of chart marks, from the reports' own data. */
function expectedMarks(reports: readonly EvalReport[]) {
  const compressorNames = reports[0]!.compressors;
  let typeBars = 0;
  let offsetBars = 0;
  let tokenBars = 0;
  let probeRows = 0;
  for (const report of reports) {
    for (const total of report.totals) {
      typeBars += probeTypes.filter((type) => total.byType[type].probes > 0).length;
      offsetBars += offsetBuckets.filter((bucket) => total.byOffset[bucket].probes > 0).length;
    }
    tokenBars += report.sessions.length * (report.compressors.length + 1);
    for (const session of report.sessions)
      probeRows += report.results.find((result) => result.session === session)!.probes.length;
  }
  return {
    charts: 1 + reports.length * (3 + compressorNames.length),
    lines: compressorNames.length,
    points: compressorNames.length * reports.length,
    radars: compressorNames.length * reports.length,
    verticalBars: typeBars + offsetBars,
    tokenBars,
    sessions: reports.reduce((sum, report) => sum + report.sessions.length, 0),
    probeRows,
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
      { numRuns: 40 },
    );
  });
});

const chromiumPath = '/usr/bin/chromium';

describe('renderHtml in headless Chromium', () => {
  it('loads offline without errors, renders every chart and filters', async (context) => {
    context.skip(
      !existsSync(chromiumPath),
      `needs Debian chromium at ${chromiumPath} (apt-get install chromium); CI installs it`,
    );
    const reports = reportsAt();
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
      // Charts have a real size once laid out.
      const box = await page.locator('svg.line-chart').boundingBox();
      expect(box!.width).toBeGreaterThan(400);
      expect(box!.height).toBeGreaterThan(150);

      // Escaped text reads back as the original text.
      const sessionSummary = page.locator('details.session > summary .session-name').nth(1);
      expect(await sessionSummary.textContent()).toBe(nastySession);
      await page.locator('details.session > summary').nth(0).click();
      const firstProbe = page.locator('details.probe').nth(1);
      await firstProbe.locator('summary').click();
      expect(await firstProbe.locator('td.fact code').allTextContents()).toEqual(probes[1]!.facts);
      expect(await page.locator('img').count()).toBe(0);

      // Filters: hide a compressor, a probe type, then one budget.
      // (Counted by figure and series group: a degenerate polygon or a flat line has no area, so is never :visible.)
      await page.getByRole('checkbox', { name: 'head <1>' }).uncheck();
      expect(await page.locator('figure.radar:visible').count()).toBe(expected.radars - reports.length);
      expect(await page.locator('svg.line-chart g.series:visible').count()).toBe(expected.lines - 1);
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
