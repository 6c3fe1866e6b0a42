/**
 * mini-swe-agent trajectories (`*.traj.json`): `{ info, messages, trajectory_format, instance_id? }`.
 *
 * In 1.x (`mini-swe-agent-1`) the assistant writes a THOUGHT and exactly one fenced ```` ```bash ```` block; that
 * block is the action, and the next user message (`<returncode>…</returncode><output>…</output>`, or the timeout
 * notice) is its observation. A reply with zero or several blocks gets a format-error user message instead and
 * stays plain text. The run ends with the submission (the final diff), the submit command's result. 2.x
 * (`mini-swe-agent-1.1`) may use native `tool_calls` with `tool` results and ends with an `exit` message; its
 * text mode fences actions as ```` ```mswea_bash_command ````. The action regex configured in the trajectory wins.
 * The task's standing instructions (`<instructions>` after the PR description) are its second part, marked as
 * the request's expansion (`splitTaskTemplate`).
 */

import { isRecord } from '../../internal/json-shapes.js';
import type { AssistantContentPart, MessageMetadata } from '../../messages/types.js';
import {
  addNativeAssistant,
  addTextResult,
  addUserText,
  type TaskTemplate,
} from '../internal/builder-steps.js';
import {
  contentText,
  isoFromUnixSeconds,
  notTheFormat,
  readJsonDocument,
} from '../internal/record-readers.js';
import { createTranscriptBuilder } from '../internal/transcript-builder.js';
import type {
  ImportContext,
  ImportResult,
  TranscriptImporter,
  TranscriptMetadata,
} from '../transcript-importer.js';

const format = 'mini-swe-agent';
const shellToolName = 'bash';
/** First lines of the command output that end a run (1.x and 2.x spellings). */
const submitMarkers = ['COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT', 'MINI_SWE_AGENT_FINAL_OUTPUT'];
const returnCodePattern = /^\s*<returncode>(-?\d+)<\/returncode>/;
/** mini-swe-agent's task template: the blank line before its standing instructions. */
const taskTemplate: TaskTemplate = { instructionsStart: /\n\n(?=<instructions>\n)/ };

type Loose = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------------------------
// Finding the action in an assistant reply

export interface FencedAction {
  /** Offsets of the whole match (opening fence to closing fence) in the reply. */
  start: number;
  end: number;
  /** The command as the agent runs it (trimmed, as mini-swe-agent does). */
  command: string;
}

/** Finds actions in a reply; behaves like Python's `re.findall(pattern, text, re.DOTALL)` over the reply. */
export type ActionFinder = (text: string) => FencedAction[];

/** `` ```<language>\s*\n(.*?)\n``` `` (mini-swe-agent's default action regex), matched in linear time. */
export function fencedActionFinder(language: string): ActionFinder {
  const opener = '```' + language;
  return (text) => {
    const actions: FencedAction[] = [];
    let from = 0;
    for (;;) {
      const start = text.indexOf(opener, from);
      if (start === -1) break;
      // `\s*\n`: the whitespace after the opener must hold a newline; greedy, so content starts after its last one.
      let position = start + opener.length;
      let lastNewline = -1;
      let previousNewline = -1;
      while (position < text.length && /\s/.test(text[position]!)) {
        if (text[position] === '\n') {
          previousNewline = lastNewline;
          lastNewline = position;
        }
        position++;
      }
      if (lastNewline === -1) {
        from = start + opener.length;
        continue;
      }
      let contentStart = lastNewline + 1;
      let close = text.indexOf('\n```', contentStart);
      if (close === -1 && previousNewline !== -1 && text.startsWith('```', lastNewline + 1)) {
        // Backtracking gives `\s*` one newline less: an empty action closed by the last newline.
        contentStart = previousNewline + 1;
        close = lastNewline;
      }
      // No closing fence after this opener means none after any later opener either.
      if (close === -1) break;
      const end = close + 4;
      actions.push({ start, end, command: text.slice(contentStart, close).trim() });
      from = end;
    }
    return actions;
  };
}

