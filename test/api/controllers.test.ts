/**
 * `GET /controllers` (both APIs) and `/controller-settings` (Management): the controllers registry every running
 * controller keeps its row in, and the OIDC URI lists per controller and global (docs/decisions.md, "Controllers
 * and controller settings"). Replicas over one PostgreSQL database: test/daemon/controller-replicas.test.ts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { createHash, X509Certificate } from 'node:crypto';
import { assertError, assertFieldError, filterParam } from '../harness/assert.js';
import { checkResponse } from '../harness/schemas.js';
import { createUser, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { effectiveOidcSettings } from '../../src/model/services/controller/settings.js';
import { FORGOTTEN_MS, LISTED_MS, ONLINE_MS } from '../../src/model/services/controller/registry.js';

let server: TestServer;
let admin: ApiClient;
let user: ApiClient;

before(async () => {
  server = await startTestServer({ clock: 'frozen' });
  admin = await server.admin();
  user = (await createUser(server, admin)).client;
});
after(() => server.close());

describe('GET /controllers', () => {
  test('the management view (admin) lists this controller with every field of controllerDetail', async () => {
    const res = await admin.get('/controllers');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(checkResponse('management', '/controllers', 'GET', 200, res.body), []);
    assert.equal(res.body.meta.pagination.totalCount, 1);
    const [c] = res.body.data;
    assert.equal(c.id, server.daemon.controllerId);
    assert.equal(c.name, `${hostname()}:${server.daemon.port}`);
    assert.equal(c.isOnline, true);
    assert.equal(c.ctrlAddress, null, 'no control plane: present and null');
    assert.equal(typeof c.lastJoinedAt, 'string');
    const der = new X509Certificate(c.certPem).raw;
    assert.equal(c.fingerprint, createHash('sha1').update(der).digest('hex'));
    assert.deepEqual(c.apiAddresses, {
      'edge-client': [{ url: `${server.url}/edge/client/v1`, version: 'v1' }],
      'edge-management': [{ url: `${server.url}/edge/management/v1`, version: 'v1' }],
    });
    for (const hidden of ['lastSeenAt', 'stoppedAt', 'version', 'isPreferredLeader'])
      assert.ok(!(hidden in c), `${hidden} is not shown`);
  });

  test('the client view (any session) leaves out ctrlAddress and keeps only the client API addresses', async () => {
    const res = await user.get('/controllers');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(checkResponse('client', '/controllers', 'GET', 200, res.body), []);
    const [c] = res.body.data;
    assert.equal(c.id, server.daemon.controllerId);
    assert.ok(!('ctrlAddress' in c));
    assert.deepEqual(Object.keys(c.apiAddresses), ['edge-client']);
  });

  test('without a session: 401 on both APIs; a non-admin on the Management API: 401', async () => {
    assertError(await server.client('client').get('/controllers'), 401, 'UNAUTHORIZED');
    assertError(await server.client('management').get('/controllers'), 401, 'UNAUTHORIZED');
    assertError(await user.other('management').get('/controllers'), 401, 'UNAUTHORIZED');
  });

  test('filters and paging work as on every list; a bad filter is 400 INVALID_FILTER', async () => {
    const none = await admin.get(`/controllers?${filterParam('name = "elsewhere"')}`);
    assert.equal(none.status, 200, none.text);
    assert.deepEqual(none.body.data, []);
    const one = await admin.get(`/controllers?${filterParam(`id = "${server.daemon.controllerId}"`)}&limit=1`);
    assert.equal(one.body.data.length, 1);
    assertError(await admin.get(`/controllers?${filterParam('name = ')}`), 400, 'INVALID_FILTER');
  });
});

describe('/controller-settings', () => {
  const body = (controllerId: string, redirectUris: string[], postLogoutUris: string[] = []) => ({
    controllerId,
    oidc: { redirectUris, postLogoutUris },
  });

  test('create, detail and the effective view: the global lists first, then the instance', async () => {
    const g = await admin.post('/controller-settings', body('global', ['https://console.example/cb']));
    assert.equal(g.status, 201, g.text);
    const id = server.daemon.controllerId;
    const own = await admin.post(
      '/controller-settings',
      body(id, ['https://ctrl.example/cb', 'https://console.example/cb'], ['https://ctrl.example/bye']),
    );
    assert.equal(own.status, 201, own.text);
    const settingId = own.body.data.id;
    assert.equal(own.body.data._links.self.href, `./controller-settings/${settingId}`);

    const detail = await admin.get(`/controller-settings/${settingId}`);
    assert.equal(detail.status, 200, detail.text);
    assert.deepEqual(checkResponse('management', '/controller-settings/{id}', 'GET', 200, detail.body), []);
    assert.equal(detail.body.data.controllerId, id);
    assert.deepEqual(detail.body.data.oidc.redirectUris, ['https://ctrl.example/cb', 'https://console.example/cb']);

    const eff = await admin.get(`/controller-settings/${settingId}/effective`);
    assert.equal(eff.status, 200, eff.text);
    assert.deepEqual(checkResponse('management', '/controller-settings/{id}/effective', 'GET', 200, eff.body), []);
    assert.equal(eff.body.data.id, settingId);
    assert.deepEqual(eff.body.data.instance.oidc, {
      redirectUris: ['https://ctrl.example/cb', 'https://console.example/cb'],
      postLogoutUris: ['https://ctrl.example/bye'],
    });
    assert.deepEqual(eff.body.data.effective.oidc, {
      redirectUris: ['https://console.example/cb', 'https://ctrl.example/cb'],
      postLogoutUris: ['https://ctrl.example/bye'],
    });
    // What the OIDC service reads.
    assert.deepEqual(await effectiveOidcSettings(server.daemon.ctx, id), eff.body.data.effective.oidc);
    assert.deepEqual(await effectiveOidcSettings(server.daemon.ctx, 'another-controller'), {
      redirectUris: ['https://console.example/cb'],
      postLogoutUris: [],
    });

    const list = await admin.get(`/controller-settings?${filterParam('controllerId = "global"')}`);
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(checkResponse('management', '/controller-settings', 'GET', 200, list.body), []);
    assert.equal(list.body.data.length, 1);
    assert.equal(list.body.data[0].id, g.body.data.id);
  });

  test('PATCH on /effective changes only the lists it names; PUT replaces; DELETE removes', async () => {
    const id = (
      await admin.post('/controller-settings', body('ctrl-patch', ['https://a.example/cb'], ['https://a.example/bye']))
    ).body.data.id;
    const patched = await admin.patch(`/controller-settings/${id}/effective`, {
      oidc: { redirectUris: ['https://b.example/cb'] },
    });
    assert.equal(patched.status, 200, patched.text);
    let d = (await admin.get(`/controller-settings/${id}`)).body.data;
    assert.deepEqual(d.oidc, { redirectUris: ['https://b.example/cb'], postLogoutUris: ['https://a.example/bye'] });
    assert.equal(
      (await admin.put(`/controller-settings/${id}/effective`, { oidc: { postLogoutUris: [] } })).status,
      200,
    );
    d = (await admin.get(`/controller-settings/${id}`)).body.data;
    assert.deepEqual(d.oidc, { postLogoutUris: [] });
    assert.equal((await admin.delete(`/controller-settings/${id}/effective`)).status, 200);
    assertError(await admin.get(`/controller-settings/${id}`), 404, 'NOT_FOUND');
    assertError(await admin.get(`/controller-settings/${id}/effective`), 404, 'NOT_FOUND');
    assertError(await admin.delete(`/controller-settings/${id}/effective`), 404, 'NOT_FOUND');
  });

  test('bad input: a relative URI, a missing or duplicate controllerId, an unknown member', async () => {
    assertFieldError(await admin.post('/controller-settings', body('ctrl-bad', ['/relative'])), 'oidc.redirectUris[0]');
    assertError(await admin.post('/controller-settings', { oidc: {} }), 400, 'COULD_NOT_VALIDATE');
    assertError(
      await admin.post('/controller-settings', { controllerId: 'x', oidc: { other: [] } }),
      400,
      'COULD_NOT_VALIDATE',
    );
    assert.equal((await admin.post('/controller-settings', body('ctrl-dup', []))).status, 201);
    assertFieldError(await admin.post('/controller-settings', body('ctrl-dup', [])), 'controllerId');
  });

  test('admin only, and 401 without a session', async () => {
    assertError(await server.client('management').get('/controller-settings'), 401, 'UNAUTHORIZED');
    assertError(await user.other('management').get('/controller-settings'), 401, 'UNAUTHORIZED');
    assertError(await user.other('management').post('/controller-settings', body('x', [])), 401, 'UNAUTHORIZED');
  });
});

// Last: it moves the clock by an hour.
test('a controller not seen for 45 s is offline, and after an hour it is not listed', async () => {
  server.clock.advance(ONLINE_MS + 1000);
  let res = await admin.get('/controllers');
  assert.equal(res.body.data[0].isOnline, false);
  // Its heartbeat brings it back.
  await server.daemon.controllerBeat();
  res = await admin.get('/controllers');
  assert.equal(res.body.data[0].isOnline, true);
  server.clock.advance(LISTED_MS + 1000);
  // The admin's API session has expired meanwhile (30 min idle).
  admin = await server.admin();
  res = await admin.get('/controllers');
  assert.equal(res.body.meta.pagination.totalCount, 0);
  await server.daemon.controllerBeat();
  res = await admin.get('/controllers');
  assert.equal(res.body.meta.pagination.totalCount, 1);
});

test('the periodic work forgets a controller unseen for a week', async () => {
  const rows = () => server.daemon.ctx.db.selectFrom('controllers').select('id').execute();
  assert.equal((await rows()).length, 1);
  server.clock.advance(FORGOTTEN_MS + 1000);
  assert.equal(await server.sweep(), true);
  assert.deepEqual(await rows(), []);
  // Its next heartbeat records it again.
  await server.daemon.controllerBeat();
  assert.equal((await rows()).length, 1);
});
