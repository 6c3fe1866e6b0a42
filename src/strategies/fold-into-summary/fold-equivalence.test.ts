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
  '0.05': { result: '38d2c3b76e50740d5c25edf1c2d620d8', archive: '96a9ed0ead5f3b005a3175b3d344b713' },
  '0.1': { result: '1ac65a09cb489ebc208793e868cd6f03', archive: '4bfde400bd3a5f3dbb932d8ffb64d59a' },
  '0.15': { result: 'a15b4fec01fcd0fab479818cdd344d5f', archive: '9925290c545b16c915ffe43050535e9b' },
  '0.2': { result: '0f7ed6b2981cf087875708b0b38c442f', archive: '1f737e6335d7e5dbde6fa4aee77aecbc' },
  '0.3': { result: '8d136ed36dba57a074e6d9508afc1620', archive: '01d384770d96644da07e1dceefb5cb94' },
};

const sessionGolden: Record<string, { result: string; archive: string }> = {
  'cc-native-json__attio-mcp-server__3954325b.json': {
    result: '6062e44e7b0afca8b6d150947599e401',
    archive: 'fe9c4a60d5518d7a73222d580501de16',
  },
  'mini-swe-agent__django__django-16263.traj.json': {
    result: 'b2e69a325205d6e7579a677ec2705ebf',
    archive: 'b297ad66413bd9116a1c325880dca576',
  },
  'cc-native-json__dmux__eef6c282.json': {
    result: '9d2dcb42a80d1f3be8ae6c297d6dbc9b',
    archive: '9ccc9990aae89f804f0b0f34f2a7806d',
  },
  'openhands-msgs__mui__material-ui-30768.json': {
    result: '100724e36d8791e70644092f80f06302',
    archive: 'd8d4b6c48b2363837977b969a778383c',
  },
  'specstory-cursor__minsky__2025-04-26_20-30-setting-up-minsky-cli-with-bun.md': {
    result: '0f9fe6ab0c852ca3b60ff055c7a94447',
    archive: 'fa98e6aa2588b8869241e83c3b315b1f',
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
