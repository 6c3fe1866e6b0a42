import { describe, expect, it } from 'vitest';
import { analyzeShellCommand, analyzeShellWords, splitShellCommand } from './shell-command.js';

const effectsOf = (command: string, openFile?: string) =>
  analyzeShellCommand(command, openFile).effects.map(({ kind, path, detail, lineCount }) => ({
    kind,
    path,
    ...(detail === undefined ? {} : { detail }),
    ...(lineCount === undefined ? {} : { lineCount }),
  }));

describe('splitShellCommand', () => {
  it('splits on && || ; | and newlines, keeping quoted text whole', () => {
    const segments = splitShellCommand(`cd /repo && grep -n "a && b" x.py | head -5; echo 'done;'`);
    expect(segments.map((segment) => segment.words)).toEqual([
      ['cd', '/repo'],
      ['grep', '-n', 'a && b', 'x.py'],
      ['head', '-5'],
      ['echo', 'done;'],
    ]);
  });

  it('reads heredoc bodies and redirections', () => {
    const [segment] = splitShellCommand("cat <<'EOF' > reproduce.py\nimport os\nprint(1)\nEOF\n");
    expect(segment).toMatchObject({
      words: ['cat'],
      redirects: [{ operator: '>', target: 'reproduce.py' }],
      heredocBody: 'import os\nprint(1)',
      hasHeredoc: true,
    });
  });

  it('does not take 2>&1 or 2>/dev/null for files', () => {
    const [segment] = splitShellCommand('python x.py 2>&1 >/dev/null');
    expect(segment!.words).toEqual(['python', 'x.py']);
    expect(segment!.redirects).toEqual([{ operator: '>', target: '/dev/null' }]);
  });
});

