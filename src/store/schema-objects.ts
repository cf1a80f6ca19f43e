/**
 * The store's schema objects (every table, index, trigger and view in `sqlite_master`) against what its
 * recorded migrations create (docs/decisions.md, "Database operations"). The expected objects are never stored
 * anywhere: the same migrations are run in an empty in-memory database (once per process for each set of
 * migrations and list of applied ones, see {@link migratedReference}), so the comparison cannot drift from
 * them. A difference is an object no migration creates (a foreign trigger can rewrite every write the
 * controller makes), one whose statement differs, or one that is missing. The start, `db restore` and the
 * data-integrity scan all use this module; the scan's repair makes one object what the migrations say.
 */
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect, sql, type Migration } from 'kysely';
import type { Executor } from './executor.js';
import { runMigrations } from './migrations/index.js';

/** SQLite's kinds of object; PostgreSQL adds functions and rules (pg/schema-drift.ts). */
export type SchemaObjectType = 'table' | 'index' | 'trigger' | 'view' | 'function' | 'rule';

export interface SchemaObject {
  type: SchemaObjectType;
  name: string;
  /** The table an index or trigger belongs to (a table's or view's own name). */
  table: string;
  sql: string;
  /** PostgreSQL: the statement that removes the object (SQLite's are dropped by type and name). */
  drop?: string;
}

export type SchemaDifference =
  /** An object no recorded migration creates. */
  | { kind: 'foreign'; object: SchemaObject }
  /** An object the migrations create, with another statement (`object` is the store's). */
  | { kind: 'altered'; object: SchemaObject; expected: SchemaObject }
  /** An object the migrations create that the store lacks (`object` is the expected one). */
  | { kind: 'missing'; object: SchemaObject };

/**
 * Every object of the main schema except SQLite's own bookkeeping: the statistics and AUTOINCREMENT tables, and
 * the automatic indexes of UNIQUE and PRIMARY KEY constraints (no statement: their table's statement is
 * compared). The names are tested exactly: `LIKE 'sqlite_%'` would also hide an object named `sqliteX…`.
 */
const OBJECTS_SQL = `select type, name, tbl_name as "table", sql from sqlite_master
  where not (type = 'table' and name in ('sqlite_sequence', 'sqlite_stat1', 'sqlite_stat2', 'sqlite_stat3', 'sqlite_stat4'))
    and not (type = 'index' and sql is null and substr(name, 1, 17) = 'sqlite_autoindex_')
  order by type, name`;

interface ObjectRow {
  type: string;
  name: string;
  table: string;
  sql: string | null;
}

const objectsOf = (rows: readonly ObjectRow[]): SchemaObject[] =>
  rows.map((r) => ({ type: r.type as SchemaObjectType, name: r.name, table: r.table, sql: r.sql ?? '' }));

/** The objects of the database behind `raw` (a file being checked before it is served or restored). */
export function schemaObjectsOf(raw: Database.Database): SchemaObject[] {
  return objectsOf(raw.prepare(OBJECTS_SQL).all() as ObjectRow[]);
}

/** The objects of the store behind `db` (the running store, during the scan or inside the fix's transaction). */
export async function storeSchemaObjects(db: Executor): Promise<SchemaObject[]> {
  return objectsOf((await sql.raw<ObjectRow>(OBJECTS_SQL).execute(db)).rows);
}

