/**
 * A PostgreSQL store's schema objects against what its recorded migrations create: the PostgreSQL side of
 * schema-objects.ts (docs/decisions.md, "Database operations"). PostgreSQL keeps no statement per object as
 * `sqlite_master` does, so each object is described by what the catalog says of it (`pg_get_indexdef`,
 * `pg_get_triggerdef`, `pg_get_functiondef`, `pg_get_ruledef`, a table's columns and constraints), and the
 * expected objects are read the same way from a reference: the same migrations run in a schema of their own,
 * inside a transaction on one connection that is rolled back, so nothing of it ever stays in the database. The
 * reference is made once per process for each server environment and list of applied migrations.
 *
 * Besides SQLite's kinds (tables, indexes, triggers, views) PostgreSQL has functions (a trigger's body lives in
 * one) and rules (which can rewrite a write, as a trigger can). Extension objects (`pg_trgm`'s) and the indexes
 * behind constraints (compared with their table) are left out.
 */
import {
  CompiledQuery,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  sql,
  type DatabaseConnection,
  type Driver,
  type Migration,
  type QueryResult,
} from 'kysely';
import { randomBytes } from 'node:crypto';
import type { Executor } from '../executor.js';
import { runMigrations } from '../migrations/index.js';
import {
  appliedMigrations,
  compareSchema,
  migrationReference,
  migrationsAt,
  normaliseSql,
  type SchemaDifference,
  type SchemaObject,
  type SchemaObjectType,
} from '../schema-objects.js';
import { TextCollationPlugin } from './text-collation.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any> | Executor;

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The text with the schema's qualification of names taken out (`public.identities` → `identities`): the
 * catalog qualifies some names always, and the reference lives in another schema than the store.
 */
function unqualified(text: string, schema: string): string {
  const names = [quoted(schema), ...(/^[a-z_][a-z0-9_$]*$/.test(schema) ? [schema] : [])].map(escapeRe);
  return text.replace(new RegExp(`(^|[^\\w$".])(?:${names.join('|')})\\.(?=["\\w])`, 'g'), '$1');
}

interface Row {
  type: SchemaObjectType;
  name: string;
  table: string;
  sql: string;
  drop: string | null;
}

