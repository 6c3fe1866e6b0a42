import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkStrategyInvariants,
  richConversation,
  strategyContext,
} from '../../../test/strategy-invariants.js';
import { propertyRuns } from '../../../test/support/property-runs.js';
import { createMemoryArchive } from '../../archive/archive-store.js';
import { InvalidMessageError } from '../../errors/index.js';
import { assignIds } from '../../messages/ids.js';
import type { IdentifiedMessage, Message } from '../../messages/types.js';
import { validateMessages } from '../../messages/validate/index.js';
import { createConversationBuilder } from '../../testing/message-builders.js';
import { createTokenAccountant } from '../../tokens/index.js';
import { createDropPlanner, dropOldestTurns } from './drop-oldest-turns.js';

const accountant = createTokenAccountant();
const long = (label: string) => `${label}: ${'details of the work done so far. '.repeat(40)}`;

function chat(): IdentifiedMessage[] {
  return assignIds(
    createConversationBuilder()
      .system('You are helpful.')
      .user('Task one')
      .assistant(long('answer one'))
      .user('Task two')
      .tools([{ name: 'bash', input: { command: 'ls' }, output: long('listing') }])
      .assistant(long('answer two'))
      .user('Task three')
      .assistant('Short answer three.')
      .build(),
  );
}

function agentSession(firstOutput?: string): IdentifiedMessage[] {
  const builder = createConversationBuilder().system('You are a coding agent.').user('Fix the flaky test');
  for (let step = 1; step <= 5; step++) {
    const output = step === 1 && firstOutput !== undefined ? firstOutput : long(`output ${step}`);
    builder.tools([{ name: 'bash', input: { command: `step ${step}` }, output }]);
  }
  return assignIds(builder.build());
}

const roles = (messages: readonly IdentifiedMessage[]) => messages.map((message) => message.role);
const check = { provider: 'any', allowPendingToolCalls: true } as const;

