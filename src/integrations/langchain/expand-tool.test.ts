import { describe, expect, it } from 'vitest';
import { createMemoryArchive } from '../../archive/archive-store.js';
import { isPrecisError } from '../../errors/index.js';
import { createExpandTool } from './expand-tool.js';
import { precisMiddleware } from './precis-middleware.js';

describe('createExpandTool (LangChain)', () => {
  const archive = createMemoryArchive();
  const lines = Array.from({ length: 40 }, (_, index) => `line ${index} of a long build log`);
  const handle = archive.put({ kind: 'text', content: lines.join('\n'), messageIds: ['m1'], strategy: 's' });

  it('returns a long original in pages of pageChars, the page the model asks for', async () => {
    const tool = createExpandTool({ archive, pageChars: 300 });
    const first: string = await tool.invoke({ handle });
    expect(first).toContain('line 0 of');
    expect(first).toMatch(/"page": 2\}\]$/);
    const second: string = await tool.invoke({ handle, page: 2 });
    expect(second.startsWith(`[${handle}, page 2 of `)).toBe(true);
    expect(second).not.toContain('line 0 of');
  });

  it('rejects a pageChars that is not a positive integer when it is made, naming the option', () => {
    let error: unknown;
    try {
      createExpandTool({ archive, pageChars: 0 });
    } catch (caught) {
      error = caught;
    }
    expect(isPrecisError(error) && error.code).toBe('invalid-argument');
    expect((error as Error).message).toContain('pageChars');
  });
});

describe('the expand tool of precisMiddleware', () => {
  it('pages an original at about a quarter of a small budget', async () => {
    const archive = createMemoryArchive();
    const log = Array.from({ length: 2_000 }, (_, index) => `line ${index} of a long build log`).join('\n');
    const handle = archive.put({ kind: 'text', content: log, messageIds: ['m1'], strategy: 's' });
    const [tool] = precisMiddleware({ budget: 8_000, archive }).tools ?? [];
    const page: string = await (tool as ReturnType<typeof createExpandTool>).invoke({ handle });
    expect(page.slice(0, page.lastIndexOf('\n[')).length).toBeLessThanOrEqual(8_000);
    expect(page).toMatch(/"page": 2\}\]$/);
  });
});
