import { describe, expect, it } from 'vitest';
import { parseTestSummary } from './test-summary.js';

describe('parseTestSummary', () => {
  it('pytest', () => {
    const text = [
      'FAILED tests/test_units.py::test_metric - AssertionError: assert 1 == 2',
      '==== 1 failed, 6 passed, 2 skipped in 0.42s ====',
    ].join('\n');
    expect(parseTestSummary(text, 'pytest')).toEqual({
      runner: 'pytest',
      passed: 6,
      failed: 1,
      skipped: 2,
      failingTests: ['tests/test_units.py::test_metric'],
      summaryLines: ['==== 1 failed, 6 passed, 2 skipped in 0.42s ===='],
    });
    expect(parseTestSummary('60 passed, 10 skipped in 3.10s')).toMatchObject({
      runner: 'pytest',
      passed: 60,
    });
  });

  it('unittest / Django runtests', () => {
    const text = [
      'FAIL: test_aggregation_subquery (aggregation.tests.AggregateTestCase)',
      '----------------------------------------------------------------------',
      'Ran 116 tests in 0.5s',
      '',
      'FAILED (failures=1, skipped=2)',
    ].join('\n');
    expect(parseTestSummary(text)).toEqual({
      runner: 'unittest',
      passed: 113,
      failed: 1,
      skipped: 2,
      failingTests: ['test_aggregation_subquery (aggregation.tests.AggregateTestCase)'],
      summaryLines: ['Ran 116 tests in 0.5s', 'FAILED (failures=1, skipped=2)'],
    });
  });

  it('vitest, also behind npm test', () => {
    const text = [
      ' FAIL  test/retry.test.ts > caps the delay',
      'AssertionError: expected 1180 to be less than or equal to 1000',
      ' Test Files  1 failed | 8 passed (9)',
      '      Tests  1 failed | 56 passed (57)',
    ].join('\n');
    expect(parseTestSummary(text, 'npm test')).toEqual({
      runner: 'vitest',
      passed: 56,
      failed: 1,
      skipped: 0,
      failingTests: ['test/retry.test.ts > caps the delay'],
      summaryLines: ['Test Files  1 failed | 8 passed (9)', 'Tests  1 failed | 56 passed (57)'],
    });
  });

  it('jest', () => {
    const text =
      'FAIL src/units.test.ts\n  ✕ picks Celsius with --metric (4 ms)\nTests:       1 failed, 6 passed, 7 total';
    expect(parseTestSummary(text, 'jest')).toEqual({
      runner: 'jest',
      passed: 6,
      failed: 1,
      skipped: 0,
      failingTests: ['picks Celsius with --metric'],
      summaryLines: ['Tests:       1 failed, 6 passed, 7 total'],
    });
  });

  it('mocha', () => {
    const text =
      '  4 passing (20ms)\n  1 pending\n  1 failing\n\n  1) retry\n       caps the delay:\n     Error: boom';
    expect(parseTestSummary(text, 'mocha')).toEqual({
      runner: 'mocha',
      passed: 4,
      failed: 1,
      skipped: 1,
      failingTests: ['retry'],
      summaryLines: ['4 passing (20ms)', '1 pending', '1 failing'],
    });
  });

  it('go test and cargo test', () => {
    const go =
      '=== RUN   TestA\n--- PASS: TestA (0.00s)\n--- FAIL: TestB (0.01s)\nFAIL\nFAIL\texample.com/pkg\t0.02s';
    expect(parseTestSummary(go, 'go test')).toEqual({
      runner: 'go test',
      passed: 1,
      failed: 1,
      skipped: 0,
      failingTests: ['TestB'],
      summaryLines: ['FAIL\texample.com/pkg\t0.02s'],
    });
    const cargo =
      'test tests::a ... ok\ntest tests::b ... FAILED\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured';
    expect(parseTestSummary(cargo, 'cargo test')).toEqual({
      runner: 'cargo test',
      passed: 1,
      failed: 1,
      skipped: 0,
      failingTests: ['tests::b'],
      summaryLines: ['test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured'],
    });
  });

  it('finds nothing in output that is not a test summary', () => {
    expect(parseTestSummary('Build complete in 2.1s\nok')).toBeUndefined();
  });
});
