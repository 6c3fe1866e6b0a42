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

// Golden digests of `compact()` outputs taken from the code before fold-into-summary was optimised: the caches
// it added must not change a byte of the messages, actions, warnings or archive. Only digests are stored here,
// never the shared sessions' content.

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
  '0.05': { result: '62ef74562b93df477445db50285f2f5a', archive: 'abb116848d48cb7a95bd439c92a5fd56' },
  '0.1': { result: 'f6bfd528506cb939beb071ea8c4f3681', archive: 'd3993449466f906b37cc49c9e63d8c6a' },
  '0.15': { result: 'e03e6f8d44da121227abeb7799811709', archive: 'd3993449466f906b37cc49c9e63d8c6a' },
  '0.2': { result: 'd2225426837e675cabefecc956da6cfa', archive: '8f4451d0b2b1b0f548f271358ee60b9e' },
  '0.3': { result: '839c3ad295417c1845ab2547a34b7dc4', archive: '2979830700037a0976744d36e96b2eba' },
};

const sessionGolden: Record<string, { result: string; archive: string }> = {
  'cc-native-json__attio-mcp-server__3954325b.json': {
    result: '857f2d1934f4fabf20c40a1b48a5cb43',
    archive: '4df9312e3182da2dd8811d1cc97e8843',
  },
  'mini-swe-agent__django__django-16263.traj.json': {
    result: 'd7a601de4b08309005d6c36429a0b714',
    archive: '614b215fa8cce0cb730752d5b3eeef11',
  },
  'cc-native-json__dmux__eef6c282.json': {
    result: '8aefd6919c8899c1cd969cd75982c7a8',
    archive: '8acbb826481d9e4c8fd1726031160258',
  },
  'openhands-msgs__mui__material-ui-30768.json': {
    result: '87566c74b6d7b7af2ede22489fd43b15',
    archive: 'ccb99fb32c5f5cfb960ee60f74990c25',
  },
  'specstory-cursor__minsky__2025-04-26_20-30-setting-up-minsky-cli-with-bun.md': {
    result: '14b992f646ca66323516fee6d51a2e42',
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
