/**
 * What tells replicas sharing one PostgreSQL database of each other's writes (docs/design.md, "Several
 * controllers"): `store_changes`, one counter per table and one for the whole store (`*`), moved by a
 * statement-level trigger on every table in the writing transaction, so a counter moves exactly when a write
 * to its table commits. A replica reads the `*` counter before answering each request and, when it moved,
 * the per-table counters, and drops what its caches hold of the tables that moved (pg/replica-changes.ts).
 *
 * Not traced, so that they cost no shared counter: a new session (its repeat is looked up in the store), an
 * API session's activity time and an authenticator's failed-attempt count (both read from the store each time
 * they matter). Every other column of those tables is traced: a test checks that a column added by a later
 * migration is added to its trigger too.
 *
 * The trigger function locks the `*` row before its table's row, so every traced writer takes the same locks in
 * the same order (no deadlock), and traced writes commit one at a time, as on SQLite's one connection. Each
 * counter moves once per transaction, however many statements write its table.
 *
 * SQLite stores are only ever written by one process: nothing is created there.
 */
import { sql, type Kysely } from 'kysely';
import { onPostgres } from './helpers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/** Writes that move no counter: `table: columns` (updates of only these), or `table: 'insert'`. */
export const UNTRACED: Readonly<Record<string, { insert?: true; columns?: readonly string[] }>> = {
  sessions: { insert: true },
  api_sessions: { columns: ['lastActivityAt'] },
  authenticators: { columns: ['failedAttempts'] },
  // A controller's heartbeat (migration 0018): read from the store each time `GET /controllers` answers.
  controllers: { columns: ['lastSeenAt'] },
  // Events and delivery cursors (migration 0021): nothing a replica caches.
  events: { insert: true },
  event_cursors: { columns: ['seq', 'updatedAt'] },
};

/** Tables that are not model data (bookkeeping): no trigger, no counter. */
const UNCOUNTED: ReadonlySet<string> = new Set(['schema_migrations', 'store_changes']);

/** The trigger events of a table, given its columns. */
export function tracedEvents(table: string, columns: readonly string[]): string {
  const u = UNTRACED[table];
  if (!u) return 'insert or update or delete';
  const events = u.insert ? [] : ['insert'];
  const cols = columns.filter((c) => !u.columns?.includes(c));
  events.push(u.columns ? `update of ${cols.map((c) => `"${c}"`).join(', ')}` : 'update', 'delete');
  return events.join(' or ');
}

export const storeChangesTriggerName = (table: string): string => `store_changes_${table}`.slice(0, 63);

export async function up(db: AnyDb): Promise<void> {
  if (!onPostgres(db)) return;
  await db.schema
    .createTable('store_changes')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('gen', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  const { rows } = await sql<{ table: string; columns: string[] }>`
    select c.table_name as "table", array_agg(c.column_name::text order by c.ordinal_position) as columns
    from information_schema.columns c join information_schema.tables t
      on t.table_schema = c.table_schema and t.table_name = c.table_name
    where c.table_schema = current_schema() and t.table_type = 'BASE TABLE'
    group by c.table_name order by c.table_name`.execute(db);
  const tables = rows.filter((r) => !UNCOUNTED.has(r.table));
  await db
    .insertInto('store_changes')
    .values([{ name: '*' }, ...tables.map((t) => ({ name: t.table }))])
    .execute();
  await sql.raw(storeChangesBumpFunction(false)).execute(db);
  for (const t of tables)
    await sql
      .raw(
        `create trigger "${storeChangesTriggerName(t.table)}" after ${tracedEvents(t.table, t.columns)} ` +
          `on "${t.table}" for each statement execute function store_changes_bump()`,
      )
      .execute(db);
}

/** Gives tables created by a later migration their counter and trigger, as this migration gave every table. */
export async function traceTables(db: AnyDb, tables: readonly string[]): Promise<void> {
  await db
    .insertInto('store_changes')
    .values(tables.map((name) => ({ name })))
    .execute();
  for (const table of tables) await traceTable(db, table);
}

/** (Re)creates a table's change trigger for its current columns (a later migration adding columns calls it). */
export async function traceTable(db: AnyDb, table: string): Promise<void> {
  const { rows } = await sql<{ column: string }>`select column_name::text as "column" from information_schema.columns
    where table_schema = current_schema() and table_name = ${table} order by ordinal_position`.execute(db);
  await sql.raw(`drop trigger if exists "${storeChangesTriggerName(table)}" on "${table}"`).execute(db);
  await sql
    .raw(
      `create trigger "${storeChangesTriggerName(table)}" after ${tracedEvents(
        table,
        rows.map((r) => r.column),
      )} on "${table}" for each statement execute function store_changes_bump()`,
    )
    .execute(db);
}

/**
 * The trigger function that moves the counters: once per table per transaction (the tables already counted are
 * kept in a transaction-local setting), and `*` once per transaction, which also notifies channel
 * `edgectl_changes` when `notify` (migration 0024).
 */
export const storeChangesBumpFunction = (notify: boolean): string =>
  `create or replace function store_changes_bump() returns trigger language plpgsql as $body$
      declare
        counted text := coalesce(current_setting('edgectl.changed', true), '');
      begin
        if counted = '' then
          update store_changes set gen = gen + 1 where name = '*';${notify ? "\n          perform pg_notify('edgectl_changes', '');" : ''}
        end if;
        if position('|' || TG_TABLE_NAME || '|' in counted) = 0 then
          update store_changes set gen = gen + 1 where name = TG_TABLE_NAME;
          perform set_config('edgectl.changed', counted || '|' || TG_TABLE_NAME || '|', true);
        end if;
        return null;
      end $body$`;