/** The names of the migrations a store records as applied. */
export async function appliedMigrations(db: Executor): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select name from schema_migrations`.execute(db);
  return rows.map((r) => r.name);
}

/** The subset of `migrations` named in `applied`, in the migrations' own order. */
export const migrationsAt = (
  migrations: Readonly<Record<string, Migration>>,
  applied: readonly string[],
): Record<string, Migration> => Object.fromEntries(Object.entries(migrations).filter(([n]) => applied.includes(n)));

/**
 * Runs `migrations` in an empty in-memory database and answers what `read` finds there. `between` is awaited
 * before each migration (the scan lets the event loop turn: running them all takes about 100 ms).
 */
async function withMigratedReference<T>(
  migrations: Readonly<Record<string, Migration>>,
  read: (raw: Database.Database) => T,
  between?: () => Promise<void>,
): Promise<T> {
  const raw = new Database(':memory:');
  const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: raw }) });
  try {
    await runMigrations(db, migrations, between);
    return read(raw);
  } finally {
    await db.destroy();
  }
}

/** Tables and their columns (each table's sorted by name), without SQLite's internal tables. */
export function tableColumnsOf(raw: Database.Database): Map<string, string[]> {
  const shape = new Map<string, string[]>();
  const tables = raw
    .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
    .all() as { name: string }[];
  for (const { name } of tables) {
    const cols = raw.prepare(`SELECT name FROM pragma_table_info(?) ORDER BY name`).all(name) as { name: string }[];
    shape.set(
      name,
      cols.map((c) => c.name),
    );
  }
  return shape;
}

/** What a set of migrations creates in an empty database: its schema objects and its tables' columns. */
export interface MigratedReference {
  readonly objects: readonly Readonly<SchemaObject>[];
  readonly columns: ReadonlyMap<string, readonly string[]>;
}

/** How many references are kept per set of migrations (one per list of applied ones and environment). */
const REFERENCES_KEPT = 8;

/**
 * The references made from a set of migrations (what they create: in memory on SQLite, in a schema of its own on
 * PostgreSQL), per set and by key (the kind, the applied list, a server's environment). Making one runs every
 * migration (about 100 ms of CPU in memory, seconds of a server's work), and every store open (the start's
 * checks), scan and restore needs one; the answer depends on nothing but the key. The process's one memo of
 * such constants. Bounded per set: the oldest goes first; a failed one is forgotten.
 */
const references = new WeakMap<object, Map<string, Promise<unknown>>>();

/** The reference of `migrations` under `key`, made by `make` the first time it is asked for. */
export function migrationReference<T>(
  migrations: Readonly<Record<string, Migration>>,
  key: string,
  make: () => Promise<T>,
): Promise<T> {
  let made = references.get(migrations);
  if (!made) references.set(migrations, (made = new Map()));
  const known = made.get(key) as Promise<T> | undefined;
  if (known) return known;
  const reference = make();
  made.set(key, reference);
  if (made.size > REFERENCES_KEPT) made.delete(made.keys().next().value!);
  reference.catch(() => made.delete(key));
  return reference;
}

/**
 * What the migrations `applied` of `migrations` (all of them by default) create, made once per process. `between`
 * is awaited before each migration when it has to be made.
 */
export function migratedReference(
  migrations: Readonly<Record<string, Migration>>,
  applied: readonly string[] = Object.keys(migrations),
  between?: () => Promise<void>,
): Promise<MigratedReference> {
  return migrationReference(migrations, `sqlite\n${applied.join('\n')}`, () =>
    withMigratedReference(
      migrationsAt(migrations, applied),
      (raw): MigratedReference =>
        Object.freeze({
          objects: Object.freeze(schemaObjectsOf(raw).map((o) => Object.freeze(o))),
          columns: tableColumnsOf(raw),
        }),
      between,
    ),
  );
}

/** What the migrations `applied` of `migrations` create. */
export const expectedSchemaObjects = async (
  migrations: Readonly<Record<string, Migration>>,
  applied: readonly string[],
  between?: () => Promise<void>,
): Promise<readonly SchemaObject[]> => (await migratedReference(migrations, applied, between)).objects;

/**
 * A statement in a form that ignores what SQLite ignores: whitespace and comments, the case of keywords and
 * identifiers, and the quoting of identifiers. String literals are kept exactly.
 */
export function normaliseSql(text: string): string {
  const tokens: string[] = [];
  const wordy = (t: string) => /^[\p{L}\p{N}_$"]/u.test(t);
  let i = 0;
  const until = (end: string, from: number): number => {
    const j = text.indexOf(end, from);
    return j < 0 ? text.length : j;
  };
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) i++;
    else if (text.startsWith('--', i)) i = until('\n', i);
    else if (text.startsWith('/*', i)) i = until('*/', i + 2) + 2;
    else if (c === "'") {
      // A literal, '' inside it included.
      let j = i + 1;
      while (j < text.length && !(text[j] === "'" && text[j + 1] !== "'")) j += text[j] === "'" ? 2 : 1;
      tokens.push(text.slice(i, j + 1));
      i = j + 1;
    } else if (c === '"' || c === '`' || c === '[') {
      const close = c === '[' ? ']' : c;
      let j = i + 1;
      while (j < text.length && !(text[j] === close && text[j + 1] !== close)) j += text[j] === close ? 2 : 1;
      const name = text
        .slice(i + 1, j)
        .replaceAll(close + close, close)
        .toLowerCase();
      tokens.push(/^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`);
      i = j + 1;
    } else if (/[\p{L}\p{N}_$]/u.test(c)) {
      let j = i + 1;
      while (j < text.length && /[\p{L}\p{N}_$]/u.test(text[j]!)) j++;
      tokens.push(text.slice(i, j).toLowerCase());
      i = j;
    } else {
      tokens.push(c);
      i++;
    }
  }
  let out = '';
  for (let k = 0; k < tokens.length; k++) {
    if (k > 0 && wordy(tokens[k - 1]!) && wordy(tokens[k]!)) out += ' ';
    out += tokens[k];
  }
  return out;
}

const keyOf = (o: SchemaObject) => `${o.type}\0${o.name.toLowerCase()}`;

/**
 * Every difference between a store's objects and the expected ones: foreign, altered, then missing, by name
 * (`key` says which two are the same object: SQLite's names are unique per kind, whatever their case).
 */
export function compareSchema(
  actual: readonly SchemaObject[],
  expected: readonly SchemaObject[],
  key: (o: SchemaObject) => string = keyOf,
): SchemaDifference[] {
  const want = new Map(expected.map((o) => [key(o), o]));
  const have = new Set(actual.map(key));
  const out: SchemaDifference[] = [];
  for (const o of actual) {
    const e = want.get(key(o));
    if (!e) out.push({ kind: 'foreign', object: o });
    else if (normaliseSql(o.sql) !== normaliseSql(e.sql)) out.push({ kind: 'altered', object: o, expected: e });
  }
  for (const e of expected) if (!have.has(key(e))) out.push({ kind: 'missing', object: e });
  return out;
}

/** One line naming the object and what is wrong with it. */
export function describeSchemaDifference(d: SchemaDifference): string {
  const o = d.object;
  const on = o.type === 'index' || o.type === 'trigger' || o.type === 'rule';
  const what = `${o.type} ${o.name}${on ? ` on ${o.table}` : ''}`;
  switch (d.kind) {
    case 'foreign':
      return `${what} is not created by the store's migrations`;
    case 'altered':
      return `${what} differs from what the store's migrations create`;
    case 'missing':
      return `${what} is missing`;
  }
}

