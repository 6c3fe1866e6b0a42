/**
 * The Anthropic Messages API request wire format, as far as precis reads and writes it. Written by hand (no SDK
 * dependency) after `@anthropic-ai/sdk`'s `MessageCreateParams`. The API grows new block and tool types; precis
 * carries those verbatim, so they appear here only as `AnthropicUnknownBlock` / `AnthropicServerTool`.
 */

import type { JSONObject, JSONValue } from '../types.js';

export interface AnthropicCacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

/** Every block that can be cached takes `cache_control`; `null` is accepted by the API and means "none". */
interface Cacheable {
  cache_control?: AnthropicCacheControl | null;
}

export interface AnthropicTextBlock extends Cacheable {
  type: 'text';
  text: string;
  /** Citations the model produced for this text (char, page or content-block locations). */
  citations?: JSONObject[] | null;
}

export interface AnthropicBase64Source {
  type: 'base64';
  media_type: string;
  data: string;
}

export interface AnthropicUrlSource {
  type: 'url';
  url: string;
}

export interface AnthropicFileSource {
  type: 'file';
  file_id: string;
}

export interface AnthropicPlainTextSource {
  type: 'text';
  media_type: 'text/plain';
  data: string;
}

export interface AnthropicContentSource {
  type: 'content';
  content: string | (AnthropicTextBlock | AnthropicImageBlock)[];
}

export type AnthropicImageSource = AnthropicBase64Source | AnthropicUrlSource | AnthropicFileSource;

export interface AnthropicImageBlock extends Cacheable {
  type: 'image';
  source: AnthropicImageSource;
}

export type AnthropicDocumentSource =
  | AnthropicBase64Source
  | AnthropicPlainTextSource
  | AnthropicUrlSource
  | AnthropicContentSource
  | AnthropicFileSource;

export interface AnthropicDocumentBlock extends Cacheable {
  type: 'document';
  source: AnthropicDocumentSource;
  title?: string | null;
  /** Context about the document the model reads but never cites. */
  context?: string | null;
  citations?: { enabled?: boolean } | null;
}

export interface AnthropicThinkingBlock {
  type: 'thinking';
  thinking: string;
  /** Opaque; the API rejects thinking blocks whose signature is missing or altered. */
  signature: string;
}

export interface AnthropicRedactedThinkingBlock {
  type: 'redacted_thinking';
  /** Encrypted thinking, sent back unchanged. */
  data: string;
}

export interface AnthropicToolUseBlock extends Cacheable {
  type: 'tool_use';
  id: string;
  name: string;
  input: JSONValue;
}

export type AnthropicToolResultContentBlock =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | AnthropicDocumentBlock;

export interface AnthropicToolResultBlock extends Cacheable {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | AnthropicToolResultContentBlock[];
  is_error?: boolean;
}

/** A call of a tool Anthropic runs itself (web search, web fetch, code execution, ...). */
export interface AnthropicServerToolUseBlock extends Cacheable {
  type: 'server_tool_use';
  id: string;
  name: string;
  input: JSONValue;
}

export interface AnthropicWebSearchResult {
  type: 'web_search_result';
  url: string;
  title: string;
  encrypted_content: string;
  page_age?: string | null;
}

export interface AnthropicWebSearchToolResultError {
  type: 'web_search_tool_result_error';
  error_code: string;
}

export interface AnthropicWebSearchToolResultBlock extends Cacheable {
  type: 'web_search_tool_result';
  tool_use_id: string;
  content: AnthropicWebSearchResult[] | AnthropicWebSearchToolResultError;
}

/**
 * The result of any other server tool (`web_fetch_tool_result`, `code_execution_tool_result`, ...): named
 * `<tool name>_tool_result`, with tool-specific `content` whose error form has a `type` ending in `_error`.
 */
export interface AnthropicServerToolResultBlock extends Cacheable {
  type: `${string}_tool_result`;
  tool_use_id: string;
  content: JSONValue;
}

/** A block type precis does not know. Carried verbatim. */
export interface AnthropicUnknownBlock {
  type: string;
  [field: string]: unknown;
}

export type AnthropicUserContentBlock =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | AnthropicDocumentBlock
  | AnthropicToolResultBlock;

export type AnthropicAssistantContentBlock =
  | AnthropicTextBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock
  | AnthropicToolUseBlock
  | AnthropicServerToolUseBlock
  | AnthropicWebSearchToolResultBlock
  | AnthropicServerToolResultBlock;

export type AnthropicContentBlock =
  | AnthropicUserContentBlock
  | AnthropicAssistantContentBlock
  | AnthropicUnknownBlock;

export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: string | AnthropicContentBlock[];
}

/** A tool the client runs. `type: 'custom'` is optional and means the same as leaving it out. */
export interface AnthropicCustomTool extends Cacheable {
  type?: 'custom';
  name: string;
  description?: string;
  /** JSON Schema of the input. */
  input_schema: JSONValue;
}

/** A tool Anthropic defines and (mostly) runs, e.g. `{ type: 'web_search_20250305', name: 'web_search' }`. */
export interface AnthropicServerTool {
  type: string;
  name: string;
  [field: string]: unknown;
}

export type AnthropicTool = AnthropicCustomTool | AnthropicServerTool;

/** A Messages API request body. Fields precis does not model (`max_tokens`, `thinking`, ...) are untyped extras. */
export interface AnthropicMessagesRequest {
  model?: string;
  system?: string | AnthropicTextBlock[];
  messages: AnthropicMessage[];
  tools?: AnthropicTool[];
  [field: string]: unknown;
}
