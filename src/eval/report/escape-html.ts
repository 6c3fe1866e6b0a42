const entities: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** A high surrogate without its low half, or a low one without its high half. */
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Text made safe for HTML and inline SVG, in element content and in quoted attribute values alike.
 * Lone surrogates become U+FFFD: they cannot be written as UTF-8 and would turn into garbage.
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => entities[character]!).replace(loneSurrogate, '\uFFFD');
}
