/**
 * The offline `edgectl db` operations' view of a PostgreSQL store (the SQLite file's is maintenance.ts): what it
 * is (its migrations, size and row counts, read without migrating) and bringing it up to date. A database with
 * no `schema_migrations` table yet is an empty store: every migration pending.
 */
import { sql } from 'kysely';
import { openStore } from '../db.js';
import type { StoreFileSummary } from '../maintenance.js';

export interface PostgresStoreSummary extends StoreFileSummary {
  /** The URL with its password hidden. */
  location: string;
  /** `pg_database_size` of the store's database. */
  bytes: number;
  /** Row counts of the tables asked for that exist. */
  counts: Record<string, number>;
}

/**
 * Reads the store at `url` without changing it: its migrations against `known`, its size, and the row counts of
 * `tables`. Throws (StoreRefused, naming the URL without its password) when the server cannot be reached.
 */
export async function inspectPostgresStore(
  url: string,
  known: readonly string[],
  tables: readonly string[] = [],
): Promise<PostgresStoreSummary> {
  const store = await openStore(url, { readonly: true });
  try {
    const { db } = store;
    const present = new Set(
      (
        await sql<{ name: string }>`select tablename as name from pg_tables
          where schemaname = current_schema()`.execute(db)
      ).rows.map((r) => r.name),
    );
    const applied = present.has('schema_migrations')
      ? (await sql<{ name: string }>`select name from schema_migrations order by name`.execute(db)).rows.map(
          (r) => r.name,
        )
      : [];
    const counts: Record<string, number> = {};
    for (const t of tables) {
      if (!present.has(t)) continue;
      const { rows } = await sql<{ n: number }>`select count(*) as n from ${sql.table(t)}`.execute(db);
      counts[t] = Number(rows[0]?.n ?? 0);
    }
    const { rows } = await sql<{ n: number }>`select pg_database_size(current_database()) as n`.execute(db);
    return {
      location: store.location,
      applied,
      unknown: applied.filter((n) => !known.includes(n)),
      pending: known.filter((n) => !applied.includes(n)),
      bytes: Number(rows[0]?.n ?? 0),
      counts,
    };
  } finally {
    await store.close();
  }
}

/**
 * Applies the pending migrations to the store at `url` (under the migration lock, pg/open.ts: run from several
 * places at once, they are applied once) and answers the names applied by this call. A store migrated by a
 * newer edgectl is refused before anything is written.
 */
export async function migratePostgresStore(url: string, known: readonly string[]): Promise<string[]> {
  const before = await inspectPostgresStore(url, known);
  if (before.unknown.length > 0) return Promise.reject(newerStore(before));
  const store = await openStore(url, { verify: true });
  await store.close();
  return [...store.applied];
}

/** The refusal of a store a newer edgectl migrated. */
export function newerStore(s: Pick<PostgresStoreSummary, 'location' | 'unknown'>): Error {
  return new Error(
    `the PostgreSQL store ${s.location} was migrated by a newer edgectl (unknown migrations: ${s.unknown.join(', ')})`,
  );
}
