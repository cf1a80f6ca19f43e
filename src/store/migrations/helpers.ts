/** Shared shapes for migrations: every entity table starts with the same base columns. */
import { sql, type CreateTableBuilder, type Kysely } from 'kysely';
import { storeKind } from '../dialect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/** id, createdAt, updatedAt, tags, isSystem — the fields every record has. */
export function entityTable(db: AnyDb, name: string): CreateTableBuilder<string, never> {
  return db.schema
    .createTable(name)
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('createdAt', 'text', (c) => c.notNull())
    .addColumn('updatedAt', 'text', (c) => c.notNull())
    .addColumn('tags', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('isSystem', 'integer', (c) => c.notNull().defaultTo(0)) as CreateTableBuilder<string, never>;
}

/** The link table of a set property: (ownerId, value, position), indexed both ways for policy matching. */
export async function setTable(db: AnyDb, owner: string, prop: string): Promise<void> {
  const name = `${owner}_${prop}`;
  await db.schema
    .createTable(name)
    .addColumn('ownerId', 'text', (c) => c.notNull().references(`${owner}.id`).onDelete('cascade'))
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint(`${name}_pk`, ['ownerId', 'value'])
    .execute();
  await db.schema.createIndex(`${name}_by_value`).on(name).columns(['value', 'ownerId']).execute();
}

export const nowIso = () => new Date().toISOString();
export { sql };

/** Whether the migration runs on PostgreSQL (its branches are the only place the dialects' DDL differs). */
export const onPostgres = (db: AnyDb): boolean => storeKind(db) === 'postgres';

/**
 * A table keyed by its primary key alone: SQLite's `without rowid` (each row is just its keys); PostgreSQL has
 * no rowid to leave out.
 */
export const keyedOnly = <T extends CreateTableBuilder<string, never>>(db: AnyDb, table: T): T =>
  onPostgres(db) ? table : (table.modifyEnd(sql`without rowid`) as T);

/** The current time as PostgreSQL spells every stored timestamp (ISO-8601 UTC with milliseconds). */
export const PG_NOW = `to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * A PostgreSQL trigger: its function (PL/pgSQL `body`, which ends with its own `return`) and the trigger that
 * calls it `after`/`before` the events on `table`, once per row or per statement.
 */
export async function pgTrigger(
  db: AnyDb,
  t: {
    name: string;
    table: string;
    timing: 'before' | 'after';
    events: string;
    each: 'row' | 'statement';
    body: string;
  },
): Promise<void> {
  await sql
    .raw(`create function "${t.name}"() returns trigger language plpgsql as $body$ begin ${t.body} end $body$`)
    .execute(db);
  await sql
    .raw(
      `create trigger "${t.name}" ${t.timing} ${t.events} on "${t.table}" for each ${t.each} execute function "${t.name}"()`,
    )
    .execute(db);
}
