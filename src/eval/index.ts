// `precis/eval`: probe-based evaluation of compressors (deterministic fact checks; the LLM judge comes later).
export {
  type Compressor,
  type CompressorContext,
  createHeadTailCompressor,
  createPrecisCompressor,
  createTruncationCompressor,
  fullContextCompressor,
  type HeadTailCompressorOptions,
  headTailCompressor,
  type PrecisCompressorOptions,
  precisCompressor,
  type TruncationCompressorOptions,
  truncationCompressor,
} from './compressors.js';
export {
  type FactSurvival,
  factSurvival,
  type OffsetBucket,
  offsetBuckets,
  type ProbeResult,
  type ProbeScore,
  type ProbeTally,
  renderForProbes,
  scoreProbes,
  scoreProbesInText,
} from './fact-score.js';
export {
  InvalidProbeFileError,
  loadProbeFile,
  type ParseProbeFileOptions,
  type Probe,
  type ProbeFile,
  type ProbeType,
  parseProbeFile,
  probeTypes,
} from './probes.js';
export * from './report/index.js';
export {
  type CompressorTotal,
  type EvalBudget,
  type EvalReport,
  type EvalSession,
  type EvaluateSessionsOptions,
  evaluateSessions,
  type SessionResult,
} from './run-eval.js';
