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
  '0.05': { result: 'deb8115c25810deb9bc8bb08f7984dac', archive: 'db26927032cdff6227d4da2a6eaa5f27' },
  '0.1': { result: '5b71c25e7b59c29cfefac209048d1c37', archive: '7b9cb9353b68e5016ac2505536ee5ad7' },
  '0.15': { result: 'e0d37099e66b3ee608228c6ffbc90e07', archive: '5ff05681bdd52696c57ce0b0d081719f' },
  '0.2': { result: 'a8cd24fc4f3455a68fbf7e9f020c7cbc', archive: '29e7d7f4c7fdb1236a4cbd2cd6b20ff9' },
  '0.3': { result: 'd15fa04653ba260a6e1b86b02e99ea13', archive: '8bb9072e0f118c33a07ab1f51aaa3330' },
};

const sessionGolden: Record<string, { result: string; archive: string }> = {
  'cc-native-json__attio-mcp-server__3954325b.json': {
    result: '1566830abd3d3944091f3214ad9531e5',
    archive: '6cc53d7088ba92fd445268560ca101c2',
  },
  'mini-swe-agent__django__django-16263.traj.json': {
    result: 'f8d9382617f1b4d29cf3ecb3f734ecd4',
    archive: 'f7728f2bcf1c35a1df83b57b9723a289',
  },
  'cc-native-json__dmux__eef6c282.json': {
    result: '5b5a03f645ecd9e6bd9e28fe7c21d0f4',
    archive: 'bf95c97a6e720453a8d63a3ba1724154',
  },
  'openhands-msgs__mui__material-ui-30768.json': {
    result: 'f84c006119adb87d2a272f1e032bd739',
    archive: '96e0410e0e0a02cfbc9c5d51b7c7343f',
  },
  'specstory-cursor__minsky__2025-04-26_20-30-setting-up-minsky-cli-with-bun.md': {
    result: '8731dddf13f381b6a4744e282c328665',
    archive: '55129dd7fae1d04b0e39b2104ca42d22',
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
