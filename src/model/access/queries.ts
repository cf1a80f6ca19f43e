/**
 * The SQL behind the access engine's cache entries. Each is an index walk over the stored representation
 * (docs/policy-engine.md): the policies selecting an identity through the role/attribute indexes, then the
 * materialised match rows of those policies. None evaluates a policy in JavaScript; none runs per request
 * once its answer is cached.
 */
import { sql } from 'kysely';
import { matchingPoliciesSql } from '../../store/policy-match.js';
import type { Executor } from '../../store/db.js';
import { EDGE_ROUTER_POLICY, SERVICE_POLICY, sideFor, type PolicyKind } from '../policy/kinds.js';
import { matchSide } from '../policy/matches.js';

/** Ids of the policies of `kind` whose identity roles select the identity, sorted (a stable cache key). */
async function policiesSelecting(db: Executor, kind: PolicyKind, identityId: string): Promise<string[]> {
  const { rows } = await sql<{ policyId: string }>`select x."policyId" from (${matchingPoliciesSql(matchSide(kind, sideFor(kind, 'identity')), identityId)}) x order by 1`.execute(db);
  return rows.map((r) => r.policyId);
}

export const servicePoliciesOf = (db: Executor, identityId: string) => policiesSelecting(db, SERVICE_POLICY, identityId);
export const edgeRouterPoliciesOf = (db: Executor, identityId: string) => policiesSelecting(db, EDGE_ROUTER_POLICY, identityId);

export const DIAL = 1;
export const BIND = 2;

export interface ServiceGrants {
  /** Services granted by at least one of the policies, in id order (the default list order). */
  ids: string[];
  /** Permission bits per service: {@link DIAL} | {@link BIND}. */
  perms: Map<string, number>;
}

/** What a set of service policies grants: every service any of them selects, with Dial/Bind folded per service. */
export async function grantsOf(db: Executor, servicePolicyIds: readonly string[]): Promise<ServiceGrants> {
  const grants: ServiceGrants = { ids: [], perms: new Map() };
  if (servicePolicyIds.length === 0) return grants;
  const { rows } = await sql<{ id: string; dial: number; bind: number }>`
    select m."entityId" as id, max(p.type = 'Dial') as dial, max(p.type = 'Bind') as bind
    from service_policy_services m join service_policies p on p.id = m."policyId"
    where m."policyId" in (${sql.join(servicePolicyIds)})
    group by m."entityId" order by m."entityId"`.execute(db);
  for (const r of rows) {
    grants.ids.push(r.id);
    grants.perms.set(r.id, (r.dial ? DIAL : 0) | (r.bind ? BIND : 0));
  }
  return grants;
}

/** Edge routers selected by any of the edge router policies. */
export async function routersOfPolicies(db: Executor, edgeRouterPolicyIds: readonly string[]): Promise<Set<string>> {
  if (edgeRouterPolicyIds.length === 0) return new Set();
  const { rows } = await sql<{ id: string }>`select distinct m."entityId" as id from edge_router_policy_edge_routers m
    where m."policyId" in (${sql.join(edgeRouterPolicyIds)})`.execute(db);
  return new Set(rows.map((r) => r.id));
}

/** Ids of the service edge router policies selecting a service, sorted (a stable cache key). */
export async function serviceEdgeRouterPoliciesOf(db: Executor, serviceId: string): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`select s."policyId" as id from service_edge_router_policy_services s
    where s."entityId" = ${serviceId} order by 1`.execute(db);
  return rows.map((r) => r.id);
}

/** Edge routers selected by any of the service edge router policies (those serving their services). */
export async function routersOfServicePolicies(db: Executor, policyIds: readonly string[]): Promise<Set<string>> {
  if (policyIds.length === 0) return new Set();
  const { rows } = await sql<{ id: string }>`select distinct r."entityId" as id from service_edge_router_policy_edge_routers r
    where r."policyId" in (${sql.join(policyIds)})`.execute(db);
  return new Set(rows.map((r) => r.id));
}

/** An identity's own configs per service: serviceId → configTypeId → configId. */
export async function serviceConfigOverrides(db: Executor, identityId: string): Promise<Map<string, Map<string, string>>> {
  const rows = await db
    .selectFrom('identity_service_configs')
    .select(['serviceId', 'configTypeId', 'configId'])
    .where('identityId', '=', identityId)
    .execute();
  const out = new Map<string, Map<string, string>>();
  for (const r of rows as { serviceId: string; configTypeId: string; configId: string }[]) {
    let m = out.get(r.serviceId);
    if (!m) out.set(r.serviceId, (m = new Map()));
    m.set(r.configTypeId, r.configId);
  }
  return out;
}

/** Service policies of one type that select both the identity (among `identityPolicyIds`) and the service. */
export async function grantingPolicies(
  db: Executor,
  identityPolicyIds: readonly string[],
  serviceId: string,
  type?: 'Dial' | 'Bind',
): Promise<{ id: string; name: string; type: string }[]> {
  if (identityPolicyIds.length === 0) return [];
  const { rows } = await sql<{ id: string; name: string; type: string }>`
    select p.id, p.name, p.type from service_policies p
    join service_policy_services m on m."policyId" = p.id and m."entityId" = ${serviceId}
    where p.id in (${sql.join(identityPolicyIds)}) ${type ? sql`and p.type = ${type}` : sql``}
    order by p.id`.execute(db);
  return rows;
}
