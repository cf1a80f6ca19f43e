/**
 * File-level operations on a store for the offline `edgectl db` commands: an online backup, recognising an
 * edgectl store (its migrations table), and the figures of `db info`. They work on the file directly, without
 * migrating or checking its schema, so they also serve a store this version would refuse to run.
 */
import { chmodSync, closeSync, existsSync, openSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { Migration } from 'kysely';
import type { TypedExecutor } from './executor.js';
import { describeSchemaDifference, schemaDifferencesOf } from './schema-objects.js';
import { boolToDb } from './values.js';

/** The default admin and its password authenticator: the principal of offline CLI commands. */
export async function defaultAdminLogin(
  db: TypedExecutor,
): Promise<{ identityId: string; authenticatorId: string } | undefined> {
  const row = await db
    .selectFrom('identities')
    .innerJoin('authenticators', 'authenticators.identityId', 'identities.id')
    .select(['identities.id as identityId', 'authenticators.id as authenticatorId'])
    .where('identities.isDefaultAdmin', '=', boolToDb(true))
    .orderBy('authenticators.method', 'desc') // `updb` before `cert`
    .executeTakeFirst();
  return row;
}

/**
 * SQLite's online backup of `file` into `dest`, a new file created with mode 0600 before any byte is written
 * (the copy holds password hashes and token hashes). Refuses an existing `dest`.
 */
export async function backupStoreFile(file: string, dest: string): Promise<void> {
  closeSync(openSync(dest, 'wx', 0o600));
  const src = new Database(file, { readonly: true, fileMustExist: true });
  try {
    await src.backup(dest);
  } finally {
    src.close();
  }
  chmodSync(dest, 0o600);
}

export interface StoreFileSummary {
  /** The migrations the file records as applied, in the order they were applied. */
  applied: string[];
  /** Applied migrations `known` does not list: a newer edgectl wrote the file. */
  unknown: string[];
  /** Migrations of `known` not applied yet. */
  pending: string[];
}

/**
 * What a file is, as a store: throws (with the reason) when it is not an SQLite database, fails `quick_check`,
 * or has no `schema_migrations` table with at least the first migration; otherwise its migrations.
 */
export function inspectStoreFile(file: string, known: readonly string[]): StoreFileSummary {
  if (!existsSync(file)) throw new Error(`${file} does not exist`);
  if (statSync(file).size === 0) throw new Error(`${file} is empty`);
  let raw: Database.Database;
  try {
    raw = new Database(file, { readonly: true, fileMustExist: true });
  } catch (e) {
    throw new Error(`${file} cannot be opened as a database: ${(e as Error).message}`);
  }
  try {
    let check: { quick_check: string }[];
    try {
      check = raw.pragma('quick_check(5)') as { quick_check: string }[];
    } catch (e) {
      throw new Error(`${file} is not an SQLite database (${(e as Error).message})`);
    }
    const damage = check.map((r) => r.quick_check).filter((r) => r !== 'ok');
    if (damage.length > 0) throw new Error(`${file} is damaged (${damage.join('; ')})`);
    const hasTable = raw
      .prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`)
      .get();
    if (!hasTable) throw new Error(`${file} is not an edgectl store (it has no schema_migrations table)`);
    const applied = (raw.prepare('SELECT name FROM schema_migrations ORDER BY name').all() as { name: string }[]).map(
      (r) => r.name,
    );
    if (known.length > 0 && !applied.includes(known[0]!))
      throw new Error(`${file} is not an edgectl store (its migrations do not include ${known[0]})`);
    return {
      applied,
      unknown: applied.filter((n) => !known.includes(n)),
      pending: known.filter((n) => !applied.includes(n)),
    };
  } finally {
    raw.close();
  }
}

/**
 * How the schema objects of a store file differ from what its recorded migrations create (schema-objects.ts),
 * one line each, read-only; empty when they do not.
 */
export async function schemaObjectProblems(
  file: string,
  migrations: Readonly<Record<string, Migration>>,
): Promise<string[]> {
  const raw = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return (await schemaDifferencesOf(raw, migrations)).map(describeSchemaDifference);
  } finally {
    raw.close();
  }
}

/** Row counts of `tables` that exist in the file (a table an older store lacks is left out). */
export function countStoreRows(file: string, tables: readonly string[]): Record<string, number> {
  const raw = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const present = new Set(
      (raw.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as { name: string }[]).map(
        (r) => r.name,
      ),
    );
    const out: Record<string, number> = {};
    for (const t of tables) {
      if (!present.has(t)) continue;
      // The names come from the caller's fixed list and are checked against sqlite_master above.
      out[t] = (raw.prepare(`SELECT count(*) AS n FROM "${t.replace(/"/g, '""')}"`).get() as { n: number }).n;
    }
    return out;
  } finally {
    raw.close();
  }
}
