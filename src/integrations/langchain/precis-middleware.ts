import { type BaseMessage, RemoveMessage } from '@langchain/core/messages';
import { toJsonSchema } from '@langchain/core/utils/json_schema';
import { createMiddleware } from 'langchain';
import type { ContextManager } from '../../engine/context-manager.js';
import { parseOverflowError } from '../../engine/overflow-errors.js';
import { InvalidMessageError } from '../../errors/index.js';
import { isRecord } from '../../internal/json-shapes.js';
import { assignIds, messageContentHash } from '../../messages/ids.js';
import type { IdentifiedMessage, JSONValue, Message, ToolDefinition } from '../../messages/types.js';
import { validateMessages } from '../../messages/validate/index.js';
import {
  type ConversationSession,
  checkIntegrationOptions,
  createConversationSessions,
  createManager,
  emitWarning,
  type IntegrationOptions,
  messagesWithinCeiling,
} from '../conversation-sessions.js';
import { createExpandTool } from './expand-tool.js';
import { fromLangChainMessages, toLangChainMessages } from './langchain-messages.js';

export type PrecisMiddlewareOptions = IntegrationOptions;

/** LangGraph's `REMOVE_ALL_MESSAGES`: a `RemoveMessage` with this id clears the list before the new messages. */
const removeAllMessages = '__remove_all__';
/** Id of the system prompt inside a manager: counted and kept, never handed back to the agent's state. */
const systemPromptId = 'precis-system-prompt';

/** What the model calls taught: the system prompt, tool schemas and model name that `beforeModel` cannot see. */
interface CallShape {
  systemPrompt: string;
  tools: ToolDefinition[];
  modelId: string | undefined;
}

interface SessionState {
  /** `manager.stats().compactions` when the agent's state last matched the manager. */
  committedCompactions: number;
  /** The agent's message objects by precis id, with the hash of their conversion: reused while unchanged. */
  originals: Map<string, { message: BaseMessage; hash: string }>;
  /** The leading keys that stand for the system prompt (none or one). */
  systemKeys: string[];
}

function toolDefinitionOf(tool: unknown): ToolDefinition {
  if (!isRecord(tool)) return { name: 'tool', inputSchema: {} };
  const name = typeof tool.name === 'string' ? tool.name : 'tool';
  const description = typeof tool.description === 'string' ? { description: tool.description } : {};
  let inputSchema: JSONValue = {};
  try {
    if (tool.schema !== undefined) inputSchema = toJsonSchema(tool.schema as never) as JSONValue;
  } catch {
    // A schema LangChain cannot describe counts as empty: only the budget estimate is affected.
  }
  return { name, ...description, inputSchema };
}

function modelIdOf(model: unknown): string | undefined {
  if (!isRecord(model)) return undefined;
  for (const key of ['model', 'modelName']) if (typeof model[key] === 'string') return model[key];
  return undefined;
}

/**
 * LangChain `createAgent` middleware that keeps the agent's messages inside the context. Before each model
 * call the conversation goes through a `ContextManager` (one per conversation, followed incrementally); when
 * it compacts, the agent's state is replaced by the compacted messages (tool calls stay paired with their
 * results, ids kept). A compaction that throws or yields an invalid conversation is never committed: the state
 * stays as it was and a `warning` goes to `onEvent`. A context-length error of the model is recovered once:
 * compacted harder, the call is retried, and the result is committed before the next call.
 *
 * The window comes from `budget`, `model` or `contextWindow`; with none, from the chat model's name as the
 * first model call shows it (the first call is then not compacted). The system prompt and tool schemas are
 * counted off the window as the model calls show them.
 *
 * @example
 * const agent = createAgent({ model, tools, middleware: [precisMiddleware({ model: 'gpt-4o' })] });
 *
 * The agent gets the `expand_context` tool with the middleware; `.archive` is what it reads.
 *
 * @throws InvalidArgumentError naming the option when an option is out of range (at creation)
 */
