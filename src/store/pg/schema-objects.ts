/**
 * The schema of a PostgreSQL store in the shape the change feed reads (statement-tables.ts's SchemaObject, made
 * for SQLite's `sqlite_master`): tables and views, each table's foreign keys, and each trigger written as a
 * SQLite-style `create trigger … begin <body> end` from its event and its function's source, so the feed
 * finds the tables a trigger writes the same way on both stores.
 */
import { sql, type Kysely } from 'kysely';
import type { SchemaObject } from '../statement-tables.js';

/** pg_constraint's action codes as SQL spells them. */
const ACTIONS: Readonly<Record<string, string>> = {
  a: 'no action',
  r: 'restrict',
  c: 'cascade',
  n: 'set null',
  d: 'set default',
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function loadSchemaObjects(db: Kysely<any>): Promise<SchemaObject[]> {
  const relations = await sql<{ name: string; kind: string; definition: string | null }>`
    select c.relname as name, c.relkind as kind,
      case when c.relkind = 'v' then pg_get_viewdef(c.oid) end as definition
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = current_schema() and c.relkind in ('r', 'v', 'p')`.execute(db);
  const keys = await sql<{ child: string; parent: string; onDelete: string; onUpdate: string }>`
    select c.relname as child, p.relname as parent, k.confdeltype as "onDelete", k.confupdtype as "onUpdate"
    from pg_constraint k
      join pg_class c on c.oid = k.conrelid
      join pg_class p on p.oid = k.confrelid
      join pg_namespace n on n.oid = c.relnamespace
    where k.contype = 'f' and n.nspname = current_schema()`.execute(db);
  const triggers = await sql<{ name: string; table: string; events: string; columns: string | null; body: string }>`
    select t.tgname as name, c.relname as "table",
      concat_ws(',',
        case when t.tgtype & 4 <> 0 then 'insert' end,
        case when t.tgtype & 8 <> 0 then 'delete' end,
        case when t.tgtype & 16 <> 0 then 'update' end) as events,
      (select string_agg(a.attname, ', ' order by a.attnum) from pg_attribute a
        where a.attrelid = t.tgrelid and a.attnum = any(t.tgattr)) as columns,
      p.prosrc as body
    from pg_trigger t
      join pg_class c on c.oid = t.tgrelid
      join pg_namespace n on n.oid = c.relnamespace
      join pg_proc p on p.oid = t.tgfoid
    where not t.tgisinternal and n.nspname = current_schema()`.execute(db);

  const byChild = new Map<string, { parent: string; onDelete: string; onUpdate: string }[]>();
  for (const k of keys.rows) {
    const list = byChild.get(k.child) ?? [];
    list.push({ parent: k.parent, onDelete: ACTIONS[k.onDelete] ?? '', onUpdate: ACTIONS[k.onUpdate] ?? '' });
    byChild.set(k.child, list);
  }
  const out: SchemaObject[] = relations.rows.map((r) =>
    r.kind === 'v'
      ? { type: 'view', name: r.name, table: r.name, sql: r.definition }
      : { type: 'table', name: r.name, table: r.name, sql: null, foreignKeys: byChild.get(r.name) ?? [] },
  );
  for (const t of triggers.rows) {
    for (const event of t.events.split(',').filter((e) => e !== '')) {
      const of = event === 'update' && t.columns ? ` of ${t.columns}` : '';
      out.push({
        type: 'trigger',
        name: `${t.name}:${event}`,
        table: t.table,
        sql: `create trigger "${t.name}" after ${event}${of} on "${t.table}" begin ${t.body} end`,
      });
    }
  }
  return out;
}
