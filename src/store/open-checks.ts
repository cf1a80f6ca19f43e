/**
 * Checks made when the controller opens its store, so a damaged or foreign file stops the start with a clear
 * message instead of answering 500 later (docs/decisions.md, "Store at start"), and the file modes that keep
 * the store's secrets (session tokens, password hashes) readable by the owner only.
 */
import { chmodSync, closeSync, existsSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { Migration } from 'kysely';
import { describeSchemaDifference, migratedReference, schemaDifferencesOf, tableColumnsOf } from './schema-objects.js';

export const INTEGRITY_HINT = 'check it with `edgectl db check-integrity --data-dir DIR`, or restore a backup';

export class StoreRefused extends Error {}

/** The files SQLite keeps next to the database in WAL mode. */
export const storeFiles = (file: string): string[] => [file, `${file}-wal`, `${file}-shm`, `${file}-journal`];

/**
 * Before opening: a missing file is created empty with mode 0600 (SQLite would use 0644 less the umask, and its
 * -wal/-shm files copy the database's mode); an existing empty file is refused: it is not a new store but a
 * lost one, and silently starting over would mint a new default admin.
 */
export function prepareStoreFile(file: string): void {
  if (existsSync(file)) {
    if (statSync(file).size === 0)
      throw new StoreRefused(
        `the store ${file} is empty (0 bytes): refusing to start over with a new store; ${INTEGRITY_HINT}, or remove the file to start afresh`,
      );
  } else {
    closeSync(openSync(file, 'wx', 0o600));
  }
  restrictStoreFiles(file);
}

/** Mode 0600 on the database and its companion files, whatever mode they were created with. */
export function restrictStoreFiles(file: string): void {
  for (const f of storeFiles(file)) {
    try {
      if ((statSync(f).mode & 0o777) !== 0o600) chmodSync(f, 0o600);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
}

/** SQLite's own structural check (`quick_check`): throws unless it answers `ok`. */
export function quickCheck(raw: Database.Database, file: string): void {
  const rows = raw.pragma('quick_check(5)') as { quick_check: string }[];
  const problems = rows.map((r) => r.quick_check).filter((r) => r !== 'ok');
  if (problems.length > 0)
    throw new StoreRefused(`the store ${file} is damaged (${problems.join('; ')}); ${INTEGRITY_HINT}`);
}

/**
 * After migrating: the store must record exactly the migrations this version knows (none it does not: a newer
 * edgectl wrote it), and hold every table and column they create. The expected shape is what the same
 * migrations produce in an empty in-memory database, so it never drifts from the migrations themselves.
 */
export async function checkSchema(
  raw: Database.Database,
  file: string,
  migrations: Record<string, Migration>,
): Promise<void> {
  const applied = (raw.prepare('SELECT name FROM schema_migrations').all() as { name: string }[]).map((r) => r.name);
  const unknown = applied.filter((n) => !(n in migrations));
  if (unknown.length > 0) {
    throw new StoreRefused(
      `the store ${file} was written by a newer edgectl (unknown migrations: ${unknown.join(', ')}); run that version or restore a backup`,
    );
  }
  const expected = (await migratedReference(migrations)).columns;
  const actual = tableColumnsOf(raw);
  const missing: string[] = [];
  for (const [table, cols] of expected) {
    const have = actual.get(table);
    if (!have) missing.push(`table ${table}`);
    else for (const c of cols) if (!have.includes(c)) missing.push(`column ${table}.${c}`);
  }
  if (missing.length > 0) {
    throw new StoreRefused(
      `the store ${file} does not match its recorded schema (missing ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}); ${INTEGRITY_HINT}`,
    );
  }
}

/** At most this many differences are named in a refusal. */
const NAMED = 5;

/** `items` joined, the first {@link NAMED} of them, with `…` for the rest. */
export const firstFew = (items: readonly string[]): string =>
  items.slice(0, NAMED).join('; ') + (items.length > NAMED ? `; … (${items.length} in all)` : '');

/**
 * At the controller's start, after migrating: every schema object (table, index, trigger, view) must be what
 * the recorded migrations create (schema-objects.ts). An object they do not create may be foreign logic (a
 * trigger that makes every new identity an admin), so the start is refused, naming it, before anything runs.
 */
export async function checkSchemaObjects(
  raw: Database.Database,
  file: string,
  migrations: Record<string, Migration>,
): Promise<void> {
  const differences = (await schemaDifferencesOf(raw, migrations)).map(describeSchemaDifference);
  if (differences.length === 0) return;
  throw new StoreRefused(
    `the store ${file} does not hold exactly the schema its migrations create (${firstFew(differences)}): ` +
      `it may carry logic that is not edgectl's; check it with \`edgectl db check-integrity --data-dir ${dirname(file)}\` ` +
      `(\`--fix\` drops what does not belong and recreates what is missing, after a snapshot), or restore a backup`,
  );
}

/**
 * Every problem SQLite's full `integrity_check` and the schema comparison find in a store file, read-only (the
 * offline `edgectl db check-integrity`); an empty list means none.
 */
export async function integrityProblems(file: string, migrations: Record<string, Migration>): Promise<string[]> {
  const problems: string[] = [];
  let raw: Database.Database | undefined;
  try {
    raw = new Database(file, { readonly: true, fileMustExist: true });
    const rows = raw.pragma('integrity_check(50)') as { integrity_check: string }[];
    problems.push(...rows.map((r) => r.integrity_check).filter((r) => r !== 'ok'));
    if (problems.length === 0) await checkSchema(raw, file, migrations);
  } catch (e) {
    problems.push((e as Error).message);
  } finally {
    raw?.close();
  }
  return problems;
}
