/**
 * Edge router policies: which identities may connect to which edge routers (seed §2.13). System policies of
 * tunneler-enabled routers (§2.7) are shown with `isSystem` and cannot be changed or deleted.
 */
import { EDGE_ROUTER_POLICY } from '../policy/kinds.js';
import { policyResource } from '../policy/policy-resource.js';

export const edgeRouterPolicies = policyResource({
  kind: EDGE_ROUTER_POLICY,
  label: 'edge router policy',
  schemaName: 'edgeRouterPolicy',
  showSystem: true,
  ops: {
    list: 'listEdgeRouterPolicies',
    create: 'createEdgeRouterPolicy',
    detail: 'detailEdgeRouterPolicy',
    update: 'updateEdgeRouterPolicy',
    patch: 'patchEdgeRouterPolicy',
    delete: 'deleteEdgeRouterPolicy',
  },
  envelopes: { list: 'listEdgeRouterPoliciesEnvelope', detail: 'detailEdgeRouterPolicyEnvelope' },
});
