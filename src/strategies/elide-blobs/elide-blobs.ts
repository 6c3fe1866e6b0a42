import type { IdentifiedMessage, JSONValue, Part, ToolResultOutput } from '../../messages/types.js';
import type { Strategy, StrategyAction, StrategyContext, StrategyResult } from '../strategy.js';
import { checkCount, checkStrategyInput, rewriteOldestFirst } from '../strategy-support.js';

export interface ElideBlobsOptions {
  /**
   * Runs of encoded data shorter than this many characters are left alone; values below 128 count as 128 (a
   * marker takes about 60 characters, so a shorter run saves little). @default 256
   */
  minChars?: number;
}

const strategyName = 'elide-blobs';

/** Characters of a blob kept before and after its elided middle: enough to tell one blob from another. */
const keptHead = 16;
const keptTail = 8;

/**
 * An unbroken run of base64 (standard or URL-safe, with its padding) or hex characters. What makes it encoded
 * data rather than a long word or identifier is checked per run (`isEncoded`).
 */
const runPattern = /[A-Za-z0-9+/_-]{64,}={0,2}/g;

/**
 * Elides the middle of long runs of encoded data (base64 images and data URIs, hex dumps, key material) in tool
 * outputs and message text, where a model reads nothing from them and they cost the most tokens per character
 * (about 1.5 characters per o200k token): `iVBORw0KGgoAAAANSU…[12000 characters of encoded data archived:
 * h-…]…RK5CYII=`. The rest of the output stays as it was, so an output that is mostly an image keeps its
 * readable lines instead of becoming a stub.
 *
 * A run counts as encoded data when it is at least `minChars` long, has no whitespace or punctuation other than
 * base64's, and looks random: digits make up at least 5% of it, and it mixes upper and lower case (base64) or is
 * all hex. Long identifiers, paths and URLs (broken by `.`, `:`, `?`, `&`) are never runs.
 *
 * Each changed output or text is archived whole (`tool-output` or `text`) and every marker in it names that
 * handle, so `expand` gives the original back and a fold puts it back before summarizing. Tool-call inputs are
 * left as the agent wrote them. Does nothing within budget; otherwise handles messages oldest first and stops as
 * soon as the budget holds. Preserved messages are skipped. Idempotent: what a marker leaves of a run is shorter
 * than any run it elides.
 */
export function elideBlobs(options: ElideBlobsOptions = {}): Strategy {
  const { minChars = 256 } = options;
  checkCount('minChars', minChars);
  // Below this, a marker (about 60 characters) would save little or nothing.
  const threshold = Math.max(minChars, 128);
  return {
    name: strategyName,
    apply(messages, context) {
      checkStrategyInput(messages);
      return applyElideBlobs(messages, context, threshold);
    },
  };
}

function applyElideBlobs(
  messages: readonly IdentifiedMessage[],
  context: StrategyContext,
  minChars: number,
): StrategyResult {
  const actions: StrategyAction[] = [];
  const output = rewriteOldestFirst(messages, context, (message) =>
    // A system message instructs: left as written, like a tool call's input.
    message.role === 'system' || context.preservedIds.has(message.id) || !mayHoldBlob(message, minChars)
      ? undefined
      : elideInMessage(message, context, minChars, actions),
  );
  return { messages: output, actions, warnings: [] };
}

/**
 * Messages found to hold no blob, per threshold: strategies keep unchanged messages as the same objects, so an
 * agent loop that compacts after every step scans each message once, not once per step.
 */
const blobFree = new WeakMap<IdentifiedMessage, number>();

function mayHoldBlob(message: IdentifiedMessage, minChars: number): boolean {
  const known = blobFree.get(message);
  if (known !== undefined && known <= minChars) return false;
  const texts =
    typeof message.content === 'string'
      ? [message.content]
      : (message.content as readonly Part[]).flatMap((part) =>
          part.type === 'text' ? [part.text] : part.type === 'tool-result' ? outputTexts(part.output) : [],
        );
  if (texts.some((text) => hasBlob(text, minChars))) return true;
  blobFree.set(message, Math.min(known ?? minChars, minChars));
  return false;
}

