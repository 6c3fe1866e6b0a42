import { afterEach, describe, expect, it, vi } from 'vitest';
import { propertyRuns } from './property-runs.js';

describe('propertyRuns', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it("runs a property's own count, or at least PRECIS_PROPERTY_RUNS of a soak", () => {
    vi.stubEnv('PRECIS_PROPERTY_RUNS', '');
    expect(propertyRuns(300)).toBe(300);
    vi.stubEnv('PRECIS_PROPERTY_RUNS', '2000');
    expect(propertyRuns(300)).toBe(2000);
    // A soak never runs a property fewer times than CI does.
    expect(propertyRuns(5000)).toBe(5000);
  });

  it('names the variable when its value is not a positive integer', () => {
    for (const value of ['many', '0', '-5', '2.5']) {
      vi.stubEnv('PRECIS_PROPERTY_RUNS', value);
      expect(() => propertyRuns(300)).toThrow(
        `PRECIS_PROPERTY_RUNS: expected a positive integer, got "${value}"`,
      );
    }
  });
});
