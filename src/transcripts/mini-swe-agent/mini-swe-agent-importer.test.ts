import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { miniSweAgentLarge } from '../../../bench/inputs/importer-inputs.mjs';
import { expectValidForOpenAI, importWith } from '../../../test/support/importer-harness.js';
import {
  factSurvival,
  hasSharedSessions,
  loadProbes,
  sessionsDir,
} from '../../../test/support/probe-facts.js';
import { propertyRuns } from '../../../test/support/property-runs.js';
import { TranscriptImportError } from '../../errors/index.js';
import {
  isUserRequest,
  messageText,
  toolCallsOf,
  toolOutputText,
  toolResultsOf,
  typedRequest,
} from '../../messages/content.js';
import type { AssistantMessage, ToolMessage } from '../../messages/types.js';
import { repairMessages } from '../../messages/validate/index.js';
import type { ImportOptions } from '../transcript-importer.js';
import { fencedActionFinder, miniSweAgentImporter } from './mini-swe-agent-importer.js';

const fixture = (name: string) => readFileSync(join(import.meta.dirname, 'fixtures', name), 'utf8');
const otherFixture = (format: string, name: string) =>
  readFileSync(join(import.meta.dirname, '..', format, 'fixtures', name), 'utf8');

const importText = (text: string, options: ImportOptions = {}) =>
  importWith(miniSweAgentImporter, text, { file: 'run.traj.json', ...options });

const minimal = (messages: unknown[], info: object = {}) =>
  JSON.stringify({ info, messages, trajectory_format: 'mini-swe-agent-1' });

describe('miniSweAgentImporter.detect', () => {
  const detect = (head: string, fileName?: string) =>
    miniSweAgentImporter.detect(fileName === undefined ? { head } : { head, fileName });

  it('recognises the trajectory_format field', () => {
    expect(detect(fixture('submitted.traj.json'))).toContain('"trajectory_format": "mini-swe-agent-1"');
    expect(detect(fixture('tool-calls-v2.traj.json'))).toContain('mini-swe-agent-1.1');
  });

  it('recognises a head cut before trajectory_format (it is the last key)', () => {
    const text = fixture('submitted.traj.json');
    const head = text.slice(0, text.indexOf('"messages"'));
    expect(detect(head)).toBe('starts with "info" that has "mini_version"');
    // A huge submission diff can push even mini_version out of the head.
    expect(
      detect('{\n  "info": {\n    "exit_status": "Submitted",\n    "submission": "diff --git'),
    ).toBeDefined();
  });

  it('does not claim other formats', () => {
    expect(detect(otherFixture('swe-agent', 'submitted.traj'))).toBeUndefined();
    expect(detect(otherFixture('openhands', 'text-calls.json'))).toBeUndefined();
    expect(detect(otherFixture('openhands', 'native-completion-log.json'))).toBeUndefined();
    expect(
      detect('[{"role":"system","content":"Be brief."},{"role":"user","content":"hi"}]'),
    ).toBeUndefined();
    expect(
      detect('{"model":"gpt-4o","messages":[{"role":"user","content":"mini-swe-agent"}]}'),
    ).toBeUndefined();
    expect(
      detect('{"type":"user","message":{"role":"user","content":"x"},"sessionId":"s"}\n'),
    ).toBeUndefined();
    // The key inside a string (escaped quotes) is not the key.
    expect(
      detect('[{"role":"user","content":"{\\"trajectory_format\\": \\"mini-swe-agent-1\\"}"}]'),
    ).toBeUndefined();
  });
});

