import { type BaseMessage, RemoveMessage } from '@langchain/core/messages';
import { toJsonSchema } from '@langchain/core/utils/json_schema';
import { createMiddleware } from 'langchain';
import type { ContextManager } from '../../engine/context-manager.js';
import { parseOverflowError } from '../../engine/overflow-errors.js';
import { InvalidMessageError } from '../../errors/index.js';
import { isRecord } from '../../internal/json-shapes.js';
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
import { createLangChainMessageCache } from './langchain-message-cache.js';
import { toLangChainMessages } from './langchain-messages.js';

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
  /** The agent's message objects by precis id, with the content hash of their conversion: reused while unchanged. */
  originals: Map<string, Original>;
  /** The leading keys that stand for the system prompt (none or one). */
  systemKeys: string[];
}

interface Original {
  message: BaseMessage;
  /** The content hash of its conversion. */
  hash: string;
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
 * Each message object of the agent's state is converted and hashed once, so a step costs the messages it
 * adds, not the whole history: treat messages as immutable, as LangGraph does (replace a message rather than
 * edit its content blocks in place).
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
  // The agent's history comes whole before every call: each message object is converted and hashed once.
  const cache = createLangChainMessageCache();
  /** The system prompt as a message, made again only when the prompt changes (its hash is then remembered). */
  let systemMessage: IdentifiedMessage | undefined;
  // Each tool's definition once, not a schema conversion per call: the manager's token count then hits its cache.
  const definitions = new WeakMap<object, { fields: unknown[]; definition: ToolDefinition }>();

  function toolDefinitionsOf(tools: readonly unknown[]): ToolDefinition[] {
    return tools.map((tool) => {
      if (!isRecord(tool)) return toolDefinitionOf(tool);
      const fields = [tool.name, tool.description, tool.schema];
      const known = definitions.get(tool);
      if (known?.fields.every((field, index) => field === fields[index])) return known.definition;
      const definition = toolDefinitionOf(tool);
      definitions.set(tool, { fields, definition });
      return definition;
    });
  }

  function systemMessageOf(prompt: string): IdentifiedMessage {
    if (systemMessage?.content !== prompt)
      systemMessage = { role: 'system', content: prompt, id: systemPromptId, metadata: { pinned: true } };
    return systemMessage;
  }

  function warn(manager: ContextManager | undefined, message: string): void {
    emitWarning(checked, manager, 'compaction-skipped', message);
  }

  /** The session of the agent's messages, up to date with them; undefined while the window is unknown. */
  function sessionOf(agentMessages: readonly BaseMessage[]): ConversationSession | undefined {
    const window = checked.window ?? (shape.modelId === undefined ? undefined : { model: shape.modelId });
    if (window === undefined) return undefined;
    const { messages: converted, hashes } = cache.convert(agentMessages);
    const system = shape.systemPrompt === '' ? [] : [systemMessageOf(shape.systemPrompt)];
    // The system prompt's hash leads the keys (aligned with the messages): a different prompt is a different
    // conversation.
    const systemKeys = system.map(cache.hash);
    const keys = [...systemKeys, ...converted.map((message) => message.id)];
    let created = false;
    const session = sessions.resolve(keys, [...system, ...converted], (initial) => {
      created = true;
      return createManager(checked, window, initial, shape.tools);
    });
    let state = states.get(session);
    if (state === undefined) {
      state = { committedCompactions: session.manager.stats().compactions, originals: new Map(), systemKeys };
      states.set(session, state);
    }
    remember(state, agentMessages, converted, hashes);
    // A new manager was given the tools (and counted them) when it was created.
    if (!created) session.manager.setTools(shape.tools);
    return session;
  }

  function remember(
    state: SessionState,
    agentMessages: readonly BaseMessage[],
    converted: readonly IdentifiedMessage[],
    hashes: readonly string[],
  ): void {
    converted.forEach((message, index) => {
      state.originals.set(message.id, { message: agentMessages[index]!, hash: hashes[index]! });
    });
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
      // Hashes are remembered by object: a message the manager still holds as it was given costs no hashing.
      if (original !== undefined && original.hash === cache.hash(message)) return [original.message];
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
    const { messages: converted, hashes } = cache.convert(next);
    remember(state, next, converted, hashes);
    session.keys = [...state.systemKeys, ...converted.map((message) => message.id)];
    return { messages: [new RemoveMessage({ id: removeAllMessages }), ...next] };
  }

  const middleware = createMiddleware({
    name: 'PrecisMiddleware',
    // The agent gets the expand tool with the middleware: stubs and summaries name it.
    tools: [createExpandTool({ archive, ...checked.expandOptions })],
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
        tools: toolDefinitionsOf(request.tools ?? []),
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
