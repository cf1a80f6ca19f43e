/**
 * The edgectl program: `serve` runs the controller; every other command is the admin CLI.
 * `run(argv, io)` returns the exit code so tests can run commands in-process.
 */
import { Command, CommanderError } from 'commander';
import { VERSION } from '../version.js';
import { CliError, processIo, type CliIo } from './io.js';
import { registerServe } from './commands/serve.js';

export function buildProgram(io: CliIo): Command {
  const program = new Command('edgectl')
    .description('edge controller for a zero-trust overlay network, and its admin CLI')
    .version(VERSION, '-V, --cli-version', 'print the CLI version')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) })
    .showHelpAfterError();
  registerServe(program, io);
  return program;
}

export async function run(argv: string[], io: CliIo = processIo()): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : e.exitCode || 2;
    if (e instanceof CliError) {
      io.err(e.message);
      return e.exitCode;
    }
    io.err(`edgectl: ${(e as Error).message ?? String(e)}`);
    return 1;
  }
}

export async function main(): Promise<void> {
  const code = await run(process.argv.slice(2));
  process.exitCode = code;
}
