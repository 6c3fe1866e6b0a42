import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openHandsLarge } from '../../../bench/inputs/importer-inputs.mjs';
import { expectValidForOpenAI, importWith } from '../../../test/support/importer-harness.js';
import {
  factSurvival,
  hasSharedSessions,
  loadProbes,
  sessionsDir,
} from '../../../test/support/probe-facts.js';
import { TranscriptImportError } from '../../errors/index.js';
import { toolCallsOf, toolResultsOf } from '../../messages/content.js';
import type { Message } from '../../messages/types.js';
import { repairMessages } from '../../messages/validate/index.js';
import type { ImportOptions } from '../transcript-importer.js';
import { openHandsImporter, parseTextFunctionCall, splitInContextExample } from './openhands-importer.js';

const fixture = (name: string) => readFileSync(join(import.meta.dirname, 'fixtures', name), 'utf8');
const otherFixture = (format: string, name: string) =>
  readFileSync(join(import.meta.dirname, '..', format, 'fixtures', name), 'utf8');

const importText = (text: string, options: ImportOptions = {}) =>
  importWith(openHandsImporter, text, { file: 'dump.json', ...options });

const resultText = (message: Message) => {
  const [result] = toolResultsOf(message);
  return result?.output.type === 'text' ? result.output.value : undefined;
};

const systemPrompt = 'You are OpenHands agent, a helpful AI assistant.';
const dump = (messages: unknown[]) =>
  JSON.stringify({ messages: [{ role: 'system', content: systemPrompt }, ...messages] });

describe('openHandsImporter.detect', () => {
  const detect = (head: string) => openHandsImporter.detect({ head });

  it('recognises the OpenHands prompt as the first message, in text or part form', () => {
    expect(detect(fixture('text-calls.json'))).toContain('You are OpenHands agent');
    expect(detect(fixture('native-completion-log.json'))).toContain('You are OpenHands agent');
    expect(detect(`[{"role": "system", "content": "${systemPrompt}"}]`)).toBeDefined();
    const textCalling =
      '{"messages": [{"role": "system", "content": "You are a coding agent.\\n---- BEGIN FUNCTION #1: execute_bash ----\\n<function=example_function_name>"}]}';
    expect(detect(textCalling)).toContain('BEGIN FUNCTION');
  });

  it('does not claim plain OpenAI messages, other agent logs, or the prompt quoted later', () => {
    const openAI = [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: 'run ls' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'execute_bash', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'EXECUTION RESULT of [execute_bash]: ok' },
    ];
    expect(detect(JSON.stringify(openAI))).toBeUndefined();
    expect(detect(JSON.stringify({ model: 'gpt-4o', messages: openAI }))).toBeUndefined();
    const quoted = [
      { role: 'user', content: 'x'.repeat(5000) },
      { role: 'user', content: systemPrompt },
    ];
    expect(detect(JSON.stringify(quoted))).toBeUndefined();
    const claudeCode = `[{"parentUuid":null,"sessionId":"s","type":"user","message":{"role":"user","content":"${systemPrompt}"}}]`;
    expect(detect(claudeCode)).toBeUndefined();
    expect(detect(otherFixture('mini-swe-agent', 'submitted.traj.json'))).toBeUndefined();
    expect(detect(otherFixture('swe-agent', 'submitted.traj'))).toBeUndefined();
  });
});

