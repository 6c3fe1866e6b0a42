// ContextManager overhead in an agent loop: a simulated 500-step tool-using session (each step appends the
// model's tool call and the tool's result, then asks for the messages to send), timed per step. Steps that ran a
// compaction are reported apart: the target is a median below 2 ms per step outside compaction events.
// Run `npm run build` first: this reads dist/. BENCH_STEPS changes the session length.
import { createContextManager } from '../dist/engine/context-manager.js';
import { assistantMessage, toolCall, toolMessage, toolResult } from '../dist/testing/index.js';

const steps = Number(process.env.BENCH_STEPS ?? 500);
const contextWindow = 128_000;

let state = 42;
const random = () => {
  state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
  return state / 2 ** 32;
};
const words = Array.from({ length: 400 }, (_, index) => `w${index.toString(36)}`);
const line = (step, index) =>
  `src/pkg${step % 23}/file${index % 11}.ts:${index}: ${Array.from({ length: 8 }, () => words[Math.floor(random() * words.length)]).join(' ')}`;
const output = (step, lines) => Array.from({ length: lines }, (_, index) => line(step, index)).join('\n');

/** One step: a tool call of one of four kinds and its result (50 to 8,000 characters; a few much larger). */
function step(index) {
  const id = `call_${index}`;
  const kind = index % 4;
  const call =
    kind === 0
      ? toolCall('Bash', { command: `npm test -- --run ${index}` }, id)
      : kind === 1
        ? toolCall('Read', { file_path: `src/pkg${index % 23}/file${index % 11}.ts` }, id)
        : kind === 2
          ? toolCall(
              'Edit',
              { file_path: `src/pkg${index % 7}/edit.ts`, old_string: `a${index}`, new_string: `b${index}` },
              id,
            )
          : toolCall('Grep', { pattern: `TODO ${index}`, path: 'src' }, id);
  const lines = kind === 2 ? 0 : index % 50 === 7 ? 600 : 5 + Math.floor(random() * 80);
  return [
    assistantMessage([{ type: 'text', text: `Step ${index}: checking the next part.` }, call]),
    toolMessage(toolResult(call, lines === 0 ? 'The file was updated.' : output(index, lines))),
  ];
}

const session = Array.from({ length: steps }, (_, index) => step(index));
const context = createContextManager({
  contextWindow,
  outputReserve: 8000,
  messages: [
    {
      role: 'system',
      content: 'You are a coding agent. Use the tools to inspect and change the repository.',
    },
    { role: 'user', content: 'Fix the flaky retry test in src/retry.ts and keep the public API unchanged.' },
  ],
  rehydration: { readFile: (path) => `// current contents of ${path}\nexport const value = 1;\n` },
});
const compactions = [];
context.on('compaction-end', (event) => compactions.push(event));

const plain = [];
const compacting = [];
for (let index = 0; index < steps; index++) {
  const before = compactions.length;
  const start = performance.now();
  context.append(session[index]);
  await context.messages();
  const ms = performance.now() - start;
  (compactions.length === before ? plain : compacting).push(ms);
}

const sorted = (values) => [...values].sort((left, right) => left - right);
const quantile = (values, q) => {
  const ordered = sorted(values);
  return ordered.length === 0
    ? Number.NaN
    : ordered[Math.min(ordered.length - 1, Math.floor(q * ordered.length))];
};
const stats = context.stats();
console.log(
  `${steps} steps, window ${contextWindow}: ${stats.compactions} compactions (${stats.skippedCompactions} skipped), ` +
    `${stats.messageCount} messages and ${stats.totalTokens} tokens held at the end (${(stats.usageRatio * 100).toFixed(1)}% of the effective window)`,
);
console.log(
  `per step outside compaction (${plain.length} steps): median ${quantile(plain, 0.5).toFixed(3)} ms, ` +
    `p95 ${quantile(plain, 0.95).toFixed(3)} ms, max ${quantile(plain, 1).toFixed(3)} ms (target: median < 2 ms)`,
);
const durations = compactions.map((event) => event.durationMs);
if (durations.length > 0)
  console.log(
    `compaction events (${durations.length}): median ${quantile(durations, 0.5).toFixed(1)} ms, ` +
      `p95 ${quantile(durations, 0.95).toFixed(1)} ms, max ${quantile(durations, 1).toFixed(1)} ms; ` +
      `freed ${compactions.map((event) => event.tokensBefore - event.tokensAfter).join(', ')} tokens`,
  );
if (compactions.length > 0)
  console.log(
    `prefix a provider cache can reuse after each compaction: ${compactions
      .map((event) => `${event.prefixKeptMessages}/${event.messagesBefore}`)
      .join(', ')} messages`,
  );

// The LangChain middleware over the same session: LangGraph hands `beforeModel` the agent's whole history before
// every model call, as the same message objects. Its per-step cost should not grow with the history: only the
// messages it has not seen are converted and hashed. The window is large enough that nothing is compacted, so
// the history grows to its full length.
const { precisMiddleware, toLangChainMessages } = await import('../dist/integrations/langchain/index.js');
const { HumanMessage } = await import('@langchain/core/messages');
const middleware = precisMiddleware({ contextWindow: 100_000_000, outputReserve: 8000 });
const beforeModel =
  typeof middleware.beforeModel === 'function' ? middleware.beforeModel : middleware.beforeModel.hook;
let history = [new HumanMessage({ id: 'task', content: 'Fix the flaky retry test in src/retry.ts.' })];
const perStep = [];
const historyLengths = [];
for (let index = 0; index < steps; index++) {
  // LangGraph gives every message an id when it enters the state.
  const added = session[index].map((message, position) => ({ ...message, id: `step-${index}-${position}` }));
  history = [...history, ...toLangChainMessages(added)];
  const start = performance.now();
  await beforeModel({ messages: history }, {});
  perStep.push(performance.now() - start);
  historyLengths.push(history.length);
}
const around = (step) => perStep.slice(Math.max(0, step - 10), step + 10);
const early = Math.min(50, steps - 1);
const late = Math.max(early, steps - 10);
console.log(
  `LangChain middleware, beforeModel per step: median ${quantile(around(early), 0.5).toFixed(3)} ms around step ${early} ` +
    `(history of ${historyLengths[early]} messages), ${quantile(around(late), 0.5).toFixed(3)} ms around step ${late} ` +
    `(${historyLengths[late]} messages)`,
);
