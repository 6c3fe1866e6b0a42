// A hand-written OpenAI Chat Completions agent loop kept inside its window by precis' ContextManager:
// append what happens, send `await manager.messages()`, recover once from a context-length error.
//
//   npm run build && node examples/openai-loop.mjs
//
// Without a key the model is precis/testing's scripted LLM client, which reads every source file of this
// repository, one per step. With OPENAI_API_KEY set, gpt-4o-mini answers (PRECIS_EXAMPLE_MODEL to change it).
// The window is set to 12,000 tokens so that compaction shows within a few dozen steps.
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createContextManager,
  createMemoryArchive,
  executeExpandTool,
  expandTool,
  fromOpenAI,
  toOpenAI,
} from 'precis';
import { createScriptedLlmClient } from 'precis/testing';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const files = (await readdir(join(root, 'src'), { recursive: true }))
  .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
  .map((name) => `src/${name}`)
  .sort()
  .slice(0, 60);

const readFileTool = {
  name: 'read_file',
  description: 'Read a file of the repository (path relative to the root).',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};

async function readRepositoryFile(path) {
  const full = join(root, String(path));
  if (relative(root, full).startsWith('..')) return 'Error: outside the repository';
  return readFile(full, 'utf8').catch((error) => `Error: ${error.message}`);
}

const archive = createMemoryArchive();
const manager = createContextManager({
  model: process.env.PRECIS_EXAMPLE_MODEL ?? 'gpt-4o-mini',
  contextWindow: 12_000,
  outputReserve: 1_000,
  archive,
  tools: [readFileTool, expandTool],
  messages: [
    {
      role: 'system',
      content: 'You are a code reviewer. Read the files you need, then answer in one sentence.',
    },
    {
      role: 'user',
      content: `Read these files one by one and say where the compaction engine lives:\n${files.join('\n')}`,
    },
  ],
});
manager.on('compaction-end', (event) => {
  if (event.applied)
    console.log(`  compacted (${event.reason}): ${event.tokensBefore} -> ${event.tokensAfter} tokens`);
});

/** Without a key: a scripted client whose answers say which tool to call; turned into OpenAI messages below. */
const scripted = createScriptedLlmClient({
  script: [
    ...files.map((path) => () => JSON.stringify({ tool: 'read_file', path })),
    `Read ${files.length} files; the engine lives in src/engine.`,
  ],
});

/** One model call: the OpenAI assistant message for the conversation. */
async function callModel(messages, step) {
  const { messages: openaiMessages, tools } = toOpenAI({ messages, tools: [readFileTool, expandTool] });
  if (process.env.OPENAI_API_KEY === undefined) {
    const { text } = await scripted.complete({ messages });
    const action = text.startsWith('{') ? JSON.parse(text) : undefined;
    if (action === undefined) return { role: 'assistant', content: text };
    const call = {
      id: `call_${step}`,
      type: 'function',
      function: { name: action.tool, arguments: JSON.stringify({ path: action.path }) },
    };
    return { role: 'assistant', content: null, tool_calls: [call] };
  }
  const response = await fetch('https://api.openai.com/v1/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${process.env.OPENAI_API_KEY}` },
    body: JSON.stringify({
      model: process.env.PRECIS_EXAMPLE_MODEL ?? 'gpt-4o-mini',
      messages: openaiMessages,
      tools,
    }),
  });
  const body = await response.json();
  // The error body as it came: recoverFromOverflow recognises OpenAI's context-length error in it.
  if (!response.ok)
    throw Object.assign(new Error(body.error?.message ?? response.statusText), {
      status: response.status,
      error: body.error,
    });
  return body.choices[0].message;
}

for (let step = 0; step < files.length + 5; step++) {
  let reply;
  try {
    reply = await callModel(await manager.messages(), step);
  } catch (error) {
    const recovery = await manager.recoverFromOverflow(error);
    if (!recovery.recovered) throw error;
    reply = await callModel(recovery.messages, step);
  }
  const [assistant] = fromOpenAI([reply]).messages;
  manager.append(assistant);
  const calls = reply.tool_calls ?? [];
  if (calls.length === 0) {
    console.log(`\n${step + 1} steps. Answer: ${reply.content}`);
    break;
  }
  for (const call of calls) {
    const input = JSON.parse(call.function.arguments || '{}');
    console.log(`step ${step + 1}: ${call.function.name}(${call.function.arguments})`);
    const value =
      call.function.name === expandTool.name
        ? executeExpandTool(archive, input)
        : await readRepositoryFile(input.path);
    manager.append({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: call.id,
          toolName: call.function.name,
          output: { type: 'text', value },
        },
      ],
    });
  }
}
const stats = manager.stats();
console.log(
  `${stats.compactions} compactions, ${stats.totalTokens} tokens held of a ${stats.contextWindow}-token window.`,
);
