/** Running the built CLI (`node bin/edgectl …`) from tests, with its saved login in a given config dir. */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = join(ROOT, 'bin', 'edgectl');

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI; stdin is a pipe, so the CLI sees no terminal. Never rejects: the exit code is in the result. */
export function edgectl(configDir: string, ...args: string[]): Promise<Run> {
  return edgectlWithStdin(configDir, '', ...args);
}

/** The CLI with `input` written to its standard input (then closed). */
export function edgectlWithStdin(configDir: string, input: string, ...args: string[]): Promise<Run> {
  return runCli(configDir, input, 30_000, args);
}

/**
 * The CLI with a longer time limit: offline commands (`--data-dir`) build the whole controller in-process, which
 * takes many seconds on a loaded machine.
 */
export function edgectlSlow(configDir: string, ...args: string[]): Promise<Run> {
  return runCli(configDir, '', 180_000, args);
}

function runCli(configDir: string, input: string, timeout: number, args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: ROOT, env: { ...process.env, EDGECTL_CONFIG_DIR: configDir, NO_COLOR: '1' }, timeout },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
    child.stdin!.end(input);
  });
}

/** Fails early, with the remedy, when the CLI tests run before a build. */
export function assertBuilt(): void {
  if (!existsSync(join(ROOT, 'dist', 'cli', 'main.js'))) {
    throw new Error('dist/cli/main.js is missing: run `npm run build` before the CLI tests');
  }
}
