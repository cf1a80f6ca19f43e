/**
 * `edgectl pki export|import`: moves a controller's PKI and token key from its data dir into a PostgreSQL store
 * shared by several controllers (docs/decisions.md, "Shared controller secrets"). Both run in-process, without a
 * controller: export on a stopped controller's data dir, import straight into the database. The file is sealed
 * under the master key of the controllers it is for (`EDGECTL_MASTER_KEY`, or `store.masterKey` /
 * `store.masterKeyFile` in the config file), which both commands read as `serve` does. The daemon's modules are
 * loaded inside the actions only (CLI start-up stays light).
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { CliError, type CliIo } from '../io.js';

const CONFIG_HELP = 'config file with store.masterKey / store.masterKeyFile (and store.url) (env EDGECTL_CONFIG)';

/** The master key and store URL as `serve` would read them; a usage error (exit 2) when they cannot be read. */
async function settings(io: CliIo, flags: { config?: string; db?: string }) {
  const { storeSettings, MASTER_KEY_SOURCES } = await import('../../daemon/config.js');
  let found;
  try {
    found = storeSettings({ flags, env: io.env });
  } catch (e) {
    throw new CliError(`error: ${(e as Error).message}`, 2);
  }
  return { ...found, sources: MASTER_KEY_SOURCES };
}

/** Runs a transfer, turning its refusals into the CLI's one-line errors (exit 1). */
async function transfer<T>(fn: () => Promise<T>): Promise<T> {
  const { OfflineRefused } = await import('../../daemon/offline.js');
  try {
    return await fn();
  } catch (e) {
    if (e instanceof OfflineRefused) throw new CliError(e.message, 1);
    throw new CliError(`error: ${(e as Error).message}`, 1);
  }
}

export function registerPki(program: Command, io: CliIo): void {
  const pki = program
    .command('pki')
    .description(
      "move a controller's PKI and token key into a PostgreSQL store shared by several controllers (export, then import)",
    );

  pki
    .command('export')
    .description(
      "write a stopped controller's PKI (CA keys and certificates, server key and certificate) and token key to a file of mode 0600, sealed under the master key",
    )
    .requiredOption('--out <file>', 'the file to write (never replaced)')
    .option('--data-dir <dir>', 'data directory (env EDGECTL_DATA_DIR; default ./edgectl-data)')
    .option('--config <file>', CONFIG_HELP)
    .action(async (opts: { out: string; dataDir?: string; config?: string }) => {
      const { masterKey, sources } = await settings(io, { config: opts.config });
      if (masterKey === undefined)
        throw new CliError(
          `error: the export is sealed under the master key of the controllers it is for: give it with ${sources}`,
          2,
        );
      const dataDir = resolve(opts.dataDir ?? io.env.EDGECTL_DATA_DIR ?? './edgectl-data');
      const { exportPki } = await import('../../daemon/pki-transfer.js');
      const r = await transfer(() => exportPki(dataDir, opts.out, masterKey));
      io.out(`exported the PKI (root CA ${r.rootFingerprint}) and token key of ${dataDir} to ${r.file}`);
      io.out(`the file is sealed under the master key; import it with: edgectl pki import ${r.file} --db URL`);
    });

  pki
    .command('import')
    .description(
      'store the PKI and token key of an export file in a PostgreSQL store, for the controllers started on it with the same master key',
    )
    .argument('<file>', 'a file written by `edgectl pki export`')
    .option('--db <url>', 'the PostgreSQL store postgres://user@host:port/db (env EDGECTL_DB_URL; config store.url)')
    .option('--config <file>', CONFIG_HELP)
    .option('--replace', 'replace the PKI and token key the store holds already (stop every controller on it first)')
    .action(async (file: string, opts: { db?: string; config?: string; replace?: boolean }) => {
      const { storeUrl, masterKey, sources } = await settings(io, opts);
      if (storeUrl === undefined)
        throw new CliError('error: name the PostgreSQL store: --db URL, EDGECTL_DB_URL or store.url in the config', 2);
      if (masterKey === undefined) throw new CliError(`error: give the master key with ${sources}`, 2);
      const { importPki } = await import('../../daemon/pki-transfer.js');
      const r = await transfer(() => importPki(file, storeUrl, masterKey, { replace: opts.replace === true }));
      if (r.unchanged) {
        io.out(`${r.store} holds this PKI (root CA ${r.rootFingerprint}) and token key already: nothing to do`);
        return;
      }
      io.out(
        `imported the PKI (root CA ${r.rootFingerprint}) and token key into ${r.store}${r.replaced ? ', replacing what it held' : ''}`,
      );
      io.out('start every controller on it with the same master key; they use this PKI and token key');
    });
}
