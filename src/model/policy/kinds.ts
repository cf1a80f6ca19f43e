/**
 * What the policy engine relates, as plain data: the entity kinds a role list can select (targets) and, for
 * each policy kind, its role lists. Resource definitions, the access engine's queries and the affected listings
 * all read this one table, so a policy kind is described once. No side is materialised: what a role list selects
 * is answered from the role and attribute tables when asked (docs/policy-engine.md).
 * Kept free of resource imports so entity definitions can use it without import cycles.
 */

import type { PolicyTargetTable } from '../../store/policies.js';
import type { MatchSide } from '../../store/policy-match.js';

export type TargetKind = 'identity' | 'service' | 'edgeRouter' | 'postureCheck';

export interface Target {
  kind: TargetKind;
  table: PolicyTargetTable;
  /** Link table of the target's `roleAttributes` set (ownerId, value), indexed by (value, ownerId). */
  attrTable: string;
  /** Collection name, for refs and messages (`no identities found with the given ids`). */
  collection: string;
}

export const TARGETS: Readonly<Record<TargetKind, Target>> = {
  identity: { kind: 'identity', table: 'identities', attrTable: 'identities_roleAttributes', collection: 'identities' },
  service: { kind: 'service', table: 'services', attrTable: 'services_roleAttributes', collection: 'services' },
  edgeRouter: {
    kind: 'edgeRouter',
    table: 'edge_routers',
    attrTable: 'edge_routers_roleAttributes',
    collection: 'edge-routers',
  },
  postureCheck: {
    kind: 'postureCheck',
    table: 'posture_checks',
    attrTable: 'posture_checks_roleAttributes',
    collection: 'posture-checks',
  },
};

export interface PolicySide {
  /** The role-list property, e.g. `serviceRoles`. */
  prop: string;
  target: TargetKind;
  /** The role list's set table `<policyTable>_<prop>` (ownerId = policy, value = role string). */
  rolesTable: string;
}

export interface PolicyKind {
  table: string;
  collection: string;
  sides: readonly PolicySide[];
}

const side = (policyTable: string, prop: string, target: TargetKind): PolicySide => ({
  prop,
  target,
  rolesTable: `${policyTable}_${prop}`,
});

export const SERVICE_POLICY: PolicyKind = {
  table: 'service_policies',
  collection: 'service-policies',
  sides: [
    side('service_policies', 'identityRoles', 'identity'),
    side('service_policies', 'serviceRoles', 'service'),
    side('service_policies', 'postureCheckRoles', 'postureCheck'),
  ],
};

export const EDGE_ROUTER_POLICY: PolicyKind = {
  table: 'edge_router_policies',
  collection: 'edge-router-policies',
  sides: [
    side('edge_router_policies', 'identityRoles', 'identity'),
    side('edge_router_policies', 'edgeRouterRoles', 'edgeRouter'),
  ],
};

export const SERVICE_EDGE_ROUTER_POLICY: PolicyKind = {
  table: 'service_edge_router_policies',
  collection: 'service-edge-router-policies',
  sides: [
    side('service_edge_router_policies', 'serviceRoles', 'service'),
    side('service_edge_router_policies', 'edgeRouterRoles', 'edgeRouter'),
  ],
};

export const POLICY_KINDS: readonly PolicyKind[] = [SERVICE_POLICY, EDGE_ROUTER_POLICY, SERVICE_EDGE_ROUTER_POLICY];

/** The side of a policy kind that selects `target` (each kind has at most one per target). */
export function sideFor(kind: PolicyKind, target: TargetKind): PolicySide {
  const s = kind.sides.find((x) => x.target === target);
  if (!s) throw new Error(`${kind.table} has no ${target} roles`);
  return s;
}

/** A side's tables, as the store's matching SQL (src/store/policy-match.ts) takes them. */
export const matchSide = (kind: PolicyKind, side: PolicySide): MatchSide => ({
  policyTable: kind.table,
  rolesTable: side.rolesTable,
  attrTable: TARGETS[side.target].attrTable,
  targetTable: TARGETS[side.target].table,
});

/** The tables of the side of `kind` that selects `target`. */
export const matchSideOf = (kind: PolicyKind, target: TargetKind): MatchSide => matchSide(kind, sideFor(kind, target));
