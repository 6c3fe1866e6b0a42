import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { propertyRuns } from '../../test/support/property-runs.js';
import { locateJsonError } from './locate-json-error.js';

describe('locateJsonError', () => {
  it.each([
    ['[1, 2,]', 6, 'unexpected "]", expected a value'],
    ['{"a": 1 "b": 2}', 8, 'unexpected "\\"", expected "," or "}"'],
    ["{'a': 1}", 1, `unexpected "'", expected a property name in double quotes`],
    ['{"a" 1}', 5, 'unexpected "1", expected ":"'],
    ['[1, 2', 5, 'unexpected end of input, expected "," or "]"'],
    ['"abc', 4, 'unexpected end of input, expected a closing quote'],
    ['"a\\x"', 3, 'unexpected "x", expected a valid escape character'],
    ['[tru]', 1, 'unexpected "t", expected a value'],
    ['{} {}', 3, 'unexpected "{", expected end of input after the JSON value'],
    ['', 0, 'unexpected end of input, expected a value'],
  ])('%j fails at %i', (text, offset, reason) => {
    expect(locateJsonError(text)).toEqual({ offset, reason });
  });

  it('accepts everything JSON.stringify writes, and rejects what JSON.parse rejects', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.boolean(), (value, pretty) => {
        expect(locateJsonError(JSON.stringify(value, null, pretty ? 2 : undefined))).toBeUndefined();
      }),
      { numRuns: propertyRuns(500) },
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), (text) => {
        let parses = true;
        try {
          JSON.parse(text);
        } catch {
          parses = false;
        }
        expect(locateJsonError(text) === undefined).toBe(parses);
      }),
      { numRuns: propertyRuns(2000) },
    );
  });

  it('handles deep nesting without recursion', () => {
    expect(locateJsonError(`${'['.repeat(100_000)}${']'.repeat(100_000)}`)).toBeUndefined();
    expect(locateJsonError(`${'['.repeat(100_000)}`)?.offset).toBe(100_000);
  });
});
