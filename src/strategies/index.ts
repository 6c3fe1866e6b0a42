export {
  type CompactJsonOutputsOptions,
  compactJsonOutputs,
  compactJsonText,
  compactToolOutput,
  pruneJsonValue,
} from './compact-json-outputs/compact-json-outputs.js';
export { type DeduplicateOptions, deduplicate } from './deduplicate/deduplicate.js';
export {
  type FindNearDuplicatesOptions,
  findNearDuplicates,
  type NearDuplicate,
} from './deduplicate/find-near-duplicates.js';
export { dropOldestTurns } from './drop-oldest-turns/drop-oldest-turns.js';
export {
  type DynamicImportanceOptions,
  dynamicImportance,
  type ImportanceAction,
  messageStubPrefix,
} from './dynamic-importance/dynamic-importance.js';
export {
  createHeuristicImportanceScorer,
  type HeuristicImportanceOptions,
} from './dynamic-importance/heuristic-scorer.js';
export {
  type HeuristicImportanceScorer,
  type ImportanceInput,
  type ImportanceLevel,
  type ImportanceScorer,
  type ImportanceScoring,
  importanceLevels,
  type LlmImportanceScorer,
  type LlmScoringContext,
  type MessageImportance,
} from './dynamic-importance/importance-levels.js';
export {
  createLlmImportanceScorer,
  importanceOutputSchema,
  type LlmImportanceScorerOptions,
} from './dynamic-importance/llm-importance-scorer.js';
export {
  type ImportanceReport,
  importanceGoal,
  type ScoreImportanceOptions,
  scoreImportance,
} from './dynamic-importance/score-importance.js';
export { type ElideBlobsOptions, elideBlobs } from './elide-blobs/elide-blobs.js';
export { type CompressProseOptions, compressProse } from './extractive-prose/compress-prose.js';
export { type ExtractiveProseOptions, extractiveProse } from './extractive-prose/extractive-prose.js';
export {
  type FoldIntoSummaryHooks,
  type FoldIntoSummaryOptions,
  foldIntoSummary,
} from './fold-into-summary/fold-into-summary.js';
export {
  type AnchoredSections,
  type AnchoredSectionsPrompt,
  anchoredSectionNames,
  anchoredSectionsRecord,
  anchoredSectionsSchema,
  type BuildAnchoredSectionsPromptOptions,
  buildAnchoredSectionsPrompt,
  combineAnchoredSections,
  readAnchoredSections,
  withAnchoredSections,
} from './llm-anchored/anchored-sections.js';
export { type LlmAnchoredOptions, llmAnchored } from './llm-anchored/llm-anchored.js';
export { type LlmProgressiveOptions, llmProgressive } from './llm-progressive/llm-progressive.js';
export { type LlmSummarizeOptions, llmSummarize } from './llm-summarize/llm-summarize.js';
export { type LlmSummaryOptions, summaryHeader, summaryHeaderPattern } from './llm-support.js';
export {
  type CodeLanguage,
  codeLanguages,
  type PruneCodeOptions,
  type PruneCodeResult,
  pruneCode,
} from './prune-code-bodies/prune-code.js';
export { type PruneCodeBodiesOptions, pruneCodeBodies } from './prune-code-bodies/prune-code-bodies.js';
export { removeFiller, removeFillerText } from './remove-filler/remove-filler.js';
export {
  type AnyStrategy,
  type AsyncStrategy,
  type AsyncStrategyContext,
  isAsyncStrategy,
  type Strategy,
  type StrategyAction,
  type StrategyContext,
  type StrategyResult,
  type StrategyWarning,
} from './strategy.js';
export {
  type StripReasoningOptions,
  stripMessageReasoning,
  stripReasoning,
  stripThinkingTags,
} from './strip-reasoning/strip-reasoning.js';
export {
  afterRequestStubPrefix,
  demonstrationStubPrefix,
  expansionStubPrefix,
  preambleStubPrefix,
  stubDemonstrations,
} from './stub-demonstrations/stub-demonstrations.js';
export {
  type StubToolOutputsOptions,
  stubToolOutputs,
  toolOutputStub,
  toolOutputStubPrefix,
} from './stub-tool-outputs/stub-tool-outputs.js';
export { firstErrorLine, toolOutputGist } from './stub-tool-outputs/tool-output-gist.js';
