export type Alignment = 'left' | 'right';

/** Renders rows as an aligned plain-text table with a header and a rule. Numbers should be pre-formatted. */
export function formatTable(header: string[], rows: string[][], align: Alignment[] = []): string {
  const widths = header.map((cell, column) =>
    Math.max(cell.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) =>
        align[column] === 'right' ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!),
      )
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

export function formatInteger(value: number): string {
  return value.toLocaleString('en-US');
}

export function formatPercent(part: number, whole: number): string {
  return whole === 0 ? '0.0%' : `${((100 * part) / whole).toFixed(1)}%`;
}

/** One line of at most `width` characters, whitespace collapsed, with an ellipsis when cut. */
export function preview(text: string, width = 60): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= width ? flat : `${flat.slice(0, width - 1)}…`;
}
