/**
 * Generic persistence of resources: rows in the resource's table, set properties in link tables
 * (`<table>_<prop>` with ownerId, value, position). Every function takes the executor first so callers
 * can compose them inside one transaction.
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Executor } from './db.js';
import { setTable, storedProps, type PropDef, type ResourceDef, type Row } from '../model/resource.js';
import { mapConstraintError } from './constraints.js';

const BASE_COLUMNS = ['id', 'createdAt', 'updatedAt', 'tags', 'isSystem'] as const;
const SET_INSERT_BATCH = 500;

function toDb(p: PropDef | undefined, v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (!p) return v;
  switch (p.storage) {
    case 'bool':
      return v ? 1 : 0;
    case 'json':
      return JSON.stringify(v);
    default:
      return v;
  }
}

function fromDb(p: PropDef, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (p.storage) {
    case 'bool':
      return v === 1 || v === true || v === '1';
    case 'json':
      return typeof v === 'string' ? JSON.parse(v) : v;
    default:
      return v;
  }
}

/** Splits a record into table columns and set values. */
function columnsOf(def: ResourceDef, values: Row): { cols: Row; sets: Record<string, string[] | null> } {
  const cols: Row = {};
  const sets: Record<string, string[] | null> = {};
  for (const [k, v] of Object.entries(values)) {
    if (v === undefined) continue;
    if ((BASE_COLUMNS as readonly string[]).includes(k)) {
      cols[k] = k === 'tags' ? JSON.stringify(v ?? {}) : k === 'isSystem' ? (v ? 1 : 0) : v;
      continue;
    }
    const p = def.props[k];
    if (!p || p.virtual) continue;
    if (p.storage === 'set') sets[k] = (v as string[] | null) ?? null;
    else cols[k] = toDb(p, v);
  }
  return { cols, sets };
}

async function writeSets(db: Executor, def: ResourceDef, id: string, sets: Record<string, string[] | null>, replace: boolean) {
  for (const [prop, values] of Object.entries(sets)) {
    const table = setTable(def, prop);
    if (replace) await db.deleteFrom(table).where('ownerId', '=', id).execute();
    const unique = [...new Set(values ?? [])];
    if (unique.length === 0) continue;
    // Batches keep each statement well under SQLite's bound-parameter limit (three per row).
    for (let i = 0; i < unique.length; i += SET_INSERT_BATCH) {
      await db
        .insertInto(table)
        .values(unique.slice(i, i + SET_INSERT_BATCH).map((value, j) => ({ ownerId: id, value, position: i + j })))
        .execute();
    }
  }
}

/** Converts a stored row (plus its loaded sets) into the record's property values. */
export function fromRow(def: ResourceDef, raw: Row): Row {
  const out: Row = {
    id: raw.id,
    createdAt: raw.createdAt,
    updatedAt: raw.updatedAt,
    tags: typeof raw.tags === 'string' ? JSON.parse(raw.tags) : (raw.tags ?? {}),
    isSystem: raw.isSystem === 1 || raw.isSystem === true,
  };
  for (const [k, p] of storedProps(def)) {
    out[k] = p.storage === 'set' ? (raw[k] ?? []) : fromDb(p, raw[k]);
  }
  return out;
}

/** Loads the set properties of a page of rows with one query per set. */
async function loadSets(db: Executor, def: ResourceDef, rows: Row[]): Promise<void> {
  const setProps = storedProps(def).filter(([, p]) => p.storage === 'set');
  if (setProps.length === 0 || rows.length === 0) return;
  const byId = new Map(rows.map((r) => [r.id as string, r]));
  for (const [prop] of setProps) {
    for (const r of rows) r[prop] = [];
    const ids = [...byId.keys()];
    for (let i = 0; i < ids.length; i += 500) {
      const links = await db
        .selectFrom(setTable(def, prop))
        .select(['ownerId', 'value'])
        .where('ownerId', 'in', ids.slice(i, i + 500))
        .orderBy('ownerId')
        .orderBy('position')
        .execute();
      for (const l of links) (byId.get(l.ownerId)![prop] as string[]).push(l.value);
    }
  }
}

export async function insertRow(db: Executor, def: ResourceDef, values: Row): Promise<void> {
  const { cols, sets } = columnsOf(def, values);
  try {
    await db.insertInto(def.table).values(cols).execute();
    await writeSets(db, def, values.id as string, sets, false);
  } catch (e) {
    throw mapConstraintError(e, (f) => values[f]);
  }
}

export async function updateRow(db: Executor, def: ResourceDef, id: string, values: Row): Promise<void> {
  const { cols, sets } = columnsOf(def, values);
  try {
    if (Object.keys(cols).length > 0) await db.updateTable(def.table).set(cols).where('id', '=', id).execute();
    await writeSets(db, def, id, sets, true);
  } catch (e) {
    throw mapConstraintError(e, (f) => values[f]);
  }
}

export async function deleteRow(db: Executor, def: ResourceDef, id: string): Promise<boolean> {
  try {
    const res = await db.deleteFrom(def.table).where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  } catch (e) {
    throw mapConstraintError(e);
  }
}

export async function findRows(db: Executor, def: ResourceDef, where: RawBuilder<SqlBool>): Promise<Row[]> {
  const raws = (await db.selectFrom(`${def.table} as t`).selectAll().where(where).execute()) as Row[];
  await loadSets(db, def, raws);
  return raws.map((r) => fromRow(def, r));
}

export async function findRowById(db: Executor, def: ResourceDef, id: string): Promise<Row | undefined> {
  const [row] = await findRows(db, def, sql<SqlBool>`${sql.ref('t.id')} = ${id}`);
  return row;
}

export interface PageQuery {
  where: RawBuilder<SqlBool> | null;
  orderBy: { expr: RawBuilder<unknown>; direction: 'asc' | 'desc' }[];
  limit: number;
  offset: number;
}

/** One page of rows plus the number of all matches. The table is aliased `t` for the filter's SQL. */
export async function pageRows(db: Executor, def: ResourceDef, q: PageQuery): Promise<{ rows: Row[]; total: number }> {
  const where = q.where ?? sql<SqlBool>`1 = 1`;
  const countRow = await db
    .selectFrom(`${def.table} as t`)
    .select(sql<number>`count(*)`.as('n'))
    .where(where)
    .executeTakeFirst();
  let query = db.selectFrom(`${def.table} as t`).selectAll('t').where(where);
  for (const o of q.orderBy) query = query.orderBy(o.expr, o.direction);
  if (q.orderBy.length === 0) query = query.orderBy('t.id', 'asc');
  const raws = (await query.limit(q.limit).offset(q.offset).execute()) as Row[];
  await loadSets(db, def, raws);
  return { rows: raws.map((r) => fromRow(def, r)), total: Number(countRow?.n ?? 0) };
}
