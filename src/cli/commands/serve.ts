/** `edgectl serve`: runs the controller until SIGINT or SIGTERM, then shuts down cleanly (exit 0). */
import type { Command } from 'commander';
import type { AdminCredentials } from '../../daemon/daemon.js';
import { CliError, type CliIo } from '../io.js';

async function adminFromEnvOrPrompt(io: CliIo): Promise<AdminCredentials | undefined> {
  const { EDGECTL_ADMIN_USERNAME: username, EDGECTL_ADMIN_PASSWORD: password } = io.env;
  if (username && password) return { username, password };
  if ((username || password) && !io.isTTY) {
    throw new Error('set both EDGECTL_ADMIN_USERNAME and EDGECTL_ADMIN_PASSWORD, or neither (a password is then generated)');
  }
  if (!io.isTTY) return undefined;
  const { input, password: secret } = await import('@inquirer/prompts');
  const u = await input({ message: 'Default admin username', default: username ?? 'admin', validate: (v) => (v.length >= 4 && v.length <= 100) || '4 to 100 characters' });
  const p = await secret({ message: 'Default admin password', mask: '*', validate: (v) => (v.length >= 5 && v.length <= 100) || '5 to 100 characters' });
  return { username: u, password: p };
}

export function registerServe(program: Command, io: CliIo): void {
  program
    .command('serve')
    .description('run the edge controller (Client and Management APIs over HTTPS)')
    .option('--data-dir <dir>', 'data directory (env EDGECTL_DATA_DIR; default ./edgectl-data)')
    .option('--listen <host:port>', 'listen address (env EDGECTL_LISTEN; default 127.0.0.1:1280)')
    .option('--config <file>', 'YAML config file (env EDGECTL_CONFIG)')
    .option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent (config log.level)')
    .action(async (flags: { dataDir?: string; listen?: string; config?: string; logLevel?: string }) => {
      let cfg;
      try {
        // Loaded here, not at the top (as the daemon below): the YAML parser only matters to `serve`.
        const { loadConfig } = await import('../../daemon/config.js');
        cfg = loadConfig({ flags, env: io.env });
      } catch (e) {
        throw new CliError(`edgectl serve: ${(e as Error).message}`, 2);
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
        throw new CliError(`edgectl serve: ${(e as Error).message}${detail}`, 1);
      }
      const running = daemon;
      await new Promise<void>((resolve) => {
        onSignal = (signal: string) => {
          running.log.info({ signal }, 'shutting down');
          running.close().then(resolve, resolve);
        };
        if (stopRequested) onSignal(stopRequested);
      });
    });
}
