import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { propertyRuns } from '../../../test/support/property-runs.js';
import { InvalidArgumentError } from '../../errors/index.js';
import type { Message } from '../../messages/types.js';
import { createTokenAccountant } from '../../tokens/index.js';
import type { Compressor } from '../compressors.js';
import type { Probe } from '../probes.js';
import { type EvalReport, type EvalSession, evaluateSessions } from '../run-eval.js';
import { judgedReports, judgeFailure } from './judged-reports.test-support.js';
import { markdownCode, renderMarkdown } from './render-markdown.js';

// Two small sessions and three compressors that keep a known part of them, so every count is known.
const probes: Probe[] = [
  {
    id: 'error',
    type: 'recall',
    question: 'Which error broke the build?',
    answer: 'x < y',
    facts: ['x < y && "z"', 'エラー: 接続が拒否されました'],
    minFacts: 1,
    firstOffset: 0.1,
  },
  {
    id: 'file',
    type: 'artifact',
    question: 'Which file changed?',
    answer: 'src/a|b.ts',
    facts: ['src/a|b.ts', '</script><script>alert(1)</script>'],
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
  user(`Changed src/a|b.ts to drop </script><script>alert(1)</script>. ${'More words here. '.repeat(40)}`),
  user('Now ship it.'),
];
const sessions: EvalSession[] = [
  { name: 'alpha.json', conversation: { messages }, probes },
  { name: 'b|`eta`<i>.json', conversation: { messages }, probes: probes.slice(0, 2) },
];
const compressors: Compressor[] = [
  { name: 'everything', compress: (conversation) => conversation.messages },
  { name: 'tail|last', compress: (conversation) => conversation.messages.slice(-1) },
  { name: 'head <1>', compress: (conversation) => conversation.messages.slice(0, 1) },
];
const accountant = createTokenAccountant();

function reportsAt(clock: () => number = () => 0): EvalReport[] {
  return [{ ratio: 0.5 }, { tokens: 100 }].map((budget) =>
    evaluateSessions({ sessions, compressors, budget, accountant, clock }),
  );
}

/** Cells of a markdown table row, split on the pipes GFM splits on (not the escaped ones). */
const cells = (line: string) => line.split(/(?<!\\)\|/).slice(1, -1);

function errorOf(run: () => unknown): InvalidArgumentError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    return error as InvalidArgumentError;
  }
  throw new Error('expected an InvalidArgumentError');
}

