import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { propertyRuns } from '../../../test/support/property-runs.js';
import { isPrecisError } from '../../errors/index.js';
import { pruneCode } from './prune-code.js';

const lines = (count: number, indent: string, make: (index: number) => string) =>
  Array.from({ length: count }, (_, index) => `${indent}${make(index)}`).join('\n');

const typescript = `import { readFile } from 'node:fs/promises';

/**
 * Adds two numbers.
 * @param a the first
 */
export function add(a: number, b: number): number {
  const text = "} not a brace {";
  const pattern = /}{[}]/g;
  const template = \`\${a + { b }.b} } \${'{'}\`;
  // a } in a comment
  /* and { here */
  return a + b;
}

export const load = async (path: string): Promise<string> => {
${lines(6, '  ', (index) => `const line${index} = await readFile(path, 'utf8');`)}
  return line0;
};

export class Store<T> extends Base {
  private items: T[] = [];
  constructor(private readonly options: { size: number }) {
${lines(5, '    ', (index) => `this.setup(${index});`)}
  }
  /** Gets one. */
  async get(key: string): Promise<T | undefined> {
    if (key === '') {
      return undefined;
    }
${lines(4, '    ', (index) => `const value${index} = this.items[${index}];`)}
    return value0;
  }
  get size(): number {
${lines(6, '    ', (index) => `void ${index};`)}
    return this.items.length;
  }
  short(): number {
    return 1;
  }
}

const handlers = {
  onClick(event: Event) {
${lines(6, '    ', (index) => `handle(event, ${index});`)}
  },
  onKey: (event: KeyboardEvent) => {
${lines(6, '    ', (index) => `handle(event, ${index});`)}
  },
};

describe('store', () => {
  it('works', () => {
${lines(6, '    ', (index) => `expect(${index}).toBe(${index});`)}
  });
});
`;

const python = `import os


@decorator(name="x")
def top(a,
        b: int = 2) -> int:
    """Adds things.

    def fake(): inside a docstring
    """
${lines(6, '    ', (index) => `x${index} = a + ${index}`)}
    return x0


class Thing(Base):
    """A thing."""

    size = 1

    def method(self):
        text = """
def not_a_def():
    pass
"""
${lines(5, '        ', (index) => `self.v${index} = ${index}`)}
        return text

    @property
    def short(self):
        return 1

    async def outer(self):
        def inner():
${lines(6, '            ', (index) => `print(${index})`)}
        return inner()
`;

