// The large and pathological transcripts the importers are checked on: the unit tests read them at scale 1
// (what comes out), bench/importers.bench.mjs times them at scales 1 and 2 (how fast). Plain JavaScript so
// that the bench runs it under bare Node; the types are in importer-inputs.d.mts.

export function aiderLarge(scale = 1) {
  const parts = [];
  for (let session = 0; session < 300 * scale; session++) {
    parts.push(
      `# aider chat started at 2024-01-01 00:${String(session % 60).padStart(2, '0')}:00`,
      '',
      '> Aider v0.1  ',
      '',
    );
    for (let turn = 0; turn < 10; turn++) {
      parts.push(
        `#### change ${turn}  `,
        '> 1 prompt tokens, 1 completion tokens, $0 cost  ',
        '',
        'Here:',
        '',
      );
      parts.push(
        'f.py',
        '```python',
        '<<<<<<< SEARCH',
        `a = ${turn}`,
        '=======',
        `a = ${turn + 1}`,
        '>>>>>>> REPLACE',
        '```',
        '',
      );
      parts.push('> Applied edit to f.py  ', '');
    }
  }
  parts.push('#### dump  ', '', '```', 'y'.repeat(1_500_000 * scale), '```', '');
  return parts.join('\n');
}

export const aiderUnclosedBlock =
  '```\n<<<<<<< SEARCH\n<think>\n► **THINKING**\n<thinking-content-ab>\n> half\n';

export const aiderPathological = (scale = 1) => `#### go  \n\n${aiderUnclosedBlock.repeat(15_000 * scale)}`;

export function claudeCodeRecord(fields) {
  return JSON.stringify({
    parentUuid: null,
    isSidechain: false,
    userType: 'external',
    cwd: '/tmp/project',
    sessionId: 'session-1',
    version: '1.0.0',
    gitBranch: 'main',
    timestamp: '2025-01-01T00:00:00.000Z',
    ...fields,
  });
}

export function claudeCodeLarge(scale = 1) {
  const lines = [claudeCodeRecord({ type: 'user', uuid: 'u0', message: { role: 'user', content: 'start' } })];
  for (let index = 1; index <= 5000 * scale; index++) {
    lines.push(
      claudeCodeRecord({
        type: 'assistant',
        uuid: `a${index}`,
        message: {
          id: `msg_${index}`,
          type: 'message',
          role: 'assistant',
          model: 'claude-test',
          content: [
            { type: 'tool_use', id: `toolu_${index}`, name: 'Read', input: { file_path: `/f${index}` } },
          ],
        },
      }),
      claudeCodeRecord({
        type: 'user',
        uuid: `r${index}`,
        message: {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: `toolu_${index}`,
              content: index === 1 ? 'y'.repeat(2_000_000 * scale) : 'ok',
            },
          ],
        },
      }),
    );
  }
  return lines.join('\n');
}

export function codexLarge(scale = 1) {
  const envelope = (payload) =>
    JSON.stringify({ timestamp: '2025-10-03T10:00:00.000Z', type: 'response_item', payload });
  const lines = [
    JSON.stringify({ timestamp: '2025-10-03T10:00:00.000Z', type: 'session_meta', payload: { id: 'big' } }),
  ];
  for (let turn = 0; turn < 3000 * scale; turn++) {
    lines.push(
      envelope({ type: 'message', role: 'user', content: [{ type: 'input_text', text: `step ${turn}` }] }),
      envelope({
        type: 'function_call',
        name: 'shell',
        arguments: '{"command":["ls"]}',
        call_id: `c${turn}`,
      }),
      envelope({ type: 'function_call_output', call_id: `c${turn}`, output: 'a.txt\nb.txt' }),
    );
  }
  lines.push(
    envelope({
      type: 'function_call',
      name: 'shell',
      arguments: '{"command":["cat","big"]}',
      call_id: 'big',
    }),
    envelope({
      type: 'function_call_output',
      call_id: 'big',
      output: JSON.stringify({ output: 'x'.repeat(2_000_000 * scale) }),
    }),
  );
  return lines.join('\n');
}