/** The schema objects of `schema` (the store's own when undefined: `current_schema()`), qualification removed. */
export async function postgresSchemaObjects(db: AnyDb, schema?: string): Promise<SchemaObject[]> {
  const ns = schema === undefined ? sql`current_schema()` : sql`${schema}`;
  const { rows: at } = await sql<{ schema: string }>`select ${ns}::text as schema`.execute(db);
  const name = at[0]!.schema;
  const { rows } = await sql<Row>`
    with ns as (select oid from pg_namespace where nspname = ${name}),
    ext as (select objid from pg_depend where deptype = 'e'),
    tables as (
      select 'table' as type, c.relname as name, c.relname as "table",
        'table ' || quote_ident(c.relname) || ' ('
          || coalesce((select string_agg(quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod)
                || coalesce(' collate ' || quote_ident(co.collname), '')
                || case when a.attnotnull then ' not null' else '' end
                || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), ''), ', ' order by a.attnum)
              from pg_attribute a
                left join pg_collation co on co.oid = a.attcollation and a.attcollation <> 0
                left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
              where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped), '')
          || coalesce((select '; ' || string_agg('constraint ' || quote_ident(k.conname) || ' '
                || pg_get_constraintdef(k.oid), '; ' order by k.conname)
              from pg_constraint k where k.conrelid = c.oid), '')
          || case when c.relrowsecurity then '; row level security' else '' end
          || case when c.relforcerowsecurity then ' forced' else '' end
          || ')' as sql,
        'drop table ' || quote_ident(c.relname) as drop
      from pg_class c where c.relnamespace = (select oid from ns) and c.relkind in ('r', 'p')
        and c.oid not in (select objid from ext)),
    views as (
      select 'view', c.relname, c.relname,
        'create view ' || quote_ident(c.relname) || ' as ' || pg_get_viewdef(c.oid),
        'drop view ' || quote_ident(c.relname)
      from pg_class c where c.relnamespace = (select oid from ns) and c.relkind in ('v', 'm')
        and c.oid not in (select objid from ext)),
    indexes as (
      select 'index', i.relname, t.relname, pg_get_indexdef(i.oid), 'drop index ' || quote_ident(i.relname)
      from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
      where i.relnamespace = (select oid from ns)
        and not exists (select 1 from pg_constraint k where k.conindid = i.oid and k.conrelid = t.oid)
        and i.oid not in (select objid from ext)),
    triggers as (
      select 'trigger', g.tgname, t.relname, pg_get_triggerdef(g.oid),
        'drop trigger ' || quote_ident(g.tgname) || ' on ' || quote_ident(t.relname)
      from pg_trigger g join pg_class t on t.oid = g.tgrelid
      where t.relnamespace = (select oid from ns) and not g.tgisinternal),
    rules as (
      select 'rule', r.rulename, t.relname, pg_get_ruledef(r.oid),
        'drop rule ' || quote_ident(r.rulename) || ' on ' || quote_ident(t.relname)
      from pg_rewrite r join pg_class t on t.oid = r.ev_class
      where t.relnamespace = (select oid from ns) and r.rulename <> '_RETURN'),
    functions as (
      select 'function', p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')', p.proname,
        pg_get_functiondef(p.oid),
        'drop function ' || quote_ident(p.proname) || '(' || pg_get_function_identity_arguments(p.oid) || ')'
      from pg_proc p where p.pronamespace = (select oid from ns) and p.prokind in ('f', 'p')
        and p.oid not in (select objid from ext))
    select * from tables union all select * from views union all select * from indexes
    union all select * from triggers union all select * from rules union all select * from functions
  `.execute(db);
  return rows.map((r) => ({
    type: r.type,
    name: r.name,
    table: r.table,
    sql: unqualified(r.sql, name),
    ...(r.drop !== null && { drop: r.drop }),
  }));
}

/**
 * A transaction's statements on one held connection, for a Kysely instance whose own transactions become
 * savepoints inside it: the migrations (each in a transaction of its own) run inside the reference's one
 * transaction, which is then rolled back.
 */
class SavepointDriver implements Driver {
  private readonly connection: DatabaseConnection;
  constructor(held: Kysely<unknown>) {
    this.connection = {
      executeQuery: <R>(q: CompiledQuery) => held.executeQuery(q) as Promise<QueryResult<R>>,
      streamQuery: () => {
        throw new Error('the schema reference does not stream');
      },
    };
  }
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return this.connection;
  }
  async beginTransaction(c: DatabaseConnection): Promise<void> {
    await c.executeQuery(CompiledQuery.raw('savepoint edgectl_reference_step'));
  }
  async commitTransaction(c: DatabaseConnection): Promise<void> {
    await c.executeQuery(CompiledQuery.raw('release savepoint edgectl_reference_step'));
  }
  async rollbackTransaction(c: DatabaseConnection): Promise<void> {
    await c.executeQuery(CompiledQuery.raw('rollback to savepoint edgectl_reference_step'));
  }
  async releaseConnection(): Promise<void> {}
  async destroy(): Promise<void> {}
}

/**
 * What `migrations` create on PostgreSQL: run in a fresh schema (first on the search path, before the store's
 * own schemas, where `pg_trgm` is found) inside one transaction on a connection of the store's pool, read, and
 * rolled back. `between` is awaited before each migration.
 */
export async function postgresReferenceObjects(
  db: Kysely<unknown>,
  migrations: Readonly<Record<string, Migration>>,
  between?: () => Promise<void>,
): Promise<SchemaObject[]> {
  return db.connection().execute(async (held) => {
    const path = (await sql<{ s: string }>`select unnest(current_schemas(false)) as s`.execute(held)).rows.map(
      (r) => r.s,
    );
    const schema = `edgectl_reference_${randomBytes(6).toString('hex')}`;
    await sql`begin`.execute(held);
    try {
      await sql.raw(`create schema ${quoted(schema)}`).execute(held);
      await sql.raw(`set local search_path to ${[schema, ...path].map(quoted).join(', ')}`).execute(held);
      const reference = new Kysely<unknown>({
        dialect: {
          createAdapter: () => new PostgresAdapter(),
          createDriver: () => new SavepointDriver(held),
          createIntrospector: (k) => new PostgresIntrospector(k),
          createQueryCompiler: () => new PostgresQueryCompiler(),
        },
      }).withPlugin(new TextCollationPlugin());
      await runMigrations(reference, migrations, between);
      return await postgresSchemaObjects(held, schema);
    } finally {
      await sql`rollback`.execute(held);
    }
  });
}

