/**
 * SWE-agent trajectories (`*.traj`): `{ environment, trajectory, history, info, replay_config? }`.
 *
 * `history` is the chat the model saw and is what we import; `trajectory` repeats the same steps in structured
 * form and is counted as ignored. In v0.x an assistant entry is a discussion plus one command in a ```` ``` ````
 * fence (also given as `thought` / `action`), and the next user entry is the observation followed by the
 * `(Open file: …)(Current directory: …) bash-$` prompt. The observation of the last action is never in the
 * history (it would have gone into the next query): it is taken from the trajectory's last step when that step
 * ran the same command (`submit` and its diff, most often); otherwise the call is left without a result.
 * Demonstrations (`is_demo`) were text the model read, never calls. 1.x histories with function calling carry
 * OpenAI `tool_calls` and `tool` entries with `tool_call_ids`. Entries of other agents than the first (v0.x
 * subroutines) are sidechains. The task's template lead-in (up to `ISSUE:`) and standing instructions
 * (`INSTRUCTIONS:` after the issue or challenge) are parts of their own around the request (`splitTaskTemplate`).
 */

import { isRecord } from '../../internal/json-shapes.js';
import type {
  AssistantContentPart,
  Conversation,
  JSONValue,
  Message,
  MessageMetadata,
} from '../../messages/types.js';
import {
  addNativeAssistant,
  addTextResult,
  addUserText,
  type TaskTemplate,
} from '../internal/builder-steps.js';
import { contentText, notTheFormat, readJsonDocument } from '../internal/record-readers.js';
import { createTranscriptBuilder } from '../internal/transcript-builder.js';
import type {
  ImportContext,
  ImportResult,
  TranscriptImporter,
  TranscriptMetadata,
} from '../transcript-importer.js';

const format = 'swe-agent';
/** SWE-agent's commands (`open`, `edit`, `submit`, ...) are shell functions: every action runs in its bash. */
const shellToolName = 'bash';

type Loose = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------------------------
// Splitting discussion and command

export interface ThoughtAndAction {
  thought: string;
  action: string;
}

const fenceLinePattern = /^```(\S*)[^\S\n]*(?:\n|$)/gm;

/**
 * The last top-level fenced block of a reply and the text around it, as SWE-agent's `ThoughtActionParser`
 * splits them: an opening fence is a line starting with ```` ``` ```` plus a word, a closing fence a bare
 * ```` ``` ```` line. Undefined when the reply has no complete block.
 */
export function splitThoughtAndAction(text: string): ThoughtAndAction | undefined {
  const stack: Array<{ start: number; end: number }> = [];
  let last: { open: { start: number; end: number }; close: { start: number; end: number } } | undefined;
  fenceLinePattern.lastIndex = 0;
  for (let match = fenceLinePattern.exec(text); match !== null; match = fenceLinePattern.exec(text)) {
    const fence = { start: match.index, end: match.index + match[0].length };
    if (stack.length > 0 && match[1] === '') {
      const open = stack.pop()!;
      if (stack.length === 0) last = { open, close: fence };
    } else {
      stack.push(fence);
    }
  }
  if (last === undefined) return undefined;
  return {
    thought: text.slice(0, last.open.start) + text.slice(last.close.end),
    action: text.slice(last.open.end, last.close.start),
  };
}

const sameCommand = (left: string, right: string) => left.trim() === right.trim();

// ---------------------------------------------------------------------------------------------------------------
// Detection

/** Keys outside any string: a key inside a JSON string would have an escaped quote. */
const historyKeyPattern = /[{,]\s*"history"\s*:\s*\[/;
const trajectoryKeyPattern = /[{,]\s*"trajectory"\s*:\s*\[/;
const trajectoryFirstPattern =
  /^\s*\{\s*(?:"environment"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*)?"trajectory"\s*:\s*\[/;
const stepKeysPattern = /[{,]\s*"observation"\s*:/;
/**
 * SWE-agent's task templates: the issue template's lead-in (`… Here's the issue text:` then `ISSUE:`), and the
 * blank line before the standing instructions of its issue and CTF templates.
 */
