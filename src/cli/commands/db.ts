/**
 * `edgectl db …`: database operations. Online (the logged-in controller's Management API) by default; with
 * `--data-dir DIR` on a stopped controller's store. Which of the two a
 * command uses is decided in one place, {@link dbTarget}.
 *
 * - `check-integrity [--fix]`: online, starts the controller's data-integrity scan (or fix), waits for it with
 *   a progress line on a terminal and prints the findings; exit 1 while any finding remains unfixed. Offline,
 *   the file check (SQLite's integrity_check, the tables and columns against the migrations), then the same
 *   scan (or fix) by the stopped controller's own database operations in-process, without a session: nothing
 *   is written before the scan (docs/decisions.md, "Offline CLI"). On a PostgreSQL store (`--db URL`, or
 *   `$EDGECTL_DB_URL`/`store.url` with `--data-dir`) there is no file to check: the database must be reachable
 *   and migrated, then the same scan runs.
 * - `snapshot`, `restore`, `migrate`, `info`: db-offline.ts.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { ApiError, requireApi, type Api } from '../api.js';
import { CliError, type CliIo } from '../io.js';
import type { IntegrityDetails } from '../../model/integrity/run.js';
import { DB_URL_HELP, registerDbOffline } from './db-offline.js';

/**
 * Where a `db` command runs: on a data dir's store (its SQLite file, or the PostgreSQL database `db` names), or
 * through the logged-in controller.
 */
export type DbTarget = { offline: true; dataDir: string; db?: string } | { offline: false; api: Api };

export interface DbFlags {
  dataDir?: string;
  db?: string;
}

/**
 * The one place that chooses the transport of a `db` command: offline with `--data-dir` or `--db` (never from
 * the environment alone), the data dir then defaulting as `serve`'s does.
 */
export function dbTarget(flags: DbFlags, io: CliIo): DbTarget {
  if (flags.dataDir !== undefined || flags.db !== undefined)
    return {
      offline: true,
      dataDir: resolve(flags.dataDir ?? io.env.EDGECTL_DATA_DIR ?? './edgectl-data'),
      ...(flags.db !== undefined && { db: flags.db }),
    };
  return { offline: false, api: requireApi(io) };
}

const dataDirOption = (cmd: Command) =>
  cmd
    .option('--data-dir <dir>', "work on this data dir's store files instead of the logged-in controller")
    .option('--db <url>', DB_URL_HELP);

export function registerDb(program: Command, io: CliIo): void {
  const db = program
    .command('db')
    .description("database operations: through the logged-in controller, or on a data dir's store (--data-dir)");
  registerCheckIntegrity(db, io);
  registerDbOffline(db, io);
}

interface CheckFlags extends DbFlags {
  fix?: boolean;
  json?: boolean;
}

export function registerCheckIntegrity(db: Command, io: CliIo): Command {
  return dataDirOption(
    db
      .command('check-integrity')
      .description(
        "check the store: online, the controller's data-integrity scan (derived tables, orphans, system records, " +
          "schema objects, SQLite's own checks); with --data-dir, the file's structure and schema, then the same scan on the stopped controller's store; " +
          'with --db, the same scan on that PostgreSQL store',
      ),
  )
    .option('--fix', 'repair what the scan finds (the controller takes a snapshot first)')
    .option('-j, --json', 'print the final results as JSON')
    .action(async (flags: CheckFlags) => {
      const target = dbTarget(flags, io);
      if (target.offline) {
        const { offlineSettings, OfflineRefused } = await import('../../daemon/offline.js');
        let postgres: boolean;
        try {
          postgres = offlineSettings({ dataDir: target.dataDir, db: target.db }, io.env).storeUrl !== undefined;
        } catch (e) {
          if (e instanceof OfflineRefused) throw new CliError(e.message, 1);
          throw e;
        }
        // The file itself first (it must open); then the controller's own scan in-process, as online. A
        // PostgreSQL store has no file: opening it checks that it answers and is migrated.
        if (!postgres) await offlineFileCheck(target.dataDir, io);
        await offlineIntegrity(target.dataDir, io, flags, target.db);
        return;
      }
      await onlineIntegrity(target.api, io, flags);
    });
}

/** The read-only file check of a data dir (what the controller verifies at start, thoroughly). */
export async function offlineFileCheck(dir: string, io: CliIo): Promise<void> {
  // Loaded here: only this command needs SQLite.
  const { checkStoreIntegrity } = await import('../../daemon/store-check.js');
  const { file, problems } = await checkStoreIntegrity(dir);
  if (problems.length === 0) {
    io.out(`ok: ${file} passed SQLite's integrity check and has every table and column its migrations create`);
    return;
  }
  for (const p of problems) io.err(`problem: ${p}`);
  throw new CliError(
    `${file} failed the integrity check (${problems.length} problem${problems.length === 1 ? '' : 's'}); restore a backup`,
    1,
  );
}

