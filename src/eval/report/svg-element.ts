import { escapeHtml } from './escape-html.js';

export type SvgAttributes = Readonly<Record<string, string | number | undefined>>;

/** A coordinate with at most two decimals and no trailing zeros: short, and the same bytes on every run. */
export function coordinate(value: number): string {
  const rounded = Math.round(value * 100) / 100;
  return String(Object.is(rounded, -0) ? 0 : rounded);
}

/** An element with escaped attribute values; `undefined` attributes are left out. `content` is markup. */
export function svgElement(name: string, attributes: SvgAttributes, content = ''): string {
  const rendered = Object.entries(attributes)
    .filter((entry): entry is [string, string | number] => entry[1] !== undefined)
    .map(([key, value]) => ` ${key}="${typeof value === 'number' ? coordinate(value) : escapeHtml(value)}"`)
    .join('');
  return content === '' ? `<${name}${rendered}/>` : `<${name}${rendered}>${content}</${name}>`;
}

/** `{ compressor: 'precis' }` → `{ 'data-compressor': 'precis' }`, for the page's filters. */
export function dataAttributes(data: Readonly<Record<string, string>> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(data ?? {}).map(([key, value]) => [`data-${key}`, value]));
}

/** A hover tooltip: SVG's own `<title>` child, which every browser shows without script. */
export function tooltip(text: string): string {
  return `<title>${escapeHtml(text)}</title>`;
}

/** The root `<svg>`: scales to its container's width through `viewBox`; labelled for screen readers. */
export function svgRoot(
  options: { width: number; height: number; label: string; className: string },
  content: string,
): string {
  const { width, height, label, className } = options;
  return svgElement(
    'svg',
    {
      xmlns: 'http://www.w3.org/2000/svg',
      viewBox: `0 0 ${coordinate(width)} ${coordinate(height)}`,
      class: `chart ${className}`,
      role: 'img',
      'aria-label': label,
    },
    content,
  );
}

/** A label cut to `maxCharacters` with an ellipsis; SVG text does not wrap or clip by itself. */
export function shorten(text: string, maxCharacters: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= maxCharacters ? flat : `${flat.slice(0, maxCharacters - 1)}…`;
}

/** Rough width of sans-serif text, for laying out legends (no font metrics without a browser). */
export function textWidth(text: string, fontSize: number): number {
  let width = 0;
  for (const character of text) width += (character.codePointAt(0) ?? 0) > 0x2e80 ? 1 : 0.58;
  return width * fontSize;
}
