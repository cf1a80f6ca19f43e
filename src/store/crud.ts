/**
 * Generic persistence of resources: rows in the resource's table, set properties in link tables
 * (`<table>_<prop>` with ownerId, value, position). Every function takes the executor first so callers
 * can compose them inside one transaction.
 *
 * A table is described by a {@link StoredTable}: the store's own small view of a resource (its table and
 * each property's storage kind). The model's resource definitions satisfy it as they are, so they are
 * passed without conversion and the store reads nothing else of them. Constraint failures are thrown as
 * {@link ConstraintViolation}s; the model maps them to domain errors.
 */
import { sql, type RawBuilder, type SelectType, type SqlBool } from 'kysely';
import { dynamic, type Executor } from './db.js';
import { describeConstraintError } from './constraints.js';
import type { Scope } from './scopes.js';
import { boolFromDb, boolToDb, countFromDb, jsonFromDb, jsonToDb } from './values.js';
import { linkTable } from './link-tables.js';
import { readWithCache } from './list-cache.js';
import { hotRows, hotWrite } from './direct.js';
import { orderedBy } from './filter-sql.js';
import type { Database } from './schema.js';

export { linkTable, linkTableField } from './link-tables.js';

/** How a property is kept: a column of the table (bool and json change shape, values.ts), or a link table (`set`). */
export type StorageKind = 'text' | 'int' | 'real' | 'bool' | 'json' | 'datetime' | 'set';

export interface StoredProp {
  readonly storage: StorageKind;
  /** Accepted in requests but not stored: the store ignores it. */
  readonly virtual?: boolean;
}

/** What the store needs to know of a resource's table. */
export interface StoredTable {
  readonly table: string;
  readonly props: Readonly<Record<string, StoredProp>>;
}

export type Row = Record<string, unknown>;

/** A table of the store, and its columns and their values as read (the generated schema.ts). */
export type TableName = keyof Database & string;
export type ColumnName<T extends TableName> = keyof Database[T] & string;
export type ColumnValue<T extends TableName, K extends ColumnName<T>> = SelectType<Database[T][K]>;

const BASE_COLUMNS = ['id', 'createdAt', 'updatedAt', 'tags', 'isSystem'] as const;

/** A row's id (text, never null): checked, so a row without one fails loudly instead of writing links to nothing. */
function idOf(row: Row): string {
  if (typeof row.id !== 'string') throw new Error('row has no text id');
  return row.id;
}

/** A set prop's value (a list of strings, or null/undefined for none); anything else is a caller's bug. */
function textListOf(k: string, v: unknown): string[] | null {
  if (v === null || v === undefined) return null;
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw new Error(`set ${k} is not a list of text`);
  return v;
}
const SET_INSERT_BATCH = 500;

/** The stored props of a table, worked out once per definition (fromRow asks for them on every row). */
const storedByProps = new WeakMap<object, [string, StoredProp][]>();
function storedEntries(t: StoredTable): [string, StoredProp][] {
  let out = storedByProps.get(t.props);
  if (!out) {
    out = Object.entries(t.props).filter(([, p]) => !p.virtual);
    storedByProps.set(t.props, out);
  }
  return out;
}

function toDb(p: StoredProp | undefined, v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (!p) return v;
  switch (p.storage) {
    case 'bool':
      return boolToDb(v);
    case 'json':
      return jsonToDb(v);
    default:
      return v;
  }
}

function fromDb(p: StoredProp, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (p.storage) {
    case 'bool':
      return boolFromDb(v);
    case 'json':
      return jsonFromDb(v);
    default:
      return v;
  }
}

/** A link table's columns, in the order its hot inserts bind them. */
const SET_COLUMNS = ['ownerId', 'value', 'position'] as const;
/** Up to this many values a set is written by a fixed text per count (a few texts), beyond it through kysely. */
const HOT_SET_ROWS = 8;
const COLUMN_NAME = /^\w+$/;

/**
 * The text of an insert of `rows` rows into `table`'s `columns` (names from a resource definition), run as a
 * hot statement (direct.ts): the query builder's compile of a 20-column insert cost more than SQLite's insert.
 * Made anew each time (a few string joins); the connection's statement cache keeps its prepared statement.
 */