const POLL_MS = 250;
/** Gives up waiting (the scan goes on in the controller) after this long. */
const WAIT_LIMIT_MS = 30 * 60_000;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

const scanName = (flags: CheckFlags) => (flags.fix ? 'data-integrity fix' : 'data-integrity check');

/** Starts the scan (or fix) on the controller, waits for it, prints the findings; exit 1 when any stays. */
export async function onlineIntegrity(api: Api, io: CliIo, flags: CheckFlags): Promise<void> {
  const what = scanName(flags);
  try {
    await api.call('POST', flags.fix ? '/database/fix-data-integrity' : '/database/check-data-integrity');
  } catch (e) {
    if (e instanceof ApiError && e.status === 429)
      throw new CliError(
        `error: a data-integrity scan is already running on ${api.login.url}; try again when it ends`,
        1,
      );
    throw e;
  }
  reportScan(io, flags, await waitForScan(api, io, what));
}

/** The same on a stopped controller's store, in-process (its lock held while it runs). */
async function offlineIntegrity(dataDir: string, io: CliIo, flags: CheckFlags, db?: string): Promise<void> {
  const { openOfflineIntegrity, OfflineRefused } = await import('../../daemon/offline.js');
  let opened;
  try {
    opened = await openOfflineIntegrity(dataDir, io.env, db);
  } catch (e) {
    if (e instanceof OfflineRefused) throw new CliError(e.message, 1);
    throw new CliError(`error: cannot open the store in ${dataDir}: ${(e as Error).message}`, 1);
  }
  const what = scanName(flags);
  const started = Date.now();
  let details: IntegrityDetails;
  try {
    const where = opened.location.startsWith('postgres') ? opened.location : dataDir;
    io.err(`${what} started on ${where} (offline)`);
    try {
      await opened.database.start(flags.fix === true, opened.actor);
    } catch (e) {
      // Another controller sharing a PostgreSQL store runs a scan (429), or the store stopped answering.
      throw new CliError(`error: the ${what} could not start: ${(e as Error).message}`, 1);
    }
    await opened.database.idle();
    details = await opened.database.results();
  } finally {
    await opened.close();
  }
  io.err(`${what} finished in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  reportScan(io, flags, details);
}

/** Prints a finished scan's findings (or its JSON); exit 1 when it failed or any finding stays unfixed. */
function reportScan(io: CliIo, flags: CheckFlags, details: IntegrityDetails): void {
  const what = scanName(flags);
  if (flags.json) io.out(JSON.stringify(details, null, 2));
  else printFindings(io, details);
  const unfixed = details.results.filter((r) => !r.fixed).length;
  if (details.error !== '') throw new CliError(`error: the ${what} failed: ${details.error}`, 1);
  if (unfixed > 0) {
    throw new CliError(
      flags.fix
        ? `error: ${plural(unfixed, 'finding')} could not be fixed`
        : `error: ${plural(unfixed, 'finding')}; run \`edgectl db check-integrity --fix\` to repair them`,
      1,
    );
  }
}

async function waitForScan(api: Api, io: CliIo, what: string): Promise<IntegrityDetails> {
  const started = Date.now();
  let shown = false;
  const progress = (text: string) => {
    // On a terminal one line is rewritten in place (up one line, clear it); elsewhere nothing is repeated.
    if (!io.isTTY) return;
    io.err(`${shown ? '\x1b[1A\x1b[2K' : ''}${text}`);
    shown = true;
  };
  if (!io.isTTY) io.err(`${what} started on ${api.login.url}`);
  for (;;) {
    const { data } = await api.call<{ data: IntegrityDetails }>('GET', '/database/data-integrity-results');
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    if (!data.inProgress) {
      io.err(`${shown ? '\x1b[1A\x1b[2K' : ''}${what} finished in ${seconds}s`);
      return data;
    }
    progress(`${what} running… ${seconds}s`);
    if (Date.now() - started > WAIT_LIMIT_MS)
      throw new CliError(`error: gave up waiting for the ${what}; it goes on in the controller`, 1);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

function printFindings(io: CliIo, d: IntegrityDetails): void {
  for (const r of d.results) {
    io.out(d.fixingErrors ? `${r.fixed ? 'fixed' : 'not fixed'}: ${r.description}` : `problem: ${r.description}`);
  }
  if (d.tooManyErrors) io.out('(more findings than the controller keeps: only the first 1000 are shown)');
  if (d.results.length === 0 && d.error === '') io.out('ok: the data-integrity scan found nothing');
  else if (d.fixingErrors) {
    const fixed = d.results.filter((r) => r.fixed).length;
    io.out(`${plural(d.results.length, 'finding')}, ${fixed} fixed`);
  }
}
