import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { propertyRuns } from '../../test/support/property-runs.js';
import {
  mapStringLeaves,
  someStringLeaf,
  stringLeaves,
  stringValues,
  withStringLeaf,
} from './json-strings.js';

const input = {
  file_path: 'src/a.ts',
  edits: [
    { old_string: 'a', new_string: 'b', replace_all: false },
    { old_string: 'c', new_string: 'd' },
  ],
  count: 2,
  note: null,
};

describe('JSON string leaves', () => {
  it('lists the strings with their paths in document order, nested ones too', () => {
    expect(stringLeaves(input)).toEqual([
      { path: ['file_path'], text: 'src/a.ts' },
      { path: ['edits', 0, 'old_string'], text: 'a' },
      { path: ['edits', 0, 'new_string'], text: 'b' },
      { path: ['edits', 1, 'old_string'], text: 'c' },
      { path: ['edits', 1, 'new_string'], text: 'd' },
    ]);
    expect(stringLeaves('raw input')).toEqual([{ path: [], text: 'raw input' }]);
    expect(stringLeaves(42)).toEqual([]);
  });

  it('lists the string values alone, within the limits asked, numbers and booleans as text on request', () => {
    expect(stringValues(input)).toEqual(stringLeaves(input).map((leaf) => leaf.text));
    expect(stringValues(input, { scalarsAsText: true })).toEqual([
      'src/a.ts',
      'a',
      'b',
      'false',
      'c',
      'd',
      '2',
    ]);
    // Depth 0 is the value itself, 1 its fields: the edits' strings lie at depth 3.
    expect(stringValues(input, { maxDepth: 2 })).toEqual(['src/a.ts']);
    const many = Array.from({ length: 100 }, (_, index) => `s${index}`);
    expect(stringValues(many, { maxStrings: 50 })).toEqual(many.slice(0, 51));
    expect(stringValues('raw')).toEqual(['raw']);
  });

  it('replaces one leaf, copying only the objects on its way', () => {
    const changed = withStringLeaf(input, ['edits', 1, 'new_string'], 'D') as typeof input;
    expect(changed.edits[1]).toEqual({ old_string: 'c', new_string: 'D' });
    expect(changed.edits[0]).toBe(input.edits[0]);
    expect(input.edits[1]!.new_string).toBe('d');
    expect(withStringLeaf('raw', [], 'new')).toBe('new');
  });

  it('maps every leaf and gives back the same value where nothing changed', () => {
    expect(mapStringLeaves(input, (text) => text)).toBe(input);
    const upper = mapStringLeaves(input, (text) => (text === 'b' ? 'B' : text)) as typeof input;
    expect(upper.edits[0]!.new_string).toBe('B');
    expect(upper.edits[1]).toBe(input.edits[1]);
    expect(someStringLeaf(input, (text) => text === 'd')).toBe(true);
    expect(someStringLeaf(input, (text) => text === 'z')).toBe(false);
  });

  it('property: replacing each leaf by itself changes nothing, and a replaced leaf is found at its path', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string(), (value, replacement) => {
        const leaves = stringLeaves(value);
        expect(mapStringLeaves(value, (text) => text)).toBe(value);
        for (const { path } of leaves) {
          const changed = withStringLeaf(value, path, replacement);
          expect(
            stringLeaves(changed).find((leaf) => leaf.path.join('\u0000') === path.join('\u0000'))?.text,
          ).toBe(replacement);
          expect(stringLeaves(changed)).toHaveLength(leaves.length);
        }
      }),
      { numRuns: propertyRuns(300) },
    );
  });
});