function insertText(table: string, columns: readonly string[], rows = 1): string {
  for (const c of [table, ...columns]) if (!COLUMN_NAME.test(c)) throw new Error(`not a plain name: ${c}`);
  const tuple = `(${columns.map(() => '?').join(', ')})`;
  return `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values ${Array(rows).fill(tuple).join(', ')}`;
}

/** Splits a record into table columns and set values. */
function columnsOf(t: StoredTable, values: Row): { cols: Row; sets: Record<string, string[] | null> } {
  const cols: Row = {};
  const sets: Record<string, string[] | null> = {};
  for (const [k, v] of Object.entries(values)) {
    if (v === undefined) continue;
    if ((BASE_COLUMNS as readonly string[]).includes(k)) {
      cols[k] = k === 'tags' ? jsonToDb(v ?? {}) : k === 'isSystem' ? boolToDb(v) : v;
      continue;
    }
    const p = t.props[k];
    if (!p || p.virtual) continue;
    if (p.storage === 'set') sets[k] = textListOf(k, v);
    else cols[k] = toDb(p, v);
  }
  return { cols, sets };
}

async function writeSets(
  db: Executor,
  t: StoredTable,
  id: string,
  sets: Record<string, string[] | null>,
  replace: boolean,
) {
  for (const [prop, values] of Object.entries(sets)) {
    const table = linkTable(t.table, prop);
    if (replace) await dynamic(db).deleteFrom(table).where('ownerId', '=', id).execute();
    const unique = [...new Set(values ?? [])];
    if (unique.length === 0) continue;
    if (unique.length <= HOT_SET_ROWS) {
      const params: unknown[] = [];
      unique.forEach((value, position) => params.push(id, value, position));
      await hotWrite(db, insertText(table, SET_COLUMNS, unique.length), params);
      continue;
    }
    // Batches keep each statement well under SQLite's bound-parameter limit (three per row).
    for (let i = 0; i < unique.length; i += SET_INSERT_BATCH) {
      await dynamic(db)
        .insertInto(table)
        .values(unique.slice(i, i + SET_INSERT_BATCH).map((value, j) => ({ ownerId: id, value, position: i + j })))
        .execute();
    }
  }
}

/** Converts a stored row (plus its loaded sets) into the record's property values. */
export function fromRow(t: StoredTable, raw: Row): Row {
  const out: Row = {
    id: raw.id,
    createdAt: raw.createdAt,
    updatedAt: raw.updatedAt,
    tags: raw.tags === null || raw.tags === undefined ? {} : jsonFromDb(raw.tags),
    isSystem: boolFromDb(raw.isSystem),
  };
  for (const [k, p] of storedEntries(t)) {
    // Sets are copied: a listing's raw rows may be kept and shared (list-cache.ts).
    out[k] = p.storage === 'set' ? [...(textListOf(k, raw[k]) ?? [])] : fromDb(p, raw[k]);
  }
  return out;
}

/** Loads the set properties of a page of rows with one query per set. */
async function loadSets(db: Executor, t: StoredTable, rows: Row[]): Promise<void> {
  const setProps = storedEntries(t).filter(([, p]) => p.storage === 'set');
  if (setProps.length === 0 || rows.length === 0) return;
  // The ids as one JSON array: one bound value and one statement text for any page size. One record (a detail,
  // a write's before and after) is looked up by its id alone, a fixed text per link table run as a hot statement
  // (direct.ts), which every planner answers from the key's index (PostgreSQL's estimate of a JSON list's length
  // can lead it to scan the table while its statistics lag a bulk load).
  const distinct = [...new Set(rows.map(idOf))];
  const owners = sql`(select value from json_each(${JSON.stringify(distinct)}))`;
  for (const [prop] of setProps) {
    const lists = new Map<string, string[]>();
    for (const r of rows) {
      const list: string[] = [];
      r[prop] = list;
      lists.set(idOf(r), list);
    }
    if (distinct.length === 1) {
      const list = lists.get(distinct[0]!)!;
      const text = `select "value" from "${linkTable(t.table, prop)}" where "ownerId" = ? order by "position"`;
      for (const l of await hotRows<{ value: string }>(db, text, distinct)) list.push(l.value);
      continue;
    }
    const links = await dynamic(db)
      .selectFrom(linkTable(t.table, prop))
      .select(['ownerId', 'value'])
      .where('ownerId', 'in', owners)
      .orderBy('ownerId')
      .orderBy('position')
      .execute();
    for (const l of links) lists.get(l.ownerId)!.push(l.value);
  }
}

