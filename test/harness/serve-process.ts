/**
 * `edgectl serve` as an operator runs it: the built program in a child process, started and waited for until
 * it logs that it listens (fixture: no assertions). The child is tracked by the calling file's scratch (its
 * clean-up kills what is left).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { BIN } from './cli.js';

export interface Served {
  child: ChildProcess;
  url: string;
  output: () => string;
  exit: Promise<number | null>;
}

export async function serveProcess(
  args: string[],
  env: Record<string, string>,
  track: (c: ChildProcess) => ChildProcess,
): Promise<Served> {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], {
    env: { ...process.env, EDGECTL_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  track(child);
  return listening(child, 60_000);
}

/**
 * Waits until a `serve` child (the program or the one-file binary) logs that it listens; a start that takes
 * longer than `timeoutMs` is killed. Generous limits: a first start creates a PKI and hashes a password.
 */
export async function listening(child: ChildProcess, timeoutMs: number): Promise<Served> {
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (out += c));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not start:\n${out}`));
    }, timeoutMs);
    const check = () => {
      const line = out.split('\n').find((l) => l.includes('"edgectl controller listening"'));
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line).url);
      }
    };
    child.stdout!.on('data', check);
    void exit.then(() => {
      clearTimeout(timer);
      reject(new Error(`serve exited early:\n${out}`));
    });
  });
  return { child, url, output: () => out, exit };
}
