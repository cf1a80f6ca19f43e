/**
 * The access engine's policy questions as domain values: which policy side to ask (policy/kinds.ts) and how
 * the answers are folded (Dial/Bind bits). The queries themselves are the store's (`src/store/access.ts`);
 * none runs per request once its answer is cached.
 */
import type { Executor } from '../../store/db.js';
import { policiesSelectingEntity, servicesGrantedBy } from '../../store/access.js';
import { EDGE_ROUTER_POLICY, SERVICE_POLICY, sideFor } from '../policy/kinds.js';
import { matchSide } from '../policy/matches.js';

const SP_IDENTITY = matchSide(SERVICE_POLICY, sideFor(SERVICE_POLICY, 'identity'));
const ERP_IDENTITY = matchSide(EDGE_ROUTER_POLICY, sideFor(EDGE_ROUTER_POLICY, 'identity'));

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
  perms: Map<string, number>;
}

/** What a set of service policies grants: every service any of them selects, with Dial/Bind folded per service. */
export async function grantsOf(db: Executor, servicePolicyIds: readonly string[]): Promise<ServiceGrants> {
  const grants: ServiceGrants = { ids: [], perms: new Map() };
  for (const g of await servicesGrantedBy(db, servicePolicyIds)) {
    grants.ids.push(g.serviceId);
    grants.perms.set(g.serviceId, (g.dial ? DIAL : 0) | (g.bind ? BIND : 0));
  }
  return grants;
}

/** Service policies of one type that select both the identity (among `identityPolicyIds`) and the service. */
export { policiesGranting as grantingPolicies } from '../../store/access.js';
