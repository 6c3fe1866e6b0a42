import { type ChartSeries, chartLegend } from './chart-series.js';
import { escapeHtml } from './escape-html.js';
import { dataAttributes, shorten, svgElement, svgRoot, textWidth, tooltip } from './svg-element.js';

export interface ChartCategory {
  label: string;
  /** `data-*` attributes on the category's marks, e.g. `{ type: 'recall' }`. */
  data?: Readonly<Record<string, string>>;
}

export interface BarSeries extends ChartSeries {
  /** One value per category; `null` where there is nothing to show (no bar, a dash as its label). */
  values: ReadonlyArray<number | null>;
  /** Hover text per category. @default `<series>: <value>` */
  tooltips?: ReadonlyArray<string | undefined>;
}

export interface GroupedBarChartOptions {
  /** Read by screen readers; the page shows its own caption. */
  label: string;
  categories: readonly ChartCategory[];
  series: readonly BarSeries[];
  /** Vertical columns for a few short categories, horizontal bars for many or long ones. @default 'vertical' */
  orientation?: 'vertical' | 'horizontal';
  /** Top of the value axis. @default the largest value (or 1 when there is none) */
  maxValue?: number;
  /** Formats tick and bar labels. @default String */
  formatValue?: (value: number) => string;
  /** Ticks on the value axis besides 0. @default 4 */
  ticks?: number;
  /** A dashed mark per category across its bars, e.g. the token budget. */
  markers?: { name: string; values: ReadonlyArray<number | null> };
  /** @default true */
  legend?: boolean;
  /** Width of the drawing in SVG units; it scales to its container, so this sets the text size. @default 720 */
  width?: number;
}

const fontSize = 11;

/**
 * Bars grouped by category, one bar per series, as inline SVG: every bar a `rect.bar` with the series' and
 * the category's `data-*` attributes, a tooltip and a value label.
 */
export function groupedBarChart(options: GroupedBarChartOptions): string {
  const {
    label,
    categories,
    series,
    orientation = 'vertical',
    formatValue = String,
    ticks = 4,
    markers,
    legend: showLegend = true,
    width = 720,
  } = options;
  const largest = Math.max(
    0,
    ...series.flatMap((entry) => entry.values.filter((value): value is number => value !== null)),
    ...(markers?.values.filter((value): value is number => value !== null) ?? []),
  );
  const scaleTop = options.maxValue === undefined ? niceScale(largest, ticks) : undefined;
  const maxValue = options.maxValue ?? scaleTop!.maxValue;
  const tickCount = scaleTop?.ticks ?? ticks;
  const scale = (value: number) => Math.max(0, Math.min(1, value / maxValue));
  const legend = showLegend
    ? chartLegend(series, { x: 8, y: 4, width: width - 16 })
    : { markup: '', height: 0 };
  const top = legend.height + 12;
  const layout = orientation === 'vertical' ? verticalLayout : horizontalLayout;
  const { markup, height } = layout({
    width,
    categories,
    series,
    top,
    scale,
    maxValue,
    ticks: tickCount,
    formatValue,
    markers,
  });
  return svgRoot(
    { width, height, label, className: `bar-chart bar-chart-${orientation}` },
    legend.markup + markup,
  );
}

/**
 * A top for the value axis that makes round ticks: the step is 1, 2, 2.5 or 5 times a power of ten, chosen
 * so about `ticks` steps cover `largest`.
 */
export function niceScale(largest: number, ticks: number): { maxValue: number; ticks: number } {
  if (!(largest > 0)) return { maxValue: 1, ticks };
  const rough = largest / Math.max(1, ticks);
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 2.5, 5, 10].map((factor) => factor * power).find((candidate) => candidate >= rough)!;
  const count = Math.max(1, Math.ceil(largest / step - 1e-9));
  return { maxValue: step * count, ticks: count };
}

interface Layout {
  width: number;
  categories: readonly ChartCategory[];
  series: readonly BarSeries[];
  top: number;
  scale: (value: number) => number;
  maxValue: number;
  ticks: number;
  formatValue: (value: number) => string;
  markers: GroupedBarChartOptions['markers'];
}

function bar(
  entry: BarSeries,
  category: ChartCategory,
  index: number,
  geometry: { x: number; y: number; width: number; height: number },
  formatValue: (value: number) => string,
): string {
  const value = entry.values[index] ?? null;
  if (value === null) return '';
  const text = entry.tooltips?.[index] ?? `${entry.name}: ${formatValue(value)}`;
  return svgElement(
    'rect',
    {
      class: 'bar',
      ...geometry,
      // A zero still shows as a hairline, so a bar that exists is never invisible.
      ...(geometry.width === 0 ? { width: 1 } : {}),
      ...(geometry.height === 0 ? { height: 1 } : {}),
      fill: entry.color,
      ...dataAttributes(entry.data),
      ...dataAttributes(category.data),
    },
    tooltip(text),
  );
}

