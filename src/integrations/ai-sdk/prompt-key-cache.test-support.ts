import type * as PromptKeyCacheModule from './prompt-key-cache.js';
import type { PromptKeyCache } from './prompt-key-cache.js';

/** Every cache created under `recordingPromptKeyCacheModule`, oldest first. */
export const promptCaches: PromptKeyCache[] = [];

/**
 * The real `./prompt-key-cache.js`, except that each cache it creates is also kept in `promptCaches`, so a
 * test can read how much checking and hashing the integration did. A `vi.mock` factory; it is loaded from
 * inside the factory (`await import`) because `vi.mock` is hoisted above the test file's imports.
 */
export async function recordingPromptKeyCacheModule(
  importOriginal: () => Promise<typeof PromptKeyCacheModule>,
): Promise<typeof PromptKeyCacheModule> {
  const original = await importOriginal();
  return {
    ...original,
    createPromptKeyCache: (...options) => {
      const cache = original.createPromptKeyCache(...options);
      promptCaches.push(cache);
      return cache;
    },
  };
}
