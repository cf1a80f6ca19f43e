/**
 * Sub-collection listings of the Management API: the entities a policy affects, the policies affecting an
 * entity, what an entity reaches through policies, a service's configs, a config type's configs, and the
 * role attributes in use. Each is a parent (404 when missing), a child resource and a SQL scope; paging,
 * filters and sorting are those of the child's own list.
 */
import { getRow, listEntities } from '../../model/crud.js';
import { configsOfService, configsOfType, type Scope } from '../../model/listing-scopes.js';
import { EDGE_ROUTER_POLICY, SERVICE_EDGE_ROUTER_POLICY, SERVICE_POLICY } from '../../model/policy/kinds.js';
import { policiesOf, reachableThrough, selectedByPolicy } from '../../model/policy/scopes.js';
import { renderRecord } from '../../model/render.js';
import type { ResourceDef } from '../../model/resource.js';
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
} from '../../model/resources/index.js';
import { listRoleAttributes } from '../../model/role-attributes.js';
import { listOf } from '../http/envelope.js';
import type { RouteDef } from '../http/route.js';
import { listOptions } from './crud.js';

interface Related {
  parent: ResourceDef;
  child: ResourceDef;
  /** Last path segment, e.g. `identities` in `/service-policies/{id}/identities`. */
  segment: string;
  operationId: string;
  tag: string;
  envelope: string;
  scope(id: string): Scope;
}

function relatedRoute(r: Related): RouteDef {
  return {
    apis: ['management'],
    method: 'GET',
    path: `/${r.parent.name}/{id}/${r.segment}`,
    operationId: r.operationId,
    tag: r.tag,
    access: 'admin',
    success: 200,
    envelope: r.envelope,
    async handler(rc) {
      const id = rc.params.id!;
      await getRow(rc.ctx, r.parent, id);
      const page = await listEntities(rc.ctx, r.child, listOptions(rc), r.scope(id));
      return listOf(
        page.rows.map((row) => renderRecord(r.child, row)),
        page,
      );
    },
  };
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
};

