// Reports of `evaluateSessions` runs: markdown, and a self-contained HTML page with inline SVG charts.
export { type ChartSeries, chartColor, chartPalette } from './chart-series.js';
export { escapeHtml } from './escape-html.js';
export {
  type BarSeries,
  type ChartCategory,
  type GroupedBarChartOptions,
  groupedBarChart,
} from './grouped-bar-chart.js';
export { type LineChartOptions, type LinePoint, type LineSeries, lineChart } from './line-chart.js';
export { hasSeveralPoints, type PointTotal, pointTotals } from './point-totals.js';
export { type RadarAxis, type RadarChartOptions, type RadarSeries, radarChart } from './radar-chart.js';
export { type RenderHtmlOptions, renderHtml } from './render-html.js';
export { markdownCode, type RenderMarkdownOptions, renderMarkdown } from './render-markdown.js';
export {
  type BudgetView,
  type ReportInput,
  type ReportSummary,
  summarizeReports,
} from './summarize-reports.js';
