import { expect } from 'vitest';
import type { Message } from '../../src/messages/types.js';
import { repairMessages, validateMessages } from '../../src/messages/validate/index.js';
import {
  createImportContext,
  type ImportContext,
  type ImportOptions,
  type TranscriptImporter,
} from '../../src/transcripts/transcript-importer.js';

/** Runs one importer on a text with a fresh context; the messages and the context come back alongside. */
export function importWith(importer: TranscriptImporter, text: string, options: ImportOptions = {}) {
  const context = createImportContext(options);
  const result = importer.parse(text, context);
  return { ...result, context, messages: result.conversation.messages };
}

export function expectValidForOpenAI(messages: readonly Message[]): void {
  expect(validateMessages(messages, { provider: 'openai' })).toStrictEqual({ valid: true, issues: [] });
}

/** Valid as imported: repair would change nothing. */
export function expectValidWithoutRepairs(messages: readonly Message[]): void {
  expect(validateMessages(messages, { provider: 'openai' }).issues).toEqual([]);
  expect(repairMessages(messages, { provider: 'openai' }).repairs).toEqual([]);
}

/** Every record read was either used or skipped for a counted reason. */
export function expectStatsAddUp(context: ImportContext): void {
  const skipped = Object.values(context.stats.skipped).reduce((sum, count) => sum + count, 0);
  expect(context.stats.recordsUsed + skipped).toBe(context.stats.recordsRead);
}
