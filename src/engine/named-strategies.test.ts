import { describe, expect, it } from 'vitest';
import { isAsyncStrategy } from '../strategies/strategy.js';
import { createScriptedLlmClient } from '../testing/scripted-llm-client.js';
import {
  defaultLlmStrategyNames,
  defaultStrategies,
  defaultStrategyNames,
  llmStrategyNames,
  strategiesByName,
  strategyNames,
} from './named-strategies.js';

describe('strategiesByName', () => {
  it('builds the named strategies in order, with default standing for the default pipeline', () => {
    expect(strategiesByName(['deduplicate', 'strip-reasoning']).map((strategy) => strategy.name)).toEqual([
      'deduplicate',
      'strip-reasoning',
    ]);
    expect(strategiesByName(['default']).map((strategy) => strategy.name)).toEqual([...defaultStrategyNames]);
    expect(defaultStrategies().map((strategy) => strategy.name)).toEqual([...defaultStrategyNames]);
    // Every name builds a strategy that calls itself by that name.
    for (const name of strategyNames) expect(strategiesByName([name])[0]?.name).toBe(name);
  });

  it('rejects unknown names and empty lists naming the option', () => {
    expect(() => strategiesByName(['stub'], '--strategy')).toThrow(
      expect.objectContaining({
        code: 'invalid-argument',
        message: expect.stringMatching(/^--strategy: unknown strategy "stub"/),
      }),
    );
    expect(() => strategiesByName([])).toThrow(expect.objectContaining({ code: 'invalid-argument' }));
    expect(() => strategiesByName(['__proto__'])).toThrow(
      expect.objectContaining({ code: 'invalid-argument' }),
    );
  });

  it('builds the LLM strategies only with an LLM, and with one the default pipeline folds with llm-anchored', () => {
    const llm = { client: createScriptedLlmClient({ script: [] }), timeoutMs: 5000 };
    expect(llmStrategyNames).toEqual(['llm-summarize', 'llm-progressive', 'llm-anchored']);
    for (const name of llmStrategyNames) {
      const [strategy] = strategiesByName([name], '--strategy', { llm });
      expect(strategy?.name).toBe(name);
      expect(strategy !== undefined && isAsyncStrategy(strategy)).toBe(true);
      expect(() => strategiesByName([name], '--strategy')).toThrow(
        expect.objectContaining({
          code: 'invalid-argument',
          option: '--strategy',
          message: `--strategy: ${name} needs an LLM: pass --llm <spec> (or set PRECIS_LLM)`,
        }),
      );
    }
    expect(() => strategiesByName(['llm-anchored'])).toThrow(
      /strategies: llm-anchored needs an LLM: pass the llm option/,
    );
    const withLlm = defaultStrategies({ llm }).map((strategy) => strategy.name);
    expect(withLlm).toEqual([...defaultLlmStrategyNames]);
    expect(withLlm).toContain('llm-anchored');
    expect(withLlm).not.toContain('fold-into-summary');
    expect(withLlm.filter((name) => name !== 'llm-anchored')).toEqual(
      defaultStrategyNames.filter((name) => name !== 'fold-into-summary'),
    );
    expect(
      strategiesByName(['default', 'drop-oldest-turns'], 'strategies', { llm }).map((s) => s.name),
    ).toEqual([...defaultLlmStrategyNames, 'drop-oldest-turns']);
    // Without an LLM nothing changes: the deterministic pipeline, synchronous strategies only.
    expect(defaultStrategies().some((strategy) => isAsyncStrategy(strategy))).toBe(false);
    expect(() => strategiesByName(['default'], 'strategies', { llm: null as never })).toThrow(/^llm: /);
  });
});
