import { describe, expect, it } from 'vitest';
import { createMemoryArchive } from '../../archive/archive-store.js';
import { isPrecisError } from '../../errors/index.js';
import { compactStep } from './compact-step.js';
import { createExpandTool } from './expand-tool.js';
import { precisMiddleware } from './precis-middleware.js';

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

describe('the expand tool of precisMiddleware and compactStep', () => {
  const archive = createMemoryArchive();
  const log = Array.from({ length: 2_000 }, (_, index) => `line ${index} of a long build log`).join('\n');
  const handle = archive.put({ kind: 'text', content: log, messageIds: ['m1'], strategy: 's' });
  const options = { toolCallId: 'expand', messages: [] };
  const firstPage = async (tool: { execute?: (input: { handle: string }, o: typeof options) => unknown }) =>
    (await tool.execute!({ handle }, options)) as string;
  const bodyChars = (page: string) => page.slice(0, page.lastIndexOf('\n[')).length;

  it('pages an original at about a quarter of a small budget, and at 20,000 characters for a large window', async () => {
    const small = await firstPage(precisMiddleware({ budget: 8_000, archive }).tools.expand_context);
    expect(bodyChars(small)).toBeLessThanOrEqual(8_000);
    expect(bodyChars(small)).toBeGreaterThan(7_000);
    const large = await firstPage(compactStep({ model: 'gpt-4o', archive }).tools.expand_context);
    expect(bodyChars(large)).toBeLessThanOrEqual(20_000);
    expect(bodyChars(large)).toBeGreaterThan(19_000);
    // The window learnt from the framework's model at the first call: the tool's default.
    const later = await firstPage(precisMiddleware({ archive }).tools.expand_context);
    expect(bodyChars(later)).toBe(bodyChars(large));
  });
});
