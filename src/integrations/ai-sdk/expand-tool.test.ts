import { describe, expect, it } from 'vitest';
import { createMemoryArchive } from '../../archive/archive-store.js';
import { isPrecisError } from '../../errors/index.js';
import { createExpandTool } from './expand-tool.js';

describe('createExpandTool (AI SDK)', () => {
  const archive = createMemoryArchive();
  const lines = Array.from({ length: 40 }, (_, index) => `line ${index} of a long build log`);
  const handle = archive.put({ kind: 'text', content: lines.join('\n'), messageIds: ['m1'], strategy: 's' });
  const options = { toolCallId: 'expand', messages: [] };

  it('returns a long original in pages of pageChars, the page the model asks for', async () => {
    const tool = createExpandTool({ archive, pageChars: 300 });
    const first = (await tool.execute!({ handle }, options)) as string;
    expect(first).toContain('line 0 of');
    expect(first).toMatch(
      /page 1 of \d+; for more call expand_context with \{"handle": "h-[0-9a-f]{20}", "page": 2\}\]$/,
    );
    const second = (await tool.execute!({ handle, page: 2 }, options)) as string;
    expect(second.startsWith(`[${handle}, page 2 of `)).toBe(true);
    expect(second).not.toContain('line 0 of');
    expect(await createExpandTool({ archive }).execute!({ handle }, options)).toContain(lines.at(-1));
  });

  it('rejects a pageChars that is not a positive integer when it is made, naming the option', () => {
    for (const pageChars of [0, -5, 1.5]) {
      let error: unknown;
      try {
        createExpandTool({ archive, pageChars });
      } catch (caught) {
        error = caught;
      }
      expect(isPrecisError(error) && error.code).toBe('invalid-argument');
      expect((error as Error).message).toContain('pageChars');
    }
  });
});
