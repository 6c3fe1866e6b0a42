import { expect } from 'vitest';
import { createTokenAccountant, type TokenAccountant } from '../tokens/index.js';

/**
 * A real token accountant that also records, in `counted`, the tool names of every `countTools` call: the
 * middleware tests check that tool schemas are counted once per conversation, not at every step.
 */
export function toolCountingAccountant(): { accountant: TokenAccountant; counted: string[][] } {
  const real = createTokenAccountant();
  const counted: string[][] = [];
  const accountant: TokenAccountant = {
    ...real,
    countTools(tools) {
      counted.push(tools.map((tool) => tool.name));
      return real.countTools(tools);
    },
  };
  return { accountant, counted };
}

/** The JSON Schema of the arguments of the `read_file` tool the middleware tests' agents call. */
export const readFileSchema = {
  type: 'object' as const,
  properties: { path: { type: 'string' as const } },
  required: ['path'],
};

/** A file of roughly 400 tokens whose lines name the file, so an original can be recognised. */
export function fileContents(path: string): string {
  return Array.from(
    { length: 24 },
    (_, line) =>
      `export function part${line}(value: number): number { return value * ${line} + ${path.length}; } // ${path}`,
  ).join('\n');
}

/**
 * Checks that an integration processed (checked or converted) and hashed each of a loop's `messages` messages
 * about once, fewer than three times each, rather than the whole history at every step.
 */
export function expectEachMessageAboutOnce(
  { processed, hashed }: { processed: number; hashed: number },
  messages: number,
): void {
  expect(processed).toBeGreaterThanOrEqual(messages);
  expect(processed).toBeLessThan(3 * messages);
  expect(hashed).toBeLessThan(3 * messages);
}
