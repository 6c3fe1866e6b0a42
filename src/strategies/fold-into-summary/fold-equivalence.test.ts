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
// actions, warnings or archive. Taken from the unoptimised code, then regenerated for each deliberate change of
// output (the commit that regenerates them says what changed and why). A change that is meant to alter output
// regenerates them from `compactDigests`; a refactor must leave them alone. Only digests are stored here, never
// the shared sessions' content.

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
  '0.05': { result: '6499653c27b60bd19eb14da09de6bb72', archive: 'e464e599f970f427837e6c57fa5bc806' },
  '0.1': { result: '047402f521fbf9454f446fcebd0d21a3', archive: '82c72aab5f2cf85a51ba2769dd4b15f2' },
  '0.15': { result: '4131f7c5a6422591e47487b0c1554e39', archive: '7d0cfb833c681c886ff4ffb49da37093' },
  '0.2': { result: '32cc0b0a33562a441817b4fb64487bcd', archive: '3980bc304e027285c05ca834bdb7f8de' },
  '0.3': { result: '52989e474e9c77ce38e519a6bfa5034e', archive: '821c9de6244946d48ea9138adc016ba8' },
};

const sessionGolden: Record<string, { result: string; archive: string }> = {
  'cc-native-json__attio-mcp-server__3954325b.json': {
    result: '2de8d53a4f58f0596f1de174a13dd6e7',
    archive: '721acec6e79d9d0c321ce8fb35951675',
  },
  'mini-swe-agent__django__django-16263.traj.json': {
    result: '623a29636aa4e1da7a03d582bca6666f',
    archive: 'e95228a1a37712013ad1079b331dbcb6',
  },
  'cc-native-json__dmux__eef6c282.json': {
    result: 'afaaa78994a142cab6470c1548db0979',
    archive: 'f91c75d3a7e99295cebc8854526cdba6',
  },
  'openhands-msgs__mui__material-ui-30768.json': {
    result: '4be1a2dc3dcecee9ecb69da8429ffd31',
    archive: 'ac2fe059c1635b05e82086f447b4f232',
  },
  'specstory-cursor__minsky__2025-04-26_20-30-setting-up-minsky-cli-with-bun.md': {
    result: '3a32c931caf4453b1140cf5684f15c7d',
    archive: 'a743495e005d0fd518ca02d2b7903e4b',
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
