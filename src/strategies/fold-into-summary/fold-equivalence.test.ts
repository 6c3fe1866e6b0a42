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
  '0.05': { result: '638d9e1e8866695bda8273e7a9eb4c6a', archive: 'db26927032cdff6227d4da2a6eaa5f27' },
  '0.1': { result: 'cd7f8a3553231f8c95daa01d815efeee', archive: '7b9cb9353b68e5016ac2505536ee5ad7' },
  '0.15': { result: '483a0ae06f2ccae3b18d5ddd4e320a21', archive: '5ff05681bdd52696c57ce0b0d081719f' },
  '0.2': { result: '8a34eb73c598316deee5bf9c3c538874', archive: '29e7d7f4c7fdb1236a4cbd2cd6b20ff9' },
  '0.3': { result: '2c6b02b4bf4065cc8825eb22e72f7701', archive: '8bb9072e0f118c33a07ab1f51aaa3330' },
};

const sessionGolden: Record<string, { result: string; archive: string }> = {
  'cc-native-json__attio-mcp-server__3954325b.json': {
    result: 'fa3bbf90ad0004ae253822e8c9a7511c',
    archive: '6cc53d7088ba92fd445268560ca101c2',
  },
  'mini-swe-agent__django__django-16263.traj.json': {
    result: 'bbe5ed92fa9c6d0b352797655800b43e',
    archive: 'f7728f2bcf1c35a1df83b57b9723a289',
  },
  'cc-native-json__dmux__eef6c282.json': {
    result: '1e1fea91f1af4e56d7fde4c3ff470e7d',
    archive: '571d87fd603814dd7ffe9587d232b310',
  },
  'openhands-msgs__mui__material-ui-30768.json': {
    result: 'ce38f6047be6a460fd3ca94d76066dbe',
    archive: '96e0410e0e0a02cfbc9c5d51b7c7343f',
  },
  'specstory-cursor__minsky__2025-04-26_20-30-setting-up-minsky-cli-with-bun.md': {
    result: '344c09d7d451e5c2a18809039edfa0a3',
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
