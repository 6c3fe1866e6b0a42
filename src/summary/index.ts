export {
  type AnchoredSummary,
  anchoredSummaryToJson,
  type BuildAnchoredSummaryOptions,
  buildAnchoredSummary,
  emptyAnchoredSummary,
  mergeAnchoredSummary,
  parseAnchoredSummary,
  type RenderAnchoredSummaryOptions,
  renderAnchoredSummary,
  type SummaryFile,
  type SummaryTask,
  summarySentences,
} from './anchored-summary.js';
