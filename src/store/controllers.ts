/**
 * The controllers registry and the controller settings (queries only; the rules are in
 * model/services/controller/). A controller upserts its row when it starts, moves `lastSeenAt` while it runs and
 * sets `stoppedAt` when it stops; the heartbeat's update moves no change counter (migration 0018).
 */
import { sql, type SqlBool } from 'kysely';
import type { TypedExecutor } from './executor.js';
import type { Scope } from './scopes.js';
import { jsonFromDb } from './values.js';

export interface ControllerRow {
  id: string;
  name: string;
  certPem: string;
  fingerprint: string;
  apiAddresses: Record<string, { url: string; version: string }[]>;
  version: string;
}

/** Records a controller that starts (again): joined and seen now, not stopped. */
export async function upsertController(db: TypedExecutor, c: ControllerRow, at: string): Promise<void> {
  const values = {
    name: c.name,
    certPem: c.certPem,
    fingerprint: c.fingerprint,
    apiAddresses: JSON.stringify(c.apiAddresses),
    version: c.version,
    lastJoinedAt: at,
    lastSeenAt: at,
    stoppedAt: null,
    updatedAt: at,
  };
  await db
    .insertInto('controllers')
    .values({ id: c.id, createdAt: at, tags: '{}', isSystem: 0, ...values })
    .onConflict((oc) => oc.column('id').doUpdateSet(values))
    .execute();
}

/** The heartbeat: whether the controller's row was still there to move. */
export async function touchController(db: TypedExecutor, id: string, at: string): Promise<boolean> {
  const r = await db.updateTable('controllers').set({ lastSeenAt: at }).where('id', '=', id).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** A clean stop: seen and stopped now. */
export async function stopController(db: TypedExecutor, id: string, at: string): Promise<void> {
  await db
    .updateTable('controllers')
    .set({ lastSeenAt: at, stoppedAt: at, updatedAt: at })
    .where('id', '=', id)
    .execute();
}

/** Forgets the controllers not seen since `before` (ISO); how many. */
export async function pruneControllers(db: TypedExecutor, before: string): Promise<number> {
  const r = await db.deleteFrom('controllers').where('lastSeenAt', '<', before).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Listed controllers: those seen at or after `since` (ISO). */
export const controllersSeenSince = (since: string): Scope => sql<SqlBool>`t."lastSeenAt" >= ${since}`;

/** The OIDC settings stored for these controller ids (`global` among them for the global ones), by id. */
export async function oidcSettingsOf(
  db: TypedExecutor,
  controllerIds: readonly string[],
): Promise<Map<string, { redirectUris?: string[]; postLogoutUris?: string[] }>> {
  if (controllerIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('controller_settings')
    .select(['controllerId', 'oidc'])
    .where('controllerId', 'in', [...controllerIds])
    .execute();
  return new Map(rows.map((r) => [r.controllerId, r.oidc ? jsonFromDb(r.oidc) : {}]));
}
