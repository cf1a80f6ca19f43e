/**
 * Sessions (docs/reference-notes.md §4.5): the create checks in the reference's order with their codes,
 * idempotence per (API session, service, type), the edge routers (intersection of the identity's and the
 * service's router policies, at most 25), scoping to the caller, removal with the API session, and the
 * management listing and detail.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createUser, startTestServer, type ApiClient, type TestServer, createRecord } from '../harness/server.js';
import { checkResponse } from '../harness/schemas.js';
import { assertError, filterParam, unique } from '../harness/assert.js';

let server: TestServer;
let admin: ApiClient;

before(async () => {
  server = await startTestServer();
  admin = await server.admin();
});
after(() => server.close());

const sorted = (xs: string[]) => [...xs].sort();

const create = (path: string, body: Record<string, unknown>): Promise<string> => createRecord(admin, path, body);
const service = () => create('/services', { name: unique('svc'), encryptionRequired: true });
const router = (body: Record<string, unknown> = {}) => create('/edge-routers', { name: unique('er'), ...body });
const policy = (type: 'Dial' | 'Bind', identityId: string, serviceId: string) =>
  create('/service-policies', {
    name: unique('sp'),
    type,
    semantic: 'AnyOf',
    identityRoles: [`@${identityId}`],
    serviceRoles: [`@${serviceId}`],
  });
const erp = (identityId: string, routers: string[]) =>
  create('/edge-router-policies', {
    name: unique('erp'),
    semantic: 'AnyOf',
    identityRoles: [`@${identityId}`],
    edgeRouterRoles: routers.map((r) => `@${r}`),
  });
const serp = (serviceId: string, routers: string[]) =>
  create('/service-edge-router-policies', {
    name: unique('serp'),
    semantic: 'AnyOf',
    serviceRoles: [`@${serviceId}`],
    edgeRouterRoles: routers.map((r) => `@${r}`),
  });

/** An identity that may Dial (and optionally Bind) a service reachable through one shared router. */
async function setup(opts: { bind?: boolean } = {}) {
  const u = await createUser(server, admin);
  const s = await service();
  const r = await router();
  await policy('Dial', u.id, s);
  if (opts.bind) await policy('Bind', u.id, s);
  await erp(u.id, [r]);
  await serp(s, [r]);
  return { user: u, service: s, router: r };
}