/**
 * The record a row inserted with `values` reads back as (fromRow's), worked out from what was inserted, so a
 * create need not read its row again. Undefined where only a read can tell: a stored prop without a value (its
 * column's default decides it) or a value the store would keep as another kind (a number in a text column).
 */
function insertedRecord(t: StoredTable, values: Row, cols: Row): Row | undefined {
  const { id, createdAt, updatedAt } = values;
  if (typeof id !== 'string' || typeof createdAt !== 'string' || typeof updatedAt !== 'string') return undefined;
  const out: Row = {
    id,
    createdAt,
    updatedAt,
    tags: cols.tags === undefined ? {} : jsonFromDb(cols.tags),
    isSystem: boolFromDb(cols.isSystem),
  };
  for (const [k, p] of storedEntries(t)) {
    const v = values[k];
    if (v === undefined) return undefined;
    if (p.storage === 'set') {
      // As written: without repeats, in the order given (writeSets).
      out[k] = [...new Set(textListOf(k, v))];
      continue;
    }
    if (v === null) {
      out[k] = null;
      continue;
    }
    switch (p.storage) {
      case 'text':
      case 'datetime':
        if (typeof v !== 'string') return undefined;
        out[k] = v;
        break;
      case 'int':
      case 'real':
        if (typeof v !== 'number' || !(p.storage === 'int' ? Number.isInteger(v) : Number.isFinite(v)))
          return undefined;
        out[k] = v;
        break;
      case 'bool':
        out[k] = boolFromDb(cols[k]);
        break;
      case 'json':
        // Parsed from the text stored, so the record holds what a read would (and none of the caller's objects).
        out[k] = jsonFromDb(cols[k]);
        break;
    }
  }
  return out;
}

/**
 * Inserts a row and its sets; answers the record as a read of it would (fromRow), or undefined where only a
 * read can tell (insertedRecord).
 */
export async function insertRow(db: Executor, t: StoredTable, values: Row): Promise<Row | undefined> {
  const { cols, sets } = columnsOf(t, values);
  try {
    const columns = Object.keys(cols);
    await hotWrite(db, insertText(t.table, columns), Object.values(cols));
    await writeSets(db, t, idOf(values), sets, false);
  } catch (e) {
    throw describeConstraintError(e, values);
  }
  return insertedRecord(t, values, cols);
}

export async function updateRow(db: Executor, t: StoredTable, id: string, values: Row): Promise<void> {
  const { cols, sets } = columnsOf(t, values);
  try {
    if (Object.keys(cols).length > 0) await dynamic(db).updateTable(t.table).set(cols).where('id', '=', id).execute();
    await writeSets(db, t, id, sets, true);
  } catch (e) {
    throw describeConstraintError(e, values);
  }
}

export async function deleteRow(db: Executor, t: StoredTable, id: string): Promise<boolean> {
  try {
    const res = await dynamic(db).deleteFrom(t.table).where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  } catch (e) {
    throw describeConstraintError(e);
  }
}

/** Stored rows as records, with their set values loaded. */
async function recordsOf(db: Executor, t: StoredTable, raws: Row[]): Promise<Row[]> {
  await loadSets(db, t, raws);
  return raws.map((r) => fromRow(t, r));
}

export async function findRows(db: Executor, t: StoredTable, where: RawBuilder<SqlBool>): Promise<Row[]> {
  return recordsOf(
    db,
    t,
    (await dynamic(db).selectFrom(`${t.table} as t`).selectAll().where(where).execute()) as Row[],
  );
}

