import { asSchema, type LanguageModel, type ModelMessage, type Tool } from 'ai';
import type { ArchiveStore } from '../../archive/archive-store.js';
import { InvalidArgumentError } from '../../errors/index.js';
import { describeValue } from '../../internal/json-shapes.js';
import { stripPrecisFields } from '../../messages/ids.js';
import type { JSONValue, ToolDefinition } from '../../messages/types.js';
import {
  checkIntegrationOptions,
  createConversationSessions,
  createManager,
  type IntegrationOptions,
  messagesWithinCeiling,
} from '../conversation-sessions.js';
import { createExpandTool, type ExpandToolInput } from './expand-tool.js';
import { createPromptKeyCache } from './prompt-key-cache.js';

export interface CompactStepOptions extends IntegrationOptions {
  /**
   * The tools passed to `generateText` / `streamText`, so their schemas are counted off the window
   * (`prepareStep` is not told them). The expand tool of the result is counted on its own.
   */
  tools?: Record<string, Tool>;
}

/** What `compactStep` is handed: the part of the AI SDK's `prepareStep` options it reads. */
export interface CompactStepInput {
  messages: ModelMessage[];
  model: LanguageModel;
}

export interface CompactStep {
  (input: CompactStepInput): Promise<{ messages: ModelMessage[] }>;
  /** Where compacted originals go; what the expand tool reads. */
  readonly archive: ArchiveStore;
  /** `{ expand_context }`, to spread into `tools`. */
  readonly tools: { expand_context: Tool<ExpandToolInput, string> };
}

function toolDefinitionsOf(tools: Record<string, Tool>): ToolDefinition[] {
  return Object.entries(tools).map(([name, tool]) => {
    const schema = tool.inputSchema === undefined ? undefined : asSchema(tool.inputSchema).jsonSchema;
    // A schema that resolves asynchronously is counted as an empty one rather than delaying every step.
    const inputSchema = schema === undefined || 'then' in schema ? {} : (schema as JSONValue);
    return {
      name,
      ...(tool.description === undefined ? {} : { description: tool.description }),
      inputSchema,
    };
  });
}

function modelIdOf(model: LanguageModel): string {
  return typeof model === 'string' ? model : model.modelId;
}

/**
 * A `prepareStep` for `generateText` / `streamText` / agents that sends each step the conversation kept
 * inside the context by a `ContextManager` (one per conversation, followed incrementally by prefix). The
 * window comes from `budget`, `model` or `contextWindow`, or else from the step's model id. Each step's
 * messages are checked and hashed only past what they share with an earlier step's: treat them as immutable.
 *
 * @example
 * const step = compactStep({ model: 'gpt-4o', tools });
 * await generateText({ model, tools: { ...tools, ...step.tools }, prepareStep: step, stopWhen: stepCountIs(200), prompt });
 *
 * @throws InvalidArgumentError naming the option when an option is out of range (at creation)
 */
export function compactStep(options: CompactStepOptions = {}): CompactStep {
  const { tools = {}, ...rest } = options ?? {};
  if (typeof tools !== 'object' || tools === null || Array.isArray(tools))
    throw new InvalidArgumentError('tools', `expected a record of AI SDK tools, got ${describeValue(tools)}`);
  const checked = checkIntegrationOptions(rest);
  const { archive } = checked.managerOptions;
  const expandTool = createExpandTool({ archive, ...checked.expandOptions });
  const toolDefinitions = toolDefinitionsOf({ ...tools, expand_context: expandTool });
  const sessions = createConversationSessions(checked.maxConversations);
  // Each step resends the whole conversation: only the messages not seen before are checked and hashed.
  const prompts = createPromptKeyCache({ maxPrompts: checked.maxConversations });

  async function step({ messages, model }: CompactStepInput): Promise<{ messages: ModelMessage[] }> {
    const { messages: parsed, keys } = prompts.read(messages);
    const session = sessions.resolve(keys, parsed, (initial) =>
      createManager(checked, checked.window ?? { model: modelIdOf(model) }, initial, toolDefinitions),
    );
    const compacted = await messagesWithinCeiling(checked, session.manager);
    if (session.manager.stats().compactions === 0) return { messages };
    return { messages: stripPrecisFields(compacted) as ModelMessage[] };
  }

  return Object.assign(step, { archive, tools: { expand_context: expandTool } });
}
