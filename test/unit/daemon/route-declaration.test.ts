/**
 * `route()`: a handler's context is typed from the route's access and path template, and what the types
 * promise is checked per request (a request without it never reaches the handler).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ok } from '../../../src/daemon/http/envelope.js';
import { route, type RequestContext } from '../../../src/daemon/http/route.js';
import type { Principal } from '../../../src/model/services/api-session/api-session.js';

const principal = { apiSessionId: 's1', identity: { id: 'i1' } } as Principal;

/** A request context with only what these handlers read. */
const request = (over: Partial<RequestContext>): RequestContext =>
  ({ principal: undefined, params: {}, query: {}, body: undefined, api: 'management', ...over }) as RequestContext;

const common = { apis: ['management'] as const, method: 'GET' as const, tag: 'T', success: 200 };

test('a session route with a path parameter hands its handler the principal and the parameter', async () => {
  const r = route({
    ...common,
    path: '/things/{id}/parts/{partId}',
    operationId: 'detailPart',
    access: 'session',
    // Typed: no assertion needed for either.
    handler: async (rc) => ok({ caller: rc.principal.identity.id, thing: rc.params.id, part: rc.params.partId }),
  });
  const answer = await r.handler(request({ principal, params: { id: 't1', partId: 'p1' } }));
  assert.deepEqual(answer, { data: { caller: 'i1', thing: 't1', part: 'p1' } });
});

test('a request without the principal or a parameter the route promises never reaches its handler', async () => {
  let ran = 0;
  const r = route({
    ...common,
    path: '/things/{id}',
    operationId: 'detailThing',
    access: 'admin',
    handler: async () => {
      ran++;
      return ok({});
    },
  });
  await assert.rejects(r.handler(request({ params: { id: 't1' } })), /detailThing: request without/);
  await assert.rejects(r.handler(request({ principal, params: {} })), /detailThing: request without/);
  assert.equal(ran, 0);
  await r.handler(request({ principal, params: { id: 't1' } }));
  assert.equal(ran, 1);
});

test('an anonymous route runs without a principal, and its handler is told the principal may be absent', async () => {
  const r = route({
    ...common,
    path: '/things',
    operationId: 'listThings',
    access: 'anonymous',
    handler: async (rc) => {
      // @ts-expect-error an anonymous request may have no principal
      void (() => rc.principal.identity);
      // @ts-expect-error the path has no parameters
      void (() => rc.params.id);
      return ok({ caller: rc.principal?.identity.id ?? null });
    },
  });
  assert.deepEqual(await r.handler(request({})), { data: { caller: null } });
  assert.deepEqual(await r.handler(request({ principal })), { data: { caller: 'i1' } });
});

test('the declared route keeps the declaration (path, access, operationId) for registration and OpenAPI', () => {
  const r = route({
    ...common,
    path: '/things/{id}',
    operationId: 'detailThing',
    access: 'partial',
    handler: async (rc) => ok({ id: rc.params.id, session: rc.principal.apiSessionId }),
  });
  assert.equal(r.path, '/things/{id}');
  assert.equal(r.access, 'partial');
  assert.equal(r.operationId, 'detailThing');
});
