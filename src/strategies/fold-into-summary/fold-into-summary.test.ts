import { describe, expect, it } from 'vitest';
import { createMemoryArchive } from '../../archive/archive-store.js';
import { formatArchiveEntry } from '../../archive/expand.js';
import { compact } from '../../engine/compact.js';
import { messageText } from '../../messages/content.js';
import { assignIds } from '../../messages/ids.js';
import type { IdentifiedMessage, Message } from '../../messages/types.js';
import { validateMessages } from '../../messages/validate/index.js';
import { renderAnchoredSummary } from '../../summary/index.js';
import { createConversationBuilder } from '../../testing/message-builders.js';
import { createTokenAccountant } from '../../tokens/index.js';
import { dropOldestTurns } from '../drop-oldest-turns/drop-oldest-turns.js';
import { soleSummary, uploadSession } from '../llm-strategies.test-support.js';
import { foldIntoSummary, showsTask } from './fold-into-summary.js';

const accountant = createTokenAccountant();
const countOf = (messages: readonly Message[]) => accountant.countConversation(messages).totalTokens;
// These tests exercise the fold: with fewer recent turns kept (the default share), stubbing alone meets budgets.
const engine = { accountant, recentTurnsMaxShare: 1 } as const;

function textOf(messages: readonly Message[]): string {
  return messages.map((message) => messageText(message)).join('\n');
}

/** A short name per step that differs in letters (lines that differ only in numbers show once). */
const stepName = (step: number) =>
  String.fromCharCode(97 + (step % 26), 97 + Math.floor(step / 26), 97 + (step % 7));

/** Failing test runs, one per step: many short facts, so a summary's record wants more than any room. */
function failingSteps(from: number, to: number): Message[] {
  const builder = createConversationBuilder();
  for (let step = from; step < to; step++)
    builder.tools([
      {
        name: 'Bash',
        input: { command: `npm test -- ${stepName(step)}` },
        output: {
          type: 'error-text',
          value: `Error: ${stepName(step)} failed at src/retry/${stepName(step)}.ts`,
        },
      },
    ]);
  return builder.build();
}

