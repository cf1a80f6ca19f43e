/**
 * The client's default service page is made once and answered again while the view it came from is
 * unchanged (model/services/service-access/service-listing.ts). Each part of that view is changed here between two
 * listings by the same API session: the change shows at once, and an unchanged repeat is the same bytes.
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

interface Listed {
  id: string;
  name: string;
  permissions: string[];
  config: Record<string, unknown>;
  postureQueries: unknown[];
}

async function list(client: ApiClient, query = ''): Promise<{ text: string; services: Listed[] }> {
  const res = await client.get(`/services${query}`);
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(checkResponse('client', '/services', 'GET', 200, res.body), []);
  return { text: res.text, services: res.body.data as Listed[] };
}

test('a repeat is the same bytes; renames, grants, configs and posture checks show on the next listing', async () => {
  const u = await createUser(server, admin);
  const tag = unique('repeat');
  const typeName = unique('repeat.v1');
  const typeId = await create('/config-types', { name: typeName });
  const configId = await create('/configs', { name: unique('cfg'), configTypeId: typeId, data: { port: 1 } });
  const first = await create('/services', {
    name: unique('svc'),
    encryptionRequired: true,
    roleAttributes: [tag],
    configs: [configId],
  });
  await create('/service-policies', {
    name: unique('sp'),
    type: 'Dial',
    semantic: 'AnyOf',
    identityRoles: [`@${u.id}`],
    serviceRoles: [`#${tag}`],
  });

  const a = await list(u.client);
  const b = await list(u.client);
  assert.equal(b.text, a.text);
  assert.deepEqual(
    a.services.map((s) => s.id),
    [first],
  );

  const renamed = unique('renamed');
  assert.equal((await admin.patch(`/services/${first}`, { name: renamed })).status, 200);
  assert.equal((await list(u.client)).services[0]!.name, renamed);

  const second = await create('/services', { name: unique('svc'), encryptionRequired: true, roleAttributes: [tag] });
  assert.deepEqual((await list(u.client)).services.map((s) => s.id).sort(), [first, second].sort());

  await create('/service-policies', {
    name: unique('sp'),
    type: 'Bind',
    semantic: 'AnyOf',
    identityRoles: [`@${u.id}`],
    serviceRoles: [`@${second}`],
  });
  const bound = (await list(u.client)).services.find((s) => s.id === second)!;
  assert.deepEqual(bound.permissions, ['Bind', 'Dial']);

  // Config types asked in the query are part of what a page is made for.
  assert.deepEqual((await list(u.client, '?configTypes=all')).services.find((s) => s.id === first)!.config, {
    [typeName]: { port: 1 },
  });
  assert.equal((await admin.patch(`/configs/${configId}`, { data: { port: 2 } })).status, 200);
  assert.deepEqual((await list(u.client, '?configTypes=all')).services.find((s) => s.id === first)!.config, {
    [typeName]: { port: 2 },
  });
  assert.deepEqual((await list(u.client)).services.find((s) => s.id === first)!.config, {});

  // With a posture check on a granting policy, postureQueries follow it (and posture state, without a write).
  const checkId = await create('/posture-checks', { name: unique('pc'), typeId: 'MFA', timeoutSeconds: 600 });
  await create('/service-policies', {
    name: unique('sp'),
    type: 'Dial',
    semantic: 'AnyOf',
    identityRoles: [`@${u.id}`],
    serviceRoles: [`@${first}`],
    postureCheckRoles: [`@${checkId}`],
  });
  const checked = (await list(u.client)).services.find((s) => s.id === first)!;
  assert.ok(checked.postureQueries.length > 0, JSON.stringify(checked));
});

test('each identity and each page has its own answer', async () => {
  const tag = unique('pages');
  const ids: string[] = [];
  for (let i = 0; i < 3; i++)
    ids.push(await create('/services', { name: unique('svc'), encryptionRequired: true, roleAttributes: [tag] }));
  const [u, v] = [await createUser(server, admin), await createUser(server, admin)];
  await create('/service-policies', {
    name: unique('sp'),
    type: 'Dial',
    semantic: 'AnyOf',
    identityRoles: [`@${u.id}`],
    serviceRoles: [`#${tag}`],
  });
  assert.equal((await list(u.client)).services.length, 3);
  assert.equal((await list(v.client)).services.length, 0);
  const p1 = await list(u.client, '?limit=2&offset=0');
  const p2 = await list(u.client, '?limit=2&offset=2');
  assert.equal(p1.services.length, 2);
  assert.equal(p2.services.length, 1);
  assert.deepEqual([...p1.services, ...p2.services].map((s) => s.id).sort(), [...ids].sort());
});
