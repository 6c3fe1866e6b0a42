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
// actions, warnings or archive. Taken from the unoptimised code, then regenerated once for a deliberate change
// (the summary's "Command results" section, and the summary using room a drop freed beyond its share; the archive
// digests did not move). A change that is meant to alter
// output regenerates them from `compactDigests`; a refactor must leave them alone. Only digests are stored here,
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
  '0.05': { result: '415a3b914cdc7b74fe2ca3fbe8f2e153', archive: 'abb116848d48cb7a95bd439c92a5fd56' },
  '0.1': { result: 'af1cda88e41db33691df4b92edc38f21', archive: 'd3993449466f906b37cc49c9e63d8c6a' },
  '0.15': { result: 'b27adda36f77112a0ea4abee4a30326c', archive: 'd3993449466f906b37cc49c9e63d8c6a' },
  '0.2': { result: 'b5a5f652771d0099954670ab91534b66', archive: '8f4451d0b2b1b0f548f271358ee60b9e' },
  '0.3': { result: '90b684b91b8e067580890e5c5b40f068', archive: '2979830700037a0976744d36e96b2eba' },
};

const sessionGolden: Record<string, { result: string; archive: string }> = {
  'cc-native-json__attio-mcp-server__3954325b.json': {
    result: '4fc5db3042e411f1ff7d7a0730312ad7',
    archive: '4df9312e3182da2dd8811d1cc97e8843',
  },
  'mini-swe-agent__django__django-16263.traj.json': {
    result: '0d80926a70e981ee6ea0b70275fd4328',
    archive: '614b215fa8cce0cb730752d5b3eeef11',
  },
  'cc-native-json__dmux__eef6c282.json': {
    result: 'af3280189b53d0a42cda60e2d93a2bab',
    archive: '8acbb826481d9e4c8fd1726031160258',
  },
  'openhands-msgs__mui__material-ui-30768.json': {
    result: '7afe55b2433bb8ddf484ef0362371e2a',
    archive: 'ccb99fb32c5f5cfb960ee60f74990c25',
  },
  'specstory-cursor__minsky__2025-04-26_20-30-setting-up-minsky-cli-with-bun.md': {
    result: 'a4209f03cb2251cf8c1daf4d0be7f37f',
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
