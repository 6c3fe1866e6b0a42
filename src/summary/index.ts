export {
  type AnchoredSummary,
  anchoredSummaryToJson,
  type BuildAnchoredSummaryOptions,
  buildAnchoredSummary,
  emptyAnchoredSummary,
  isTodoList,
  mergeAnchoredSummary,
  parseAnchoredSummary,
  type SummaryFile,
  type SummaryTask,
  summarySentences,
} from './anchored-summary.js';
export { lastResultLine, showsOnlyWhatItRead } from './command-results.js';
export { conversationLines } from './conversation-lines.js';
export { parseRenderedSummary } from './parse-rendered-summary.js';
export {
  type AnchoredSummaryRenderer,
  anchoredSummaryTokens,
  type CreateAnchoredSummaryRendererOptions,
  createAnchoredSummaryRenderer,
  type RenderAnchoredSummaryOptions,
  renderAnchoredSummary,
} from './render-anchored-summary.js';
