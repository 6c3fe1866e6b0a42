import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fromOpenAI, toOpenAI } from '../src/messages/convert/openai.js';
import { repairMessages, validateMessages } from '../src/messages/validate/index.js';
import { importTranscript } from '../src/transcripts/import-transcript.js';
import type { TranscriptFormat } from '../src/transcripts/transcript-importer.js';
import { factSurvival, hasSharedSessions, loadProbes, sessionsDir } from './support/probe-facts.js';

/** The format each shared session is in, from its file-name prefix (see MANIFEST.md). */
const formatByPrefix: Record<string, TranscriptFormat> = {
  'cc-native-json': 'claude-code',
  'cc-native-jsonl': 'claude-code',
  'mini-swe-agent': 'mini-swe-agent',
  'swe-agent-traj': 'swe-agent',
  'openhands-msgs': 'openhands',
  'specstory-cursor': 'specstory',
  'aider-md': 'aider',
};

const sessions = hasSharedSessions
  ? readdirSync(sessionsDir)
      .filter((name) => name !== 'MANIFEST.md')
      .sort()
  : [];

if (!hasSharedSessions) {
  console.warn('shared-sessions.test: ../shared/data/sessions not found, skipping the real-session checks');
}

// End to end, as `precis convert <session> --to openai` does it: detect, import, repair, convert.
describe.skipIf(!hasSharedSessions)('real sessions in ../shared/data/sessions', () => {
  it.each(sessions)(
    '%s converts to a valid OpenAI conversation keeping >= 98%% of its probe facts',
    (session) => {
      const text = readFileSync(join(sessionsDir, session), 'utf8');
      const imported = importTranscript(text, { file: session });
      expect(imported.format).toBe(formatByPrefix[session.split('__')[0]!]);
      const repaired = repairMessages(imported.conversation.messages, { provider: 'openai' });
      const openAI = toOpenAI({ ...imported.conversation, messages: repaired.messages });
      const roundTripped = fromOpenAI(openAI.messages).messages;
      expect(validateMessages(roundTripped, { provider: 'openai' }).issues).toEqual([]);
      const survival = factSurvival(loadProbes(session), roundTripped);
      expect(survival.missing).toEqual([]);
      expect(survival.kept / survival.facts).toBeGreaterThanOrEqual(0.98);
    },
  );
});
