/**
 * The edgectl program: `serve` runs the controller; every other command is the admin CLI.
 * `run(argv, io)` returns the exit code so tests can run commands in-process.
 */
import { Command, CommanderError } from 'commander';
import { VERSION } from '../version.js';
import { CliError, processIo, type CliIo } from './io.js';
import { registerServe } from './commands/serve.js';
import { registerDb } from './commands/db.js';
import { registerLogin } from './commands/login.js';
import { registerLogout } from './commands/logout.js';
import { registerMfa } from './commands/mfa.js';
import { registerVersion } from './commands/version.js';
import { registerIdentity } from './commands/identity.js';
import { registerAuthPolicy } from './commands/auth-policy.js';
import { registerAuthenticator } from './commands/authenticator.js';
import { registerApiSession } from './commands/api-session.js';
import { registerEnroll } from './commands/enroll.js';
import { registerEnrollment } from './commands/enrollment.js';
import { registerCa } from './commands/ca.js';
import { registerNetwork } from './commands/network.js';
import { registerPostureChecks } from './commands/posture-check.js';
import { registerRouters } from './commands/router.js';
import { registerPolicyAdvice } from './commands/policy-advice.js';
import { registerRelations } from './relations.js';
import { registerContext } from './commands/context.js';
import { registerWhoami } from './commands/whoami.js';
import { registerClient } from './commands/client.js';
import { registerCompletion } from './commands/completion.js';
import { registerJwtSigner } from './commands/jwt-signer.js';
import { checkContextName } from './session-store.js';
import { closeOffline, registerOffline } from './offline.js';

export function buildProgram(io: CliIo): Command {
  const program = new Command('edgectl')
    .description('edge controller for a zero-trust overlay network, and its admin CLI')
    .version(VERSION, '-V, --version', 'print the CLI version')
    .option(
      '--context <name>',
      'use this saved login for this command (default: $EDGECTL_CONTEXT, else the current context)',
    )
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) })
    // A usage error prints its one line and where to look, not the whole help (subcommands inherit this).
    .showHelpAfterError('(add --help for usage)');
  // `--context` wins over $EDGECTL_CONTEXT; commands read the context from the environment they are given.
  program.hook('preAction', () => {
    const context = program.opts<{ context?: string }>().context;
    if (context !== undefined) io.env = { ...io.env, EDGECTL_CONTEXT: checkContextName(context) };
  });
  registerServe(program, io);
  registerDb(program, io);
  registerLogin(program, io);
  registerLogout(program, io);
  registerMfa(program, io);
  registerEnroll(program, io);
  registerVersion(program, io);
  registerIdentity(program, io);
  registerAuthPolicy(program, io);
  registerAuthenticator(program, io);
  registerApiSession(program, io);
  registerEnrollment(program, io);
  registerCa(program, io);
  registerJwtSigner(program, io);
  registerNetwork(program, io);
  registerPostureChecks(program, io);
  registerRouters(program, io);
  registerPolicyAdvice(program, io);
  registerContext(program, io);
  registerWhoami(program, io);
  registerClient(program, io);
  registerCompletion(program, io);
  // Last: sub-collections attach to the nouns registered above.
  registerRelations(program, io);
  // After every command exists: `--data-dir` goes on each admin command.
  registerOffline(program, io);
  return program;
}

export async function run(argv: string[], io: CliIo = processIo()): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (e) {
    // Help and version exit 0; every other commander error (unknown option, missing argument, bad value,
    // a noun without a verb) is a usage error: exit 2, as API failures are 1 (README.md, The admin CLI).
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    if (e instanceof CliError) {
      io.err(e.message);
      return e.exitCode;
    }
    // Ctrl-C or Ctrl-D at a prompt (@inquirer/prompts): a cancellation, not a crash.
    if ((e as Error)?.name === 'ExitPromptError') {
      io.err('cancelled');
      return 130;
    }
    io.err(`edgectl: ${(e as Error).message ?? String(e)}`);
    return 1;
  } finally {
    await closeOffline(io);
  }
}

export async function main(): Promise<void> {
  // A reader that stops early (`edgectl … | head`) is not an error of the command: end quietly.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
  const code = await run(process.argv.slice(2));
  process.exitCode = code;
}
