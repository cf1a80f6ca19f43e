/**
 * The store's side of the data-integrity scan (docs/decisions.md, "Data-integrity scan"): SQLite's own checks,
 * rows whose references point nowhere, and the derived structures recomputed from their source records. Every
 * function answers plain values or repairs one kind of finding on the caller's executor (the fix's transaction),
 * on either engine: where SQLite and PostgreSQL differ (the file check, how foreign keys are listed) the
 * function says what it does on each.
 */
import { sql } from 'kysely';
import { dynamic, type Executor } from './db.js';
import { storeKind } from './dialect.js';
import { integrityCheckOffThread } from './file-integrity.js';
import { boolToDb } from './values.js';

/**
 * SQLite's `integrity_check`: the messages of what is wrong with the file (empty when it is sound). With the
 * store's `file`, on a worker thread's connection (file-integrity.ts), else (or when no worker can) on `db`.
 * A PostgreSQL store has no file of edgectl's to check (the server keeps its own pages): always empty.
 */
export async function sqliteIntegrityProblems(db: Executor, file?: string, max = 100): Promise<string[]> {
  if (storeKind(db) === 'postgres') return [];
  const limit = Math.max(1, Math.floor(max));
  const messages =
    (file === undefined ? undefined : await integrityCheckOffThread(file, limit)) ??
    (await sql<{ integrity_check: string }>`pragma integrity_check(${sql.raw(String(limit))})`.execute(db)).rows.map(
      (r) => r.integrity_check,
    );
  return messages.filter((m) => m !== 'ok');
}

/** One foreign key (single column, as all of the store's are) with the rows that break it. */
export interface ForeignKeyOrphans {
  table: string;
  column: string;
  parent: string;
  parentColumn: string;
  /** Each offending row: its id (entity tables) or its columns as `name=value` pairs, and the missing value. */
  rows: { row: string; value: string }[];
}

/** The tables that have foreign keys, in name order. */
export async function foreignKeyTables(db: Executor): Promise<string[]> {
  if (storeKind(db) === 'postgres') {
    const { rows } = await sql<{ name: string }>`select distinct c.relname as name
      from pg_constraint k join pg_class c on c.oid = k.conrelid
      where k.contype = 'f' and c.relnamespace = current_schema()::regnamespace order by 1`.execute(db);
    return rows.map((r) => r.name);
  }
  const { rows } = await sql<{ name: string }>`select m.name from sqlite_master m
    where m.type = 'table' and exists (select 1 from pragma_foreign_key_list(m.name)) order by m.name`.execute(db);
  return rows.map((r) => r.name);
}

/**
 * The rows of `table` that `foreign_key_check` reports, grouped per foreign key (written while enforcement was
 * off). One table at a time, so a scan can let the event loop run between tables. PostgreSQL enforces its
 * foreign keys itself, but not on rows written with `session_replication_role = replica` (replication and
 * restore tools), with its triggers disabled, or before a `not valid` constraint is validated: each foreign key
 * of the table is looked up in the catalog and its rows tested the same way.
 */
export async function foreignKeyOrphans(db: Executor, table: string): Promise<ForeignKeyOrphans[]> {
  if (storeKind(db) === 'postgres') return postgresForeignKeyOrphans(db, table);
  const { rows } = await sql<{
    table: string;
    parent: string;
    fkid: number;
  }>`select "table", parent, fkid from pragma_foreign_key_check(${table})`.execute(db);
  const keys = new Map<string, { table: string; fkid: number }>();
  for (const r of rows) keys.set(`${r.table}\0${r.fkid}`, { table: r.table, fkid: r.fkid });
  const out: ForeignKeyOrphans[] = [];
  for (const { table, fkid } of keys.values()) {
    const fk = (
      await sql<{
        id: number;
        table: string;
        from: string;
        to: string | null;
      }>`select id, "table", "from", "to" from pragma_foreign_key_list(${table})`.execute(db)
    ).rows.find((f) => f.id === fkid);
    if (!fk) continue;
    const cols = (await sql<{ name: string }>`select name from pragma_table_info(${table})`.execute(db)).rows.map(
      (c) => c.name,
    );
    const parentColumn = fk.to ?? 'id';
    const { rows: bad } = await sql<Record<string, unknown>>`select * from ${sql.table(table)} t
      where t.${sql.ref(fk.from)} is not null
        and t.${sql.ref(fk.from)} not in (select ${sql.ref(parentColumn)} from ${sql.table(fk.table)})
      limit 1001`.execute(db);
    const describe = describeRow(cols);
    out.push({
      table,
      column: fk.from,
      parent: fk.table,
      parentColumn,
      rows: bad.map((r) => ({ row: describe(r), value: String(r[fk.from]) })),
    });
  }
  return out;
}

