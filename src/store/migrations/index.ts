/**
 * Forward-only, append-only migrations, listed statically so bundling keeps working.
 * Never reorder or rename an entry: the name is what the store records as applied.
 */
import type { Kysely, Migration } from 'kysely';
import * as m0001 from './0001-foundation.js';
import * as m0002 from './0002-services-policies.js';
import * as m0003 from './0003-enrollments.js';
import * as m0004 from './0004-cas-session-certs.js';
import * as m0005 from './0005-access-sessions.js';
import * as m0006 from './0006-token-hashes.js';
import * as m0007 from './0007-builtin-config-types.js';
import * as m0008 from './0008-mfa.js';
import * as m0009 from './0009-external-jwt-signers.js';
import * as m0010 from './0010-identity-trace.js';

import * as m0011 from './0011-posture-checks.js';
import * as m0012 from './0012-search-indexes.js';
import * as m0013 from './0013-mfa-failures.js';
import * as m0014 from './0014-controller-secrets.js';
import * as m0015 from './0015-change-log.js';
import * as m0016 from './0016-posture-state.js';
import * as m0017 from './0017-replica-shared-state.js';
import * as m0018 from './0018-controllers.js';
import * as m0019 from './0019-enroll-extend-fields.js';
import * as m0020 from './0020-oidc.js';
import * as m0021 from './0021-events.js';
import * as m0022 from './0022-oidc-cert-binding.js';
import * as m0023 from './0023-oidc-login-csr.js';
import * as m0024 from './0024-replica-leases.js';
import * as m0025 from './0025-events-id-not-indexed.js';
import * as m0026 from './0026-search-index-pending.js';
import * as m0027 from './0027-policy-matches-not-stored.js';
import * as m0028 from './0028-events-plain-positions.js';

const MIGRATIONS: Record<string, Migration> = {
  '0001-foundation': m0001,
  '0002-services-policies': m0002,
  '0003-enrollments': m0003,
  '0004-cas-session-certs': m0004,
  '0005-access-sessions': m0005,
  '0006-token-hashes': m0006,
  '0007-builtin-config-types': m0007,
  '0008-mfa': m0008,
  '0009-external-jwt-signers': m0009,
  '0010-identity-trace': m0010,

  '0011-posture-checks': m0011,
  '0012-search-indexes': m0012,
  '0013-mfa-failures': m0013,
  '0014-controller-secrets': m0014,
  '0015-change-log': m0015,
  '0016-posture-state': m0016,
  '0017-replica-shared-state': m0017,
  '0018-controllers': m0018,
  '0019-enroll-extend-fields': m0019,
  '0020-oidc': m0020,
  '0021-events': m0021,
  '0022-oidc-cert-binding': m0022,
  '0023-oidc-login-csr': m0023,
  '0024-replica-leases': m0024,
  '0025-events-id-not-indexed': m0025,
  '0026-search-index-pending': m0026,
  '0027-policy-matches-not-stored': m0027,
  '0028-events-plain-positions': m0028,
};

/**
 * Applies pending migrations in order, each in one transaction together with the row that records it, so an
 * interrupted start leaves either the whole migration or none of it. (Kysely's own migrator runs SQLite
 * migrations outside transactions; SQLite supports transactional DDL, so we use it.)
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  return runMigrations(db, MIGRATIONS);
}

/**
 * Applies the pending entries of `migrations` in their order (exported for tests and the schema comparison,
 * which runs them in an empty database and, on a serving controller, waits for `between` before each one), and
 * answers the names it applied.
 */
export async function runMigrations(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  db: Kysely<any>,
  migrations: Readonly<Record<string, Migration>>,
  between?: () => Promise<void>,
): Promise<string[]> {
  await db.schema
    .createTable('schema_migrations')
    .ifNotExists()
    .addColumn('name', 'varchar(255)', (c) => c.primaryKey())
    .addColumn('timestamp', 'varchar(255)', (c) => c.notNull())
    .execute();
  const applied = new Set(
    (await db.selectFrom('schema_migrations').select('name').execute()).map((r: { name: string }) => r.name),
  );
  const done: string[] = [];
  for (const [name, migration] of Object.entries(migrations)) {
    if (applied.has(name)) continue;
    await between?.();
    try {
      await db.transaction().execute(async (trx) => {
        await migration.up(trx);
        await trx.insertInto('schema_migrations').values({ name, timestamp: new Date().toISOString() }).execute();
      });
    } catch (e) {
      throw new Error(`database migration ${name} failed: ${(e as Error).message ?? e}`);
    }
    done.push(name);
  }
  return done;
}

export const migrationNames = Object.keys(MIGRATIONS);

/** Every migration this version knows, in order (the store's start-up schema check compares against them). */
export const knownMigrations: Readonly<Record<string, Migration>> = MIGRATIONS;