describe('openHandsImporter.parse: text function calling', () => {
  const { messages, context, metadata } = importText(fixture('text-calls.json'));

  it('turns <function=…> blocks into calls answered by the EXECUTION RESULT messages, and stays valid', () => {
    expectValidForOpenAI(messages);
    expect(messages.flatMap(toolCallsOf).map((call) => [call.toolCallId, call.toolName])).toStrictEqual([
      ['call_2', 'execute_bash'],
      ['call_4', 'str_replace_editor'],
      ['call_8', 'str_replace_editor'],
      ['call_10', 'execute_bash'],
    ]);
    expect(context.stats).toStrictEqual({ recordsRead: 12, recordsUsed: 12, skipped: {} });
    expect(context.warnings).toStrictEqual([]);
    expect(metadata).toStrictEqual({ format: 'openhands' });
  });

  it('keeps the text before the block as text and the parameters as input', () => {
    expect(messages[2]!.content).toStrictEqual([
      { type: 'text', text: 'Let me find where the reminder is shown.' },
      {
        type: 'tool-call',
        toolCallId: 'call_2',
        toolName: 'execute_bash',
        input: { command: 'grep -rn "Entkalken" /workspace/kettle__kettle__0.1/src' },
      },
    ]);
    // A call with no text before it has no empty text part.
    expect((messages[8]!.content as unknown[]).length).toBe(1);
  });

  it('keeps multi-line values byte for byte (indentation, tabs, trailing spaces)', () => {
    expect(toolCallsOf(messages[4]!)[0]!.input).toStrictEqual({
      command: 'str_replace',
      path: '/workspace/kettle__kettle__0.1/src/reminder.ts',
      old_str: "    if (needsDescale) {\n        show('Entkalken!');\n        show('Entkalken!');\n    }\n  ",
      new_str: "    if (needsDescale) {\n        show('Entkalken!');\n    }\n\t",
    });
    expect(toolCallsOf(messages[8]!)[0]!.input).toMatchObject({
      file_text:
        "\nimport {reminder} from './src/reminder';\n\nconsole.log(reminder({needsDescale: true}).join('|'));\n",
    });
  });

  it('keeps observations verbatim with their exit code', () => {
    expect(resultText(messages[11]!)).toMatch(
      /^EXECUTION RESULT of \[execute_bash\]:\nError: Cannot find module 'ts-node'/,
    );
    expect(messages[11]!.metadata).toStrictEqual({ origin: 'openhands', record: 11, exitCode: 1 });
    expect(messages[3]!.metadata?.exitCode).toBe(0);
    expect(messages[5]!.metadata?.exitCode).toBeUndefined();
  });

  it("marks an observation that reports the tool's failure (ERROR: first) as an error, its text verbatim", () => {
    const refused =
      'EXECUTION RESULT of [str_replace_editor]:\nERROR:\nInvalid `path` parameter: /w/tsconfig.json. File already exists at: /w/tsconfig.json.';
    const { messages } = importText(
      dump([
        { role: 'user', content: 'task' },
        {
          role: 'assistant',
          content:
            'Create it.\n<function=str_replace_editor>\n<parameter=command>create</parameter>\n<parameter=path>/w/tsconfig.json</parameter>\n</function>',
        },
        { role: 'user', content: refused },
        {
          role: 'assistant',
          content: 'Look.\n<function=execute_bash>\n<parameter=command>cat log</parameter>\n</function>',
        },
        { role: 'user', content: 'EXECUTION RESULT of [execute_bash]:\nline 1: ERROR: is only text here' },
      ]),
    );
    const outputs = messages.flatMap((message) => toolResultsOf(message)).map((result) => result.output);
    expect(outputs).toStrictEqual([
      { type: 'error-text', value: refused },
      { type: 'text', value: 'EXECUTION RESULT of [execute_bash]:\nline 1: ERROR: is only text here' },
    ]);
  });

  it('splits the in-context example from the task, byte for byte, and leaves the annotation slots alone', () => {
    expect(messages[1]).toMatchObject({ role: 'user', metadata: { record: 1, requestPart: 1 } });
    const [example, request] = messages[1]!.content as Array<{ type: 'text'; text: string }>;
    // The example stays text (its <function= blocks were never calls) and ends with its closing line.
    expect(example!.text).toContain('<function=execute_bash>\n<parameter=command>\ndate\n</parameter>');
    expect(example!.text.startsWith("Here's a running example")).toBe(true);
    expect(example!.text.endsWith('--------------------- END OF EXAMPLE ---------------------\n\n')).toBe(
      true,
    );
    expect(request!.text.startsWith('--------------------- NEW TASK DESCRIPTION')).toBe(true);
    expect(request!.text).toContain('"Entkalken!" twice — once is enough. 🫖');
    const raw = JSON.parse(fixture('text-calls.json')).messages[1].content;
    expect(example!.text + request!.text).toBe(raw);
    expect(JSON.stringify(messages)).not.toContain('contentClassification');
    expect(messages[0]).toMatchObject({ role: 'system' });
  });

  it('keeps a reply without a call as text and the next user message as a user message', () => {
    expect(messages[6]).toMatchObject({
      role: 'assistant',
      content: expect.stringContaining('double-check'),
    });
    expect(messages[7]).toMatchObject({ role: 'user', content: expect.stringContaining('Please continue') });
  });
});

