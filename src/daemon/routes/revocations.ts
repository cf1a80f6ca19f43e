/**
 * `POST /revocations` (Management, admin; docs/reference-notes.md §14.9): creates or replaces a revocation of
 * OIDC tokens. Listing and detail are the resource's generic routes (model/resources/revocation.ts).
 */
import { Type } from '@sinclair/typebox';
import { createRevocation } from '../../model/services/oidc/revocations.js';
import { created } from '../http/envelope.js';
import { route, type RouteDef } from '../http/route.js';

const RevocationCreate = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 255 }),
  type: Type.Union([Type.Literal('JTI'), Type.Literal('IDENTITY'), Type.Literal('API_SESSION')]),
  tags: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()])),
});

export const revocationRoutes: RouteDef[] = [
  route({
    apis: ['management'],
    method: 'POST',
    path: '/revocations',
    operationId: 'createRevocation',
    tag: 'Revocations',
    access: 'admin',
    body: RevocationCreate,
    success: 201,
    envelope: 'createEnvelope',
    async handler(rc) {
      const body = rc.body as {
        id: string;
        type: 'JTI' | 'IDENTITY' | 'API_SESSION';
        tags?: Record<string, unknown> | null;
      };
      const id = await createRevocation(rc.ctx, { id: body.id, type: body.type, tags: body.tags ?? {} });
      return created(id, 'revocations');
    },
  }),
];
