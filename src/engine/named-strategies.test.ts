import { describe, expect, it } from 'vitest';
import {
  defaultStrategies,
  defaultStrategyNames,
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
});
