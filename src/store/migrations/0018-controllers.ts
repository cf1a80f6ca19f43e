/**
 * The controllers sharing this store and their settings (docs/design.md, "Several controllers"; docs/decisions.md,
 * "Controllers and controller settings").
 *
 * - `controllers`: one row per controller that ever ran on this store, keyed by the id kept in its data dir. The
 *   controller writes its row when it starts (`lastJoinedAt`), refreshes `lastSeenAt` while it runs (a heartbeat)
 *   and sets `stoppedAt` when it stops cleanly. `apiAddresses` is JSON (api binding → `[{url, version}]`).
 * - `controller_settings`: OIDC redirect and post-logout URI lists per controller (`controllerId`), the record
 *   whose `controllerId` is `global` applying to every controller.
 *
 * On PostgreSQL both tables get their change counter and trigger (migration 0015), except the heartbeat: an update
 * of `lastSeenAt` alone moves no counter (0015's UNTRACED), so replicas' heartbeats cost no shared counter.
 */
import type { Kysely } from 'kysely';
import { entityTable, onPostgres } from './helpers.js';
import { traceTables } from './0015-change-log.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

const TABLES = ['controllers', 'controller_settings'];

export async function up(db: AnyDb): Promise<void> {
  await entityTable(db, 'controllers')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('certPem', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('ctrlAddress', 'text')
    .addColumn('apiAddresses', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('lastJoinedAt', 'text', (c) => c.notNull())
    .addColumn('lastSeenAt', 'text', (c) => c.notNull())
    .addColumn('stoppedAt', 'text')
    .execute();
  await db.schema.createIndex('controllers_by_last_seen').on('controllers').column('lastSeenAt').execute();
  await entityTable(db, 'controller_settings')
    .addColumn('controllerId', 'text', (c) => c.notNull().unique())
    .addColumn('oidc', 'text')
    .execute();

  if (!onPostgres(db)) return;
  await traceTables(db, TABLES);
}
