import type { CliIo } from './cli-io.js';
import { runCli } from './run-cli.js';

/** An in-memory `CliIo` for tests: what the CLI writes collects in `out` and `err`. */
export function memoryIo(env: Record<string, string | undefined> = {}): CliIo & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    isTerminal: false,
    env,
    stdout: (text: string) => {
      io.out += text;
    },
    stderr: (text: string) => {
      io.err += text;
    },
  };
  return io;
}

/** Runs the CLI on `argv` with `env` as its environment; the exit code and what it wrote. */
export async function cliWithEnv(env: Record<string, string | undefined>, ...argv: string[]) {
  const io = memoryIo(env);
  const exitCode = await runCli(argv, io);
  return { exitCode, stdout: io.out, stderr: io.err };
}

/** Runs the CLI on `argv` with an empty environment. */
export async function cli(...argv: string[]) {
  return cliWithEnv({}, ...argv);
}