/** One row by id: a fixed text per table, run on the connection directly (direct.ts); every read by id comes here. */
export async function findRowById(db: Executor, t: StoredTable, id: string): Promise<Row | undefined> {
  const [row] = await recordsOf(db, t, await hotRows<Row>(db, `select * from "${t.table}" where id = ?`, [id]));
  return row;
}

/** One ORDER BY term of a page. */
export interface PageOrder {
  expr: RawBuilder<unknown>;
  direction: 'asc' | 'desc';
}

export interface PageQuery {
  /** The filter's predicate (null: every row) and the listing's scope; both must hold. */
  where: Scope | null;
  scope?: Scope;
  orderBy: PageOrder[];
  limit: number;
  offset: number;
}

/**
 * One page of rows plus the number of all matches. The table is aliased `t` for the filter's SQL.
 *
 * The page is sorted over (sort keys, id) alone and only its own rows are read whole: a filter matching
 * thousands of rows (a substring search) otherwise carries every match's full record through the sort. The
 * total and the page's rows are kept until the next write (list-cache.ts), so a repeated listing reads
 * nothing (turning 100 wide rows into JS values costs more than finding them).
 */
export async function pageRows(db: Executor, t: StoredTable, q: PageQuery): Promise<{ rows: Row[]; total: number }> {
  const where =
    q.where && q.scope ? sql<SqlBool>`(${q.where}) and (${q.scope})` : (q.where ?? q.scope ?? sql<SqlBool>`1 = 1`);
  const from = `${t.table} as t`;
  const countQuery = dynamic(db)
    .selectFrom(from)
    .select(sql<number>`count(*)`.as('n'))
    .where(where)
    .compile();
  const total = await readWithCache(db, countQuery, async () => {
    const { rows } = await db.executeQuery<{ n: unknown }>(countQuery);
    return countFromDb(rows[0]?.n);
  });
  const order = q.orderBy.length > 0 ? q.orderBy : [{ expr: sql.ref('t.id'), direction: 'asc' as const }];
  let idsQuery = dynamic(db).selectFrom(from).select('t.id').where(where);
  for (const o of order) idsQuery = orderedBy(idsQuery, db, o);
  idsQuery = idsQuery.limit(q.limit).offset(q.offset);
  // Kept as read (with their sets), shared by later requests: fromRow copies what it hands out.
  const raws = await readWithCache(
    db,
    idsQuery.compile(),
    async () => {
      // One statement reads the page's ids in their order and then their rows.
      let page = dynamic(db).selectFrom(from).selectAll('t').where(sql.ref('t.id'), 'in', idsQuery);
      for (const o of order) page = orderedBy(page, db, o);
      const rows = (await page.execute()) as Row[];
      await loadSets(db, t, rows);
      return rows;
    },
    (rows) => rows.length + 1,
    storedEntries(t)
      .filter(([, p]) => p.storage === 'set')
      .map(([prop]) => linkTable(t.table, prop)),
  );
  return { rows: raws.map((r) => fromRow(t, r)), total };
}

/** A reference into a resource's rows from another table (e.g. a link table's ownerId naming a policy). */
export interface Referrer {
  table: string;
  column: string;
  /** Column naming the referring entity (default `id`). */
  idColumn?: string;
}

/** Up to `limit` distinct ids of the entities in `ref.table` that refer to `id`. */
export async function referringIds(db: Executor, ref: Referrer, id: string, limit: number): Promise<string[]> {
  const rows = await dynamic(db)
    .selectFrom(ref.table)
    .select(`${ref.idColumn ?? 'id'} as id`)
    .distinct()
    .where(ref.column, '=', id)
    .limit(limit)
    .execute();
  return rows.map((r: { id: string }) => r.id);
}

/**
 * The `name` column of the given rows of `table`, by id (absent ids are left out). The ids go as one JSON
 * parameter, so the text is fixed per table and runs on the connection directly (direct.ts): pages decorate
 * their references with it.
 */
export async function namesById(db: Executor, table: string, ids: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const text = `select id, name from "${table}" where id in (select value from json_each(?))`;
  for (const r of await hotRows<{ id: string; name: string }>(db, text, [JSON.stringify(ids)])) out.set(r.id, r.name);
  return out;
}
