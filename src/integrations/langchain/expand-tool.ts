import { tool } from '@langchain/core/tools';
import type { JsonSchema7ObjectType } from '@langchain/core/utils/json_schema';
import type { ArchiveStore } from '../../archive/archive-store.js';
import { checkExpandToolSetup, executeExpandTool, expandTool } from '../../archive/expand.js';

export interface CreateExpandToolOptions {
  /** The archive compaction wrote to: `precisMiddleware(...).archive`. */
  archive: ArchiveStore;
  /** Most characters one reply holds; a longer original comes in pages. @default 20000 */
  pageChars?: number;
}

/**
 * The precis expand tool as a LangChain tool (`expand_context`): the model calls it with a handle from a stub
 * or summary and gets the archived original back as text (an actionable error text for an unknown handle).
 * `precisMiddleware` already adds it to the agent; this is for agents built without it.
 */
export function createExpandTool(options: CreateExpandToolOptions) {
  const { archive, pageOptions } = checkExpandToolSetup(options);
  return tool(async (input) => executeExpandTool(archive, input, pageOptions), {
    name: expandTool.name,
    description: expandTool.description,
    // A literal object that is valid JSON Schema 7; its inferred type is just wider.
    schema: expandTool.inputSchema as JsonSchema7ObjectType,
  });
}
