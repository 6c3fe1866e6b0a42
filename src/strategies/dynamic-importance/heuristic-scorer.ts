import { stringValues } from '../../internal/json-strings.js';
import { exitCodeOf, normaliseToolName, recogniseToolCall } from '../../ledger/index.js';
import {
  contentParts,
  isErrorOutput,
  isOriginalRequest,
  toolCallsOf,
  toolOutputText,
} from '../../messages/content.js';
import type { IdentifiedMessage, JSONValue, Message, ToolCallPart } from '../../messages/types.js';
import { firstErrorLine } from '../stub-tool-outputs/tool-output-gist.js';
import {
  type HeuristicImportanceScorer,
  higherLevel,
  type ImportanceInput,
  type ImportanceLevel,
  type ImportanceScoring,
  importanceRank,
  isImportanceLevel,
  type MessageImportance,
} from './importance-levels.js';

export interface HeuristicImportanceOptions {
  /** Share of the conversation, from its end, whose messages are at least `medium`. @default 0.2 */
  recentShare?: number;
  /** Later messages referencing a message's paths or identifiers that make it `high`. @default 3 */
  highReferenceCount?: number;
}

/**
 * The deterministic importance scorer: no LLM, the same levels for the same conversation. Signals, each with
 * the reason it gives:
 * - references from later turns to the paths and identifiers a message offers (a read file's path, the
 *   functions and classes a tool output defines, backticked names in prose): a path edited later makes a
 *   message `high`, as do `highReferenceCount` referencing messages; one or two make it `medium`;
 * - errors: a failed tool result not followed by a success of the same command is `high`; one fixed later is
 *   `medium` (its stub keeps the error line);
 * - decisions (cue sentences such as "decided", "instead of", "because") and edits are `high`;
 * - user messages are instructions (`high`); the one the goal comes from is `critical`; acknowledgements and
 *   pleasantries ("thanks!", "Sure, happy to help") are `droppable`, short go-aheads ("continue") `low`;
 * - messages mentioning the goal's paths or identifiers are at least `medium`, as are recent ones (the last
 *   `recentShare` of the conversation); anything else is `low`.
 * Messages an earlier run of `dynamicImportance` rewrote keep the level recorded on them, and their recorded
 * references still count, so scoring the compacted conversation gives the same levels again.
 */
export function createHeuristicImportanceScorer(
  options: HeuristicImportanceOptions = {},
): HeuristicImportanceScorer {
  const { recentShare = 0.2, highReferenceCount = 3 } = options;
  return {
    type: 'heuristic',
    name: 'heuristic',
    score: (input) => scoreHeuristically(input, { recentShare, highReferenceCount }),
  };
}

// ------------------------------------------------------------------------------------------- features

/** What one message offers to later messages and what it says, as keys (`p:` paths, `i:` identifiers, `c:` commands). */
export interface MessageFeatures {
  /** Keys later messages may reference, with the text to show in a reason. */
  offers: Map<string, string>;
  /** Offered keys (of any message) this message mentions. */
  mentions: Set<string>;
  /** Path keys this message's tool calls change. */
  edited: Map<string, string>;
  /** Command keys whose result here succeeded. */
  succeeded: Set<string>;
  /** Command keys whose result here failed, with the error line. */
  failed: Map<string, string>;
  decision?: string;
  kind: 'chit-chat' | 'go-ahead' | 'instruction' | 'other';
  /** Messages this one stands for: a drop marker stands for the messages it replaced. */
  weight: number;
  /** A level an earlier run recorded on the message. */
  recorded?: { level: ImportanceLevel; reason: string };
}

/** What `dynamicImportance` records in `metadata.importance` of a message it rewrites or a marker it adds. */
export interface RecordedImportance {
  level: ImportanceLevel;
  reason: string;
  offers: Array<[string, string]>;
  mentions: string[];
  edited: Array<[string, string]>;
  succeeded: string[];
  failed: Array<[string, string]>;
  weight: number;
}

