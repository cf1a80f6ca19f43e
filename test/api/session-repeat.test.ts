/**
 * A repeated session create answers the text made the first time while nothing in it changed
 * (model/services/session/session-answers.ts). These tests change each part of that answer between repeats (the
 * service's name, the edge routers, the session itself) and check the repeat shows the change at once.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createUser, startTestServer, type ApiClient, type TestServer, createRecord } from '../harness/server.js';
import { checkResponse } from '../harness/schemas.js';
import { unique } from '../harness/assert.js';

let server: TestServer;
let admin: ApiClient;

before(async () => {
  server = await startTestServer();
  admin = await server.admin();
});
after(() => server.close());

const create = (path: string, body: Record<string, unknown>): Promise<string> => createRecord(admin, path, body);

async function setup() {
  const u = await createUser(server, admin);
  const s = await create('/services', { name: unique('svc'), encryptionRequired: true });
  const r = await create('/edge-routers', { name: unique('er') });
  await create('/service-policies', {
    name: unique('sp'),
    type: 'Dial',
    semantic: 'AnyOf',
    identityRoles: [`@${u.id}`],
    serviceRoles: [`@${s}`],
  });
  await create('/edge-router-policies', {
    name: unique('erp'),
    semantic: 'AnyOf',
    identityRoles: [`@${u.id}`],
    edgeRouterRoles: ['#repeat-routers', `@${r}`],
  });
  await create('/service-edge-router-policies', {
    name: unique('serp'),
    semantic: 'AnyOf',
    serviceRoles: [`@${s}`],
    edgeRouterRoles: ['#all'],
  });
  return { user: u, service: s, router: r };
}

const dial = async (client: ApiClient, serviceId: string) => {
  const res = await client.post('/sessions', { serviceId, type: 'Dial' });
  assert.equal(res.status, 201, res.text);
  assert.deepEqual(checkResponse('client', '/sessions', 'POST', 201, res.body), []);
  return res.body.data as { id: string; token: string; service: { name: string }; edgeRouters: { name: string }[] };
};

test('a repeat answers the same record, byte for byte, with the envelope every answer has', async () => {
  const { user, service } = await setup();
  const first = await user.client.post('/sessions', { serviceId: service, type: 'Dial' });
  const again = await user.client.post('/sessions', { serviceId: service, type: 'Dial' });
  assert.equal(first.status, 201);
  assert.equal(again.status, 201);
  assert.equal(again.text, first.text);
  assert.deepEqual(Object.keys(again.body.meta).sort(), ['apiEnrollmentVersion', 'apiVersion']);
  assert.match(String(again.headers['content-type']), /^application\/json/);
});

test('a repeat shows a renamed service, a new router and a router leaving at once', async () => {
  const { user, service, router } = await setup();
  const first = await dial(user.client, service);
  assert.deepEqual(
    first.edgeRouters.map((r) => r.name),
    [(await admin.get(`/edge-routers/${router}`)).body.data.name],
  );

  const name = unique('renamed');
  assert.equal((await admin.patch(`/services/${service}`, { name })).status, 200);
  const renamed = await dial(user.client, service);
  assert.equal(renamed.id, first.id);
  assert.equal(renamed.token, first.token);
  assert.equal(renamed.service.name, name);

  const added = unique('er');
  await create('/edge-routers', { name: added, roleAttributes: ['repeat-routers'] });
  const more = await dial(user.client, service);
  assert.equal(more.id, first.id);
  assert.ok(
    more.edgeRouters.some((r) => r.name === added),
    JSON.stringify(more.edgeRouters),
  );

  assert.equal((await admin.delete(`/edge-routers/${router}`)).status, 200);
  const fewer = await dial(user.client, service);
  assert.deepEqual(
    fewer.edgeRouters.map((r) => r.name),
    [added],
  );
});

test('after the session is deleted, a repeat makes a new one with its own token', async () => {
  const { user, service } = await setup();
  const first = await dial(user.client, service);
  assert.equal((await user.client.delete(`/sessions/${first.id}`)).status, 200);
  const next = await dial(user.client, service);
  assert.notEqual(next.id, first.id);
  assert.notEqual(next.token, first.token);
  const detail = await user.client.get(`/sessions/${next.id}`);
  assert.equal(detail.status, 200);
  assert.equal(detail.body.data.token, next.token);
});
