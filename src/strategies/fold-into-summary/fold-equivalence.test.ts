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
  '0.05': { result: '04f3d69d6e58d265728b4f20dc6637d8', archive: '479cf86852100b1a4670db4d61327498' },
  '0.1': { result: 'edd8debce3f533302e0ffff514e0edd5', archive: '84a84adc1d5dbccc541ed4a6ebd1acba' },
  '0.15': { result: 'ffe08ca6104b817f7c43df1ccaecbbcb', archive: '58888db7d32b54d5c7caab59c30ed5f8' },
  '0.2': { result: 'e3ea1538cd82c48caf51283b6efc5807', archive: 'ae228700daa3c810ec9b1c74b8c0de0b' },
  '0.3': { result: '42205cca23fc25ab64caaf13e3e1cf27', archive: '9ec7ac2869bf874a3c562d42eb991843' },
};

const sessionGolden: Record<string, { result: string; archive: string }> = {
  'cc-native-json__attio-mcp-server__3954325b.json': {
    result: '7db1cc3cf7f69837b0f8c4cfefa73db7',
    archive: 'ef821dfbda833a37294bc82889e2396e',
  },
  'mini-swe-agent__django__django-16263.traj.json': {
    result: '2624b2b0d7a76ff47dc51ff2577e80b6',
    archive: '58a1330ef3c3dd8f0adeab87cb13ee89',
  },
  'cc-native-json__dmux__eef6c282.json': {
    result: 'ac341700429c0f414c1b494f247b1436',
    archive: '569ad3e949c4f2d63c656c4de2c500de',
  },
  'openhands-msgs__mui__material-ui-30768.json': {
    result: '42d1cb40a6e80034756496524b31f139',
    archive: 'f5fb277eef51430a69f969787aa631f0',
  },
  'specstory-cursor__minsky__2025-04-26_20-30-setting-up-minsky-cli-with-bun.md': {
    result: '962e8b03a3fa82ebea437306ad3b3878',
    archive: '8c8919c0fd79551a2d54e689e6a96ffb',
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
