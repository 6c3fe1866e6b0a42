import { describe, expect, it } from 'vitest';
import { parseTestSummary, withoutTestRunHeaders } from './test-summary.js';

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

describe('withoutTestRunHeaders', () => {
  const header = [
    '============================= test session starts ==============================',
    'platform linux -- Python 3.9.20, pytest-7.4.0, pluggy-1.3.0',
    'Running tests with Astropy version 5.3.dev882.',
    'Numpy: 1.25.2',
    'rootdir: /testbed',
  ];

  it("drops each run's banner and header, keeping what comes before, the collected count and the rest", () => {
    const text = [
      'RuntimeWarning: numpy.ndarray size changed',
      ...header,
      'collected 8 items',
      '==== 8 passed in 0.07s ====',
      `\u001b[1m${header[0]}\u001b[0m`,
      ...header.slice(1),
      'collecting ... collected 2 items / 1 deselected',
      '==== 2 passed in 0.01s ====',
    ].join('\n');
    expect(withoutTestRunHeaders(text)).toBe(
      [
        'RuntimeWarning: numpy.ndarray size changed',
        'collected 8 items',
        '==== 8 passed in 0.07s ====',
        'collecting ... collected 2 items / 1 deselected',
        '==== 2 passed in 0.01s ====',
      ].join('\n'),
    );
  });

  it('ends a header at the error or banner of a failed collection', () => {
    const text = [...header, 'ERROR: file or directory not found: tests/nope.py', ''].join('\n');
    expect(withoutTestRunHeaders(text)).toBe('ERROR: file or directory not found: tests/nope.py\n');
    const banner = [...header, '==== ERRORS ====', '____ ERROR collecting t.py ____'].join('\n');
    expect(withoutTestRunHeaders(banner)).toBe('==== ERRORS ====\n____ ERROR collecting t.py ____');
  });

  it('keeps a banner whose header has no end (an output cut short), and text without a banner', () => {
    const cut = header.join('\n');
    expect(withoutTestRunHeaders(cut)).toBe(cut);
    const long = [header[0], ...Array.from({ length: 150 }, (_, i) => `line ${i}`), 'collected 1 item'].join(
      '\n',
    );
    expect(withoutTestRunHeaders(long)).toBe(long);
    expect(withoutTestRunHeaders('collected 3 items\n3 passed')).toBe('collected 3 items\n3 passed');
  });
});
