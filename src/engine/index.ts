export {
  type CompactOptions,
  type CompactProvider,
  type CompactReport,
  type CompactResult,
  type CompactStrategyReport,
  type CompactWarning,
  compact,
  compactProviders,
  defaultStrategies,
  preservedMessageIds,
} from './compact.js';