describe('analyzeShellCommand', () => {
  it('recognises reads: cat, head -n, nl | sed -n ranges, SWE-agent open', () => {
    expect(effectsOf('cat src/a.ts')).toEqual([{ kind: 'read', path: 'src/a.ts', detail: 'cat' }]);
    expect(effectsOf('head -n 40 django/db/models/sql/query.py')).toEqual([
      { kind: 'read', path: 'django/db/models/sql/query.py', detail: 'head' },
    ]);
    expect(effectsOf("sed -n '548,570p' django/db/models/sql/query.py")).toEqual([
      { kind: 'read', path: 'django/db/models/sql/query.py', detail: 'lines 548-570' },
    ]);
    expect(effectsOf('open lib/a.py 120')).toEqual([
      { kind: 'read', path: 'lib/a.py', detail: 'open at line 120' },
    ]);
    expect(analyzeShellCommand('grep -rn "def steep" kettle').readOnly).toBe(true);
  });

  it('recognises writes: heredoc, echo >, >>, tee, with line counts', () => {
    expect(
      effectsOf("cat <<'EOF' > reproduce_issue.py\nimport numpy as np\nnp.random.seed(42)\nEOF"),
    ).toEqual([{ kind: 'write', path: 'reproduce_issue.py', detail: 'shell write', lineCount: 2 }]);
    expect(effectsOf('echo "x = 1" >> config.py')).toEqual([
      { kind: 'append', path: 'config.py', detail: 'shell append', lineCount: 1 },
    ]);
    expect(effectsOf('printf a | tee -a log.txt')).toEqual([
      { kind: 'append', path: 'log.txt', detail: 'tee -a' },
    ]);
  });

  it("records no file for a path the shell would expand, but keeps the command's other files", () => {
    const loop = analyzeShellCommand(
      'for i in 1 2 3; do npx vitest run > /tmp/run-$i.log 2>&1; done; cat "$LOG" `ls *.txt` ${OUT}/a.md $(pwd)/b.md notes.md',
    );
    expect(loop.effects).toEqual([{ kind: 'read', path: 'notes.md', detail: 'cat' }]);
    expect(loop.readOnly).toBe(false);
  });

  it('sees the command a compound statement runs: a test run in a loop, a read under if', () => {
    expect(analyzeShellCommand('for i in 1 2 3; do npx vitest run --reporter=dot; done').testRunner).toBe(
      'vitest',
    );
    expect(analyzeShellCommand('while true; do pytest -x tests; sleep 1; done').testRunner).toBe('pytest');
    expect(effectsOf('if ! grep -q retry src/a.py; then cat src/b.py; else rm -f src/c.py; fi')).toEqual([
      { kind: 'read', path: 'src/b.py', detail: 'cat' },
      { kind: 'delete', path: 'src/c.py', detail: 'rm' },
    ]);
  });

  it('recognises sed -i (GNU and BSD), rm, mv, touch and git checkout of files', () => {
    expect(effectsOf("sed -i 's/old/new/g' src/a.py src/b.py")).toEqual([
      { kind: 'edit', path: 'src/a.py', detail: 'sed -i s/old/new/g' },
      { kind: 'edit', path: 'src/b.py', detail: 'sed -i s/old/new/g' },
    ]);
    expect(effectsOf("sed -i '' 's/a b/c/' .env.local")).toEqual([
      { kind: 'edit', path: '.env.local', detail: "sed -i 's/a b/c/'" },
    ]);
    expect(effectsOf('rm -f a.py b.py')).toEqual([
      { kind: 'delete', path: 'a.py', detail: 'rm' },
      { kind: 'delete', path: 'b.py', detail: 'rm' },
    ]);
    expect(effectsOf('mv old.ts new.ts')).toEqual([
      { kind: 'delete', path: 'old.ts', detail: 'moved to new.ts' },
      { kind: 'create', path: 'new.ts', detail: 'moved from old.ts' },
    ]);
    expect(effectsOf('touch notes.md')).toEqual([{ kind: 'create', path: 'notes.md', detail: 'touch' }]);
    expect(effectsOf('git checkout lib/matplotlib/patches.py')).toEqual([
      { kind: 'revert', path: 'lib/matplotlib/patches.py', detail: 'git checkout' },
    ]);
    expect(effectsOf('git checkout -b fix/issue-365-notes')).toEqual([]);
    expect(effectsOf('git checkout main')).toEqual([]);
  });

  it('recognises perl -i as an in-place edit (any option spelling), and perl without it as a read', () => {
    // mini-swe-agent sessions patch multi-line blocks this way, where sed works a line at a time.
    expect(
      effectsOf(
        "perl -0777 -i -pe 's/or f\\.name not in cleaned_data:\\n/:\\n/s' django/forms/models.py && nl -ba django/forms/models.py | sed -n '31,64p'",
      ),
    ).toEqual([
      {
        kind: 'edit',
        path: 'django/forms/models.py',
        detail: "perl -i 's/or f\\.name not in cleaned_data:\\n/:\\n/s'",
      },
      { kind: 'read', path: 'django/forms/models.py', detail: 'lines 31-64' },
    ]);
    expect(effectsOf("perl -pi -e 's/foo/bar/' src/a.js src/b.js")).toEqual([
      { kind: 'edit', path: 'src/a.js', detail: 'perl -i s/foo/bar/' },
      { kind: 'edit', path: 'src/b.js', detail: 'perl -i s/foo/bar/' },
    ]);
    expect(effectsOf("perl -i.bak -pe 's/a b/c/' .env")).toEqual([
      { kind: 'edit', path: '.env', detail: "perl -i 's/a b/c/'" },
    ]);
    expect(effectsOf("perl -ne 'print if /retry/' src/a.py")).toEqual([
      { kind: 'read', path: 'src/a.py', detail: 'perl' },
    ]);
    expect(analyzeShellCommand("perl -ne 'print if /retry/' src/a.py").readOnly).toBe(true);
    // A switch that takes the rest of its word (`-Mstrict`) holds no `i`; `-l` and `-0` take digits, not the `e`.
    expect(effectsOf("perl -Mstrict -lne 'print if /retry/' src/a.py")).toEqual([
      { kind: 'read', path: 'src/a.py', detail: 'perl' },
    ]);
    expect(effectsOf("perl -0777 -l0pi -e 's/a/b/' src/a.py")).toEqual([
      { kind: 'edit', path: 'src/a.py', detail: 'perl -i s/a/b/' },
    ]);
    // A script file, not a one-liner: what it does is not known.
    expect(effectsOf('perl tools/rewrite.pl src/a.py')).toEqual([]);
  });

  it('recognises the files a Python script patches or writes (heredoc or -c), not those it only reads', () => {
    const patch = [
      "python - <<'PY'",
      'from pathlib import Path',
      "p = Path('astropy/modeling/separable.py')",
      's = p.read_text()',
      "p.write_text(s.replace('= 1', '= right'))",
      "Path('notes.txt').write_text('done')",
      "with open('log.txt', 'a') as f:",
      "    f.write('patched')",
      "print(open('setup.cfg').read())",
      'PY',
    ].join('\n');
    expect(effectsOf(patch)).toEqual([
      { kind: 'edit', path: 'astropy/modeling/separable.py', detail: 'python script' },
      { kind: 'write', path: 'notes.txt', detail: 'python script' },
      { kind: 'append', path: 'log.txt', detail: 'python script' },
    ]);
    expect(effectsOf(`python3 -c "open('out.json', 'w').write('{}')"`)).toEqual([
      { kind: 'write', path: 'out.json', detail: 'python script' },
    ]);
    // A path built from a Path is not the Path's: the file written is not named.
    expect(effectsOf("python - <<'PY'\np = Path('src') / 'app.py'\np.write_text('x')\nPY")).toEqual([]);
    // Running a script file, or one that only reads, changes no file the command names.
    expect(effectsOf('python reproduce.py')).toEqual([]);
    expect(effectsOf(`python -c "print(open('setup.cfg').read())"`)).toEqual([]);
  });

  it('applies SWE-agent edit N:M to the open file and create to its argument', () => {
    expect(effectsOf('create printenv.pl')).toEqual([
      { kind: 'create', path: 'printenv.pl', detail: 'create' },
    ]);
    const edit = analyzeShellCommand(
      'edit 2:3\nPITCH_HZ = 440\ndef pitch():\nend_of_edit\n',
      'kettle/tone.py',
    );
    expect(edit.effects).toEqual([
      {
        kind: 'edit',
        path: 'kettle/tone.py',
        detail: 'edit 2:3',
        replacement: 'PITCH_HZ = 440\ndef pitch():',
        replacedLines: 2,
      },
    ]);
    // `edit N:N-1` inserts before line N: it replaces nothing.
    expect(analyzeShellCommand('edit 5:4\nimport os\nend_of_edit', 'a.py').effects[0]).toMatchObject({
      replacedLines: 0,
    });
    expect(analyzeShellCommand('edit 2:3\nx\nend_of_edit').effects).toEqual([]);
  });

  it('detects test runners behind wrappers and package managers', () => {
    const runner = (command: string) => analyzeShellCommand(command).testRunner;
    expect(runner('cd /testbed && python -m pytest tests/test_x.py -q')).toBe('pytest');
    expect(runner('./tests/runtests.py aggregation')).toBe('unittest');
    expect(runner('python manage.py test app')).toBe('unittest');
    expect(runner('npx vitest run test/retry.test.ts')).toBe('vitest');
    expect(runner('CI=1 npx jest --silent')).toBe('jest');
    expect(runner('npm test -- --run')).toBe('npm test');
    expect(runner('yarn test:unit x.test.tsx')).toBe('npm test');
    expect(runner('go test ./...')).toBe('go test');
    expect(runner('cargo test -p core')).toBe('cargo test');
    expect(runner('npm run build')).toBeUndefined();
    expect(runner('python reproduce.py')).toBeUndefined();
  });

  it('reads Codex argument vectors, unwrapping bash -lc', () => {
    expect(analyzeShellWords(['bash', '-lc', 'sed -n 1,40p export.py']).effects).toEqual([
      { kind: 'read', path: 'export.py', detail: 'lines 1-40' },
    ]);
    expect(analyzeShellWords(['cat', 'src/units.ts']).effects).toEqual([
      { kind: 'read', path: 'src/units.ts', detail: 'cat' },
    ]);
    expect(analyzeShellWords(['npm', 'test', '--', 'units']).testRunner).toBe('npm test');
  });
});
