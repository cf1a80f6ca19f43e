/**
 * Substring-search indexes (docs/decisions.md, "Substring search"): an FTS5 table with the `trigram` tokenizer
 * over the `name` of the large collections, so `name contains "…"` reads the matching rows instead of every row.
 *
 * Each index is an external-content FTS5 table (`content=<table>`, keyed by the table's rowid, so the names
 * are not stored twice) kept in step by three triggers on the table, which run inside the writing
 * statement: inserts, deletes (cascades included) and updates of the column. The filter compiler only uses
 * an index to narrow the candidates and re-checks every candidate with the plain test
 * (`src/store/filter-sql.ts`), so a stale index can hide rows but never add any; the integrity scan finds one
 * (`src/store/search-index.ts`).
 *
 * Frozen with this migration: the statements below are what every store created them with; the integrity
 * repair re-runs them from here.
 */
import { sql, type Kysely } from 'kysely';
import { onPostgres } from './helpers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/** A searchable column: `table.column`, indexed in `<table>_<column>_search`. */
export interface SearchIndexDef {
  readonly table: string;
  readonly column: string;
}

/** The indexes this migration creates; a resource prop marked `search` must name one of these. */
export const SEARCH_INDEXES: readonly SearchIndexDef[] = [
  { table: 'identities', column: 'name' },
  { table: 'services', column: 'name' },
  { table: 'edge_routers', column: 'name' },
];

export const searchIndexName = (ix: SearchIndexDef): string => `${ix.table}_${ix.column}_search`;

/** The names and texts of the index's triggers (insert, delete, update of the column). */
export function searchTriggerStatements(ix: SearchIndexDef): { name: string; sql: string }[] {
  const fts = searchIndexName(ix);
  const c = `"${ix.column}"`;
  const remove = `insert into "${fts}"("${fts}", rowid, ${c}) values ('delete', old.rowid, old.${c});`;
  const add = `insert into "${fts}"(rowid, ${c}) values (new.rowid, new.${c});`;
  return [
    { name: `${fts}_insert`, sql: `create trigger "${fts}_insert" after insert on "${ix.table}" begin ${add} end` },
    { name: `${fts}_delete`, sql: `create trigger "${fts}_delete" after delete on "${ix.table}" begin ${remove} end` },
    {
      name: `${fts}_update`,
      sql: `create trigger "${fts}_update" after update of ${c} on "${ix.table}" begin ${remove} ${add} end`,
    },
  ];
}

/** The virtual table: trigram tokens, case-folded (the compiler re-checks case), over the table's own rows. */
export function searchTableStatement(ix: SearchIndexDef): string {
  return (
    `create virtual table "${searchIndexName(ix)}" using fts5("${ix.column}", content='${ix.table}', ` +
    `content_rowid='rowid', tokenize='trigram')`
  );
}

/** Fills the index from the table's current rows. */
export const rebuildStatement = (ix: SearchIndexDef): string =>
  `insert into "${searchIndexName(ix)}"("${searchIndexName(ix)}") values ('rebuild')`;

/**
 * PostgreSQL's substring index: a GIN index of the column's trigrams (`pg_trgm`, which folds letter case), used
 * by `ilike '%…%'`; the table's own rows, kept in step by PostgreSQL itself.
 */
export const pgSearchIndexStatement = (ix: SearchIndexDef): string =>
  `create index "${searchIndexName(ix)}" on "${ix.table}" using gin ("${ix.column}" gin_trgm_ops)`;

export async function up(db: AnyDb): Promise<void> {
  if (onPostgres(db)) {
    for (const ix of SEARCH_INDEXES) await sql.raw(pgSearchIndexStatement(ix)).execute(db);
    return;
  }
  for (const ix of SEARCH_INDEXES) {
    await sql.raw(searchTableStatement(ix)).execute(db);
    for (const t of searchTriggerStatements(ix)) await sql.raw(t.sql).execute(db);
    await sql.raw(rebuildStatement(ix)).execute(db);
  }
}
