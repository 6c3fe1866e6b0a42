import { readFile } from 'node:fs/promises';
import { InvalidArgumentError, PrecisError } from '../errors/index.js';
import { looksLikeJsonLines, parseJsonLines, parseJsonText } from '../internal/parse-json.js';
import { fromAnthropic } from '../messages/convert/anthropic.js';
import { detectFormat, type MessageFormat } from '../messages/convert/detect-format.js';
import { fromOpenAI } from '../messages/convert/openai.js';
import { parseConversation } from '../messages/parse.js';
import type { Conversation } from '../messages/types.js';

/** Input formats `--from` accepts. `ai-sdk` is an alias of `precis`: the shapes are the same. */
export const inputFormats = ['precis', 'ai-sdk', 'openai', 'anthropic'] as const;
export type InputFormat = (typeof inputFormats)[number];

export interface LoadConversationOptions {
  /** Force a format instead of detecting it. */
  from?: InputFormat;
  /** File name for error messages. */
  file?: string;
}

export interface LoadConversationResult {
  conversation: Conversation;
  format: MessageFormat;
  /** Why this format was chosen: `forced by --from` or the detector's evidence. */
  reason: string;
}

/** Parses the text of a JSON or JSON Lines conversation in precis / AI SDK, OpenAI or Anthropic format. */
export function parseConversationText(
  text: string,
  options: LoadConversationOptions = {},
): LoadConversationResult {
  const { file, from } = options;
  if (from !== undefined && !(inputFormats as readonly string[]).includes(from)) {
    throw new InvalidArgumentError(
      '--from',
      `unknown format "${from}" (expected ${inputFormats.join(', ')})`,
    );
  }
  const fileOption = file === undefined ? {} : { file };
  const document = looksLikeJsonLines(text)
    ? parseJsonLines(text, fileOption).map((line) => line.value)
    : parseJsonText(text, fileOption);
  const guess =
    from === undefined
      ? detectFormat(document)
      : { format: from === 'ai-sdk' ? ('precis' as const) : from, reason: 'forced by --from' };
  switch (guess.format) {
    case 'openai':
      return { conversation: fromOpenAI(document, fileOption), ...guess };
    case 'anthropic':
      return { conversation: fromAnthropic(document, fileOption), ...guess };
    case 'precis':
      return { conversation: parseConversation(document, fileOption), ...guess };
  }
}

/** Reads and parses a conversation file. A missing or unreadable file is an `io-error` naming the path. */
export async function readConversationFile(
  path: string,
  options: Omit<LoadConversationOptions, 'file'> = {},
): Promise<LoadConversationResult> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    throw new PrecisError('io-error', `${path}: ${reason}`, { cause: error });
  }
  return parseConversationText(text, { ...options, file: path });
}
