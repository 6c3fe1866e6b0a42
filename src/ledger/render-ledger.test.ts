import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { propertyRuns } from '../../test/support/property-runs.js';
import { assignIds } from '../messages/ids.js';
import { createConversationBuilder, type ToolExchange } from '../testing/message-builders.js';
import { createO200kCounter } from '../tokens/index.js';
import { buildLedger } from './create-ledger.js';
import { codeSpan, commandLabel, errorSourceLabel, readCodeSpan, renderLedger } from './render-ledger.js';

const counter = createO200kCounter();

function sessionWithFiles(count: number) {
  const builder = createConversationBuilder().user('Refactor, see owner/repo#9');
  for (let index = 0; index < count; index++) {
    const exchanges: ToolExchange[] = [
      { name: 'Read', input: { file_path: `/repo/src/read-${index}.ts` }, output: 'x' },
      {
        name: 'Edit',
        input: {
          file_path: `/repo/src/edit-${index}.ts`,
          old_string: 'a',
          new_string: `function f${index}() {}`,
        },
        output: 'ok',
      },
      { name: 'Bash', input: { command: `ls dir-${index}` }, output: 'a' },
    ];
    builder.tools(exchanges);
  }
  builder.tools([
    {
      name: 'Bash',
      input: { command: 'npm test' },
      output: {
        type: 'error-text',
        value:
          "Exit code 1\nTypeError: Cannot read properties of undefined (reading 'x')\nTests:       1 failed, 3 passed, 4 total",
      },
    },
  ]);
  return buildLedger(assignIds(builder.build()));
}

describe('commandLabel', () => {
  it("shows a script's first telling line after the line that runs it", () => {
    expect(commandLabel("python - <<'PY'\nimport io, re\n\n# patch it\np = 'a.py'\nPY")).toBe(
      "python - <<'PY' … p = 'a.py'",
    );
    expect(commandLabel('python3 -c "import sys\nprint(sys.path)"')).toBe(
      'python3 -c "import sys … print(sys.path)"',
    );
    expect(commandLabel('git commit -m "$(cat <<\'EOF\'\nFix the retry loop\n\nEOF\n)"')).toBe(
      "git commit -m \"$(cat <<'EOF' … Fix the retry loop",
    );
    expect(commandLabel('edit 12:14\n    return x\nend_of_edit')).toBe('edit 12:14 … return x');
  });

  it('names only the file a heredoc is written to, and cuts to the width asked', () => {
    expect(commandLabel("cat <<'EOF' > repro.py\nprint(1)\nEOF")).toBe("cat <<'EOF' > repro.py");
    expect(commandLabel("cat > .env << 'EOF'\nA=1\nEOF")).toBe("cat > .env << 'EOF'");
    expect(commandLabel("python - <<'PY'\nimport os\nPY")).toBe("python - <<'PY' …");
    expect(commandLabel("python - <<'PY'\nvalue = compute_the_answer()\nPY", 30)).toBe(
      "python - <<'PY' … value = comp…",
    );
    expect(commandLabel('  npm test  ')).toBe('npm test');
  });
});

