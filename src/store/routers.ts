/** Edge and transit routers: existence and the cross-kind name check (queries only). */
import type { TypedExecutor } from './executor.js';
import { boolToDb } from './values.js';

export type RouterTable = 'edge_routers' | 'transit_routers';

export async function edgeRouterExists(db: TypedExecutor, id: string): Promise<boolean> {
  return (await db.selectFrom('edge_routers').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

/** Whether a router of the kind stored in `table` already has this name. */
export async function routerNameTaken(db: TypedExecutor, table: RouterTable, name: string): Promise<boolean> {
  return (await db.selectFrom(table).select('id').where('name', '=', name).executeTakeFirst()) !== undefined;
}

/** Whether an edge or a transit router has this id. */
export async function routerExists(db: TypedExecutor, id: string): Promise<boolean> {
  return (
    (await edgeRouterExists(db, id)) ||
    (await db.selectFrom('transit_routers').select('id').where('id', '=', id).executeTakeFirst()) !== undefined
  );
}

/** The id of the router of this kind whose client certificate has this fingerprint, if any. */
export async function routerIdByFingerprint(
  db: TypedExecutor,
  table: RouterTable,
  fingerprint: string,
): Promise<string | undefined> {
  return (await db.selectFrom(table).select('id').where('fingerprint', '=', fingerprint).executeTakeFirst())?.id;
}

/** Sets a router's client certificate (verified), or with null forgets it (unverified). */
export async function setRouterCertificate(
  db: TypedExecutor,
  table: RouterTable,
  id: string,
  cert: { fingerprint: string; certPem: string } | null,
  updatedAt: string,
): Promise<void> {
  await db
    .updateTable(table)
    .set({
      isVerified: boolToDb(cert !== null),
      fingerprint: cert?.fingerprint ?? null,
      certPem: cert?.certPem ?? null,
      unverifiedFingerprint: null,
      unverifiedCertPem: null,
      updatedAt,
    })
    .where('id', '=', id)
    .execute();
}

/** The column naming a router's owner in `enrollments`. */
export type RouterEnrollmentColumn = 'edgeRouterId' | 'transitRouterId';

export interface RouterEnrollmentRow {
  id: string;
  routerId: string;
  jwtTemplate: string;
  createdAt: string;
  expiresAt: string;
}

/** The outstanding enrollments of some routers of one kind. */
export async function enrollmentsOfRouters(
  db: TypedExecutor,
  column: RouterEnrollmentColumn,
  routerIds: readonly string[],
): Promise<RouterEnrollmentRow[]> {
  if (routerIds.length === 0) return [];
  const rows = await db
    .selectFrom('enrollments')
    .select((eb) => ['id', eb.ref(column).as('routerId'), 'jwtTemplate', 'createdAt', 'expiresAt'])
    .where(column, 'in', routerIds)
    .execute();
  return rows.flatMap(({ routerId, ...r }) => (routerId === null ? [] : [{ ...r, routerId }]));
}

/** Deletes an edge router's outstanding enrollments. */
export async function deleteEdgeRouterEnrollments(db: TypedExecutor, routerId: string): Promise<void> {
  await db.deleteFrom('enrollments').where('edgeRouterId', '=', routerId).execute();
}
