/**
 * `edgectl db snapshot|restore|migrate|info`: the store of a stopped controller (README.md, "Offline"), each
 * holding the data dir's lock while it runs. `db snapshot` without `--data-dir` or `--db` asks the running
 * controller (`POST /database/snapshot`). A PostgreSQL store (`--db URL`, or `$EDGECTL_DB_URL`/`store.url` as
 * `serve` reads them) is worked on in the database, without the lock (store-maintenance.ts). The daemon's
 * modules are loaded inside the actions only (CLI start-up stays light).
 */
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { requireApi, type Api } from '../api.js';
import { CliError, type CliIo } from '../io.js';
import { formatOf, printAnswerAs } from '../output.js';

const DATA_DIR_DEFAULT = 'data directory (env EDGECTL_DATA_DIR; default ./edgectl-data)';

/** `--db URL` on the `db` commands: as `serve --db`, a PostgreSQL store instead of the data dir's SQLite file. */
export const DB_URL_HELP =
  'work offline on this PostgreSQL store postgres://user@host:port/db (env EDGECTL_DB_URL or config store.url with --data-dir)';

type Where = { dataDir?: string; db?: string };

/**
 * The data dir and store of an offline-only command, as `serve` would take them: `--data-dir`, else
 * `$EDGECTL_DATA_DIR`, else `./edgectl-data`; `--db`, else `$EDGECTL_DB_URL`, else the config's `store.url`
 * (a PostgreSQL store), else the data dir's SQLite file.
 */
async function whereOf(io: CliIo, flags: Where): Promise<{ dataDir: string; storeUrl?: string }> {
  const { offlineSettings } = await import('../../daemon/offline.js');
  const cfg = offlineSettings(
    {
      dataDir: resolve(flags.dataDir ?? io.env.EDGECTL_DATA_DIR ?? './edgectl-data'),
      ...(flags.db !== undefined && { db: flags.db }),
    },
    io.env,
  );
  return { dataDir: cfg.dataDir, ...(cfg.storeUrl !== undefined && { storeUrl: cfg.storeUrl }) };
}

async function maintenance() {
  return import('../../daemon/store-maintenance.js');
}

/** Runs an offline operation, turning its refusals into the CLI's one-line errors (exit 1). */
async function offline<T>(fn: () => Promise<T>): Promise<T> {
  const { OfflineRefused } = await import('../../daemon/offline.js');
  try {
    return await fn();
  } catch (e) {
    if (e instanceof OfflineRefused) throw new CliError(e.message, 1);
    if (e instanceof CliError) throw e;
    throw new CliError(`error: ${(e as Error).message}`, 1);
  }
}

const formatOption = () =>
  new Option('-o, --output <format>', 'text (default), json or yaml').choices(['text', 'json', 'yaml']);

type Format = { output?: 'text' | 'json' | 'yaml' };

async function print(io: CliIo, opts: Format, data: unknown, text: () => void): Promise<void> {
  if (opts.output === 'json' || opts.output === 'yaml') await printAnswerAs(io, opts.output, { data });
  else text();
}

