/**
 * Opening a PostgreSQL store: a `pg` pool under kysely's PostgreSQL dialect, the migrations applied once
 * (under an advisory lock, so replicas starting together on an empty database leave one migrator), and the
 * change feed told of every statement each pooled connection runs.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type { Database as StoreSchema } from '../schema.js';
import { ChangeFeed, SPLIT_COLUMNS, type FeedSession } from '../change-feed.js';
import type { SchemaObject } from '../statement-tables.js';
import { createRuntime } from '../runtime.js';
import { storeBatchTransitions } from '../access-journal.js';
import { HOT_STATEMENT } from '../direct.js';
import { WriteGate } from '../write-gate.js';
import type { TxBatcher } from '../tx-batch.js';
import { knownMigrations, migrateToLatest } from '../migrations/index.js';
import { StoreRefused } from '../open-checks.js';
import type { OpenedStore, OpenOptions } from '../opened-store.js';
import { TextCollationPlugin } from './text-collation.js';
import { loadSchemaObjects } from './schema-objects.js';
import { COUNTERS_APPLICATION, CounterConnection, ownMove, ReplicaChanges } from './replica-changes.js';
import { claimOnPostgres } from './claims.js';
import { dumpDatabase } from './dump.js';

/** The key of the session lock held while migrations run (advisory locks share one key space per database). */
const MIGRATION_LOCK = 0x6d696772; // 'migr'

/** How many connections one store keeps to the database at most. */
const POOL_SIZE = 10;

/** The URL with its password hidden, for messages and logs. */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://(unreadable URL)';
  }
}

/** 64-bit integers and numerics (counts, sums) as JavaScript numbers, as SQLite's driver returns them. */
function numberTypes(): pg.CustomTypesConfig {
  const types = new pg.TypeOverrides();
  types.setTypeParser(pg.types.builtins.INT8, (v: string) => Number(v));
  types.setTypeParser(pg.types.builtins.NUMERIC, (v: string) => Number(v));
  return types;
}

/** A statement that only reads: a select, or a `with` whose statement never writes. */
const READER = /^\s*(select|with)\b/i;
const WRITES = /\b(insert|update|delete)\b/i;
const isReader = (text: string): boolean => READER.test(text) && !WRITES.test(text);