const RELATED: Related[] = [
  // What a policy affects.
  {
    parent: servicePolicies,
    child: identities,
    segment: 'identities',
    operationId: 'listServicePolicyIdentities',
    tag: 'Service Policy',
    envelope: ENV.identities,
    scope: (id) => selectedByPolicy(SP, 'identity', id),
  },
  {
    parent: servicePolicies,
    child: services,
    segment: 'services',
    operationId: 'listServicePolicyServices',
    tag: 'Service Policy',
    envelope: ENV.services,
    scope: (id) => selectedByPolicy(SP, 'service', id),
  },
  {
    parent: servicePolicies,
    child: postureChecks,
    segment: 'posture-checks',
    operationId: 'listServicePolicyPostureChecks',
    tag: 'Service Policy',
    envelope: 'listPostureCheckEnvelope',
    scope: (id) => selectedByPolicy(SP, 'postureCheck', id),
  },
  {
    parent: edgeRouterPolicies,
    child: edgeRouters,
    segment: 'edge-routers',
    operationId: 'listEdgeRouterPolicyEdgeRouters',
    tag: 'Edge Router Policy',
    envelope: ENV.edgeRouters,
    scope: (id) => selectedByPolicy(ERP, 'edgeRouter', id),
  },
  {
    parent: edgeRouterPolicies,
    child: identities,
    segment: 'identities',
    operationId: 'listEdgeRouterPolicyIdentities',
    tag: 'Edge Router Policy',
    envelope: ENV.identities,
    scope: (id) => selectedByPolicy(ERP, 'identity', id),
  },
  {
    parent: serviceEdgeRouterPolicies,
    child: edgeRouters,
    segment: 'edge-routers',
    operationId: 'listServiceEdgeRouterPolicyEdgeRouters',
    tag: 'Service Edge Router Policy',
    envelope: ENV.edgeRouters,
    scope: (id) => selectedByPolicy(SERP, 'edgeRouter', id),
  },
  {
    parent: serviceEdgeRouterPolicies,
    child: services,
    segment: 'services',
    operationId: 'listServiceEdgeRouterPolicyServices',
    tag: 'Service Edge Router Policy',
    envelope: ENV.services,
    scope: (id) => selectedByPolicy(SERP, 'service', id),
  },
  // Identities: the policies affecting them and what those policies give them.
  {
    parent: identities,
    child: servicePolicies,
    segment: 'service-policies',
    operationId: 'listIdentityServicePolicies',
    tag: 'Identity',
    envelope: ENV.servicePolicies,
    scope: (id) => policiesOf(SP, 'identity', id),
  },
  {
    parent: identities,
    child: edgeRouterPolicies,
    segment: 'edge-router-policies',
    operationId: 'listIdentitysEdgeRouterPolicies',
    tag: 'Identity',
    envelope: ENV.edgeRouterPolicies,
    scope: (id) => policiesOf(ERP, 'identity', id),
  },
  {
    parent: identities,
    child: services,
    segment: 'services',
    operationId: 'listIdentityServices',
    tag: 'Identity',
    envelope: ENV.services,
    scope: (id) => reachableThrough(SP, 'identity', id, 'service'),
  },
  {
    parent: identities,
    child: edgeRouters,
    segment: 'edge-routers',
    operationId: 'listIdentityEdgeRouters',
    tag: 'Identity',
    envelope: ENV.edgeRouters,
    scope: (id) => reachableThrough(ERP, 'identity', id, 'edgeRouter'),
  },
  // Services.
  {
    parent: services,
    child: servicePolicies,
    segment: 'service-policies',
    operationId: 'listServiceServicePolicies',
    tag: 'Service',
    envelope: ENV.servicePolicies,
    scope: (id) => policiesOf(SP, 'service', id),
  },
  {
    parent: services,
    child: identities,
    segment: 'identities',
    operationId: 'listServiceIdentities',
    tag: 'Service',
    envelope: ENV.identities,
    scope: (id) => reachableThrough(SP, 'service', id, 'identity'),
  },
  {
    parent: services,
    child: edgeRouters,
    segment: 'edge-routers',
    operationId: 'listServiceEdgeRouters',
    tag: 'Service',
    envelope: ENV.edgeRouters,
    scope: (id) => reachableThrough(SERP, 'service', id, 'edgeRouter'),
  },
  {
    parent: services,
    child: serviceEdgeRouterPolicies,
    segment: 'service-edge-router-policies',
    operationId: 'listServiceServiceEdgeRouterPolicies',
    tag: 'Service',
    envelope: ENV.serviceEdgeRouterPolicies,
    scope: (id) => policiesOf(SERP, 'service', id),
  },
  {
    parent: services,
    child: configs,
    segment: 'configs',
    operationId: 'listServiceConfig',
    tag: 'Service',
    envelope: ENV.configs,
    scope: configsOfService,
  },
  // Edge routers.
  {
    parent: edgeRouters,
    child: edgeRouterPolicies,
    segment: 'edge-router-policies',
    operationId: 'listEdgeRouterEdgeRouterPolicies',
    tag: 'Edge Router',
    envelope: ENV.edgeRouterPolicies,
    scope: (id) => policiesOf(ERP, 'edgeRouter', id),
  },
  {
    parent: edgeRouters,
    child: identities,
    segment: 'identities',
    operationId: 'listEdgeRouterIdentities',
    tag: 'Edge Router',
    envelope: ENV.identities,
    scope: (id) => reachableThrough(ERP, 'edgeRouter', id, 'identity'),
  },
  {
    parent: edgeRouters,
    child: services,
    segment: 'services',
    operationId: 'listEdgeRouterServices',
    tag: 'Edge Router',
    envelope: ENV.services,
    scope: (id) => reachableThrough(SERP, 'edgeRouter', id, 'service'),
  },
  {
    parent: edgeRouters,
    child: serviceEdgeRouterPolicies,
    segment: 'service-edge-router-policies',
    operationId: 'listEdgeRouterServiceEdgeRouterPolicies',
    tag: 'Edge Router',
    envelope: ENV.serviceEdgeRouterPolicies,
    scope: (id) => policiesOf(SERP, 'edgeRouter', id),
  },
  // Config types.
  {
    parent: configTypes,
    child: configs,
    segment: 'configs',
    operationId: 'listConfigsForConfigType',
    tag: 'Config',
    envelope: ENV.configs,
    scope: configsOfType,
  },
];

/** `GET /<x>-role-attributes`: the distinct attributes in use by one resource (§1.7). */
function roleAttributesRoute(path: string, operationId: string, def: ResourceDef): RouteDef {
  return {
    apis: ['management'],
    method: 'GET',
    path,
    operationId,
    tag: 'Role Attributes',
    access: 'admin',
    success: 200,
    envelope: 'listRoleAttributesEnvelope',
    async handler(rc) {
      const page = await listRoleAttributes(rc.ctx, def, listOptions(rc));
      return listOf(page.values, page);
    },
  };
}

export const relatedRoutes: RouteDef[] = [
  ...RELATED.map(relatedRoute),
  roleAttributesRoute('/service-role-attributes', 'listServiceRoleAttributes', services),
  roleAttributesRoute('/edge-router-role-attributes', 'listEdgeRouterRoleAttributes', edgeRouters),
];
