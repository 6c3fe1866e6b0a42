import { stringValues } from '../internal/json-strings.js';
import { toolOutputText } from '../messages/content.js';
import type { Message, Part } from '../messages/types.js';

/** Shorter lines (`}`, `else:`, `return x`) are too common to say a summary line is already in view. */
const minLineChars = 8;

const linesByMessage = new WeakMap<Message, readonly string[]>();

/**
 * The lines a model reads in `message`, trimmed: its text, the strings of its tool calls' inputs and its tool
 * outputs. Not its reasoning: providers drop the reasoning of earlier turns.
 */
function messageLines(message: Message): readonly string[] {
  let lines = linesByMessage.get(message);
  if (lines !== undefined) return lines;
  const texts: string[] = [];
  if (typeof message.content === 'string') texts.push(message.content);
  else
    for (const part of message.content as readonly Part[]) {
      if (part.type === 'text') texts.push(part.text);
      else if (part.type === 'tool-call') for (const value of stringValues(part.input)) texts.push(value);
      else if (part.type === 'tool-result') texts.push(toolOutputText(part.output));
    }
  const found: string[] = [];
  for (const text of texts)
    for (const line of text.split('\n')) {
      const trimmed = line.trim();
      if (trimmed.length >= minLineChars) found.push(trimmed);
    }
  lines = found;
  // Messages are not changed in place: the same object has the same lines in every fold round.
  linesByMessage.set(message, lines);
  return lines;
}

/**
 * The lines (trimmed, of 8 characters or more) that `messages` show a model: what a summary placed among them
 * need not repeat (`RenderAnchoredSummaryOptions.conversationLines`).
 */
export function conversationLines(messages: readonly Message[]): Set<string> {
  const lines = new Set<string>();
  for (const message of messages) for (const line of messageLines(message)) lines.add(line);
  return lines;
}
