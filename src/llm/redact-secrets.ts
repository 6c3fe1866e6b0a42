import { InvalidArgumentError } from '../errors/index.js';
import { describeValue } from '../internal/json-shapes.js';

/**
 * Kinds of secret `redactSecrets` recognises, in the order they are looked for: the most specific first, so an
 * `sk-ant-` key is not reported as an OpenAI key and a key inside an `Authorization` header is named by its kind.
 */
export const secretKinds = [
  'private-key',
  'jwt',
  'anthropic-key',
  'openai-key',
  'aws-access-key',
  'github-token',
  'slack-token',
  'bearer-token',
  'url-password',
  'password-assignment',
] as const;
export type SecretKind = (typeof secretKinds)[number];

export interface SecretRedaction {
  kind: SecretKind;
  /** How many were replaced. */
  count: number;
}

export interface RedactSecretsResult {
  /** The text with every secret replaced by `[REDACTED:<kind>]`. */
  text: string;
  /** What was redacted, one entry per kind found, in `secretKinds` order. Empty when nothing was. */
  redactions: SecretRedaction[];
}

interface SecretPattern {
  kind: SecretKind;
  pattern: RegExp;
  /** The replacement of one match; the whole match becomes the marker when absent. */
  replace?: (marker: string, ...groups: string[]) => string | undefined;
}

/** Not part of a token: a key must not start or end in the middle of a longer word. */
const before = '(?<![A-Za-z0-9_-])';
const after = '(?![A-Za-z0-9_-])';

