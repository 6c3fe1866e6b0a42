import { tool } from '@langchain/core/tools';
import type { JsonSchema7ObjectType } from '@langchain/core/utils/json_schema';
import type { ArchiveStore } from '../../archive/archive-store.js';
import { checkExpandToolOptions, executeExpandTool, expandTool } from '../../archive/expand.js';
import { InvalidArgumentError } from '../../errors/index.js';
import { describeValue } from '../../internal/json-shapes.js';

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
  const archive = options?.archive;
  if (typeof archive?.get !== 'function')
    throw new InvalidArgumentError('archive', `expected an archive store, got ${describeValue(archive)}`);
  const pageOptions = options.pageChars === undefined ? {} : { pageChars: options.pageChars };
  checkExpandToolOptions(pageOptions);
  return tool(async (input) => executeExpandTool(archive, input, pageOptions), {
    name: expandTool.name,
    description: expandTool.description,
    // A literal object that is valid JSON Schema 7; its inferred type is just wider.
    schema: expandTool.inputSchema as JsonSchema7ObjectType,
  });
}
