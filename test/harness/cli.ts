/**
 * Running the CLI from tests, with its saved login in a given config dir. `edgectl…` run a command in-process
 * through `run(argv, io)` (src/cli/main.ts): the same commands, parsing, output and exit codes as the program, without
 * a Node start per command. `edgectlProcess` runs the real program (`node bin/edgectl …`, the built `dist/`) for the
 * tests whose subject is the process itself: the binary's start, exit status, pipes and signals, and `serve`.
 */
import { execFile } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { commandWord, run } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';
import { TEST_MASTER_KEY } from './master-key.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = join(ROOT, 'bin', 'edgectl');
/**
 * The repository itself. ROOT is the test runner's transpiled mirror when the tests run from it; its files other
 * than TypeScript, package.json among them, are links to the repository's. For tools that do not follow the
 * mirror's links (`npm pack` would pack nothing).
 */
export const REPOSITORY = dirname(realpathSync(join(ROOT, 'package.json')));

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Written to standard input (then closed); none: empty input. Never a terminal. */
  input?: string;
  /** Variables added to (or replacing) the test process's environment for this command. */
  env?: Record<string, string>;
  /** Give up after this long (the result then has exit 1 and says so). */
  timeoutMs?: number;
}

const TIMEOUT_MS = 30_000;

/** Runs a CLI command (any but `serve`) without a terminal. Never rejects: the exit code is in the result. */
export function edgectl(configDir: string, ...args: string[]): Promise<Run> {
  return inProcess(configDir, args, {});
}

/** The CLI with `input` on its standard input. */
export function edgectlWithStdin(configDir: string, input: string, ...args: string[]): Promise<Run> {
  return inProcess(configDir, args, { input });
}

/** The CLI with extra environment variables (`$EDGECTL_CONTEXT`, `$COLUMNS`, `$EDGECTL_MFA_CODE`…). */
export function edgectlEnv(configDir: string, env: Record<string, string>, ...args: string[]): Promise<Run> {
  return inProcess(configDir, args, { env });
}

/**
 * The CLI with a longer time limit: offline commands (`--data-dir`) open the whole controller, which takes
 * many seconds on a loaded machine.
 */
export function edgectlSlow(configDir: string, ...args: string[]): Promise<Run> {
  return inProcess(configDir, args, { timeoutMs: 180_000 });
}

/** The CLI with any of the options above (an offline command with extra environment variables, say). */
export function edgectlWith(configDir: string, opts: RunOptions, ...args: string[]): Promise<Run> {
  return inProcess(configDir, args, opts);
}

/**
 * The environment a command sees: the test process's, its config dir, no colours, the test controllers' master
 * key (commands on their PostgreSQL stores open the sealed secrets with it), and any extras.
 */
const envFor = (configDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  EDGECTL_CONFIG_DIR: configDir,
  NO_COLOR: '1',
  EDGECTL_MASTER_KEY: TEST_MASTER_KEY,
  ...extra,
});

/**
 * One command through `run()` with its own io: nothing is shared with the test process or with other commands
 * running at the same time (the CLI reads its environment, input and terminal from `io` only).
 */
async function inProcess(configDir: string, args: string[], opts: RunOptions): Promise<Run> {
  // `serve` would install signal handlers and keep listening inside the test process.
  if (commandWord(args) === 'serve') throw new Error('run `edgectl serve` as a process: edgectlProcess()');
  let stdout = '';
  let stderr = '';
  const line = (t: string) => (t.endsWith('\n') ? t : t + '\n');
  const io: CliIo = {
    out: (t) => void (stdout += line(t)),
    err: (t) => void (stderr += line(t)),
    env: envFor(configDir, opts.env),
    stdin: opts.input ? [opts.input] : [],
    isTTY: false,
  };
  const timeoutMs = opts.timeoutMs ?? TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<number>((resolve) => {
    timer = setTimeout(() => {
      stderr += `(test harness: no exit after ${timeoutMs / 1000}s)\n`;
      resolve(1);
    }, timeoutMs);
  });
  try {
    const code = await Promise.race([
      run(args, io).catch((e: unknown) => {
        // The program would crash with the stack on stderr and exit 1.
        stderr += `${(e as Error)?.stack ?? String(e)}\n`;
        return 1;
      }),
      timedOut,
    ]);
    return { code, stdout, stderr };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs the real program, `node bin/edgectl …`, without a terminal (stdin is a pipe). Never rejects: the exit
 * code is in the result (1 when it was killed at the time limit).
 */
export function edgectlProcess(configDir: string, args: string[], opts: RunOptions = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: ROOT, env: envFor(configDir, opts.env), timeout: opts.timeoutMs ?? TIMEOUT_MS },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
    child.stdin!.end(opts.input ?? '');
  });
}

/** Fails early, with the remedy, when the tests of the real program run before a build. */
export function assertBuilt(): void {
  if (!existsSync(join(ROOT, 'dist', 'cli', 'main.js'))) {
    throw new Error('dist/cli/main.js is missing: run `npm run build` before the CLI tests');
  }
}
