/**
 * The related listings of the Management API (`/<collection>/{id}/<segment>`), as data: the entities a policy
 * selects, the policies selecting an entity, what an entity reaches through policies, and the configs of a
 * service or a config type. The daemon serves one route per entry (src/daemon/routes/related.ts) and the CLI
 * adds one sub-command per entry (src/cli/relations.ts); the scope each listing applies is `relationScope`
 * (relation-scopes.ts), kept apart because it reaches the store.
 */
import {
  EDGE_ROUTER_POLICY,
  SERVICE_EDGE_ROUTER_POLICY,
  SERVICE_POLICY,
  type PolicyKind,
  type TargetKind,
} from './policy/kinds.js';
import type { ResourceDef } from './resource.js';
import {
  configs,
  configTypes,
  edgeRouterPolicies,
  edgeRouters,
  identities,
  postureChecks,
  serviceEdgeRouterPolicies,
  servicePolicies,
  services,
} from './resources/index.js';

/** Which child records a listing shows, for parent record `id`. */
export type RelationScope =
  /** The `target` entities policy `id` selects. */
  | { kind: 'selected'; policy: PolicyKind; target: TargetKind }
  /** The policies of a kind selecting entity `id`. */
  | { kind: 'policies'; policy: PolicyKind; target: TargetKind }
  /** The `to` entities entity `id` (a `from`) reaches through policies of a kind. */
  | { kind: 'reachable'; policy: PolicyKind; from: TargetKind; to: TargetKind }
  | { kind: 'configsOfService' }
  | { kind: 'configsOfType' }
  | { kind: 'servicesOfConfig' };

export interface Relation {
  parent: ResourceDef;
  child: ResourceDef;
  /** Last path segment, e.g. `identities` in `/service-policies/{id}/identities`. */
  segment: string;
  operationId: string;
  /** The OpenAPI tag and list envelope of the reference. */
  tag: string;
  envelope: string;
  /** What the listing shows, after "list the …" (the CLI's help). */
  description: string;
  scope: RelationScope;
}

const SP = SERVICE_POLICY;
const ERP = EDGE_ROUTER_POLICY;
const SERP = SERVICE_EDGE_ROUTER_POLICY;
const ENV = {
  identities: 'listIdentitiesEnvelope',
  services: 'listServicesEnvelope',
  edgeRouters: 'listEdgeRoutersEnvelope',
  servicePolicies: 'listServicePoliciesEnvelope',
  edgeRouterPolicies: 'listEdgeRouterPoliciesEnvelope',
  serviceEdgeRouterPolicies: 'listServiceEdgeRouterPoliciesEnvelope',
  configs: 'listConfigsEnvelope',
  postureChecks: 'listPostureCheckEnvelope',
};

const selected = (policy: PolicyKind, target: TargetKind): RelationScope => ({ kind: 'selected', policy, target });
const policiesOf = (policy: PolicyKind, target: TargetKind): RelationScope => ({ kind: 'policies', policy, target });
const reachable = (policy: PolicyKind, from: TargetKind, to: TargetKind): RelationScope => ({
  kind: 'reachable',
  policy,
  from,
  to,
});

const rel = (
  parent: ResourceDef,
  child: ResourceDef,
  operationId: string,
  tag: string,
  envelope: string,
  scope: RelationScope,
  description: string,
): Relation => ({ parent, child, segment: child.name, operationId, tag, envelope, description, scope });

