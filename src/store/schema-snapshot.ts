/**
 * The schema a store's migrations leave, as stable text: one line (or statement) per object, sorted. A committed
 * snapshot per engine (schema-snapshots/) is compared with a freshly migrated store by a test, so a change to
 * the migrations or to either engine's branch of them shows up as a reviewed diff of both.
 */
import { sql } from 'kysely';
import { storeKind } from './dialect.js';
import type { DynamicExecutor } from './db.js';

export async function schemaSnapshot(db: DynamicExecutor): Promise<string> {
  const lines = storeKind(db) === 'postgres' ? await postgresObjects(db) : await sqliteObjects(db);
  return `${lines.sort().join('\n')}\n`;
}

async function sqliteObjects(db: DynamicExecutor): Promise<string[]> {
  const { rows } = await sql<{ type: string; name: string; sql: string | null }>`
    select type, name, sql from sqlite_master where name not like 'sqlite_%'`.execute(db);
  return rows.map((r) => `${r.type} ${r.name}: ${(r.sql ?? '(automatic)').replace(/\s+/g, ' ')}`);
}

async function postgresObjects(db: DynamicExecutor): Promise<string[]> {
  const texts = async (q: ReturnType<typeof sql<{ line: string }>>) => (await q.execute(db)).rows.map((r) => r.line);
  return [
    ...(await texts(sql<{ line: string }>`
      select 'column ' || table_name || '.' || column_name || ': ' || data_type
        || coalesce(' collate ' || collation_name, '') || case when is_nullable = 'NO' then ' not null' else '' end
        || coalesce(' default ' || column_default, '') as line
      from information_schema.columns where table_schema = current_schema()`)),
    ...(await texts(sql<{ line: string }>`
      select 'constraint ' || c.conrelid::regclass || '.' || c.conname || ': ' || pg_get_constraintdef(c.oid) as line
      from pg_constraint c join pg_namespace n on n.oid = c.connamespace
      where n.nspname = current_schema() and c.conrelid <> 0`)),
    ...(await texts(sql<{ line: string }>`
      select 'index ' || indexname || ': ' || indexdef as line from pg_indexes where schemaname = current_schema()`)),
    ...(await texts(sql<{ line: string }>`
      select 'trigger ' || t.tgname || ': ' || pg_get_triggerdef(t.oid) as line
      from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
      where not t.tgisinternal and n.nspname = current_schema()`)),
    ...(await texts(sql<{ line: string }>`
      select 'function ' || p.proname || ': ' || regexp_replace(pg_get_functiondef(p.oid), '[[:space:]]+', ' ', 'g') as line
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = current_schema()
        and not exists (select 1 from pg_depend d where d.objid = p.oid and d.deptype = 'e')`)),
    ...(await texts(sql<{ line: string }>`
      select 'extension ' || extname as line from pg_extension where extname <> 'plpgsql'`)),
  ];
}
