import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildLedger } from '../src/ledger/create-ledger.js';
import { renderLedger } from '../src/ledger/render-ledger.js';
import { assignIds } from '../src/messages/ids.js';
import { importTranscript } from '../src/transcripts/import-transcript.js';
import { hasSharedSessions, loadProbes, sessionsDir } from './support/probe-facts.js';

const sessions = hasSharedSessions
  ? readdirSync(sessionsDir)
      .filter((name) => name !== 'MANIFEST.md')
      .sort()
  : [];

/** A fact that names a file: `src/x.ts`, `reproduce.py`, `src/x.ts:32`, `a.ts:362-364` (the line part dropped). */
function pathOf(fact: string): string | undefined {
  const match = /^([\w.~/@-]+?)(?::\d+(?:-\d+)?)?$/.exec(fact.trim());
  if (match === null) return undefined;
  const path = match[1]!;
  return /\/|\.[A-Za-z]{1,6}$/.test(path) && !/^\d/.test(path) ? path : undefined;
}

/**
 * Path facts the ledger cannot see: named only in prose or in a sub-agent's report, never in a tool call or a
 * tool result it reads (SpecStory keeps no edit paths or outputs; `structure-diffs` comes from a Task report).
 */
const outOfReach = new Set([
  'AddTodoForm.tsx',
  'TodoApp.tsx',
  'useSimpleTodos.ts',
  'convex/seeding.ts',
  'src/commands/git/branch.ts',
  'session-db.json',
]);

const totals = { facts: 0, found: 0 };

describe.skipIf(!hasSharedSessions)('the ledger of the real sessions', () => {
  it.each(sessions)('%s: the rendered ledger names the artifact probes’ paths', (session) => {
    const text = readFileSync(join(sessionsDir, session), 'utf8');
    const messages = assignIds(importTranscript(text, { file: session }).conversation.messages);
    const rendered = renderLedger(buildLedger(messages));
    const paths = loadProbes(session)
      .filter((probe) => probe.type === 'artifact')
      .flatMap((probe) => probe.facts)
      .map(pathOf)
      .filter((path): path is string => path !== undefined);
    const missing = paths.filter((path) => !rendered.includes(path));
    totals.facts += paths.length;
    totals.found += paths.length - missing.length;
    if (missing.length > 0) console.log(`${session}: not in the ledger: ${missing.join(', ')}`);
    expect(missing.filter((path) => !outOfReach.has(path))).toEqual([]);
  });

  it('reports the total', () => {
    console.log(
      `ledger-sessions: ${totals.found} of ${totals.facts} artifact path facts in the rendered ledgers`,
    );
    expect(totals.found).toBeGreaterThan(0);
  });
});