describe('session create', () => {
  test('checks in order: 404 without access, 400 ServiceId for the wrong type, then NO_EDGE_ROUTERS_AVAILABLE', async () => {
    const u = await createUser(server, admin);
    const s = await service();
    // No access at all (and no routers either): 404 comes first.
    assertError(await u.client.post('/sessions', { serviceId: s, type: 'Dial' }), 404, 'NOT_FOUND');
    assertError(await u.client.post('/sessions', { serviceId: 'no-such-service' }), 404, 'NOT_FOUND');
    assertError(await u.client.post('/sessions', {}), 404, 'NOT_FOUND');
    // Bind only: a Dial request (the default type) is refused on ServiceId before routers are looked at.
    await policy('Bind', u.id, s);
    for (const body of [{ serviceId: s, type: 'Dial' }, { serviceId: s }]) {
      assertError(await u.client.post('/sessions', body), 400, 'COULD_NOT_VALIDATE', 'ServiceId');
    }
    // The right type, but no edge router shared by the identity's and the service's policies.
    assertError(await u.client.post('/sessions', { serviceId: s, type: 'Bind' }), 400, 'NO_EDGE_ROUTERS_AVAILABLE');
    const mine = await router();
    const theirs = await router();
    await erp(u.id, [mine]);
    await serp(s, [theirs]);
    assertError(await u.client.post('/sessions', { serviceId: s, type: 'Bind' }), 400, 'NO_EDGE_ROUTERS_AVAILABLE');
    await serp(s, [mine]);
    const ok = await u.client.post('/sessions', { serviceId: s, type: 'Bind' });
    assert.equal(ok.status, 201, ok.text);
    // An invalid type is a schema error.
    assertError(await u.client.post('/sessions', { serviceId: s, type: 'Invalid' }), 400, 'COULD_NOT_VALIDATE');
    assert.equal((await server.client('client').post('/sessions', { serviceId: s })).status, 401);
  });

  test('the created record: token, refs, identity, type (default Dial) and edge routers, as the reference shapes it', async () => {
    const { user, service: s, router: r } = await setup();
    const res = await user.client.post('/sessions', { serviceId: s, tags: { app: 'test' } });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(checkResponse('client', '/sessions', 'POST', 201, res.body), []);
    const d = res.body.data;
    assert.equal(d.type, 'Dial');
    assert.match(d.token, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(d.serviceId, s);
    assert.equal(d.service.id, s);
    assert.equal(d.identityId, user.id);
    const apiSession = (await user.client.get('/current-api-session')).body.data;
    assert.equal(d.apiSessionId, apiSession.id);
    assert.equal(d.apiSession.id, apiSession.id);
    assert.deepEqual(d.tags, { app: 'test' });
    assert.equal(d._links.self.href, `./sessions/${d.id}`);
    const routerName = (await admin.get(`/edge-routers/${r}`)).body.data.name;
    assert.deepEqual(d.edgeRouters, [
      {
        name: routerName,
        hostname: '',
        isOnline: false,
        disabled: false,
        cost: 0,
        noTraversal: false,
        supportedProtocols: {},
        syncStatus: d.edgeRouters[0].syncStatus,
        urls: {},
      },
    ]);
    const detail = await user.client.get(`/sessions/${d.id}`);
    assert.equal(detail.status, 200);
    assert.deepEqual(detail.body.data, d);
    assert.deepEqual(checkResponse('client', '/sessions/{id}', 'GET', 200, detail.body), []);
    const list = await user.client.get('/sessions');
    assert.deepEqual(
      list.body.data.map((x: any) => x.id),
      [d.id],
    );
    assert.deepEqual(checkResponse('client', '/sessions', 'GET', 200, list.body), []);
  });

  test('idempotent per API session, service and type; a repeat still checks access first', async () => {
    const { user, service: s } = await setup({ bind: true });
    const first = (await user.client.post('/sessions', { serviceId: s, type: 'Dial' })).body.data;
    const again = await user.client.post('/sessions', { serviceId: s, type: 'Dial' });
    assert.equal(again.status, 201);
    assert.equal(again.body.data.id, first.id);
    assert.equal(again.body.data.token, first.token);
    const bind = (await user.client.post('/sessions', { serviceId: s, type: 'Bind' })).body.data;
    assert.notEqual(bind.id, first.id);
    const other = server.client('client');
    await other.login(user.username, user.password);
    const fromOtherApiSession = (await other.post('/sessions', { serviceId: s, type: 'Dial' })).body.data;
    assert.notEqual(fromOtherApiSession.id, first.id);
    assert.equal((await user.client.get('/sessions')).body.meta.pagination.totalCount, 3);
    // Access revoked: the repeat is refused although the session exists.
    for (const p of (await admin.get(`/identities/${user.id}/service-policies`)).body.data) {
      assert.equal((await admin.delete(`/service-policies/${p.id}`)).status, 200);
    }
    assertError(await user.client.post('/sessions', { serviceId: s, type: 'Dial' }), 404, 'NOT_FOUND');
  });

  test('edge routers are the intersection of the identity’s and the service’s router policies, at most 25', async () => {
    const u = await createUser(server, admin);
    const s = await service();
    await policy('Dial', u.id, s);
    const routers: string[] = [];
    for (let i = 0; i < 30; i++) routers.push(await router());
    const onlyMine = await router();
    const onlyService = await router();
    await erp(u.id, [...routers, onlyMine]);
    await serp(s, [...routers, onlyService]);
    const res = await u.client.post('/sessions', { serviceId: s });
    assert.equal(res.status, 201, res.text);
    const names = new Map<string, string>();
    for (const id of [...routers, onlyMine, onlyService])
      names.set((await admin.get(`/edge-routers/${id}`)).body.data.name, id);
    const got = res.body.data.edgeRouters.map((r: any) => names.get(r.name));
    assert.equal(got.length, 25);
    assert.ok(
      got.every((id: string) => routers.includes(id)),
      'only routers of both policies',
    );
    assert.deepEqual(got, sorted(routers).slice(0, 25), 'offline routers in id order');
    // The newer spec's client listing of a service's routers: every common router, same order.
    const listed = await u.client.get(`/services/${s}/edge-routers`);
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(
      listed.body.data.edgeRouters.map((r: any) => names.get(r.name)),
      sorted(routers),
    );
    assert.equal((await u.client.get(`/services/${await service()}/edge-routers`)).status, 404);
    const advice = (await admin.get(`/identities/${u.id}/policy-advice/${s}`)).body.data;
    assert.equal(advice.commonRouters.length, 30);
    assert.equal(advice.identityRouterCount, 31);
    assert.equal(advice.serviceRouterCount, 31);
  });
});

describe('session scope and lifetime', () => {
  test('clients see, read and delete only their own sessions', async () => {
    const a = await setup();
    const b = await setup();
    const sa = (await a.user.client.post('/sessions', { serviceId: a.service })).body.data.id;
    const sb = (await b.user.client.post('/sessions', { serviceId: b.service })).body.data.id;
    assert.deepEqual(
      (await a.user.client.get('/sessions')).body.data.map((x: any) => x.id),
      [sa],
    );
    assert.deepEqual((await a.user.client.get(`/sessions?${filterParam(`id = "${sb}"`)}`)).body.data, []);
    assertError(await a.user.client.get(`/sessions/${sb}`), 404, 'NOT_FOUND');
    assertError(await a.user.client.delete(`/sessions/${sb}`), 404, 'NOT_FOUND');
    assert.equal((await b.user.client.get(`/sessions/${sb}`)).status, 200);
    assert.equal((await a.user.client.delete(`/sessions/${sa}`)).status, 200);
    assertError(await a.user.client.get(`/sessions/${sa}`), 404, 'NOT_FOUND');
    assert.equal(
      (await a.user.client.get(`/sessions?${filterParam(`service = "${a.service}" and type = "Dial"`)}`)).status,
      200,
    );
  });

  test('sessions end with their API session (logout)', async () => {
    const { user, service: s } = await setup();
    const id = (await user.client.post('/sessions', { serviceId: s })).body.data.id;
    assert.equal((await admin.get(`/sessions/${id}`)).status, 200);
    assert.equal((await user.client.delete('/current-api-session')).status, 200);
    assertError(await admin.get(`/sessions/${id}`), 404, 'NOT_FOUND');
    assert.equal((await user.client.post('/sessions', { serviceId: s })).status, 401);
    // A client's own delete, too: the next create makes a new one.
    const again = server.client('client');
    await again.login(user.username, user.password);
    const first = (await again.post('/sessions', { serviceId: s })).body.data.id;
    assert.equal((await again.delete(`/sessions/${first}`)).status, 200);
    const second = (await again.post('/sessions', { serviceId: s })).body.data.id;
    assert.notEqual(second, first);
    assert.equal((await again.get(`/sessions/${second}`)).status, 200);
  });

  test('management lists every session and shows the granting service policies; admins only', async () => {
    const { user, service: s } = await setup({ bind: true });
    const dialId = (await user.client.post('/sessions', { serviceId: s, type: 'Dial' })).body.data.id;
    const bindId = (await user.client.post('/sessions', { serviceId: s, type: 'Bind' })).body.data.id;
    const list = await admin.get(`/sessions?${filterParam(`service = "${s}"`)}`);
    assert.equal(list.status, 200);
    assert.deepEqual(sorted(list.body.data.map((x: any) => x.id)), sorted([dialId, bindId]));
    assert.deepEqual(checkResponse('management', '/sessions', 'GET', 200, list.body), []);
    const d = await admin.get(`/sessions/${bindId}`);
    assert.deepEqual(checkResponse('management', '/sessions/{id}', 'GET', 200, d.body), []);
    const bindPolicies = (
      await admin.get(`/identities/${user.id}/service-policies?${filterParam('type = "Bind"')}`)
    ).body.data.map((p: any) => p.id);
    assert.deepEqual(
      d.body.data.servicePolicies.map((p: any) => p.id),
      bindPolicies,
    );
    assert.equal(d.body.data.servicePolicies[0].entity, 'service-policies');
    const routePath = await admin.get(`/sessions/${bindId}/route-path`);
    assert.equal(routePath.status, 200);
    assert.deepEqual(routePath.body.data, { routePath: [] });
    assertError(await admin.get('/sessions/no-such-session/route-path'), 404, 'NOT_FOUND');
    assert.equal((await user.client.other('management').get('/sessions')).status, 401);
    assert.equal((await admin.delete(`/sessions/${dialId}`)).status, 200);
    assertError(await user.client.get(`/sessions/${dialId}`), 404, 'NOT_FOUND');
    // The next create of that API session, service and type is a new session.
    const again = await user.client.post('/sessions', { serviceId: s, type: 'Dial' });
    assert.equal(again.status, 201);
    assert.notEqual(again.body.data.id, dialId);
    assert.equal((await user.client.get(`/sessions/${again.body.data.id}`)).status, 200);
  });

  test('a service delete removes its sessions', async () => {
    const { user, service: s } = await setup();
    const id = (await user.client.post('/sessions', { serviceId: s })).body.data.id;
    assert.equal((await admin.delete(`/services/${s}`)).status, 200);
    assertError(await user.client.get(`/sessions/${id}`), 404, 'NOT_FOUND');
  });
});