export function gptmeLarge(scale = 1) {
  const line = (fields) => JSON.stringify({ timestamp: '2025-01-01T10:00:00.000000', ...fields });
  const lines = [line({ role: 'user', content: 'dump' })];
  for (let turn = 0; turn < 2000 * scale; turn++) {
    lines.push(line({ role: 'assistant', content: `step ${turn}\n\`\`\`shell\necho ${turn}\n\`\`\`` }));
    lines.push(line({ role: 'system', content: `Ran command: \`echo ${turn}\`` }));
  }
  lines.push(line({ role: 'assistant', content: '```text\nsome output line\n```\n'.repeat(50_000 * scale) }));
  return lines.join('\n');
}

export function miniSweAgentLarge(scale = 1) {
  const huge = 'x'.repeat(3_000_000 * scale);
  const messages = [
    { role: 'user', content: 'task' },
    { role: 'assistant', content: '```bash\n'.repeat(200_000 * scale) },
    { role: 'user', content: 'Please always provide EXACTLY ONE action' },
    { role: 'assistant', content: `THOUGHT ${huge}\n\n\`\`\`bash\ncat big\n\`\`\`` },
    { role: 'user', content: `<returncode>0</returncode>\n<output>\n${huge}\n</output>` },
  ];
  return JSON.stringify({ info: {}, messages, trajectory_format: 'mini-swe-agent-1' });
}

export function openHandsLarge(scale = 1) {
  const big = 'z\n'.repeat(1_000_000 * scale);
  const messages = [
    { role: 'system', content: 'You are OpenHands agent, a helpful AI assistant.' },
    { role: 'user', content: 'task' },
    {
      role: 'assistant',
      content: `Write it.\n<function=str_replace_editor>\n<parameter=command>create</parameter>\n<parameter=file_text>${big}</parameter>\n</function>`,
    },
    { role: 'user', content: `EXECUTION RESULT of [str_replace_editor]:\n${big}` },
    { role: 'user', content: 'next' },
    {
      role: 'assistant',
      content: `<function=f>\n${'<parameter=a>'.repeat(200_000 * scale)}</function>${'</parameter>'.repeat(1000 * scale)}`,
    },
  ];
  return JSON.stringify({ messages });
}

export function providerJsonLarge(scale = 1) {
  const messages = [];
  for (let turn = 0; turn < 5000 * scale; turn++) {
    messages.push(
      { role: 'user', content: `question ${turn}` },
      { role: 'assistant', content: `answer ${turn}` },
    );
  }
  messages.push({ role: 'user', content: 'y'.repeat(2_000_000 * scale) });
  return JSON.stringify({ model: 'gpt-4o', messages });
}

export function specStoryLarge(scale = 1) {
  const segments = ['_**User**_', '', 'go', '', '---', '', '_**Assistant**_', ''];
  for (let index = 0; index < 4000 * scale; index++) {
    segments.push(
      `Step ${index}`,
      '',
      '---',
      '',
      '```bash',
      `echo ${index}`,
      '```',
      '',
      '```',
      `out ${index}`,
      '```',
      '',
      '---',
      '',
    );
  }
  segments.push('```', 'x'.repeat(1_500_000 * scale), '```');
  return segments.join('\n');
}

export const specStoryUnclosedUnit = '```\n<think>\n<details>\n<tool-use x>\n';

export const specStoryPathological = (scale = 1) =>
  `_**User**_\n\nhi\n\n---\n\n_**Assistant**_\n\n${specStoryUnclosedUnit.repeat(20_000 * scale)}`;

export function sweAgentLarge(scale = 1) {
  const history = [
    { role: 'user', content: 'task' },
    { role: 'assistant', content: `${'```\n'.repeat(100_000 * scale)}then\n\`\`\`\ncat big\n\`\`\`` },
    { role: 'user', content: 'y'.repeat(2_000_000 * scale) },
  ];
  return JSON.stringify({ environment: 'swe_main', trajectory: [], history, info: {} });
}
