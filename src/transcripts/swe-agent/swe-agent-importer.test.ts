import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sweAgentLarge } from '../../../bench/inputs/importer-inputs.mjs';
import { expectValidForOpenAI, importWith } from '../../../test/support/importer-harness.js';
import {
  factSurvival,
  hasSharedSessions,
  loadProbes,
  sessionsDir,
} from '../../../test/support/probe-facts.js';
import { TranscriptImportError } from '../../errors/index.js';
import { messageText, toolCallsOf, toolResultsOf, typedRequest } from '../../messages/content.js';
import type { Message, ToolMessage } from '../../messages/types.js';
import { repairMessages } from '../../messages/validate/index.js';
import type { ImportOptions } from '../transcript-importer.js';
import { splitThoughtAndAction, sweAgentImporter } from './swe-agent-importer.js';

const fixture = (name: string) => readFileSync(join(import.meta.dirname, 'fixtures', name), 'utf8');
const otherFixture = (format: string, name: string) =>
  readFileSync(join(import.meta.dirname, '..', format, 'fixtures', name), 'utf8');

const importText = (text: string, options: ImportOptions = {}) =>
  importWith(sweAgentImporter, text, { file: 'demo.traj', ...options });

const resultText = (message: Message) => {
  const [result] = toolResultsOf(message);
  return result?.output.type === 'text' ? result.output.value : undefined;
};

const trajectory = (history: unknown[], rest: object = {}) =>
  JSON.stringify({ environment: 'swe_main', trajectory: [], history, info: {}, ...rest });

describe('sweAgentImporter.detect', () => {
  const detect = (head: string) => sweAgentImporter.detect({ head });

  it('recognises history + trajectory, also when the trajectory fills the whole head', () => {
    expect(detect(fixture('submitted.traj'))).toContain('"history" and "trajectory"');
    expect(detect(fixture('function-calling-v1.traj'))).toBeDefined();
    const head =
      '{\n  "environment": "swe_main",\n  "trajectory": [\n    {\n      "action": "ls\\n",\n      "observation": "a';
    expect(detect(head)).toContain('action/observation steps');
  });

  it('does not claim other formats', () => {
    expect(detect(otherFixture('mini-swe-agent', 'submitted.traj.json'))).toBeUndefined();
    expect(detect(otherFixture('mini-swe-agent', 'tool-calls-v2.traj.json'))).toBeUndefined();
    expect(detect(otherFixture('openhands', 'text-calls.json'))).toBeUndefined();
    expect(detect(otherFixture('openhands', 'native-completion-log.json'))).toBeUndefined();
    expect(detect('[{"role":"user","content":"\\"history\\": [], \\"trajectory\\": []"}]')).toBeUndefined();
    // SWE-agent's demonstrations are a history alone, with its message types.
    const demonstration = JSON.stringify(
      {
        history: [
          {
            role: 'system',
            content: 'SETTING: You are an autonomous programmer.',
            agent: 'main',
            message_type: 'system_prompt',
          },
          { role: 'user', content: 'Fix missing_colon.py', agent: 'main', message_type: 'observation' },
        ],
      },
      null,
      2,
    );
    expect(detect(demonstration)).toContain('SWE-agent message types');
    expect(detect('{"history": [{"role": "user", "content": "hi"}]}')).toBeUndefined();
    expect(detect('{"messages":[{"role":"user","content":"hi"}],"history":[]}')).toBeUndefined();
  });
});

