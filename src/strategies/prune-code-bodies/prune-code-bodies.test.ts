import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { strategyContext } from '../../../test/strategy-invariants.js';
import { propertyRuns } from '../../../test/support/property-runs.js';
import { isPrecisError } from '../../errors/index.js';
import { assignIds } from '../../messages/ids.js';
import type { IdentifiedMessage, Message, ToolMessage } from '../../messages/types.js';
import { validateMessages } from '../../messages/validate/index.js';
import { createConversationBuilder } from '../../testing/message-builders.js';
import { createTokenAccountant } from '../../tokens/index.js';
import { pruneCodeBodies } from './prune-code-bodies.js';

const accountant = createTokenAccountant();

function typescriptSource(functions: number, bodyLines = 12): string {
  return Array.from(
    { length: functions },
    (_, index) =>
      `/** Function ${index}. */\nexport function handler${index}(input: string): number {\n${Array.from(
        { length: bodyLines },
        (__, line) => `  const value${line} = input.length * ${line} + ${index};`,
      ).join('\n')}\n  return value0;\n}`,
  ).join('\n\n');
}

function pythonSource(functions: number): string {
  return Array.from(
    { length: functions },
    (_, index) =>
      `def handler_${index}(value):\n    """Handles ${index}."""\n${Array.from({ length: 12 }, (__, line) => `    value = value * ${line} + ${index}`).join('\n')}\n    return value`,
  ).join('\n\n\n');
}

const numbered = (code: string, separator: string) =>
  code
    .split('\n')
    .map((line, index) => `${String(index + 1).padStart(6)}${separator}${line}`)
    .join('\n');

function toolOutput(message: IdentifiedMessage): string {
  const part = (message as ToolMessage).content[0];
  return part?.type === 'tool-result' && part.output.type === 'text' ? part.output.value : '';
}

function session(): IdentifiedMessage[] {
  return assignIds(
    createConversationBuilder()
      .system('You are a coding agent.')
      .user('Refactor the handlers')
      .tools([
        {
          name: 'Read',
          input: { file_path: '/repo/src/handlers.ts' },
          output: numbered(typescriptSource(6), '→'),
        },
      ])
      .tools([
        {
          name: 'bash',
          input: { command: 'cat -n app/handlers.py' },
          output: numbered(pythonSource(6), '\t'),
        },
      ])
      .tools([
        { name: 'bash', input: { command: 'pytest tests/test_handlers.py' }, output: typescriptSource(6) },
      ])
      .assistant(
        `Here is the plan:\n\n\`\`\`ts\n${typescriptSource(5)}\n\`\`\`\n\nand some shell:\n\n\`\`\`sh\n${'echo hi\n'.repeat(200)}\`\`\``,
      )
      .user('Go on')
      .tools([
        {
          name: 'Read',
          input: { file_path: '/repo/src/handlers.ts' },
          output: numbered(typescriptSource(6), '→'),
        },
      ])
      .build(),
  );
}