/** The differences of the database behind `raw` from what its recorded migrations create. */
export async function schemaDifferencesOf(
  raw: Database.Database,
  migrations: Readonly<Record<string, Migration>>,
): Promise<SchemaDifference[]> {
  const applied = (raw.prepare('select name from schema_migrations').all() as { name: string }[]).map((r) => r.name);
  return compareSchema(schemaObjectsOf(raw), await expectedSchemaObjects(migrations, applied));
}

/** The same for the store behind `db` (the data-integrity scan, which passes its pause as `between`). */
export async function storeSchemaDifferences(
  db: Executor,
  migrations: Readonly<Record<string, Migration>>,
  between?: () => Promise<void>,
): Promise<SchemaDifference[]> {
  const expected = await expectedSchemaObjects(migrations, await appliedMigrations(db), between);
  // Read after the reference is built: the store's objects as they are now, not before the pauses.
  return compareSchema(await storeSchemaObjects(db), expected);
}

/** Whether the scan's repair can make the object what the migrations say: anything but a table it lacks or alters. */
export const repairableSchemaDifference = (d: SchemaDifference): boolean =>
  d.kind === 'foreign' || d.object.type !== 'table';

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * Makes the object of `d` what the migrations create: a foreign one dropped, an altered one dropped and
 * created again, a missing one created. The store is read again first, so a repair of an object that has
 * changed since the scan still ends in the expected state. Tables are never created or rebuilt here (their rows
 * cannot be made up); a foreign table is dropped, with whatever it holds (the fix's snapshot keeps a copy).
 */
export async function repairSchemaObject(db: Executor, d: SchemaDifference): Promise<void> {
  if (!repairableSchemaDifference(d)) return;
  const { rows } = await sql<{
    type: SchemaObjectType;
    sql: string | null;
  }>`select type, sql from sqlite_master where type = ${d.object.type} and name = ${d.object.name} collate nocase`.execute(
    db,
  );
  const current = rows[0];
  const expected = d.kind === 'foreign' ? undefined : d.kind === 'altered' ? d.expected : d.object;
  if (current && expected && normaliseSql(current.sql ?? '') === normaliseSql(expected.sql)) return;
  if (current) await sql.raw(`drop ${current.type} if exists ${quoted(d.object.name)}`).execute(db);
  if (expected) await sql.raw(expected.sql).execute(db);
}

const DROP_ORDER: SchemaObjectType[] = ['view', 'rule', 'trigger', 'function', 'index', 'table'];
const CREATE_ORDER: SchemaObjectType[] = ['table', 'function', 'index', 'view', 'trigger', 'rule'];
const isVirtual = (o: SchemaObject) => normaliseSql(o.sql).startsWith('create virtual table');

/**
 * The order repairs run in: first what is dropped (views, rules and triggers before the functions, indexes and
 * tables they use, a virtual table before the shadow tables it drops with it), then what is created or
 * replaced (a function before the trigger that calls it).
 */
export function repairOrder(d: SchemaDifference): number {
  if (d.kind !== 'foreign') return 100 + CREATE_ORDER.indexOf(d.object.type);
  return DROP_ORDER.indexOf(d.object.type) * 2 + (isVirtual(d.object) ? 0 : 1);
}
