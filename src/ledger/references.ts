/** URLs and issue / pull-request ids (`owner/repo#123`, `GH-123`, bare `#123`) in a text, verbatim, in order. */

export type ReferenceKind = 'url' | 'issue';

export interface FoundReference {
  kind: ReferenceKind;
  value: string;
}

const urlPattern = /\bhttps?:\/\/[^\s<>"'`{}|\\^\])]+(?:\([^\s()]*\)[^\s<>"'`{}|\\^\])]*)*/g;
/** Bare `#123` in tool output is often noise (line numbers, colours); there it must follow issue/PR/pull. */
const outputIssueContext = /(?:issue|issues|pr|pull|pull request|fixes|closes|resolves|bug)\s*$/i;

export interface ReferenceOptions {
  /**
   * Tool output mode: bare `#123` only after a word like "issue", "PR" or "fixes", and no URLs that are JSON
   * field values. @default false
   */
  strictIssues?: boolean;
  /** Stop after this many references. @default 20 */
  maxReferences?: number;
}

export function referencesIn(text: string, options: ReferenceOptions = {}): FoundReference[] {
  const { strictIssues = false, maxReferences = 20 } = options;
  const found: FoundReference[] = [];
  if (text.includes('://')) {
    for (const match of text.matchAll(urlPattern)) {
      if (found.length >= maxReferences) return found;
      // API payloads in tool output are full of `"avatar_url": "https://…"` fields: not references anyone made.
      if (strictIssues && /"\s*:\s*"$/.test(text.slice(Math.max(0, match.index - 4), match.index))) continue;
      const url = match[0].replace(/[.,;:!?]+$/, '');
      // `http://localhost:${port}` is a template, not a URL.
      if (url.length > 12 && !url.endsWith('$')) found.push({ kind: 'url', value: url });
    }
  }
  // Issue ids are found from each `#` (and `GH-`) outward rather than by one regex over the whole text, which
  // would try an `owner/repo` match at every word start.
  const issues: Array<{ at: number; value: string }> = [];
  for (let at = text.indexOf('#'); at !== -1; at = text.indexOf('#', at + 1)) {
    // Most `#` are headings, comments and colours: no digit, no id (the pattern below starts with one).
    const next = text.charCodeAt(at + 1);
    if (next < 48 || next > 57) continue;
    const digits = /^\d{1,7}(?![\w-])/.exec(text.slice(at + 1, at + 10));
    if (digits === null) continue;
    const before = text.slice(Math.max(0, at - 120), at);
    const repository = /(?:^|[^\w&#/])([A-Za-z0-9][\w.-]*\/[\w.-]+)$/.exec(before)?.[1];
    if (repository !== undefined) {
      // A URL fragment (`…/file.ts#123`) is not an issue id.
      if (/\.[A-Za-z]{1,5}$/.test(repository) && !/\.(?:js|py|rs|go|io)$/.test(repository)) continue;
      issues.push({ at: at - repository.length, value: `${repository}#${digits[0]}` });
      continue;
    }
    if (/[\w&#/]$/.test(before)) continue;
    if (strictIssues && !outputIssueContext.test(before.slice(-20))) continue;
    issues.push({ at, value: `#${digits[0]}` });
  }
  if (text.includes('GH-'))
    for (const match of text.matchAll(/\bGH-(\d{1,7})\b/g))
      issues.push({ at: match.index, value: `GH-${match[1]}` });
  issues.sort((left, right) => left.at - right.at);
  for (const issue of issues) {
    if (found.length >= maxReferences) break;
    found.push({ kind: 'issue', value: issue.value });
  }
  return found;
}
