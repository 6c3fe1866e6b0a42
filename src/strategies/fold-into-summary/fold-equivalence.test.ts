import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type ArchiveEntry, type ArchiveStore, createMemoryArchive } from '../../archive/archive-store.js';
import { compact } from '../../engine/compact.js';
import { stableStringify } from '../../internal/stable-json.js';
import { createTokenAccountant } from '../../tokens/index.js';
import { importTranscript } from '../../transcripts/import-transcript.js';

// Golden digests of `compact()` outputs: fold-into-summary's caches must not change a byte of the messages,
// actions, warnings or archive. Taken from the unoptimised code, then regenerated for deliberate changes (the
// summary's "Command results" section; the summary using room a drop freed beyond its share; tally lines and git
// state among command results, sub-agent reports read as prose; the stub-demonstrations step in the report, and
// OpenHands' example archived). The archive digests moved only for the example's archiving. A change that
// is meant to alter output regenerates them from `compactDigests`; a refactor must leave them alone. Only digests
// are stored here, never the shared sessions' content.

const repositoryRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const examplePath = join(repositoryRoot, 'examples', 'transcripts', 'fix-retry-backoff.openai.json');
const sessionsDir = join(repositoryRoot, '..', 'shared', 'data', 'sessions');
const hasSharedSessions = existsSync(sessionsDir);

/** An archive that remembers every entry put into it, so the whole archive can be compared. */
function recordingArchive(): ArchiveStore & { entries: Map<string, ArchiveEntry> } {
  const inner = createMemoryArchive();
  const entries = new Map<string, ArchiveEntry>();
  return {
    entries,
    put(entry) {
      const handle = inner.put(entry);
      if (!entries.has(handle)) entries.set(handle, { ...entry, handle });
      return handle;
    },
    get: (handle) => inner.get(handle),
    has: (handle) => inner.has(handle),
  };
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}

/** Digests of the result (messages, report with actions, warnings) and of the archive (handles and contents). */
function compactDigests(text: string, file: string, share: number): { result: string; archive: string } {
  const { conversation } = importTranscript(text, { file });
  const total = createTokenAccountant().countConversation(conversation).totalTokens;
  const archive = recordingArchive();
  const result = compact(conversation, { budgetTokens: Math.floor(total * share), archive });
  const entries = [...archive.entries.values()].sort((a, b) => (a.handle < b.handle ? -1 : 1));
  return {
    result: digest(JSON.stringify(result)),
    archive: digest(stableStringify(entries)),
  };
}

const exampleGolden: Record<string, { result: string; archive: string }> = {
  '0.05': { result: '732e8a38da5a55196587336a2b85a01f', archive: 'c9eb9a19eb2e49f41ef6a0c69a325af8' },
  '0.1': { result: '05b67650ef7f696cea2ff6b8675206af', archive: 'de2b7f01e7eb8b3d5b15d484b732a167' },
  '0.15': { result: 'f0d9cd8300bcd786401752f2289c7097', archive: 'd3993449466f906b37cc49c9e63d8c6a' },
  '0.2': { result: 'd7ad378256e3bb92514cd1345965e898', archive: '8f4451d0b2b1b0f548f271358ee60b9e' },
  '0.3': { result: '9631875c106823029cffb8575ced7820', archive: '2979830700037a0976744d36e96b2eba' },
};

const sessionGolden: Record<string, { result: string; archive: string }> = {
  'cc-native-json__attio-mcp-server__3954325b.json': {
    result: '70cd3856e0f2cfecd4140ac6ddb2ee82',
    archive: '400e44efefafd58d80f67db19623dcda',
  },
  'mini-swe-agent__django__django-16263.traj.json': {
    result: 'd59d622eb1a89df53c3d69af01e8dc6e',
    archive: '614b215fa8cce0cb730752d5b3eeef11',
  },
  'cc-native-json__dmux__eef6c282.json': {
    result: 'ac29e5cc086a4b1262b27076a18e8db2',
    archive: '074e5824a67c5cfb7d0c7f1bab3c5a3d',
  },
  'openhands-msgs__mui__material-ui-30768.json': {
    result: '72e78a54b43f598d224db446c870b792',
    archive: '06766757b93e89138a7e3cda4aa80d28',
  },
  'specstory-cursor__minsky__2025-04-26_20-30-setting-up-minsky-cli-with-bun.md': {
    result: 'f9c6004f0f0a042c8e9a7b8f61e1ee62',
    archive: '5c3941a749f9150472e1c72079f5f601',
  },
};

describe('fold-into-summary equivalence with the unoptimised code', () => {
  const text = readFileSync(examplePath, 'utf8');
  it.each(Object.keys(exampleGolden))('the example transcript at %s of its tokens', (share) => {
    expect(compactDigests(text, 'fix-retry-backoff.openai.json', Number(share))).toEqual(
      exampleGolden[share],
    );
  });
  it('covers several budgets', () => {
    expect(Object.keys(exampleGolden).length).toBeGreaterThanOrEqual(4);
  });
});

describe.skipIf(!hasSharedSessions)('fold-into-summary equivalence on the shared sessions at 10%', () => {
  it.each(Object.keys(sessionGolden))('%s', (file) => {
    const text = readFileSync(join(sessionsDir, file), 'utf8');
    expect(compactDigests(text, file, 0.1)).toEqual(sessionGolden[file]);
  });
});
