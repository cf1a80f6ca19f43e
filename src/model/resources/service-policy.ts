/** Service policies: which identities may Dial or Bind which services, under which posture checks (seed §2.13). */
import { Type } from '../schema-type.js';
import { SERVICE_POLICY } from '../policy/kinds.js';
import { policyResource } from '../policy/policy-resource.js';

export const servicePolicies = policyResource({
  kind: SERVICE_POLICY,
  label: 'service policy',
  schemaName: 'servicePolicy',
  props: {
    type: {
      schema: Type.Union([Type.Literal('Dial'), Type.Literal('Bind')]),
      storage: 'text',
      create: 'required',
      update: 'required',
      patch: true,
      filter: true,
    },
  },
  ops: {
    list: 'listServicePolicies',
    create: 'createServicePolicy',
    detail: 'detailServicePolicy',
    update: 'updateServicePolicy',
    patch: 'patchServicePolicy',
    delete: 'deleteServicePolicy',
  },
  envelopes: { list: 'listServicePoliciesEnvelope', detail: 'detailServicePolicyEnvelop' },
});
