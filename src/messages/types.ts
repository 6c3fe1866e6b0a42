/**
 * The canonical message model. It follows the Vercel AI SDK `ModelMessage` shape (v5/v6) so an AI SDK user can
 * pass their `messages` array straight in and get one back, plus two optional fields of our own: a stable `id`
 * and precis `metadata`. Provider-specific data we do not model lives in `providerOptions`, keyed by provider,
 * exactly where the AI SDK keeps it (`providerOptions.anthropic.signature`, `.cacheControl`, ...).
 */

export type JSONValue = null | string | number | boolean | JSONObject | JSONValue[];
export interface JSONObject {
  [key: string]: JSONValue;
}

/** Provider-keyed options, e.g. `{ anthropic: { cacheControl: { type: 'ephemeral' } } }`. */
export type ProviderOptions = Record<string, Record<string, JSONValue>>;

/** Binary or addressable content: base64 string, raw bytes, or a URL (as a `URL` or an http(s)/data URL string). */
export type DataContent = string | Uint8Array | ArrayBuffer | URL;

export interface TextPart {
  type: 'text';
  text: string;
  providerOptions?: ProviderOptions;
}

export interface ReasoningPart {
  type: 'reasoning';
  text: string;
  providerOptions?: ProviderOptions;
}

export interface ImagePart {
  type: 'image';
  image: DataContent;
  mediaType?: string;
  providerOptions?: ProviderOptions;
}

export interface FilePart {
  type: 'file';
  data: DataContent;
  mediaType: string;
  filename?: string;
  providerOptions?: ProviderOptions;
}

export interface ToolCallPart {
  type: 'tool-call';
  toolCallId: string;
  toolName: string;
  /** Parsed arguments. A provider that sent arguments which are not valid JSON yields the raw string here. */
  input: unknown;
  /** True for calls the provider ran itself (Anthropic server tools such as web search). */
  providerExecuted?: boolean;
  providerOptions?: ProviderOptions;
}

export type ToolResultContentItem =
  | { type: 'text'; text: string; providerOptions?: ProviderOptions }
  | { type: 'media'; data: string; mediaType: string }
  | { type: 'image-data' | 'file-data'; data: string; mediaType: string; filename?: string }
  | { type: 'image-url' | 'file-url'; url: string };

export type ToolResultOutput =
  | { type: 'text'; value: string }
  | { type: 'json'; value: JSONValue }
  | { type: 'error-text'; value: string }
  | { type: 'error-json'; value: JSONValue }
  | { type: 'content'; value: ToolResultContentItem[] }
  | { type: 'execution-denied'; reason?: string };

export interface ToolResultPart {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  output: ToolResultOutput;
  providerOptions?: ProviderOptions;
}

/** AI SDK v6 tool approval parts: carried through, never interpreted. */
export interface ToolApprovalRequestPart {
  type: 'tool-approval-request';
  approvalId: string;
  toolCallId: string;
}

export interface ToolApprovalResponsePart {
  type: 'tool-approval-response';
  approvalId: string;
  approved: boolean;
  reason?: string;
}

