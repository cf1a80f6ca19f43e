/**
 * Which engine a store runs on, and the few facts about SQL text that differ between them. The store keeps
 * one SQL text per query wherever it can: PostgreSQL stores get functions with SQLite's names and meanings
 * (pg/portable-functions.ts), so only what cannot be shared (placeholders, triggers, substring indexes, file
 * operations) asks for the kind.
 */
import { PostgresAdapter } from 'kysely';

export type StoreKind = 'sqlite' | 'postgres';

/** Anything that runs queries: a Kysely instance or one of its transactions. */
interface HasExecutor {
  getExecutor(): { readonly adapter: unknown };
}

export const storeKind = (db: HasExecutor): StoreKind =>
  db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';

/** Whether a store target names a PostgreSQL database rather than a SQLite file. */
export const isPostgresTarget = (target: string): boolean => /^postgres(ql)?:\/\//i.test(target);

/**
 * The text with its `?` placeholders numbered as PostgreSQL wants them (`$1`, `$2`…). Quoted literals and
 * identifiers are left alone, so a `?` inside one is not a placeholder.
 */
export function numberedPlaceholders(text: string): string {
  let out = '';
  let n = 0;
  let quote: string | undefined;
  for (const ch of text) {
    if (quote) {
      if (ch === quote) quote = undefined;
      out += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      out += ch;
    } else if (ch === '?') out += `$${++n}`;
    else out += ch;
  }
  return out;
}
