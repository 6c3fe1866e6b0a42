/**
 * The OpenAI Chat Completions request wire format, as far as precis reads and writes it. Written by hand (no SDK
 * dependency) after the `openai` package's `ChatCompletionMessageParam`. Servers that speak the format
 * (DeepSeek, vLLM, OpenRouter, ...) add fields; those travel as unknown extra fields and are not typed here.
 */

export interface OpenAITextContentPart {
  type: 'text';
  text: string;
}

export type OpenAIImageDetail = 'auto' | 'low' | 'high';

export interface OpenAIImageContentPart {
  type: 'image_url';
  image_url: {
    /** An http(s) URL or a `data:<media type>;base64,<data>` URL. */
    url: string;
    detail?: OpenAIImageDetail;
  };
}

export interface OpenAIAudioContentPart {
  type: 'input_audio';
  input_audio: {
    /** Base64, without a data URL prefix. */
    data: string;
    format: 'wav' | 'mp3';
  };
}

export interface OpenAIFileContentPart {
  type: 'file';
  file: {
    /** A `data:<media type>;base64,<data>` URL. */
    file_data?: string;
    /** The id of a file uploaded through the Files API. */
    file_id?: string;
    filename?: string;
  };
}

export interface OpenAIRefusalContentPart {
  type: 'refusal';
  refusal: string;
}

export type OpenAIUserContentPart =
  | OpenAITextContentPart
  | OpenAIImageContentPart
  | OpenAIAudioContentPart
  | OpenAIFileContentPart;

export type OpenAIAssistantContentPart = OpenAITextContentPart | OpenAIRefusalContentPart;

export interface OpenAISystemMessage {
  role: 'system';
  content: string | OpenAITextContentPart[];
  name?: string;
}

/** What newer OpenAI models read instead of `system`; same shape. */
export interface OpenAIDeveloperMessage {
  role: 'developer';
  content: string | OpenAITextContentPart[];
  name?: string;
}

export interface OpenAIUserMessage {
  role: 'user';
  content: string | OpenAIUserContentPart[];
  name?: string;
}

export interface OpenAIFunctionToolCall {
  id: string;
  type: 'function';
  function: {
    name: string;
    /** JSON text as the model produced it; not guaranteed to be valid JSON. */
    arguments: string;
  };
}

/** A call of a free-form `custom` tool: the input is plain text, not JSON. */
export interface OpenAICustomToolCall {
  id: string;
  type: 'custom';
  custom: {
    name: string;
    input: string;
  };
}

export type OpenAIToolCall = OpenAIFunctionToolCall | OpenAICustomToolCall;

export interface OpenAIAssistantMessage {
  role: 'assistant';
  content?: string | OpenAIAssistantContentPart[] | null;
  refusal?: string | null;
  name?: string;
  /** A reference to an earlier audio response of the model. */
  audio?: { id: string } | null;
  tool_calls?: OpenAIToolCall[];
  /** Deprecated predecessor of `tool_calls`. */
  function_call?: { name: string; arguments: string } | null;
  /** Chain of thought, as DeepSeek, vLLM and other OpenAI-compatible servers return it. */
  reasoning_content?: string;
  /** The same, under the name some servers (OpenRouter, Ollama) use. */
  reasoning?: string;
}

export interface OpenAIToolMessage {
  role: 'tool';
  content: string | OpenAITextContentPart[];
  tool_call_id: string;
}

/** Deprecated predecessor of `tool` messages: the answer to an assistant `function_call`. */
export interface OpenAIFunctionMessage {
  role: 'function';
  name: string;
  content: string | null;
}

export type OpenAIChatMessage =
  | OpenAISystemMessage
  | OpenAIDeveloperMessage
  | OpenAIUserMessage
  | OpenAIAssistantMessage
  | OpenAIToolMessage
  | OpenAIFunctionMessage;

export type OpenAIRole = OpenAIChatMessage['role'];
export const openAIRoles = [
  'system',
  'developer',
  'user',
  'assistant',
  'tool',
  'function',
] as const satisfies readonly OpenAIRole[];

export interface OpenAIFunctionTool {
  type: 'function';
  function: {
    name: string;
    description?: string;
    /** JSON Schema of the arguments. Absent means the function takes no arguments. */
    parameters?: Record<string, unknown>;
    strict?: boolean | null;
  };
}

export interface OpenAICustomTool {
  type: 'custom';
  custom: {
    name: string;
    description?: string;
    format?: Record<string, unknown>;
  };
}

export type OpenAITool = OpenAIFunctionTool | OpenAICustomTool;

/** A Chat Completions request body. Fields other than these three (temperature, tool_choice, ...) are untyped. */
export interface OpenAIChatRequest {
  model?: string;
  messages: OpenAIChatMessage[];
  tools?: OpenAITool[];
  [field: string]: unknown;
}
