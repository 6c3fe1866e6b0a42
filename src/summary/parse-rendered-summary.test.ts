import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { propertyRuns } from '../../test/support/property-runs.js';
import { type AnchoredSummary, emptyAnchoredSummary } from './anchored-summary.js';
import { parseRenderedSummary } from './parse-rendered-summary.js';
import { renderAnchoredSummary } from './render-anchored-summary.js';

/** A record with something in every section, as a fold writes one. */
function fullRecord(): AnchoredSummary {
  return {
    ...emptyAnchoredSummary(),
    messageCount: 42,
    intent: 'Fix the flaky `retry()` in src/net.ts.\n\nSteps:\n1. run `npm test`',
    constraints: ['Do not touch the public API.'],
    files: [
      { path: 'src/net.ts', status: 'modified', detail: 'edit +3/-1 (retry)' },
      { path: 'odd`name.md', status: 'read' },
    ],
    locations: ['src/net.ts:32', 'src/net.ts:40-44'],
    definitions: ['export function retry(times: number): Promise<void> (src/net.ts:32)'],
    decisions: ['Use exponential backoff because the server rate-limits bursts.'],
    errors: ['`TypeError: x is undefined` (from npm test, 2×)'],
    failedApproaches: ['A fixed 100 ms delay still raced.'],
    commands: ['`npm test` → failed (exit 1), 2 runs'],
    changes: ['  await sleep(2 ** attempt * 100);', 'if (attempt > times) {\n  throw error;\n}'],
    replacedCode: ['await sleep(100);'],
    scripts: ['node repro.js'],
    results: ['Tests: 1 failed, 41 passed'],
    currentState: ['Last step: rerunning the suite'],
    tasks: [
      { text: 'make retry wait', done: false },
      { text: 'reproduce the flake', done: true },
    ],
    nextSteps: ['Run the suite three times.'],
    excerpts: ['src/net.ts:32: export function retry(times: number) {'],
    handles: ['h-0123456789abcdef0123', 'h-89abcdef0123456789ab'],
  };
}

