/**
 * The substring-search indexes of migration 0012 (FTS5 trigram tables over the `name` of the large
 * collections) as the rest of the program sees them: which column has one, and the integrity scan's view
 * (is the table there, are its triggers there, does it agree with the rows it indexes) with the repair.
 * How a query uses an index lives in the filter compiler's dialect (`filter-sql.ts`).
 */
import { sql } from 'kysely';
import type { Executor } from './db.js';
import { searchKey, substringPattern, type SearchProbe } from './filter-sql.js';
import { storeKind } from './dialect.js';
import { readWithCache } from './list-cache.js';
import { countFromDb } from './values.js';
import {
  rebuildStatement,
  SEARCH_INDEXES,
  searchIndexName,
  searchTableStatement,
  type SearchIndexDef,
} from './migrations/0012-search-indexes.js';
import { flushPendingStatements, pendingTriggerStatements } from './migrations/0026-search-index-pending.js';

export { SEARCH_INDEXES, searchIndexName, type SearchIndexDef };

/** The index over `table.column`, or undefined when the store keeps none. */
export function searchIndexOf(table: string, column: string): string | undefined {
  const ix = SEARCH_INDEXES.find((x) => x.table === table && x.column === column);
  return ix && searchIndexName(ix);
}

/**
 * Whether `table` is one of the index tables (an FTS5 table or one of the shadow tables it keeps as
 * `<name>_data`, `_idx`, …): a missing one is this module's finding, repaired by a rebuild; the schema
 * comparison (schema-objects.ts) leaves it out.
 */
export const isSearchIndexTable = (table: string): boolean =>
  SEARCH_INDEXES.some((ix) => table === searchIndexName(ix) || table.startsWith(`${searchIndexName(ix)}_`));

/**
 * What is wrong with one index: a missing table, or entries that differ from the indexed rows. (Its triggers
 * are schema objects of migration 0012: the schema comparison finds a missing or altered one.) On PostgreSQL
 * the index is a trigram index that the server keeps in step with the table itself: a schema object like any
 * other index (the schema comparison finds one missing or altered), with no entries of edgectl's to differ.
 */
export async function searchIndexProblems(db: Executor, ix: SearchIndexDef): Promise<string[]> {
  if (storeKind(db) === 'postgres') return [];
  const name = searchIndexName(ix);
  const { rows } = await sql<{ name: string }>`select name from sqlite_master
    where type = 'table' and name = ${name}`.execute(db);
  if (rows.length === 0) return [`the table ${name} is missing`];
  try {
    // Queued names first (migration 0026): the comparison below would count them as missing entries.
    for (const text of flushPendingStatements(ix)) await sql.raw(text).execute(db);
    // rank 1: compare the index with the rows of the content table too, not only its own structure.
    await sql`insert into ${sql.table(name)}(${sql.ref(name)}, rank) values ('integrity-check', 1)`.execute(db);
    return [];
  } catch (e) {
    return [`its entries differ from the ${ix.column}s of ${ix.table} (${(e as Error).message})`];
  }
}

/**
 * Recreates what is missing of the index (table, triggers) and rebuilds its entries from the table's rows.
 * Nothing on PostgreSQL (the schema comparison's repair recreates a missing trigram index).
 */
export async function repairSearchIndex(db: Executor, ix: SearchIndexDef): Promise<void> {
  if (storeKind(db) === 'postgres') return;
  const name = searchIndexName(ix);
  const { rows } = await sql<{ name: string }>`select name from sqlite_master
    where (type = 'table' and name = ${name}) or (type = 'trigger' and tbl_name = ${ix.table})`.execute(db);
  const present = new Set(rows.map((r) => r.name));
  if (!present.has(name)) await sql.raw(searchTableStatement(ix)).execute(db);
  for (const t of pendingTriggerStatements(ix)) if (!present.has(t.name)) await sql.raw(t.sql).execute(db);
  // The rebuild indexes every row, queued ones included: the queue empties with it.
  await sql.raw(rebuildStatement(ix)).execute(db);
  await sql.raw(flushPendingStatements(ix)[1]).execute(db);
}

/**
 * A needle present in more than this share of the rows is read faster by the plain test over every row (or
 * along the sort's index, stopping at the page's end) than from the index: each candidate costs a row lookup
 * and the exact re-check, several times a scanned row (docs/policy-engine.md, "Management search").
 */
const BROAD_SHARE = 5;

/**
 * Which of `probes` (indexed substring tests on `table`) are broad: their index yields more than a fifth of
 * the table's rows. Reads the table's row count and at most that many index entries per needle, both kept
 * until the next write (list-cache.ts), so a repeated search asks nothing.
 */
export async function broadNeedles(db: Executor, table: string, probes: SearchProbe[]): Promise<Set<string>> {
  const out = new Set<string>();
  const count = async (q: ReturnType<typeof sql.raw>) => {
    const compiled = q.compile(db);
    return readWithCache(db, compiled, async () => {
      const { rows } = await db.executeQuery<{ n: unknown }>(compiled);
      return countFromDb(rows[0]?.n);
    });
  };
  const rows = await count(sql`select count(*) as n from ${sql.table(table)}`);
  const cap = Math.floor(rows / BROAD_SHARE) + 1;
  const postgres = storeKind(db) === 'postgres';
  for (const p of probes) {
    const hits = await count(postgres ? trigramHits(p, cap) : ftsHits(p, cap));
    if (hits >= cap) out.add(searchKey(p));
  }
  return out;
}

/** SQLite: how many of the FTS5 index's entries (at most `cap`) hold the needle. */
function ftsHits(p: SearchProbe, cap: number) {
  const phrase = `"${p.needle.replace(/"/g, '""')}"`;
  const ix = sql.table(p.index);
  return sql`select count(*) as n from (select rowid from ${ix} where ${ix} match ${phrase} limit ${cap})`;
}

/** PostgreSQL: how many rows (at most `cap`) the trigram index finds for the needle. */
function trigramHits(p: SearchProbe, cap: number) {
  const ix = SEARCH_INDEXES.find((x) => searchIndexName(x) === p.index)!;
  return sql`select count(*) as n from (select 1 from ${sql.table(ix.table)}
    where ${sql.ref(ix.column)} ilike ${substringPattern(p.needle)} limit ${cap}) hits`;
}
