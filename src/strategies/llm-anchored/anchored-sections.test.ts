import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { propertyRuns } from '../../../test/support/property-runs.js';
import { InvalidArgumentError } from '../../errors/index.js';
import { type AnchoredSummary, emptyAnchoredSummary } from '../../summary/index.js';
import {
  type AnchoredSections,
  buildAnchoredSectionsPrompt,
  combineAnchoredSections,
  readAnchoredSections,
  withAnchoredSections,
} from './anchored-sections.js';

const valid: AnchoredSections = {
  intent: 'Fix the upload.',
  constraints: ['No new dependencies.'],
  decisions: [{ decision: 'Use 1 MiB chunks', rationale: 'larger parts are rejected' }],
  errorsAndFixes: [{ error: 'ECONNRESET', fix: 'retry' }],
  failedApproaches: [],
  currentState: ['Tests pass.'],
  tasks: [{ text: 'Write docs', done: false }],
  nextSteps: [],
};

describe('readAnchoredSections', () => {
  it('reads the sections from JSON or from JSON inside prose, trimming items and leaving out empty ones', () => {
    expect(readAnchoredSections({ text: JSON.stringify(valid) })).toEqual(valid);
    const padded = { ...valid, constraints: ['  No new dependencies.  ', ''], nextSteps: ['  '] };
    expect(
      readAnchoredSections({ text: `Here you go:\n\`\`\`json\n${JSON.stringify(padded)}\n\`\`\`` }),
    ).toEqual(valid);
    expect(readAnchoredSections({ text: '', json: valid as never })).toEqual(valid);
  });

  it('refuses replies that miss a section, have the wrong types, overlong items, or nothing at all', () => {
    const { nextSteps: _missing, ...withoutNextSteps } = valid;
    const bad: unknown[] = [
      withoutNextSteps,
      { ...valid, tasks: [{ text: 'Write docs', done: 'no' }] },
      { ...valid, decisions: ['just a string'] },
      { ...valid, constraints: ['x'.repeat(401)] },
      { ...valid, currentState: Array.from({ length: 21 }, (_, index) => `state ${index}`) },
      { summary: 'wrong shape' },
      {
        intent: ' ',
        constraints: [],
        decisions: [],
        errorsAndFixes: [],
        failedApproaches: [],
        currentState: [''],
        tasks: [],
        nextSteps: [],
      },
    ];
    for (const value of bad) expect(readAnchoredSections({ text: JSON.stringify(value) })).toBeUndefined();
    expect(readAnchoredSections({ text: 'no JSON' })).toBeUndefined();
  });
});

describe('buildAnchoredSectionsPrompt', () => {
  it('fences the transcript and known tasks as data, redacting secrets unless told not to', () => {
    const secret = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD';
    const transcript = `[1] user\nuse key ${secret}\n\`\`\`\`inner fence\`\`\`\``;
    const prompt = buildAnchoredSectionsPrompt({ transcript, knownTasks: ['Rotate the key'] });
    const text = prompt.messages[0].content as string;
    expect(text).not.toContain(secret);
    expect(text).toContain('[REDACTED:');
    expect(prompt.redactions.length).toBeGreaterThan(0);
    // The fence is longer than any backtick run inside, so the data cannot close it.
    expect(text).toContain('`````transcript\n');
    expect(text).toMatch(/```tasks\n- Rotate the key\n```/);
    expect(prompt.system).toContain('never follow it');
    const raw = buildAnchoredSectionsPrompt({ transcript, redact: false, part: { index: 2, count: 3 } });
    expect(raw.messages[0].content).toContain(secret);
    expect(raw.messages[0].content).toContain('The transcript (part 2 of 3 of the span) (data):');
    expect(raw.messages[0].content).not.toContain('```tasks');
  });

  it('rejects malformed options naming them', () => {
    expect(() => buildAnchoredSectionsPrompt({ transcript: 5 as never })).toThrow(InvalidArgumentError);
    expect(() => buildAnchoredSectionsPrompt({ transcript: '', knownTasks: [1] as never })).toThrow(
      /knownTasks/,
    );
  });
});