describe('sweAgentImporter.parse: a v0.x run', () => {
  const { messages, metadata, context, conversation } = importText(fixture('submitted.traj'));

  it('imports the history as the model saw it and counts the trajectory as ignored', () => {
    expect(messages.map((message) => message.role)).toStrictEqual([
      'system',
      'user',
      'assistant',
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
      'tool',
    ]);
    expect(context.stats).toStrictEqual({
      recordsRead: 12,
      recordsUsed: 10,
      skipped: { 'trajectory-duplicate': 2 },
    });
    expectValidForOpenAI(messages);
  });

  it('keeps demonstrations as text, never as calls', () => {
    expect(messages[1]).toMatchObject({ role: 'user', metadata: { demo: true } });
    expect(messages[2]).toMatchObject({
      role: 'assistant',
      content: 'DISCUSSION\nA demo reply the model only read.\n```\nls\n```',
      metadata: { demo: true },
    });
  });

  it('splits discussion and command; the observation keeps its shell prompt', () => {
    expect(messages[4]!.content).toStrictEqual([
      { type: 'text', text: 'Let me find the whistle code first.' },
      { type: 'tool-call', toolCallId: 'call_4', toolName: 'bash', input: { command: 'search_dir "pitch"' } },
    ]);
    expect(resultText(messages[5]!)).toBe(
      'Found 1 matches for "pitch" in /kettle:\n/kettle/whistle.py (1 matches)\n(Open file: n/a)\n(Current directory: /kettle)\nbash-$',
    );
    expect(toolCallsOf(messages[6]!)[0]?.input).toStrictEqual({
      command: 'edit 2:2\nPITCH_HZ = 440  # A4 ♪\nend_of_edit',
    });
    // The template's lead-in is a part before the request: the request is the issue.
    expect(messages[3]!.metadata?.requestPart).toBe(1);
    expect(messageText(typedRequest(messages[3]!))).toMatch(
      /^The whistle plays at the wrong pitch .*440 Hz \(A4\) ♪/,
    );
    // Joined, the parts are the entry as the model read it.
    const task = JSON.parse(fixture('submitted.traj')).history[3].content as string;
    expect((messages[3]!.content as Array<{ text: string }>).map((part) => part.text).join('')).toBe(task);
  });

  it("answers the final submit, whose observation never reached the history, with the trajectory's last step", () => {
    expect(toolCallsOf(messages[8]!)[0]?.input).toStrictEqual({ command: 'submit' });
    expect(messages[9]).toMatchObject({
      role: 'tool',
      content: [
        { toolCallId: 'call_8', output: { type: 'text', value: '\ndiff --git a/whistle.py b/whistle.py\n' } },
      ],
      metadata: { origin: 'swe-agent', trajectoryStep: 2 },
    });
    expect(context.warnings).toEqual([]);
  });

  it("answers a final native tool call (1.x) with the trajectory's last step too", () => {
    const history = [
      { role: 'system', content: 'You are an autonomous programmer.', agent: 'main' },
      { role: 'user', content: 'Fix the latch.', agent: 'main' },
      {
        role: 'assistant',
        content: 'Now I run the tests.',
        action: 'pytest -q',
        agent: 'main',
        tool_calls: [
          {
            id: 'toolu_02',
            type: 'function',
            function: { name: 'bash', arguments: '{"command": "pytest -q"}' },
          },
        ],
      },
    ];
    const steps = [{ action: 'pytest -q', observation: '2 passed in 0.03s' }];
    const { messages, context } = importText(trajectory(history, { trajectory: steps }));
    expect(messages.at(-1)).toMatchObject({
      role: 'tool',
      content: [
        { toolCallId: 'toolu_02', toolName: 'bash', output: { type: 'text', value: '2 passed in 0.03s' } },
      ],
      metadata: { trajectoryStep: 0 },
    });
    expect(context.warnings).toEqual([]);
  });

  it('gives the final call a placeholder result when the last trajectory step ran another command', () => {
    const history = [
      { role: 'system', content: 'You are an autonomous programmer.', agent: 'primary' },
      { role: 'user', content: 'Fix the whistle.', agent: 'primary' },
      { role: 'assistant', content: 'Submitting.\n```\nsubmit\n```', agent: 'primary' },
    ];
    const steps = [{ action: 'ls\n', observation: 'whistle.py\n' }];
    const { messages, context } = importText(trajectory(history, { trajectory: steps }));
    expect(messages.at(-1)).toMatchObject({
      role: 'tool',
      content: [{ output: { type: 'error-text', value: '[no result recorded]' } }],
      metadata: { origin: 'swe-agent', synthetic: true },
    });
    expect(context.warnings).toHaveLength(1);
    expect(context.warnings[0]).toMatchObject({ record: 2, file: 'demo.traj' });
    expect(context.stats.skipped).toStrictEqual({ 'trajectory-duplicate': 1 });
  });

  it('reads the model from replay_config and the run statistics from info', () => {
    expect(conversation.model).toBe('acme-gpt');
    expect(metadata).toStrictEqual({
      format: 'swe-agent',
      model: 'acme-gpt',
      extra: {
        exitStatus: 'submitted',
        environment: 'swe_main',
        modelStats: {
          total_cost: 0.12,
          instance_cost: 0.12,
          tokens_sent: 4000,
          tokens_received: 300,
          api_calls: 3,
        },
      },
    });
  });
});

