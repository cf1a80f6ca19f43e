/** The CLI's input and output, injectable so commands can run in-process in tests. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
  /** Standard input, read whole by `-f -`, `--password-stdin` and the like (cli/stdin.ts). */
  stdin: CliStdin;
  /** Whether a person is at a terminal (stdin and stdout): prompts and confirmations only then. */
  isTTY: boolean;
  /** The terminal's width, when stdout is a terminal. */
  columns?: number;
  /** Set by `--data-dir` on an admin command: work on this stopped controller's store (cli/offline.ts). */
  dataDir?: string;
  /** The offline transport opened by this command, closed when the command ends. */
  offline?: { close(): Promise<void> };
}

/**
 * What the CLI needs of standard input: its chunks (a stream, or text given in-process), and whether it is a
 * terminal (then it is not read).
 */
export type CliStdin = (AsyncIterable<Buffer | string> | Iterable<Buffer | string>) & { isTTY?: boolean };

export const processIo = (): CliIo => ({
  out: (t) => process.stdout.write(t.endsWith('\n') ? t : t + '\n'),
  err: (t) => process.stderr.write(t.endsWith('\n') ? t : t + '\n'),
  env: process.env,
  stdin: process.stdin,
  isTTY: Boolean(process.stdin.isTTY && process.stdout.isTTY),
  columns: process.stdout.isTTY ? process.stdout.columns : undefined,
});

/** Thrown by commands to end with a message and exit code (no stack trace for expected failures). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}
