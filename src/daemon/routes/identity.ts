/** Identity operations beyond CRUD on the Management API. */
import { Type } from '@sinclair/typebox';
import { getRow, listEntities } from '../../model/crud.js';
import { authenticatorsOfIdentity } from '../../model/listing-scopes.js';
import { renderRecord } from '../../model/render.js';
import { authenticators } from '../../model/resources/authenticator.js';
import { identities } from '../../model/resources/identity.js';
import { listRoleAttributes } from '../../model/role-attributes.js';
import { disableIdentity, enableIdentity } from '../../model/services/identity/identity.js';
import { empty, listOf } from '../http/envelope.js';
import { route, type RouteDef } from '../http/route.js';
import { listOptions } from './crud.js';

const MGMT = ['management'] as const;

export const identityRoutes: RouteDef[] = [
  route({
    apis: MGMT,
    method: 'POST',
    path: '/identities/{id}/disable',
    operationId: 'disableIdentity',
    tag: 'Identity',
    access: 'admin',
    body: Type.Object({ durationMinutes: Type.Integer() }, { additionalProperties: true }),
    success: 200,
    envelope: 'empty',
    async handler(rc) {
      await disableIdentity(rc.ctx, rc.params.id, (rc.body as { durationMinutes: number }).durationMinutes);
      return empty();
    },
  }),
  route({
    apis: MGMT,
    method: 'POST',
    path: '/identities/{id}/enable',
    operationId: 'enableIdentity',
    tag: 'Identity',
    access: 'admin',
    success: 200,
    envelope: 'empty',
    async handler(rc) {
      await enableIdentity(rc.ctx, rc.params.id);
      return empty();
    },
  }),
  route({
    apis: MGMT,
    method: 'GET',
    path: '/identities/{id}/authenticators',
    operationId: 'getIdentityAuthenticators',
    tag: 'Identity',
    access: 'admin',
    success: 200,
    envelope: 'listAuthenticatorsEnvelope',
    async handler(rc) {
      await getRow(rc.ctx, identities, rc.params.id);
      const page = await listEntities(rc.ctx, authenticators, listOptions(rc), authenticatorsOfIdentity(rc.params.id));
      return listOf(
        page.rows.map((r) => renderRecord(authenticators, r)),
        page,
      );
    },
  }),
  route({
    apis: MGMT,
    method: 'GET',
    path: '/identity-role-attributes',
    operationId: 'listIdentityRoleAttributes',
    tag: 'Role Attributes',
    access: 'admin',
    success: 200,
    envelope: 'listRoleAttributesEnvelope',
    async handler(rc) {
      const page = await listRoleAttributes(rc.ctx, identities, listOptions(rc));
      return listOf(page.values, page);
    },
  }),
];