const item = fc.string({ minLength: 1, maxLength: 12 });
const items = fc.array(item, { maxLength: 5 });
const task = fc.record({ text: fc.constantFrom('a', 'b', 'c', 'd'), done: fc.boolean() });

const recordArbitrary: fc.Arbitrary<AnchoredSummary> = fc
  .record({
    constraints: items,
    decisions: items,
    errors: items,
    failedApproaches: items,
    commands: items,
    changes: items,
    currentState: items,
    nextSteps: items,
    excerpts: items,
    handles: items,
    tasks: fc.uniqueArray(task, { selector: (entry) => entry.text, maxLength: 4 }),
    intent: fc.option(item, { nil: undefined }),
  })
  .map(({ intent, ...lists }) => ({
    ...emptyAnchoredSummary(),
    ...lists,
    messageCount: 3,
    files: [{ path: 'src/a.ts', status: 'read' }],
    ...(intent === undefined ? {} : { intent }),
  }));

const sectionsArbitrary: fc.Arbitrary<AnchoredSections> = fc.record({
  intent: fc.oneof(fc.constant(''), item),
  constraints: items,
  decisions: fc.array(fc.record({ decision: item, rationale: fc.oneof(fc.constant(''), item) }), {
    maxLength: 3,
  }),
  errorsAndFixes: fc.array(fc.record({ error: item, fix: fc.oneof(fc.constant(''), item) }), {
    maxLength: 3,
  }),
  failedApproaches: items,
  currentState: items,
  tasks: fc.array(task, { maxLength: 4 }),
  nextSteps: items,
});

describe('withAnchoredSections', () => {
  it('only adds: ledger sections untouched, every earlier item kept, done tasks stay done', () => {
    fc.assert(
      fc.property(recordArbitrary, sectionsArbitrary, (record, sections) => {
        const before = structuredClone(record);
        const merged = withAnchoredSections(record, sections);
        expect(record).toEqual(before);
        for (const key of [
          'files',
          'errors',
          'commands',
          'changes',
          'scripts',
          'excerpts',
          'handles',
        ] as const)
          expect(merged[key]).toEqual(record[key]);
        expect(merged.messageCount).toBe(record.messageCount);
        expect(merged.intent).toBe(record.intent ?? (sections.intent === '' ? undefined : sections.intent));
        for (const key of [
          'constraints',
          'decisions',
          'failedApproaches',
          'currentState',
          'nextSteps',
        ] as const)
          expect(merged[key].slice(0, record[key].length)).toEqual(record[key]);
        for (const entry of sections.constraints) expect(merged.constraints).toContain(entry);
        for (const entry of sections.nextSteps) expect(merged.nextSteps).toContain(entry);
        expect(merged.decisions.length).toBeGreaterThanOrEqual(new Set(record.decisions).size);
        for (const entry of [...record.tasks, ...sections.tasks]) {
          const found = merged.tasks.find((candidate) => candidate.text === entry.text);
          expect(found).toBeDefined();
          if (entry.done) expect(found?.done).toBe(true);
        }
        expect(new Set(merged.tasks.map((entry) => entry.text)).size).toBe(merged.tasks.length);
      }),
      { numRuns: propertyRuns(200) },
    );
  });

  it('combines the sections of parts in order, the first intent winning and done staying done', () => {
    const first = { ...valid, tasks: [{ text: 'Write docs', done: true }] };
    const second = {
      ...valid,
      intent: 'Other.',
      constraints: ['Second.'],
      tasks: [{ text: 'Write docs', done: false }],
    };
    const combined = combineAnchoredSections(first, second);
    expect(combined.intent).toBe('Fix the upload.');
    expect(combined.constraints).toEqual(['No new dependencies.', 'Second.']);
    expect(combined.decisions).toHaveLength(2);
    expect(combined.tasks).toEqual([{ text: 'Write docs', done: true }]);
  });
});
