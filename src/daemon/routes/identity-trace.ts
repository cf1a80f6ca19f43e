/** `PUT /identities/{id}/trace`: turns an identity's data-flow tracing on for a while, or off. */
import { Type } from '@sinclair/typebox';
import { updateIdentityTrace, type TraceSpec } from '../../model/services/identity/identity-trace.js';
import { ok } from '../http/envelope.js';
import { route, type RouteDef } from '../http/route.js';

const TraceSpecBody = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    duration: Type.Optional(Type.String({ maxLength: 64 })),
    traceId: Type.Optional(Type.String({ maxLength: 256 })),
    channels: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: 100 })),
  },
  { additionalProperties: true },
);

export const identityTraceRoutes: RouteDef[] = [
  route({
    apis: ['management'],
    method: 'PUT',
    path: '/identities/{id}/trace',
    operationId: 'updateIdentityTracing',
    tag: 'Identity',
    access: 'admin',
    body: TraceSpecBody,
    success: 200,
    envelope: 'traceDetailEnvelope',
    async handler(rc) {
      return ok(await updateIdentityTrace(rc.ctx, rc.params.id, rc.body as TraceSpec));
    },
  }),
];
