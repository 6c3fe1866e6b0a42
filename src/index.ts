// The stable public API of precis. Anything not exported here is internal.

export * from './archive/index.js';
export * from './engine/index.js';
export * from './errors/index.js';
export {
  type InspectOptions,
  type InspectReport,
  inspectConversation,
} from './inspect/inspect-conversation.js';
export {
  buildLedger,
  createLedger,
  type Ledger,
  type LedgerCommand,
  type LedgerError,
  type LedgerFile,
  type LedgerFileChange,
  type LedgerReference,
  type LedgerSnapshot,
  type LedgerTestRun,
  type RenderLedgerOptions,
  renderLedger,
} from './ledger/index.js';
export {
  type AiSdkClientOptions,
  type AiSdkLanguageModel,
  type AnthropicClientOptions,
  type CreateLlmClientOptions,
  checkJsonSchema,
  createAiSdkClient,
  createAnthropicClient,
  createLlmClient,
  createOpenAICompatibleClient,
  formatLlmSpec,
  isLocalEndpoint,
  isProviderError,
  type JsonSchemaIssue,
  type LlmClient,
  type LlmConfig,
  type LlmFinishReason,
  type LlmProvider,
  type LlmRequest,
  type LlmResponse,
  type LlmSpec,
  type LlmTransportOptions,
  type LlmUsage,
  llmFinishReasons,
  llmProviders,
  type OpenAICompatibleClientOptions,
  ProviderError,
  type ProviderErrorKind,
  parseLlmSpec,
  providerErrorKinds,
  type ResolveLlmConfigOptions,
  redactSecrets,
  resolveLlmConfig,
  type SecretKind,
  secretKinds,
} from './llm/index.js';
export {
  type FromAnthropicOptions,
  fromAnthropic,
  type ToAnthropicOptions,
  type ToAnthropicResult,
  toAnthropic,
} from './messages/convert/anthropic.js';
export type {
  AnthropicMessage,
  AnthropicMessagesRequest,
  AnthropicTool,
} from './messages/convert/anthropic-types.js';
export {
  detectFormat,
  type FormatGuess,
  type MessageFormat,
  messageFormats,
} from './messages/convert/detect-format.js';
export {
  type FromOpenAIOptions,
  fromOpenAI,
  type OpenAIReasoningMode,
  openAIReasoningModes,
  type ToOpenAIOptions,
  type ToOpenAIResult,
  toOpenAI,
} from './messages/convert/openai.js';
export type { OpenAIChatMessage, OpenAIChatRequest, OpenAITool } from './messages/convert/openai-types.js';
export { unknownToolName } from './messages/convert/placeholders.js';
export * from './messages/index.js';
export * from './messages/validate/index.js';
export * from './strategies/index.js';
export * from './summary/index.js';
export * from './tokens/index.js';
export {
  detectTranscriptFormat,
  type ImportTranscriptOptions,
  type ImportTranscriptResult,
  type InputFormat,
  importTranscript,
  inputFormats,
  readTranscriptFile,
} from './transcripts/import-transcript.js';
export {
  createImportContext,
  type ImportContext,
  type ImportOptions,
  type ImportResult,
  type ImportStats,
  type ImportWarning,
  type SidechainMode,
  sidechainModes,
  type TranscriptFormat,
  type TranscriptImporter,
  type TranscriptMetadata,
  transcriptFormats,
} from './transcripts/transcript-importer.js';
