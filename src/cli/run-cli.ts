import { createRequire } from 'node:module';
import { isPrecisError, type PrecisErrorCode } from '../errors/index.js';
import type { CliIo } from './cli-io.js';

interface Command {
  summary: string;
  usage: string;
  /** Loaded on demand so `precis --help` never pays for the tokenizer or converters. */
  load(): Promise<{ run(argv: string[], io: CliIo): Promise<number> }>;
}

const commands: Record<string, Command> = {
  count: {
    summary: 'count tokens: total, by role, by tool, largest messages',
    usage:
      'precis count <file> [--from F] [--strict] [--sidechains exclude|include|separate] [--provider openai|anthropic] [--model M] [--top N] [--json]',
    load: () => import('./commands/count.js'),
  },
  inspect: {
    summary: 'where the tokens go: by role, tool, kind, largest outputs, reasoning and duplicate share',
    usage: 'precis inspect <file> [--from F] [--strict] [--sidechains M] [--provider P] [--top N] [--json]',
    load: () => import('./commands/inspect.js'),
  },
  convert: {
    summary: 'convert between precis / AI SDK, OpenAI and Anthropic formats, repaired for the target',
    usage:
      'precis convert <file> --to openai|anthropic|ai-sdk|precis [--from F] [--out FILE] [--reasoning field|drop]',
    load: () => import('./commands/convert.js'),
  },
  compress: {
    summary: 'compress a conversation to a token budget, archiving what was removed',
    usage:
      'precis compress <file> --budget <tokens|N%> [--to openai|anthropic|ai-sdk|precis] [--keep-recent N] [--recent-share S] [--strategy a,b,...] [--llm SPEC] [--llm-timeout MS] [--report] [--store PATH | --no-store] [--from F] [--strict]',
    load: () => import('./commands/compress.js'),
  },
  expand: {
    summary: 'print an original that compress archived, by its handle',
    usage: 'precis expand <handle> [--store PATH] [--json]',
    load: () => import('./commands/expand.js'),
  },
  eval: {
    summary: 'probe-based evaluation: which facts survive compression, next to plain truncation',
    usage:
      'precis eval <file...> (--probes DIR | --generate) --budget N%[,M%] [--strategies a,b] [--points 0.5,1] [--judge SPEC] [--concurrency N] [--cache FILE] [--json] [--markdown FILE] [--report FILE.html] [--min-pass X] [--from F] [--strict]',
    load: () => import('./commands/eval.js'),
  },
};

/** Exit codes by error code: usage errors 2, bad data 65 (EX_DATAERR), unreadable input 66 (EX_NOINPUT). */
const exitCodes: Partial<Record<PrecisErrorCode, number>> = {
  'invalid-argument': 2,
  'unknown-model': 2,
  'invalid-json': 65,
  'invalid-message': 65,
  'invalid-conversation': 65,
  'invalid-transcript': 65,
  'unsupported-format': 65,
  'io-error': 66,
};

/** The package version, read from package.json (two levels up from both src/cli and dist/cli). */
export const version: string = createRequire(import.meta.url)('../../package.json').version;

function help(): string {
  const width = Math.max(...Object.keys(commands).map((name) => name.length));
  const lines = Object.entries(commands).map(
    ([name, command]) => `  ${name.padEnd(width)}  ${command.summary}`,
  );
  return [
    'precis: keep long-running LLM agents inside their context window without making them forget',
    '',
    'Usage: precis <command> [options]',
    '',
    'Commands:',
    ...lines,
    '',
    'Options: --help (also after a command), --version, --debug (stack traces on errors)',
    'Input: agent transcripts (Claude Code, mini-swe-agent, SWE-agent, OpenHands, SpecStory, aider, gptme, Codex)',
    'or OpenAI Chat / Anthropic Messages / precis (AI SDK ModelMessage) JSON and JSONL; the format is detected.',
    '',
  ].join('\n');
}

/** Runs the CLI and returns the exit code. Never calls `process.exit`, so it can run inside tests. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const debug = argv.includes('--debug');
  const args = argv.filter((arg) => arg !== '--debug');
  const [name, ...rest] = args;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout(help());
    return 0;
  }
  if (name === '--version' || name === '-v') {
    io.stdout(`${version}\n`);
    return 0;
  }
  const command = commands[name];
  if (command === undefined) {
    io.stderr(`invalid-argument: unknown command "${name}"\n\n${help()}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout(`Usage: ${command.usage}\n\n${command.summary}\n`);
    return 0;
  }
  try {
    const module = await command.load();
    return await module.run(rest, io);
  } catch (error) {
    if (isPrecisError(error)) {
      io.stderr(`${error.code}: ${error.message}\n`);
      if (debug && error.stack) io.stderr(`${error.stack}\n`);
      return exitCodes[error.code] ?? 1;
    }
    io.stderr(`internal-error: ${error instanceof Error ? error.message : String(error)}\n`);
    if (debug && error instanceof Error && error.stack) io.stderr(`${error.stack}\n`);
    return 70;
  }
}
