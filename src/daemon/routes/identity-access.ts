/**
 * Management operations on an identity's access: policy advice for a service (docs/reference-notes.md
 * §2.3) and the identity's own service configs (§4.7).
 */
import { Type } from '@sinclair/typebox';
import { policyAdvice } from '../../model/services/service-access/policy-advice.js';
import {
  assignIdentityServiceConfigs,
  listIdentityServiceConfigs,
  removeIdentityServiceConfigs,
  type ServiceConfigPair,
} from '../../model/services/service-access/identity-service-configs.js';
import { empty, listOf, ok } from '../http/envelope.js';
import { route, type RouteDef } from '../http/route.js';
import { MAX_SET_ITEMS } from '../../model/schemas.js';

const MGMT = ['management'] as const;
const Pairs = Type.Array(
  Type.Object({ serviceId: Type.String(), configId: Type.String() }, { additionalProperties: true }),
  { maxItems: MAX_SET_ITEMS },
);
// DELETE may name a service without a config (all of that service's) or send nothing (all).
const PairsToRemove = Type.Union([
  Type.Array(
    Type.Object({ serviceId: Type.String(), configId: Type.Optional(Type.String()) }, { additionalProperties: true }),
    { maxItems: MAX_SET_ITEMS },
  ),
  Type.Object({}),
  Type.Null(),
]);

export const identityAccessRoutes: RouteDef[] = [
  route({
    apis: MGMT,
    method: 'GET',
    path: '/identities/{id}/policy-advice/{serviceId}',
    operationId: 'getIdentityPolicyAdvice',
    tag: 'Identity',
    access: 'admin',
    success: 200,
    envelope: 'getIdentityPolicyAdviceEnvelope',
    async handler(rc) {
      return ok(await policyAdvice(rc.ctx, rc.params.id, rc.params.serviceId));
    },
  }),
  route({
    apis: MGMT,
    method: 'GET',
    path: '/identities/{id}/service-configs',
    operationId: 'listIdentitysServiceConfigs',
    tag: 'Identity',
    access: 'admin',
    success: 200,
    envelope: 'listServiceConfigsEnvelope',
    async handler(rc) {
      const data = await listIdentityServiceConfigs(rc.ctx, rc.params.id);
      return listOf(data, {
        pagination: { limit: data.length, offset: 0, totalCount: data.length },
        filterableFields: [],
      });
    },
  }),
  route({
    apis: MGMT,
    method: 'POST',
    path: '/identities/{id}/service-configs',
    operationId: 'associateIdentitysServiceConfigs',
    tag: 'Identity',
    access: 'admin',
    body: Pairs,
    success: 200,
    envelope: 'empty',
    async handler(rc) {
      await assignIdentityServiceConfigs(rc.ctx, rc.params.id, rc.body as ServiceConfigPair[]);
      return empty();
    },
  }),
  route({
    apis: MGMT,
    method: 'DELETE',
    path: '/identities/{id}/service-configs',
    operationId: 'disassociateIdentitysServiceConfigs',
    tag: 'Identity',
    access: 'admin',
    body: PairsToRemove,
    success: 200,
    envelope: 'empty',
    async handler(rc) {
      await removeIdentityServiceConfigs(
        rc.ctx,
        rc.params.id,
        Array.isArray(rc.body) ? (rc.body as ServiceConfigPair[]) : undefined,
      );
      return empty();
    },
  }),
];
