/**
 * The posture evaluation's one query (docs/reference-notes.md §9.3): every service policy that carries posture
 * checks, with its type, name, checks and services. It runs once per change of the `serviceAccess` marker (the
 * model caches the answer), and with no posture check in the store it returns nothing.
 */
import type { TypedExecutor } from './executor.js';
import { jsonFromDb } from './values.js';

export interface PolicyCheckRow {
  policyId: string;
  policyName: string;
  policyType: string;
  checkId: string;
  checkName: string;
  typeId: string;
  createdAt: string;
  updatedAt: string;
  details: Record<string, unknown>;
}

export async function policyPostureChecks(db: TypedExecutor): Promise<PolicyCheckRow[]> {
  const rows = await db
    .selectFrom('service_policy_posture_checks as m')
    .innerJoin('service_policies as p', 'p.id', 'm.policyId')
    .innerJoin('posture_checks as c', 'c.id', 'm.entityId')
    .select([
      'm.policyId as policyId',
      'p.name as policyName',
      'p.type as policyType',
      'c.id as checkId',
      'c.name as checkName',
      'c.typeId as typeId',
      'c.createdAt as createdAt',
      'c.updatedAt as updatedAt',
      'c.details as details',
    ])
    .orderBy('m.policyId')
    .orderBy('c.name')
    .execute();
  return rows.map((r) => ({ ...r, details: (jsonFromDb(r.details) as Record<string, unknown>) ?? {} }));
}

/** The services selected by each of the policies. */
export async function servicesOfPolicies(
  db: TypedExecutor,
  policyIds: readonly string[],
): Promise<{ policyId: string; serviceId: string }[]> {
  if (policyIds.length === 0) return [];
  return db
    .selectFrom('service_policy_services')
    .select(['policyId', 'entityId as serviceId'])
    .where('policyId', 'in', policyIds)
    .execute();
}

/** An identity's sessions, for re-checking their posture after it changed. */
export async function sessionsOfIdentityForPosture(
  db: TypedExecutor,
  identityId: string,
): Promise<{ id: string; apiSessionId: string; serviceId: string; type: string }[]> {
  return db
    .selectFrom('sessions')
    .select(['id', 'apiSessionId', 'serviceId', 'type'])
    .where('identityId', '=', identityId)
    .execute();
}

/** Deletes sessions by id. */
export async function deleteSessionsByIds(db: TypedExecutor, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('sessions').where('id', 'in', ids).execute();
}
