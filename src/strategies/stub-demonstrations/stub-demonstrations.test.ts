import { describe, expect, it } from 'vitest';
import {
  checkStrategyInvariants,
  richConversation,
  strategyContext,
} from '../../../test/strategy-invariants.js';
import { expand } from '../../archive/expand.js';
import { InvalidArgumentError } from '../../errors/index.js';
import { requestOnly } from '../../messages/content.js';
import { assignIds } from '../../messages/ids.js';
import type { IdentifiedMessage, Message, Part } from '../../messages/types.js';
import { repairMessages } from '../../messages/validate/index.js';
import { assistantMessage, userMessage } from '../../testing/message-builders.js';
import { createTokenAccountant } from '../../tokens/index.js';
import {
  afterRequestStubPrefix,
  demonstrationStubPrefix,
  preambleStubPrefix,
  stubDemonstrations,
} from './stub-demonstrations.js';

const accountant = createTokenAccountant();
const example = `Here's a running example.\n--- START OF EXAMPLE ---\n${Array.from(
  { length: 60 },
  (_, index) => `USER: step ${index}\nASSISTANT: <function=execute_bash>ls dir${index}</function>`,
).join('\n')}\n--- END OF EXAMPLE ---\n\n`;
const task = 'Fix the descale reminder in src/kettle.ts; it shows "Entkalken!" twice.';

/**
 * A context preserving `messages[0]`, with a budget just under the conversation's: an expansion is then within
 * any share of it but 1 (`withinShare`), so what stays is what preservation keeps.
 */
function preservingFirst(messages: readonly IdentifiedMessage[]) {
  const context = strategyContext({ preservedIds: new Set([messages[0]!.id]) });
  return { ...context, budgetTokens: context.accountant.countTotal(messages) - 1 };
}
/** The strategy with an expansion share no expansion of a conversation over budget exceeds. */
const withinShare = () => stubDemonstrations({ maxExpansionShare: 1 });

function withExample(): IdentifiedMessage[] {
  return assignIds([
    { role: 'system', content: 'You are an agent.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: example },
        { type: 'text', text: task },
      ],
      metadata: { origin: 'openhands', requestPart: 1 },
    },
    assistantMessage('Looking at src/kettle.ts.'),
  ]);
}