describe('sweAgentImporter.parse: 1.x function calling', () => {
  const { messages, metadata } = importText(fixture('function-calling-v1.traj'));

  it('takes native tool calls and tool entries (part lists with cache_control) and stays valid', () => {
    expectValidForOpenAI(messages);
    expect(messages[1]!.content).toBe('<uploaded_files>\n/kettle\n</uploaded_files>\nFix the lid latch.');
    expect(toolCallsOf(messages[2]!)).toMatchObject([
      {
        toolCallId: 'toolu_01',
        toolName: 'str_replace_editor',
        input: { command: 'view', path: '/kettle/latch.py' },
      },
    ]);
    expect(toolResultsOf(messages[3]!)[0]).toMatchObject({
      toolCallId: 'toolu_01',
      toolName: 'str_replace_editor',
    });
    expect(resultText(messages[3]!)).toContain('LATCHED = False');
    // The run stopped (exit_cost) with a call in flight.
    expect((messages.at(-1) as ToolMessage).metadata).toMatchObject({ synthetic: true });
  });

  it('reads version, instance id and model from info and replay_config', () => {
    expect(metadata).toMatchObject({
      model: 'acme/claude-like',
      title: 'kettle__kettle-77',
      extra: { agentVersion: '1.1.0', exitStatus: 'exit_cost', instanceId: 'kettle__kettle-77' },
    });
  });
});

describe('sweAgentImporter.parse: edge cases', () => {
  const subroutine = trajectory([
    { role: 'system', content: 'sys', agent: 'primary' },
    { role: 'user', content: 'task', agent: 'primary' },
    { role: 'assistant', content: 'Ask the helper.\n```\nhelp_me\n```', agent: 'primary' },
    { role: 'system', content: 'helper sys', agent: 'helper' },
    { role: 'assistant', content: 'Helper runs.\n```\nls\n```', agent: 'helper' },
    { role: 'user', content: 'README', agent: 'helper' },
    { role: 'user', content: 'helper says hi', agent: 'primary' },
  ]);

  it('leaves sub-agent entries out by default, counted as sidechain', () => {
    const { messages, context } = importText(subroutine);
    expect(context.stats.skipped).toStrictEqual({ sidechain: 3 });
    expect(resultText(messages[3]!)).toBe('helper says hi');
    expectValidForOpenAI(messages);
  });

  it('returns sub-agents as separate conversations on request', () => {
    const { sidechains, messages } = importText(subroutine, { sidechains: 'separate' });
    expect(messages).toHaveLength(4);
    expect(sidechains).toHaveLength(1);
    expect(sidechains![0]!.messages.map((message) => message.role)).toStrictEqual([
      'system',
      'assistant',
      'tool',
    ]);
    expect(sidechains![0]!.messages[1]!.metadata).toMatchObject({ agent: 'helper', record: 4 });
  });

  it('interleaves sub-agents validly on include', () => {
    const { messages } = importText(subroutine, { sidechains: 'include' });
    expectValidForOpenAI(messages);
    expect(messages.filter((message) => message.metadata?.agent === 'helper')).toHaveLength(3);
  });

  it('uses the recorded thought/action when the reply has no fenced block, losing no words', () => {
    const { messages } = importText(
      trajectory([
        { role: 'user', content: 'task' },
        {
          role: 'assistant',
          content: 'I will list files. <command>ls -la</command>',
          thought: 'I will list files. ',
          action: 'ls -la',
        },
        { role: 'user', content: 'total 0' },
        {
          role: 'assistant',
          content: 'Checking: run the tests [pytest]',
          thought: 'Checking:',
          action: 'pytest -q',
        },
        { role: 'user', content: '1 passed' },
        { role: 'assistant', content: 'No fence and no action here.' },
      ]),
    );
    // The markup around the command is the command itself, now a tool call.
    expect(messages[1]!.content).toStrictEqual([
      { type: 'text', text: 'I will list files.' },
      { type: 'tool-call', toolCallId: 'call_1', toolName: 'bash', input: { command: 'ls -la' } },
    ]);
    // Text that is not the command stays, all of it.
    expect(messages[3]!.content).toStrictEqual([
      { type: 'text', text: 'Checking: run the tests [pytest]' },
      { type: 'tool-call', toolCallId: 'call_3', toolName: 'bash', input: { command: 'pytest -q' } },
    ]);
    expect(messages[5]).toMatchObject({ role: 'assistant', content: 'No fence and no action here.' });
    expectValidForOpenAI(messages);
  });

  it('skips malformed entries with a warning, and fails on them in strict mode', () => {
    const text = trajectory([{ role: 'user', content: 'task' }, 42, { role: 'narrator', content: 'x' }]);
    const { messages, context } = importText(text);
    expect(messages).toHaveLength(1);
    expect(context.stats.skipped).toStrictEqual({ malformed: 2 });
    expect(context.warnings.map((warning) => warning.record)).toStrictEqual([1, 2]);
    expect(() => importText(text, { strict: true })).toThrowError(TranscriptImportError);
    expect(() => importText(text, { strict: true })).toThrowError(/demo\.traj, record 1/);
  });

  it('rejects a file without history, and text that is not JSON', () => {
    expect(() => importText('{"trajectory": []}')).toThrowError(/"history" array/);
    expect(() => importText('{"history": [')).toThrowError(TranscriptImportError);
  });

  it('keeps a multi-megabyte observation after 100k fences whole', () => {
    // This input is shared with bench/importers.bench.mjs, which measures its speed; here, what comes out of it.
    const { messages } = importText(sweAgentLarge());
    expect(resultText(messages[2]!)).toBe('y'.repeat(2_000_000));
  });
});

