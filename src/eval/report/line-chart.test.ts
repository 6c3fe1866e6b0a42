import { describe, expect, it } from 'vitest';
import { lineChart } from './line-chart.js';

describe('lineChart', () => {
  const svg = lineChart({
    label: 'pass rate vs budget',
    xLabel: 'budget',
    yLabel: 'passed',
    xTicks: [
      { value: 0.05, label: '5%' },
      { value: 0.1, label: '10%' },
    ],
    series: [
      {
        name: 'truncation',
        color: '#0072B2',
        data: { compressor: 'truncation' },
        points: [
          { x: 0.1, y: 0.5 },
          { x: 0.05, y: 0.25, tooltip: 'at <5%>' },
        ],
      },
      { name: 'precis', color: '#E69F00', points: [{ x: 0.1, y: 1 }] },
    ],
  });

  it('draws a line and a marker per point, in x order, with distinct dashes', () => {
    const lines = [
      ...svg.matchAll(
        /<polyline class="line" points="([^"]+)" stroke="([^"]+)"( stroke-dasharray="[^"]+")?/g,
      ),
    ];
    expect(lines).toHaveLength(2);
    const xs = lines[0]![1]!.split(' ').map((pair) => Number(pair.split(',')[0]));
    expect(xs[0]).toBeLessThan(xs[1]!);
    expect(lines[0]![3]).toBeUndefined();
    expect(lines[1]![3]).toBe(' stroke-dasharray="7 4"');
    expect((svg.match(/class="point"/g) ?? []).length).toBe(3);
    // Series two gets a different marker shape (a square), for readers who cannot tell the colours apart.
    expect(svg).toMatch(/<rect class="point"/);
    expect(svg).toContain('<title>at &lt;5%&gt;</title>');
    expect(svg).toContain('<title>precis: 1</title>');
  });

  it('labels the x ticks and has a legend entry per series', () => {
    expect(svg).toContain('>5%</text>');
    expect(svg).toContain('>10%</text>');
    expect((svg.match(/class="legend-item"/g) ?? []).length).toBe(2);
    expect(svg).not.toMatch(/NaN|Infinity/);
  });
});