describe('openHandsImporter.parse: native calls in a LiteLLM completion log', () => {
  const { messages, context, metadata, conversation } = importText(fixture('native-completion-log.json'));

  it('links parallel calls to results that come out of order and after a user message', () => {
    expectValidForOpenAI(messages);
    expect(messages.map((message) => message.role)).toStrictEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'tool',
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
    ]);
    expect(messages.slice(3, 5).map((message) => toolResultsOf(message)[0]!.toolCallId)).toStrictEqual([
      'toolu_02',
      'toolu_01',
    ]);
    expect(toolResultsOf(messages[4]!)[0]!.toolName).toBe('str_replace_editor');
    expect(messages[3]!.metadata?.exitCode).toBe(0);
    expect(context.warnings.map((warning) => warning.message)).toStrictEqual([
      'tool result for toolu_01 came after other messages; moved up to its tool call',
      expect.stringContaining('tool call toolu_04 (execute_bash) has no result'),
    ]);
  });

  it('keeps the text of part lists and adds the logged response as the last assistant turn', () => {
    expect(messages[0]!.content).toBe(
      'You are OpenHands agent, a helpful AI assistant that can interact with a computer to solve tasks.',
    );
    expect(messages[1]!.content).toMatchObject([{ type: 'text', text: expect.stringContaining('leise') }]);
    expect(messages[8]).toMatchObject({
      role: 'assistant',
      metadata: { origin: 'openhands', record: 8, response: true, timestamp: '2025-03-23T17:13:20.250Z' },
    });
    expect(toolCallsOf(messages[8]!)[0]!.input).toStrictEqual({ command: 'npm run build' });
  });

  it('reads tools, model and cost, and counts the native duplicates as ignored', () => {
    expect(conversation.tools?.map((tool) => tool.name)).toStrictEqual([
      'execute_bash',
      'str_replace_editor',
    ]);
    expect(metadata).toStrictEqual({
      format: 'openhands',
      model: 'acme/sonnet-like',
      endedAt: '2025-03-23T17:13:20.250Z',
      extra: { cost: 0.0123, responseId: 'chatcmpl-kettle' },
    });
    expect(context.stats).toStrictEqual({
      recordsRead: 13,
      recordsUsed: 9,
      skipped: { 'native-duplicate': 4 },
    });
  });
});

describe('openHandsImporter.parse: abrupt ends and bad input', () => {
  it('ends validly on a call without a result, and on an unclosed block', () => {
    const { messages, context } = importText(
      dump([
        { role: 'user', content: 'task' },
        {
          role: 'assistant',
          content: 'Run.\n<function=execute_bash>\n<parameter=command>make</parameter>\n</function>',
        },
        {
          role: 'user',
          content: 'EXECUTION RESULT of [execute_bash]:\nok\n[Command finished with exit code 0]',
        },
        {
          role: 'assistant',
          content:
            'Write.\n<function=str_replace_editor>\n<parameter=command>create</parameter>\n<parameter=file_text>\nhalf a fi',
        },
      ]),
    );
    expectValidForOpenAI(messages);
    expect(toolCallsOf(messages[4]!)[0]!.input).toStrictEqual({
      command: 'create',
      file_text: '\nhalf a fi',
    });
    expect(context.warnings.map((warning) => warning.message)).toStrictEqual([
      'message 4: <function=str_replace_editor> is not closed',
      expect.stringContaining('has no result'),
    ]);
  });

  it('keeps an observation that answers nothing as a user message, and a mismatched one with a warning', () => {
    const { messages, context } = importText(
      dump([
        { role: 'user', content: 'task' },
        { role: 'assistant', content: 'Thinking aloud, no call.' },
        { role: 'user', content: 'EXECUTION RESULT of [execute_bash]:\nstale' },
        { role: 'assistant', content: '<function=finish>\n</function>' },
        { role: 'user', content: 'EXECUTION RESULT of [execute_bash]:\nodd' },
      ]),
    );
    expectValidForOpenAI(messages);
    expect(messages[3]).toMatchObject({
      role: 'user',
      content: 'EXECUTION RESULT of [execute_bash]:\nstale',
    });
    expect(toolCallsOf(messages[4]!)[0]).toMatchObject({ toolName: 'finish', input: {} });
    expect(resultText(messages[5]!)).toBe('EXECUTION RESULT of [execute_bash]:\nodd');
    expect(context.warnings.map((warning) => warning.record)).toStrictEqual([5]);
  });

  it('parses only the first block of a reply; the rest stays text', () => {
    const { messages, context } = importText(
      dump([
        { role: 'user', content: 'task' },
        {
          role: 'assistant',
          content:
            '<function=execute_bash>\n<parameter=command>ls</parameter>\n</function>\n<function=execute_bash>\n<parameter=command>pwd</parameter>\n</function>',
        },
        { role: 'user', content: 'EXECUTION RESULT of [execute_bash]:\na' },
      ]),
    );
    expect(messages[2]!.content).toMatchObject([
      { type: 'tool-call', input: { command: 'ls' } },
      { type: 'text', text: '<function=execute_bash>\n<parameter=command>pwd</parameter>\n</function>' },
    ]);
    expect(context.warnings).toHaveLength(1);
  });

  it('skips malformed records with a warning, and fails on them in strict mode', () => {
    const text = dump([
      { role: 'user', content: 'task' },
      null,
      { role: 'assistant', content: 'x', tool_calls: [{ id: 7 }] },
      { role: 'user', content: 12 },
    ]);
    const { messages, context } = importText(text);
    expect(messages.map((message) => message.role)).toStrictEqual(['system', 'user']);
    expect(context.stats).toStrictEqual({ recordsRead: 5, recordsUsed: 2, skipped: { malformed: 3 } });
    expect(context.warnings.map((warning) => warning.record)).toStrictEqual([2, 3, 4]);
    expect(context.warnings[1]!.message).toContain('tool_calls[0].id');
    expect(() => importText(text, { strict: true })).toThrowError(TranscriptImportError);
    expect(() => importText(text, { strict: true })).toThrowError(/dump\.json, record 2/);
  });

  it('rejects a file that is not JSON or has no messages', () => {
    expect(() => importText('{"messages": [}')).toThrowError(TranscriptImportError);
    expect(() => importText('{"turns": []}')).toThrowError(/"messages" array/);
  });

  // This input is shared with bench/importers.bench.mjs, which measures its speed; here, what comes out of it.
  it('reads megabyte-sized parameters and observations, and a call of unclosed parameters', () => {
    const big = 'z\n'.repeat(1_000_000);
    const { messages } = importText(openHandsLarge());
    expect((toolCallsOf(messages[2]!)[0]!.input as Record<string, string>).file_text).toBe(big);
    expect(resultText(messages[3]!)).toBe(`EXECUTION RESULT of [str_replace_editor]:\n${big}`);
    expect(toolCallsOf(messages[5]!).map((part) => part.toolName)).toEqual(['f']);
  });
});