describe('pruneCodeBodies', () => {
  it('prunes numbered file reads, keeping line numbers, and fenced blocks of known languages', () => {
    const messages = session();
    const context = strategyContext();
    const result = pruneCodeBodies({ keepRecentTurns: 1 }).apply(messages, context);
    const read = toolOutput(result.messages[3] as IdentifiedMessage);
    expect(read).toMatch(
      /^ {5}1→\/\*\* Function 0\. \*\/\n {5}2→export function handler0\(input: string\): number \{\n {2}\/\/ … 13 lines elided \[h-[0-9a-f]+\]\n {4}16→\}/,
    );
    const python = toolOutput(result.messages[5] as IdentifiedMessage);
    expect(python).toContain(
      '     1\tdef handler_0(value):\n     2\t    """Handles 0."""\n    # … 13 lines elided [h-',
    );
    // A test run naming a .py file is not a file read.
    expect(result.messages[7]).toBe(messages[7]);
    const text = result.messages[8]?.content as string;
    expect(text).toContain('export function handler4(input: string): number {\n  // … 13 lines elided [h-');
    expect(text).toContain(`\`\`\`sh\n${'echo hi\n'.repeat(200)}\`\`\``);
    // The last turn is recent: its read stays whole.
    expect(result.messages[11]).toBe(messages[11]);
    expect(result.actions).toHaveLength(3);
    for (const action of result.actions) {
      const index = messages.findIndex((message) => message.id === action.messageIds[0]);
      const original = messages[index] as Message;
      const expected =
        typeof original.content === 'string'
          ? original.content
          : (original.content[0] as { output: unknown }).output;
      expect(context.archive.get(action.handle as string)?.content).toEqual(expected);
      expect(JSON.stringify(result.messages[index])).toContain(action.handle as string);
    }
    expect(validateMessages(result.messages, { provider: 'any' }).valid).toBe(true);
  });

  it('leaves preserved, pinned and short code alone, and unknown languages untouched', () => {
    const messages = session();
    const preserved = new Set(messages.map((message) => message.id));
    expect(
      pruneCodeBodies({ keepRecentTurns: 0 }).apply(messages, strategyContext({ preservedIds: preserved }))
        .actions,
    ).toEqual([]);
    const pinned = messages.map((message) => ({ ...message, metadata: { pinned: true } }));
    expect(pruneCodeBodies({ keepRecentTurns: 0 }).apply(pinned, strategyContext()).actions).toEqual([]);
    expect(
      pruneCodeBodies({ keepRecentTurns: 0, minTokens: 100_000 }).apply(messages, strategyContext()).actions,
    ).toEqual([]);
    const unknown = assignIds(
      createConversationBuilder()
        .user('x')
        .tools([{ name: 'Read', input: { file_path: 'main.rs' }, output: typescriptSource(6) }])
        .user('y')
        .build(),
    );
    expect(pruneCodeBodies({ keepRecentTurns: 0 }).apply(unknown, strategyContext()).actions).toEqual([]);
  });

  it('stops once the conversation fits the budget, largest first', () => {
    const messages = session();
    const total = accountant.countConversation(messages).totalTokens;
    const result = pruneCodeBodies({ keepRecentTurns: 0 }).apply(
      messages,
      strategyContext({ budgetTokens: total - 10 }),
    );
    expect(result.actions).toHaveLength(1);
    expect(pruneCodeBodies().apply(messages, strategyContext({ budgetTokens: total })).actions).toEqual([]);
  });

  it('rejects bad options with a typed error', () => {
    for (const options of [{ minTokens: -1 }, { keepRecentTurns: -1 }, { maxKeptBodyLines: 0.5 }]) {
      let caught: unknown;
      try {
        pruneCodeBodies(options);
      } catch (error) {
        caught = error;
      }
      expect(isPrecisError(caught) && caught.code).toBe('invalid-argument');
    }
  });

  it('properties: valid, preserved intact, handles expand, deterministic, idempotent, never grows', () => {
    const outputs = [
      numbered(typescriptSource(4), '→'),
      numbered(pythonSource(4), '\t'),
      numbered(typescriptSource(3, 3), ':'),
      typescriptSource(5),
      'short',
    ];
    const exchange = fc.record({
      name: fc.constantFrom('Read', 'bash'),
      path: fc.constantFrom('cat src/a.ts', 'cat b.py', 'cat c.ts', 'ls', 'notes.md'),
      output: fc.constantFrom(...outputs),
    });
    const conversation = fc
      .array(fc.array(exchange, { minLength: 1, maxLength: 2 }), { minLength: 1, maxLength: 5 })
      .map((turns) => {
        const builder = createConversationBuilder().system('sys').user('task');
        turns.forEach((exchanges, turn) => {
          builder.tools(
            exchanges.map(({ name, path, output }) => ({ name, input: { command: path, turn }, output })),
          );
          if (turn % 2 === 1) builder.assistant(`\`\`\`python\n${pythonSource(2)}\n\`\`\``).user('continue');
        });
        return assignIds(builder.build());
      });
    fc.assert(
      fc.property(
        conversation,
        fc.nat(),
        fc.integer({ min: 0, max: 2 }),
        (messages, pick, keepRecentTurns) => {
          const preservedIds = new Set([messages[pick % messages.length]?.id as string]);
          const strategy = pruneCodeBodies({ keepRecentTurns });
          const context = strategyContext({ preservedIds });
          const result = strategy.apply(messages, context);
          expect(validateMessages(result.messages, { provider: 'any' }).valid).toBe(true);
          result.messages.forEach((message, index) => {
            expect(message.id).toBe(messages[index]?.id);
            if (preservedIds.has(message.id)) expect(message).toBe(messages[index]);
          });
          for (const action of result.actions) {
            const original = messages.find((message) => message.id === action.messageIds[0]) as Message;
            const contents =
              typeof original.content === 'string'
                ? [original.content]
                : original.content.map((part) =>
                    part.type === 'tool-result' ? part.output : part.type === 'text' ? part.text : undefined,
                  );
            expect(contents).toContainEqual(context.archive.get(action.handle as string)?.content);
          }
          expect(strategy.apply(messages, strategyContext({ preservedIds }))).toEqual(result);
          const again = strategy.apply(result.messages, context);
          expect(again.actions).toEqual([]);
          for (const [index, message] of again.messages.entries())
            expect(message).toBe(result.messages[index]);
          expect(accountant.countConversation(result.messages).totalTokens).toBeLessThanOrEqual(
            accountant.countConversation(messages).totalTokens,
          );
        },
      ),
      { numRuns: propertyRuns(100) },
    );
  });
});