describe('parseRenderedSummary', () => {
  it('reads back every section of a rendered record', () => {
    const record = fullRecord();
    expect(parseRenderedSummary(renderAnchoredSummary(record))).toEqual(record);
  });

  it('reads an intent that has markdown headings of its own (an issue template) up to the first real section', () => {
    const record: AnchoredSummary = {
      ...emptyAnchoredSummary(),
      messageCount: 3,
      intent: '# Bug Report\r\n\r\n## Bug Description\r\nSaving fails.\n\n## Files\nnone attached',
      files: [{ path: 'a.ts', status: 'read' }],
      handles: ['h-00aa'],
    };
    expect(parseRenderedSummary(renderAnchoredSummary(record))).toEqual(record);
  });

  it('reads no intent from a section that shows none, so a merge can take the task', () => {
    const record: AnchoredSummary = {
      ...emptyAnchoredSummary(),
      messageCount: 1,
      intent: ' ',
      decisions: ['d'],
    };
    expect(renderAnchoredSummary(record)).toContain('## Session intent\n\n\n## Decisions');
    expect(parseRenderedSummary(renderAnchoredSummary(record))).toEqual({ ...record, intent: undefined });
  });

  it('leaves out the closing line of a capped rendering and reads what it shows', () => {
    // Every section but the excerpts fits the cap whole (the archived handles too, which the header also lists).
    const record = {
      ...fullRecord(),
      replacedCode: [],
      excerpts: Array.from({ length: 60 }, (_, index) => `line ${index} of src/x.ts`),
    };
    const capped = renderAnchoredSummary(record, { maxTokens: 400 });
    expect(capped).toMatch(/\n\nIn the archive, not shown: .*\.$/);
    const parsed = parseRenderedSummary(capped)!;
    expect(parsed.messageCount).toBe(42);
    expect(parsed.files.map((file) => file.path)).toEqual(['src/net.ts', 'odd`name.md']);
    // What the capped text shows, it shows again from the record read back.
    expect(renderAnchoredSummary(parsed)).toBe(capped.replace(/\n\nIn the archive, not shown: [^\n]*$/, ''));
  });

  it('takes the handles the header names when no section lists them (an archived index)', () => {
    const record = { ...fullRecord(), handles: ['h-aa', 'h-bb'] };
    const text = renderAnchoredSummary(record, { indexHandle: 'h-1dec5' });
    expect(text.split('\n')[0]).toBe('[precis summary of 42 earlier messages — archived: h-1dec5]');
    expect(parseRenderedSummary(text)?.handles).toEqual(['h-1dec5']);
    const headerOnly = '[precis summary of 1 earlier message — archived: h-aa, h-bb, h-cc, …]';
    expect(parseRenderedSummary(headerOnly)).toEqual({
      ...emptyAnchoredSummary(),
      messageCount: 1,
      handles: ['h-aa', 'h-bb', 'h-cc'],
    });
  });

  it('writes code written back as changes, code replaced as replaced code and sought excerpts as excerpts', () => {
    const record: AnchoredSummary = {
      ...emptyAnchoredSummary(),
      messageCount: 2,
      changes: ['x = 1'],
      createdCode: ['y = 2'],
      replacedCode: ['x = 0'],
      soughtExcerpts: ['def f():'],
      excerpts: ['class C:'],
    };
    const parsed = parseRenderedSummary(renderAnchoredSummary(record))!;
    expect(parsed.changes).toEqual(['x = 1', 'y = 2']);
    expect(parsed.createdCode).toEqual([]);
    expect(parsed.replacedCode).toEqual(['x = 0']);
    expect(parsed.excerpts).toEqual(['def f():', 'class C:']);
    expect(renderAnchoredSummary(parsed)).toBe(renderAnchoredSummary(record));
  });

  it('is undefined for text that is not a rendered summary', () => {
    for (const text of [
      '',
      'Here is a summary of what we did.',
      '[precis summary of many earlier messages]',
      '[precis summary of 3 earlier messages]\n## Files\n- `a` read',
      '[precis summary of 3 earlier messages]\n\n## Files\n- `a` read\nstray prose',
      '[precis summary of 3 earlier messages]\n\n## Decisions\n- d\n\n## Files\n- `a` read',
      '[precis summary of 3 earlier messages]\n\n## Files\n- a.ts read',
      '[precis summary of 3 earlier messages]\n\n## Open tasks / blockers\n- do it',
      '[precis summary of 3 earlier messages]\n\n## Archived\nnot-a-handle',
      '[10 earlier messages archived: h-aa]',
    ])
      expect(parseRenderedSummary(text), text).toBeUndefined();
  });

  it('reads back what it renders, for any record (property)', () => {
    const line = fc.string({ maxLength: 24 }).filter((text) => !text.includes('\n') && !text.includes('#'));
    const item = fc.array(line, { minLength: 1, maxLength: 3 }).map((lines) => lines.join('\n'));
    const items = fc.array(item, { maxLength: 4 });
    const handle = fc.stringMatching(/^h-[0-9a-f]{4,20}$/);
    const record = fc.record({
      messageCount: fc.nat({ max: 500 }),
      intent: fc.option(item, { nil: undefined }),
      constraints: items,
      files: fc.array(
        fc.record(
          {
            path: line.filter((text) => text.trim() !== ''),
            status: fc.constantFrom('read', 'modified', 'created', 'deleted', 'mentioned', 'read failed'),
            detail: line,
          },
          { requiredKeys: ['path', 'status'] },
        ),
        { maxLength: 4 },
      ),
      locations: fc.array(
        line.filter((text) => text.trim() !== ''),
        { maxLength: 3 },
      ),
      decisions: items,
      errors: items,
      commands: items,
      changes: items,
      replacedCode: items,
      results: items,
      tasks: fc.array(fc.record({ text: line, done: fc.boolean() }), { maxLength: 3 }),
      excerpts: items,
      handles: fc.array(handle, { maxLength: 10 }),
    });
    fc.assert(
      fc.property(
        record,
        fc.option(fc.integer({ min: 60, max: 2000 }), { nil: undefined }),
        (fields, cap) => {
          const { intent, ...rest } = fields;
          const summary: AnchoredSummary = {
            ...emptyAnchoredSummary(),
            ...rest,
            ...(intent === undefined ? {} : { intent }),
          };
          const text = renderAnchoredSummary(summary, cap === undefined ? {} : { maxTokens: cap });
          const parsed = parseRenderedSummary(text);
          expect(parsed).toBeDefined();
          expect(parsed!.messageCount).toBe(summary.messageCount);
          expect(summary.handles).toEqual(expect.arrayContaining(parsed!.handles));
          // What the text shows, the record read back shows again: the same sections and lines (the header and
          // the handles aside: a capped text may name only the first three; an empty section aside: it shows no
          // line; whitespace ending the part of the intent shown aside: the intent is trimmed).
          const shown = (value: string) =>
            value
              .replace(/\n\nIn the archive, not shown: [^\n]*$/, '')
              .replace(/^[^\n]*/, '')
              .replace(/\n\n## Archived\n[\s\S]*$/, '')
              .replace(/\n\n## [^\n]+\n(?=\n\n|$)/g, '')
              .replace(/\s+(?=\n\n## )/g, '')
              .trimEnd();
          expect(shown(renderAnchoredSummary(parsed!))).toBe(shown(text));
        },
      ),
      { numRuns: propertyRuns(200) },
    );
  });
});