describe('parseTextFunctionCall', () => {
  it('splits an example only when it is closed and a request follows it', () => {
    const example = '--- START OF EXAMPLE ---\nUSER: hi\n--- END OF EXAMPLE ---\n';
    expect(splitInContextExample(`${example}\n\nFix it.`)).toEqual([`${example}\n\n`, 'Fix it.']);
    expect(splitInContextExample(example)).toBeUndefined();
    expect(splitInContextExample('--- START OF EXAMPLE ---\nUSER: hi, no end')).toBeUndefined();
    // An end line without a start is the task quoting it, not an example.
    expect(splitInContextExample('Task\n--- END OF EXAMPLE ---\nmore')).toBeUndefined();
    expect(splitInContextExample('Fix it.')).toBeUndefined();
  });

  it('reads name, parameters and the text around the block', () => {
    expect(
      parseTextFunctionCall(
        'Hi\n<function=f>\n<parameter=a>1</parameter>\n<parameter=b>\nx <y>\n</parameter>\n</function> tail',
      ),
    ).toStrictEqual({
      before: 'Hi\n',
      name: 'f',
      parameters: { a: '1', b: '\nx <y>\n' },
      after: ' tail',
      closed: true,
      stray: '',
    });
    expect(parseTextFunctionCall('<function=f>junk<parameter=a>1</parameter></function>')?.stray).toBe(
      'junk',
    );
    expect(parseTextFunctionCall('no call here')).toBeUndefined();
    expect(parseTextFunctionCall('<function=>')).toBeUndefined();
    expect(parseTextFunctionCall('a <function=two words> b')).toBeUndefined();
  });
});

describe.skipIf(!hasSharedSessions)('openHandsImporter on the shared sessions', () => {
  const sessions = [
    'openhands-msgs__darkreader__darkreader-7241.json',
    'openhands-msgs__mui__material-ui-30768.json',
  ];
  it.each(sessions)('%s imports valid, with every probe fact', (file) => {
    const text = readFileSync(join(sessionsDir, file), 'utf8');
    expect(openHandsImporter.detect({ head: text.slice(0, 65_536), fileName: file })).toBeDefined();
    const { messages, context } = importText(text, { file });
    const { repairs } = repairMessages(messages, { provider: 'openai' });
    const survival = factSurvival(loadProbes(file), messages);
    const calls = messages.flatMap(toolCallsOf).length;
    console.log(
      `${file}: ${messages.length} messages, ${calls} tool calls, ${repairs.length} repairs, facts ${survival.kept}/${survival.facts}`,
      survival.missing,
    );
    expect(repairs).toStrictEqual([]);
    expect(survival.kept / survival.facts).toBeGreaterThanOrEqual(0.98);
    expect(context.warnings).toStrictEqual([]);
    // Every assistant message of these dumps holds exactly one call: one tool message per assistant message.
    expect(calls).toBe(messages.filter((message) => message.role === 'assistant').length);
  });
});
