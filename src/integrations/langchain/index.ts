// precis/langchain: the LangChain.js integration (`langchain` and `@langchain/core` are optional peer dependencies).

export type { ContextManagerEvent, IntegrationOptions } from '../conversation-sessions.js';
export { type CreateExpandToolOptions, createExpandTool } from './expand-tool.js';
export { fromLangChainMessages, toLangChainMessages } from './langchain-messages.js';
export {
  type PrecisMiddleware,
  type PrecisMiddlewareOptions,
  precisMiddleware,
} from './precis-middleware.js';
