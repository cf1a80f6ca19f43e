/**
 * Posture on both APIs (docs/reference-notes.md §9): the check types, the client's posture responses, and an
 * identity's posture data and failed service requests for admins. Posture checks themselves are generic
 * CRUD (their resource definition).
 */
import { Type } from '@sinclair/typebox';
import { listPostureCheckTypes, postureCheckTypeRecord } from '../../model/posture/check-types.js';
import { identityFailedServiceRequests, identityPostureData } from '../../model/posture/data.js';
import { submitPostureResponses } from '../../model/posture/responses.js';
import type { Principal } from '../../model/services/api-session/api-session.js';
import { listOf, ok } from '../http/envelope.js';
import { route, type RequestContext, type RouteDef } from '../http/route.js';
import { listOptions } from './crud.js';

const MGMT = ['management'] as const;
const Item = Type.Object({ id: Type.String(), typeId: Type.String() }, { additionalProperties: true });

const respond = async (rc: RequestContext<Principal>, items: Record<string, unknown>[]) => {
  const { identity, apiSessionId } = rc.principal;
  return submitPostureResponses(rc.ctx, { identityId: identity.id, apiSessionId }, items);
};

export const postureRoutes: RouteDef[] = [
  route({
    apis: MGMT,
    method: 'GET',
    path: '/posture-check-types',
    operationId: 'listPostureCheckTypes',
    tag: 'Posture Checks',
    access: 'admin',
    success: 200,
    envelope: 'listPostureCheckTypesEnvelope',
    async handler(rc) {
      const page = await listPostureCheckTypes(rc.ctx, listOptions(rc));
      return listOf(page.rows, page);
    },
  }),
  route({
    apis: MGMT,
    method: 'GET',
    path: '/posture-check-types/{id}',
    operationId: 'detailPostureCheckType',
    tag: 'Posture Checks',
    access: 'admin',
    success: 200,
    envelope: 'detailPostureCheckTypeEnvelope',
    async handler(rc) {
      return ok(postureCheckTypeRecord(rc.params.id));
    },
  }),
  route({
    apis: ['client'],
    method: 'POST',
    path: '/posture-response',
    operationId: 'createPostureResponse',
    tag: 'Posture Checks',
    access: 'session',
    body: Item,
    success: 201,
    envelope: 'postureResponseEnvelope',
    async handler(rc) {
      return { status: 201, data: await respond(rc, [rc.body as Record<string, unknown>]) };
    },
  }),
  route({
    apis: ['client'],
    method: 'POST',
    path: '/posture-response-bulk',
    operationId: 'createPostureResponseBulk',
    tag: 'Posture Checks',
    access: 'session',
    body: Type.Array(Item, { maxItems: 1000 }),
    success: 200,
    envelope: 'postureResponseEnvelope',
    async handler(rc) {
      return ok(await respond(rc, rc.body as Record<string, unknown>[]));
    },
  }),
  route({
    apis: MGMT,
    method: 'GET',
    path: '/identities/{id}/posture-data',
    operationId: 'getIdentityPostureData',
    tag: 'Identity',
    access: 'admin',
    success: 200,
    envelope: 'postureDataEnvelope',
    async handler(rc) {
      return ok(await identityPostureData(rc.ctx, rc.params.id));
    },
  }),
  route({
    apis: MGMT,
    method: 'GET',
    path: '/identities/{id}/failed-service-requests',
    operationId: 'getIdentityFailedServiceRequests',
    tag: 'Identity',
    access: 'admin',
    success: 200,
    envelope: 'failedServiceRequestEnvelope',
    async handler(rc) {
      return ok(await identityFailedServiceRequests(rc.ctx, rc.params.id));
    },
  }),
];