/** `message` with the blobs of its texts and tool outputs elided (each original archived); itself when none. */
function elideInMessage(
  message: IdentifiedMessage,
  context: StrategyContext,
  minChars: number,
  actions: StrategyAction[],
): IdentifiedMessage {
  const { archive, accountant } = context;
  const record = (handle: string, before: string, after: string, what: string) => {
    const tokensBefore = accountant.countText(before);
    const tokensAfter = accountant.countText(after);
    actions.push({
      type: 'elide-blobs',
      strategy: strategyName,
      messageIds: [message.id],
      handle,
      tokensBefore,
      tokensAfter,
      description: `elided encoded data in ${what} of message ${message.id}: ${tokensBefore} → ${tokensAfter} tokens`,
    });
  };
  const elideText = (text: string, what: string): string => {
    if (!hasBlob(text, minChars)) return text;
    const handle = archive.put({
      kind: 'text',
      content: text,
      messageIds: [message.id],
      strategy: strategyName,
    });
    const elided = elideRuns(text, minChars, handle);
    record(handle, text, elided, what);
    return elided;
  };
  if (typeof message.content === 'string') {
    const text = elideText(message.content, 'the text');
    return text === message.content ? message : ({ ...message, content: text } as IdentifiedMessage);
  }
  let changed = false;
  const content = (message.content as readonly Part[]).map((part): Part => {
    if (part.type === 'text') {
      const text = elideText(part.text, 'a text part');
      if (text === part.text) return part;
      changed = true;
      return { ...part, text };
    }
    if (part.type !== 'tool-result') return part;
    const texts = outputTexts(part.output);
    if (!texts.some((text) => hasBlob(text, minChars))) return part;
    const handle = archive.put({
      kind: 'tool-output',
      content: part.output as unknown as JSONValue,
      messageIds: [message.id],
      strategy: strategyName,
    });
    const elided = mapOutputTexts(part.output, (text) => elideRuns(text, minChars, handle));
    record(handle, texts.join('\n'), outputTexts(elided).join('\n'), `the output of ${part.toolName}`);
    changed = true;
    return { ...part, output: elided };
  });
  return changed ? ({ ...message, content } as IdentifiedMessage) : message;
}

/** The texts of an output a model reads as text: a text output, or the text items of a content output. */
function outputTexts(output: ToolResultOutput): string[] {
  if (output.type === 'text' || output.type === 'error-text') return [output.value];
  if (output.type === 'content')
    return output.value.flatMap((item) => (item.type === 'text' ? [item.text] : []));
  return [];
}

function mapOutputTexts(output: ToolResultOutput, map: (text: string) => string): ToolResultOutput {
  if (output.type === 'text' || output.type === 'error-text') return { ...output, value: map(output.value) };
  if (output.type === 'content')
    return {
      ...output,
      value: output.value.map((item) => (item.type === 'text' ? { ...item, text: map(item.text) } : item)),
    };
  return output;
}

/** Whether `text` holds a run of encoded data of at least `minChars` characters. */
function hasBlob(text: string, minChars: number): boolean {
  // A run's padding (up to two `=`) counts towards its length.
  if (!hasLongRun(text, minChars - 2)) return false;
  for (const match of text.matchAll(runPattern)) if (isEncoded(match[0], minChars)) return true;
  return false;
}

/** Base64 and hex characters (`runPattern`'s class), by char code. */
const runCharacters = new Uint8Array(128);
for (const character of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-')
  runCharacters[character.charCodeAt(0)] = 1;

/**
 * Whether `text` has `length` run characters in a row: the cheap test that rules out almost every text before
 * the pattern runs (a loop over char codes is about five times faster than the regex on a 1.3 MB session).
 */
function hasLongRun(text: string, length: number): boolean {
  if (text.length < length) return false;
  let run = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 128 && runCharacters[code] === 1) {
      if (++run >= length) return true;
    } else run = 0;
  }
  return false;
}

/** `text` with the middle of each encoded run replaced by a marker naming `handle`. */
function elideRuns(text: string, minChars: number, handle: string): string {
  return text.replace(runPattern, (run) => {
    if (!isEncoded(run, minChars)) return run;
    const elided = run.length - keptHead - keptTail;
    return `${run.slice(0, keptHead)}…[${elided} characters of encoded data archived: ${handle}]…${run.slice(-keptTail)}`;
  });
}

const hexRun = /^[0-9a-fA-F]+$/;

/**
 * Whether a run is encoded data: long enough, with digits making up at least 5% of it, and mixed case (base64)
 * or all hex. A long identifier has too few digits; a word in one case is neither.
 */
export function isEncoded(run: string, minChars: number): boolean {
  if (run.length < minChars) return false;
  let digits = 0;
  let upper = false;
  let lower = false;
  for (let index = 0; index < run.length; index++) {
    const code = run.charCodeAt(index);
    if (code >= 48 && code <= 57) digits++;
    else if (code >= 65 && code <= 90) upper = true;
    else if (code >= 97 && code <= 122) lower = true;
  }
  if (digits < run.length * 0.05) return false;
  return (upper && lower) || hexRun.test(run);
}