const taskTemplate: TaskTemplate = {
  requestStart:
    /^We're currently solving the following issue within our repository\. Here's the issue text:\s*\nISSUE:\n/,
  instructionsStart: /\n\n(?=INSTRUCTIONS:\n)/,
};

/** A history entry's `message_type` as SWE-agent writes it (its demonstrations are histories alone). */
const messageTypePattern =
  /[{,]\s*"message_type"\s*:\s*"(?:system_prompt|observation|action|thought|demonstration|user)"/;
const historyFirstPattern = /^\s*\{\s*"history"\s*:\s*\[/;

function detect(sample: { head: string; fileName?: string }): string | undefined {
  const { head } = sample;
  if (historyKeyPattern.test(head) && trajectoryKeyPattern.test(head))
    return 'has "history" and "trajectory" arrays (SWE-agent trajectory)';
  if (trajectoryFirstPattern.test(head) && stepKeysPattern.test(head))
    return 'starts with a "trajectory" of action/observation steps (SWE-agent trajectory)';
  if (historyFirstPattern.test(head) && messageTypePattern.test(head))
    return 'starts with a "history" of messages with SWE-agent message types (SWE-agent demonstration)';
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Parsing

interface Entry {
  record: number;
  raw: Loose;
}

function parse(text: string, context: ImportContext): ImportResult {
  const document = readJsonDocument(text, context, 'a SWE-agent trajectory');
  if (!isRecord(document) || !Array.isArray(document.history)) {
    throw notTheFormat(context, 'not a SWE-agent trajectory: expected an object with a "history" array');
  }
  const history = document.history as unknown[];
  const entries: Entry[] = [];
  let mainAgent: string | undefined;
  const sidechainEntries = new Map<string, Entry[]>();
  for (let record = 0; record < history.length; record++) {
    context.read();
    const raw = history[record];
    if (!isRecord(raw)) {
      context.malformed(`history entry ${record} is not an object`, { record });
      continue;
    }
    const agent = typeof raw.agent === 'string' ? raw.agent : undefined;
    mainAgent ??= agent;
    if (agent === undefined || agent === mainAgent || context.sidechains === 'include') {
      entries.push({ record, raw });
    } else if (context.sidechains === 'separate') {
      const list = sidechainEntries.get(agent) ?? [];
      list.push({ record, raw });
      sidechainEntries.set(agent, list);
    } else {
      context.ignore('sidechain');
    }
  }
  const steps = Array.isArray(document.trajectory) ? document.trajectory : [];
  const last = steps.at(-1);
  const finalStep =
    isRecord(last) && typeof last.action === 'string' && typeof last.observation === 'string'
      ? { index: steps.length - 1, action: last.action, observation: last.observation }
      : undefined;

  const metadata = metadataOf(document);
  const conversation: Conversation = { messages: importEntries(entries, mainAgent, context, finalStep) };
  if (steps.length > 0) {
    // The same steps as `history`, in structured form: reading both would count everything twice. Only the
    // last step's observation can be new.
    const finalStepUsed = conversation.messages.some(
      (message) => message.metadata?.trajectoryStep !== undefined,
    );
    context.read(steps.length);
    context.ignore('trajectory-duplicate', steps.length - (finalStepUsed ? 1 : 0));
  }
  if (metadata.model !== undefined) conversation.model = metadata.model;
  const result: ImportResult = { conversation, metadata };
  if (context.sidechains === 'separate' && sidechainEntries.size > 0) {
    result.sidechains = [...sidechainEntries.values()].map((list) => ({
      messages: importEntries(list, mainAgent, context),
    }));
  }
  return result;
}

/** A trajectory step: its command and what the command printed. */
interface FinalStep {
  index: number;
  action: string;
  observation: string;
}

/**
 * The entries as messages. The trajectory's last step (`finalStep`) answers the main agent's last call when the
 * history ends on that call and the step ran the same command; its result carries `metadata.trajectoryStep`.
 */
function importEntries(
  entries: Entry[],
  mainAgent: string | undefined,
  context: ImportContext,
  finalStep?: FinalStep,
): Message[] {
  // A chat history: a result after the next assistant message answers nothing the model saw.
  const builder = createTranscriptBuilder({
    origin: format,
    context,
    answerCallsUntil: 'next-assistant-message',
  });
  /** Per agent (subroutines interleave with `sidechains: 'include'`): the action the next user entry answers. */
  const awaiting = new Map<string | undefined, string>();
  /** The main agent's last entry when it was a call: the one the trajectory's last step may answer. */
  let lastCall: { toolCallId: string; command: string } | undefined;
  let taskSeen = false;

  for (const { record, raw } of entries) {
    const agent = typeof raw.agent === 'string' ? raw.agent : undefined;
    if (agent === mainAgent) lastCall = undefined;
    const answered = awaiting.get(agent);
    awaiting.delete(agent);
    const content = contentText(raw.content);
    if (content === undefined) {
      context.malformed(`history entry ${record} has no text content`, { record });
      continue;
    }
    if (content.otherParts > 0) {
      context.warn(`history entry ${record}: ${content.otherParts} non-text content part(s) not imported`, {
        record,
      });
    }
    const text = content.text;
    const metadata: MessageMetadata = { origin: format, record };
    const demo = raw.is_demo === true;
    if (demo) metadata.demo = true;
    if (agent !== undefined && agent !== mainAgent) metadata.agent = agent;

    switch (raw.role) {
      case 'system':
        builder.system(text, metadata);
        context.use();
        break;
      case 'user':
        if (answered !== undefined && !demo) {
          addTextResult(
            builder,
            context,
            { toolCallId: answered, toolName: shellToolName, text: text },
            metadata,
          );
        } else if (text === '') {
          context.ignore('empty-message');
        } else {
          addUserText(builder, text, metadata, demo || taskSeen ? undefined : taskTemplate);
          if (!demo) taskSeen = true;
          context.use();
        }
        break;
      case 'assistant': {
        if (!demo && Array.isArray(raw.tool_calls) && raw.tool_calls.length > 0) {
          addNativeAssistant(builder, context, raw, record, metadata, `history entry ${record}`);
          const [first] = raw.tool_calls as unknown[];
          if (
            agent === mainAgent &&
            isRecord(first) &&
            typeof first.id === 'string' &&
            typeof raw.action === 'string'
          )
            lastCall = { toolCallId: first.id, command: raw.action };
          break;
        }
        const split = demo ? undefined : actionOf(raw, text);
        if (split === undefined) {
          if (text === '') {
            context.ignore('empty-message');
            break;
          }
          builder.assistant(text, metadata);
          context.use();
          break;
        }
        const toolCallId = `call_${record}`;
        const parts: AssistantContentPart[] = [];
        const thought = split.thought.trim();
        if (thought !== '') parts.push({ type: 'text', text: thought });
        parts.push({
          type: 'tool-call',
          toolCallId,
          toolName: shellToolName,
          input: { command: split.action.replace(/\n$/, '') },
        });
        builder.assistant(parts, metadata);
        awaiting.set(agent, toolCallId);
        if (agent === mainAgent) lastCall = { toolCallId, command: split.action };
        context.use();
        break;
      }
      case 'tool': {
        const ids = Array.isArray(raw.tool_call_ids) ? raw.tool_call_ids : [raw.tool_call_id];
        const [toolCallId, ...others] = ids;
        if (typeof toolCallId !== 'string') {
          context.malformed(`tool entry ${record} has no "tool_call_ids"`, { record });
          break;
        }
        if (others.length > 0) {
          context.warn(`tool entry ${record} answers ${ids.length} calls; its text goes to the first`, {
            record,
          });
        }
        const toolName = builder.openCall(toolCallId)?.toolName ?? shellToolName;
        addTextResult(builder, context, { toolCallId: toolCallId, toolName: toolName, text: text }, metadata);
        break;
      }
      default:
        context.malformed(`history entry ${record} has unknown role ${JSON.stringify(raw.role)}`, { record });
    }
  }
  const open = lastCall === undefined ? undefined : builder.openCall(lastCall.toolCallId);
  if (open !== undefined && finalStep !== undefined && sameCommand(lastCall!.command, finalStep.action))
    addTextResult(
      builder,
      context,
      { toolCallId: open.toolCallId, toolName: open.toolName, text: finalStep.observation },
      { origin: format, trajectoryStep: finalStep.index },
    );
  return builder.finish();
}

/**
 * The discussion and command of a v0.x reply. The fenced block is what the agent parsed; when the entry's own
 * `action` disagrees with it (another parser was configured) the entry's `thought` / `action` win, and without
 * them the whole reply stays text beside the action, so nothing the model wrote is lost.
 */
function actionOf(raw: Loose, text: string): ThoughtAndAction | undefined {
  const recordedAction = typeof raw.action === 'string' ? raw.action : undefined;
  const split = splitThoughtAndAction(text);
  if (split !== undefined && (recordedAction === undefined || sameCommand(split.action, recordedAction))) {
    return recordedAction === undefined ? split : { thought: split.thought, action: recordedAction };
  }
  if (recordedAction === undefined || recordedAction.trim() === '') return undefined;
  const thought = typeof raw.thought === 'string' && text.startsWith(raw.thought) ? raw.thought : text;
  const rest = text.slice(thought.length);
  // Text after the thought that is not the command itself stays with the thought.
  const keepsRest = rest.trim() !== '' && !rest.includes(recordedAction.trim());
  return { thought: keepsRest ? text : thought, action: recordedAction };
}

function parseReplayConfig(value: unknown): Loose | undefined {
  if (isRecord(value)) return value;
  if (typeof value !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    return isRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function stringAt(value: unknown, ...path: string[]): string | undefined {
  let current = value;
  for (const key of path) {
    if (!isRecord(current)) return undefined;
    current = current[key];
  }
  return typeof current === 'string' && current !== '' ? current : undefined;
}

function metadataOf(document: Loose): TranscriptMetadata {
  const info = isRecord(document.info) ? document.info : {};
  const replay = parseReplayConfig(document.replay_config);
  const metadata: TranscriptMetadata = { format };
  const model =
    stringAt(info, 'model_name') ??
    stringAt(replay, 'agent', 'model', 'model_name') ??
    stringAt(replay, 'agent', 'model', 'name');
  if (model !== undefined) metadata.model = model;
  const extra: Record<string, JSONValue> = {};
  const instanceId =
    stringAt(info, 'instance_id') ??
    stringAt(replay, 'problem_statement', 'id') ??
    stringAt(replay, 'instance_filter');
  if (instanceId !== undefined) {
    extra.instanceId = instanceId;
    metadata.title = instanceId;
  }
  if (typeof info.exit_status === 'string') extra.exitStatus = info.exit_status;
  const version = stringAt(info, 'swe_agent_version');
  if (version !== undefined) extra.agentVersion = version;
  if (typeof document.environment === 'string') extra.environment = document.environment;
  if (isRecord(info.model_stats)) {
    const modelStats: Record<string, number> = {};
    for (const [key, value] of Object.entries(info.model_stats))
      if (typeof value === 'number') modelStats[key] = value;
    extra.modelStats = modelStats;
  }
  if (Object.keys(extra).length > 0) metadata.extra = extra;
  return metadata;
}

export const sweAgentImporter: TranscriptImporter = {
  format,
  description: 'SWE-agent trajectory (.traj: history + trajectory)',
  detect,
  parse,
};