export function registerDbOffline(db: Command, io: CliIo): void {
  db.command('snapshot')
    .description(
      "back up the store: with --data-dir, SQLite's online backup of a stopped controller's store; with --db (or a " +
        "PostgreSQL store's data dir), pg_dump of the database; else the running controller's snapshot",
    )
    .option(
      '--data-dir <dir>',
      "the stopped controller's data dir (without it or --db: ask the controller you are logged in to)",
    )
    .option('--db <url>', DB_URL_HELP)
    .option(
      '--out <file>',
      'where the offline snapshot goes (default: <store>-YYYYMMDD-HHMMSS beside the store; edgectl-postgres-YYYYMMDD-HHMMSS.dump in the data dir for PostgreSQL)',
    )
    .addOption(formatOption())
    .action(async (opts: Where & { out?: string } & Format) => {
      if (opts.dataDir === undefined && opts.db === undefined) {
        if (opts.out !== undefined)
          throw new CliError('error: --out needs --data-dir: the controller writes its snapshots beside its store', 2);
        const api = requireApi(io);
        if (opts.output === 'json' || opts.output === 'yaml')
          await printAnswerAs(io, opts.output, (await api.call('POST', '/database/snapshot', {})) ?? {});
        else await onlineSnapshot(api, io);
        return;
      }
      const { snapshotOffline } = await maintenance();
      const file = await offline(async () => {
        const where = await whereOf(io, opts);
        return snapshotOffline(where.dataDir, opts.out, where);
      });
      await print(io, opts, { path: file }, () => io.out(`snapshot written to ${file}`));
    });

  db.command('restore')
    .description(
      "replace a stopped controller's store with a snapshot, after checking it is an edgectl store this version knows; the replaced store is kept beside it",
    )
    .argument('<file>', 'the snapshot to restore')
    .option('--data-dir <dir>', DATA_DIR_DEFAULT)
    .option('--db <url>', 'a PostgreSQL store: refused, pg_restore restores its pg_dump archives')
    .addOption(formatOption())
    .action(async (file: string, opts: Where & Format) => {
      const { restoreOffline } = await maintenance();
      const r = await offline(async () => {
        const where = await whereOf(io, opts);
        return restoreOffline(where.dataDir, file, where);
      });
      await print(
        io,
        opts,
        {
          store: r.store,
          replaced: r.replaced ?? null,
          schemaVersion: r.schema.applied.at(-1) ?? null,
          pendingMigrations: r.schema.pending,
        },
        () => {
          io.out(`restored ${resolve(file)} into ${r.store} (schema ${r.schema.applied.at(-1) ?? 'none'})`);
          if (r.replaced) io.out(`the replaced store is kept as ${r.replaced}`);
          if (r.schema.pending.length > 0)
            io.out(
              `it needs ${r.schema.pending.length} migration(s): \`edgectl db migrate\` or the controller's next start applies them`,
            );
        },
      );
    });

  db.command('migrate')
    .description(
      "apply the pending migrations to a stopped controller's store, or to a PostgreSQL store (--db; once, however many run it at once), and name them",
    )
    .option('--data-dir <dir>', DATA_DIR_DEFAULT)
    .option('--db <url>', DB_URL_HELP)
    .addOption(formatOption())
    .action(async (opts: Where & Format) => {
      const { migrateOffline } = await maintenance();
      const r = await offline(async () => {
        const where = await whereOf(io, opts);
        return migrateOffline(where.dataDir, where);
      });
      await print(io, opts, r, () => {
        if (r.applied.length === 0) io.out(`${r.store} is up to date (schema ${r.schema})`);
        else for (const name of r.applied) io.out(`applied ${name}`);
      });
    });

  db.command('info')
    .description(
      "show a stopped controller's store or a PostgreSQL store (--db): engine and location, schema version, entity counts, sizes",
    )
    .option('--data-dir <dir>', DATA_DIR_DEFAULT)
    .option('--db <url>', DB_URL_HELP)
    .addOption(formatOption())
    .option('-j, --json', 'same as -o json')
    .action(async (opts: Where & { json?: boolean } & Format) => {
      // `-j` with another `-o` is the usual usage error.
      const output = opts.json ? (formatOf({ json: true, output: opts.output }) as 'json') : opts.output;
      const { storeInfoOffline } = await maintenance();
      const info = await offline(async () => {
        const where = await whereOf(io, opts);
        return storeInfoOffline(where.dataDir, where);
      });
      await print(io, { output }, info, () => {
        const rows: [string, string][] = [
          ['kind', info.kind],
          ['store', info.store],
          ['schema', `${info.schemaVersion ?? 'none'} (${info.migrations.length} migrations)`],
        ];
        if (info.pendingMigrations.length > 0) rows.push(['pending', info.pendingMigrations.join(', ')]);
        if (info.unknownMigrations.length > 0) rows.push(['unknown', info.unknownMigrations.join(', ')]);
        rows.push(['size', `${info.sizes.db} bytes`]);
        if (info.sizes.wal !== undefined) rows.push(['wal size', `${info.sizes.wal} bytes`]);
        for (const [name, n] of Object.entries(info.counts)) rows.push([name, String(n)]);
        const width = Math.max(...rows.map(([k]) => k.length));
        for (const [k, v] of rows) io.out(`${k.padEnd(width)}  ${v}`);
      });
    });
}

/** `POST /database/snapshot`: prints where the controller wrote it. */
export async function onlineSnapshot(api: Api, io: CliIo): Promise<void> {
  const res = await api.call<{ data?: { path?: string } }>('POST', '/database/snapshot');
  const path = res.data?.path;
  io.out(path ? `snapshot written on the controller's host: ${path}` : 'snapshot written');
}