const keyOf = (o: SchemaObject) => `${o.type}\0${o.name}\0${o.type === 'trigger' || o.type === 'rule' ? o.table : ''}`;

/**
 * What the database's surroundings are that the reference depends on besides the migrations: the server's
 * version, the store's search path and every extension with its version and schema (`pg_trgm`'s operator classes
 * and the portable functions are found through them). Equal answers give equal references.
 */
async function referenceEnvironment(db: Kysely<unknown>): Promise<string> {
  const { rows } = await sql<{ env: string }>`select concat_ws(' | ', version(), current_schemas(false)::text,
      (select string_agg(e.extname || ' ' || e.extversion || ' in ' || n.nspname, ', ' order by e.extname)
        from pg_extension e join pg_namespace n on n.oid = e.extnamespace)) as env`.execute(db);
  return rows[0]!.env;
}

/** {@link postgresReferenceObjects} for the migrations `applied` of `migrations`, made once per environment. */
async function referenceFor(
  db: Kysely<unknown>,
  migrations: Readonly<Record<string, Migration>>,
  applied: readonly string[],
  between?: () => Promise<void>,
): Promise<readonly SchemaObject[]> {
  // Running every migration in a schema of its own takes seconds of the server's work, and its answer depends on
  // nothing but the server's environment and the applied list (a scan repeated, a fix's scans, every store of
  // one server): made once per process (schema-objects.ts).
  const key = `postgres\n${await referenceEnvironment(db)}\n${applied.join(',')}`;
  return migrationReference(migrations, key, async () =>
    Object.freeze(
      (await postgresReferenceObjects(db, migrationsAt(migrations, applied), between)).map((o) => Object.freeze(o)),
    ),
  );
}

/** Every difference of the store's objects from what its recorded migrations create. */
export async function postgresSchemaDifferences(
  db: Kysely<unknown>,
  migrations: Readonly<Record<string, Migration>>,
  between?: () => Promise<void>,
): Promise<SchemaDifference[]> {
  const applied = await appliedMigrations(db as Executor);
  const expected = await referenceFor(db, migrations, applied, between);
  return compareSchema(await postgresSchemaObjects(db), expected, keyOf);
}

/** Whether the fix can make the object what the migrations say: anything but a table (foreign tables too). */
export const repairablePostgresDifference = (d: SchemaDifference): boolean => d.object.type !== 'table';

/**
 * Makes the object of `d` what the migrations create: a foreign one dropped, an altered one replaced, a missing
 * one created. The store is read again first, so one repaired since the scan is left alone. A table is never
 * dropped or created here: its rows are not edgectl's to throw away on a database that may be shared.
 */
export async function repairPostgresSchemaObject(db: Executor, d: SchemaDifference): Promise<void> {
  if (!repairablePostgresDifference(d)) return;
  const key = keyOf(d.object);
  const current = (await postgresSchemaObjects(db)).find((o) => keyOf(o) === key);
  const expected = d.kind === 'foreign' ? undefined : d.kind === 'altered' ? d.expected : d.object;
  if (current && expected && normaliseSql(current.sql) === normaliseSql(expected.sql)) return;
  // A function is replaced in place (pg_get_functiondef says `create or replace`), so the triggers calling it
  // stay; anything else is dropped first. The expected statement names no schema: it lands in the store's.
  if (current && !(expected && current.type === 'function')) await sql.raw(current.drop!).execute(db);
  if (expected) await sql.raw(expected.sql).execute(db);
}