describe('miniSweAgentImporter.parse: a submitted 1.x run', () => {
  const { messages, metadata, conversation, context } = importText(fixture('submitted.traj.json'));

  it('turns every action into a bash call answered by its observation, and stays valid', () => {
    expectValidForOpenAI(messages);
    const calls = messages.flatMap(toolCallsOf);
    expect(calls.map((call) => call.toolCallId)).toStrictEqual([
      'call_2',
      'call_6',
      'call_8',
      'call_10',
      'call_12',
      'call_14',
    ]);
    expect(calls.every((call) => call.toolName === 'bash')).toBe(true);
    const results = messages.flatMap(toolResultsOf);
    expect(results.map((result) => result.toolCallId)).toStrictEqual(calls.map((call) => call.toolCallId));
  });

  it('keeps the THOUGHT as text and the command (trimmed, multi-line, unicode) as input', () => {
    const first = messages[2] as AssistantMessage;
    expect(first.content).toStrictEqual([
      { type: 'text', text: 'THOUGHT: First I look for the function that converts minutes.' },
      {
        type: 'tool-call',
        toolCallId: 'call_2',
        toolName: 'bash',
        input: { command: 'grep -rn "def steep" kettle' },
      },
    ]);
    const heredoc = toolCallsOf(
      messages.find((message) => toolCallsOf(message)[0]?.toolCallId === 'call_6')!,
    );
    expect(heredoc[0]!.input).toStrictEqual({
      command:
        'cat <<\'EOF\' > check_steep.py\nfrom kettle.brew import steep\n\nprint("café ☕ naïve", steep(2.5))\nEOF\npython check_steep.py',
    });
  });

  it('keeps observations verbatim with their exit code, including the timeout notice and elided output', () => {
    const tools = messages.filter((message): message is ToolMessage => message.role === 'tool');
    const text = (message: ToolMessage) => {
      const output = toolResultsOf(message)[0]?.output;
      return output?.type === 'text' ? output.value : undefined;
    };
    expect(text(tools[0]!)).toBe(
      '<returncode>0</returncode>\n<output>\nkettle/brew.py:1:def steep(minutes):\n</output>',
    );
    expect(tools[0]!.metadata).toStrictEqual({ origin: 'mini-swe-agent', record: 3, exitCode: 0 });
    expect(text(tools[2]!)).toMatch(
      /^The last command <command>pytest tests\/test_network.py<\/command> timed out/,
    );
    expect(tools[2]!.metadata?.exitCode).toBeUndefined();
    expect(text(tools[3]!)).toContain('<elided_chars>\n12345 characters elided\n</elided_chars>');
    expect(tools[4]!.metadata?.exitCode).toBe(1);
  });

  it('leaves a reply with two bash blocks as text and the format error as a harness note', () => {
    const rejected = messages.find((message) => message.metadata?.record === 4)!;
    expect(rejected.role).toBe('assistant');
    expect(typeof rejected.content).toBe('string');
    expect(rejected.content).toContain('```bash\npytest -q\n```');
    const complaint = messages.find((message) => message.metadata?.record === 5)!;
    expect(complaint.role).toBe('user');
    expect(complaint.content).toMatch(/^Please always provide EXACTLY ONE action/);
    // Written by the harness in the user's place: not an instruction (the summary lists no constraint from it).
    expect(complaint.metadata?.harness).toBe(true);
    // A rejection of the agent's reply: an error it saw, for the ledger.
    expect(complaint.metadata?.formatError).toBe(true);
    expect(isUserRequest(complaint)).toBe(false);
    expect(messages.filter((message) => message.metadata?.harness === true)).toHaveLength(1);
  });

  it('reads the submission as the result of the submit call that printed it, with no placeholder', () => {
    const last = messages.at(-1) as ToolMessage;
    expect(last).toMatchObject({
      role: 'tool',
      content: [{ toolCallId: 'call_14', output: { type: 'text' } }],
      metadata: { origin: 'mini-swe-agent', record: 15, exit: true },
    });
    expect(toolOutputText(toolResultsOf(last)[0]!.output)).toMatch(/^diff --git a\/kettle\/brew.py/);
    expect(messages.some((message) => message.metadata?.synthetic === true)).toBe(false);
    expect(context.warnings).toStrictEqual([]);
  });

  it('keeps unicode, timestamps and source positions', () => {
    expect(messages[1]!.content).toContain('日本語のテスト ✓');
    expect(messages[2]!.metadata).toStrictEqual({
      origin: 'mini-swe-agent',
      record: 2,
      timestamp: '2025-10-09T08:53:20.000Z',
    });
    expect(messages.every((message) => message.metadata?.origin === 'mini-swe-agent')).toBe(true);
  });

  it('reads model, exit status, instance id and agent version', () => {
    expect(conversation.model).toBe('acme/coder-7');
    expect(metadata).toStrictEqual({
      format: 'mini-swe-agent',
      model: 'acme/coder-7',
      cwd: '/testbed',
      title: 'kettle__kettle-42',
      startedAt: '2025-10-09T08:53:20.000Z',
      endedAt: '2025-10-09T08:54:20.000Z',
      extra: {
        instanceId: 'kettle__kettle-42',
        exitStatus: 'Submitted',
        agentVersion: '1.15.0',
        trajectoryFormat: 'mini-swe-agent-1',
        agentType: 'minisweagent.agents.default.DefaultAgent',
        modelStats: { instance_cost: 0.0421, api_calls: 7 },
      },
    });
    expect(context.stats).toStrictEqual({ recordsRead: 16, recordsUsed: 16, skipped: {} });
  });
});

