export {
  type CalibratedCounter,
  type CalibratedCounterOptions,
  type CalibrationObservation,
  createCalibratedCounter,
  initialCalibrationRatios,
  isCalibratedCounter,
} from './calibrated-counter.js';
export {
  getModelInfo,
  knownModelIds,
  type ModelInfo,
  type ModelProvider,
  type ModelTokenizer,
  modelProviders,
  modelTokenizers,
  type ResolvedModel,
  type ResolveModelOptions,
  resolveModel,
} from './models.js';
export { createO200kCounter, type O200kCounterOptions } from './o200k-counter.js';
export { type ProviderFraming, providerFraming } from './provider-framing.js';
export {
  type ConversationTokenCount,
  createTokenAccountant,
  defaultFileTokens,
  defaultImageTokens,
  type MessageTokenCount,
  type MessageTokenEntry,
  type TokenAccountant,
  type TokenAccountantOptions,
  type TokenCacheStats,
  type ToolTokenCount,
} from './token-accountant.js';
export type { TokenCounter } from './token-counter.js';