/** `describe` of {@link foreignKeyOrphans}: the row's id, or its columns (a set table's owner and value). */
const describeRow =
  (cols: readonly string[]) =>
  (r: Record<string, unknown>): string =>
    cols.includes('id')
      ? String(r.id)
      : cols
          .filter((c) => c !== 'position')
          .map((c) => `${c}=${String(r[c])}`)
          .join(', ');

async function postgresForeignKeyOrphans(db: Executor, table: string): Promise<ForeignKeyOrphans[]> {
  const { rows: keys } = await sql<{ column: string; parent: string; parentColumn: string }>`
    select a.attname as "column", p.relname as parent, pa.attname as "parentColumn"
    from pg_constraint k
      join pg_class c on c.oid = k.conrelid
      join pg_class p on p.oid = k.confrelid
      join pg_attribute a on a.attrelid = k.conrelid and a.attnum = k.conkey[1]
      join pg_attribute pa on pa.attrelid = k.confrelid and pa.attnum = k.confkey[1]
    where k.contype = 'f' and cardinality(k.conkey) = 1 and c.relname = ${table}
      and c.relnamespace = current_schema()::regnamespace
    order by k.conname`.execute(db);
  if (keys.length === 0) return [];
  const cols = (
    await sql<{ name: string }>`select attname as name from pg_attribute
      where attrelid = (select oid from pg_class where relname = ${table}
        and relnamespace = current_schema()::regnamespace)
        and attnum > 0 and not attisdropped order by attnum`.execute(db)
  ).rows.map((c) => c.name);
  const out: ForeignKeyOrphans[] = [];
  for (const fk of keys) {
    const { rows: bad } = await sql<Record<string, unknown>>`select * from ${sql.table(table)} t
      where t.${sql.ref(fk.column)} is not null
        and not exists (select 1 from ${sql.table(fk.parent)} p
          where p.${sql.ref(fk.parentColumn)} = t.${sql.ref(fk.column)})
      limit 1001`.execute(db);
    if (bad.length === 0) continue;
    out.push({
      table,
      ...fk,
      rows: bad.map((r) => ({ row: describeRow(cols)(r), value: String(r[fk.column]) })),
    });
  }
  return out;
}

/** Deletes the rows of `table` whose `column` names no row of `parent` (their dependants cascade). */
export async function deleteForeignKeyOrphans(
  db: Executor,
  fk: Pick<ForeignKeyOrphans, 'table' | 'column' | 'parent' | 'parentColumn'>,
): Promise<void> {
  await sql`delete from ${sql.table(fk.table)} where ${sql.ref(fk.column)} is not null
    and ${sql.ref(fk.column)} not in (select ${sql.ref(fk.parentColumn)} from ${sql.table(fk.parent)})`.execute(db);
}

/** Points the rows of `table` whose `column` names no row of `parent` at `value` instead. */
export async function resetForeignKeyOrphans(
  db: Executor,
  fk: Pick<ForeignKeyOrphans, 'table' | 'column' | 'parent' | 'parentColumn'>,
  value: string,
): Promise<void> {
  await sql`update ${sql.table(fk.table)} set ${sql.ref(fk.column)} = ${value}
    where ${sql.ref(fk.column)} is not null
      and ${sql.ref(fk.column)} not in (select ${sql.ref(fk.parentColumn)} from ${sql.table(fk.parent)})`.execute(db);
}