describe('pruneCode', () => {
  it('elides TypeScript function, arrow, constructor, method, getter and object-method bodies', () => {
    const result = pruneCode(typescript, 'typescript', { handle: 'h-abc' });
    expect(result.code).toContain(
      'export function add(a: number, b: number): number {\n  // … 6 lines elided [h-abc]\n}',
    );
    expect(result.code).toContain('/**\n * Adds two numbers.\n * @param a the first\n */');
    expect(result.code).toContain(
      'export const load = async (path: string): Promise<string> => {\n  // … 7 lines elided [h-abc]\n};',
    );
    expect(result.code).toContain(
      'constructor(private readonly options: { size: number }) {\n    // … 5 lines elided [h-abc]\n  }',
    );
    expect(result.code).toContain(
      '/** Gets one. */\n  async get(key: string): Promise<T | undefined> {\n    // … 8 lines elided [h-abc]\n  }',
    );
    expect(result.code).toContain('get size(): number {\n    // … 7 lines elided [h-abc]\n  }');
    expect(result.code).toContain('short(): number {\n    return 1;\n  }');
    expect(result.code).toContain('onClick(event: Event) {\n    // … 6 lines elided [h-abc]\n  },');
    expect(result.code).toContain(
      'onKey: (event: KeyboardEvent) => {\n    // … 6 lines elided [h-abc]\n  },',
    );
    // Callbacks passed as arguments (test suites) are structure, not bodies.
    expect(result.code).toContain("it('works', () => {\n    expect(0).toBe(0);");
    expect(result.elidedLines).toBe(6 + 7 + 5 + 8 + 7 + 6 + 6);
    expect(result.code.split('\n').length).toBe(typescript.split('\n').length - result.elidedLines + 7);
  });

  it('elides Python def bodies by indentation, keeping decorators, signatures and docstrings', () => {
    const result = pruneCode(python, 'python', { handle: 'h-py' });
    expect(result.code).toContain(
      '@decorator(name="x")\ndef top(a,\n        b: int = 2) -> int:\n    """Adds things.\n\n    def fake(): inside a docstring\n    """\n    # … 7 lines elided [h-py]\n',
    );
    expect(result.code).toContain('class Thing(Base):\n    """A thing."""\n\n    size = 1\n');
    expect(result.code).toContain('    def method(self):\n        # … 10 lines elided [h-py]\n');
    expect(result.code).toContain('    @property\n    def short(self):\n        return 1\n');
    expect(result.code).toContain('    async def outer(self):\n        # … 8 lines elided [h-py]');
    expect(result.code).not.toContain('not_a_def');
  });

  it('leaves short bodies, unknown structure and plain text alone, and never grows', () => {
    const short = 'function f() {\n  return 1;\n}\n';
    expect(pruneCode(short, 'javascript')).toEqual({ code: short, elidedLines: 0 });
    expect(pruneCode('just some words { and } braces', 'typescript').elidedLines).toBe(0);
    const unbalanced = `function f() {\n${lines(8, '  ', (index) => `x(${index});`)}\n`;
    expect(pruneCode(unbalanced, 'typescript').code).toBe(unbalanced);
    expect(pruneCode(typescript, 'typescript', { maxKeptBodyLines: 100 }).elidedLines).toBe(0);
  });

  it('is idempotent: markers are never elided again', () => {
    for (const [code, language] of [
      [typescript, 'typescript'],
      [python, 'python'],
    ] as const) {
      const once = pruneCode(code, language, { handle: 'h-1' });
      expect(pruneCode(once.code, language, { handle: 'h-1' })).toEqual({ code: once.code, elidedLines: 0 });
    }
  });

  it('rejects bad options with a typed error', () => {
    for (const call of [
      () => pruneCode('x', 'cobol' as 'python'),
      () => pruneCode('x', 'python', { maxKeptBodyLines: -1 }),
    ]) {
      let caught: unknown;
      try {
        call();
      } catch (error) {
        caught = error;
      }
      expect(isPrecisError(caught) && caught.code).toBe('invalid-argument');
    }
  });

  it('properties (TypeScript): every exported name and signature kept, idempotent, never grows', () => {
    const statement = fc.constantFrom(
      'x++;',
      "call('}');",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: JavaScript source text with a template literal
      'const y = `${a}{`;',
      '// }',
      'if (a) {',
      '}',
      'return /}/.test(s);',
    );
    const declaration = fc.record({
      name: fc.constantFrom('alpha', 'beta', 'gamma', 'delta'),
      kind: fc.constantFrom('function', 'arrow', 'class'),
      body: fc.array(statement, { maxLength: 12 }),
    });
    fc.assert(
      fc.property(fc.array(declaration, { maxLength: 6 }), (declarations) => {
        const signatures: string[] = [];
        const code = declarations
          .map(({ name, kind, body }, index) => {
            const balanced = body.filter((line) => line !== 'if (a) {' && line !== '}');
            const inner = balanced.map((line) => `    ${line}`).join('\n');
            if (kind === 'function') {
              const signature = `export function ${name}${index}(a: string, b = 1): void {`;
              signatures.push(signature);
              return `${signature}\n${inner}\n}`;
            }
            if (kind === 'arrow') {
              const signature = `export const ${name}${index} = async (a: string): Promise<void> => {`;
              signatures.push(signature);
              return `${signature}\n${inner}\n};`;
            }
            const signature = `export class ${name}${index} {`;
            signatures.push(signature, `  method${index}(a: number): number {`);
            return `${signature}\n  method${index}(a: number): number {\n${inner}\n  }\n}`;
          })
          .join('\n\n');
        const result = pruneCode(code, 'typescript', { handle: 'h-x' });
        for (const signature of signatures) expect(result.code).toContain(signature);
        expect(result.code.length).toBeLessThanOrEqual(code.length);
        expect(pruneCode(result.code, 'typescript', { handle: 'h-x' }).code).toBe(result.code);
      }),
      { numRuns: propertyRuns(300) },
    );
  });

  it('properties (Python): every def/class line and docstring kept, idempotent, never grows', () => {
    const statement = fc.constantFrom(
      'x = 1',
      'print("def f():")',
      '# comment',
      '',
      's = """\ndef g():\n"""',
      'return x',
    );
    const definition = fc.record({
      decorated: fc.boolean(),
      docstring: fc.option(fc.constantFrom('"""One line."""', '"""Many\n    lines."""'), { nil: undefined }),
      body: fc.array(statement, { minLength: 1, maxLength: 10 }),
      inClass: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(definition, { maxLength: 5 }), (definitions) => {
        const kept: string[] = [];
        const code = definitions
          .map(({ decorated, docstring, body, inClass }, index) => {
            const indent = inClass ? '    ' : '';
            const header = `${indent}def function${index}(a, b=2):`;
            const parts = inClass ? [`class Holder${index}:`] : [];
            if (decorated) parts.push(`${indent}@decorate`);
            parts.push(header);
            kept.push(...parts);
            if (docstring !== undefined) {
              parts.push(`${indent}    ${docstring}`);
              kept.push(`${indent}    ${docstring}`);
            }
            parts.push(
              ...body
                .flatMap((line) => line.split('\n'))
                .map((line) => (line === '' ? '' : `${indent}    ${line}`)),
            );
            return parts.join('\n');
          })
          .join('\n\n');
        const result = pruneCode(code, 'python', { handle: 'h-y' });
        for (const line of kept) expect(result.code).toContain(line);
        expect(result.code.length).toBeLessThanOrEqual(code.length);
        expect(pruneCode(result.code, 'python', { handle: 'h-y' }).code).toBe(result.code);
      }),
      { numRuns: propertyRuns(300) },
    );
  });
});
