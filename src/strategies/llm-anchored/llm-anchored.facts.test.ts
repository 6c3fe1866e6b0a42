import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compact, compactAsync } from '../../engine/compact.js';
import { defaultStrategies } from '../../engine/named-strategies.js';
import { renderForProbes } from '../../eval/fact-score.js';
import { buildLedger } from '../../ledger/index.js';
import { fromOpenAI } from '../../messages/convert/openai.js';
import { assignIds } from '../../messages/ids.js';
import { createScriptedLlmClient } from '../../testing/scripted-llm-client.js';
import { createTokenAccountant } from '../../tokens/index.js';
import { llmAnchored } from './llm-anchored.js';

const examples = new URL('../../../examples/transcripts/', import.meta.url);
const conversation = fromOpenAI(
  JSON.parse(readFileSync(new URL('fix-retry-backoff.openai.json', examples), 'utf8')),
);
const normalise = (text: string) => text.replace(/\s+/g, ' ');

/** What a summarizer might say about any span: plausible prose that names nothing verbatim. */
const prose = JSON.stringify({
  intent: 'Make the retry helper back off correctly.',
  constraints: ['Keep the public API unchanged.'],
  decisions: [{ decision: 'Cap the delay', rationale: 'long waits stalled the tests' }],
  errorsAndFixes: [{ error: 'a test timed out', fix: 'capped the delay' }],
  failedApproaches: ['Retrying without a cap did not help.'],
  currentState: ['The retry tests pass.'],
  tasks: [{ text: 'Run the whole suite', done: false }],
  nextSteps: ['Open the pull request.'],
});

describe('llmAnchored on the example session (scripted LLM)', () => {
  // Ledger facts only: the LLM's prose takes its room from code lines, results and excerpts by design (else it
  // would never show at tight budgets), so probe facts living in those may trade places with the prose.
  it('never loses a ledger fact (file, command, error) that the deterministic fold keeps', async () => {
    const accountant = createTokenAccountant();
    const total = accountant.countConversation(conversation).totalTokens;
    // Ledger facts: the paths, commands and errors the session produced, verbatim.
    const ledger = buildLedger(assignIds(conversation.messages));
    const ledgerFacts = [
      ...ledger.files.map((file) => file.path),
      ...ledger.commands.map((command) => command.command.split('\n')[0]!),
      ...ledger.errors.map((error) => error.message),
    ].map(normalise);
    for (const ratio of [0.05, 0.1, 0.2]) {
      const budgetTokens = Math.floor(total * ratio);
      const deterministic = normalise(
        renderForProbes(compact(conversation, { budgetTokens, accountant }).messages),
      );
      const client = createScriptedLlmClient({ script: Array.from({ length: 20 }, () => prose) });
      const strategies = defaultStrategies().map((strategy) =>
        strategy.name === 'fold-into-summary' ? llmAnchored({ client }) : strategy,
      );
      const withLlm = await compactAsync(conversation, { budgetTokens, accountant, strategies });
      expect(withLlm.report.tokensAfter).toBeLessThanOrEqual(budgetTokens);
      const text = normalise(renderForProbes(withLlm.messages));
      const kept = ledgerFacts.filter((fact) => deterministic.includes(fact));
      expect(kept.length).toBeGreaterThan(0);
      expect(kept.filter((fact) => !text.includes(fact))).toEqual([]);
    }
  });
});
