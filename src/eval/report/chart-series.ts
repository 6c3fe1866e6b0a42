import { escapeHtml } from './escape-html.js';
import { dataAttributes, svgElement, textWidth } from './svg-element.js';

/** One named, coloured series of a chart. */
export interface ChartSeries {
  name: string;
  /** Any CSS colour. */
  color: string;
  /** `data-*` attributes on every mark of the series, e.g. `{ compressor: 'precis' }`, for filtering. */
  data?: Readonly<Record<string, string>>;
}

/**
 * The Okabe–Ito palette, which stays distinguishable under the common colour-vision deficiencies; ordered
 * so the first colours have good contrast on white (its yellow comes last).
 */
export const chartPalette = [
  '#0072B2',
  '#E69F00',
  '#009E73',
  '#CC79A7',
  '#D55E00',
  '#56B4E9',
  '#000000',
  '#F0E442',
] as const;

/** The palette colour for the series at `index`, cycling. */
export function chartColor(index: number): string {
  return chartPalette[index % chartPalette.length]!;
}

/** Height of the legend row(s) that `chartLegend` draws. */
const legendRowHeight = 18;

/**
 * A legend of swatches and names wrapped into rows of at most `width`; returns the markup and its height.
 * `swatch` draws the swatch per series (e.g. a line with a marker for line charts).
 */
export function chartLegend(
  series: readonly ChartSeries[],
  options: { x: number; y: number; width: number; swatch?: (index: number, x: number, y: number) => string },
): { markup: string; height: number } {
  const { x, y, width } = options;
  const swatch =
    options.swatch ??
    ((index: number, left: number, top: number) =>
      svgElement('rect', { x: left, y: top - 9, width: 12, height: 12, rx: 2, fill: series[index]!.color }));
  let left = x;
  let row = 0;
  const items = series.map((entry, index) => {
    const itemWidth = 18 + textWidth(entry.name, 12) + 16;
    if (left > x && left + itemWidth > x + width) {
      left = x;
      row++;
    }
    const top = y + row * legendRowHeight + 12;
    const markup = svgElement(
      'g',
      { class: 'legend-item', ...dataAttributes(entry.data) },
      swatch(index, left, top) + svgElement('text', { x: left + 18, y: top + 1 }, escapeHtml(entry.name)),
    );
    left += itemWidth;
    return markup;
  });
  return {
    markup: svgElement('g', { class: 'legend' }, items.join('')),
    height: series.length === 0 ? 0 : (row + 1) * legendRowHeight + 6,
  };
}
