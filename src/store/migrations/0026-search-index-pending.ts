/**
 * New names reach the substring-search indexes (migration 0012) once per commit instead of once per write
 * (SQLite only; PostgreSQL's trigram index is the server's own).
 *
 * An FTS5 table flushes the entries it holds in memory to a new segment of its index at every savepoint, and a
 * statement that fires triggers opens one: the group commit runs each writer in a savepoint of its own
 * (tx-batch.ts), so every identity create of a commit of 16 wrote a segment of one name, which the index then
 * merged. Measured on the large model (100,000 identities), statement by statement: the next statement after an
 * identity's insert (its role attributes') cost ~45 µs more with the index's insert trigger than without, the
 * insert itself ~10-20 µs more, ~25 % of SQLite's time for a create; and ~0.5 frames of log per create.
 *
 * Now the insert trigger only queues the row (`search_index_pending`: the index and the row's rowid), and the
 * store moves what is queued into the index right before each commit (tx-batch.ts, {@link flushPendingStatements}),
 * outside every savepoint: one segment per commit. Until then a queued row is a candidate of every search of its
 * index (filter-sql.ts), so nothing is ever missed, whichever code path inserted it. A delete or a rename of a
 * queued row drops it from the queue instead of removing entries the index never had (which would corrupt it).
 *
 * Frozen with this migration: the statements below are what every store created them with; the integrity
 * repair re-runs them from here.
 */
import { sql, type Kysely } from 'kysely';
import { onPostgres } from './helpers.js';
import { SEARCH_INDEXES, searchIndexName, type SearchIndexDef } from './0012-search-indexes.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/** The queue of rows whose names are not in their index yet: (index name, the row's rowid). */
export const PENDING_TABLE = 'search_index_pending';

export const pendingTableStatement =
  `create table "${PENDING_TABLE}" ("ix" text not null, "docid" integer not null, ` +
  `constraint "${PENDING_TABLE}_pk" primary key ("ix", "docid")) without rowid`;

/** The names and texts of the index's triggers (insert, delete, update of the column), queueing new names. */
export function pendingTriggerStatements(ix: SearchIndexDef): { name: string; sql: string }[] {
  const fts = searchIndexName(ix);
  const c = `"${ix.column}"`;
  const queued = `"${PENDING_TABLE}" where "ix" = '${fts}' and "docid" = old.rowid`;
  // An entry the index holds goes; a queued one only leaves the queue.
  const remove =
    `insert into "${fts}"("${fts}", rowid, ${c}) select 'delete', old.rowid, old.${c} ` +
    `where not exists (select 1 from ${queued}); delete from ${queued};`;
  const add = `insert into "${PENDING_TABLE}" ("ix", "docid") values ('${fts}', new.rowid);`;
  return [
    { name: `${fts}_insert`, sql: `create trigger "${fts}_insert" after insert on "${ix.table}" begin ${add} end` },
    { name: `${fts}_delete`, sql: `create trigger "${fts}_delete" after delete on "${ix.table}" begin ${remove} end` },
    {
      name: `${fts}_update`,
      sql: `create trigger "${fts}_update" after update of ${c} on "${ix.table}" begin ${remove} ${add} end`,
    },
  ];
}

/** Moves the queued rows of one index into it (their current names) and empties its queue: two statements. */
export function flushPendingStatements(ix: SearchIndexDef): [string, string] {
  const fts = searchIndexName(ix);
  return [
    `insert into "${fts}"(rowid, "${ix.column}") select t.rowid, t."${ix.column}" from "${ix.table}" t ` +
      `where t.rowid in (select "docid" from "${PENDING_TABLE}" where "ix" = '${fts}')`,
    `delete from "${PENDING_TABLE}" where "ix" = '${fts}'`,
  ];
}

export async function up(db: AnyDb): Promise<void> {
  if (onPostgres(db)) return;
  await sql.raw(pendingTableStatement).execute(db);
  for (const ix of SEARCH_INDEXES) {
    for (const t of pendingTriggerStatements(ix)) {
      await sql.raw(`drop trigger "${t.name}"`).execute(db);
      await sql.raw(t.sql).execute(db);
    }
  }
}
