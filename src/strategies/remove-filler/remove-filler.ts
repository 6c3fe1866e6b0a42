import type { AssistantContentPart, IdentifiedMessage } from '../../messages/types.js';
import type { Strategy, StrategyAction, StrategyContext, StrategyResult } from '../strategy.js';
import { checkStrategyInput, codeRanges, overlapsAny, rewriteOldestFirst } from '../strategy-support.js';

const strategyName = 'remove-filler';

/**
 * Removes whole filler sentences from the start and end of assistant text: opening pleasantries ("Great
 * question!", "Sure! I'd be happy to help."), restated questions ("You're asking how to …") and closing offers
 * ("Let me know if you need anything else!", "Hope this helps!"). English only and deliberately narrow: a
 * missed pleasantry costs a few tokens, a removed instruction costs the task.
 *
 * Never touches code (fenced or inline), quotes, or anything but whole sentences at the very start or end of
 * a text part; a text part that is nothing but filler is removed only when the message keeps other content.
 * The original message is archived and its handle is in the action; no stub is left in the text, since
 * one would cost more than the filler it replaces.
 *
 * Does nothing when the conversation is within budget; otherwise handles messages oldest first and stops as
 * soon as the budget holds. Preserved messages are skipped.
 */
export function removeFiller(): Strategy {
  return {
    name: strategyName,
    apply(messages, context) {
      checkStrategyInput(messages);
      return applyRemoveFiller(messages, context);
    },
  };
}

function applyRemoveFiller(messages: readonly IdentifiedMessage[], context: StrategyContext): StrategyResult {
  const actions: StrategyAction[] = [];
  const rewrite = (message: IdentifiedMessage): IdentifiedMessage | undefined => {
    if (message.role !== 'assistant' || context.preservedIds.has(message.id)) return undefined;
    const content = removeMessageFiller(message.content);
    if (content === undefined) return undefined;
    const candidate: IdentifiedMessage = { ...message, content };
    const tokensBefore = context.accountant.countMessage(message);
    const tokensAfter = context.accountant.countMessage(candidate);
    if (tokensAfter >= tokensBefore) return undefined;
    const handle = context.archive.put({
      kind: 'messages',
      content: [message],
      messageIds: [message.id],
      strategy: strategyName,
    });
    actions.push({
      type: 'remove-filler',
      strategy: strategyName,
      messageIds: [message.id],
      handle,
      tokensBefore,
      tokensAfter,
      description: `removed filler sentences from assistant message ${message.id}`,
    });
    return candidate;
  };
  return { messages: rewriteOldestFirst(messages, context, rewrite), actions, warnings: [] };
}

function removeMessageFiller(content: string | AssistantContentPart[]): typeof content | undefined {
  if (typeof content === 'string') {
    const text = removeFillerText(content);
    return text === content || text === '' ? undefined : text;
  }
  let changed = false;
  const parts: AssistantContentPart[] = [];
  for (const part of content) {
    if (part.type !== 'text') {
      parts.push(part);
      continue;
    }
    const text = removeFillerText(part.text);
    if (text === part.text) {
      parts.push(part);
      continue;
    }
    if (text === '' && part.providerOptions !== undefined) {
      parts.push(part);
      continue;
    }
    changed = true;
    if (text !== '') parts.push({ ...part, text });
  }
  if (!changed) return undefined;
  const hasContent = parts.some(
    (part) => part.type !== 'text' || part.text.trim() !== '' || part.providerOptions !== undefined,
  );
  return hasContent ? parts : undefined;
}

// Sentence bodies may not contain code, quotes, links or line breaks, so a pattern can never reach into them.
const plain = '[^\\n`>\\[\\]<.!?]';
const end = '(?:[.!]+|…)(?:[ \\t]*(?:😊|🙂|👍|🚀))?';

const openingSentences = [
  `(?:great|good|excellent|interesting|fantastic|what a great) question${end}`,
  // Only with an exclamation mark: "Absolutely." can be the answer to a yes/no question.
  `(?:sure(?: thing)?|certainly|absolutely|of course|definitely|gladly|no problem)!+`,
  `(?:i'?d|i would|i'?ll|i will|i'?m|i am) (?:be )?(?:happy|glad|delighted) to help(?: you)?(?: with (?:that|this|your question))?${end}`,
  `(?:happy|glad) to help${end}`,
  `thanks? (?:you )?for (?:asking|the question|your question|reaching out)${end}`,
  `(?:you'?re|you are) asking (?:about|how|why|whether|if|what|which|where|when|for) ${plain}{1,200}[.?]`,
  `you(?:'d| would)? (?:want|like) to know (?:about|how|why|whether|if|what|which|where|when) ${plain}{1,200}[.?]`,
];

const closingSentences = [
  `(?:please )?let me know if (?:you (?:have|need) (?:any|anything)(?: other| more| further| else)?(?: questions?| help| assistance)?|there(?:'s| is) anything else(?: (?:i can|you need)${plain}{0,40})?|(?:this|that) helps|you(?:'d| would) like (?:any|more|further) (?:help|changes|details))${end}`,
  `feel free to (?:ask|reach out|let me know)${plain}{0,80}${end}`,
  `(?:please )?don'?t hesitate to (?:ask|reach out)${plain}{0,80}${end}`,
  `(?:i )?hope (?:this|that|it) helps${plain}{0,40}${end}`,
  `happy coding${end}`,
  `good luck(?: with (?:your|the) project)?${end}`,
];

const openingFiller = new RegExp(`^[ \\t]*(?:${openingSentences.join('|')})[ \\t]*(?:\\r?\\n)*`, 'iu');
// Anchored at a sentence start: the text start, a line start, or after a sentence end and a space.
const closingFiller = new RegExp(
  `(?:^|(?<=[.!?:]\\s+)|(?<=\\n)[ \\t]*)(?:${closingSentences.join('|')})\\s*$`,
  'iu',
);

/**
 * `text` without filler sentences at its start and end (repeatedly: "Sure! Great question!" goes whole).
 * Returns `text` itself when nothing matched, and `''` when the text was nothing but filler.
 */
export function removeFillerText(text: string): string {
  let current = text;
  for (;;) {
    const opening = openingFiller.exec(current);
    if (opening === null) break;
    current = current.slice(opening[0].length);
  }
  for (;;) {
    const closing = closingFiller.exec(current);
    if (closing === null) break;
    const lineStart = current.lastIndexOf('\n', closing.index - 1) + 1;
    const inQuote = /^[ \t]*>/.test(current.slice(lineStart, closing.index + 1));
    if (inQuote || overlapsAny(codeRanges(current), closing.index, current.length)) break;
    current = current.slice(0, closing.index).trimEnd();
  }
  if (current === text) return text;
  // Restated questions and pleasantries alone are not filler worth a guess: keep a reply that was only that.
  return current.trim() === '' ? '' : current;
}
