/**
 * The access engine's policy questions as domain values: which policy side to ask (policy/kinds.ts) and how
 * the answers are folded (Dial/Bind bits). The queries themselves are the store's (`src/store/access.ts`);
 * none runs per request once its answer is cached.
 */
import type { Executor } from '../../store/db.js';
import {
  entitiesSelectedBy,
  policiesGranting,
  policiesSelectingEntity,
  servicePoliciesSelectingService,
  servicesGrantedBy,
} from '../../store/access.js';
import { GrantedPerms } from './granted-perms.js';
import { EDGE_ROUTER_POLICY, matchSideOf, SERVICE_EDGE_ROUTER_POLICY, SERVICE_POLICY } from '../policy/kinds.js';

const SP_IDENTITY = matchSideOf(SERVICE_POLICY, 'identity');
const SP_SERVICE = matchSideOf(SERVICE_POLICY, 'service');
const ERP_IDENTITY = matchSideOf(EDGE_ROUTER_POLICY, 'identity');
const ERP_ROUTER = matchSideOf(EDGE_ROUTER_POLICY, 'edgeRouter');
const SERP_SERVICE = matchSideOf(SERVICE_EDGE_ROUTER_POLICY, 'service');
const SERP_ROUTER = matchSideOf(SERVICE_EDGE_ROUTER_POLICY, 'edgeRouter');

/** Ids of the service policies selecting the identity, sorted (a stable cache key). */
export const servicePoliciesOf = (db: Executor, identityId: string) =>
  policiesSelectingEntity(db, SP_IDENTITY, identityId);
/** Ids of the edge router policies selecting the identity, sorted (a stable cache key). */
export const edgeRouterPoliciesOf = (db: Executor, identityId: string) =>
  policiesSelectingEntity(db, ERP_IDENTITY, identityId);

export const DIAL = 1;
export const BIND = 2;

export interface ServiceGrants {
  /** Services granted by at least one of the policies, in id order (the default list order). */
  ids: string[];
  /** Permission bits per service: {@link DIAL} | {@link BIND}. */
  perms: GrantedPerms;
}

/**
 * What a set of service policies grants, asked of the store: every service any of them selects, with Dial/Bind
 * folded per service (one query; the engine computes it from its service index instead, service-index.ts).
 */
export async function grantsOf(db: Executor, servicePolicyIds: readonly string[]): Promise<ServiceGrants> {
  const rows = await servicesGrantedBy(db, SP_SERVICE, servicePolicyIds);
  return {
    ids: rows.map((g) => g.serviceId),
    perms: GrantedPerms.of(rows.map((g) => [g.serviceId, (g.dial ? DIAL : 0) | (g.bind ? BIND : 0)])),
  };
}

/** Service policies of one type that select both the identity (among `identityPolicyIds`) and the service. */
export const grantingPolicies = (
  db: Executor,
  identityPolicyIds: readonly string[],
  serviceId: string,
  type?: 'Dial' | 'Bind',
) => policiesGranting(db, SP_SERVICE, identityPolicyIds, serviceId, type);

/** The service policies selecting a service, with their type (a service write's note, changes.ts). */
export const servicePoliciesOfService = (db: Executor, serviceId: string) =>
  servicePoliciesSelectingService(db, SP_SERVICE, serviceId);

/** Edge routers selected by any of the edge router policies. */
export const routersOfEdgeRouterPolicies = (db: Executor, policyIds: readonly string[]) =>
  entitiesSelectedBy(db, ERP_ROUTER, policyIds);

/** Ids of the service edge router policies selecting a service, sorted (a stable cache key). */
export const serviceEdgeRouterPoliciesOf = (db: Executor, serviceId: string) =>
  policiesSelectingEntity(db, SERP_SERVICE, serviceId);

/** Edge routers selected by any of the service edge router policies (those serving their services). */
export const routersOfServiceEdgeRouterPolicies = (db: Executor, policyIds: readonly string[]) =>
  entitiesSelectedBy(db, SERP_ROUTER, policyIds);
