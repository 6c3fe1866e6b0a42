/** Where the CLI writes: data to `stdout`, logs, warnings and progress to `stderr`. Injectable for tests. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Whether stdout is a terminal (tables get colour only there, and only without NO_COLOR). */
  isTerminal: boolean;
  /** Whether stderr is a terminal (progress bars are drawn only there). @default false */
  stderrIsTerminal?: boolean;
  env: Record<string, string | undefined>;
}

export function processIo(): CliIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    isTerminal: process.stdout.isTTY === true,
    stderrIsTerminal: process.stderr.isTTY === true,
    env: process.env,
  };
}
