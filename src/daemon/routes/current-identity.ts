/** The caller's own identity and authenticators, on both APIs. */
import { Type } from '@sinclair/typebox';
import { getEntity, listEntities } from '../../model/crud.js';
import { notFound } from '../../model/errors.js';
import { authenticatorsOfIdentity } from '../../model/listing-scopes.js';
import { renderRecord } from '../../model/render.js';
import { authenticators } from '../../model/resources/authenticator.js';
import { identities } from '../../model/resources/identity.js';
import { TagsSchema } from '../../model/resource.js';
import { PasswordSchema, UsernameSchema } from '../../model/schemas.js';
import {
  updateOwnAuthenticator,
  type OwnAuthenticatorChange,
} from '../../model/services/authentication/own-authenticator.js';
import { empty, listOf, ok } from '../http/envelope.js';
import { route, type RouteDef } from '../http/route.js';
import { listOptions } from './crud.js';

const BOTH = ['client', 'management'] as const;
const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(s: T) =>
  Type.Optional(Type.Union([s, Type.Null()]));

const SelfUpdate = Type.Object(
  { username: UsernameSchema, password: PasswordSchema, currentPassword: PasswordSchema, tags: nullable(TagsSchema) },
  { additionalProperties: true },
);
const SelfPatch = Type.Object(
  {
    username: nullable(UsernameSchema),
    password: nullable(PasswordSchema),
    currentPassword: PasswordSchema,
    tags: nullable(TagsSchema),
  },
  { additionalProperties: true },
);

export const currentIdentityRoutes: RouteDef[] = [
  route({
    apis: BOTH,
    method: 'GET',
    path: '/current-identity',
    operationId: 'getCurrentIdentity',
    tag: 'Current Identity',
    access: 'session',
    success: 200,
    envelope: 'currentIdentityDetailEnvelope',
    async handler(rc) {
      return ok(renderRecord(identities, await getEntity(rc.ctx, identities, rc.principal.identity.id)));
    },
  }),
  route({
    apis: BOTH,
    method: 'GET',
    path: '/current-identity/authenticators',
    operationId: 'listCurrentIdentityAuthenticators',
    tag: 'Current Identity',
    access: 'session',
    success: 200,
    envelope: 'listAuthenticatorsEnvelope',
    async handler(rc) {
      const page = await listEntities(
        rc.ctx,
        authenticators,
        listOptions(rc),
        authenticatorsOfIdentity(rc.principal.identity.id),
      );
      return listOf(
        page.rows.map((r) => renderRecord(authenticators, r)),
        page,
      );
    },
  }),
  route({
    apis: BOTH,
    method: 'GET',
    path: '/current-identity/authenticators/{id}',
    operationId: 'detailCurrentIdentityAuthenticator',
    tag: 'Current Identity',
    access: 'session',
    success: 200,
    envelope: 'detailAuthenticatorEnvelope',
    async handler(rc) {
      const row = await getEntity(rc.ctx, authenticators, rc.params.id);
      if (row.identityId !== rc.principal.identity.id) throw notFound(rc.params.id, 'authenticator');
      return ok(renderRecord(authenticators, row));
    },
  }),
  ...(['update', 'patch'] as const).map((mode) =>
    route({
      apis: BOTH,
      method: mode === 'update' ? 'PUT' : 'PATCH',
      path: '/current-identity/authenticators/{id}',
      operationId: mode === 'update' ? 'updateCurrentIdentityAuthenticator' : 'patchCurrentIdentityAuthenticator',
      tag: 'Current Identity',
      access: 'session',
      body: mode === 'update' ? SelfUpdate : SelfPatch,
      success: 200,
      envelope: 'empty',
      async handler(rc) {
        // The current password is a credential check: limited like a login (daemon/auth-limiter.ts).
        const identityId = rc.principal.identity.id;
        await rc.deps.authLimiter.attempt(rc.req.ip, `identity:${identityId}`, () =>
          updateOwnAuthenticator(rc.ctx, identityId, rc.params.id, rc.body as OwnAuthenticatorChange, mode),
        );
        return empty();
      },
    }),
  ),
];