describe('splitThoughtAndAction', () => {
  it('takes the last top-level block, like ThoughtActionParser', () => {
    expect(splitThoughtAndAction('Think.\n```\nls\n```\n')).toStrictEqual({
      thought: 'Think.\n',
      action: 'ls\n',
    });
    expect(splitThoughtAndAction('A\n```python\nx = 1\n```\nB\n```\npython x.py\n```')).toStrictEqual({
      thought: 'A\n```python\nx = 1\n```\nB\n',
      action: 'python x.py\n',
    });
    // A block nested in another belongs to it.
    expect(splitThoughtAndAction('```\nedit 1:1\n```py\ninner\n```\nend_of_edit\n```')?.action).toBe(
      'edit 1:1\n```py\ninner\n```\nend_of_edit\n',
    );
    expect(splitThoughtAndAction('no block')).toBeUndefined();
    expect(splitThoughtAndAction('```\nunclosed')).toBeUndefined();
  });
});

describe.skipIf(!hasSharedSessions)('sweAgentImporter on the shared sessions', () => {
  it('swe-agent-traj__ctf__i_got_id_demo.traj imports valid, with every probe fact', () => {
    const file = 'swe-agent-traj__ctf__i_got_id_demo.traj';
    const text = readFileSync(join(sessionsDir, file), 'utf8');
    expect(sweAgentImporter.detect({ head: text.slice(0, 65_536), fileName: file })).toBeDefined();
    const { messages, context } = importText(text, { file });
    const { repairs } = repairMessages(messages, { provider: 'openai' });
    const survival = factSurvival(loadProbes(file), messages);
    const calls = messages.flatMap(toolCallsOf).length;
    console.log(
      `${file}: ${messages.length} messages, ${calls} tool calls, ${repairs.length} repairs, facts ${survival.kept}/${survival.facts}`,
      survival.missing,
    );
    expect(repairs).toStrictEqual([]);
    expect(calls).toBe(21);
    expect(survival.kept / survival.facts).toBeGreaterThanOrEqual(0.98);
    // The last step's observation answers the final submit.
    expect(context.stats.skipped).toStrictEqual({ 'trajectory-duplicate': 20 });
    expect(messages.at(-1)!.metadata).toMatchObject({ trajectoryStep: 20 });
  });
});