describe('stubDemonstrations', () => {
  it('archives the example in front of a preserved task and keeps the request byte-identical', () => {
    const messages = withExample();
    const context = strategyContext({ preservedIds: new Set([messages[1]!.id]) });
    const result = stubDemonstrations().apply(messages, context);
    const stubbed = result.messages[1]!;
    expect(stubbed.id).toBe(messages[1]!.id);
    expect(stubbed.metadata).toEqual({ origin: 'openhands', requestPart: 1 });
    const [stub, ...request] = stubbed.content as Part[];
    expect(request).toEqual([{ type: 'text', text: task }]);
    expect(requestOnly(stubbed).content).toEqual(requestOnly(messages[1]!).content);
    expect(stub).toEqual({
      type: 'text',
      text: expect.stringMatching(/^\[text before the request archived: h-[0-9a-f]{20} · \d+ tokens\]$/),
    });
    expect((stub as { text: string }).text.startsWith(preambleStubPrefix)).toBe(true);
    // The rest is untouched, the same objects.
    expect(result.messages[0]).toBe(messages[0]);
    expect(result.messages[2]).toBe(messages[2]);
    const [action] = result.actions;
    expect(action).toMatchObject({
      type: 'stub-demonstration',
      strategy: 'stub-demonstrations',
      messageIds: [messages[1]!.id],
      description: expect.stringContaining('1 part before the request'),
    });
    expect(action!.tokensAfter).toBeLessThan(action!.tokensBefore - 500);
    // The stub names the handle that gives the original message back.
    expect((stub as { text: string }).text).toContain(action!.handle!);
    expect(expand(context.archive, action!.handle!).content).toEqual([messages[1]]);
  });

  it('counts the archived tokens in the stub, and does nothing more on a second pass', () => {
    const messages = withExample();
    const context = strategyContext();
    const first = stubDemonstrations().apply(messages, context);
    const tokens = accountant.countText(example);
    expect(JSON.stringify(first.messages[1]!.content)).toContain(`· ${tokens} tokens]`);
    const again = stubDemonstrations().apply(first.messages, context);
    expect(again.actions).toEqual([]);
    expect(again.messages).toEqual(first.messages);
  });

  it('archives demonstration messages that are not preserved and hold only text', () => {
    const demo = (message: Message): Message => ({ ...message, metadata: { demo: true } });
    const messages = assignIds([
      demo(userMessage(example)),
      demo(assistantMessage(`DISCUSSION\n${example}`)),
      userMessage(task),
      assistantMessage('On it.'),
    ]);
    const result = stubDemonstrations().apply(messages, strategyContext());
    expect(result.actions.map((action) => action.messageIds[0])).toEqual([messages[0]!.id, messages[1]!.id]);
    for (const index of [0, 1]) {
      expect(result.messages[index]).toMatchObject({ role: messages[index]!.role, metadata: { demo: true } });
      expect(result.messages[index]!.content).toMatch(
        /^\[in-context demonstration archived: h-[0-9a-f]{20} · \d+ tokens\]$/,
      );
      expect((result.messages[index]!.content as string).startsWith(demonstrationStubPrefix)).toBe(true);
    }
    expect(result.messages.slice(2)).toEqual(messages.slice(2));

    // Preserved, pinned or holding a tool call: left alone.
    const preserved = stubDemonstrations().apply(
      messages,
      strategyContext({ preservedIds: new Set([messages[0]!.id, messages[1]!.id]) }),
    );
    expect(preserved.actions).toEqual([]);
    const pinned = assignIds([{ ...withExample()[1]!, metadata: { requestPart: 1, pinned: true } }]);
    expect(stubDemonstrations().apply(pinned, strategyContext()).actions).toEqual([]);
    const calling = assignIds([
      demo(
        assistantMessage([
          { type: 'text', text: example },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'bash', input: { command: 'ls' } },
        ]),
      ),
    ]);
    expect(stubDemonstrations().apply(calling, strategyContext()).actions).toEqual([]);
  });

  it('leaves short notes, conversations within budget and requests without a preamble alone', () => {
    const notes = assignIds([
      {
        role: 'user',
        content: [
          {
            type: 'text',
            text: 'Caveat: the messages below were generated by the user running local commands.',
          },
          { type: 'text', text: task },
        ],
        metadata: { requestPart: 1 },
      },
    ]);
    expect(stubDemonstrations().apply(notes, strategyContext()).actions).toEqual([]);
    // A lower threshold takes them too, when the stub is shorter.
    const long = assignIds([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Caveat: '.repeat(40) },
          { type: 'text', text: task },
        ],
        metadata: { requestPart: 1 },
      },
    ]);
    expect(stubDemonstrations({ minTokens: 10 }).apply(long, strategyContext()).actions).toHaveLength(1);
    // The default takes a harness preamble worth its stub: Claude Code's caveat, the command and its output.
    const preamble = assignIds([
      {
        role: 'user',
        content: [
          {
            type: 'text',
            text: 'Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to.',
          },
          {
            type: 'text',
            text: '<command-name>/agents</command-name>\n            <command-message>agents</command-message>\n            <command-args></command-args>',
          },
          { type: 'text', text: '<local-command-stdout>(no content)</local-command-stdout>' },
          { type: 'text', text: task },
        ],
        metadata: { requestPart: 3 },
      },
    ]);
    const archived = stubDemonstrations().apply(preamble, strategyContext());
    expect(archived.actions).toHaveLength(1);
    expect(archived.actions[0]!.tokensBefore - archived.actions[0]!.tokensAfter).toBeGreaterThan(40);

    const messages = withExample();
    const total = accountant.countConversation(messages).totalTokens;
    const within = stubDemonstrations().apply(messages, strategyContext({ budgetTokens: total }));
    expect(within.actions).toEqual([]);
    expect(within.messages).toEqual(messages);

    const plain = assignIds([userMessage(example + task), assistantMessage('ok')]);
    expect(stubDemonstrations().apply(plain, strategyContext()).actions).toEqual([]);
    // requestPart pointing past the parts is not a preamble.
    const pastEnd = assignIds([{ ...withExample()[1]!, metadata: { requestPart: 2 } }]);
    expect(stubDemonstrations().apply(pastEnd, strategyContext()).actions).toEqual([]);
  });

  it('archives the prompt a command expanded to only once its message is no longer preserved', () => {
    const command =
      '<command-name>/orchestrator</command-name>\n<command-args>@CLAUDE.md update it</command-args>';
    const caveat = 'Caveat: The messages below were generated by the user while running local commands.';
    // A preamble too, for the ordering of the stubs: [caveat] [command] [expansion].
    const messages = assignIds([
      {
        role: 'user',
        content: [
          { type: 'text', text: `${caveat}\n${example}` },
          { type: 'text', text: command },
          { type: 'text', text: example },
        ],
        metadata: { origin: 'claude-code', requestPart: 1, expansionPart: 2 },
      },
      assistantMessage('Reading CLAUDE.md.'),
    ]);
    const preserved = withinShare().apply(messages, preservingFirst(messages));
    // Preserved: the preamble goes, the expansion (an instruction) stays byte-identical.
    const kept = preserved.messages[0]!.content as Part[];
    expect(kept.slice(1)).toEqual((messages[0]!.content as Part[]).slice(1));
    expect(preserved.messages[0]!.metadata).toMatchObject({ requestPart: 1, expansionPart: 2 });

    const context = strategyContext();
    const result = stubDemonstrations().apply(messages, context);
    const [before, request, after] = result.messages[0]!.content as Part[];
    expect(request).toEqual({ type: 'text', text: command });
    expect(before).toMatchObject({ text: expect.stringMatching(/^\[text before the request archived: h-/) });
    expect(after).toEqual({
      type: 'text',
      text: expect.stringMatching(/^\[text after the request archived: h-[0-9a-f]{20} · \d+ tokens\]$/),
    });
    expect((after as { text: string }).text.startsWith(afterRequestStubPrefix)).toBe(true);
    expect(result.messages[0]!.metadata).toMatchObject({ requestPart: 1, expansionPart: 2 });
    expect(result.actions).toEqual([
      expect.objectContaining({
        description: expect.stringContaining('1 part before the request and the text after it'),
      }),
    ]);
    expect(expand(context.archive, result.actions[0]!.handle!).content).toEqual([messages[0]]);
    // A second pass finds both stubbed; one of the preserved result stubs the expansion it had kept.
    expect(stubDemonstrations().apply(result.messages, context).actions).toEqual([]);
    const later = stubDemonstrations().apply(preserved.messages, context);
    expect((later.messages[0]!.content as Part[]).slice(0, 2)).toEqual(kept.slice(0, 2));
    expect((later.messages[0]!.content as Part[])[2]).toMatchObject({
      text: expect.stringContaining(afterRequestStubPrefix),
    });
  });

  it('archives the expansion of a preserved request once it takes more than maxExpansionShare of the budget', () => {
    // mini-swe-agent: the issue, then its workflow and submission rules.
    const issue = '<pr_description>\nThe qdp reader assumes upper-case commands.\n</pr_description>';
    const rules = `<instructions>\n${example}</instructions>`;
    const messages = assignIds([
      {
        role: 'user',
        content: [
          { type: 'text', text: issue },
          { type: 'text', text: rules },
        ],
        metadata: { expansionPart: 1 },
      },
      assistantMessage(`Reading the reader. ${example}`),
    ]);
    const context = preservingFirst(messages);
    // The rules take about half of a budget just under the conversation's: past the default fifth, they go and
    // the issue stays byte-identical.
    expect(context.accountant.countText(rules)).toBeGreaterThan(0.4 * context.budgetTokens);
    const result = stubDemonstrations().apply(messages, context);
    const [kept, stub] = result.messages[0]!.content as Part[];
    expect(kept).toEqual({ type: 'text', text: issue });
    expect((stub as { text: string }).text.startsWith(afterRequestStubPrefix)).toBe(true);
    expect(expand(context.archive, result.actions[0]!.handle!).content).toEqual([messages[0]]);
    // Within a larger share, they stay.
    const within = stubDemonstrations({ maxExpansionShare: 0.6 }).apply(messages, preservingFirst(messages));
    expect(within.messages[0]).toEqual(messages[0]);
  });

  it('moves a kept expansion’s start back by the parts a stubbed preamble took', () => {
    const messages = assignIds([
      {
        role: 'user',
        content: [
          { type: 'text', text: example },
          { type: 'text', text: `${example}\nsecond note` },
          { type: 'text', text: '/review the diff' },
          { type: 'text', text: 'Review the diff for risks.' },
        ],
        metadata: { requestPart: 2, expansionPart: 3 },
      },
      assistantMessage('Reviewing.'),
    ]);
    const result = withinShare().apply(messages, preservingFirst(messages));
    const stubbed = result.messages[0]!;
    expect((stubbed.content as Part[]).length).toBe(3);
    expect(stubbed.metadata).toEqual({ requestPart: 1, expansionPart: 2 });
    expect((stubbed.content as Part[])[stubbed.metadata!.expansionPart as number]).toEqual({
      type: 'text',
      text: 'Review the diff for risks.',
    });
  });

  it('archives a file an @-mention read, merged after the request, before the words the user typed', () => {
    const typed = 'Explain @src/retry.ts and make the backoff exponential.';
    const read = `Called the Read tool with the following input: {"file_path":"src/retry.ts"}\n${example}`;
    const merged = repairMessages(
      [
        { role: 'user', content: typed },
        { role: 'user', content: read, metadata: { harness: true, contextFiles: ['src/retry.ts'] } },
        { role: 'assistant', content: 'Reading it.' },
      ],
      { provider: 'anthropic' },
    ).messages;
    const messages = assignIds(merged);
    const result = stubDemonstrations().apply(messages, strategyContext());
    const [request, after] = result.messages[0]!.content as Part[];
    expect(request).toEqual({ type: 'text', text: typed });
    expect((after as { text: string }).text.startsWith(afterRequestStubPrefix)).toBe(true);
    expect(result.messages[0]!.metadata).toMatchObject({ expansionPart: 1, contextFiles: ['src/retry.ts'] });
    // Preserved (the task kept whole), the read goes too: a harness note, not an instruction, like a preamble.
    expect(messages[0]!.metadata).toMatchObject({ harnessParts: [1] });
    const preserved = stubDemonstrations().apply(
      messages,
      strategyContext({ preservedIds: new Set([messages[0]!.id]) }),
    );
    expect(preserved.messages[0]!.content).toEqual(result.messages[0]!.content);
  });

  it("archives aider's output merged after a preserved request, but not a command's expansion there", () => {
    const typed = 'Why does the catalog client fail with a CORS error?';
    const output = `Add URL to the chat? (Y)es/(N)o [Yes]: y\n${example}`;
    const merge = (after: Message) =>
      assignIds(
        repairMessages(
          [{ role: 'user', content: typed }, after, { role: 'assistant', content: 'Looking.' }],
          {
            provider: 'anthropic',
          },
        ).messages,
      );
    const harness = merge({ role: 'user', content: output, metadata: { harness: true, aiderOutput: true } });
    const preserved = preservingFirst;
    const stubbed = stubDemonstrations().apply(harness, preserved(harness)).messages[0]!.content as Part[];
    expect(stubbed[0]).toEqual({ type: 'text', text: typed });
    expect((stubbed[1] as { text: string }).text.startsWith(afterRequestStubPrefix)).toBe(true);
    const expansion = merge({ role: 'user', content: example, metadata: { expansion: true } });
    expect(expansion[0]!.metadata).not.toHaveProperty('harnessParts');
    expect(withinShare().apply(expansion, preserved(expansion)).actions).toEqual([]);
    // Output and an expansion after the request: not harness notes alone, so they stay while preserved.
    const mixed = assignIds(
      repairMessages(
        [
          { role: 'user', content: typed },
          { role: 'user', content: output, metadata: { harness: true, aiderOutput: true } },
          { role: 'user', content: example, metadata: { expansion: true } },
          { role: 'assistant', content: 'Looking.' },
        ],
        { provider: 'anthropic' },
      ).messages,
    );
    expect(mixed[0]!.metadata).toMatchObject({ expansionPart: 1, harnessParts: [1] });
    expect(withinShare().apply(mixed, preserved(mixed)).actions).toEqual([]);
    expect(stubDemonstrations().apply(mixed, strategyContext()).actions).toHaveLength(1);
  });

  it('archives harness output merged between two requests of a preserved message, keeping both requests', () => {
    // aider: a request that got no reply, what aider printed (a restart's banner and warnings), the next request.
    const first = 'Integrate shiftTaxBrackets() into yearCycle.';
    const second = 'First, show me the shiftTaxBrackets() function.';
    const banner = `# aider chat started at 2026-09-27 18:02:43\n${example}`;
    const merged = repairMessages(
      [
        { role: 'user', content: first },
        { role: 'user', content: banner, metadata: { harness: true } },
        { role: 'user', content: 'Model: haiku with diff edit format', metadata: { harness: true } },
        { role: 'user', content: second },
        { role: 'assistant', content: 'Here it is.' },
      ],
      { provider: 'anthropic' },
    ).messages;
    const messages = assignIds(merged);
    expect(messages[0]!.metadata).toEqual({ harnessParts: [1, 2] });
    const context = strategyContext({ preservedIds: new Set([messages[0]!.id]) });
    const result = stubDemonstrations().apply(messages, context);
    const content = result.messages[0]!.content as Part[];
    expect(content).toHaveLength(3);
    expect(content[0]).toEqual({ type: 'text', text: first });
    expect(content[1]).toEqual({
      type: 'text',
      text: expect.stringMatching(/^\[harness output archived: h-[0-9a-f]{20} · \d+ tokens\]$/),
    });
    expect(content[2]).toEqual({ type: 'text', text: second });
    expect(result.messages[0]!.metadata).toEqual({ harnessParts: [1] });
    expect(result.actions[0]!.description).toContain('1 harness note between requests');
    expect(expand(context.archive, result.actions[0]!.handle!).content).toEqual([messages[0]]);
    // The stub is not stubbed again.
    expect(stubDemonstrations().apply(result.messages, context).actions).toEqual([]);
  });

  it('leaves a harness note shorter than its stub where it is, and stubs the long one beside it', () => {
    // aider: a long output before the request, a one-line note between two requests.
    const first = 'Integrate shiftTaxBrackets() into yearCycle.';
    const second = 'First, show me the shiftTaxBrackets() function.';
    const note = 'Added src/tax.ts to the chat';
    const merged = repairMessages(
      [
        {
          role: 'user',
          content: `# aider chat started at 2026-09-27 18:02:43\n${example}`,
          metadata: { harness: true },
        },
        { role: 'user', content: first },
        { role: 'user', content: note, metadata: { harness: true } },
        { role: 'user', content: second },
        { role: 'assistant', content: 'Here it is.' },
      ],
      { provider: 'anthropic' },
    ).messages;
    const messages = assignIds(merged);
    const result = stubDemonstrations().apply(messages, strategyContext());
    const content = result.messages[0]!.content as Part[];
    expect(content.map((part) => (part.type === 'text' ? part.text : part.type))).toEqual([
      expect.stringMatching(/^\[text before the request archived: h-[0-9a-f]{20} · \d+ tokens\]$/),
      first,
      note,
      second,
    ]);
    expect(result.actions[0]!.description).not.toContain('between requests');
    // A message whose only candidate is such a note is left as it is.
    const short = assignIds(
      repairMessages(
        [
          { role: 'user', content: first },
          { role: 'user', content: note, metadata: { harness: true } },
          { role: 'user', content: second },
          { role: 'assistant', content: 'Here it is.' },
        ],
        { provider: 'anthropic' },
      ).messages,
    );
    expect(stubDemonstrations({ minTokens: 1 }).apply(short, strategyContext()).actions).toEqual([]);
  });

  it("keeps in a harness note's stub what the step before it did: aider's applied edits and commits", () => {
    const output = [
      '> Tokens: 7.9k sent, 713 received. Cost: $0.03 message, $0.14 session.',
      '> Applied edit to src/components/ModalSignalReview.tsx',
      '> Commit 0d4b6dc feat: add ModalSignalReview component for signal review functionality',
      '> You can use /undo to undo and discard each aider commit.',
      example,
    ].join('\n');
    const merged = repairMessages(
      [
        { role: 'user', content: output.replaceAll('> ', ''), metadata: { harness: true } },
        { role: 'user', content: 'Now add a test for it.' },
        { role: 'assistant', content: 'Here it is.' },
      ],
      { provider: 'anthropic' },
    ).messages;
    const result = stubDemonstrations().apply(assignIds(merged), strategyContext());
    const stub = (result.messages[0]!.content as Part[])[0]!;
    expect(stub).toEqual({
      type: 'text',
      text: expect.stringMatching(
        /^\[text before the request archived: h-[0-9a-f]{20} · \d+ tokens · Applied edit to src\/components\/ModalSignalReview\.tsx · Commit 0d4b6dc feat: add ModalSignalReview component for signal review functionality\]$/,
      ),
    });
    // The stub is not stubbed again.
    expect(stubDemonstrations().apply(result.messages, strategyContext()).actions).toEqual([]);
  });

  it('archives a whole expansion message that is not preserved, as it does a demonstration', () => {
    const messages = assignIds([
      userMessage('/orchestrator update CLAUDE.md'),
      { ...userMessage(example), metadata: { expansion: true } },
      assistantMessage('On it.'),
    ]);
    const stubbed = stubDemonstrations().apply(messages, strategyContext());
    expect(stubbed.messages[1]!.content).toMatch(
      /^\[expanded command prompt archived: h-[0-9a-f]{20} · \d+ tokens\]$/,
    );
    expect(stubbed.messages[0]).toBe(messages[0]);
    const preserved = strategyContext({ preservedIds: new Set([messages[1]!.id]) });
    expect(stubDemonstrations().apply(messages, preserved).actions).toEqual([]);
  });

  it('rejects a bad minTokens or maxExpansionShare, naming the option', () => {
    for (const minTokens of [-1, 1.5, Number.NaN])
      expect(() => stubDemonstrations({ minTokens })).toThrow(InvalidArgumentError);
    expect(() => stubDemonstrations({ minTokens: -1 })).toThrow(/minTokens/);
    for (const maxExpansionShare of [0, -0.5, 1.5, Number.NaN])
      expect(() => stubDemonstrations({ maxExpansionShare })).toThrow(/maxExpansionShare/);
  });

  it('keeps the strategy invariants on generated conversations', () => {
    checkStrategyInvariants(stubDemonstrations(), { conversations: richConversation() });
    // As many runs as the default: fast-check starts small, and 60 runs made the strategy act 2-12 times, once
    // too few for the check that it acts at all (more than 3).
    checkStrategyInvariants(stubDemonstrations({ minTokens: 0 }), { conversations: richConversation() });
  });
});
