import { jsonSchema, type Tool, tool } from 'ai';
import type { ArchiveStore } from '../../archive/archive-store.js';
import { checkExpandToolSetup, executeExpandTool, expandTool } from '../../archive/expand.js';

export interface CreateExpandToolOptions {
  /** The archive compaction wrote to: `precisMiddleware(...).archive` or `compactStep(...).archive`. */
  archive: ArchiveStore;
  /** Most characters one reply holds; a longer original comes in pages. @default 20000 */
  pageChars?: number;
}

/** The input of the expand tool. */
export interface ExpandToolInput {
  handle: string;
  /** Which page of a long original; 1 when left out. */
  page?: number;
}

/**
 * The precis expand tool as an AI SDK tool: the model calls it with a handle from a stub or summary and gets
 * the archived original back as text (an actionable error text for an unknown handle, never a throw). Add it
 * to `tools` under `expandTool.name` (`expand_context`), which is what the precis summaries and stubs name.
 */
export function createExpandTool(options: CreateExpandToolOptions): Tool<ExpandToolInput, string> {
  const { archive, pageOptions } = checkExpandToolSetup(options);
  return tool<ExpandToolInput, string>({
    description: expandTool.description,
    // The schema is a literal object that is valid JSON Schema 7; its inferred type is just wider.
    inputSchema: jsonSchema<ExpandToolInput>(expandTool.inputSchema as Parameters<typeof jsonSchema>[0]),
    execute: async (input) => executeExpandTool(archive, input, pageOptions),
  });
}
