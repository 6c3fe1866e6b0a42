export {
  contentParts,
  isDemonstration,
  isEmptyMessage,
  isErrorOutput,
  isExpansion,
  isFormatComplaint,
  isHarnessNote,
  isOriginalRequest,
  isUserRequest,
  messageText,
  requestOnly,
  systemPromptLength,
  toolCallsOf,
  toolOutputText,
  toolResultsOf,
  typedRequest,
} from './content.js';
export type { ConversionWarning } from './convert/conversion-warning.js';
export { assignIds, messageContentHash, stripPrecisFields } from './ids.js';
export { type ParseMessagesOptions, parseConversation, parseMessages } from './parse.js';
export { type Provider, providers } from './provider.js';
export * from './types.js';