describe('miniSweAgentImporter.parse: runs that end abruptly and 2.x tool calls', () => {
  it('closes an action that never got its observation and skips the empty LimitsExceeded exit message', () => {
    const { messages, context, metadata } = importText(fixture('limits-exceeded.traj.json'));
    expectValidForOpenAI(messages);
    expect(messages.at(-1)).toMatchObject({
      role: 'tool',
      content: [{ toolCallId: 'call_4', output: { value: '[no result recorded]' } }],
    });
    expect(context.stats.skipped).toStrictEqual({ 'empty-message': 1 });
    expect(metadata.extra?.exitStatus).toBe('LimitsExceeded');
  });

  it("keeps the task's standing instructions as its expansion, apart from the PR description", () => {
    const task =
      '<pr_description>\nThe kettle never whistles.\n</pr_description>\n\n<instructions>\n# Task Instructions\nOne command per reply.\n</instructions>';
    const text = minimal([
      { role: 'system', content: 'sys' },
      { role: 'user', content: task },
      { role: 'assistant', content: 'THOUGHT: look\n\n```bash\nls\n```' },
      { role: 'user', content: '<returncode>0</returncode>\n<output>\nkettle.py\n</output>' },
      { role: 'user', content: 'Please keep going.\n\n<instructions>\nnot a template\n</instructions>' },
    ]);
    const { messages } = importText(text);
    expect(messages[1]!.metadata?.expansionPart).toBe(1);
    expect(messages[1]!.content).toEqual([
      { type: 'text', text: '<pr_description>\nThe kettle never whistles.\n</pr_description>\n\n' },
      { type: 'text', text: '<instructions>\n# Task Instructions\nOne command per reply.\n</instructions>' },
    ]);
    expect(messageText(typedRequest(messages[1]!))).toBe(
      '<pr_description>\nThe kettle never whistles.\n</pr_description>\n\n',
    );
    // Only the task is split: a later user message stays as written.
    expect(messages.at(-1)!.content).toBe(
      'Please keep going.\n\n<instructions>\nnot a template\n</instructions>',
    );
  });

  it('ends validly on an action when the run simply stopped', () => {
    const text = minimal([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'task' },
      { role: 'assistant', content: 'THOUGHT: go\n\n```bash\nmake\n```' },
    ]);
    const { messages, context } = importText(text);
    expectValidForOpenAI(messages);
    expect(messages).toHaveLength(4);
    expect(context.warnings).toHaveLength(1);
  });

  it('keeps a tool result that answers no call as user text, and counts an empty one as skipped', () => {
    const text = JSON.stringify({
      info: { mini_version: '2.0.0' },
      messages: [
        { role: 'user', content: 'task' },
        { role: 'tool', tool_call_id: 'call_ghost', content: '' },
        { role: 'tool', tool_call_id: 'call_ghost', content: 'ghost output' },
      ],
      trajectory_format: 'mini-swe-agent-1.1',
    });
    const { messages, context } = importText(text);
    expectValidForOpenAI(messages);
    expect(messages.slice(1)).toStrictEqual([
      {
        role: 'user',
        content: 'ghost output',
        metadata: { origin: 'mini-swe-agent', record: 2, orphanedToolCallId: 'call_ghost', toolName: 'bash' },
      },
    ]);
    expect(context.stats).toStrictEqual({
      recordsRead: 3,
      recordsUsed: 2,
      skipped: { 'orphaned tool result': 1 },
    });
    expect(context.warnings.map((warning) => warning.record)).toStrictEqual([1, 2]);
  });

  it('links parallel native tool calls to results that arrive out of order', () => {
    const { messages, metadata } = importText(fixture('tool-calls-v2.traj.json'));
    expectValidForOpenAI(messages);
    const assistant = messages[2] as AssistantMessage;
    expect(toolCallsOf(assistant).map((call) => [call.toolCallId, call.input])).toStrictEqual([
      ['call_a1', { command: 'ls tests | wc -l' }],
      ['call_b2', { command: 'head -1 README.md' }],
    ]);
    expect(assistant.metadata?.timestamp).toBe('2025-10-20T22:40:00.500Z');
    expect(messages.slice(3, 5).map((message) => toolResultsOf(message)[0]?.toolCallId)).toStrictEqual([
      'call_b2',
      'call_a1',
    ]);
    expect(toolResultsOf(messages[3]!)[0]).toMatchObject({ toolName: 'bash' });
    expect(messages[3]!.metadata?.exitCode).toBe(0);
    expect(metadata.model).toBe('acme/tool-caller');
    expect(metadata.extra?.trajectoryFormat).toBe('mini-swe-agent-1.1');
  });

  it('uses the mswea_bash_command fence of 2.x text mode and a configured action_regex', () => {
    const v2 = JSON.stringify({
      info: { mini_version: '2.0.0' },
      messages: [
        { role: 'user', content: 'task' },
        { role: 'assistant', content: 'Look.\n\n```mswea_bash_command\nls\n```' },
        { role: 'user', content: '<returncode>0</returncode>\n<output>\nREADME\n</output>' },
      ],
      trajectory_format: 'mini-swe-agent-1.1',
    });
    expect(toolCallsOf(importText(v2).messages[1]!)[0]?.input).toStrictEqual({ command: 'ls' });

    const custom = minimal(
      [
        { role: 'user', content: 'task' },
        { role: 'assistant', content: 'Look.\n<cmd>ls -1</cmd>' },
        { role: 'user', content: '<returncode>0</returncode>' },
      ],
      { config: { agent: { action_regex: '<cmd>(.*?)</cmd>' } } },
    );
    const { messages } = importText(custom);
    expect(messages[1]!.content).toStrictEqual([
      { type: 'text', text: 'Look.' },
      { type: 'tool-call', toolCallId: 'call_1', toolName: 'bash', input: { command: 'ls -1' } },
    ]);
    expectValidForOpenAI(messages);
  });

  it('does not take a reply for an action when the agent answered it with a format error', () => {
    const text = minimal(
      [
        { role: 'user', content: 'task' },
        { role: 'assistant', content: 'THOUGHT\n\n```bash\nls\n```' },
        {
          role: 'user',
          content: 'Please always provide EXACTLY ONE action in triple backticks, found 0 actions.',
        },
      ],
      {
        config: {
          agent: {
            format_error_template:
              'Please always provide EXACTLY ONE action in triple backticks, found {{n}}',
          },
        },
      },
    );
    const { messages } = importText(text);
    expect(messages.map((message) => message.role)).toStrictEqual(['user', 'assistant', 'user']);
    expectValidForOpenAI(messages);
  });
});

