import { describe, expect, it } from 'vitest';
import { groupedBarChart, niceScale } from './grouped-bar-chart.js';

const count = (svg: string, pattern: RegExp) => (svg.match(pattern) ?? []).length;
const rects = (svg: string) =>
  [...svg.matchAll(/<rect class="bar" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)"/g)].map(
    (match) => ({
      x: Number(match[1]),
      y: Number(match[2]),
      width: Number(match[3]),
      height: Number(match[4]),
    }),
  );

const series = [
  { name: 'a', color: '#0072B2', data: { compressor: 'a' }, values: [0.5, 1, null] },
  { name: 'b & "c"', color: '#E69F00', data: { compressor: 'b & "c"' }, values: [0.25, 0, 2] },
];
const categories = [
  { label: 'recall', data: { type: 'recall' } },
  { label: 'artifact', data: { type: 'artifact' } },
  { label: '<decision>', data: { type: 'decision' } },
];

describe('groupedBarChart', () => {
  it('draws one bar per non-null value, scaled and clamped to the axis, with filter attributes', () => {
    const svg = groupedBarChart({ label: 'pass rate', categories, series, maxValue: 1 });
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 720 ')).toBe(true);
    expect(count(svg, /class="bar"/g)).toBe(5);
    const [aRecall, bRecall, aArtifact, bArtifact, bDecision] = rects(svg);
    expect(aArtifact!.height).toBe(220);
    expect(aRecall!.height).toBe(110);
    expect(bRecall!.height).toBe(55);
    expect(bArtifact!.height).toBe(1); // a zero is a hairline, not nothing
    expect(bDecision!.height).toBe(220); // 2 on an axis up to 1: clamped
    expect(svg).toContain('data-compressor="b &amp; &quot;c&quot;" data-type="decision"');
    expect(svg).toContain('&lt;decision&gt;');
    expect(svg).not.toContain('<decision>');
    // The null value gets a dash as its label and no bar.
    expect(count(svg, />–</g)).toBe(1);
  });

  it('lays out horizontal bars with a marker per category and round ticks', () => {
    const svg = groupedBarChart({
      label: 'tokens',
      orientation: 'horizontal',
      categories: [{ label: 'x'.repeat(80) }, { label: 'short' }],
      series: [
        { name: 'before', color: '#999', values: [55_000, 1200] },
        { name: 'after', color: '#0072B2', values: [2000, null] },
      ],
      markers: { name: 'budget', values: [5500, null] },
      formatValue: String,
    });
    expect(count(svg, /class="bar"/g)).toBe(3);
    expect(count(svg, /class="marker"/g)).toBe(1);
    expect(svg).toContain(`${'x'.repeat(39)}…`);
    expect(svg).toContain(`<title>${'x'.repeat(80)}</title>`);
    for (const tick of ['0', '20000', '40000', '60000']) expect(svg).toContain(`>${tick}</text>`);
    expect(svg).not.toContain('>80000<');
  });

  it('renders no categories or series without failing', () => {
    const svg = groupedBarChart({ label: 'empty', categories: [], series: [] });
    expect(svg).toContain('class="chart bar-chart bar-chart-vertical"');
    expect(count(svg, /class="bar"/g)).toBe(0);
    expect(svg).not.toMatch(/NaN|Infinity/);
  });
});

describe('niceScale', () => {
  it('picks steps of 1, 2, 2.5 or 5 times a power of ten', () => {
    expect(niceScale(55_000, 4)).toEqual({ maxValue: 60_000, ticks: 3 });
    expect(niceScale(1, 4)).toEqual({ maxValue: 1, ticks: 4 });
    expect(niceScale(0.9, 4)).toEqual({ maxValue: 1, ticks: 4 });
    expect(niceScale(7, 4)).toEqual({ maxValue: 8, ticks: 4 });
    expect(niceScale(0, 4)).toEqual({ maxValue: 1, ticks: 4 });
    for (const largest of [3, 17, 123, 999, 1001, 0.03])
      expect(niceScale(largest, 4).maxValue).toBeGreaterThanOrEqual(largest);
  });
});