describe('renderMarkdown', () => {
  const reports = reportsAt();
  const markdown = renderMarkdown({ reports });

  it('has totals, by type, by first_offset and per-session tables per budget, with the right numbers', () => {
    expect(markdown).toContain('## Budget: 50% of each session');
    expect(markdown).toContain('## Budget: 100 tokens');
    // everything keeps all 5 probes; tail keeps the continuation of alpha only; head the two recall probes.
    expect(markdown).toContain('| `everything` | 100.0% (5/5) | 100.0% (9/9) |');
    expect(markdown).toContain('| `tail\\|last` | 20.0% (1/5) | 11.1% (1/9) |');
    expect(markdown).toContain('| `head <1>` | 40.0% (2/5) | 44.4% (4/9) |');
    expect(markdown).toContain('| recall | 100.0% (2/2) | 0.0% (0/2) | 100.0% (2/2) |');
    expect(markdown).toContain('| continuation | 100.0% (1/1) | 100.0% (1/1) | 0.0% (0/1) |');
    // No decision probes: a dash, not a 0% that would read as a failure.
    expect(markdown).toContain('| decision | – | – | – |');
    expect(markdown).toContain('| `>=0.7` | 100.0% (1/1) | 100.0% (1/1) | 0.0% (0/1) |');
    // Pass rate by budget comes first when there are several budgets.
    expect(markdown.indexOf('## Pass rate by budget')).toBeLessThan(markdown.indexOf('## Budget: 50%'));
    expect(markdown).toContain('| compressor | 50% | 100 tokens |');

    const [first] = reports;
    const everything = first!.results.find(
      (result) => result.session === 'alpha.json' && result.compressor === 'everything',
    )!;
    expect(everything.withinBudget).toBe(false);
    const total = first!.totals[0]!;
    expect(markdown).toContain(
      `| ${(100 * total.ratio).toFixed(1)}% (${total.tokensAfter.toLocaleString('en-US')} / ${total.tokensBefore.toLocaleString('en-US')}) | 0/2 |`,
    );
    expect(markdown).toContain(
      `| \`alpha.json\` | ${everything.tokensBefore} | ${everything.budgetTokens} | 3/3, ${everything.tokensAfter} tokens **over** |`,
    );
  });

  it('escapes names so every table row keeps its columns', () => {
    expect(markdown).toContain('| ``b\\|`eta`<i>.json`` |');
    const lines = markdown.split('\n');
    let columns = 0;
    for (const [index, line] of lines.entries()) {
      if (!line.startsWith('|')) {
        columns = 0;
        continue;
      }
      if (columns === 0) columns = cells(line).length;
      expect(cells(line), `line ${index + 1}: ${line}`).toHaveLength(columns);
    }
  });

  it('is deterministic: wall time and dates only when asked for', () => {
    let now = 0;
    const slow = reportsAt(() => (now += 17.3));
    expect(slow[0]!.totals[0]!.timeMs).toBeGreaterThan(0);
    expect(renderMarkdown({ reports: slow })).toBe(markdown);
    expect(renderMarkdown({ reports })).toBe(markdown);
    expect(markdown).not.toMatch(/\d ms|Generated/);
    const timed = renderMarkdown({ reports: slow, includeTime: true, generatedAt: '2025-01-02T03:04:05Z' });
    expect(timed).toContain('Generated 2025-01-02T03:04:05Z.');
    expect(timed).toMatch(/\| within budget \| time \|/);
    expect(timed).toMatch(/\| \d+ ms \|/);
  });

  it('renders one budget without the by-budget table', () => {
    const single = renderMarkdown({ reports: reports.slice(1), title: 'Nightly\neval' });
    expect(single.startsWith('# Nightly eval\n')).toBe(true);
    expect(single).not.toContain('Pass rate by budget');
    expect(single).toContain('## Budget: 100 tokens');
    expect(single.endsWith('|\n')).toBe(true);
    // No judge, one compression point: neither judge nor point tables.
    expect(markdown).not.toMatch(/judge|compression point/i);
  });

  it('rejects unusable reports with the field that is wrong', () => {
    expect(errorOf(() => renderMarkdown({ reports: [] })).option).toBe('reports');
    const broken = structuredClone(reports);
    (broken[1]!.results[2]!.total as unknown as Record<string, unknown>).passed = 'three';
    expect(errorOf(() => renderMarkdown({ reports: broken })).option).toBe(
      'reports[1].results[2].total.passed',
    );
    const stranger = structuredClone(reports);
    stranger[0]!.results[0]!.compressor = 'nobody';
    expect(errorOf(() => renderMarkdown({ reports: stranger })).message).toMatch(
      /^reports\[0\]\.results\[0\]\.compressor: .*"nobody"/,
    );
    const twice = [reports[0]!, structuredClone(reports[0]!)];
    expect(errorOf(() => renderMarkdown({ reports: twice })).option).toBe('reports[1].budget');
    const noType = structuredClone(reports);
    delete (noType[0]!.totals[1]!.byType as Partial<Record<string, unknown>>).decision;
    expect(errorOf(() => renderMarkdown({ reports: noType })).option).toBe(
      'reports[0].totals[1].byType.decision',
    );
  });
});

/** Every table of the markdown keeps the column count of its header row. */
function expectAlignedTables(markdown: string): void {
  let columns = 0;
  for (const [index, line] of markdown.split('\n').entries()) {
    if (!line.startsWith('|')) {
      columns = 0;
      continue;
    }
    if (columns === 0) columns = cells(line).length;
    expect(cells(line), `line ${index + 1}: ${line}`).toHaveLength(columns);
  }
}

