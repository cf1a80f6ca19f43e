/**
 * The edgectl program: `serve` runs the controller; every other command is the admin CLI.
 * `run(argv, io)` returns the exit code so tests can run commands in-process.
 */
import { Command, CommanderError } from 'commander';
import { VERSION } from '../version.js';
import { CliError, processIo, type CliIo } from './io.js';
import { checkContextName } from './session-store.js';
import { closeOffline, registerOffline } from './offline.js';

type Register = (program: Command, io: CliIo) => void;

/**
 * Each module of top-level commands, with the commands it registers. A command line loads only the module of
 * the command it runs (start-up: `edgectl version` imports no resource definitions, tables or prompts); help,
 * completion and anything not found here load them all. test/cli/cli-startup.test.ts checks the names.
 */
export const COMMAND_MODULES: readonly {
  names: readonly string[];
  /** Some of its nouns have sub-collections (relations.ts), attached after it is registered. */
  relations?: true;
  /** Nouns of other modules it adds sub-commands to (registered after them). */
  extends?: readonly string[];
  load(): Promise<Register>;
}[] = [
  { names: ['serve'], load: async () => (await import('./commands/serve.js')).registerServe },
  { names: ['cluster'], load: async () => (await import('./commands/cluster.js')).registerCluster },
  { names: ['db'], load: async () => (await import('./commands/db.js')).registerDb },
  { names: ['pki'], load: async () => (await import('./commands/pki.js')).registerPki },
  { names: ['login'], load: async () => (await import('./commands/login.js')).registerLogin },
  { names: ['logout'], load: async () => (await import('./commands/logout.js')).registerLogout },
  { names: ['mfa'], load: async () => (await import('./commands/mfa.js')).registerMfa },
  { names: ['enroll'], load: async () => (await import('./commands/enroll.js')).registerEnroll },
  { names: ['version'], load: async () => (await import('./commands/version.js')).registerVersion },
  { names: ['identity'], relations: true, load: async () => (await import('./commands/identity.js')).registerIdentity },
  { names: ['auth-policy'], load: async () => (await import('./commands/auth-policy.js')).registerAuthPolicy },
  { names: ['authenticator'], load: async () => (await import('./commands/authenticator.js')).registerAuthenticator },
  { names: ['events'], load: async () => (await import('./commands/events.js')).registerEvents },
  { names: ['api-session'], load: async () => (await import('./commands/api-session.js')).registerApiSession },
  { names: ['enrollment'], load: async () => (await import('./commands/enrollment.js')).registerEnrollment },
  { names: ['ca'], load: async () => (await import('./commands/ca.js')).registerCa },
  { names: ['jwt-signer'], load: async () => (await import('./commands/jwt-signer.js')).registerJwtSigner },
  {
    names: ['controller', 'controller-setting'],
    load: async () => (await import('./commands/controller.js')).registerControllers,
  },
  {
    names: ['config-type', 'config', 'service', 'service-policy', 'edge-router-policy', 'service-edge-router-policy'],
    relations: true,
    load: async () => (await import('./commands/network.js')).registerNetwork,
  },
  {
    names: ['posture-check'],
    relations: true,
    extends: ['identity'],
    load: async () => (await import('./commands/posture-check.js')).registerPostureChecks,
  },
  {
    names: ['edge-router', 'router'],
    relations: true,
    load: async () => (await import('./commands/router.js')).registerRouters,
  },
  { names: ['policy-advice'], load: async () => (await import('./commands/policy-advice.js')).registerPolicyAdvice },
  { names: ['context'], load: async () => (await import('./commands/context.js')).registerContext },
  { names: ['whoami'], load: async () => (await import('./commands/whoami.js')).registerWhoami },
  { names: ['client'], load: async () => (await import('./commands/client.js')).registerClient },
  // Completion describes every command: it needs them all.
  { names: [], load: async () => (await import('./commands/completion.js')).registerCompletion },
];

/** The top-level command a command line names (after the program's own options), if any. */
export function commandWord(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--context') i++;
    else if (!a.startsWith('-')) return a;
  }
  return undefined;
}

/** The program with the commands `argv` may run: its own command's module only, or every one (help, unknown). */
export async function buildProgram(io: CliIo, argv?: readonly string[]): Promise<Command> {
  const program = new Command('edgectl')
    .description('edge controller for a zero-trust overlay network, and its admin CLI')
    .version(VERSION, '-V, --version', 'print the CLI version')
    .option(
      '--context <name>',
      'use this saved login for this command (default: $EDGECTL_CONTEXT, else the current context)',
    )
    .exitOverride()
    // Help is wrapped to io's terminal width, as commander would to process.stdout's.
    .configureOutput({
      writeOut: (s) => io.out(s),
      writeErr: (s) => io.err(s),
      getOutHelpWidth: () => io.columns ?? 80,
    })
    // A usage error prints its one line and where to look, not the whole help (subcommands inherit this).
    .showHelpAfterError('(add --help for usage)');
  // `--context` wins over $EDGECTL_CONTEXT; commands read the context from the environment they are given.
  program.hook('preAction', () => {
    const context = program.opts<{ context?: string }>().context;
    if (context !== undefined) io.env = { ...io.env, EDGECTL_CONTEXT: checkContextName(context) };
  });
  const word = argv && commandWord(argv);
  const named = word === undefined ? [] : COMMAND_MODULES.filter((m) => m.names.includes(word));
  // The command's own module and those adding sub-commands to it, in table order; none found: all of them.
  const modules =
    named.length === 0
      ? COMMAND_MODULES
      : COMMAND_MODULES.filter((m) => named.includes(m) || m.extends?.includes(word!));
  const partial = modules !== COMMAND_MODULES;
  for (const register of await Promise.all(modules.map((m) => m.load()))) register(program, io);
  // Last: sub-collections attach to the nouns registered above (loaded only when such a noun is there).
  if (modules.some((m) => m.relations)) {
    const { registerRelations } = await import('./relations.js');
    registerRelations(program, io, undefined, partial);
  }
  // After every command exists: `--data-dir` goes on each admin command.
  registerOffline(program, io);
  return program;
}

export async function run(argv: string[], io: CliIo = processIo()): Promise<number> {
  const program = await buildProgram(io, argv);
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
