// An AI SDK agent loop kept inside an 8,000-token budget by precis: one middleware line.
//
//   npm run build && node examples/ai-sdk-agent.mjs
//
// Without a key the model is the AI SDK's MockLanguageModelV3, scripted to read every source file of this
// repository, one per step. With AI_GATEWAY_API_KEY set, a real model answers through the AI SDK gateway
// (PRECIS_EXAMPLE_MODEL, default openai/gpt-4o-mini).
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gateway, generateText, jsonSchema, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { precisMiddleware } from 'precis/ai-sdk';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const files = (await readdir(join(root, 'src'), { recursive: true }))
  .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
  .map((name) => `src/${name}`)
  .sort()
  .slice(0, 60);

const readFileTool = tool({
  description: 'Read a file of the repository (path relative to the root).',
  inputSchema: jsonSchema({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }),
  execute: async ({ path }) => {
    const full = join(root, path);
    if (relative(root, full).startsWith('..')) return 'Error: outside the repository';
    return readFile(full, 'utf8').catch((error) => `Error: ${error.message}`);
  },
});

/** Reads one file per step, then writes a one-line report. */
function scriptedModel() {
  let step = 0;
  const usage = {
    inputTokens: { total: 0, noCache: 0, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 0, text: 0, reasoning: undefined },
  };
  return new MockLanguageModelV3({
    modelId: 'scripted',
    doGenerate: async () => {
      const path = files[step++];
      if (path === undefined)
        return {
          content: [{ type: 'text', text: `Read ${files.length} files; the engine lives in src/engine.` }],
          finishReason: { unified: 'stop', raw: undefined },
          usage,
          warnings: [],
        };
      return {
        content: [
          {
            type: 'tool-call',
            toolCallId: `call-${step}`,
            toolName: 'read_file',
            input: JSON.stringify({ path }),
          },
        ],
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
}

const real = process.env.AI_GATEWAY_API_KEY !== undefined;
const inner = real ? gateway(process.env.PRECIS_EXAMPLE_MODEL ?? 'openai/gpt-4o-mini') : scriptedModel();

const precis = precisMiddleware({
  budget: 8000,
  onEvent: (event) => {
    if (event.type === 'compaction-end' && event.applied)
      console.log(`  compacted (${event.reason}): ${event.tokensBefore} -> ${event.tokensAfter} tokens`);
  },
});
const model = wrapLanguageModel({ model: inner, middleware: precis });

const result = await generateText({
  model,
  system: 'You are a code reviewer. Read the files you need with read_file, then answer in one sentence.',
  prompt: `Read these files one by one and say where the compaction engine lives:\n${files.join('\n')}`,
  tools: { read_file: readFileTool, ...precis.tools },
  stopWhen: stepCountIs(files.length + 2),
  onStepFinish: (step) => {
    const calls = step.toolCalls.map((call) => `${call.toolName}(${JSON.stringify(call.input)})`).join(', ');
    console.log(`step: ${calls || step.text}`);
  },
});
console.log(`\n${result.steps.length} steps. Answer: ${result.text}`);
