import { type ChartSeries, chartLegend } from './chart-series.js';
import { escapeHtml } from './escape-html.js';
import { coordinate, dataAttributes, svgElement, svgRoot, tooltip } from './svg-element.js';

export interface LinePoint {
  x: number;
  y: number;
  /** Hover text. @default `<series>: <y>` */
  tooltip?: string;
}

export interface LineSeries extends ChartSeries {
  /** Drawn in order of `x`. */
  points: readonly LinePoint[];
}

export interface LineChartOptions {
  /** Read by screen readers; the page shows its own caption. */
  label: string;
  series: readonly LineSeries[];
  /** Labelled ticks on the x axis, e.g. one per budget. */
  xTicks: ReadonlyArray<{ value: number; label: string }>;
  xLabel: string;
  yLabel: string;
  /** Right end of the x axis. @default 1.1 × the largest x or tick (1 when there is none) */
  xMax?: number;
  /** Top of the y axis. @default 1 */
  yMax?: number;
  /** Ticks on the y axis besides 0. @default 4 */
  yTicks?: number;
  /** @default String */
  formatY?: (value: number) => string;
  /** Width of the drawing in SVG units; it scales to its container, so this sets the text size. @default 720 */
  width?: number;
}

const plotHeight = 240;
const left = 56;
const right = 20;

/** Dash patterns and marker shapes per series, so lines stay apart without colour (print, colour blindness). */
const dashes = ['', '7 4', '2 3', '10 3 2 3'] as const;
const shapes = ['circle', 'square', 'triangle', 'diamond'] as const;

function marker(
  shape: (typeof shapes)[number],
  x: number,
  y: number,
  attributes: Record<string, string>,
  title: string,
) {
  const common = { class: 'point', ...attributes };
  if (shape === 'circle') return svgElement('circle', { ...common, cx: x, cy: y, r: 4.5 }, title);
  if (shape === 'square')
    return svgElement('rect', { ...common, x: x - 4, y: y - 4, width: 8, height: 8 }, title);
  const corners =
    shape === 'triangle'
      ? [
          [x, y - 5.5],
          [x + 5, y + 4],
          [x - 5, y + 4],
        ]
      : [
          [x, y - 5.5],
          [x + 5.5, y],
          [x, y + 5.5],
          [x - 5.5, y],
        ];
  const points = corners
    .map(([cornerX, cornerY]) => `${coordinate(cornerX!)},${coordinate(cornerY!)}`)
    .join(' ');
  return svgElement('polygon', { ...common, points }, title);
}

/**
 * A line chart as inline SVG: one `polyline.line` per series with a marker (`.point`) per point, dashes
 * and marker shapes varying by series, a legend, labelled x ticks and a y grid.
 */
export function lineChart(options: LineChartOptions): string {
  const {
    label,
    series,
    xTicks,
    xLabel,
    yLabel,
    yMax = 1,
    yTicks = 4,
    formatY = String,
    width = 720,
  } = options;
  const largestX = Math.max(
    0,
    ...series.flatMap((entry) => entry.points.map((point) => point.x)),
    ...xTicks.map((tick) => tick.value),
  );
  const xMax = options.xMax ?? (largestX > 0 ? largestX * 1.1 : 1);
  const swatch = (index: number, x: number, y: number) => {
    const entry = series[index]!;
    return (
      svgElement('line', {
        x1: x - 2,
        x2: x + 14,
        y1: y - 3,
        y2: y - 3,
        stroke: entry.color,
        'stroke-width': 2.5,
        'stroke-dasharray': dashes[index % dashes.length] || undefined,
      }) +
      marker(shapes[index % shapes.length]!, x + 6, y - 3, { class: 'legend-marker', fill: entry.color }, '')
    );
  };
  const legend = chartLegend(series, { x: left, y: 4, width: width - left - right, swatch });
  const plotTop = legend.height + 16;
  const bottom = plotTop + plotHeight;
  const plotWidth = width - left - right;
  const toX = (value: number) => left + plotWidth * Math.max(0, Math.min(1, value / xMax));
  const toY = (value: number) => bottom - plotHeight * Math.max(0, Math.min(1, yMax <= 0 ? 0 : value / yMax));
  const parts: string[] = [legend.markup];
  for (let tick = 0; tick <= yTicks; tick++) {
    const value = (yMax * tick) / yTicks;
    const y = toY(value);
    parts.push(
      svgElement('line', { class: 'grid', x1: left, x2: width - right, y1: y, y2: y }),
      svgElement(
        'text',
        { class: 'tick', x: left - 6, y: y + 4, 'text-anchor': 'end' },
        escapeHtml(formatY(value)),
      ),
    );
  }
  for (const tick of xTicks) {
    const x = toX(tick.value);
    parts.push(
      svgElement('line', { class: 'grid grid-x', x1: x, x2: x, y1: plotTop, y2: bottom }),
      svgElement(
        'text',
        { class: 'tick', x, y: bottom + 16, 'text-anchor': 'middle' },
        escapeHtml(tick.label),
      ),
    );
  }
  parts.push(
    svgElement('line', { class: 'axis', x1: left, x2: width - right, y1: bottom, y2: bottom }),
    svgElement('line', { class: 'axis', x1: left, x2: left, y1: plotTop, y2: bottom }),
    svgElement(
      'text',
      { class: 'axis-label', x: left + plotWidth / 2, y: bottom + 36, 'text-anchor': 'middle' },
      escapeHtml(xLabel),
    ),
    svgElement(
      'text',
      {
        class: 'axis-label',
        x: 14,
        y: plotTop + plotHeight / 2,
        'text-anchor': 'middle',
        transform: `rotate(-90 14 ${coordinate(plotTop + plotHeight / 2)})`,
      },
      escapeHtml(yLabel),
    ),
  );
  series.forEach((entry, index) => {
    const sorted = [...entry.points].sort((first, second) => first.x - second.x);
    const attributes = dataAttributes(entry.data);
    parts.push(
      svgElement(
        'g',
        { class: 'series', ...attributes },
        svgElement('polyline', {
          class: 'line',
          points: sorted.map((point) => `${coordinate(toX(point.x))},${coordinate(toY(point.y))}`).join(' '),
          stroke: entry.color,
          'stroke-dasharray': dashes[index % dashes.length] || undefined,
        }) +
          sorted
            .map((point) =>
              marker(
                shapes[index % shapes.length]!,
                toX(point.x),
                toY(point.y),
                { fill: entry.color },
                tooltip(point.tooltip ?? `${entry.name}: ${formatY(point.y)}`),
              ),
            )
            .join(''),
      ),
    );
  });
  return svgRoot({ width, height: bottom + 46, label, className: 'line-chart' }, parts.join(''));
}
