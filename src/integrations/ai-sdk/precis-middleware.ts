import type { LanguageModelMiddleware, Tool } from 'ai';
import type { ArchiveStore } from '../../archive/archive-store.js';
import {
  type ConversationSession,
  checkIntegrationOptions,
  createConversationSessions,
  createManager,
  type IntegrationOptions,
  messagesWithinCeiling,
} from '../conversation-sessions.js';
import { createExpandTool, type ExpandToolInput } from './expand-tool.js';
import {
  type LanguageModelPrompt,
  toLanguageModelPrompt,
  toolDefinitionsOf,
} from './language-model-prompt.js';
import { createPromptKeyCache } from './prompt-key-cache.js';

export type PrecisMiddlewareOptions = IntegrationOptions;

type TransformParams = NonNullable<LanguageModelMiddleware['transformParams']>;
type CallOptions = Parameters<TransformParams>[0]['params'];
type WrappedModel = Parameters<TransformParams>[0]['model'];

export interface PrecisMiddleware extends LanguageModelMiddleware {
  /** Where compacted originals go; what the expand tool reads. */
  readonly archive: ArchiveStore;
  /** `{ expand_context }`, to spread into the `tools` of `generateText` / `streamText` / an agent. */
  readonly tools: { expand_context: Tool<ExpandToolInput, string> };
}

/**
 * Middleware for `wrapLanguageModel` that keeps every prompt inside the context: each call's prompt is
 * appended to a `ContextManager` for its conversation (recognised by prefix, so a multi-step loop is followed
 * incrementally) and the manager's messages are sent instead, compacted when a threshold is crossed.
 * `precisMiddleware({ budget: 8000 })` keeps every prompt within 8000 tokens (tool schemas included);
 * `{ model: 'gpt-4o' }` or `{ contextWindow }` budget against a window, and with none of them the wrapped
 * model's id is looked up. A context-length error of the provider is recovered once: compacted harder, the
 * call is retried.
 *
 * Each call's prompt is checked and hashed only past what it shares with an earlier prompt, so a step costs
 * the messages it adds (plus a cheap comparison with the previous prompt), not a hash of the whole history.
 *
 * @example
 * const precis = precisMiddleware({ budget: 8000 });
 * const model = wrapLanguageModel({ model: openai('gpt-4o'), middleware: precis });
 * await generateText({ model, tools: { ...tools, ...precis.tools }, stopWhen: stepCountIs(200), prompt });
 *
 * @throws InvalidArgumentError naming the option when an option is out of range (at creation)
 */
export function precisMiddleware(options: PrecisMiddlewareOptions = {}): PrecisMiddleware {
  const checked = checkIntegrationOptions(options);
  const sessions = createConversationSessions(checked.maxConversations);
  const sessionOfCall = new WeakMap<CallOptions, ConversationSession>();
  const { archive } = checked.managerOptions;
  // Each call resends the whole conversation, rebuilt: only the messages not seen before are checked and hashed.
  const prompts = createPromptKeyCache({ maxPrompts: checked.maxConversations });

  async function transformParams({ params, model }: { params: CallOptions; model: WrappedModel }) {
    // The same check as `fromLanguageModelPrompt(params.prompt)`, with the keys of the messages.
    const { messages, keys } = prompts.read(params.prompt);
    const tools = toolDefinitionsOf(params.tools);
    let created = false;
    const session = sessions.resolve(keys, messages, (initial) => {
      created = true;
      return createManager(checked, checked.window ?? { model: model.modelId }, initial, tools);
    });
    // A new manager was given the tools (and counted them) when it was created.
    if (!created) session.manager.setTools(tools);
    const compacted = await messagesWithinCeiling(checked, session.manager);
    const transformed: CallOptions =
      session.manager.stats().compactions === 0
        ? { ...params } // Never compacted: the prompt goes out exactly as the SDK made it.
        : { ...params, prompt: toLanguageModelPrompt(compacted) };
    sessionOfCall.set(transformed, session);
    return transformed;
  }

  /** One retry after a context-length error, with the conversation compacted harder. */
  async function retryPrompt(error: unknown, params: CallOptions): Promise<LanguageModelPrompt> {
    const session = sessionOfCall.get(params);
    if (session === undefined) throw error;
    const recovery = await session.manager.recoverFromOverflow(error);
    if (!recovery.recovered) throw error;
    return toLanguageModelPrompt(recovery.messages);
  }

  return {
    specificationVersion: 'v3',
    transformParams,
    async wrapGenerate({ doGenerate, params, model }) {
      try {
        return await doGenerate();
      } catch (error) {
        return model.doGenerate({ ...params, prompt: await retryPrompt(error, params) });
      }
    },
    async wrapStream({ doStream, params, model }) {
      try {
        return await doStream();
      } catch (error) {
        return model.doStream({ ...params, prompt: await retryPrompt(error, params) });
      }
    },
    archive,
    tools: { expand_context: createExpandTool({ archive, ...checked.expandOptions }) },
  };
}
