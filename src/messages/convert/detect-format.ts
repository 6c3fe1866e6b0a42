import { isRecord } from '../../internal/json-shapes.js';

/**
 * Guesses which wire format a parsed JSON document is in. Only looks at shapes, never at content, and explains
 * its answer so `precis convert` can say why it chose a format (and `--from` can overrule it).
 */
export const messageFormats = ['precis', 'openai', 'anthropic'] as const;
export type MessageFormat = (typeof messageFormats)[number];

export interface FormatGuess {
  format: MessageFormat;
  /** Human-readable evidence, e.g. `message 3 has "tool_calls"`. */
  reason: string;
}

type Loose = Record<string, unknown>;

const anthropicBlocks = new Set([
  'tool_use',
  'tool_result',
  'thinking',
  'redacted_thinking',
  'server_tool_use',
  'web_search_tool_result',
  'document',
]);
const openAIParts = new Set(['image_url', 'input_audio', 'refusal', 'input_text']);
const precisParts = new Set([
  'tool-call',
  'tool-result',
  'reasoning',
  'tool-approval-request',
  'tool-approval-response',
]);

export function detectFormat(document: unknown): FormatGuess {
  if (isRecord(document)) {
    if (document.format === 'precis') return { format: 'precis', reason: 'document has "format": "precis"' };
    if ('system' in document && (typeof document.system === 'string' || Array.isArray(document.system))) {
      return { format: 'anthropic', reason: 'top-level "system" field (Anthropic Messages request)' };
    }
    const fromTools = detectFromTools(document.tools);
    if (fromTools !== undefined) return fromTools;
    return detectFromMessages(document.messages);
  }
  return detectFromMessages(document);
}

function detectFromTools(tools: unknown): FormatGuess | undefined {
  if (!Array.isArray(tools) || !isRecord(tools[0])) return undefined;
  const tool = tools[0];
  if (tool.type === 'function' && isRecord(tool.function))
    return { format: 'openai', reason: 'tools are OpenAI function tools' };
  if ('input_schema' in tool) return { format: 'anthropic', reason: 'tools have "input_schema"' };
  if ('inputSchema' in tool) return { format: 'precis', reason: 'tools have "inputSchema"' };
  return undefined;
}

function detectFromMessages(messages: unknown): FormatGuess {
  if (!Array.isArray(messages)) return { format: 'precis', reason: 'no message array found; trying precis' };
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index];
    if (!isRecord(message)) continue;
    const guess = detectMessage(message);
    if (guess !== undefined) return { format: guess.format, reason: `message ${index} ${guess.reason}` };
  }
  return { format: 'precis', reason: 'plain text messages only: all formats agree' };
}

function detectMessage(message: Loose): { format: MessageFormat; reason: string } | undefined {
  if ('tool_calls' in message) return { format: 'openai', reason: 'has "tool_calls"' };
  if ('tool_call_id' in message) return { format: 'openai', reason: 'has "tool_call_id"' };
  if (message.role === 'developer' || message.role === 'function') {
    return { format: 'openai', reason: `has role "${message.role}"` };
  }
  if (message.content === null) return { format: 'openai', reason: 'has null content' };
  if ('id' in message || 'metadata' in message)
    return { format: 'precis', reason: 'has a precis "id" or "metadata"' };
  if (message.role === 'tool' && Array.isArray(message.content)) {
    return { format: 'precis', reason: 'is a tool message with content parts' };
  }
  if (!Array.isArray(message.content)) return undefined;
  for (const part of message.content) {
    if (!isRecord(part) || typeof part.type !== 'string') continue;
    if (anthropicBlocks.has(part.type)) return { format: 'anthropic', reason: `has a "${part.type}" block` };
    if (part.type === 'image' && 'source' in part)
      return { format: 'anthropic', reason: 'has an image with "source"' };
    if (openAIParts.has(part.type)) return { format: 'openai', reason: `has a "${part.type}" part` };
    if (precisParts.has(part.type)) return { format: 'precis', reason: `has a "${part.type}" part` };
    if (part.type === 'image' && 'image' in part)
      return { format: 'precis', reason: 'has an image part with "image"' };
  }
  return undefined;
}
