/**
 * The posture evaluation's one query (docs/reference-notes.md §9.3): every service policy that carries posture
 * checks, with its type, name, checks and services. It runs once per change of the `serviceAccess` marker (the
 * model caches the answer), and with no posture check in the store it returns nothing.
 */
import { sql } from 'kysely';
import type { TypedExecutor } from './executor.js';
import { idList } from './id-list.js';
import { matchPairsSql, type MatchSide } from './policy-match.js';
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

/**
 * Every (policy, check) pair the service policies' posture-check side selects, policy by policy, checks by
 * name. `side` is that side (`postureCheckRoles`); with no posture check in the store no pair comes out.
 */
export async function policyPostureChecks(db: TypedExecutor, side: MatchSide): Promise<PolicyCheckRow[]> {
  const { rows } = await sql<Omit<PolicyCheckRow, 'details'> & { details: unknown }>`select m."policyId" as "policyId",
      p.name as "policyName", p.type as "policyType", c.id as "checkId", c.name as "checkName", c."typeId" as "typeId",
      c."createdAt" as "createdAt", c."updatedAt" as "updatedAt", c.details as details
    from (select distinct x."policyId", x."entityId" from (${matchPairsSql(side, sql`select id from ${sql.table(side.policyTable)}`)}) x) m
    join service_policies p on p.id = m."policyId"
    join posture_checks c on c.id = m."entityId"
    order by m."policyId", c.name`.execute(db);
  return rows.map((r) => ({ ...r, details: (jsonFromDb(r.details) as Record<string, unknown>) ?? {} }));
}

/** The services selected by each of the policies; `side` is the service policies' service side. */
export async function servicesOfPolicies(
  db: TypedExecutor,
  side: MatchSide,
  policyIds: readonly string[],
): Promise<{ policyId: string; serviceId: string }[]> {
  if (policyIds.length === 0) return [];
  const { rows } = await sql<{ policyId: string; serviceId: string }>`select distinct x."policyId" as "policyId",
      x."entityId" as "serviceId"
    from (${matchPairsSql(side, idList(policyIds))}) x`.execute(db);
  return rows;
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
