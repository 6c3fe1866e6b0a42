import { createHash } from 'node:crypto';
import { isErrorOutput, messageText, toolOutputText } from '../messages/content.js';
import type { Conversation, Part, Role } from '../messages/types.js';
import { createTokenAccountant, type TokenAccountant, type ToolTokenCount } from '../tokens/index.js';

export interface InspectOptions {
  /** @default createTokenAccountant() (exact o200k, OpenAI framing) */
  accountant?: TokenAccountant;
  /** How many largest messages and tool outputs to list. @default 10 */
  top?: number;
}

/** Content tokens by kind of part: where the text of the conversation sits. */
export interface PartKindTokens {
  text: number;
  reasoning: number;
  toolCall: number;
  toolResult: number;
  /** Image and file estimates. */
  other: number;
}

export interface ToolInspection extends ToolTokenCount {
  toolName: string;
  /** Results that were errors (error-text / error-json / denied). */
  errorCount: number;
  /** Tokens of the single largest result. */
  largestResultTokens: number;
}

export interface LargeToolOutput {
  index: number;
  toolName: string;
  toolCallId: string;
  tokens: number;
  isError: boolean;
  preview: string;
}

export interface MessageInspection {
  index: number;
  id?: string;
  role: Role;
  tokens: number;
  preview: string;
}

export interface InspectReport {
  messageCount: number;
  totalTokens: number;
  contentTokens: number;
  framingTokens: number;
  toolSchemaTokens: number;
  byRole: Record<Role, { messages: number; tokens: number }>;
  byPartKind: PartKindTokens;
  /** `byPartKind.reasoning` over all content tokens. */
  reasoningShare: number;
  byTool: ToolInspection[];
  /** Tokens of messages and tool outputs whose text repeats an earlier one exactly (whitespace-collapsed). */
  duplicateTokens: number;
  /** `duplicateTokens` over all content tokens. */
  duplicateShare: number;
  largestToolOutputs: LargeToolOutput[];
  largestMessages: MessageInspection[];
  /** Every message, in order. */
  messages: MessageInspection[];
}

function preview(text: string, width = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= width ? flat : `${flat.slice(0, width - 1)}…`;
}

/** Exact-duplicate key: whitespace-collapsed text, hashed so the map holds digests, not copies. */
function duplicateKey(text: string): string {
  return createHash('sha1').update(text.replace(/\s+/g, ' ').trim()).digest('base64');
}

/**
 * Where the tokens of a conversation go: by role, by tool, by kind of part, the largest tool outputs and
 * messages, the share of reasoning and of exactly repeated content. The numbers a person needs to decide
 * what to compress first.
 */
export function inspectConversation(conversation: Conversation, options: InspectOptions = {}): InspectReport {
  const { accountant = createTokenAccountant(), top = 10 } = options;
  const counter = accountant.counter;
  const count = accountant.countConversation(conversation);
  const byPartKind: PartKindTokens = { text: 0, reasoning: 0, toolCall: 0, toolResult: 0, other: 0 };
  const byRole = {} as Record<Role, { messages: number; tokens: number }>;
  const toolExtras = new Map<string, { errorCount: number; largestResultTokens: number }>();
  const toolOutputs: LargeToolOutput[] = [];
  const seen = new Set<string>();
  let duplicateTokens = 0;

  const countDuplicate = (text: string, tokens: number) => {
    if (text.length < 64) return; // short acknowledgements repeat by nature; they are not waste
    const key = duplicateKey(text);
    if (seen.has(key)) duplicateTokens += tokens;
    else seen.add(key);
  };

  const messages: MessageInspection[] = conversation.messages.map((message, index) => {
    const entry = count.messages[index]!;
    const role = byRole[message.role] ?? { messages: 0, tokens: 0 };
    byRole[message.role] = role;
    role.messages++;
    role.tokens += entry.totalTokens;
    const parts: readonly Part[] =
      typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    for (const part of parts) {
      switch (part.type) {
        case 'text': {
          const tokens = counter.count(part.text);
          byPartKind.text += tokens;
          countDuplicate(part.text, tokens);
          break;
        }
        case 'reasoning':
          byPartKind.reasoning += counter.count(part.text);
          break;
        case 'tool-call':
          byPartKind.toolCall +=
            counter.count(part.toolName) +
            counter.count(typeof part.input === 'string' ? part.input : JSON.stringify(part.input ?? null));
          break;
        case 'tool-result': {
          const text = toolOutputText(part.output);
          const tokens = counter.count(text);
          byPartKind.toolResult += tokens;
          countDuplicate(text, tokens);
          const isError = isErrorOutput(part.output);
          const extras = toolExtras.get(part.toolName) ?? { errorCount: 0, largestResultTokens: 0 };
          if (isError) extras.errorCount++;
          extras.largestResultTokens = Math.max(extras.largestResultTokens, tokens);
          toolExtras.set(part.toolName, extras);
          toolOutputs.push({
            index,
            toolName: part.toolName,
            toolCallId: part.toolCallId,
            tokens,
            isError,
            preview: preview(text),
          });
          break;
        }
        default:
          break;
      }
    }
    return {
      index,
      ...(message.id === undefined ? {} : { id: message.id }),
      role: message.role,
      tokens: entry.totalTokens,
      preview: preview(messageText(message)),
    };
  });
  // Images and files are estimates inside the accountant's content total; whatever the text parts do not explain.
  byPartKind.other = Math.max(
    0,
    count.contentTokens -
      byPartKind.text -
      byPartKind.reasoning -
      byPartKind.toolCall -
      byPartKind.toolResult,
  );

  const byTool = Object.entries(count.byTool)
    .map(([toolName, tool]) => ({
      toolName,
      ...tool,
      errorCount: toolExtras.get(toolName)?.errorCount ?? 0,
      largestResultTokens: toolExtras.get(toolName)?.largestResultTokens ?? 0,
    }))
    .sort((a, b) => b.totalTokens - a.totalTokens || a.toolName.localeCompare(b.toolName));
  const content = count.contentTokens;
  return {
    messageCount: conversation.messages.length,
    totalTokens: count.totalTokens,
    contentTokens: content,
    framingTokens: count.framingTokens,
    toolSchemaTokens: count.toolSchemaTokens,
    byRole,
    byPartKind,
    reasoningShare: content === 0 ? 0 : byPartKind.reasoning / content,
    byTool,
    duplicateTokens,
    duplicateShare: content === 0 ? 0 : duplicateTokens / content,
    largestToolOutputs: [...toolOutputs]
      .sort((a, b) => b.tokens - a.tokens || a.index - b.index)
      .slice(0, top),
    largestMessages: [...messages].sort((a, b) => b.tokens - a.tokens || a.index - b.index).slice(0, top),
    messages,
  };
}