describe('foldIntoSummary in compact', () => {
  it('folds dropped turns into one summary that keeps their facts, within budget and valid', () => {
    const input = uploadSession(8);
    const budgetTokens = Math.floor(countOf(input) * 0.1);
    for (const provider of ['openai', 'anthropic', 'any'] as const) {
      const archive = createMemoryArchive();
      const result = compact(input, { budgetTokens, provider, ...engine, archive });
      expect(result.report.withinBudget).toBe(true);
      expect(validateMessages(result.messages, { provider }).issues).toEqual([]);
      const { message, record } = soleSummary(result.messages);
      expect(messageText(message).startsWith('[precis summary of ')).toBe(true);
      const text = textOf(result.messages);
      // Facts of the first (dropped) turn survive verbatim.
      expect(text).toContain('src/upload/part-0.ts');
      expect(text).toContain('Error: ECONNRESET while uploading chunk 0');
      expect(text).toContain('npm test -- upload-0');
      // Of instructions that differ only in their number, the latest folded one stands (`at 3` gave way to it).
      expect(record.constraints).toContain('Keep the retry count at 3.');
      expect(text).toContain(record.constraints.at(-1)!);
      expect(record.handles.length).toBeGreaterThan(0);
      for (const handle of record.handles) expect(archive.has(handle)).toBe(true);
      expect(archive.get(record.handles[0]!)?.kind).toBe('messages');
      // Near the top: after the system prompt, the task and at most the first step (kept so roles alternate).
      expect(result.messages.indexOf(message)).toBeLessThanOrEqual(4);
      // Idempotent and deterministic.
      const again = compact(result.messages, { budgetTokens, provider, ...engine, archive });
      expect(again.messages).toEqual(result.messages);
      expect(compact(input, { budgetTokens, provider, ...engine }).messages).toEqual(result.messages);
    }
  });

  it('folds both spans of a marker pair: the summary in place of the first, the second marker after it', () => {
    // One task, then steps, then the agent's answer (the last step): between the task and the answer no single
    // message fits, so the dropped steps go behind an assistant marker and a user marker.
    const builder = createConversationBuilder()
      .system('You are a coding agent.')
      .user('Fix the flaky upload test.');
    for (let step = 0; step < 6; step++)
      builder.tools([
        {
          name: 'bash',
          input: { command: `npm test -- upload-${step}` },
          output: `Error: ECONNRESET while uploading chunk ${step}\n${'at Socket.onData (src/upload/chunker.ts:42)\n'.repeat(20)}`,
        },
      ]);
    const input = assignIds(builder.assistant('Fixed: the chunker now retries a reset part.').build());
    const budgetTokens = Math.floor(countOf(input) * 0.2);
    const result = compact(input, { budgetTokens, provider: 'any', ...engine });
    expect(result.report.withinBudget).toBe(true);
    expect(result.messages.map((message) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    const { message, record } = soleSummary(result.messages);
    expect(result.messages[2]).toBe(message);
    const marker = result.messages[3]!;
    expect(marker.metadata).toMatchObject({ origin: 'stub', strategy: 'drop-oldest-turns' });
    expect(record.handles).toContain(marker.metadata?.handle);
    expect(textOf(result.messages)).toContain('npm test -- upload-0');
    expect(validateMessages(result.messages, { provider: 'anthropic' }).issues).toEqual([]);
    expect(compact(result.messages, { budgetTokens, provider: 'any', ...engine }).messages).toEqual(
      result.messages,
    );
  });

  it('shows no tasks the agent listed again after the summary: the later todo list is their state now', () => {
    const todos = (status: string) => ({
      todos: [
        { content: 'Fix the chunk retry', status: 'completed', activeForm: 'Fixing the chunk retry' },
        { content: 'Push the branch', status, activeForm: 'Pushing the branch' },
      ],
    });
    const session = (later: boolean) => {
      const builder = createConversationBuilder().system('You are a coding agent.').user('Fix the upload.');
      builder.tools([
        { name: 'TodoWrite', input: todos('pending'), output: 'Todos have been modified successfully.' },
      ]);
      for (let step = 0; step < 6; step++)
        builder.tools([
          {
            name: 'Bash',
            input: { command: `npm test -- upload-${step}` },
            output: `Error: ECONNRESET while uploading chunk ${step}\n${'at Socket.onData (src/upload/chunker.ts:42)\n'.repeat(20)}`,
          },
        ]);
      if (later)
        builder.tools([
          { name: 'TodoWrite', input: todos('completed'), output: 'Todos have been modified successfully.' },
        ]);
      return assignIds(builder.assistant('Pushed.').build());
    };
    for (const later of [false, true]) {
      const input = session(later);
      const result = compact(input, {
        budgetTokens: Math.floor(countOf(input) * 0.2),
        provider: 'any',
        ...engine,
      });
      const { message, record } = soleSummary(result.messages);
      // The record keeps the tasks for a later merge; the text shows them only where nothing later does.
      expect(record.tasks.map((task) => task.text)).toContain('Push the branch');
      expect(messageText(message).includes('## Open tasks')).toBe(!later);
    }
  });

  it('takes the intent from the task as the user wrote it when the budget let a duplicate stub replace it', () => {
    // A restarted session sends the task again: the first copy may become a stub pointing at the later one,
    // which the fold then takes away. The intent is the task's text, not the stub's.
    const task = `Fix the flaky upload in src/upload/chunker.ts. ${'The server drops parts at random offsets. '.repeat(30)}`;
    const session = uploadSession(6);
    session[1] = { role: 'user', content: task };
    const input = [...session.slice(0, 8), { role: 'user', content: task } as Message, ...session.slice(8)];
    const archive = createMemoryArchive();
    // An earlier compaction archived the same text from the other copy: the entry names that message.
    archive.put({ kind: 'text', content: task, messageIds: ['m-earlier'], strategy: 'deduplicate' });
    const result = compact(input, {
      budgetTokens: Math.floor(countOf(input) * 0.12),
      preserveFirstUserMessage: false,
      ...engine,
      archive,
    });
    const stubbed = result.report.actions.find((action) => action.type === 'stub-duplicate');
    expect(stubbed?.messageIds).toEqual([assignIds(input)[1]!.id]);
    expect(soleSummary(result.messages).record.intent).toBe(task.slice(0, 1500).trim());
  });

  it('does not repeat the task when it stays in the conversation shortened in place: the record keeps it', () => {
    // Over budget, the task too becomes compressible: extractive prose elides its sentences behind a handle and
    // keeps its opening. It still stands above the summary, so the intent need not repeat its first lines.
    const opening = '# Upload fix: chunker drops parts';
    const details = Array.from(
      { length: 40 },
      (_, index) => `The server log shows part ${index} retried after a reset on node-${index % 7}.`,
    );
    const task = [opening, 'Fix the flaky upload in src/upload/chunker.ts.', ...details].join('\n');
    const session = uploadSession(8);
    session[1] = { role: 'user', content: task };
    const input = assignIds(session);
    const result = compact(input, {
      budgetTokens: Math.floor(countOf(input) * 0.1),
      preserveFirstUserMessage: false,
      keepRecentTurns: 1,
      ...engine,
    });
    expect(result.report.withinBudget).toBe(true);
    const shortened = result.messages.find((message) => message.id === input[1]!.id);
    expect(messageText(shortened!)).not.toBe(task);
    expect(messageText(shortened!)).toContain(opening);
    const { message, record } = soleSummary(result.messages);
    // The record keeps the task for a later round that folds it away.
    expect(record.intent).toContain('Fix the flaky upload in src/upload/chunker.ts.');
    // The conversation shows the task's opening: the summary does not repeat it.
    expect(messageText(message)).not.toContain('## Session intent');
  });

  it('shows the intent once the task was folded away, though a later request is the first one left', () => {
    // An agent loop compacting again and again: once the task went into the summary, the first request the
    // conversation still has is a later one; taking it for the task hid the intent only the summary held.
    const archive = createMemoryArchive();
    const log = Array.from(
      { length: 60 },
      (_, index) => `part ${index} retried after a reset on node-${index % 7}`,
    );
    const task = ['Fix the flaky upload in src/upload/chunker.ts. Its log:', ...log].join('\n');
    const options = { preserveFirstUserMessage: false, keepRecentTurns: 1, ...engine, archive };
    const input = uploadSession(6);
    input[1] = { role: 'user', content: task };
    const budgetTokens = Math.floor(countOf(input) * 0.1);
    const first = compact(input, { budgetTokens, ...options });
    const { message: firstSummary } = soleSummary(first.messages);
    expect(first.messages.some((message) => messageText(message).startsWith('Fix the flaky upload'))).toBe(
      false,
    );
    // The next round: the summary, then a new request and the steps it started.
    const request = 'Now make the retry count configurable.';
    const steps = createConversationBuilder().assistant('The upload is fixed.').user(request);
    for (let step = 0; step < 5; step++)
      steps.tools([
        { name: 'Bash', input: { command: `npm test -- config-${step}` }, output: `${'ok '.repeat(400)}` },
      ]);
    steps.assistant('The retry count is configurable now.');
    const grown = [first.messages[0]!, firstSummary, ...steps.build()];
    const second = compact(grown, { budgetTokens: Math.floor(countOf(grown) * 0.3), ...options });
    const { message, record } = soleSummary(second.messages);
    expect(record.intent?.startsWith(task.slice(0, 1000))).toBe(true);
    // The new request stays (a marker of the steps folded after it at its end), above the new steps' summary.
    expect(second.messages.some((other) => messageText(other).startsWith(request))).toBe(true);
    expect(record.messageCount).toBeGreaterThan(soleSummary(first.messages).record.messageCount);
    expect(messageText(message)).toContain(
      '## Session intent\nFix the flaky upload in src/upload/chunker.ts. Its log:\npart 0 retried',
    );
  });

  it('merges into the existing summary on a later compaction, keeping the first summary items', () => {
    const archive = createMemoryArchive();
    const input = uploadSession(6);
    const first = compact(input, { budgetTokens: Math.floor(countOf(input) * 0.12), ...engine, archive });
    const firstSummary = soleSummary(first.messages);
    const extended = [...first.messages, ...uploadSession(6, { offset: 6 }).slice(1)];
    const second = compact(extended, {
      budgetTokens: Math.floor(countOf(input) * 0.12),
      ...engine,
      archive,
    });
    expect(second.report.withinBudget).toBe(true);
    expect(validateMessages(second.messages, { provider: 'anthropic' }).issues).toEqual([]);
    const { message, record } = soleSummary(second.messages);
    expect(message.id).toBe(firstSummary.message.id);
    expect(record.messageCount).toBeGreaterThan(firstSummary.record.messageCount);
    for (const section of ['errors', 'commands', 'decisions', 'constraints', 'handles'] as const)
      expect(record[section].slice(0, firstSummary.record[section].length)).toEqual(
        firstSummary.record[section],
      );
    expect(record.files.slice(0, firstSummary.record.files.length).map((file) => file.path)).toEqual(
      firstSummary.record.files.map((file) => file.path),
    );
    expect(record.intent).toBe(firstSummary.record.intent);
    // New facts from the second span are there too.
    expect(record.commands.join('\n')).toContain('npm test -- upload-7');
    // The header names one handle, an index of every span and stubbed output either fold archived; the
    // second fold's index is the first's followed by what it added.
    const indexes = [firstSummary, { message, record }].map(({ message: summary, record: folded }) => {
      const named = /^\[precis summary of \d+ earlier messages — archived: (h-[0-9a-f]{20})\]/.exec(
        messageText(summary),
      )?.[1];
      expect(summary.metadata?.handle).toBe(named);
      expect(folded.handles.length).toBeGreaterThan(1);
      const index = archive.get(named!)!;
      expect(index.kind).toBe('index');
      const listed = formatArchiveEntry(index, archive).match(/^- h-[0-9a-f]{20}(?=: )/gm);
      expect(listed?.map((line) => line.slice(2))).toEqual(folded.handles);
      expect(messageText(summary)).not.toContain('## Archived');
      return index;
    });
    expect(indexes[1]!.content).toEqual([
      indexes[0]!.handle,
      ...record.handles.slice(firstSummary.record.handles.length),
    ]);
  });

  it('folds the span of an earlier marker a later drop took in, when no summary had folded it', () => {
    // The first compaction only dropped turns (no fold); the second drops their marker with the turns after it.
    const archive = createMemoryArchive();
    const input = uploadSession(6);
    const budgetTokens = Math.floor(countOf(input) * 0.12);
    const first = compact(input, { budgetTokens, ...engine, archive, strategies: [dropOldestTurns()] });
    expect(first.messages.some((message) => message.metadata?.origin === 'stub')).toBe(true);
    expect(textOf(first.messages)).not.toContain('src/upload/part-0.ts');
    const extended = [...first.messages, ...uploadSession(6, { offset: 6 }).slice(1)];
    const second = compact(extended, { budgetTokens, ...engine, archive });
    expect(second.report.withinBudget).toBe(true);
    const { record } = soleSummary(second.messages);
    expect(record.files.map((file) => file.path)).toContain('src/upload/part-0.ts');
    expect(record.commands.join('\n')).toContain('npm test -- upload-0');
  });

  it('leaves headroom after a merge only for a conversation a step over the budget, not one compacted ahead', () => {
    // Many short facts: the summary's record wants more than any room, and its lines fill the room they get.
    const archive = createMemoryArchive();
    const input = [
      ...createConversationBuilder().system('You are a coding agent.').user('Fix the retry cases.').build(),
      ...failingSteps(0, 60),
    ];
    const budgetTokens = Math.floor(countOf(input) * 0.3);
    const fold = { budgetTokens, ...engine, archive, strategies: [foldIntoSummary()] };
    const first = compact(input, fold).messages;
    // Steps appended until the conversation is just over the budget; or a long stretch of work.
    let next = 60;
    const justOver: Message[] = [...first];
    while (countOf(justOver) <= budgetTokens) justOver.push(...failingSteps(next, ++next));
    expect(countOf(justOver)).toBeLessThanOrEqual(budgetTokens * 1.1);
    const farOver = [...first, ...failingSteps(60, 120)];
    const free = (messages: Message[]) => {
      const output = compact(messages, fold).messages;
      const { message, record } = soleSummary(output);
      // The record wants more than the room: what stays free is left on purpose.
      expect(accountant.countText(renderAnchoredSummary(record))).toBeGreaterThan(2 * budgetTokens);
      expect(accountant.countMessage(message)).toBeLessThan(budgetTokens);
      return budgetTokens - countOf(output);
    };
    // 4% of the budget stays free for the next steps; compacted from further over, the summary takes it.
    expect(free(justOver)).toBeGreaterThanOrEqual(Math.floor(budgetTokens * 0.04));
    expect(free(farOver)).toBeLessThan(Math.floor(budgetTokens * 0.04));
  });

  it('renders its summary again, record unchanged, when steps appended since leave nothing to fold', () => {
    // Everything beside the summary is pinned, the new note too: only the summary can give way. It was rendered
    // into the room the first compaction had, and the note does not fit beside it.
    const archive = createMemoryArchive();
    const input = [
      ...createConversationBuilder().system('You are a coding agent.').user('Fix the retry cases.').build(),
      ...failingSteps(0, 60),
    ];
    const options = { budgetTokens: Math.floor(countOf(input) * 0.3), ...engine, archive };
    const first = compact(input, options).messages;
    const before = soleSummary(first);
    const note = Array.from(
      { length: 12 },
      (_, step) => `The retry budget for case ${stepName(step)} stays at ${step} attempts.`,
    ).join(' ');
    const pinned = [
      ...first.map((message) =>
        message === before.message
          ? message
          : { ...message, metadata: { ...message.metadata, pinned: true } },
      ),
      ...assignIds([{ role: 'user', content: note, metadata: { pinned: true } }]),
    ];
    expect(countOf(pinned)).toBeGreaterThan(options.budgetTokens);
    const second = compact(pinned, options);
    expect(second.report.withinBudget).toBe(true);
    expect(second.report.actions.map((action) => action.type)).toEqual(['refit-summary']);
    // The report says the summary was what gave way, beside the relaxation that freed nothing.
    expect(second.warnings.map((warning) => warning.message)).toEqual([
      expect.stringMatching(
        /keepRecentTurns 0.*, and the existing summary rendered again, from its unchanged record/,
      ),
    ]);
    const after = soleSummary(second.messages);
    expect(after.message.id).toBe(before.message.id);
    expect(after.message.metadata).toEqual(before.message.metadata);
    expect(accountant.countMessage(after.message)).toBeLessThan(accountant.countMessage(before.message));
    // Every other message as it was.
    expect(second.messages.filter((message) => message !== after.message)).toEqual(
      pinned.filter((message) => message !== before.message),
    );
    expect(compact(second.messages, options).messages).toEqual(second.messages);
  });

  it("files code a later span writes into a file an earlier fold saw created as the created file's", () => {
    const content = 'import { parse } from "./src/parse";\nconsole.log(parse(sample));';
    const bulk = (label: string) => `${label}: ${'nothing interesting happens here at all. '.repeat(60)}`;
    const work = (calls: Array<{ name: string; input: Record<string, string>; output: string }>) => {
      const builder = createConversationBuilder();
      for (const call of calls) builder.tools([call]);
      return builder.build();
    };
    const fold = { ...engine, strategies: [foldIntoSummary()], archive: createMemoryArchive() };
    const input = [
      ...createConversationBuilder().system('You are a coding agent.').user('Fix the delimiter.').build(),
      ...work([
        { name: 'Write', input: { file_path: 'test_parse.ts', content }, output: 'File created' },
        { name: 'Bash', input: { command: 'npx tsx test_parse.ts' }, output: bulk('run 1') },
        { name: 'Bash', input: { command: 'ls' }, output: bulk('listing') },
      ]),
    ];
    const budgetTokens = Math.floor(countOf(input) * 0.5);
    const first = compact(input, { budgetTokens, ...fold }).messages;
    expect(soleSummary(first).record.createdCode).toEqual(content.split('\n'));
    const edit = {
      file_path: 'test_parse.ts',
      old_string: 'console.log(parse(sample));',
      new_string: 'console.log(parse(padded));',
    };
    const later = work([
      { name: 'Edit', input: edit, output: 'ok' },
      { name: 'Bash', input: { command: 'npx tsx test_parse.ts' }, output: bulk('run 2') },
      { name: 'Bash', input: { command: 'git status' }, output: bulk('status') },
    ]);
    const { record } = soleSummary(compact([...first, ...later], { budgetTokens, ...fold }).messages);
    expect(record.createdCode).toContain('console.log(parse(padded));');
    expect(record.changes).not.toContain('console.log(parse(padded));');
  });

  it('folds a span whose marker a repair merged into the message beside it (no marker message is left)', () => {
    const archive = createMemoryArchive();
    const first = compact(uploadSession(6), {
      budgetTokens: Math.floor(countOf(uploadSession(6)) * 0.12),
      ...engine,
      archive,
    }).messages;
    // A span archived earlier, its marker now a text part at the start of a later step (repair merged them).
    const span = assignIds(
      createConversationBuilder()
        .tools([
          {
            name: 'Bash',
            input: { command: 'npm run lint -- --fix' },
            output: 'Error: EACCES on .eslintcache',
          },
        ])
        .build(),
    );
    const handle = archive.put({
      kind: 'messages',
      content: span as never,
      messageIds: span.map((message) => message.id),
      strategy: 'drop-oldest-turns',
    });
    const later = uploadSession(6, { offset: 6 }).slice(1);
    const step = later[0]!;
    const merged = {
      ...step,
      content: [
        { type: 'text', text: `[2 earlier messages archived: ${handle}]` },
        { type: 'text', text: messageText(step) },
      ],
    } as Message;
    const input = [...first, merged, ...later.slice(1)];
    const fold = { ...engine, archive, strategies: [foldIntoSummary()] };
    const output = compact(input, { budgetTokens: Math.floor(countOf(input) * 0.3), ...fold }).messages;
    const { record } = soleSummary(output);
    expect(record.commands.join('\n')).toContain('npm run lint -- --fix');
    expect(record.handles).toContain(handle);
  });

  it("extends a summary from before indexes (its handle its first span's) with an index of its handles", () => {
    const archive = createMemoryArchive();
    const input = uploadSession(6);
    const budgetTokens = Math.floor(countOf(input) * 0.12);
    const first = compact(input, { budgetTokens, ...engine, archive });
    const firstHandle = soleSummary(first.messages).record.handles[0]!;
    const older = first.messages.map(
      (message): Message =>
        message.metadata?.origin === 'summary'
          ? ({ ...message, metadata: { ...message.metadata, handle: firstHandle } } as Message)
          : message,
    );
    const second = compact([...older, ...uploadSession(6, { offset: 6 }).slice(1)], {
      budgetTokens,
      ...engine,
      archive,
    });
    const { message, record } = soleSummary(second.messages);
    const index = archive.get(String(message.metadata?.handle))!;
    expect(index.kind).toBe('index');
    const listed = formatArchiveEntry(index, archive).match(/^- h-[0-9a-f]{20}(?=: )/gm);
    expect(listed?.map((line) => line.slice(2))).toEqual(record.handles);
  });

  it('summarises the steps dropped from a later turn in the summary the same fold makes', () => {
    // Turn 1 goes whole (a marker message, which becomes the summary); the first steps of turn 2 go too, their
    // marker put into the step after them, as no message fits between the user's request and that step.
    const builder = createConversationBuilder()
      .system('You are a coding agent.')
      .user('Set up the map viewer project in src/.');
    for (let index = 0; index < 3; index++)
      builder.tools([
        {
          name: 'Read',
          input: { file_path: `docs/spec-${index}.md` },
          output: `Spec ${index}: ${'the viewer shows tiles. '.repeat(40)}`,
        },
      ]);
    builder.assistant('Read the specs.').user('Use OpenStreetMap for 2D and Three.js for 3D.');
    for (let index = 0; index < 12; index++)
      builder.tools([
        {
          name: 'Write',
          input: {
            file_path: `src/file-${index}.ts`,
            content: `export const part${index} = ${index};\n${'// filler line\n'.repeat(30)}`,
          },
          output: `File created successfully at: src/file-${index}.ts`,
        },
      ]);
    const input = builder.assistant('Created the project files.').build();
    const archive = createMemoryArchive();
    const result = compact(input, { budgetTokens: Math.floor(countOf(input) * 0.2), ...engine, archive });
    const folded = result.report.actions.filter((action) => action.type === 'fold-marker');
    expect(folded.length).toBeGreaterThan(0);
    const { record } = soleSummary(result.messages);
    for (const action of folded) expect(record.handles).toContain(action.handle);
    // The files the dropped steps of turn 2 wrote are in the summary's record, not only in the archive.
    const paths = record.files.map((file) => file.path);
    const kept = textOf(result.messages);
    for (let index = 0; index < 12; index++)
      if (!kept.includes(`File created successfully at: src/file-${index}.ts`))
        expect(paths).toContain(`src/file-${index}.ts`);
  });

  it('takes in the steps of a long tool run one by one, though no marker message fits between them', () => {
    // After the last user message an agent appends tool steps; compacting after each drops the oldest step,
    // whose neighbours (a user message, the next call) leave no room for a marker message.
    const archive = createMemoryArchive();
    const input = uploadSession(4);
    const budgetTokens = Math.floor(countOf(input) * 0.15);
    let messages = compact(input, { budgetTokens, ...engine, archive }).messages as Message[];
    soleSummary(messages as IdentifiedMessage[]);
    let foldedMarkers = 0;
    let merges = 0;
    for (let step = 0; step < 40; step++) {
      const output = `Run ${step}: 12 passed, 1 failed\n${'ok '.repeat(120)}`;
      const next = createConversationBuilder()
        .tools([{ name: 'Bash', input: { command: `npm run check -- step-${step}` }, output }])
        .build();
      const result = compact([...messages, ...next], { budgetTokens, ...engine, archive });
      expect(result.report.withinBudget).toBe(true);
      expect(validateMessages(result.messages, { provider: 'anthropic' }).issues).toEqual([]);
      const { record } = soleSummary(result.messages);
      // A span whose marker went into a neighbour is in the summary all the same.
      const folded = result.report.actions.filter((action) => action.type === 'fold-marker');
      for (const action of folded) expect(record.handles).toContain(action.handle);
      foldedMarkers += folded.length;
      if (result.report.actions.some((action) => action.type === 'merge-summary')) {
        merges++;
        // A merge leaves headroom, so that the next steps fit without another fold; where the kept steps leave
        // room for no more than the summary's header, that is all the headroom there is.
        const summary = result.messages.find((message) => message.metadata?.origin === 'summary')!;
        if (!/^\[precis summary of [^\n]*\]$/.test(summary.content as string))
          expect(result.report.tokensAfter).toBeLessThanOrEqual(
            budgetTokens - Math.floor(budgetTokens * 0.04),
          );
      }
      messages = result.messages as Message[];
    }
    expect(foldedMarkers).toBeGreaterThan(0);
    expect(merges).toBeGreaterThan(0);
    const { record } = soleSummary(messages as IdentifiedMessage[]);
    // The steps that went are summarised, not only archived: each is in the record or still in the conversation.
    const commands = record.commands.join('\n');
    const kept = textOf(messages.filter((message) => message.metadata?.origin !== 'summary'));
    for (let step = 0; step < 40; step++) {
      const command = `npm run check -- step-${step}`;
      expect(commands.includes(command) || kept.includes(command), command).toBe(true);
    }
    expect(record.commands.filter((command) => command.includes('npm run check')).length).toBeGreaterThan(6);
  });

  it('builds the summary from the texts that earlier strategies shortened, put back from the archive', () => {
    // A user pasted an error into a long message; extractive prose (or pruning) shortened it before the fold.
    const pasted =
      'The seed failed again:\nError: ECONNREFUSED 127.0.0.1:5432 while seeding the tenants table\nAny idea?';
    const messages = assignIds(uploadSession(4));
    const pastedAt = messages.findIndex((message) => message.content === 'Keep the retry count at 3.');
    const archive = createMemoryArchive();
    const shorten = (original: string, id: string) =>
      `The seed failed again: […]\n\n[precis: sentences marked […] were elided from this 30-token text; full text: ${archive.put({ kind: 'text', content: original, messageIds: [id], strategy: 'extractive-prose' })}]`;
    // Twice over, as when code pruning shortens what prose compression left: both layers are undone.
    const once = shorten(pasted, messages[pastedAt]!.id);
    const twice = `${once.slice(0, 10)} // … 2 lines elided [${archive.put({ kind: 'text', content: once, messageIds: [messages[pastedAt]!.id], strategy: 'prune-code-bodies' })}]`;
    // The same handles quoted by another message restore nothing there.
    const quotedAt = messages.findIndex((message) => message.role === 'assistant');
    const shortened = messages.map((message, index) =>
      index === pastedAt
        ? { ...message, content: twice }
        : index === quotedAt
          ? { ...message, content: `I decided to quote it: ${twice}` }
          : message,
    ) as IdentifiedMessage[];
    const result = compact(shortened, {
      budgetTokens: Math.floor(countOf(shortened) * 0.25),
      ...engine,
      keepRecentTurns: 1,
      archive,
      strategies: [foldIntoSummary()],
    });
    const { record } = soleSummary(result.messages);
    expect(record.errors.join('\n')).toContain(
      'Error: ECONNREFUSED 127.0.0.1:5432 while seeding the tenants table',
    );
    expect(record.decisions.join('\n')).toContain('I decided to quote it: The seed f');
    expect(record.decisions.join('\n')).not.toContain('ECONNREFUSED');
  });

  it('settles the room in a few rounds when the drop frees more than the reserve asked (turns go whole)', () => {
    // Long turns: a drop for the summary's reserve frees a whole turn beyond it, and the record always wants its
    // whole share (the hook lengthens it), so each round asks for a little more room than the last one freed.
    const word = (index: number) => String.fromCharCode(97 + (index % 26), 97 + Math.floor(index / 26));
    const builder = createConversationBuilder().system('You are an agent.').user('Port the CLI to Bun.');
    for (let step = 0; step < 20; step++)
      builder
        .user(`Step ${step}: go on with the port.`)
        .assistant(Array.from({ length: 20 }, (_, line) => `The ${word(line)} module builds.`).join(' '));
    const input = builder.build();
    const budgetTokens = Math.floor(countOf(input) * 0.32);
    let rounds = 0;
    // Distinct words, not numbers: lines that differ only in numbers are shown once.
    const decisions = Array.from({ length: 400 }, (_, index) => `Keep the ${word(index)} adapter as is.`);
    const strategy = foldIntoSummary(
      {},
      {
        extendRecord: (_span, record) => {
          rounds++;
          return { ...record, decisions: [...record.decisions, ...decisions] };
        },
      },
    );
    const result = compact(input, { budgetTokens, ...engine, keepRecentTurns: 1, strategies: [strategy] });
    expect(result.report.withinBudget).toBe(true);
    const { message } = soleSummary(result.messages);
    // The summary has its share of the budget (the default 65%) and it took a few rounds: creeping up a few
    // tokens a round, the rounds ran out before a turn more was dropped (483 tokens, ten rounds).
    expect(accountant.countMessage(message)).toBeGreaterThanOrEqual(Math.floor(budgetTokens * 0.65));
    expect(rounds).toBeLessThanOrEqual(4);
  });

  it('does not repeat what the recent turns show: a rerun failing the same way is read there', () => {
    // Short outputs, nothing to stub: the budget is met by folding the oldest turns.
    const builder = createConversationBuilder()
      .system('You are a coding agent.')
      .user('Fix the flaky upload in src/upload/chunker.ts.');
    for (let turn = 0; turn < 30; turn++) {
      builder.assistant(`Trying chunk size ${turn + 1} MiB.`);
      const error =
        turn === 0 ? 'Error: EPIPE while opening the upload stream' : 'Error: ECONNRESET on chunk';
      builder.tools([
        {
          name: 'Bash',
          input: { command: 'npm test -- upload' },
          output: { type: 'error-text', value: `${error}\n    at send (src/upload/chunker.ts:${40 + turn})` },
        },
      ]);
      builder.user('Try again.');
    }
    builder.assistant('Next I will rerun the whole suite.');
    const input = builder.build();
    const result = compact(input, { budgetTokens: Math.floor(countOf(input) * 0.3), ...engine });
    expect(result.report.withinBudget).toBe(true);
    const { message, record } = soleSummary(result.messages);
    const rest = textOf(result.messages.filter((kept) => kept !== message));
    // The recent turns show the rerun's error and command: the record keeps them, the text leaves them there.
    expect(rest).toContain('Error: ECONNRESET on chunk');
    expect(record.errors.join('\n')).toContain('Error: ECONNRESET on chunk');
    expect(messageText(message)).not.toContain('ECONNRESET');
    expect(messageText(message)).toContain('Error: EPIPE while opening the upload stream');
    // What they do not show is in the summary.
    expect(rest).not.toContain('EPIPE');
  });

  it('does nothing within budget and returns the same objects', () => {
    const messages = assignIds(uploadSession(2));
    const result = foldIntoSummary().apply(messages, {
      budgetTokens: countOf(messages),
      accountant,
      archive: createMemoryArchive(),
      preservedIds: new Set(),
    });
    expect(result.actions).toEqual([]);
    result.messages.forEach((message, index) => {
      expect(message).toBe(messages[index]);
    });
  });
});

describe('showsTask', () => {
  const task = 'Fix the flaky upload in src/upload/chunker.ts.\nThe server drops parts at random offsets.';
  const user = (content: string, metadata?: Record<string, unknown>) =>
    assignIds([{ role: 'user', content, ...(metadata === undefined ? {} : { metadata }) } as Message])[0]!;

  it('sees the task whole, shortened with its opening, or as a later copy on a line of its own', () => {
    expect(showsTask(user(task), task)).toBe(true);
    expect(showsTask(user('Fix the flaky upload in src/upload/chunker.ts. […]'), task)).toBe(true);
    expect(showsTask(user(`Keep the retry count at 3.\n  ${task}`), task)).toBe(true);
  });

  it('does not take a quote of its first line inside a sentence, a stub or a summary, for the task', () => {
    expect(showsTask(user('You asked: "Fix the flaky upload in src/upload/chunker.ts." Still?'), task)).toBe(
      false,
    );
    expect(showsTask(user(task, { origin: 'stub' }), task)).toBe(false);
    expect(
      showsTask(user(`[precis summary]\n\n## Session intent\n${task}`, { origin: 'summary' }), task),
    ).toBe(false);
    expect(showsTask(user('Something else entirely.'), task)).toBe(false);
  });
});
