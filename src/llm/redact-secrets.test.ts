import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { propertyRuns } from '../../test/support/property-runs.js';
import { isPrecisError } from '../errors/index.js';
import { createSecretRedactor, mergeRedactions, redactSecrets, secretKinds } from './redact-secrets.js';

// Built from pieces so no scanner mistakes this file for a leak.
const openAiKey = ['sk', 'proj', 'Abcdefghij0123456789KLMNOPqrstuv'].join('-');
const anthropicKey = ['sk', 'ant', 'api03', 'Zyxwvutsrq9876543210ABCDEFGhijkl'].join('-');
const awsKey = `AKIA${'IOSFODNN7EXAMPLE'}`;
const githubToken = `ghp_${'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'}`;
const slackToken = ['xoxb', '123456789012', '1234567890123', 'AbCdEfGhIjKlMnOpQrStUvWx'].join('-');
const jwt = [
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9',
  'eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ',
  'SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
].join('.');
const privateKey = [
  '-----BEGIN RSA PRIVATE KEY-----',
  'MIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB',
  'aFDrBz9vFqU4yB8x5Mpk0lTb4eJp3Jw1iW2P0YyF0x6nS2lNpQ==',
  '-----END RSA PRIVATE KEY-----',
].join('\n');

describe('redactSecrets', () => {
  it.each([
    ['openai-key', `OPENAI key is ${openAiKey} here`, openAiKey],
    ['anthropic-key', `export KEY=${anthropicKey}`, anthropicKey],
    ['aws-access-key', `aws_access_key_id = ${awsKey}`, awsKey],
    ['github-token', `git clone https://${githubToken}@github.com/o/r`, githubToken],
    ['slack-token', `token: ${slackToken}`, slackToken],
    ['jwt', `cookie session=${jwt}; path=/`, jwt],
    ['private-key', `key file:\n${privateKey}\ndone`, 'MIIEpAIBAAKCAQEA0Z3VS5JJ'],
  ] as const)('redacts %s', (kind, text, secret) => {
    const result = redactSecrets(text);
    expect(result.text).not.toContain(secret);
    expect(result.text).toContain(`[REDACTED:${kind}]`);
    expect(result.redactions.map((entry) => entry.kind)).toContain(kind);
  });

  it('keeps the words around a secret: bearer scheme, URL user and host, assignment names', () => {
    const text = [
      'curl -H "Authorization: Bearer abc123.def456-ghi789" https://api.example.com',
      'DATABASE_URL=postgres://admin:hunter2pass@db.internal:5432/app',
      'password=correct-horse',
      'config: {"client_secret": "s3cr3t-value", "retries": 3}',
      "DB_PASSWORD: 'p@ss'",
    ].join('\n');
    const result = redactSecrets(text);
    expect(result.text).toBe(
      [
        'curl -H "Authorization: Bearer [REDACTED:bearer-token]" https://api.example.com',
        'DATABASE_URL=postgres://admin:[REDACTED:url-password]@db.internal:5432/app',
        'password=[REDACTED:password-assignment]',
        'config: {"client_secret": "[REDACTED:password-assignment]", "retries": 3}',
        "DB_PASSWORD: '[REDACTED:password-assignment]'",
      ].join('\n'),
    );
    expect(result.redactions).toEqual([
      { kind: 'bearer-token', count: 1 },
      { kind: 'url-password', count: 1 },
      { kind: 'password-assignment', count: 3 },
    ]);
  });

  it('names a key inside a header or assignment by its own kind, once', () => {
    const result = redactSecrets(`Authorization: Bearer ${openAiKey}\nOPENAI_API_KEY=${openAiKey}`);
    expect(result.text).toBe(
      'Authorization: Bearer [REDACTED:openai-key]\nOPENAI_API_KEY=[REDACTED:openai-key]',
    );
    expect(result.redactions).toEqual([{ kind: 'openai-key', count: 2 }]);
  });

  it('redacts an unterminated private key block to the end', () => {
    const cut = privateKey.split('\n').slice(0, 2).join('\n');
    const result = redactSecrets(`cat id_rsa\n${cut}`);
    expect(result.text).toBe('cat id_rsa\n[REDACTED:private-key]');
  });

  it('leaves ordinary text, code and references to secrets alone', () => {
    const text = [
      'Bearer authentication is configured in src/auth/bearer.ts',
      'const password: string = readFromVault();',
      'password = os.getenv("DB_PASSWORD")',
      'api_key=$OPENAI_API_KEY',
      'max_tokens=100, task-123, sk-short, https://example.com/a:b@c',
      'The tests failed with TypeError: cannot read properties of undefined',
    ].join('\n');
    const result = redactSecrets(text);
    expect(result.text).toBe(text);
    expect(result.redactions).toEqual([]);
  });

  it('is deterministic and idempotent', () => {
    const text = `a ${openAiKey} b password=x1 c https://u:p4ss@h/ d ${jwt}`;
    const once = redactSecrets(text);
    expect(redactSecrets(text)).toEqual(once);
    expect(redactSecrets(once.text)).toEqual({ text: once.text, redactions: [] });
  });

  it('never leaves a planted key in any surrounding text (property)', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.string(),
        fc.constantFrom(openAiKey, anthropicKey, githubToken, jwt),
        (before, after, secret) => {
          const result = redactSecrets(`${before} ${secret} ${after}`);
          expect(result.text.includes(secret)).toBe(before.includes(secret) || after.includes(secret));
          const again = redactSecrets(result.text);
          expect(again.text).toBe(result.text);
        },
      ),
      { numRuns: propertyRuns(300) },
    );
  });

  it('reports kinds in a fixed order and merges reports', () => {
    expect(
      mergeRedactions(
        [{ kind: 'password-assignment', count: 1 }],
        [
          { kind: 'jwt', count: 2 },
          { kind: 'password-assignment', count: 2 },
        ],
      ),
    ).toEqual([
      { kind: 'jwt', count: 2 },
      { kind: 'password-assignment', count: 3 },
    ]);
    expect(secretKinds[0]).toBe('private-key');
  });

  it('refuses a non-string with a typed error', () => {
    let caught: unknown;
    try {
      redactSecrets(42 as unknown as string);
    } catch (error) {
      caught = error;
    }
    expect(isPrecisError(caught) && caught.code).toBe('invalid-argument');
  });
});

describe('createSecretRedactor', () => {
  it('adds up what every clean replaced, and changes nothing when off', () => {
    const redactor = createSecretRedactor(true);
    expect(redactor.clean(`key ${openAiKey}`)).toBe('key [REDACTED:openai-key]');
    redactor.clean(`again ${openAiKey} and ${awsKey}`);
    expect(redactor.redactions()).toEqual(
      mergeRedactions(
        redactSecrets(openAiKey).redactions,
        redactSecrets(`${openAiKey} ${awsKey}`).redactions,
      ),
    );
    const off = createSecretRedactor(false);
    expect(off.clean(`key ${openAiKey}`)).toBe(`key ${openAiKey}`);
    expect(off.redactions()).toEqual([]);
  });
});
