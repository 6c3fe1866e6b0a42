import fc from 'fast-check';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { propertyRuns } from '../../test/support/property-runs.js';
import { InvalidArgumentError } from '../errors/index.js';
import {
  createCalibratedCounter,
  initialCalibrationRatios,
  isCalibratedCounter,
} from './calibrated-counter.js';
import { createO200kCounter } from './o200k-counter.js';

const bare = (text: string) => countTokens(text, { disallowedSpecial: new Set() });
const text = 'The calibrated counter scales exact o200k counts by a learned ratio. '.repeat(20);

describe('createCalibratedCounter', () => {
  it('scales the base count by the ratio and rounds', () => {
    const counter = createCalibratedCounter({ initialRatio: initialCalibrationRatios.anthropic });
    expect(counter.ratio).toBe(1.2);
    expect(counter.count(text)).toBe(Math.round(bare(text) * 1.2));
    expect(counter.encodingName).toBe('o200k_base (calibrated)');
    expect(isCalibratedCounter(counter)).toBe(true);
    expect(isCalibratedCounter(createO200kCounter())).toBe(false);
  });

  it('converges toward the true ratio from observations', () => {
    const counter = createCalibratedCounter({ initialRatio: 1 });
    const trueRatio = 1.37;
    const baseTokens = bare(text);
    let previousError = Math.abs(counter.ratio - trueRatio);
    for (let step = 0; step < 20; step++) {
      const accepted = counter.observe({
        estimatedTokens: counter.count(text),
        reportedTokens: Math.round(baseTokens * trueRatio),
      });
      expect(accepted).toBe(true);
      const error = Math.abs(counter.ratio - trueRatio);
      expect(error).toBeLessThanOrEqual(previousError + 1e-3);
      previousError = error;
    }
    expect(counter.ratio).toBeCloseTo(trueRatio, 2);
    expect(counter.observationCount).toBe(20);
  });

  it('property: converges from any start to any ratio within the clamp', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.6, max: 2.5, noNaN: true }),
        fc.double({ min: 0.6, max: 2.5, noNaN: true }),
        fc.double({ min: 0.2, max: 1, noNaN: true }),
        (initialRatio, trueRatio, smoothing) => {
          const counter = createCalibratedCounter({
            base: { encodingName: 'words', count: () => 10_000 },
            initialRatio,
            smoothing,
          });
          for (let step = 0; step < 60; step++) {
            counter.observe({
              estimatedTokens: counter.count('x'),
              reportedTokens: Math.round(10_000 * trueRatio),
            });
          }
          expect(Math.abs(counter.ratio - trueRatio)).toBeLessThan(0.01);
        },
      ),
      { numRuns: propertyRuns(200) },
    );
  });

  it('ignores tiny samples and clamps wild ones', () => {
    const counter = createCalibratedCounter({ initialRatio: 1.2, minimumSampleTokens: 200, smoothing: 1 });
    expect(counter.observe({ estimatedTokens: 50, reportedTokens: 500 })).toBe(false);
    expect(counter.ratio).toBe(1.2);
    expect(counter.observationCount).toBe(0);
    counter.observe({ estimatedTokens: 1000, reportedTokens: 1_000_000 });
    expect(counter.ratio).toBe(3);
    counter.observe({ estimatedTokens: 1_000_000, reportedTokens: 1000 });
    expect(counter.ratio).toBe(0.5);
  });

  it.each([0, -10, Number.NaN, Number.POSITIVE_INFINITY])('rejects an observation of %s tokens', (bad) => {
    const counter = createCalibratedCounter();
    expect(() => counter.observe({ estimatedTokens: bad, reportedTokens: 1000 })).toThrow(
      InvalidArgumentError,
    );
    expect(() => counter.observe({ estimatedTokens: 1000, reportedTokens: bad })).toThrow(
      InvalidArgumentError,
    );
    expect(counter.ratio).toBe(1);
  });

  it('rejects nonsense options', () => {
    expect(() => createCalibratedCounter({ initialRatio: 0 })).toThrow(InvalidArgumentError);
    expect(() => createCalibratedCounter({ initialRatio: 10 })).toThrow(/initialRatio.*got 10/);
    expect(() => createCalibratedCounter({ smoothing: 0 })).toThrow(InvalidArgumentError);
    expect(() => createCalibratedCounter({ smoothing: 1.5 })).toThrow(
      /smoothing.*expected a number in \(0, 1\], got 1\.5/,
    );
    expect(() => createCalibratedCounter({ minimumRatio: 2, maximumRatio: 1 })).toThrow(InvalidArgumentError);
    expect(() => createCalibratedCounter({ minimumSampleTokens: -1 })).toThrow(InvalidArgumentError);
  });
});