export function precisMiddleware(options: PrecisMiddlewareOptions = {}) {
  const checked = checkIntegrationOptions(options);
  const sessions = createConversationSessions(checked.maxConversations);
  const states = new WeakMap<ConversationSession, SessionState>();
  const { archive } = checked.managerOptions;
  let shape: CallShape = { systemPrompt: '', tools: [], modelId: undefined };

  function warn(manager: ContextManager | undefined, message: string): void {
    emitWarning(checked, manager, 'compaction-skipped', message);
  }

  /** The session of the agent's messages, up to date with them; undefined while the window is unknown. */
  function sessionOf(agentMessages: readonly BaseMessage[]): ConversationSession | undefined {
    const window = checked.window ?? (shape.modelId === undefined ? undefined : { model: shape.modelId });
    if (window === undefined) return undefined;
    const converted = assignIds(fromLangChainMessages(agentMessages));
    const system: IdentifiedMessage[] =
      shape.systemPrompt === ''
        ? []
        : [{ role: 'system', content: shape.systemPrompt, id: systemPromptId, metadata: { pinned: true } }];
    // The system prompt's hash leads the keys (aligned with the messages): a different prompt is a different
    // conversation.
    const systemKeys = system.map(messageContentHash);
    const keys = [...systemKeys, ...converted.map((message) => message.id)];
    const session = sessions.resolve(keys, [...system, ...converted], (initial) =>
      createManager(checked, window, initial, shape.tools),
    );
    let state = states.get(session);
    if (state === undefined) {
      state = { committedCompactions: session.manager.stats().compactions, originals: new Map(), systemKeys };
      states.set(session, state);
    }
    converted.forEach((message, index) => {
      state.originals.set(message.id, { message: agentMessages[index]!, hash: messageContentHash(message) });
    });
    session.manager.setTools(shape.tools);
    return session;
  }

  /** The manager's messages for the agent: the agent's own objects where unchanged, converted ones elsewhere. */
  function agentMessagesOf(
    session: ConversationSession,
    messages: readonly IdentifiedMessage[],
  ): BaseMessage[] {
    const { originals } = states.get(session)!;
    return messages.flatMap((message) => {
      if (message.id === systemPromptId) return [];
      const original = originals.get(message.id);
      if (original !== undefined && original.hash === messageContentHash(message)) return [original.message];
      return toLangChainMessages([message]);
    });
  }

  /** Replaces the agent's messages by the manager's, when they are valid; undefined (no update) otherwise. */
  function commit(session: ConversationSession, messages: readonly IdentifiedMessage[]) {
    const state = states.get(session)!;
    const conversation = messages.filter((message) => message.id !== systemPromptId);
    const validation = validateMessages(conversation as Message[]);
    if (!validation.valid) {
      sessions.drop(session);
      warn(
        session.manager,
        `compaction produced an invalid conversation (${validation.issues[0]?.message}); the agent's messages are left as they were`,
      );
      return undefined;
    }
    const next = agentMessagesOf(session, messages);
    state.committedCompactions = session.manager.stats().compactions;
    state.originals = new Map();
    const converted = assignIds(fromLangChainMessages(next));
    converted.forEach((message, index) => {
      state.originals.set(message.id, { message: next[index]!, hash: messageContentHash(message) });
    });
    session.keys = [...state.systemKeys, ...converted.map((message) => message.id)];
    return { messages: [new RemoveMessage({ id: removeAllMessages }), ...next] };
  }

  const middleware = createMiddleware({
    name: 'PrecisMiddleware',
    // The agent gets the expand tool with the middleware: stubs and summaries name it.
    tools: [createExpandTool({ archive })],
    beforeModel: async (state) => {
      let session: ConversationSession | undefined;
      try {
        session = sessionOf(state.messages);
        if (session === undefined) return undefined;
        const messages = await messagesWithinCeiling(checked, session.manager);
        if (session.manager.stats().compactions === states.get(session)!.committedCompactions)
          return undefined;
        return commit(session, messages);
      } catch (error) {
        // Never commit a failed compaction: forget the session (its manager may be half-way) and go on.
        if (session !== undefined) sessions.drop(session);
        // Bad input is the caller's to fix, not a compaction failure.
        if (error instanceof InvalidMessageError) throw error;
        warn(
          session?.manager,
          `compaction failed (${error instanceof Error ? error.message : String(error)}); the agent's messages are left as they were`,
        );
        return undefined;
      }
    },
    wrapModelCall: async (request, handler) => {
      shape = {
        systemPrompt: request.systemPrompt ?? '',
        tools: (request.tools ?? []).map(toolDefinitionOf),
        modelId: modelIdOf(request.model) ?? shape.modelId,
      };
      try {
        return await handler(request);
      } catch (error) {
        if (parseOverflowError(error) === undefined) throw error;
        const session = sessionOf(request.messages);
        if (session === undefined) throw error;
        const recovery = await session.manager.recoverFromOverflow(error);
        if (!recovery.recovered) throw error;
        return handler({ ...request, messages: agentMessagesOf(session, recovery.messages) });
      }
    },
  });
  return Object.assign(middleware, { archive });
}

export type PrecisMiddleware = ReturnType<typeof precisMiddleware>;
