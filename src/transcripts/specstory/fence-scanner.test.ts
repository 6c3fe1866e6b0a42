import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { propertyRuns } from '../../../test/support/property-runs.js';
import {
  closesFence,
  createFenceScanner,
  createLineFinder,
  fenceOpener,
  splitLines,
  trimBlankLines,
} from './fence-scanner.js';

describe('fenceOpener and closesFence', () => {
  it('reads backtick and tilde fences with their info string', () => {
    expect(fenceOpener('```bash')).toEqual({ marker: '`', length: 3, indent: 0, info: 'bash' });
    expect(fenceOpener('   ~~~~ python ')).toEqual({ marker: '~', length: 4, indent: 3, info: 'python' });
    expect(fenceOpener('    ```')).toBeUndefined();
    expect(fenceOpener('``')).toBeUndefined();
    expect(fenceOpener('```js``` inline')).toBeUndefined();
  });

  it('closes only with the same marker, at least as long, indented no deeper than the opener', () => {
    const opener = fenceOpener('```diff')!;
    expect(closesFence('```', opener)).toBe(true);
    expect(closesFence('`````  ', opener)).toBe(true);
    expect(closesFence('~~~', opener)).toBe(false);
    expect(closesFence('```bash', opener)).toBe(false);
    // A diff of a markdown file shows its fences behind the two-column prefix.
    expect(closesFence('  ```', opener)).toBe(false);
    expect(closesFence('  ```', fenceOpener('  ```')!)).toBe(true);
    expect(closesFence('```', fenceOpener('````')!)).toBe(false);
  });
});

describe('createFenceScanner', () => {
  const naiveClose = (lines: string[], start: number, barrier: (index: number) => boolean) => {
    const opener = fenceOpener(lines[start]!)!;
    for (let index = start + 1; index < lines.length; index++) {
      if (closesFence(lines[index]!, opener)) return index;
      if (barrier(index)) return -1;
    }
    return -1;
  };

  it('answers like a plain forward search, whatever it remembered before', () => {
    const line = fc.constantFrom('```', '````', '```py', '  ```', '~~~', 'text', '|barrier|');
    fc.assert(
      fc.property(fc.array(line, { maxLength: 40 }), (lines) => {
        const barrier = (index: number) => lines[index] === '|barrier|';
        const scanner = createFenceScanner(lines, barrier);
        for (let index = 0; index < lines.length; index++) {
          if (fenceOpener(lines[index]!) === undefined) continue;
          expect(scanner.findClose(index, fenceOpener(lines[index]!)!)).toBe(
            naiveClose(lines, index, barrier),
          );
        }
      }),
      { numRuns: propertyRuns(500) },
    );
  });

  it('costs one scan for a run of unclosed fences', () => {
    // Openers with an info string close nothing, and the three-backtick line closes no four-backtick fence.
    const lines = [
      ...Array.from({ length: 100_000 }, (_, index) => (index % 2 === 0 ? '````py' : 'x')),
      '```',
    ];
    // Cost as line reads, not wall time (machines are shared): a linear scan reads each line about once.
    let reads = 0;
    const counted = new Proxy(lines, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver);
      },
    });
    const scanner = createFenceScanner(counted);
    for (let index = 0; index < lines.length - 1; index += 2) {
      expect(scanner.findClose(index, fenceOpener(lines[index]!)!)).toBe(-1);
    }
    expect(reads).toBeLessThan(3 * lines.length);
  });
});

describe('createLineFinder', () => {
  it('finds the first line containing the needle at or after a position, walked forward', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a', '</think>', 'b'), { maxLength: 30 }),
        fc.array(fc.nat({ max: 35 }), { maxLength: 10 }),
        (lines, positions) => {
          const find = createLineFinder(lines, '</think>');
          for (const from of [...positions].sort((a, b) => a - b)) {
            const expected = lines.findIndex((line, index) => index >= from && line.includes('</think>'));
            expect(find(from)).toBe(expected);
          }
        },
      ),
    );
  });
});

describe('trimBlankLines and splitLines', () => {
  const regexTrim = (text: string) => text.replace(/^(?:[ \t]*\n)+/, '').replace(/(?:\n[ \t]*)+$/, '');

  it('drops leading and trailing blank lines like the obvious regular expression, without its cost', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('\n', ' ', '\t', 'x', '\n\n'), { maxLength: 30 }), (pieces) => {
        const text = pieces.join('');
        expect(trimBlankLines(text)).toBe(regexTrim(text));
      }),
      { numRuns: propertyRuns(1000) },
    );
    // The input that makes the regular expression quadratic (its speed: bench/importers.bench.mjs).
    const blanks = `x${'\n '.repeat(200_000)}y`;
    expect(trimBlankLines(blanks)).toBe(blanks);
    expect(trimBlankLines(`${'\n '.repeat(1000)}\n${blanks}\n \t\n`)).toBe(blanks);
  });

  it('reads CRLF and lone CR line ends as LF', () => {
    expect(splitLines('a\r\nb\rc\nd')).toEqual(['a', 'b', 'c', 'd']);
  });
});
