import { type ArchiveStore, archiveHandle } from '../archive/archive-store.js';
import { stringLeaves, withStringLeaf } from '../internal/json-strings.js';
import { toolOutputText, toolResultsOf } from '../messages/content.js';
import type {
  IdentifiedMessage,
  Part,
  ToolCallPart,
  ToolResultOutput,
  ToolResultPart,
} from '../messages/types.js';
import {
  keepHeadAndTail,
  type TrimmedSubject,
  trimmedTextMarkerPattern,
} from '../strategies/head-and-tail.js';
import type { StrategyAction } from '../strategies/strategy.js';
import type { TokenAccountant } from '../tokens/index.js';

/** The name trimmed texts are archived and reported under. */
export const trimStrategyName = 'recent-turns-share';

/** Tokens a trimmed text keeps at least: a command's first lines and its exit status, a file's head and tail. */
export const minTrimmedTokens = 200;

/** A cut that would save fewer tokens leaves the text whole: a few lines are not worth a marker. */
const minSavedTokens = 100;

/**
 * A text of a tool output that can be trimmed, and how to replace it in the output as it stands (another of its
 * texts may have been trimmed already): a text output itself; a JSON output as its JSON text (the trimmed output
 * is text, as a model reads JSON anyway); each text item of a content output, in place (images and files beside
 * it stay).
 */
interface TrimmableText {
  text: string;
  replace(current: ToolResultOutput, trimmed: string): ToolResultOutput;
}

function trimmableTexts(output: ToolResultOutput): TrimmableText[] {
  switch (output.type) {
    case 'text':
    case 'error-text':
      // The output's one text: nothing else of it can have been trimmed.
      return [{ text: output.value, replace: (_current, trimmed) => ({ ...output, value: trimmed }) }];
    case 'json':
    case 'error-json': {
      const type = output.type === 'json' ? 'text' : 'error-text';
      return [{ text: toolOutputText(output), replace: (_current, trimmed) => ({ type, value: trimmed }) }];
    }
    case 'content':
      return output.value.flatMap((item, itemIndex) =>
        item.type === 'text'
          ? [
              {
                text: item.text,
                replace: (current: ToolResultOutput, trimmed: string): ToolResultOutput =>
                  current.type === 'content'
                    ? {
                        ...current,
                        value: current.value.map((other, index) =>
                          index === itemIndex ? { ...item, text: trimmed } : other,
                        ),
                      }
                    : current,
              },
            ]
          : [],
      );
    case 'execution-denied':
      return [];
  }
}

/** A text of the last turn that may be trimmed: where it is, how to put its trimmed form back, what it was. */
interface Candidate {
  index: number;
  partIndex: number;
  /** The part it belongs to, as the conversation held it. */
  part: ToolResultPart | ToolCallPart;
  text: string;
  /** Tokens of a piece of `text` as the accountant counts them where it stands (an argument, in its JSON). */
  measure(piece: string): number;
  tokens: number;
  /** The part as it stands (another of its texts may be trimmed already) with this text trimmed. */
  replace(current: Part, trimmed: string): Part;
  /**
   * What the archive keeps: the whole output as the conversation held it (each trimmed text of one output names
   * it), or the argument's text (a fold puts it back by the marker).
   */
  original: { kind: 'tool-output'; content: ToolResultOutput } | { kind: 'text'; content: string };
}