describe('miniSweAgentImporter.parse: bad input', () => {
  const withBadRecords = minimal([
    { role: 'system', content: 'sys' },
    'not a message',
    { role: 'wizard', content: 'abracadabra' },
    { role: 'user', content: { nested: true } },
    { role: 'user', content: 'task' },
  ]);

  it('skips malformed records with a counted warning', () => {
    const { messages, context } = importText(withBadRecords);
    expect(messages.map((message) => message.content)).toStrictEqual(['sys', 'task']);
    expect(context.stats).toStrictEqual({ recordsRead: 5, recordsUsed: 2, skipped: { malformed: 3 } });
    expect(context.warnings.map((warning) => [warning.record, warning.file])).toStrictEqual([
      [1, 'run.traj.json'],
      [2, 'run.traj.json'],
      [3, 'run.traj.json'],
    ]);
  });

  it('fails on the first malformed record in strict mode, naming file and record', () => {
    expect(() => importText(withBadRecords, { strict: true })).toThrowError(TranscriptImportError);
    try {
      importText(withBadRecords, { strict: true });
    } catch (error) {
      expect(error).toMatchObject({ file: 'run.traj.json', record: 1, code: 'invalid-transcript' });
    }
  });

  it('rejects text that is not JSON, or JSON of another shape, with a TranscriptImportError', () => {
    try {
      importText('{\n  "info": {},\n  "messages": [\n    {"role": "user", \n');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(TranscriptImportError);
      expect(error).toMatchObject({ file: 'run.traj.json', line: expect.any(Number) });
    }
    expect(() => importText('[{"role":"user","content":"hi"}]')).toThrowError(/"messages" array/);
  });

  // Speed on this input is measured in bench/importers.bench.mjs; here, what comes out of it.
  it('reads a multi-megabyte observation and a reply full of unclosed fences', () => {
    const huge = 'x'.repeat(3_000_000);
    const { messages } = importText(miniSweAgentLarge());
    expect(messageText(messages[1]!)).toBe('```bash\n'.repeat(200_000));
    expect(messages.flatMap(toolCallsOf)).toHaveLength(1);
    expect(messageText(messages[4]!)).toBe(`<returncode>0</returncode>\n<output>\n${huge}\n</output>`);
    expectValidForOpenAI(messages);
  });
});

