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
