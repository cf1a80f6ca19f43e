/** `edgectl serve`: runs the controller until SIGINT or SIGTERM, then shuts down cleanly (exit 0). */
import type { Command } from 'commander';
import type { AdminCredentials } from '../../daemon/daemon.js';
import { CliError, type CliIo } from '../io.js';

async function adminFromEnvOrPrompt(io: CliIo): Promise<AdminCredentials | undefined> {
  const { EDGECTL_ADMIN_USERNAME: username, EDGECTL_ADMIN_PASSWORD: password } = io.env;
  if (username && password) return { username, password };
  if ((username || password) && !io.isTTY) {
    throw new Error(
      'set both EDGECTL_ADMIN_USERNAME and EDGECTL_ADMIN_PASSWORD, or neither (a password is then generated)',
    );
  }
  if (!io.isTTY) return undefined;
  const { input, password: secret } = await import('@inquirer/prompts');
  const u = await input({
    message: 'Default admin username',
    default: username ?? 'admin',
    validate: (v) => (v.length >= 4 && v.length <= 100) || '4 to 100 characters',
  });
  const p = await secret({
    message: 'Default admin password',
    mask: '*',
    validate: (v) => (v.length >= 5 && v.length <= 100) || '5 to 100 characters',
  });
  return { username: u, password: p };
}

/**
 * The environment variables `serve` reads. Kept here rather than imported from the daemon's config module, which
 * `--help` must not load; test/daemon/serve-loud.test.ts checks that it names every variable the sources read.
 */
const SERVE_ENV: ReadonlyArray<readonly [string, string]> = [
  ['EDGECTL_CONFIG', 'YAML config file (like --config)'],
  ['EDGECTL_DATA_DIR', 'data directory (like --data-dir)'],
  ['EDGECTL_LISTEN', 'listen address HOST:PORT (like --listen)'],
  ['EDGECTL_ADVERTISE', 'address clients are given, HOST[:PORT] (like --advertise)'],
  ['EDGECTL_LOG_LEVEL', 'log level (like --log-level)'],
  ['EDGECTL_DB_URL', 'PostgreSQL store postgres://… (like --db)'],
  ['EDGECTL_MASTER_KEY', 'master key of the secrets in a PostgreSQL store, 32+ characters (config store.masterKey)'],
  ['EDGECTL_ADMIN_USERNAME', 'default admin username, read on the first start only'],
  ['EDGECTL_ADMIN_PASSWORD', 'default admin password, read on the first start only'],
];
const SERVE_ENV_HELP = SERVE_ENV.map(([name, meaning]) => `  ${name.padEnd(24)}${meaning}`).join('\n');

export function registerServe(program: Command, io: CliIo): void {
  program
    .command('serve')
    .description('run the edge controller (Client and Management APIs over HTTPS)')
    .option('--data-dir <dir>', 'data directory (env EDGECTL_DATA_DIR; default ./edgectl-data)')
    .option('--listen <host:port>', 'listen address (env EDGECTL_LISTEN; default 127.0.0.1:1280)')
    .option(
      '--advertise <host[:port]>',
      'address clients are given, needed when listening on 0.0.0.0 or :: (env EDGECTL_ADVERTISE; config edge.api.address)',
    )
    .option('--config <file>', 'YAML config file (env EDGECTL_CONFIG)')
    .option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent (env EDGECTL_LOG_LEVEL; config log.level)')
    .option(
      '--db <url>',
      'PostgreSQL store postgres://user@host:port/db instead of the SQLite file in the data dir (env EDGECTL_DB_URL; config store.url)',
    )
    .addHelpText(
      'after',
      () =>
        '\nExamples:\n' +
        '  edgectl serve                                   # SQLite in ./edgectl-data, https://127.0.0.1:1280\n' +
        '  edgectl serve --listen 0.0.0.0:1280 --advertise ctrl.example.com\n' +
        '  EDGECTL_DB_URL=postgres://edgectl@db:5432/edgectl edgectl serve --data-dir /var/lib/edgectl\n' +
        `\nEnvironment (flags win over it; it wins over the config file):\n${SERVE_ENV_HELP}`,
    )
    .action(
      async (flags: {
        dataDir?: string;
        listen?: string;
        advertise?: string;
        config?: string;
        logLevel?: string;
        db?: string;
      }) => {
        let cfg;
        try {
          // Loaded here, not at the top (as the daemon below): the YAML parser only matters to `serve`.
          const { loadConfig } = await import('../../daemon/config.js');
          cfg = loadConfig({ flags, env: io.env });
        } catch (e) {
          throw new CliError(`error: ${(e as Error).message}`, 2);
        }
        // Signals are taken from the start: one that arrives while the controller starts stops it once it is up.
        let stopRequested: string | undefined;
        let onSignal: (signal: string) => void = (signal) => (stopRequested = signal);
        process.once('SIGINT', () => onSignal('SIGINT'));
        process.once('SIGTERM', () => onSignal('SIGTERM'));
        let daemon;
        try {
          // Loaded here, not at the top: the admin commands share this program and need neither Fastify nor SQLite.
          const { startDaemon } = await import('../../daemon/daemon.js');
          daemon = await startDaemon(cfg, { adminCredentials: () => adminFromEnvOrPrompt(io) });
        } catch (e) {
          const cause = (e as { errorCause?: { field?: string; reason?: string } }).errorCause;
          const detail = cause?.field ? ` (${cause.field}: ${cause.reason})` : '';
          throw new CliError(`error: ${(e as Error).message}${detail}`, 1);
        }
        const running = daemon;
        await new Promise<void>((resolve) => {
          onSignal = (signal: string) => {
            running.log.info({ signal }, 'shutting down');
            running.close().then(resolve, resolve);
          };
          if (stopRequested) onSignal(stopRequested);
        });
      },
    );
}
