import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { propertyRuns } from '../../../test/support/property-runs.js';
import { escapeHtml } from './escape-html.js';

const decodeEntities = (html: string) =>
  html.replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) =>
    name === 'amp' ? '&' : name === 'lt' ? '<' : name === 'gt' ? '>' : name === 'quot' ? '"' : "'",
  );

describe('escapeHtml', () => {
  it('escapes markup, ampersands and both quotes, and leaves other text alone', () => {
    expect(escapeHtml(`<a href="x" title='y'>&amp;</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;',
    );
    expect(escapeHtml('日本語のテスト ✓ 🎉')).toBe('日本語のテスト ✓ 🎉');
  });

  it('replaces lone surrogates, keeps pairs', () => {
    expect(escapeHtml('a\uD800b\uDC00c\uD83C\uDF89')).toBe('a\uFFFDb\uFFFDc🎉');
  });

  it('round-trips any text and leaves no character that could open a tag or end an attribute', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 60 }), (text) => {
        const escaped = escapeHtml(text);
        expect(escaped).not.toMatch(/[<>"']/);
        expect(escaped.replace(/&(amp|lt|gt|quot|#39);/g, '')).not.toContain('&');
        expect(decodeEntities(escaped)).toBe(text);
      }),
      { numRuns: propertyRuns(300) },
    );
  });
});
