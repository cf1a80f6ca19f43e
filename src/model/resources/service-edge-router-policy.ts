/** Service edge router policies: which edge routers may carry which services (seed §2.13). */
import { SERVICE_EDGE_ROUTER_POLICY } from '../policy/kinds.js';
import { policyResource } from '../policy/policy-resource.js';

export const serviceEdgeRouterPolicies = policyResource({
  kind: SERVICE_EDGE_ROUTER_POLICY,
  label: 'service edge router policy',
  schemaName: 'serviceEdgeRouterPolicy',
  ops: {
    list: 'listServiceEdgeRouterPolicies',
    create: 'createServiceEdgeRouterPolicy',
    detail: 'detailServiceEdgeRouterPolicy',
    update: 'updateServiceEdgeRouterPolicy',
    patch: 'patchServiceEdgeRouterPolicy',
    delete: 'deleteServiceEdgeRouterPolicy',
  },
  envelopes: { list: 'listServiceEdgeRouterPoliciesEnvelope', detail: 'detailServiceEdgePolicyEnvelope' },
});
