/**
 * Sessions on both APIs (docs/reference-notes.md §4.5): the Client API creates them and lists, reads and
 * deletes the caller's own (another identity's session is a 404); the Management API lists, reads (with
 * `servicePolicies`) and deletes any, for admins.
 */
import { Type } from '@sinclair/typebox';
import {
  createSession,
  deleteSession,
  listSessions,
  sessionDetail,
  sessionManagementDetail,
  type SessionCreate,
} from '../../model/services/session/session.js';
import { TagsSchema } from '../../model/resource.js';
import { empty, listOf, ok } from '../http/envelope.js';
import { route, type RouteDef } from '../http/route.js';
import { listOptions } from './crud.js';

const SessionCreateSchema = Type.Object(
  {
    serviceId: Type.Optional(Type.String()),
    type: Type.Optional(Type.Union([Type.Literal('Dial'), Type.Literal('Bind')])),
    tags: Type.Optional(Type.Union([TagsSchema, Type.Null()])),
  },
  { additionalProperties: true },
);

export const sessionRoutes: RouteDef[] = [
  route({
    apis: ['client'],
    method: 'POST',
    path: '/sessions',
    operationId: 'createSession',
    tag: 'Session',
    access: 'session',
    body: SessionCreateSchema,
    success: 201,
    envelope: 'sessionCreateEnvelope',
    async handler(rc) {
      const p = rc.principal;
      const data = await createSession(
        rc.ctx,
        { identityId: p.identity.id, apiSessionId: p.apiSessionId },
        (rc.body ?? {}) as SessionCreate,
      );
      return { status: 201, data };
    },
  }),
  route({
    apis: ['client'],
    method: 'GET',
    path: '/sessions',
    operationId: 'listSessions',
    tag: 'Session',
    access: 'session',
    success: 200,
    envelope: 'listSessionsEnvelope',
    async handler(rc) {
      const { records, page } = await listSessions(rc.ctx, listOptions(rc), rc.principal.identity.id);
      return listOf(records, page);
    },
  }),
  route({
    apis: ['client'],
    method: 'GET',
    path: '/sessions/{id}',
    operationId: 'detailSession',
    tag: 'Session',
    access: 'session',
    success: 200,
    envelope: 'detailSessionEnvelope',
    async handler(rc) {
      return ok(await sessionDetail(rc.ctx, rc.params.id, rc.principal.identity.id));
    },
  }),
  route({
    apis: ['client'],
    method: 'DELETE',
    path: '/sessions/{id}',
    operationId: 'deleteSession',
    tag: 'Session',
    access: 'session',
    success: 200,
    envelope: 'empty',
    async handler(rc) {
      await deleteSession(rc.ctx, rc.params.id, rc.principal.identity.id);
      return empty();
    },
  }),
  route({
    apis: ['management'],
    method: 'GET',
    path: '/sessions',
    operationId: 'listSessions',
    tag: 'Session',
    access: 'admin',
    success: 200,
    envelope: 'listSessionsManagementEnvelope',
    async handler(rc) {
      const { records, page } = await listSessions(rc.ctx, listOptions(rc));
      return listOf(records, page);
    },
  }),
  route({
    apis: ['management'],
    method: 'GET',
    path: '/sessions/{id}',
    operationId: 'detailSession',
    tag: 'Session',
    access: 'admin',
    success: 200,
    envelope: 'detailSessionManagementEnvelope',
    async handler(rc) {
      return ok(await sessionManagementDetail(rc.ctx, rc.params.id));
    },
  }),
  route({
    apis: ['management'],
    method: 'DELETE',
    path: '/sessions/{id}',
    operationId: 'deleteSession',
    tag: 'Session',
    access: 'admin',
    success: 200,
    envelope: 'empty',
    async handler(rc) {
      await deleteSession(rc.ctx, rc.params.id);
      return empty();
    },
  }),
  route({
    apis: ['management'],
    method: 'GET',
    path: '/sessions/{id}/route-path',
    operationId: 'detailSessionRoutePath',
    tag: 'Session',
    access: 'admin',
    success: 200,
    envelope: 'detailSessionRoutePathEnvelope',
    summary: "The routers a session's circuit crosses: none while no router carries traffic for this controller",
    async handler(rc) {
      await sessionManagementDetail(rc.ctx, rc.params.id);
      return ok({ routePath: [] });
    },
  }),
];