function verticalLayout(layout: Layout): { markup: string; height: number } {
  const { width, categories, series, top, scale, maxValue, ticks, formatValue } = layout;
  const left = 48;
  const right = 12;
  const plotHeight = 220;
  const bottom = top + plotHeight;
  const plotWidth = width - left - right;
  const groupWidth = categories.length === 0 ? plotWidth : plotWidth / categories.length;
  const barWidth = (groupWidth * 0.8) / Math.max(1, series.length);
  const parts: string[] = [];
  for (let tick = 0; tick <= ticks; tick++) {
    const value = (maxValue * tick) / ticks;
    const y = bottom - plotHeight * scale(value);
    parts.push(
      svgElement('line', { class: 'grid', x1: left, x2: width - right, y1: y, y2: y }),
      svgElement(
        'text',
        { class: 'tick', x: left - 6, y: y + 4, 'text-anchor': 'end' },
        escapeHtml(formatValue(value)),
      ),
    );
  }
  categories.forEach((category, index) => {
    const groupLeft = left + index * groupWidth + groupWidth * 0.1;
    series.forEach((entry, seriesIndex) => {
      const value = entry.values[index] ?? null;
      const x = groupLeft + seriesIndex * barWidth;
      const height = value === null ? 0 : plotHeight * scale(value);
      parts.push(
        bar(
          entry,
          category,
          index,
          { x: x + 1, y: bottom - height, width: barWidth - 2, height },
          formatValue,
        ),
      );
      if (barWidth >= 22)
        parts.push(
          svgElement(
            'text',
            {
              class: 'bar-label',
              x: x + barWidth / 2,
              y: bottom - height - 4,
              'text-anchor': 'middle',
              ...dataAttributes(entry.data),
              ...dataAttributes(category.data),
            },
            escapeHtml(value === null ? '–' : formatValue(value)),
          ),
        );
    });
    parts.push(
      svgElement(
        'text',
        {
          class: 'category',
          x: left + (index + 0.5) * groupWidth,
          y: bottom + 18,
          'text-anchor': 'middle',
          ...dataAttributes(category.data),
        },
        escapeHtml(shorten(category.label, Math.max(4, Math.floor(groupWidth / (fontSize * 0.6))))) +
          tooltip(category.label),
      ),
    );
  });
  parts.push(svgElement('line', { class: 'axis', x1: left, x2: width - right, y1: bottom, y2: bottom }));
  return { markup: parts.join(''), height: bottom + 30 };
}

function horizontalLayout(layout: Layout): { markup: string; height: number } {
  const { width, categories, series, top, scale, maxValue, ticks, formatValue, markers } = layout;
  const labels = categories.map((category) => shorten(category.label, 40));
  // Room for the longest label, with a margin for fonts wider than the estimate.
  const left = Math.min(
    width / 2,
    Math.max(60, ...labels.map((label) => textWidth(label, fontSize) * 1.12 + 12)),
  );
  const right = 64;
  const barHeight = 9;
  const groupGap = 12;
  const plotWidth = width - left - right;
  const groupHeight = Math.max(1, series.length) * (barHeight + 2) + groupGap;
  const plotTop = top + 4;
  const plotBottom = plotTop + categories.length * groupHeight;
  const parts: string[] = [];
  for (let tick = 0; tick <= ticks; tick++) {
    const value = (maxValue * tick) / ticks;
    const x = left + plotWidth * scale(value);
    parts.push(
      svgElement('line', { class: 'grid', x1: x, x2: x, y1: plotTop, y2: plotBottom }),
      svgElement(
        'text',
        { class: 'tick', x, y: plotBottom + 16, 'text-anchor': 'middle' },
        escapeHtml(formatValue(value)),
      ),
    );
  }
  categories.forEach((category, index) => {
    const groupTop = plotTop + index * groupHeight + groupGap / 2;
    parts.push(
      svgElement(
        'text',
        {
          class: 'category',
          x: left - 8,
          y: groupTop + (groupHeight - groupGap) / 2 + 4,
          'text-anchor': 'end',
          ...dataAttributes(category.data),
        },
        escapeHtml(labels[index]!) + tooltip(category.label),
      ),
    );
    const marker = markers?.values[index] ?? null;
    const markerX = marker === null ? undefined : left + plotWidth * scale(marker);
    series.forEach((entry, seriesIndex) => {
      const value = entry.values[index] ?? null;
      const y = groupTop + seriesIndex * (barHeight + 2);
      const length = value === null ? 0 : plotWidth * scale(value);
      // Labels of bars shorter than the marker start after it, so the dashes never cross the digits.
      const labelX = Math.max(left + length, markerX === undefined ? 0 : markerX + 2) + 4;
      parts.push(
        bar(entry, category, index, { x: left, y, width: length, height: barHeight }, formatValue),
        svgElement(
          'text',
          {
            class: 'bar-label',
            x: labelX,
            y: y + barHeight - 1,
            ...dataAttributes(entry.data),
            ...dataAttributes(category.data),
          },
          escapeHtml(value === null ? '–' : formatValue(value)),
        ),
      );
    });
    if (markers !== undefined && marker !== null && markerX !== undefined) {
      parts.push(
        svgElement(
          'line',
          {
            class: 'marker',
            x1: markerX,
            x2: markerX,
            y1: groupTop - 3,
            y2: groupTop + groupHeight - groupGap + 1,
            ...dataAttributes(category.data),
          },
          tooltip(`${markers.name}: ${formatValue(marker)}`),
        ),
      );
    }
  });
  parts.push(svgElement('line', { class: 'axis', x1: left, x2: left, y1: plotTop, y2: plotBottom }));
  return { markup: parts.join(''), height: plotBottom + 26 };
}