describe('fencedActionFinder', () => {
  const find = fencedActionFinder('bash');

  it('finds blocks the way mini-swe-agent does', () => {
    expect(find('a\n```bash\nls\n```\nb').map((action) => action.command)).toStrictEqual(['ls']);
    expect(find('```bash   \n\n  echo hi  \n```')[0]?.command).toBe('echo hi');
    expect(find('```bashrc\nls\n```')).toStrictEqual([]);
    expect(find('```bash\nls\n``` and ```bash\npwd\n```')).toHaveLength(2);
    expect(find('```bash\nno closing fence')).toStrictEqual([]);
  });

  it('agrees with the equivalent regex on arbitrary text', () => {
    const alphabet = fc.constantFrom('`', '```', '```bash', 'bash', '\n', ' ', '\t', 'x', 'b');
    fc.assert(
      fc.property(
        fc.array(alphabet, { maxLength: 30 }).map((pieces) => pieces.join('')),
        (text) => {
          const expected = [...text.matchAll(/```bash\s*\n(.*?)\n```/gs)].map((match) => ({
            start: match.index,
            end: match.index + match[0].length,
            command: match[1]!.trim(),
          }));
          expect(find(text)).toStrictEqual(expected);
        },
      ),
      { numRuns: propertyRuns(2000) },
    );
  });
});

describe.skipIf(!hasSharedSessions)('miniSweAgentImporter on the shared sessions', () => {
  const sessions = [
    'mini-swe-agent__django__django-16263.traj.json',
    'mini-swe-agent__matplotlib__matplotlib-24177.traj.json',
  ];
  it.each(sessions)('%s imports valid, with every probe fact', (file) => {
    const text = readFileSync(join(sessionsDir, file), 'utf8');
    expect(miniSweAgentImporter.detect({ head: text.slice(0, 65_536), fileName: file })).toBeDefined();
    const { messages, context, metadata } = importText(text, { file });
    const { repairs } = repairMessages(messages, { provider: 'openai' });
    const survival = factSurvival(loadProbes(file), messages);
    const calls = messages.flatMap(toolCallsOf).length;
    console.log(
      `${file}: ${messages.length} messages, ${calls} tool calls, ${repairs.length} repairs, facts ${survival.kept}/${survival.facts}`,
      survival.missing,
    );
    expect(repairs).toStrictEqual([]);
    expect(survival.kept / survival.facts).toBeGreaterThanOrEqual(0.98);
    expect(context.stats.skipped.malformed).toBeUndefined();
    expect(metadata.model).toBe('google/gemini-3-pro-preview');
    expect(metadata.extra?.exitStatus).toBe('Submitted');
  });
});