/** `@id` entries of a role-list table that name no row of `targetTable`. */
export async function danglingIdRoles(
  db: Executor,
  rolesTable: string,
  targetTable: string,
): Promise<{ ownerId: string; value: string }[]> {
  const { rows } = await sql<{ ownerId: string; value: string }>`select r."ownerId", r."value"
    from ${sql.table(rolesTable)} r
    where r."value" >= '@' and r."value" < 'A'
      and substr(r."value", 2) not in (select id from ${sql.table(targetTable)})
    order by r."ownerId", r."value"`.execute(db);
  return rows;
}

/** Removes one role entry of one policy. */
export async function deleteRoleEntry(db: Executor, rolesTable: string, ownerId: string, value: string): Promise<void> {
  await dynamic(db).deleteFrom(rolesTable).where('ownerId', '=', ownerId).where('value', '=', value).execute();
}

/** Terminators whose router is neither an edge router nor a transit router (no foreign key can say so). */
export async function orphanTerminators(db: Executor): Promise<{ id: string; routerId: string }[]> {
  const { rows } = await sql<{ id: string; routerId: string }>`select id, "routerId" from terminators
    where "routerId" not in (select id from edge_routers) and "routerId" not in (select id from transit_routers)
    order by id`.execute(db);
  return rows;
}

export async function deleteTerminators(db: Executor, ids: readonly string[]): Promise<void> {
  if (ids.length > 0) await db.deleteFrom('terminators').where('id', 'in', ids).execute();
}

export interface SystemPolicyRow {
  id: string;
  name: string;
  semantic: string;
  identityRoles: string[];
  edgeRouterRoles: string[];
}

/** Edge routers, with whether they are tunneler-enabled. */
export async function edgeRouterTunnelers(db: Executor): Promise<{ id: string; name: string; tunneler: boolean }[]> {
  const rows = await db.selectFrom('edge_routers').select(['id', 'name', 'isTunnelerEnabled']).orderBy('id').execute();
  return rows.map((r) => ({ id: r.id, name: r.name, tunneler: Boolean(r.isTunnelerEnabled) }));
}

/** Every system edge router policy with its two role lists. */
export async function systemEdgeRouterPolicies(db: Executor): Promise<SystemPolicyRow[]> {
  const rows = await db
    .selectFrom('edge_router_policies')
    .select(['id', 'name', 'semantic'])
    .where('isSystem', '=', boolToDb(true))
    .orderBy('id')
    .execute();
  const roles = async (table: 'edge_router_policies_identityRoles' | 'edge_router_policies_edgeRouterRoles') =>
    db.selectFrom(table).select(['ownerId', 'value']).orderBy('position').execute();
  const [ids, routers] = await Promise.all([
    roles('edge_router_policies_identityRoles'),
    roles('edge_router_policies_edgeRouterRoles'),
  ]);
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    semantic: r.semantic,
    identityRoles: ids.filter((x) => x.ownerId === r.id).map((x) => x.value),
    edgeRouterRoles: routers.filter((x) => x.ownerId === r.id).map((x) => x.value),
  }));
}

/** Identities with the given ids, with their name and type. */
export async function identitiesByIds(
  db: Executor,
  ids: readonly string[],
): Promise<{ id: string; name: string; typeId: string }[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('identities').select(['id', 'name', 'typeId']).where('id', 'in', ids).execute();
}

/** The names of the access-marker rows present. */
export async function markerNames(db: Executor): Promise<string[]> {
  const rows = await db.selectFrom('access_markers').select('name').orderBy('name').execute();
  return rows.map((r) => r.name);
}

export async function insertMarker(db: Executor, name: string, changedAt: string): Promise<void> {
  await db.insertInto('access_markers').values({ name, gen: 0, changedAt }).execute();
}

export async function deleteMarker(db: Executor, name: string): Promise<void> {
  await db.deleteFrom('access_markers').where('name', '=', name).execute();
}

/** Moves every marker on, so every cache of the access engine misses after a repair. */
export async function bumpAllMarkers(db: Executor, changedAt: string): Promise<void> {
  await sql`update access_markers set gen = gen + 1, "changedAt" = ${changedAt}`.execute(db);
}

/** Gives a tunneler router's identity back the Router type and the router's name. */
export async function restoreRouterIdentity(db: Executor, id: string, name: string, updatedAt: string): Promise<void> {
  await db.updateTable('identities').set({ name, typeId: 'Router', updatedAt }).where('id', '=', id).execute();
}
