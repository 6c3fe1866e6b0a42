import { describe, expect, it } from 'vitest';
import { radarChart } from './radar-chart.js';

const polygonPoints = (svg: string, className: string) =>
  [...svg.matchAll(new RegExp(`<polygon class="${className}" points="([^"]+)"`, 'g'))].map((match) =>
    match[1]!.split(' ').map((pair) => pair.split(',').map(Number) as [number, number]),
  );

describe('radarChart', () => {
  it('puts the first axis straight up and scales values to the radius', () => {
    const svg = radarChart({
      label: 'one',
      axes: [{ label: 'recall' }, { label: 'artifact' }, { label: 'decision' }, { label: 'continuation' }],
      series: [
        { name: 'precis', color: '#009E73', data: { compressor: 'precis' }, values: [1, 0.5, 0, null] },
      ],
      formatValue: (value) => `${Math.round(value * 100)}%`,
    });
    const [area] = polygonPoints(svg, 'radar-area');
    // Centre (170, 125), radius 74: up, right (half), then the centre twice.
    expect(area).toEqual([
      [170, 51],
      [207, 125],
      [170, 125],
      [170, 125],
    ]);
    expect(polygonPoints(svg, 'radar-ring')).toHaveLength(4);
    expect((svg.match(/class="radar-point"/g) ?? []).length).toBe(4);
    expect(svg).toContain('data-compressor="precis"');
    // One series: each axis label carries its value, a dash for no data.
    expect(svg).toContain('>50%</tspan>');
    expect(svg).toContain('>–</tspan>');
  });

  it('is generic over the axes: six rubric dimensions, two overlaid series', () => {
    const axes = [
      'accuracy',
      'context awareness',
      'artifact trail',
      'completeness',
      'continuity',
      'instruction following',
    ].map((label) => ({ label }));
    const svg = radarChart({
      label: 'judge',
      axes,
      maxValue: 5,
      rings: 5,
      series: [
        { name: 'a', color: '#0072B2', values: [5, 4, 3, 2, 1, 0] },
        { name: 'b', color: '#E69F00', values: [1, 1, 1, 1, 1, 1] },
      ],
    });
    const areas = polygonPoints(svg, 'radar-area');
    expect(areas).toHaveLength(2);
    expect(areas.every((area) => area.length === 6)).toBe(true);
    expect(polygonPoints(svg, 'radar-ring')).toHaveLength(5);
    expect((svg.match(/class="radar-spoke"/g) ?? []).length).toBe(6);
    // Several series: no per-axis value under the labels.
    expect(svg).not.toContain('radar-value');
    expect(svg).toContain('instruction following');
  });

  it('shows a short axis label with the full name as its hover text', () => {
    const svg = radarChart({
      label: 'judge',
      axes: [
        { label: 'context', title: 'context-awareness <rubric>' },
        { label: 'accuracy' },
        { label: 'instructions', title: 'instruction-following' },
      ],
      series: [{ name: 'a', color: '#0072B2', values: [1, 2, 3] }],
      maxValue: 5,
    });
    expect(svg).toMatch(/>context<tspan[^>]*>1<\/tspan><title>context-awareness &lt;rubric&gt;<\/title>/);
    expect(svg).toMatch(/>accuracy<tspan[^>]*>2<\/tspan><title>accuracy<\/title>/);
    expect(svg).toContain('<title>instruction-following</title>');
  });
});
