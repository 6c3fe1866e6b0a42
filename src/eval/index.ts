// `precis/eval`: probe-based evaluation of compressors — probe files and generated probes, deterministic fact
// checks, compression points, the LLM answerer and judge, side-by-side runs, a result cache, and reports.
export * from './compression-points.js';
export * from './compressors.js';
export * from './eval-cache.js';
export * from './fact-score.js';
export * from './generate-probes.js';
export * from './judge.js';
export * from './probes.js';
export * from './report/index.js';
export * from './run-eval.js';