describe('renderMarkdown with a judge and several compression points', async () => {
  const reports = await judgedReports({ sessions, compressors });
  const markdown = renderMarkdown({ reports });

  it('has the judge table per budget, with hand-computed scores', () => {
    const dimensions =
      '| overall | accuracy | context-awareness | artifact-trail | completeness | continuity | instruction-following |';
    expect(markdown.split(dimensions)).toHaveLength(reports.length + 1);
    // everything: recall probes score 5 on every criterion but continuity.decisions (4), artifact ones 3
    // (4): dimensions 5 and 14/3, 3 and 10/3, so every dimension averages 4 over 2 + 2 probes.
    expect(markdown).toContain(
      '| `everything` | 4.00 | 4.00 | 4.00 | 4.00 | 4.00 | 4.00 | 4.00 | 4 / 1 / 0 |',
    );
    // tail keeps the last message: the recall calls fail, the artifact probes score 1 (continuity 2).
    expect(markdown).toContain(
      '| `tail\\|last` | 1.17 | 1.00 | 1.00 | 1.00 | 1.00 | 2.00 | 1.00 | 2 / 1 / 2 |',
    );
    // head keeps the first: recall 3 (no src/a|b.ts), artifact 1; continuity (10/3 + 2) / 2.
    expect(markdown).toContain('| `head <1>` | 2.11 | 2.00 | 2.00 | 2.00 | 2.00 | 2.67 | 2.00 | 4 / 1 / 0 |');
    expect(markdown).toContain('## Judge overall by budget (0–5)');
    expect(markdown).toContain('| `everything` | 4.00 | 4.00 |');
    expect(markdown).toContain('by `judge=scripted:judge <v1>;answerer=scripted:judge <v1>;rubric=');
  });

  it('shows a dash, not a 0, for a compressor with nothing scored', () => {
    const none = structuredClone(reports);
    const summary = none[0]!.totals[1]!.judge!;
    Object.assign(summary, { scored: 0, invalid: 3, failed: 2, overall: 0 });
    for (const dimension of Object.keys(summary.dimensions) as (keyof typeof summary.dimensions)[])
      summary.dimensions[dimension] = 0;
    expect(renderMarkdown({ reports: none })).toContain(
      '| `tail\\|last` | – | – | – | – | – | – | – | 0 / 3 / 2 |',
    );
  });

  it('lists every verdict without a score, with what was wrong', () => {
    const rows = markdown.split('\n').filter((line) => /\| (invalid|failed) \|/.test(line));
    // Per budget: the continuation probe is invalid for all three, tail's two recall calls failed.
    expect(rows).toHaveLength(reports.length * 5);
    expect(rows.filter((row) => row.includes('| failed |'))).toHaveLength(reports.length * 2);
    expect(markdown).toContain(
      `| \`alpha.json\` | \`tail\\|last\` | 100% | \`error\` | failed | \`${judgeFailure}\` |`,
    );
    expect(markdown).toMatch(
      /\| `head <1>` \| 100% \| `next` \| invalid \| `attempt 1: \["accuracy.details"\]\.score: expected at most 5, got 9;[^`]*attempt 2: /,
    );
    expectAlignedTables(markdown);
  });

  it('has pass rate and judge overall by compression point', () => {
    expect(markdown).toContain('### Pass rate by compression point');
    expect(markdown).toContain('| compressor | 50% | 100% |');
    // At 50% only the recall probes (first fact at 10%) are answerable, and every compressor keeps them.
    expect(markdown).toContain('| `tail\\|last` | 100.0% (2/2) | 20.0% (1/5) |');
    expect(markdown).toContain('| `tail\\|last` | 3.06 | 1.17 |');
    expect(markdown.indexOf('### Pass rate by compression point')).toBeLessThan(
      markdown.indexOf('#### Pass rate by probe type'),
    );
  });

  it('is byte-identical for the same input, whatever the wall time', async () => {
    let now = 0;
    const slow = await judgedReports({ sessions, compressors, clock: () => (now += 7.1) });
    expect(renderMarkdown({ reports: slow })).toBe(markdown);
    expect(renderMarkdown({ reports: JSON.parse(JSON.stringify(reports)) })).toBe(markdown);
  });

  it('renders reports written before compression points existed, without the point tables', () => {
    const old = structuredClone(reports);
    for (const report of old) {
      delete (report as Partial<EvalReport>).points;
      for (const result of report.results) delete (result as { points?: unknown }).points;
    }
    const rendered = renderMarkdown({ reports: old });
    expect(rendered).not.toContain('compression point');
    expect(rendered).toContain('| `alpha.json` | `everything` | `next` | invalid |');
    expect(rendered).toContain('| `head <1>` | 2.11 | 2.00 | 2.00 | 2.00 | 2.00 | 2.67 | 2.00 | 4 / 1 / 0 |');
  });

  it('rejects a malformed judge summary with the field that is wrong', () => {
    const broken = structuredClone(reports);
    (broken[0]!.totals[2]!.judge as unknown as Record<string, unknown>).failed = null;
    expect(errorOf(() => renderMarkdown({ reports: broken })).option).toBe(
      'reports[0].totals[2].judge.failed',
    );
    const noError = structuredClone(reports);
    const failed = noError[1]!.results
      .flatMap((result) => result.probes)
      .find((probe) => probe.judge?.status === 'failed')!;
    delete (failed.judge as Partial<Record<string, unknown>>).error;
    expect(errorOf(() => renderMarkdown({ reports: noError })).message).toMatch(
      /judge\.error: expected a string/,
    );
  });
});

describe('markdownCode', () => {
  it('fences with more backticks than any run inside and escapes pipes', () => {
    expect(markdownCode('a|b')).toBe('`a\\|b`');
    expect(markdownCode('x `y` z')).toBe('``x `y` z``');
    expect(markdownCode('`edge')).toBe('`` `edge ``');
    expect(markdownCode('two\nlines')).toBe('`two lines`');
  });

  it('always gives one line, no bare pipe, and a fence longer than any backtick run', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (text) => {
        const code = markdownCode(text);
        expect(code).not.toMatch(/[\r\n]/);
        expect(code).not.toMatch(/(?<!\\)\|/);
        const fence = /^`+/.exec(code)![0];
        expect(code.endsWith(fence)).toBe(true);
        const inner = code.slice(fence.length, code.length - fence.length);
        for (const run of inner.match(/`+/g) ?? []) expect(run.length).not.toBe(fence.length);
        expect(Math.max(0, ...(inner.match(/`+/g) ?? []).map((run) => run.length))).toBeLessThan(
          fence.length,
        );
      }),
      { numRuns: propertyRuns(300) },
    );
  });
});
