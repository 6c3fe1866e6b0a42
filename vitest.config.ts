import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Property tests run thousands of cases; the machines are shared and slow.
    testTimeout: 120_000,
    pool: 'forks',
  },
});
