/**
 * The fabric API's read-only subset (`/fabric/v1`, docs/decisions.md "The fabric API: a read-only subset"): the
 * reference's console counts and maps routers from it. Routers are the edge routers with their online state; with
 * no data plane there are no links and no circuits. Admin only, through the same session header, with the
 * fabric API's envelope and paging. The console's own calls are test/fixtures/console/fabric-requests.json.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ApiClient, createRecord, createUser, startTestServer, type TestServer } from '../harness/server.js';
import { assertError, filterParam, unique } from '../harness/assert.js';
import { checkResponse } from '../harness/schemas.js';

interface ConsoleCall {
  method: string;
  path: string;
  reads: string[];
}
const CONSOLE = JSON.parse(
  readFileSync(fileURLToPath(new URL('../fixtures/console/fabric-requests.json', import.meta.url)), 'utf8'),
) as { prefix: string; requests: ConsoleCall[] };

let server: TestServer;
let fabric: ApiClient;
let routerId: string;
let routerName: string;

/** A client of the fabric API with `token` (sent as `zt-session`, as the console sends it). */
const fabricClient = (token: string | undefined) =>
  new ApiClient(server.ca, `${server.url}/fabric/v1`, server.transport).withToken(token);

before(async () => {
  server = await startTestServer();
  const admin = await server.admin();
  routerName = unique('fab-er');
  routerId = await createRecord(admin, '/edge-routers', { name: routerName, cost: 7, roleAttributes: ['fab'] });
  fabric = fabricClient(admin.token);
});
after(() => server.close());

describe('the console’s calls', () => {
  for (const call of CONSOLE.requests) {
    test(`${call.method} ${call.path} answers a list the console reads`, async () => {
      const res = await server.request(call.method, CONSOLE.prefix + call.path, {
        headers: { 'zt-session': fabric.token! },
      });
      assert.equal(res.status, 200, res.text);
      assert.ok(Array.isArray(res.body.data), 'data is a list');
      // limit=1000 is clamped as every list's limit is.
      assert.equal(res.body.meta.pagination.limit, 500);
      for (const record of res.body.data) for (const field of call.reads) assert.ok(field in record, field);
    });
  }
});

describe('routers', () => {
  test('lists every edge router with its online state, in the fabric envelope', async () => {
    const res = await fabric.get('/routers?limit=1000');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(checkResponse('fabric', '/routers', 'GET', 200, res.body), []);
    const mine = res.body.data.find((r: { id: string }) => r.id === routerId);
    assert.ok(mine, 'the edge router is a fabric router with the same id');
    assert.equal(mine.name, routerName);
    // No router connects to edgectl: offline, as the edge router says.
    assert.equal(mine.connected, false);
    assert.equal(mine.cost, 7);
    assert.equal(mine.noTraversal, false);
    assert.equal(mine.disabled, false);
    assert.equal(mine.fingerprint, '', 'not enrolled yet');
    assert.equal(mine._links.self.href, `./routers/${routerId}`);
    assert.equal(res.body.meta.pagination.totalCount, res.body.data.length);
  });

  test('count as many as the edge routers (the dashboard’s router count)', async () => {
    const admin = await server.admin();
    await createRecord(admin, '/edge-routers', { name: unique('fab-er2') });
    const edge = await admin.get('/edge-routers?limit=1');
    const res = await fabric.get('/routers?limit=1');
    assert.equal(res.body.meta.pagination.totalCount, edge.body.meta.pagination.totalCount);
    assert.ok(res.body.meta.pagination.totalCount >= 2);
    assert.equal(res.body.data.length, 1, 'paged by limit');
  });

  test('filter as the edge routers do', async () => {
    const res = await fabric.get(`/routers?${filterParam(`name = "${routerName}"`)}`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.data.map((r: { id: string }) => r.id),
      [routerId],
    );
    assertError(await fabric.get(`/routers?${filterParam('name = ')}`), 400, 'INVALID_FILTER');
  });

  test('a router’s detail is the edge router’s, and an unknown id is NOT_FOUND', async () => {
    const res = await fabric.get(`/routers/${routerId}`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(checkResponse('fabric', '/routers/{id}', 'GET', 200, res.body), []);
    assert.equal(res.body.data.id, routerId);
    assert.equal(res.body.data.connected, false);
    const missing = await fabric.get('/routers/no-such-router');
    assertError(missing, 404, 'NOT_FOUND');
    assert.deepEqual(checkResponse('fabric', '/routers/{id}', 'GET', 404, missing.body), []);
  });

  test('a transit router is not a fabric router here (the fabric view is the edge routers’)', async () => {
    const admin = await server.admin();
    const transit = await createRecord(admin, '/transit-routers', { name: unique('fab-tr') });
    assertError(await fabric.get(`/routers/${transit}`), 404, 'NOT_FOUND');
  });
});

describe('links and circuits', () => {
  for (const [path, op] of [
    ['/links', 'links'],
    ['/circuits', 'circuits'],
  ] as const) {
    test(`${path} is the empty list a controller without a data plane has`, async () => {
      const res = await fabric.get(`${path}?limit=1000&offset=5`);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(checkResponse('fabric', path, 'GET', 200, res.body), []);
      assert.deepEqual(res.body.data, []);
      assert.deepEqual(res.body.meta.pagination, { limit: 500, offset: 5, totalCount: 0 });
      assertError(await fabric.get(`${path}?limit=x`), 400, 'INVALID_PAGINATION');
    });

    test(`${path}/{id} is NOT_FOUND: there are no ${op}`, async () => {
      const res = await fabric.get(`${path}/any-id`);
      assertError(res, 404, 'NOT_FOUND');
      assert.equal(res.body.error.args.urlVars.id, 'any-id');
    });
  }
});

describe('access', () => {
  for (const path of ['/routers', `/routers/{id}`, '/links', '/circuits', '/links/x', '/circuits/x']) {
    test(`${path} refuses a request without a session, and a non-admin, with 401`, async () => {
      const p = path.replace('{id}', routerId);
      assertError(await fabricClient(undefined).get(p), 401, 'UNAUTHORIZED');
      assertError(await fabricClient('not-a-session').get(p), 401, 'UNAUTHORIZED');
      const admin = await server.admin();
      const user = await createUser(server, admin, { api: 'management' });
      assertError(await fabricClient(user.client.token).get(p), 401, 'UNAUTHORIZED');
    });
  }

  test('is read-only: writes are not served', async () => {
    const res = await fabric.post('/routers', { name: unique('fab-new'), cost: 0, noTraversal: false, id: 'x' });
    assertError(res, 405, 'METHOD_NOT_ALLOWED');
    assertError(await fabric.delete(`/routers/${routerId}`), 405, 'METHOD_NOT_ALLOWED');
    assertError(await fabric.get('/terminators'), 404, 'NOT_FOUND');
  });
});
