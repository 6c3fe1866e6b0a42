/**
 * How many generated cases a property runs: `runs` (what CI affords), or more with `PRECIS_PROPERTY_RUNS=N` set
 * (a long soak: every property runs at least N cases; none runs fewer than its own default).
 */
export function propertyRuns(runs: number): number {
  const soak = process.env.PRECIS_PROPERTY_RUNS;
  if (soak === undefined || soak === '') return runs;
  const count = Number(soak);
  if (!Number.isInteger(count) || count < 1)
    throw new Error(`PRECIS_PROPERTY_RUNS: expected a positive integer, got ${JSON.stringify(soak)}`);
  return Math.max(runs, count);
}
