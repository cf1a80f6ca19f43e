/**
 * The offline `edgectl db` operations on a stopped controller's data dir: snapshot, restore, migrate, info. Each
 * holds the data dir's lock while it runs, so none of them ever writes beside a running controller
 * (docs/decisions.md, "Offline CLI"). On a PostgreSQL store (`storeUrl`) they work on the database instead, with
 * no lock: other controllers may be serving it, and the server keeps the operations consistent (a dump is a
 * snapshot, migrations take their own lock); restoring one is pg_restore's job.
 */
import { existsSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import {
  acquireLock,
  backupStoreFile,
  countStoreRows,
  dumpDatabase,
  firstFew,
  inspectPostgresStore,
  inspectStoreFile,
  knownMigrations,
  migratePostgresStore,
  migrationNames,
  openStore,
  redactedUrl,
  schemaObjectProblems,
  snapshotPath,
  SnapshotUnavailable,
  storeFiles,
  type StoreFileSummary,
} from '../model/store.js';
import { lockRefusal, offlineActor, OfflineRefused } from './offline.js';
import { databaseEvent, recordEventNow } from '../model/events/system-events.js';
import type { EventRecord } from '../model/events/event.js';
import { STORE_FILE } from './store-check.js';

/** The entities `db info` counts, by table. */
const COUNTED: ReadonlyArray<readonly [string, string]> = [
  ['identities', 'identities'],
  ['authenticators', 'authenticators'],
  ['enrollments', 'enrollments'],
  ['services', 'services'],
  ['configs', 'configs'],
  ['configTypes', 'config_types'],
  ['serviceEdgeRouterPolicies', 'service_edge_router_policies'],
  ['edgeRouterPolicies', 'edge_router_policies'],
  ['servicePolicies', 'service_policies'],
  ['edgeRouters', 'edge_routers'],
  ['transitRouters', 'transit_routers'],
  ['postureChecks', 'posture_checks'],
  ['cas', 'cas'],
  ['authPolicies', 'auth_policies'],
  ['apiSessions', 'api_sessions'],
  ['sessions', 'sessions'],
];

/** `YYYYMMDD-HHMMSS` in UTC: the suffix of snapshot and backup names (docs/decisions.md, "Offline CLI"). */
export function snapshotStamp(d: Date): string {
  const iso = d.toISOString();
  return `${iso.slice(0, 10).replace(/-/g, '')}-${iso.slice(11, 19).replace(/:/g, '')}`;
}

/** Runs `fn` holding the data dir's lock; a live holder is a clear refusal naming it. */
async function locked<T>(dataDir: string, fn: (file: string) => Promise<T>): Promise<T> {
  if (!existsSync(dataDir)) throw new OfflineRefused(`error: there is no data dir ${dataDir}`);
  let release: () => void;
  try {
    release = acquireLock(dataDir, join(dataDir, STORE_FILE));
  } catch (e) {
    throw lockRefusal(e);
  }
  try {
    return await fn(join(dataDir, STORE_FILE));
  } finally {
    release();
  }
}

function summary(file: string): StoreFileSummary {
  try {
    return inspectStoreFile(file, migrationNames);
  } catch (e) {
    throw new OfflineRefused(`error: ${(e as Error).message}`);
  }
}

function requireStore(file: string): void {
  if (!existsSync(file)) throw new OfflineRefused(`error: there is no store ${file}`);
}

const sizeOf = (f: string): number => (existsSync(f) ? statSync(f).size : 0);

/**
 * Records an offline operation's event in the store at `location` (its file, under the data dir's lock, or its
 * database), once the operation is done. A store that cannot take it (one from before the events, migration
 * 0021) is left as it is: the operation stands, without its event.
 */
async function recordOffline(location: string, now: Date, e: EventRecord): Promise<void> {
  let store;
  try {
    store = await openStore(location, { migrate: false });
    await recordEventNow(store.db, now, e);
  } catch {
    // No events table (an older store): nothing to record into.
  } finally {
    await store?.close().catch(() => {});
  }
}

/** Where an offline command works: the data dir, and the PostgreSQL store when there is one. */
export interface OfflineOptions {
  storeUrl?: string;
  now?: Date;
}

/**
 * SQLite's online backup of the store to `out`, or to `<store>-YYYYMMDD-HHMMSS` beside it; mode 0600. A
 * PostgreSQL store is dumped by pg_dump to `out` or `edgectl-postgres-YYYYMMDD-HHMMSS.dump` in the data dir.
 */
export async function snapshotOffline(
  dir: string,
  out: string | undefined,
  opts: OfflineOptions = {},
): Promise<string> {
  const dataDir = resolve(dir);
  const now = opts.now ?? new Date();
  if (opts.storeUrl) {
    const dest = resolve(out ?? snapshotPath('postgres', join(dataDir, STORE_FILE), snapshotStamp(now)));
    if (existsSync(dest)) throw new OfflineRefused(`error: ${dest} exists: give another --out`);
    if (!existsSync(dirname(dest)))
      throw new OfflineRefused(
        `error: there is no directory ${dirname(dest)}${out ? '' : ' (the data dir)'}: give --out`,
      );
    try {
      await dumpDatabase(opts.storeUrl, dest);
    } catch (e) {
      if (e instanceof SnapshotUnavailable) throw new OfflineRefused(`error: ${e.message}`);
      throw new OfflineRefused(
        `error: cannot snapshot the PostgreSQL store ${redactedUrl(opts.storeUrl)}: ${(e as Error).message}`,
      );
    }
    await recordOffline(opts.storeUrl, now, databaseEvent('snapshot', offlineActor(), { path: dest }));
    return dest;
  }
  return locked(dataDir, async (file) => {
    requireStore(file);
    const dest = resolve(out ?? `${file}-${snapshotStamp(now)}`);
    if (existsSync(dest)) throw new OfflineRefused(`error: ${dest} exists: give another --out`);
    if (!existsSync(dirname(dest))) throw new OfflineRefused(`error: there is no directory ${dirname(dest)}`);
    await backupStoreFile(file, dest);
    await recordOffline(file, now, databaseEvent('snapshot', offlineActor(), { path: dest }));
    return dest;
  });
}

export interface RestoreResult {
  store: string;
  /** Where the store that was there is kept, if there was one. */
  replaced?: string;
  schema: StoreFileSummary;
}

/**
 * Replaces the store with `source` after checking that it is an edgectl store this version knows (the
 * migrations table, no unknown migration) whose schema objects are exactly what its recorded migrations create
 * (nothing foreign, altered or missing). The store it replaces is kept as `<store>.replaced-YYYYMMDD-HHMMSS`.
 * Both copies are SQLite backups (whatever sits in a -wal file is included), and the new store is put in place
 * by a rename, so an interrupted restore leaves the old store or the new one.
 */
export async function restoreOffline(dir: string, source: string, opts: OfflineOptions = {}): Promise<RestoreResult> {
  const dataDir = resolve(dir);
  const from = resolve(source);
  const now = opts.now ?? new Date();
  if (opts.storeUrl)
    throw new OfflineRefused(
      `error: edgectl restores SQLite stores only; a PostgreSQL store (${redactedUrl(opts.storeUrl)}) is restored ` +
        'from its pg_dump archive with pg_restore, the controllers stopped: ' +
        '`pg_restore --clean --if-exists --no-owner --dbname URL FILE`',
    );
  return locked(dataDir, async (file) => {
    if (from === file) throw new OfflineRefused(`error: ${from} is the store itself`);
    const schema = summary(from);
    if (schema.unknown.length > 0)
      throw new OfflineRefused(
        `error: ${from} was written by a newer edgectl (unknown migrations: ${schema.unknown.join(', ')}); refusing to restore it`,
      );
    // A snapshot carries its schema: a trigger or view no migration creates would run inside the controller.
    const foreign = await schemaObjectProblems(from, knownMigrations);
    if (foreign.length > 0)
      throw new OfflineRefused(
        `error: ${from} does not hold exactly the schema its migrations create (${firstFew(foreign)}); refusing to restore it`,
      );
    const stamp = snapshotStamp(now);
    const incoming = `${file}.restoring-${stamp}`;
    let replaced: string | undefined;
    if (existsSync(file) && statSync(file).size > 0) {
      replaced = `${file}.replaced-${stamp}`;
      if (existsSync(replaced)) throw new OfflineRefused(`error: ${replaced} exists: try again in a second`);
      await backupStoreFile(file, replaced);
    }
    try {
      await backupStoreFile(from, incoming);
      for (const f of storeFiles(file).slice(1)) if (existsSync(f)) unlinkSync(f);
      renameSync(incoming, file);
    } catch (e) {
      if (existsSync(incoming)) unlinkSync(incoming);
      throw e;
    }
    // In the restored store: from here on it is its history that goes on.
    await recordOffline(
      file,
      now,
      databaseEvent('restore', offlineActor(), { from, ...(replaced !== undefined && { replaced }) }),
    );
    return { store: file, ...(replaced ? { replaced } : {}), schema };
  });
}

/**
 * Applies pending migrations, checking the store's file, tables and columns as a controller's start does; the
 * names applied. (The schema objects are compared at the next start, or by `db check-integrity`, whose `--fix`
 * needs a migrated store.)
 */
export async function migrateOffline(
  dir: string,
  opts: OfflineOptions = {},
): Promise<{ store: string; applied: string[]; schema: string }> {
  const dataDir = resolve(dir);
  const schema = migrationNames[migrationNames.length - 1]!;
  if (opts.storeUrl) {
    const url = opts.storeUrl;
    let applied: string[];
    try {
      applied = await migratePostgresStore(url, migrationNames);
    } catch (e) {
      throw new OfflineRefused(`error: ${(e as Error).message}`);
    }
    if (applied.length > 0)
      await recordOffline(url, opts.now ?? new Date(), databaseEvent('migrate', offlineActor(), { applied, schema }));
    return { store: redactedUrl(url), applied, schema };
  }
  return locked(dataDir, async (file) => {
    requireStore(file);
    const before = summary(file);
    if (before.unknown.length > 0)
      throw new OfflineRefused(
        `error: the store ${file} was written by a newer edgectl (unknown migrations: ${before.unknown.join(', ')})`,
      );
    if (before.pending.length > 0) {
      try {
        const store = await openStore(file, { verify: true });
        await store.close();
      } catch (e) {
        throw new OfflineRefused(`error: ${(e as Error).message}`);
      }
      await recordOffline(
        file,
        opts.now ?? new Date(),
        databaseEvent('migrate', offlineActor(), { applied: before.pending, schema }),
      );
    }
    return { store: file, applied: before.pending, schema: migrationNames[migrationNames.length - 1]! };
  });
}

export interface StoreInfo {
  /** Which engine: `sqlite` (the file in the data dir) or `postgres`. */
  kind: 'sqlite' | 'postgres';
  /** The file, or the database's URL with its password hidden. */
  store: string;
  /** The last migration applied: the store's schema version. */
  schemaVersion: string | null;
  migrations: string[];
  pendingMigrations: string[];
  unknownMigrations: string[];
  /** Bytes of the file and its write-ahead log; of a PostgreSQL store, its database (`pg_database_size`). */
  sizes: { db: number; wal?: number };
  counts: Record<string, number>;
}

/**
 * What `db info` shows: the engine and where the store is, the schema version, the sizes of the store and its
 * WAL, and entity counts. Read-only: it never migrates (an empty PostgreSQL database shows every migration
 * pending).
 */
export async function storeInfoOffline(dir: string, opts: OfflineOptions = {}): Promise<StoreInfo> {
  const dataDir = resolve(dir);
  if (opts.storeUrl) {
    let s;
    try {
      s = await inspectPostgresStore(
        opts.storeUrl,
        migrationNames,
        COUNTED.map(([, t]) => t),
      );
    } catch (e) {
      throw new OfflineRefused(`error: ${(e as Error).message}`);
    }
    const counts: Record<string, number> = {};
    for (const [name, table] of COUNTED) if (s.counts[table] !== undefined) counts[name] = s.counts[table];
    return {
      kind: 'postgres',
      store: s.location,
      schemaVersion: s.applied[s.applied.length - 1] ?? null,
      migrations: s.applied,
      pendingMigrations: s.pending,
      unknownMigrations: s.unknown,
      sizes: { db: s.bytes },
      counts,
    };
  }
  return locked(dataDir, async (file) => {
    requireStore(file);
    const s = summary(file);
    const rows = countStoreRows(
      file,
      COUNTED.map(([, t]) => t),
    );
    const counts: Record<string, number> = {};
    for (const [name, table] of COUNTED) if (rows[table] !== undefined) counts[name] = rows[table];
    return {
      kind: 'sqlite',
      store: file,
      schemaVersion: s.applied[s.applied.length - 1] ?? null,
      migrations: s.applied,
      pendingMigrations: s.pending,
      unknownMigrations: s.unknown,
      sizes: { db: sizeOf(file), wal: sizeOf(`${file}-wal`) },
      counts,
    };
  });
}
