import type { ChartSeries } from './chart-series.js';
import { escapeHtml } from './escape-html.js';
import { coordinate, dataAttributes, shorten, svgElement, svgRoot, tooltip } from './svg-element.js';

export interface RadarAxis {
  label: string;
  /** Hover text of the axis label, e.g. the full name behind a short label. @default label */
  title?: string;
  /** `data-*` attributes on the axis' spoke and label. */
  data?: Readonly<Record<string, string>>;
}

export interface RadarSeries extends ChartSeries {
  /** One value per axis, from 0 to `maxValue`; `null` (no data) is drawn at the centre. */
  values: ReadonlyArray<number | null>;
  /** Hover text per axis. @default `<series> · <axis>: <value>` */
  tooltips?: ReadonlyArray<string | undefined>;
}

export interface RadarChartOptions {
  /** Read by screen readers; the page shows its own caption. */
  label: string;
  /** Any number of axes: probe types now, the judge's rubric dimensions later. Three or more read best. */
  axes: readonly RadarAxis[];
  /** Usually one per chart (small multiples compare better than overlaid polygons). */
  series: readonly RadarSeries[];
  /** The outer ring. @default 1 */
  maxValue?: number;
  /** Rings drawn inside the outer one, evenly spaced. @default 4 */
  rings?: number;
  /** Formats values in labels and tooltips. @default String */
  formatValue?: (value: number) => string;
}

const width = 340;
const height = 250;
const radius = 74;
const centerX = width / 2;
const centerY = height / 2;

/** Where axis `index` of `count` points; the first straight up, then clockwise. */
function direction(index: number, count: number): { x: number; y: number } {
  const angle = -Math.PI / 2 + (2 * Math.PI * index) / Math.max(1, count);
  return { x: Math.cos(angle), y: Math.sin(angle) };
}

const points = (list: ReadonlyArray<{ x: number; y: number }>) =>
  list.map((point) => `${coordinate(point.x)},${coordinate(point.y)}`).join(' ');

/**
 * A radar (spider) chart as inline SVG, generic over its axes: rings and spokes, one `polygon.radar-area`
 * per series with a `circle.radar-point` per axis, and axis labels (with the value when there is one
 * series).
 */
export function radarChart(options: RadarChartOptions): string {
  const { label, axes, series, maxValue = 1, rings = 4, formatValue = String } = options;
  const count = axes.length;
  const at = (index: number, value: number) => {
    const share = maxValue <= 0 ? 0 : Math.max(0, Math.min(1, value / maxValue));
    const { x, y } = direction(index, count);
    return { x: centerX + x * radius * share, y: centerY + y * radius * share };
  };
  const parts: string[] = [];
  for (let ring = 1; ring <= rings; ring++) {
    const value = (maxValue * ring) / rings;
    parts.push(
      svgElement('polygon', {
        class: 'radar-ring',
        points: points(axes.map((_, index) => at(index, value))),
      }),
    );
  }
  axes.forEach((axis, index) => {
    const end = at(index, maxValue);
    const { x, y } = direction(index, count);
    const anchor = Math.abs(x) < 0.2 ? 'middle' : x > 0 ? 'start' : 'end';
    const labelX = centerX + x * (radius + 10);
    // Labels above the chart sit on their baseline, those below hang from it.
    const labelY = centerY + y * (radius + 10) + (y > 0.2 ? 10 : y < -0.2 ? -14 : -2);
    const single = series.length === 1 ? series[0]!.values[index] : undefined;
    const value =
      single === undefined
        ? ''
        : svgElement(
            'tspan',
            { class: 'radar-value', x: labelX, dy: 14 },
            escapeHtml(single === null ? '–' : formatValue(single)),
          );
    parts.push(
      svgElement('line', {
        class: 'radar-spoke',
        x1: centerX,
        y1: centerY,
        x2: end.x,
        y2: end.y,
        ...dataAttributes(axis.data),
      }),
      svgElement(
        'text',
        { class: 'radar-axis', x: labelX, y: labelY, 'text-anchor': anchor, ...dataAttributes(axis.data) },
        escapeHtml(shorten(axis.label, 22)) + value + tooltip(axis.title ?? axis.label),
      ),
    );
  });
  for (const entry of series) {
    const vertices = axes.map((_, index) => at(index, entry.values[index] ?? 0));
    const text = (index: number) => {
      const value = entry.values[index] ?? null;
      return (
        entry.tooltips?.[index] ??
        `${entry.name} · ${axes[index]!.label}: ${value === null ? '–' : formatValue(value)}`
      );
    };
    parts.push(
      svgElement(
        'polygon',
        {
          class: 'radar-area',
          points: points(vertices),
          fill: entry.color,
          stroke: entry.color,
          ...dataAttributes(entry.data),
        },
        tooltip(entry.name),
      ),
      ...vertices.map((vertex, index) =>
        svgElement(
          'circle',
          {
            class: 'radar-point',
            cx: vertex.x,
            cy: vertex.y,
            r: 3.5,
            fill: entry.color,
            ...dataAttributes(entry.data),
          },
          tooltip(text(index)),
        ),
      ),
    );
  }
  return svgRoot({ width, height, label, className: 'radar-chart' }, parts.join(''));
}