/** Assignment values that name where a secret comes from rather than being one. */
const referenceValue =
  /^(?:\$|%|<|\{\{|\[REDACTED|process\.env|os\.(?:environ|getenv)|getenv|env\(|None$|null$|nil$|undefined$|true$|false$|string$|str$|bool$|\*+$|x+$)/i;

const patterns: readonly SecretPattern[] = [
  {
    kind: 'private-key',
    // An unterminated block (a key cut off in a tool output) is redacted to the end of the text.
    pattern: /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY-----(?:[\s\S]*?-----END \1PRIVATE KEY-----|[\s\S]*$)/g,
  },
  {
    kind: 'jwt',
    pattern: new RegExp(`${before}eyJ[A-Za-z0-9_-]{5,}\\.eyJ[A-Za-z0-9_-]{5,}\\.[A-Za-z0-9_-]*`, 'g'),
  },
  { kind: 'anthropic-key', pattern: new RegExp(`${before}sk-ant-[A-Za-z0-9_-]{20,}${after}`, 'g') },
  { kind: 'openai-key', pattern: new RegExp(`${before}sk-[A-Za-z0-9_-]{20,}${after}`, 'g') },
  { kind: 'aws-access-key', pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g },
  {
    kind: 'github-token',
    pattern: new RegExp(`${before}(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})${after}`, 'g'),
  },
  { kind: 'slack-token', pattern: new RegExp(`${before}xox[abprs]-[A-Za-z0-9-]{10,}${after}`, 'g') },
  {
    kind: 'bearer-token',
    pattern: /\b(Bearer)(\s+)([A-Za-z0-9._~+/-]{12,}=*)/gi,
    // A plain word after "Bearer" is prose ("Bearer authentication"), not a token.
    replace: (marker, scheme, space, token) =>
      /^[A-Za-z]+$/.test(token ?? '') ? undefined : `${scheme}${space}${marker}`,
  },
  {
    kind: 'url-password',
    // scheme://user:password@host: the user and host stay, they are facts; only the password goes.
    pattern: /\b([a-z][a-z0-9+.-]*:\/\/)([^\s:/?#@'"[\]]+):([^\s/?#@'"]+)@/gi,
    replace: (marker, scheme, user, password) =>
      password?.startsWith('[REDACTED') ? undefined : `${scheme}${user}:${marker}@`,
  },
  {
    kind: 'password-assignment',
    // password=..., DB_PASSWORD: "...", "client_secret": "...", secret = '...'; the name stays.
    pattern:
      /(?<![A-Za-z0-9])(["']?)([A-Za-z0-9_.-]*?(?:password|passwd|passphrase|secret|secret_?(?:access_)?key|api_?key|access_?token|auth_?token))\1(\s*[:=]\s*)("[^"\n]*"|'[^'\n]*'|[^\s,;&"'<>)}\]]+)/gi,
    replace: (marker, quote, name, separator, value) => {
      const bare = value?.replace(/^["']|["']$/g, '') ?? '';
      if (bare === '' || referenceValue.test(bare)) return undefined;
      const wrap = value?.startsWith('"') ? '"' : value?.startsWith("'") ? "'" : '';
      return `${quote}${name}${quote}${separator}${wrap}${marker}${wrap}`;
    },
  },
];

/** The marker a secret of `kind` is replaced with. */
export function redactionMarker(kind: SecretKind): string {
  return `[REDACTED:${kind}]`;
}

/**
 * Replaces secrets in `text` (API keys of OpenAI, Anthropic, AWS, GitHub and Slack, JWTs, bearer tokens, private
 * key blocks, passwords in URLs and `password=` / `secret:` style assignments) with `[REDACTED:<kind>]`, before
 * the text leaves for a third-party summarizer. Names around a secret (the user in a URL, the variable of an
 * assignment) are kept, as they are facts the summary may need. Deterministic: the same text always gives the
 * same result, and redacting the result again changes nothing. Pattern-based, so it is a safety net, not a
 * guarantee: a secret with no recognisable shape passes.
 *
 * @throws InvalidArgumentError when `text` is not a string
 */
export function redactSecrets(text: string): RedactSecretsResult {
  if (typeof text !== 'string')
    throw new InvalidArgumentError('text', `expected a string, got ${describeValue(text)}`);
  const counts = new Map<SecretKind, number>();
  let result = text;
  for (const { kind, pattern, replace } of patterns) {
    const marker = redactionMarker(kind);
    result = result.replace(pattern, (match: string, ...rest: unknown[]) => {
      // The replacer gets the groups, then offset and input: keep the groups only.
      const groups = rest.slice(0, -2).map((group) => (typeof group === 'string' ? group : ''));
      const replacement = replace === undefined ? marker : replace(marker, ...groups);
      if (replacement === undefined) return match;
      counts.set(kind, (counts.get(kind) ?? 0) + 1);
      return replacement;
    });
  }
  const redactions = secretKinds
    .filter((kind) => counts.has(kind))
    .map((kind) => ({ kind, count: counts.get(kind) ?? 0 }));
  return { text: result, redactions };
}

/** Adds `more` to `total` (per kind, in `secretKinds` order). Neither argument is changed. */
export function mergeRedactions(
  total: readonly SecretRedaction[],
  more: readonly SecretRedaction[],
): SecretRedaction[] {
  const counts = new Map<SecretKind, number>();
  for (const { kind, count } of [...total, ...more]) counts.set(kind, (counts.get(kind) ?? 0) + count);
  return secretKinds
    .filter((kind) => counts.has(kind))
    .map((kind) => ({ kind, count: counts.get(kind) ?? 0 }));
}

/** What `createSecretRedactor` returns: `clean` each text before it is sent, then read what was replaced. */
export interface SecretRedactor {
  /** `text` with its secrets replaced (unchanged when redaction is off). */
  clean(text: string): string;
  /** The secrets replaced by every `clean` so far, per kind. */
  redactions(): SecretRedaction[];
}

/** A redactor for the texts of one prompt, adding up what it replaced; with `redact` false it changes nothing. */
export function createSecretRedactor(redact: boolean): SecretRedactor {
  let redactions: SecretRedaction[] = [];
  return {
    clean(text) {
      if (!redact) return text;
      const result = redactSecrets(text);
      redactions = mergeRedactions(redactions, result.redactions);
      return result.text;
    },
    redactions: () => redactions,
  };
}
