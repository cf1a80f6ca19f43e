/**
 * Forward-only, append-only migrations, listed statically so bundling keeps working.
 * Never reorder or rename an entry: the name is what the store records as applied.
 */
import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import * as m0001 from './0001-foundation.js';
import * as m0002 from './0002-services-policies.js';
import * as m0003 from './0003-enrollments.js';
import * as m0004 from './0004-cas-session-certs.js';
import * as m0005 from './0005-access-sessions.js';

const MIGRATIONS: Record<string, Migration> = {
  '0001-foundation': m0001,
  '0002-services-policies': m0002,
  '0003-enrollments': m0003,
  '0004-cas-session-certs': m0004,
  '0005-access-sessions': m0005,
};

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function migrateToLatest(db: Kysely<any>): Promise<void> {
  const migrator = new Migrator({ db, provider, migrationTableName: 'schema_migrations', migrationLockTableName: 'schema_migrations_lock' });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(`database migration ${failed ?? ''} failed: ${(error as Error).message ?? error}`);
  }
}

export const migrationNames = Object.keys(MIGRATIONS);