const defaultFencePattern = /^```([\w.+-]*)\\s\*\\n\(\.\*\?\)\\n```$/;

/** The finder for a configured Python action regex: the usual fence shape natively, anything else as a JS RegExp. */
export function actionFinderFor(
  pattern: string | undefined,
  fallbackLanguage: string,
  context: ImportContext,
): ActionFinder {
  if (pattern === undefined) return fencedActionFinder(fallbackLanguage);
  const fence = defaultFencePattern.exec(pattern);
  if (fence !== null) return fencedActionFinder(fence[1]!);
  let regex: RegExp;
  try {
    regex = new RegExp(pattern, 'gs');
  } catch {
    context.warn(
      `action_regex ${JSON.stringify(pattern)} is not a JavaScript regex; using \`\`\`${fallbackLanguage} fences`,
    );
    return fencedActionFinder(fallbackLanguage);
  }
  return (text) =>
    [...text.matchAll(regex)].map((match) => ({
      start: match.index,
      end: match.index + match[0].length,
      command: (match[1] ?? match[0]).trim(),
    }));
}

/** The literal start of a Jinja template (before its first tag), to recognise messages rendered from it. */
function templatePrefix(template: unknown): string | undefined {
  if (typeof template !== 'string') return undefined;
  const tag = template.search(/\{\{|\{%/);
  const prefix = (tag === -1 ? template : template.slice(0, tag)).trim();
  return prefix.length >= 12 ? prefix : undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Detection

const trajectoryFormatPattern = /"trajectory_format"\s*:\s*"mini-swe-agent[^"]*"/;
const infoFirstPattern = /^\s*\{\s*"info"\s*:\s*\{/;
const infoExitStatusFirstPattern = /^\s*\{\s*"info"\s*:\s*\{\s*"exit_status"\s*:/;
const miniVersionPattern = /[{,]\s*"mini_version"\s*:/;

function detect(sample: { head: string; fileName?: string }): string | undefined {
  const { head } = sample;
  const declared = trajectoryFormatPattern.exec(head);
  if (declared !== null) return `has ${declared[0]}`;
  if (infoFirstPattern.test(head) && miniVersionPattern.test(head))
    return 'starts with "info" that has "mini_version"';
  if (infoExitStatusFirstPattern.test(head))
    return 'starts with {"info": {"exit_status": ...} (mini-swe-agent trajectory)';
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Parsing

interface Settings {
  findActions: ActionFinder;
  formatErrorPrefix: string | undefined;
  submission: string | undefined;
}

function settingsOf(document: Loose, context: ImportContext): Settings {
  const info = isRecord(document.info) ? document.info : {};
  const config = isRecord(info.config) ? info.config : {};
  const agent = isRecord(config.agent) ? config.agent : {};
  const model = isRecord(config.model) ? config.model : {};
  const version = typeof info.mini_version === 'string' ? info.mini_version : '';
  const isVersion2 = document.trajectory_format === 'mini-swe-agent-1.1' || /^[2-9]\./.test(version);
  const pattern = [model.action_regex, agent.action_regex].find((value) => typeof value === 'string') as
    | string
    | undefined;
  return {
    findActions: actionFinderFor(pattern, isVersion2 ? 'mswea_bash_command' : 'bash', context),
    formatErrorPrefix: templatePrefix(model.format_error_template ?? agent.format_error_template),
    submission: typeof info.submission === 'string' ? info.submission : undefined,
  };
}

function metadataOf(document: Loose, firstModel: string | undefined): TranscriptMetadata {
  const info = isRecord(document.info) ? document.info : {};
  const config = isRecord(info.config) ? info.config : {};
  const model = isRecord(config.model) ? config.model : {};
  const environment = isRecord(config.environment) ? config.environment : {};
  const metadata: TranscriptMetadata = { format };
  const modelName = typeof model.model_name === 'string' ? model.model_name : firstModel;
  if (modelName !== undefined) metadata.model = modelName;
  if (typeof environment.cwd === 'string') metadata.cwd = environment.cwd;
  const extra: NonNullable<TranscriptMetadata['extra']> = {};
  if (typeof document.instance_id === 'string') {
    extra.instanceId = document.instance_id;
    metadata.title = document.instance_id;
  }
  if (typeof info.exit_status === 'string') extra.exitStatus = info.exit_status;
  if (typeof info.mini_version === 'string') extra.agentVersion = info.mini_version;
  if (typeof document.trajectory_format === 'string') extra.trajectoryFormat = document.trajectory_format;
  if (typeof config.agent_type === 'string') extra.agentType = config.agent_type;
  if (isRecord(info.model_stats)) {
    const stats = info.model_stats;
    const modelStats: Record<string, number> = {};
    for (const [key, value] of Object.entries(stats)) if (typeof value === 'number') modelStats[key] = value;
    extra.modelStats = modelStats;
  }
  if (Object.keys(extra).length > 0) metadata.extra = extra;
  return metadata;
}

/** 1.x keeps the raw model response in `extra.response` (`created` is the only timestamp); 2.x has `extra.timestamp`. */
function timestampOf(raw: Loose): string | undefined {
  const extra = isRecord(raw.extra) ? raw.extra : undefined;
  if (extra === undefined) return undefined;
  const response = isRecord(extra.response) ? extra.response : undefined;
  return isoFromUnixSeconds(extra.timestamp) ?? isoFromUnixSeconds(response?.created);
}

function responseModelOf(raw: Loose): string | undefined {
  const extra = isRecord(raw.extra) ? raw.extra : undefined;
  const response = isRecord(extra?.response) ? extra.response : undefined;
  return typeof response?.model === 'string' ? response.model : undefined;
}

function parse(text: string, context: ImportContext): ImportResult {
  const document = readJsonDocument(text, context, 'a mini-swe-agent trajectory');
  if (!isRecord(document) || !Array.isArray(document.messages)) {
    throw notTheFormat(
      context,
      'not a mini-swe-agent trajectory: expected an object with a "messages" array',
    );
  }
  const settings = settingsOf(document, context);
  const records = document.messages as unknown[];
  // A chat history: a result after the next assistant message answers nothing the model saw.
  const builder = createTranscriptBuilder({
    origin: format,
    context,
    answerCallsUntil: 'next-assistant-message',
  });
  const timestamps: string[] = [];
  let firstModel: string | undefined;
  let taskSeen = false;
  /** The text action of the previous assistant reply, which the next user message answers. */
  let awaiting: { toolCallId: string; command: string } | undefined;

  const isSubmission = (record: number, content: string, action: { command: string } | undefined) => {
    const last = record === records.length - 1;
    if (last && settings.submission !== undefined && content === settings.submission) return true;
    return (
      action !== undefined &&
      submitMarkers.some((marker) => action.command.includes(marker)) &&
      !returnCodePattern.test(content)
    );
  };

  for (let record = 0; record < records.length; record++) {
    context.read();
    const raw = records[record];
    const answered = awaiting;
    awaiting = undefined;
    if (!isRecord(raw)) {
      context.malformed(`message ${record} is not an object`, { record });
      continue;
    }
    const role = raw.role;
    const content = contentText(raw.content);
    if (content === undefined) {
      context.malformed(`message ${record} has no text content`, { record });
      continue;
    }
    if (content.otherParts > 0) {
      context.warn(`message ${record}: ${content.otherParts} non-text content part(s) not imported`, {
        record,
      });
    }
    const metadata: MessageMetadata = { origin: format, record };
    const timestamp = timestampOf(raw);
    if (timestamp !== undefined) {
      metadata.timestamp = timestamp;
      timestamps.push(timestamp);
    }
    const text = content.text;

    if (role === 'system') {
      builder.system(text, metadata);
      context.use();
    } else if (role === 'user' || role === 'exit') {
      if (role === 'exit' || isSubmission(record, text, answered)) metadata.exit = true;
      // A 1.x submission (the final diff) is what the submit command printed: its result, though the harness
      // logged it without a return code. A 2.x `exit` message, or an empty one, is the harness's, not the command's.
      if (answered !== undefined && role === 'user' && (metadata.exit !== true || text !== '')) {
        const exitCode = returnCodePattern.exec(text);
        if (exitCode !== null) metadata.exitCode = Number(exitCode[1]);
        addTextResult(
          builder,
          context,
          { toolCallId: answered.toolCallId, toolName: shellToolName, text: text },
          metadata,
        );
      } else if (text === '') {
        context.ignore('empty-message');
      } else {
        // The harness's complaint about a reply's format, written in the user's place: it instructs nothing, and
        // it is an error the agent saw.
        const prefix = settings.formatErrorPrefix;
        if (taskSeen && prefix !== undefined && text.startsWith(prefix)) {
          metadata.harness = true;
          metadata.formatError = true;
        }
        addUserText(builder, text, metadata, taskSeen ? undefined : taskTemplate);
        taskSeen = true;
        context.use();
      }
    } else if (role === 'assistant') {
      firstModel ??= responseModelOf(raw);
      if (Array.isArray(raw.tool_calls) && raw.tool_calls.length > 0) {
        addNativeAssistant(builder, context, raw, record, metadata, `message ${record}`);
        continue;
      }
      const next = records[record + 1];
      const nextText = isRecord(next) ? contentText(next.content)?.text : undefined;
      const prefix = settings.formatErrorPrefix;
      const rejected = prefix !== undefined && nextText?.startsWith(prefix) === true;
      const actions = settings.findActions(text);
      const action = actions.length === 1 && !rejected ? actions[0]! : undefined;
      if (action === undefined) {
        if (text === '') {
          context.ignore('empty-message');
          continue;
        }
        builder.assistant(text, metadata);
        context.use();
        continue;
      }
      const toolCallId = `call_${record}`;
      const parts: AssistantContentPart[] = [];
      const before = text.slice(0, action.start).trimEnd();
      const after = text.slice(action.end).trim();
      if (before !== '') parts.push({ type: 'text', text: before });
      parts.push({
        type: 'tool-call',
        toolCallId,
        toolName: shellToolName,
        input: { command: action.command },
      });
      if (after !== '') parts.push({ type: 'text', text: after });
      builder.assistant(parts, metadata);
      awaiting = { toolCallId, command: action.command };
      context.use();
    } else if (role === 'tool') {
      const toolCallId = raw.tool_call_id;
      if (typeof toolCallId !== 'string') {
        context.malformed(`tool message ${record} has no "tool_call_id"`, { record });
        continue;
      }
      const exitCode = returnCodePattern.exec(text);
      if (exitCode !== null) metadata.exitCode = Number(exitCode[1]);
      const toolName = builder.openCall(toolCallId)?.toolName ?? shellToolName;
      addTextResult(builder, context, { toolCallId: toolCallId, toolName: toolName, text: text }, metadata);
    } else {
      context.malformed(`message ${record} has unknown role ${JSON.stringify(role)}`, { record });
    }
  }

  const metadata = metadataOf(document, firstModel);
  if (timestamps.length > 0) {
    metadata.startedAt = timestamps[0]!;
    metadata.endedAt = timestamps[timestamps.length - 1]!;
  }
  const conversation: ImportResult['conversation'] = { messages: builder.finish() };
  if (metadata.model !== undefined) conversation.model = metadata.model;
  return { conversation, metadata };
}

export const miniSweAgentImporter: TranscriptImporter = {
  format,
  description: 'mini-swe-agent trajectory (.traj.json)',
  detect,
  parse,
};