/** The texts of the last turn's parts worth trimming (above `minTrimmedTokens`), none trimmed already. */
function candidatesOf(
  messages: readonly IdentifiedMessage[],
  lastTurnIds: ReadonlySet<string>,
  accountant: TokenAccountant,
): Candidate[] {
  const candidates: Candidate[] = [];
  // A call without its result may still run (one awaiting approval, say) with the arguments the history holds:
  // only the arguments of calls that ran are trimmed.
  const answered = new Set(
    messages.flatMap((message) => toolResultsOf(message).map((part) => part.toolCallId)),
  );
  const add = (candidate: Omit<Candidate, 'tokens' | 'measure'>, inJson = false) => {
    // An argument inside the call's JSON is counted there, its newlines and quotes escaped.
    const measure = inJson
      ? (piece: string) => accountant.countText(JSON.stringify(piece))
      : (piece: string) => accountant.countText(piece);
    const tokens = measure(candidate.text);
    if (tokens > minTrimmedTokens) candidates.push({ ...candidate, measure, tokens });
  };
  messages.forEach((message, index) => {
    if (!lastTurnIds.has(message.id) || typeof message.content === 'string') return;
    (message.content as readonly Part[]).forEach((part, partIndex) => {
      if (part.type === 'tool-result') {
        const trimmables = trimmableTexts(part.output);
        // One marker in an output: trimmed already.
        if (trimmables.some(({ text }) => trimmedTextMarkerPattern.test(text))) return;
        for (const { text, replace } of trimmables)
          add({
            index,
            partIndex,
            part,
            text,
            replace: (current, trimmed) =>
              current.type === 'tool-result'
                ? { ...current, output: replace(current.output, trimmed) }
                : current,
            original: { kind: 'tool-output', content: part.output },
          });
      } else if (part.type === 'tool-call' && answered.has(part.toolCallId)) {
        // The string arguments of the call, nested ones too (a file's content, a script, a MultiEdit's
        // replacements): the call's name and the input's shape stay.
        const strings = stringLeaves(part.input);
        if (strings.some(({ text }) => trimmedTextMarkerPattern.test(text))) return;
        for (const { path, text } of strings)
          add(
            {
              index,
              partIndex,
              part,
              text,
              replace: (current, trimmed) =>
                current.type === 'tool-call'
                  ? { ...current, input: withStringLeaf(current.input, path, trimmed) }
                  : current,
              original: { kind: 'text', content: text },
            },
            path.length > 0,
          );
      }
    });
  });
  // Largest first; the earlier first among equals.
  return candidates.sort((a, b) => b.tokens - a.tokens || a.index - b.index || a.partIndex - b.partIndex);
}

/**
 * The last turn with its largest tool outputs and tool-call arguments trimmed, largest first, until
 * `excessTokens` are saved: each keeps its first and last lines (what a command printed first, and how it ended:
 * the exit status, the final error, the summary line; a written file's head and tail) and its middle becomes a
 * marker naming the archived original (see `trimmableTexts` for JSON and content outputs; of a call, its string
 * arguments, nested ones too; several texts of one part when one is not enough, a MultiEdit's replacements
 * say). No text is cut below `minTrimmedTokens` or for less than `minSavedTokens`, and a part trimmed already
 * is left as it is, so compacting again changes nothing.
 * Text, reasoning, images and files are left alone; messages outside `lastTurnIds`, and those without a trimmed
 * part, are returned as they are.
 */
export function trimLastTurnTexts(
  messages: readonly IdentifiedMessage[],
  lastTurnIds: ReadonlySet<string>,
  excessTokens: number,
  { accountant, archive }: { accountant: TokenAccountant; archive: ArchiveStore },
): { messages: IdentifiedMessage[]; actions: StrategyAction[] } {
  const output = [...messages];
  const actions: StrategyAction[] = [];
  let excess = excessTokens;
  for (const candidate of candidatesOf(messages, lastTurnIds, accountant)) {
    const { index, partIndex, part, text, tokens, original, measure } = candidate;
    const subject: TrimmedSubject = part.type === 'tool-result' ? 'output' : 'argument';
    if (excess <= 0) break;
    const keptTokens = Math.max(minTrimmedTokens, tokens - excess);
    if (tokens - keptTokens < minSavedTokens) continue;
    const message = output[index]!;
    const handle = archiveHandle(original.kind, original.content);
    const trimmed = keepHeadAndTail(text, keptTokens, handle, measure, subject);
    if (trimmed === undefined) continue;
    const trimmedTokens = measure(trimmed);
    if (trimmedTokens >= tokens) continue;
    archive.put({ ...original, messageIds: [message.id], strategy: trimStrategyName });
    const content = [...(message.content as Part[])];
    content[partIndex] = candidate.replace(content[partIndex]!, trimmed);
    output[index] = { ...message, content } as IdentifiedMessage;
    excess -= tokens - trimmedTokens;
    const what =
      subject === 'output'
        ? `output of ${part.toolName} (${part.toolCallId})`
        : `argument of the ${part.toolName} call (${part.toolCallId})`;
    actions.push({
      type: subject === 'output' ? 'trim-tool-output' : 'trim-tool-input',
      strategy: trimStrategyName,
      messageIds: [message.id],
      handle,
      tokensBefore: tokens,
      tokensAfter: trimmedTokens,
      description: `kept the first and last lines of the ${tokens}-token ${what} in the last turn: ${tokens} → ${trimmedTokens} tokens`,
    });
  }
  return { messages: output, actions };
}
