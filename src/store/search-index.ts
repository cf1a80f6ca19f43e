/**
 * The substring-search indexes of migration 0012 (FTS5 trigram tables over the `name` of the large
 * collections) as the rest of the program sees them: which column has one, and the integrity scan's view
 * (is the table there, are its triggers there, does it agree with the rows it indexes) with the repair.
 * How a query uses an index lives in the filter compiler's dialect (`filter-sql.ts`).
 */
import { sql } from 'kysely';
import type { Executor } from './db.js';
import {
  rebuildStatement,
  SEARCH_INDEXES,
  searchIndexName,
  searchTableStatement,
  searchTriggerStatements,
  type SearchIndexDef,
} from './migrations/0012-search-indexes.js';

export { SEARCH_INDEXES, searchIndexName, type SearchIndexDef };

/** The index over `table.column`, or undefined when the store keeps none. */
export function searchIndexOf(table: string, column: string): string | undefined {
  const ix = SEARCH_INDEXES.find((x) => x.table === table && x.column === column);
  return ix && searchIndexName(ix);
}

/** What is wrong with one index: missing table or triggers, or entries that differ from the indexed rows. */
export async function searchIndexProblems(db: Executor, ix: SearchIndexDef): Promise<string[]> {
  const name = searchIndexName(ix);
  const { rows } = await sql<{ name: string; type: string }>`select name, type from sqlite_master
    where (type = 'table' and name = ${name}) or (type = 'trigger' and tbl_name = ${ix.table})`.execute(db);
  const present = new Set(rows.map((r) => `${r.type}:${r.name}`));
  if (!present.has(`table:${name}`)) return [`the table ${name} is missing`];
  const out = searchTriggerStatements(ix)
    .filter((t) => !present.has(`trigger:${t.name}`))
    .map((t) => `its trigger ${t.name} is missing (writes to ${ix.table} no longer reach the index)`);
  try {
    // rank 1: compare the index with the rows of the content table too, not only its own structure.
    await sql`insert into ${sql.table(name)}(${sql.ref(name)}, rank) values ('integrity-check', 1)`.execute(db);
  } catch (e) {
    out.push(`its entries differ from the ${ix.column}s of ${ix.table} (${(e as Error).message})`);
  }
  return out;
}

/** Recreates what is missing of the index (table, triggers) and rebuilds its entries from the table's rows. */
export async function repairSearchIndex(db: Executor, ix: SearchIndexDef): Promise<void> {
  const name = searchIndexName(ix);
  const { rows } = await sql<{ name: string }>`select name from sqlite_master
    where (type = 'table' and name = ${name}) or (type = 'trigger' and tbl_name = ${ix.table})`.execute(db);
  const present = new Set(rows.map((r) => r.name));
  if (!present.has(name)) await sql.raw(searchTableStatement(ix)).execute(db);
  for (const t of searchTriggerStatements(ix)) if (!present.has(t.name)) await sql.raw(t.sql).execute(db);
  await sql.raw(rebuildStatement(ix)).execute(db);
}
