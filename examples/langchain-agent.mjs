// A LangChain agent (createAgent) kept inside an 8,000-token budget by precis: one middleware line.
//
//   npm run build && node examples/langchain-agent.mjs
//
// Without a key the model is LangChain's fakeModel(), scripted to read every source file of this repository,
// one per step. With OPENAI_API_KEY set (and `npm install @langchain/openai`), gpt-4o-mini answers
// (PRECIS_EXAMPLE_MODEL to change it).
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { tool } from '@langchain/core/tools';
import { createAgent } from 'langchain';
import { precisMiddleware } from 'precis/langchain';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const files = (await readdir(join(root, 'src'), { recursive: true }))
  .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
  .map((name) => `src/${name}`)
  .sort()
  .slice(0, 60);

const readFileTool = tool(
  async ({ path }) => {
    const full = join(root, path);
    if (relative(root, full).startsWith('..')) return 'Error: outside the repository';
    return readFile(full, 'utf8').catch((error) => `Error: ${error.message}`);
  },
  {
    name: 'read_file',
    description: 'Read a file of the repository (path relative to the root).',
    schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
);

async function chooseModel() {
  if (process.env.OPENAI_API_KEY === undefined) {
    const model = fakeModel();
    // respondWithTools would echo the whole prompt as the message text: script plain tool-call messages instead.
    for (const [index, path] of files.entries())
      model.respond(
        new AIMessage({
          content: '',
          tool_calls: [{ type: 'tool_call', name: 'read_file', args: { path }, id: `call-${index}` }],
        }),
      );
    return model.respond(new AIMessage(`Read ${files.length} files; the engine lives in src/engine.`));
  }
  const { ChatOpenAI } = await import('@langchain/openai').catch(() => {
    throw new Error('OPENAI_API_KEY is set: install @langchain/openai to run against OpenAI');
  });
  return new ChatOpenAI({ model: process.env.PRECIS_EXAMPLE_MODEL ?? 'gpt-4o-mini' });
}

const agent = createAgent({
  model: await chooseModel(),
  tools: [readFileTool],
  systemPrompt:
    'You are a code reviewer. Read the files you need with read_file, then answer in one sentence.',
  middleware: [
    precisMiddleware({
      budget: 8000,
      onEvent: (event) => {
        if (event.type === 'compaction-end' && event.applied)
          console.log(`  compacted (${event.reason}): ${event.tokensBefore} -> ${event.tokensAfter} tokens`);
      },
    }),
  ],
});

const result = await agent.invoke(
  {
    messages: [
      new HumanMessage(
        `Read these files one by one and say where the compaction engine lives:\n${files.join('\n')}`,
      ),
    ],
  },
  { recursionLimit: 4 * files.length + 10 },
);
console.log(
  `\n${result.messages.length} messages in the agent's state. Answer: ${result.messages.at(-1).text}`,
);