export const RELATIONS: readonly Relation[] = [
  // What a policy affects.
  rel(
    servicePolicies,
    identities,
    'listServicePolicyIdentities',
    'Service Policy',
    ENV.identities,
    selected(SP, 'identity'),
    'identities the service policy selects',
  ),
  rel(
    servicePolicies,
    services,
    'listServicePolicyServices',
    'Service Policy',
    ENV.services,
    selected(SP, 'service'),
    'services the service policy selects',
  ),
  rel(
    servicePolicies,
    postureChecks,
    'listServicePolicyPostureChecks',
    'Service Policy',
    ENV.postureChecks,
    selected(SP, 'postureCheck'),
    'posture checks the service policy selects',
  ),
  rel(
    edgeRouterPolicies,
    edgeRouters,
    'listEdgeRouterPolicyEdgeRouters',
    'Edge Router Policy',
    ENV.edgeRouters,
    selected(ERP, 'edgeRouter'),
    'edge routers the edge router policy selects',
  ),
  rel(
    edgeRouterPolicies,
    identities,
    'listEdgeRouterPolicyIdentities',
    'Edge Router Policy',
    ENV.identities,
    selected(ERP, 'identity'),
    'identities the edge router policy selects',
  ),
  rel(
    serviceEdgeRouterPolicies,
    edgeRouters,
    'listServiceEdgeRouterPolicyEdgeRouters',
    'Service Edge Router Policy',
    ENV.edgeRouters,
    selected(SERP, 'edgeRouter'),
    'edge routers the service edge router policy selects',
  ),
  rel(
    serviceEdgeRouterPolicies,
    services,
    'listServiceEdgeRouterPolicyServices',
    'Service Edge Router Policy',
    ENV.services,
    selected(SERP, 'service'),
    'services the service edge router policy selects',
  ),
  // Identities: the policies affecting them and what those policies give them.
  rel(
    identities,
    servicePolicies,
    'listIdentityServicePolicies',
    'Identity',
    ENV.servicePolicies,
    policiesOf(SP, 'identity'),
    'service policies that select the identity',
  ),
  rel(
    identities,
    edgeRouterPolicies,
    'listIdentitysEdgeRouterPolicies',
    'Identity',
    ENV.edgeRouterPolicies,
    policiesOf(ERP, 'identity'),
    'edge router policies that select the identity',
  ),
  rel(
    identities,
    services,
    'listIdentityServices',
    'Identity',
    ENV.services,
    reachable(SP, 'identity', 'service'),
    'services the identity may dial or bind (through service policies)',
  ),
  rel(
    identities,
    edgeRouters,
    'listIdentityEdgeRouters',
    'Identity',
    ENV.edgeRouters,
    reachable(ERP, 'identity', 'edgeRouter'),
    'edge routers the identity may connect to (through edge router policies)',
  ),
  // Services.
  rel(
    services,
    servicePolicies,
    'listServiceServicePolicies',
    'Service',
    ENV.servicePolicies,
    policiesOf(SP, 'service'),
    'service policies that select the service',
  ),
  rel(
    services,
    identities,
    'listServiceIdentities',
    'Service',
    ENV.identities,
    reachable(SP, 'service', 'identity'),
    'identities that may dial or bind the service',
  ),
  rel(
    services,
    edgeRouters,
    'listServiceEdgeRouters',
    'Service',
    ENV.edgeRouters,
    reachable(SERP, 'service', 'edgeRouter'),
    'edge routers that may carry the service (through service edge router policies)',
  ),
  rel(
    services,
    serviceEdgeRouterPolicies,
    'listServiceServiceEdgeRouterPolicies',
    'Service',
    ENV.serviceEdgeRouterPolicies,
    policiesOf(SERP, 'service'),
    'service edge router policies that select the service',
  ),
  rel(
    services,
    configs,
    'listServiceConfig',
    'Service',
    ENV.configs,
    { kind: 'configsOfService' },
    'configs of the service',
  ),
  // Edge routers.
  rel(
    edgeRouters,
    edgeRouterPolicies,
    'listEdgeRouterEdgeRouterPolicies',
    'Edge Router',
    ENV.edgeRouterPolicies,
    policiesOf(ERP, 'edgeRouter'),
    'edge router policies that select the edge router',
  ),
  rel(
    edgeRouters,
    identities,
    'listEdgeRouterIdentities',
    'Edge Router',
    ENV.identities,
    reachable(ERP, 'edgeRouter', 'identity'),
    'identities that may connect to the edge router',
  ),
  rel(
    edgeRouters,
    services,
    'listEdgeRouterServices',
    'Edge Router',
    ENV.services,
    reachable(SERP, 'edgeRouter', 'service'),
    'services the edge router may carry',
  ),
  rel(
    edgeRouters,
    serviceEdgeRouterPolicies,
    'listEdgeRouterServiceEdgeRouterPolicies',
    'Edge Router',
    ENV.serviceEdgeRouterPolicies,
    policiesOf(SERP, 'edgeRouter'),
    'service edge router policies that select the edge router',
  ),
  // Config types.
  rel(
    configTypes,
    configs,
    'listConfigsForConfigType',
    'Config',
    ENV.configs,
    { kind: 'configsOfType' },
    'configs of the config type',
  ),
  // Configs.
  rel(
    configs,
    services,
    'listConfigServices',
    'Config',
    ENV.services,
    { kind: 'servicesOfConfig' },
    'services using the config',
  ),
];
