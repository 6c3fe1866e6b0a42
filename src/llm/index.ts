export {
  type AiSdkCallOptions,
  type AiSdkClientOptions,
  type AiSdkGenerateResult,
  type AiSdkLanguageModel,
  type AiSdkPromptMessage,
  createAiSdkClient,
  toAiSdkPrompt,
} from './ai-sdk-client.js';
export {
  type AnthropicClientOptions,
  anthropicBaseUrl,
  anthropicVersion,
  createAnthropicClient,
} from './anthropic-client.js';
export { type CreateLlmClientOptions, createLlmClient } from './create-llm-client.js';
export {
  createHttpTransport,
  type HttpTransport,
  type HttpTransportOptions,
  isRetryableStatus,
  type JsonPostRequest,
  type JsonPostResponse,
  type LlmTransportOptions,
  parseRetryAfter,
  type Sleep,
  sleepWithAbort,
} from './http-transport.js';
export { extractJson, jsonOutputInstruction, parseJsonOutput } from './json-output.js';
export {
  checkJsonSchema,
  checkJsonSchemaDefinition,
  type JsonSchemaIssue,
  type JsonSchemaType,
  jsonSchemaTypes,
} from './json-schema-check.js';
export {
  type LlmClient,
  type LlmFinishReason,
  type LlmRequest,
  type LlmResponse,
  type LlmUsage,
  llmFinishReasons,
} from './llm-client.js';
export {
  defaultBaseUrls,
  formatLlmSpec,
  isLocalEndpoint,
  type LlmConfig,
  type LlmEnvironment,
  type LlmProvider,
  type LlmSpec,
  llmProviders,
  parseLlmSpec,
  type ResolveLlmConfigOptions,
  resolveLlmConfig,
} from './llm-config.js';
export {
  createOpenAICompatibleClient,
  type JsonResponseFormat,
  jsonResponseFormats,
  type MaxTokensField,
  maxTokensFields,
  type OpenAICompatibleClientOptions,
  openAIBaseUrl,
} from './openai-compatible-client.js';
export {
  isProviderError,
  ProviderError,
  type ProviderErrorDetails,
  type ProviderErrorKind,
  providerErrorKinds,
} from './provider-error.js';
export {
  mergeRedactions,
  type RedactSecretsResult,
  redactionMarker,
  redactSecrets,
  type SecretKind,
  type SecretRedaction,
  secretKinds,
} from './redact-secrets.js';
export {
  type BuildSummaryPromptOptions,
  buildSummaryPrompt,
  fenceData,
  readSummaryOutput,
  renderSummaryFacts,
  renderTranscript,
  renderTranscriptMessage,
  type SummaryFacts,
  type SummaryMode,
  type SummaryPrompt,
  type SummaryPromptKind,
  summaryModes,
  summaryOutputSchema,
  summaryPromptKinds,
} from './summary-prompt.js';