describe('dropOldestTurns', () => {
  it('keeps the newest step, not a task that would take over half the budget, where a marker needs a neighbour', () => {
    // No system prompt: a marker cannot open the conversation before the next user message as an assistant
    // message, so one group of the span stays. The task (not preserved here) is the oldest and too large.
    const messages = assignIds(
      createConversationBuilder()
        .user(`Add this script: ${'print("checking the setup of the machine") '.repeat(60)}`)
        .assistant(long('answer one'))
        .tools([{ name: 'bash', input: { command: 'python3 debug.py' }, output: 'Python version: 3.12.5' }])
        .assistant('The script ran.')
        .user('Commit and push it.')
        .assistant('Pushed.')
        .build(),
    );
    const context = strategyContext({ budgetTokens: 240 });
    const result = dropOldestTurns().apply(messages, context);
    expect(validateMessages(result.messages, check).issues).toEqual([]);
    expect(roles(result.messages)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(result.messages[0]!.content).toMatch(/^\[4 earlier messages archived: h-\w+\]$/);
    expect(result.messages.slice(1)).toEqual(messages.slice(4));
    // With room for the task (under half the budget), the oldest group stays as before.
    const roomy = dropOldestTurns().apply(messages, strategyContext({ budgetTokens: 2000 }));
    expect(roomy.messages[0]).toBe(messages[0]);
  });

  it('drops whole old turns, keeps the first request next to an assistant marker, and stays valid', () => {
    const messages = chat();
    const context = strategyContext({ budgetTokens: 200 });
    const result = dropOldestTurns().apply(messages, context);
    expect(roles(result.messages)).toEqual(['system', 'user', 'assistant', 'user', 'assistant']);
    expect(result.messages[1]).toBe(messages[1]);
    const marker = result.messages[2]!;
    expect(marker.content).toMatch(/^\[5 earlier messages archived: h-\w+\]$/);
    expect(marker.metadata).toMatchObject({ origin: 'stub' });
    expect(context.archive.get(marker.metadata!.handle as string)?.content).toEqual(messages.slice(2, 7));
    expect(result.actions.map((action) => [action.type, action.messageIds.length])).toEqual([
      ['drop-turn', 1],
      ['drop-turn', 4],
    ]);
    for (const action of result.actions) {
      expect(context.archive.get(action.handle!)?.content).toEqual(
        messages.filter((message) => action.messageIds.includes(message.id)),
      );
    }
    expect(validateMessages(result.messages, check).valid).toBe(true);
    expect(accountant.countConversation(result.messages).totalTokens).toBeLessThan(
      accountant.countConversation(messages).totalTokens,
    );
  });

  it('drops old steps of one long turn around a preserved task behind two markers, never splitting a call from its result', () => {
    // Between the task (a user message) and the last step (an assistant message) no single marker fits: the
    // oldest step and the rest each go behind their own marker, an assistant one and then a user one.
    const messages = agentSession();
    const preservedIds = new Set([messages[1]!.id, messages.at(-2)!.id, messages.at(-1)!.id]);
    const context = strategyContext({ budgetTokens: 400, preservedIds });
    const result = dropOldestTurns().apply(messages, context);
    expect(roles(result.messages)).toEqual(['system', 'user', 'assistant', 'user', 'assistant', 'tool']);
    expect(result.messages[2]!.content).toMatch(/^\[2 earlier messages archived: h-\w+\]$/);
    expect(result.messages[3]!.content).toMatch(/^\[6 earlier messages archived: h-\w+\]$/);
    expect(result.messages.slice(-2)).toEqual(messages.slice(-2));
    expect(result.actions.map((action) => action.messageIds)).toEqual([
      messages.slice(2, 4).map((message) => message.id),
      messages.slice(4, 10).map((message) => message.id),
    ]);
    expect(validateMessages(result.messages, check).valid).toBe(true);
    expect(result.warnings).toEqual([]);
  });

  it('keeps an oldest step that costs about what a second marker would, and puts one marker after it', () => {
    const messages = agentSession('ok');
    const preservedIds = new Set([messages[1]!.id, messages.at(-2)!.id, messages.at(-1)!.id]);
    const result = dropOldestTurns().apply(messages, strategyContext({ budgetTokens: 400, preservedIds }));
    expect(roles(result.messages)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'user',
      'assistant',
      'tool',
    ]);
    expect(result.messages.slice(2, 4)).toEqual(messages.slice(2, 4));
    expect(result.messages[4]!.content).toMatch(/^\[6 earlier messages archived: h-\w+\]$/);
    expect(validateMessages(result.messages, check).valid).toBe(true);
  });

  it('puts the marker into the next message when no separate marker fits, or keeps the span with a warning', () => {
    const messages = agentSession();
    const total = accountant.countConversation(messages).totalTokens;
    const firstStep = accountant.countMessage(messages[2]!) + accountant.countMessage(messages[3]!);
    const folded = dropOldestTurns().apply(
      messages,
      strategyContext({ budgetTokens: total - firstStep + 40, preservedIds: new Set([messages[1]!.id]) }),
    );
    expect(roles(folded.messages)).toEqual(['system', 'user', ...roles(messages.slice(4))]);
    expect(folded.messages[2]!.id).toBe(messages[4]!.id);
    expect(folded.messages[2]!.content).toEqual([
      { type: 'text', text: expect.stringMatching(/^\[2 earlier messages archived: h-\w+\]$/) },
      ...(messages[4]!.content as unknown[]),
    ]);
    expect(folded.actions.map((action) => action.type)).toEqual(['drop-turn', 'fold-marker']);
    // The fold-marker action names the span, as the marker text does.
    const markerText = (folded.messages[2]!.content as Array<{ text: string }>)[0]!.text;
    expect(markerText).toContain(folded.actions[1]!.handle!);
    expect(validateMessages(folded.messages, check).valid).toBe(true);

    const preservedIds = new Set([messages[1]!.id, messages[4]!.id, messages[5]!.id]);
    const kept = dropOldestTurns().apply(messages, strategyContext({ preservedIds }));
    expect(kept.messages.slice(0, 6)).toEqual(messages.slice(0, 6));
    // Nothing fits budget 0, so the last step goes too (after everything else): one marker for the rest.
    expect(kept.messages).toHaveLength(7);
    expect(kept.messages[6]!.content).toMatch(/^\[6 earlier messages archived: h-\w+\]$/);
    expect(kept.warnings).toHaveLength(1);
    expect(kept.warnings[0]!.message).toMatch(/no marker could be placed/);
    expect(validateMessages(kept.messages, check).valid).toBe(true);
  });

  it('below an earlier marker, puts a marker into a neighbour rather than keep a step for it', () => {
    // A fast-check counterexample of compact: the steps after the last request have no room for a marker
    // message (the request before, the step in flight after); keeping the first of them left a feasible budget unmet.
    const builder = createConversationBuilder().system('You are a coding agent.').user('Fix the flaky test');
    builder.tools([{ name: 'bash', input: { command: 'step 0' }, output: long('output 0') }]);
    builder.user('Now also check the retry module.');
    for (let step = 1; step <= 3; step++)
      builder.tools([{ name: 'bash', input: { command: `step ${step}` }, output: long(`output ${step}`) }]);
    const messages = assignIds(builder.build());
    const lastStep = messages.slice(-2);
    const budgetTokens =
      accountant.countConversation([...messages.slice(0, 2), ...lastStep]).totalTokens + 120;
    const result = dropOldestTurns().apply(messages, strategyContext({ budgetTokens }));
    expect(accountant.countConversation(result.messages).totalTokens).toBeLessThanOrEqual(budgetTokens);
    expect(roles(result.messages)).toEqual(['system', 'user', 'assistant', 'user', 'assistant', 'tool']);
    expect(result.messages[2]!.content).toMatch(/^\[2 earlier messages archived: h-\w+\]$/);
    // Steps 1 and 2 went; their marker is at the start of the step in flight, which keeps its id.
    expect(result.messages[4]!.id).toBe(lastStep[0]!.id);
    expect(result.actions.map((action) => action.type)).toEqual(['drop-turn', 'drop-turn', 'fold-marker']);
    expect(validateMessages(result.messages, check).valid).toBe(true);
  });

  it('lets a task kept above a summary go once it is not preserved, rather than the step in flight', () => {
    // An agent loop: an earlier compaction kept the task (preserved then) and put its summary after it. Under a
    // later budget the task no longer fits beside the last step; made compressible, it goes behind a user marker
    // before the summary, and the step stays. Before, the group above a summary was never dropped: the step went.
    const messages = assignIds([
      { role: 'system', content: 'You are a coding agent.' },
      { role: 'user', content: long('the task').repeat(3) },
      {
        role: 'assistant',
        content: '[precis summary of 12 earlier messages]\n\n## Files\n- `src/upload.ts` modified',
        metadata: { origin: 'summary' },
      },
      { role: 'user', content: 'Now rerun the suite.' },
      { role: 'assistant', content: long('the suite passes') },
    ] as Message[]);
    const budgetTokens = accountant.countConversation(messages).totalTokens - 200;
    const result = dropOldestTurns().apply(messages, strategyContext({ budgetTokens }));
    expect(accountant.countConversation(result.messages).totalTokens).toBeLessThanOrEqual(budgetTokens);
    expect(roles(result.messages)).toEqual(['system', 'user', 'assistant', 'user', 'assistant']);
    expect(result.messages[1]!.content).toMatch(/^\[1 earlier message archived: h-\w+\]$/);
    expect(result.messages.slice(2)).toEqual(messages.slice(2));
    expect(validateMessages(result.messages, check).valid).toBe(true);
    // Preserved, the task stays, and the budget is not met.
    const preserved = dropOldestTurns().apply(
      messages,
      strategyContext({ budgetTokens, preservedIds: new Set([messages[1]!.id]) }),
    );
    expect(preserved.messages[1]).toBe(messages[1]);
  });

  it('keeps on a re-run the task it kept beside its marker: the marker does not stand in for a step', () => {
    // A fast-check counterexample: a long task, steps, a preserved request. The first run keeps the task with an
    // assistant marker for the steps; a second run took that marker for the "newest step" kept in the task's place
    // and dropped the task behind a user marker, so the result changed on a re-run.
    const messages = assignIds(
      createConversationBuilder()
        .system('You are a coding agent.')
        .user(long('the task').repeat(4))
        .tools([{ name: 'bash', input: { command: 'step 1' }, output: long('output 1') }])
        .user('Pinned: keep the public API.')
        .tools([{ name: 'bash', input: { command: 'step 2' }, output: long('output 2') }])
        .build(),
    );
    const context = () => strategyContext({ budgetTokens: 120, preservedIds: new Set([messages[4]!.id]) });
    const first = dropOldestTurns().apply(messages, context());
    expect(first.messages[1]).toBe(messages[1]);
    expect(first.messages[2]!.content).toMatch(/^\[2 earlier messages archived: h-\w+\]$/);
    expect(accountant.countMessage(first.messages[2]!)).toBeLessThanOrEqual(120 / 4);
    const again = dropOldestTurns().apply(first.messages, context());
    expect(again.messages).toEqual(first.messages);
    expect(again.actions).toEqual([]);
  });

  it('takes earlier markers into the next span, so an agent loop compacting again and again keeps one, not dozens', () => {
    // Before: each round kept its marker for good, and beside it the request it could not go without
    // (alternation), so a long chat ended with one request and one marker per round and no room left.
    const archive = createMemoryArchive();
    const task = 'Fix the flaky test in the retry module.';
    let messages = assignIds(
      createConversationBuilder().system('You are a coding agent.').user(task).assistant('On it.').build(),
    );
    const preservedIds = new Set([messages[1]!.id]);
    const seen: IdentifiedMessage[] = [...messages];
    for (let round = 1; round <= 12; round++) {
      const turn = assignIds(
        createConversationBuilder()
          .user(`Request ${round}: look at part ${round} of the module.`)
          .assistant(long(`answer ${round}`))
          .build(),
      ).map((message) => ({ ...message, id: `r${round}-${message.id}` }) as IdentifiedMessage);
      seen.push(...turn);
      messages = [...messages, ...turn];
      const budgetTokens = accountant.countConversation(messages.slice(0, 2)).totalTokens + 700;
      messages = dropOldestTurns().apply(
        messages,
        strategyContext({ budgetTokens, archive, preservedIds }),
      ).messages;
      expect(accountant.countConversation(messages).totalTokens).toBeLessThanOrEqual(budgetTokens);
      expect(validateMessages(messages, check).valid).toBe(true);
    }
    const markers = messages.filter((message) => message.metadata?.origin === 'stub');
    expect(markers.length).toBeLessThanOrEqual(2);
    expect(messages.length).toBeLessThanOrEqual(8);
    // Nothing is lost: every message that went is reachable from a marker, through the markers it took in.
    const reachable = new Set<string>();
    const expand = (handle: string) => {
      for (const message of archive.get(handle)!.content as IdentifiedMessage[]) {
        reachable.add(message.id);
        const inner = message.metadata?.handle;
        if (message.metadata?.origin === 'stub' && typeof inner === 'string') expand(inner);
      }
    };
    for (const marker of markers) expand(marker.metadata!.handle as string);
    const kept = new Set(messages.map((message) => message.id));
    expect(seen.filter((message) => !kept.has(message.id) && !reachable.has(message.id))).toEqual([]);
  });

  it('drops a later system message with its turn, never the system prompt', () => {
    const messages = assignIds(
      createConversationBuilder()
        .system('You are helpful.')
        .user('Task one')
        .assistant(long('answer one'))
        .system('Session restarted at 11:43 with model gpt-4o.')
        .user('Task two')
        .assistant(long('answer two'))
        .user('Task three')
        .assistant('Short answer three.')
        .build(),
    );
    const result = dropOldestTurns().apply(messages, strategyContext({ budgetTokens: 120 }));
    expect(result.messages[0]).toBe(messages[0]);
    expect(result.messages.filter((message) => message.role === 'system')).toEqual([messages[0]]);
    expect(result.actions.flatMap((action) => action.messageIds)).toContain(messages[3]!.id);
    expect(validateMessages(result.messages, { provider: 'openai' }).valid).toBe(true);
  });

  it('stops as soon as the budget holds and does nothing within budget', () => {
    const messages = chat();
    const total = accountant.countConversation(messages).totalTokens;
    const within = dropOldestTurns().apply(messages, strategyContext({ budgetTokens: total }));
    expect(within.messages).toEqual(messages);
    expect(within.actions).toEqual([]);
    const oneTurn = dropOldestTurns().apply(messages, strategyContext({ budgetTokens: total - 100 }));
    expect(oneTurn.actions).toHaveLength(1);
  });

  it('drops the last request and the last step only when nothing else makes the budget hold', () => {
    const messages = chat();
    const preservedIds = new Set(messages.map((message) => message.id));
    expect(dropOldestTurns().apply(messages, strategyContext({ preservedIds })).messages).toEqual(messages);
    // Room for the last turn and a marker: the last request and the short answer to it stay.
    const lastTurn = accountant.countConversation([messages[0]!, ...messages.slice(-2)]).totalTokens;
    const fits = dropOldestTurns().apply(messages, strategyContext({ budgetTokens: lastTurn + 40 }));
    expect(fits.messages.slice(-2)).toEqual(messages.slice(-2));
    expect(accountant.countConversation(fits.messages).totalTokens).toBeLessThanOrEqual(lastTurn + 40);
    // Room for the step and a marker (about 25 tokens) only: the request goes first (it is older), and the
    // first task, kept beside it while it was there (a marker between two user messages breaks alternation), too.
    const lastStep = accountant.countConversation([messages[0]!, messages.at(-1)!]).totalTokens;
    const tighter = dropOldestTurns().apply(messages, strategyContext({ budgetTokens: lastStep + 32 }));
    expect(roles(tighter.messages)).toEqual(['system', 'user', 'assistant']);
    expect(tighter.messages[1]!.content).toMatch(/^\[7 earlier messages archived: h-\w+\]$/);
    expect(tighter.messages.at(-1)).toBe(messages.at(-1));
    expect(accountant.countConversation(tighter.messages).totalTokens).toBeLessThanOrEqual(lastStep + 32);
    const context = strategyContext();
    const none = dropOldestTurns().apply(messages, context);
    expect(roles(none.messages)).toEqual(['system', 'user']);
    expect(none.messages[1]!.content).toMatch(/^\[8 earlier messages archived: h-\w+\]$/);
    expect(context.archive.get(none.messages[1]!.metadata!.handle as string)?.content).toEqual(
      messages.slice(1),
    );
    expect(validateMessages(none.messages, check).valid).toBe(true);
    expect(dropOldestTurns().apply(none.messages, strategyContext()).messages).toEqual(none.messages);
    // A fold asks for less than the budget it must meet (room for its summary): the request and the step stay
    // while everything else gone leaves the result within that budget.
    const planner = createDropPlanner(messages, strategyContext());
    expect(planner.drop(0, lastTurn + 40).messages).toEqual(fits.messages);
    expect(planner.drop(0, 20).messages).toEqual(none.messages);
  });

  it("drops the harness's complaint about a reply's format like any step, not last with the request in flight", () => {
    // mini-swe-agent answers a reply without exactly one action with a format error in the user's place; the
    // agent's steps after it are newer, and they are the work in flight.
    const builder = createConversationBuilder().system('You are a coding agent.').user('Fix the flaky test');
    builder.tools([{ name: 'bash', input: { command: 'step 1' }, output: long('output 1') }]);
    builder.assistant('I will edit and test at once.');
    builder.user('Please always provide EXACTLY ONE action in triple backticks, found 2 actions.');
    for (let step = 2; step <= 4; step++)
      builder.tools([{ name: 'bash', input: { command: `step ${step}` }, output: long(`output ${step}`) }]);
    const messages = assignIds(builder.build());
    const complaint = messages.findIndex(
      (message) => message.role === 'user' && message.content !== 'Fix the flaky test',
    );
    messages[complaint] = { ...messages[complaint]!, metadata: { harness: true, formatError: true } };
    const preservedIds = new Set(messages.slice(0, 2).map((message) => message.id));
    const lastTwoSteps = accountant.countConversation([
      ...messages.slice(0, 2),
      ...messages.slice(-4),
    ]).totalTokens;
    const result = dropOldestTurns().apply(
      messages,
      strategyContext({ preservedIds, budgetTokens: lastTwoSteps + 80 }),
    );
    expect(result.messages.slice(-4)).toEqual(messages.slice(-4));
    expect(result.messages.some((message) => message.metadata?.formatError === true)).toBe(false);
    expect(validateMessages(result.messages, check).valid).toBe(true);
  });

  it('never drops a last step whose tool call has no result yet (the tool is still running)', () => {
    const messages = assignIds([
      ...chat(),
      { role: 'user', content: 'Run the tests.' },
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 'call-9', toolName: 'bash', input: { command: 'npm test' } },
        ],
      },
    ]);
    const result = dropOldestTurns().apply(messages, strategyContext());
    expect(roles(result.messages)).toEqual(['system', 'user', 'assistant']);
    expect(result.messages.at(-1)).toBe(messages.at(-1));
    expect(validateMessages(result.messages, check).valid).toBe(true);
  });

  it('rejects messages without a role', () => {
    expect(() => dropOldestTurns().apply([{ id: 'a', content: 'x' }] as never, strategyContext())).toThrow(
      InvalidMessageError,
    );
  });

  it('drops under each budget of a planner what a fresh run under that budget drops (property)', () => {
    fc.assert(
      fc.property(
        richConversation(6),
        fc.array(fc.double({ min: 0, max: 1.05, noNaN: true }), { minLength: 1, maxLength: 6 }),
        fc.nat(3),
        (conversation, shares, preservedCount) => {
          const messages = assignIds(conversation);
          const total = accountant.countConversation(messages).totalTokens;
          const preservedIds = new Set(messages.slice(0, preservedCount).map((message) => message.id));
          // Folding lowers the budget round by round; a planner must also answer budgets in any order.
          const budgets = shares.map((share) => Math.floor(total * share));
          const planner = createDropPlanner(messages, strategyContext({ preservedIds }));
          for (const budgetTokens of [...budgets, ...budgets.reverse()]) {
            const fresh = dropOldestTurns().apply(messages, strategyContext({ budgetTokens, preservedIds }));
            expect(planner.drop(budgetTokens)).toEqual(fresh);
          }
        },
      ),
      { numRuns: propertyRuns(150) },
    );
  });

  it('answers a budget as a fresh run under it does, whatever the budget of the context it was made with', () => {
    // A task far over half of a small budget, three steps, a short request and a short last step: where the
    // task cannot be kept, the span's newest step may stay instead, and "half the budget" is the one asked for.
    const lines = (count: number, label: string) =>
      Array.from({ length: count }, (_, line) => `${label} line ${line}: value=${line}`).join('\n');
    const builder = createConversationBuilder()
      .system('You are a coding agent.')
      .user(`Fix the bug.\n${lines(50, 'task')}`);
    for (let step = 0; step < 3; step++)
      builder.tools([{ name: 'bash', input: { command: `step ${step}` }, output: lines(10, `out ${step}`) }]);
    builder.user('Go on.');
    builder.tools([{ name: 'bash', input: { command: 'last' }, output: lines(2, 'last') }]);
    const messages = assignIds(builder.build());
    const total = accountant.countConversation(messages).totalTokens;
    for (const share of [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]) {
      const budgetTokens = Math.floor(total * share);
      const fresh = dropOldestTurns().apply(messages, strategyContext({ budgetTokens }));
      const planner = createDropPlanner(messages, strategyContext({ budgetTokens: 0 }));
      expect(planner.drop(0).actions.length).toBeGreaterThan(0);
      expect(planner.drop(budgetTokens)).toEqual(fresh);
    }
  });

  it('drops under each budget of a planner what a fresh run drops, where markers need kept groups or pairs', () => {
    // A preserved task right before the steps: the marker fits only after a kept step (a blocked group), or
    // as the second of two markers (a large oldest step).
    let blocked = 0;
    let paired = 0;
    for (const messages of [agentSession(), agentSession('ok'), chat()]) {
      const preservedIds = new Set([messages[1]!.id]);
      const total = accountant.countConversation(messages).totalTokens;
      const budgets = Array.from({ length: 24 }, (_, index) => Math.floor((total * (24 - index)) / 24));
      const planner = createDropPlanner(messages, strategyContext({ preservedIds }));
      for (const budgetTokens of [...budgets, ...[...budgets].reverse()]) {
        const fresh = dropOldestTurns().apply(messages, strategyContext({ budgetTokens, preservedIds }));
        expect(planner.drop(budgetTokens)).toEqual(fresh);
        if (fresh.messages[2]?.id === messages[2]!.id && fresh.actions.length > 0) blocked++;
        if (fresh.messages[2]?.metadata?.origin === 'stub' && fresh.messages[3]?.metadata?.origin === 'stub')
          paired++;
      }
    }
    expect(blocked).toBeGreaterThan(0);
    expect(paired).toBeGreaterThan(0);
  });

  it('keeps the invariants on generated conversations', () => {
    checkStrategyInvariants(dropOldestTurns(), { conversations: richConversation(6), numRuns: 250 });
  });
});