/** Names of the hot statements' prepared forms, by text (at most MAX_PREPARED texts are named). */
type PreparedNames = Map<string, string>;
const MAX_PREPARED = 500;
const ALL_COLUMNS = /\bselect\s+(distinct\s+)?([a-z_"]+\.)?\*/i;

/**
 * The prepared statement's name for a hot statement (direct.ts marks them: fixed texts with explicit columns
 * that run on most requests), so each pooled connection parses and plans it once rather than on every run.
 */
function preparedName(names: PreparedNames, text: string): string | undefined {
  // A prepared `select *` fails once a migration adds a column (its result type changed): those stay unnamed.
  if (!text.endsWith(HOT_STATEMENT) || ALL_COLUMNS.test(text)) return undefined;
  let name = names.get(text);
  if (name === undefined && names.size < MAX_PREPARED) {
    name = `edgectl_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    names.set(text, name);
  }
  return name;
}

/**
 * Tells the feed about every statement a pooled connection runs, before it runs and once it has finished, and
 * runs the hot ones as prepared statements.
 */
function followStatements(client: pg.PoolClient, session: FeedSession, names: PreparedNames): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (...args: unknown[]) => {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: unknown } | undefined)?.text;
    if (typeof text !== 'string') return query(...args);
    session.note(text, isReader(text));
    const name = typeof args[0] === 'string' && Array.isArray(args[1]) ? preparedName(names, text) : undefined;
    if (name !== undefined) args = [{ name, text, values: args[1] }, ...args.slice(2)];
    const out = query(...args);
    if (out instanceof Promise) {
      return out.finally(() => session.finished());
    }
    session.finished();
    return out;
  };
}

export async function openPostgresStore(url: string, opts: OpenOptions = {}): Promise<OpenedStore> {
  const location = redactedUrl(url);
  let objects: SchemaObject[] = [];
  let applied: string[] = [];
  const feed = new ChangeFeed(() => objects, SPLIT_COLUMNS);
  const pool = new pg.Pool({ connectionString: url, max: POOL_SIZE, types: numberTypes() });
  const counters = new CounterConnection({
    connectionString: url,
    types: numberTypes(),
    application_name: COUNTERS_APPLICATION,
  });
  // A connection the server ends (a restart, a failover, an administrator) must not end the process. The pool
  // listens for errors only on idle connections; a connection that dies while lent out (a query running) also
  // emits 'error' on its client after failing that query, and with no listener Node throws it. The query's
  // caller sees the failure; the pool discards the dead connection on release and the next query opens another.
  pool.on('error', () => {});
  const prepared: PreparedNames = new Map();
  pool.on('connect', (client) => {
    client.on('error', () => {});
    followStatements(client, feed.session(), prepared);
  });
  const db = new Kysely<StoreSchema>({ dialect: new PostgresDialect({ pool }) });
  try {
    await sql`select 1`.execute(db);
  } catch (e) {
    await db.destroy().catch(() => {});
    throw new StoreRefused(`cannot reach the PostgreSQL store ${location}: ${(e as Error).message}`);
  }
  let changes: ReplicaChanges | undefined;
  let batcher: TxBatcher | undefined;
  try {
    const runtime = createRuntime(db as Kysely<unknown>, {
      kind: 'postgres',
      gate: new WriteGate(),
      feed,
      // Which counters the group commit moved, so that this replica does not take them for another's.
      beforeCommit: async (trx) => {
        // First: its insert moves the counters read next.
        await storeBatchTransitions(trx);
        const move = changes && (await ownMove(trx));
        return move && (() => changes?.ownCommit(move.star, move.tables));
      },
    });
    batcher = runtime.batcher;
    if (opts.migrate ?? !opts.readonly) applied = await migrateOnce(pool, db);
    if (opts.verify) await refuseNewer(db, location);
    objects = await loadSchemaObjects(db);
    feed.schemaChanged();
    runtime.replicas = changes = new ReplicaChanges(db, feed, counters);
  } catch (e) {
    await counters.close();
    await db.destroy().catch(() => {});
    if (e instanceof StoreRefused) throw e;
    throw new StoreRefused(`cannot open the PostgreSQL store ${location}: ${(e as Error).message}`);
  }
  let closed = false;
  return {
    kind: 'postgres',
    db,
    get raw(): never {
      throw new Error('a PostgreSQL store has no SQLite connection');
    },
    location,
    applied,
    wal: () => undefined,
    commits: () => ({ batches: batcher?.batches ?? 0, members: batcher?.members ?? 0 }),
    claim: (name) => claimOnPostgres(url, name),
    snapshot: (dest) => dumpDatabase(url, dest),
    async close() {
      if (closed) return;
      closed = true;
      await counters.close();
      await db.destroy();
    },
  };
}

/**
 * Applies pending migrations while holding the migration lock: a replica that starts while another migrates
 * waits for it, then finds nothing left to apply.
 */
async function migrateOnce(pool: pg.Pool, db: Kysely<StoreSchema>): Promise<string[]> {
  const lock = await pool.connect();
  try {
    await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      return await migrateToLatest(db.withPlugin(new TextCollationPlugin()));
    } finally {
      await lock.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    lock.release();
  }
}

/** A database migrated by a newer edgectl (a migration this version does not know) is refused. */
async function refuseNewer(db: Kysely<StoreSchema>, location: string): Promise<void> {
  const rows = await sql<{ name: string }>`select name from schema_migrations`.execute(db);
  const unknown = rows.rows.map((r) => r.name).filter((n) => !(n in knownMigrations));
  if (unknown.length > 0)
    throw new StoreRefused(
      `the PostgreSQL store ${location} was migrated by a newer edgectl (unknown migrations: ${unknown.join(', ')}); ` +
        'run this version only against databases it created or migrated',
    );
}