describe('renderLedger', () => {
  it('renders every section with paths, commands, symbols and errors verbatim', () => {
    const text = renderLedger(sessionWithFiles(2));
    expect(text).toContain('## Files\n- `/repo/src/read-0.ts` — read: read');
    expect(text).toContain('- `/repo/src/edit-1.ts` — modified: edited (-1/+1 lines) `f1`');
    expect(text).toContain('## Commands\n- `ls dir-0` → ok');
    expect(text).toContain(
      "- `TypeError: Cannot read properties of undefined (reading 'x')` — from `npm test`",
    );
    expect(text).toContain('## Tests\n- jest `npm test`: 1 failed, 3 passed (exit 1)');
    expect(text).toContain('## References\n- owner/repo#9');
    expect(renderLedger(buildLedger([]))).toBe('');
  });

  it("labels an error with what ran, not the workspace's leading cd, and a command with its output cut", () => {
    const session = createConversationBuilder()
      .user('Run the parser test.')
      .tools([
        {
          name: 'Bash',
          input: { command: 'cd /workspace/parser && npx ts-node test_parse.ts' },
          output: { type: 'error-text', value: "Error: Cannot find module 'typescript'" },
        },
      ])
      .build();
    const text = renderLedger(buildLedger(assignIds(session)));
    expect(text).toContain("- `Error: Cannot find module 'typescript'` — from `npx ts-node test_parse.ts`");
    // The command itself is listed as it ran.
    expect(text).toContain('- `cd /workspace/parser && npx ts-node test_parse.ts` → failed');
    expect(errorSourceLabel('cd /repo; npm test')).toBe('npm test');
    const cut = createConversationBuilder()
      .user('List it.')
      .tools([{ name: 'Bash', input: { command: 'ls -R' }, output: 'a\n... [40 lines truncated] ...\nz' }])
      .build();
    expect(renderLedger(buildLedger(assignIds(cut)))).toContain(
      '- `ls -R` → ok (output cut: [40 lines truncated])',
    );
    expect(errorSourceLabel('cd /repo')).toBe('cd /repo');
  });

  it('says that a command timed out, or still runs', () => {
    const session = createConversationBuilder()
      .user('Build it and serve it.')
      .tools([
        {
          name: 'Bash',
          input: { command: 'npm run build' },
          output: { type: 'error-text', value: 'Command timed out after 2m 0.0s\n> next build' },
        },
      ])
      .tools([
        {
          name: 'execute_bash',
          input: { command: 'npm start' },
          output: 'ready on :3000\n[The command has no new output after 30 seconds. You may wait longer …]',
        },
      ])
      .build();
    const text = renderLedger(buildLedger(assignIds(session)));
    expect(text).toContain('- `npm run build` → timed out');
    expect(text).toContain('- `npm start` → still running');
    const retried = createConversationBuilder()
      .user('Build it.')
      .tools([
        {
          name: 'Bash',
          input: { command: 'npm run build' },
          output: { type: 'error-text', value: 'Command timed out after 2m 0.0s' },
        },
      ])
      .tools([
        {
          name: 'Bash',
          input: { command: 'npm run build' },
          output: { type: 'error-text', value: 'Exit code 1\nerror TS2304' },
        },
      ])
      .tools([{ name: 'Bash', input: { command: 'npm run build' }, output: 'Compiled successfully' }])
      .build();
    expect(renderLedger(buildLedger(assignIds(retried)))).toContain(
      '- `npm run build` → ok (3 runs, 1 failed, 1 timed out)',
    );
  });

  it('code spans survive backticks and newlines', () => {
    expect(codeSpan('a`b')).toBe('`` a`b ``');
    expect(codeSpan('x\ny')).toBe('`x ⏎ y`');
  });

  it('reads back the code span it wrote, wherever it starts and whatever follows', () => {
    expect(readCodeSpan('`` a`b `` read', 0)).toEqual({ text: 'a`b', end: 9 });
    expect(readCodeSpan('- `src/a.ts` read', 2)).toEqual({ text: 'src/a.ts', end: 12 });
    for (const text of ['plain', '`unclosed', '``no pad``']) expect(readCodeSpan(text), text).toBeUndefined();
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }).filter((text) => !/[\r\n]/.test(text)),
        fc.string(),
        (text, after) => {
          const span = codeSpan(text);
          expect(readCodeSpan(`- ${span}${after}`, 2)).toEqual({ text, end: span.length + 2 });
        },
      ),
      { numRuns: propertyRuns(200) },
    );
  });

  it('caps by dropping the least important rows, last first, with (+N more)', () => {
    const snapshot = sessionWithFiles(40);
    const full = renderLedger(snapshot, { counter });
    const capped = renderLedger(snapshot, { maxTokens: 300, counter });
    expect(counter.count(full)).toBeGreaterThan(300);
    expect(counter.count(capped)).toBeLessThanOrEqual(300);
    // Plain commands and read-only files go before edits, errors and the latest test run.
    expect(capped).toContain('## Commands\n- (+');
    expect(capped).toContain("TypeError: Cannot read properties of undefined (reading 'x')");
    expect(capped).toContain('jest `npm test`');
    expect(capped).toContain('`/repo/src/edit-0.ts`');
    expect(capped).not.toContain('`/repo/src/edit-39.ts`');
    expect(capped).toMatch(/- \(\+\d+ more\)/);
  });

  it('always fits a feasible budget and never grows as the budget shrinks', () => {
    const snapshot = sessionWithFiles(12);
    fc.assert(
      fc.property(fc.integer({ min: 60, max: 900 }), (maxTokens) => {
        const text = renderLedger(snapshot, { maxTokens, counter });
        expect(counter.count(text)).toBeLessThanOrEqual(maxTokens);
        expect(
          counter.count(renderLedger(snapshot, { maxTokens: maxTokens - 40, counter })),
        ).toBeLessThanOrEqual(counter.count(text));
      }),
      { numRuns: propertyRuns(60) },
    );
  });
});