/** What precis itself records about a message. Everything is optional and JSON-serialisable. */
export interface MessageMetadata {
  /** Never compressed, stubbed or dropped. */
  pinned?: boolean;
  /** Where the message came from: an importer name, `summary`, `stub`, ... */
  origin?: string;
  /**
   * Files the agent's harness put into the model's context with this message, whole (aider's `/add` and the
   * files it asked to add, Claude Code's @-mentioned files): reads, for the ledger, as much as a read tool's.
   */
  contextFiles?: string[];
  /** Archive handle of the original when this message is a stub or summary. */
  handle?: string;
  /**
   * An in-context demonstration: a worked example a framework put before the task (SWE-agent's `is_demo`
   * turns). Not the user's task and not this session's work.
   */
  demo?: boolean;
  /**
   * Written by the agent's harness in the user's place, not by the user: Claude Code's caveat before local
   * commands, a local command's output, a built-in command such as `/clear`. Not the task, not an instruction.
   */
  harness?: boolean;
  /**
   * A harness note rejecting the agent's last reply for its form (mini-swe-agent's `Please always provide EXACTLY
   * ONE action in triple backticks, found 2 actions.`): an error the agent saw, which the ledger records.
   */
  formatError?: boolean;
  /**
   * Where the request starts among the parts, when something other than the request comes first: harness notes
   * or demonstrations a repair merged in front of it, OpenHands' in-context example (see `requestOnly`). The
   * parts before it may be archived behind a stub (`stub-demonstrations`); the request may not.
   */
  requestPart?: number;
  /**
   * A prompt the harness wrote for the user's request: what a custom command or skill expands to (Claude Code's
   * `isMeta` prompt after `/command`). An instruction the agent follows, but not what the user typed.
   */
  expansion?: boolean;
  /**
   * Where an expansion (see `expansion`) starts among the parts, when a repair merged it after its request (and
   * so where what the user typed ends: harness notes merged after the request, an @-mention's file read or
   * aider's output, start one too).
   * While the message is preserved, nothing changes (unless they are all `harnessParts`, or take more than
   * `stub-demonstrations`' share of the budget); when it is not (the budget gave up the task), the parts from here
   * on may be archived behind a stub before the words the user typed are touched (`stub-demonstrations`).
   */
  expansionPart?: number;
  /**
   * Parts from the request's start on that a repair merged from harness notes: what aider printed between a
   * request that got no reply and the next one (its output, a restart's banner), or after the request (its
   * output, the file an @-mention read). Not what the user typed and not an instruction: they may be archived
   * behind a stub even while the message is preserved, as the parts before the request may. When they cover
   * every part from `expansionPart` on, the request is followed by harness notes only, no expansion.
   */
  harnessParts?: number[];
  /** Free-form data of importers and integrations (timestamps, source record ids). */
  [key: string]: JSONValue | undefined;
}

interface MessageFields {
  /** Stable id: kept when given, derived from content and occurrence otherwise (see `assignIds`). */
  id?: string;
  providerOptions?: ProviderOptions;
  metadata?: MessageMetadata;
}

export interface SystemMessage extends MessageFields {
  role: 'system';
  content: string;
}

export type UserContentPart = TextPart | ImagePart | FilePart;
export interface UserMessage extends MessageFields {
  role: 'user';
  content: string | UserContentPart[];
}

export type AssistantContentPart =
  | TextPart
  | FilePart
  | ReasoningPart
  | ToolCallPart
  | ToolResultPart
  | ToolApprovalRequestPart;
export interface AssistantMessage extends MessageFields {
  role: 'assistant';
  content: string | AssistantContentPart[];
}

export type ToolContentPart = ToolResultPart | ToolApprovalResponsePart;
export interface ToolMessage extends MessageFields {
  role: 'tool';
  content: ToolContentPart[];
}

export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage;
export type Role = Message['role'];
export const roles = ['system', 'user', 'assistant', 'tool'] as const satisfies readonly Role[];

export type Part = UserContentPart | AssistantContentPart | ToolContentPart;
export type PartType = Part['type'];
export const partTypes = [
  'text',
  'reasoning',
  'image',
  'file',
  'tool-call',
  'tool-result',
  'tool-approval-request',
  'tool-approval-response',
] as const satisfies readonly PartType[];

/** A message whose id has been assigned. */
export type IdentifiedMessage = Message & { id: string };

/** A tool the model may call, as sent alongside the messages. Counted in the token budget. */
export interface ToolDefinition {
  name: string;
  description?: string;
  /** JSON Schema of the arguments. */
  inputSchema: JSONValue;
  providerOptions?: ProviderOptions;
}

/** Messages plus what travels with them in a request. */
export interface Conversation {
  messages: Message[];
  tools?: ToolDefinition[];
  /** The model the conversation was recorded with or is headed to, when known. */
  model?: string;
  /** Request-level fields precis does not model (temperature, metadata, ...), kept for lossless round trips. */
  providerOptions?: ProviderOptions;
}
