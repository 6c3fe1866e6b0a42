import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { closedFenceBodies, fencedBlocks, mapProse } from './markdown-fences.js';

describe('fencedBlocks', () => {
  it('finds backtick and tilde fences with their info, body and offsets', () => {
    const text = 'Run:\n```bash\nnpm test\nnpm run lint\n```\nthen\n~~~\nplain\n~~~';
    expect(fencedBlocks(text)).toEqual([
      { start: 5, end: 38, body: 'npm test\nnpm run lint', info: 'bash', closed: true },
      { start: 44, end: text.length, body: 'plain', info: '', closed: true },
    ]);
    expect(text.slice(5, 38)).toBe('```bash\nnpm test\nnpm run lint\n```');
  });

  it('closes a fence only with the same character, at least as long, and nothing after it', () => {
    const text = '````md\n```ts\nconst a = 1;\n```\n~~~~\n```` trailing\n`````\nafter';
    const [block] = fencedBlocks(text);
    expect(block).toMatchObject({ info: 'md', closed: true });
    expect(block!.body).toBe('```ts\nconst a = 1;\n```\n~~~~\n```` trailing');
    expect(text.slice(block!.end)).toBe('\nafter');
  });

  it('gives the bodies of the closed blocks only', () => {
    expect(closedFenceBodies('```sh\nnpm test\n```\ntext\n~~~\n~~~\n```\ncut off')).toEqual(['npm test', '']);
  });

  it('leaves an unclosed fence open to the end, and an empty one empty', () => {
    expect(fencedBlocks('a\n```py\nprint(1)\n')).toEqual([
      { start: 2, end: 17, body: 'print(1)\n', info: 'py', closed: false },
    ]);
    expect(fencedBlocks('```\n```')).toEqual([{ start: 0, end: 7, body: '', info: '', closed: true }]);
    expect(fencedBlocks('```')).toEqual([{ start: 0, end: 3, body: '', info: '', closed: false }]);
  });

  it('does not take inline code, deep indents or backticks in the info string for fences', () => {
    expect(fencedBlocks('use ```x``` inline\n    ```\n    indented\n    ```')).toEqual([]);
    expect(fencedBlocks('```js``` not a fence\nbody')).toEqual([]);
    expect(fencedBlocks('   ```\nthree spaces\n   ```')).toHaveLength(1);
  });

  it('reads CRLF text: the fence lines end in \\r', () => {
    const [block] = fencedBlocks('x\r\n```bash\r\nls\r\n```\r\ny');
    expect(block).toMatchObject({ info: 'bash', body: 'ls\r', closed: true });
  });

  it('gives blocks in order that do not overlap and lie in the text (property)', () => {
    const line = fc.constantFrom('```', '````ts', '~~~', '~~~~', '   ```', 'code', '', 'text `x`', '  ```  ');
    fc.assert(
      fc.property(fc.array(line, { maxLength: 30 }), (lines) => {
        const text = lines.join('\n');
        let previousEnd = -1;
        for (const block of fencedBlocks(text)) {
          expect(block.start).toBeGreaterThan(previousEnd);
          expect(block.end).toBeGreaterThanOrEqual(block.start);
          expect(block.end).toBeLessThanOrEqual(text.length);
          expect(text.slice(block.start, block.end)).toContain(block.body);
          previousEnd = block.end;
        }
      }),
    );
  });
});

describe('mapProse', () => {
  it('rewrites the prose around fenced blocks and leaves the blocks byte for byte, an unclosed one too', () => {
    const upper = (prose: string) => prose.toUpperCase();
    expect(mapProse('a\n```js\nconst b = 1;\n```\nc\n~~~\nd', upper)).toBe(
      'A\n```js\nconst b = 1;\n```\nC\n~~~\nd',
    );
    expect(mapProse('no code here', upper)).toBe('NO CODE HERE');
    expect(mapProse('', upper)).toBe('');
  });

  it('changes nothing when the rewrite changes nothing (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('text ', '```\n', '~~~~\n', 'code\n', '\n', '` x `')),
        (pieces) => {
          const text = pieces.join('');
          expect(mapProse(text, (prose) => prose)).toBe(text);
        },
      ),
    );
  });
});