const genericBasenames = new Set([
  'index',
  'main',
  'mod',
  'lib',
  'utils',
  'util',
  'types',
  'readme',
  'package',
  'setup',
  'config',
  'test',
  'tests',
  '__init__',
  'init',
  'app',
]);
const pathPattern =
  /(?:~|\.{1,2})?\/?(?:[\w.@-]+\/)+[\w.@-]+|\b[\w-]+\.(?:tsx?|jsx?|mjs|cjs|py|rs|go|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|json|ya?ml|toml|md|txt|sh|css|scss|html|sql|cfg|ini|xml)\b/g;
const definitionPattern =
  /\b(?:function|class|def|interface|type|const|let|var|enum|struct|fn|func|trait|module)\s+([A-Za-z_$][\w$]{3,})/g;
const backtickedPattern = /`([A-Za-z_$][\w$.]{3,})`/g;
const wordPattern = /[A-Za-z_$][\w$]{3,}/g;
const decisionPattern =
  /\b(?:decided|decision|instead of|chose|choose to|going with|opted|(?:I|we)(?:'ll| will) use|the fix is|root cause|because|trade-?off)\b/i;
const chitChatPattern =
  /^\s*(?:thanks?|thank you|ok(?:ay)?|great|perfect|awesome|cool|nice|sure|got it|sounds good|you'?re welcome|no problem|happy to help|glad|hello|hi|hey|yes|yep|lgtm|good job|well done|excellent)\b/i;
const goAheadPattern = /^\s*(?:continue|go on|go ahead|proceed|keep going|next|and now\??|do it)\W*$/i;
const maxOffers = 60;
const maxRecorded = 200;

/** `a/b/src/x.ts` → `src/x.ts`: two segments tell files apart across absolute and relative spellings. */
function pathKeys(path: string): string[] {
  const segments = path
    .replace(/^[~.]*\/+/, '')
    .split('/')
    .filter((segment) => segment !== '' && segment !== '.');
  if (segments.length === 0) return [];
  const base = segments.at(-1)!;
  const keys = [`p:${segments.slice(-2).join('/')}`];
  const stem = base.replace(/\.[^.]*$/, '').toLowerCase();
  // A bare file name matches too, unless it is one every project has.
  if (segments.length > 1 && !genericBasenames.has(stem) && base.includes('.')) keys.push(`p:${base}`);
  return keys;
}

function looksLikePath(token: string): boolean {
  return !/^https?:|^\/\/|^[\d.]+$/.test(token) && /[A-Za-z]/.test(token);
}

interface MessageText {
  /** Prose: user and assistant text. */
  prose: string;
  /** Everything model-visible: prose, tool inputs and outputs. */
  all: string;
}

function textsOf(message: Message): MessageText {
  const prose: string[] = [];
  const all: string[] = [];
  for (const part of contentParts(message)) {
    if (part.type === 'text') {
      prose.push(part.text);
      all.push(part.text);
    } else if (part.type === 'reasoning') all.push(part.text);
    else if (part.type === 'tool-call') all.push(...stringValues(part.input));
    else if (part.type === 'tool-result') all.push(toolOutputText(part.output));
  }
  return { prose: prose.join('\n'), all: all.join('\n') };
}

function addPathOffers(text: string, offers: Map<string, string>): void {
  for (const match of text.matchAll(pathPattern)) {
    if (offers.size >= maxOffers) return;
    const path = match[0].replace(/[.,:;]+$/, '');
    if (!looksLikePath(path)) continue;
    for (const key of pathKeys(path)) if (!offers.has(key)) offers.set(key, `path ${path}`);
  }
}

/** The command a tool call runs, as a key results of the same command share. */
function commandKey(call: Pick<ToolCallPart, 'toolName' | 'input'>): string {
  const recognised = recogniseToolCall(call.toolName, call.input);
  if (recognised.command !== undefined) return `c:${recognised.command.text}`;
  const file = recognised.files[0];
  if (file !== undefined) return `c:${normaliseToolName(call.toolName)} ${file.path}`;
  return `c:${normaliseToolName(call.toolName)} ${JSON.stringify(call.input ?? null).slice(0, 200)}`;
}

function firstSentence(text: string, pattern: RegExp): string | undefined {
  for (const sentence of text.split(/(?<=[.!?])\s+|\n+/)) {
    if (pattern.test(sentence)) {
      const trimmed = sentence.trim().replace(/\s+/g, ' ');
      return trimmed.length <= 160 ? trimmed : `${trimmed.slice(0, 159)}…`;
    }
  }
  return undefined;
}

function kindOf(message: Message, text: MessageText, offers: Map<string, string>): MessageFeatures['kind'] {
  const hasTools = contentParts(message).some(
    (part) => part.type === 'tool-call' || part.type === 'tool-result',
  );
  if (message.role === 'tool' || hasTools) return 'other';
  const prose = text.prose.trim();
  if (prose.length < 200 && offers.size === 0 && chitChatPattern.test(prose) && !/\d|`/.test(prose))
    return 'chit-chat';
  if (message.role === 'user') return goAheadPattern.test(prose) ? 'go-ahead' : 'instruction';
  return 'other';
}

function recordedOf(message: Message): RecordedImportance | undefined {
  const value = message.metadata?.importance;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const record = value as Record<string, JSONValue>;
  if (!isImportanceLevel(record.level) || typeof record.reason !== 'string') return undefined;
  const pairs = (entry: JSONValue | undefined): Array<[string, string]> =>
    Array.isArray(entry)
      ? entry.filter(
          (pair): pair is [string, string] =>
            Array.isArray(pair) && typeof pair[0] === 'string' && typeof pair[1] === 'string',
        )
      : [];
  const strings = (entry: JSONValue | undefined): string[] =>
    Array.isArray(entry) ? entry.filter((item): item is string => typeof item === 'string') : [];
  return {
    level: record.level,
    reason: record.reason,
    offers: pairs(record.offers),
    mentions: strings(record.mentions),
    edited: pairs(record.edited),
    succeeded: strings(record.succeeded),
    failed: pairs(record.failed),
    weight: typeof record.weight === 'number' && record.weight >= 1 ? record.weight : 1,
  };
}

/**
 * The features of every message: what each offers, mentions (of what any message offers), edits, ran.
 * Messages carrying a recorded importance give their recorded features instead of their (shortened) text's.
 */
export function messageFeatures(messages: readonly IdentifiedMessage[]): MessageFeatures[] {
  const calls = new Map<string, ToolCallPart>();
  for (const message of messages)
    for (const call of toolCallsOf(message))
      if (!calls.has(call.toolCallId)) calls.set(call.toolCallId, call);
  const texts: MessageText[] = [];
  const features = messages.map((message): MessageFeatures => {
    const text = textsOf(message);
    texts.push(text);
    const recorded = recordedOf(message);
    if (recorded !== undefined)
      return {
        offers: new Map(recorded.offers),
        mentions: new Set(recorded.mentions),
        edited: new Map(recorded.edited),
        succeeded: new Set(recorded.succeeded),
        failed: new Map(recorded.failed),
        kind: 'other',
        weight: recorded.weight,
        recorded: { level: recorded.level, reason: recorded.reason },
      };
    const offers = new Map<string, string>();
    const edited = new Map<string, string>();
    const succeeded = new Set<string>();
    const failed = new Map<string, string>();
    for (const part of contentParts(message)) {
      if (part.type === 'tool-call') {
        for (const file of recogniseToolCall(part.toolName, part.input).files) {
          for (const key of pathKeys(file.path)) {
            if (!offers.has(key)) offers.set(key, `path ${file.path}`);
            if (file.kind !== 'read' && !edited.has(key)) edited.set(key, file.path);
          }
        }
      } else if (part.type === 'tool-result') {
        const call = calls.get(part.toolCallId);
        const output = toolOutputText(part.output);
        if (call !== undefined) {
          for (const file of recogniseToolCall(call.toolName, call.input).files)
            for (const key of pathKeys(file.path)) if (!offers.has(key)) offers.set(key, `path ${file.path}`);
          const key = commandKey(call);
          const exitCode = exitCodeOf(output);
          if (isErrorOutput(part.output) || (exitCode !== undefined && exitCode !== 0))
            failed.set(key, firstErrorLine(output) ?? output.trim().split('\n')[0]?.slice(0, 160) ?? '');
          else succeeded.add(key);
        }
        for (const match of output.matchAll(definitionPattern)) {
          if (offers.size >= maxOffers) break;
          const name = match[1]!;
          if (!offers.has(`i:${name}`)) offers.set(`i:${name}`, `identifier ${name}`);
        }
      }
    }
    addPathOffers(text.prose, offers);
    for (const match of text.prose.matchAll(backtickedPattern)) {
      if (offers.size >= maxOffers) break;
      const name = match[1]!.replace(/\.$/, '');
      if (!name.includes('/') && !offers.has(`i:${name}`)) offers.set(`i:${name}`, `identifier ${name}`);
    }
    const kind = kindOf(message, text, offers);
    const decision =
      message.role === 'assistant' && kind !== 'chit-chat'
        ? firstSentence(text.prose, decisionPattern)
        : undefined;
    return {
      offers,
      mentions: new Set(),
      edited,
      succeeded,
      failed,
      ...(decision === undefined ? {} : { decision }),
      kind,
      weight: 1,
    };
  });
  // Mentions: only keys some message offers, so a huge output costs one scan and no memory.
  const offered = new Set<string>();
  for (const feature of features) for (const key of feature.offers.keys()) offered.add(key);
  features.forEach((feature, index) => {
    if (feature.recorded !== undefined) return;
    const text = texts[index]!.all;
    for (const match of text.matchAll(pathPattern))
      for (const key of pathKeys(match[0].replace(/[.,:;]+$/, '')))
        if (offered.has(key)) feature.mentions.add(key);
    for (const match of text.matchAll(wordPattern)) {
      const key = `i:${match[0]}`;
      if (offered.has(key)) feature.mentions.add(key);
    }
    for (const key of feature.edited.keys()) feature.mentions.add(key);
  });
  return features;
}

/** The features of `messages` (one message, or the span a marker replaces) to record on what replaces them. */
export function recordFeatures(
  features: readonly MessageFeatures[],
  level: ImportanceLevel,
  reason: string,
): RecordedImportance {
  const offers = new Map<string, string>();
  const mentions = new Set<string>();
  const edited = new Map<string, string>();
  const succeeded = new Set<string>();
  const failed = new Map<string, string>();
  let weight = 0;
  for (const feature of features) {
    for (const [key, label] of feature.offers) if (!offers.has(key)) offers.set(key, label);
    for (const key of feature.mentions) mentions.add(key);
    for (const [key, path] of feature.edited) if (!edited.has(key)) edited.set(key, path);
    for (const key of feature.succeeded) succeeded.add(key);
    for (const [key, line] of feature.failed) if (!failed.has(key)) failed.set(key, line);
    weight += feature.weight;
  }
  const cap = <T>(items: Iterable<T>) => [...items].slice(0, maxRecorded);
  return {
    level,
    reason,
    offers: cap(offers),
    mentions: cap(mentions),
    edited: cap(edited),
    succeeded: cap(succeeded),
    failed: cap(failed),
    weight,
  };
}

// ------------------------------------------------------------------------------------------- scoring

interface Settings {
  recentShare: number;
  highReferenceCount: number;
}

/** Start of the group (an assistant message and its tool messages) each message belongs to. */
function groupStarts(messages: readonly Message[]): number[] {
  const starts: number[] = [];
  let start = 0;
  messages.forEach((message, index) => {
    if (message.role !== 'tool') start = index;
    starts.push(start);
  });
  return starts;
}

/** The user message the goal comes from: the last user request, else the first user message. */
export function goalSourceIndex(
  messages: readonly IdentifiedMessage[],
  features: readonly MessageFeatures[] = messageFeatures(messages),
): number | undefined {
  let first: number | undefined;
  let last: number | undefined;
  messages.forEach((message, index) => {
    if (!isOriginalRequest(message) || features[index]?.recorded !== undefined) return;
    first ??= index;
    if (features[index]?.kind === 'instruction') last = index;
  });
  return last ?? first;
}

function scoreHeuristically(input: ImportanceInput, settings: Settings): ImportanceScoring {
  const { messages, candidates, goal } = input;
  const features = messageFeatures(messages);
  const starts = groupStarts(messages);
  const goalSource = goalSourceIndex(messages, features);
  const goalFeatures = messageFeatures([{ id: 'goal', role: 'user', content: goal }])[0]!;
  const goalKeys = new Set(goalFeatures.offers.keys());

  // Position from the end, counting what markers stand for, so dropping messages does not make others older.
  const weightAfter: number[] = new Array(messages.length).fill(0);
  let totalWeight = 0;
  for (let index = messages.length - 1; index >= 0; index--) {
    weightAfter[index] = totalWeight;
    totalWeight += features[index]!.weight;
  }
  // Later messages mentioning each key, and where each key was edited and each command succeeded.
  const mentionedAt = new Map<string, number[]>();
  const editedAt = new Map<string, number[]>();
  const succeededAt = new Map<string, number[]>();
  const push = (map: Map<string, number[]>, key: string, index: number) => {
    const list = map.get(key);
    if (list === undefined) map.set(key, [index]);
    else list.push(index);
  };
  features.forEach((feature, index) => {
    for (const key of feature.mentions) push(mentionedAt, key, index);
    for (const key of feature.edited.keys()) push(editedAt, key, index);
    for (const key of feature.succeeded) push(succeededAt, key, index);
  });
  const laterThan = (list: number[] | undefined, index: number) =>
    list === undefined ? [] : list.filter((at) => at > index && starts[at] !== starts[index]);

  const scores = candidates.map((index): MessageImportance => {
    const message = messages[index]!;
    const feature = features[index]!;
    const id = message.id;
    if (feature.recorded !== undefined)
      return {
        id,
        index,
        level: feature.recorded.level,
        reason: feature.recorded.reason,
        source: 'recorded',
      };
    let level: ImportanceLevel = 'low';
    let reason = 'nothing later refers to it';
    const raise = (candidate: ImportanceLevel, why: string) => {
      if (importanceRank(candidate) > importanceRank(level)) {
        level = candidate;
        reason = why;
      }
    };
    if (feature.kind === 'chit-chat')
      return {
        id,
        index,
        level: 'droppable',
        reason: 'chit-chat: no instruction, path, error or decision',
        source: 'heuristic',
      };
    if (index === goalSource) raise('critical', 'the current goal (the last user request)');
    else if (feature.kind === 'instruction') raise('high', 'user instruction');
    else if (feature.kind === 'go-ahead') reason = 'short go-ahead from the user';
    for (const [key, line] of feature.failed) {
      const fixedAt = laterThan(succeededAt.get(key), index)[0];
      if (fixedAt === undefined) raise('high', `error not fixed later: ${line}`);
      else raise('medium', `error fixed later (message ${fixedAt}): ${line}`);
    }
    if (feature.decision !== undefined) raise('high', `decision: ${feature.decision}`);
    if (feature.edited.size > 0)
      raise('high', `edits ${[...feature.edited.values()].slice(0, 3).join(', ')}`);
    let bestKey: string | undefined;
    let bestCount = 0;
    const referencing = new Set<number>();
    for (const key of feature.offers.keys()) {
      const later = laterThan(mentionedAt.get(key), index);
      for (const at of later) referencing.add(at);
      if (later.length > bestCount) {
        bestCount = later.length;
        bestKey = key;
      }
      const edits = laterThan(editedAt.get(key), index);
      if (edits.length > 0 && !feature.edited.has(key))
        raise(
          'high',
          `${feature.offers.get(key)} edited later (message ${edits[0]}) and referenced by ${later.length} later ${later.length === 1 ? 'message' : 'messages'}`,
        );
    }
    if (bestKey !== undefined) {
      const count = referencing.size;
      const why = `${feature.offers.get(bestKey)} referenced by ${bestCount} later ${bestCount === 1 ? 'message' : 'messages'}${count > bestCount ? ` (${count} with its other names)` : ''}`;
      raise(count >= settings.highReferenceCount ? 'high' : 'medium', why);
    }
    for (const key of feature.offers.keys())
      if (goalKeys.has(key)) {
        raise('medium', `${feature.offers.get(key)} is named in the goal`);
        break;
      }
    if (totalWeight > 0 && weightAfter[index]! < totalWeight * settings.recentShare)
      raise('medium', `recent (last ${Math.round(settings.recentShare * 100)}% of the conversation)`);
    return { id, index, level, reason, source: 'heuristic' };
  });
  return { scores, warnings: [] };
}

/** The level of a group of messages dropped or kept together: the highest of its members. */
export function groupLevel(levels: readonly ImportanceLevel[]): ImportanceLevel {
  return levels.reduce<ImportanceLevel>((highest, level) => higherLevel(highest, level), 'droppable');
}
