// precis/ai-sdk: the Vercel AI SDK integration (`ai` is an optional peer dependency of precis).

export type { ContextManagerEvent, IntegrationOptions } from '../conversation-sessions.js';
export {
  type CompactStep,
  type CompactStepInput,
  type CompactStepOptions,
  compactStep,
} from './compact-step.js';
export { type CreateExpandToolOptions, createExpandTool, type ExpandToolInput } from './expand-tool.js';
export {
  fromLanguageModelPrompt,
  type LanguageModelPrompt,
  toLanguageModelPrompt,
} from './language-model-prompt.js';
export {
  type PrecisMiddleware,
  type PrecisMiddlewareOptions,
  precisMiddleware,
} from './precis-middleware.js';
