/**
 * Wire conventions every route follows: envelopes, error envelopes for every kind of bad input, paging,
 * tolerance that existing clients rely on, and the informational endpoints.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, createIdentity, type ApiClient, type TestServer } from '../harness/server.js';
import { request } from '../harness/http.js';
import { checkResponse } from '../harness/schemas.js';
import { assertError } from '../harness/assert.js';
import { authPolicyBody } from '../harness/bodies.js';

let server: TestServer;
let admin: ApiClient;

before(async () => {
  server = await startTestServer();
  admin = await server.admin();
});
after(() => server.close());

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('envelopes', () => {
  test('a create answers 201 with id and a self link, and the record carries base fields', async () => {
    const res = await admin.post('/identities', { name: 'env-1', type: 'User', isAdmin: false });
    assert.equal(res.status, 201);
    assert.equal(typeof res.body.data.id, 'string');
    assert.deepEqual(res.body.data._links, { self: { href: `./identities/${res.body.data.id}` } });
    assert.equal(res.body.meta.apiVersion, '0.0.1');
    assert.deepEqual(checkResponse('management', '/identities', 'POST', 201, res.body), []);

    const detail = await admin.get(`/identities/${res.body.data.id}`);
    assert.equal(detail.status, 200);
    const d = detail.body.data;
    assert.match(d.createdAt, ISO_MS);
    assert.equal(d.createdAt, d.updatedAt, 'a new record has createdAt = updatedAt');
    assert.equal(d._links.self.href, `./identities/${d.id}`);
    assert.deepEqual(d.tags, {});
    assert.equal(detail.body.meta.apiEnrollmentVersion, '0.0.1');
    assert.deepEqual(checkResponse('management', '/identities/{id}', 'GET', 200, detail.body), []);
  });

  test('update, patch and delete answer an empty data object', async () => {
    const id = await createIdentity(admin);
    for (const res of [
      await admin.put(`/identities/${id}`, { name: `env-put-${id}`, type: 'Device', isAdmin: false }),
      await admin.patch(`/identities/${id}`, { name: `env-patch-${id}` }),
      await admin.delete(`/identities/${id}`),
    ]) {
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.data, {});
      assert.equal(res.body.meta.apiVersion, '0.0.1');
    }
  });

  test('lists carry pagination and filterable fields', async () => {
    const res = await admin.get('/identities');
    assert.equal(res.status, 200);
    assert.ok(Array.isArray(res.body.data));
    assert.equal(res.body.meta.pagination.limit, 10);
    assert.equal(res.body.meta.pagination.offset, 0);
    assert.equal(typeof res.body.meta.pagination.totalCount, 'number');
    assert.ok(res.body.meta.filterableFields.includes('name'));
    assert.ok(res.body.meta.filterableFields.includes('roleAttributes'));
    assert.deepEqual(checkResponse('management', '/identities', 'GET', 200, res.body), []);
  });
});

describe('error envelope for bad input', () => {
  test('unknown route is 404 NOT_FOUND', async () => {
    assertError(await admin.get('/no-such-thing'), 404, 'NOT_FOUND');
    assertError(await request(server.ca, 'GET', `${server.url}/elsewhere`), 404, 'NOT_FOUND');
  });

  test('malformed URLs, oversized headers and over-deep filters still get the error envelope', async () => {
    const badUrl = await request(server.ca, 'GET', `${server.url}/edge/management/v1/identities/%ZZ`, {
      headers: { 'zt-session': admin.token! },
    });
    assert.equal(badUrl.status, 404);
    assert.equal(badUrl.body.error.code, 'NOT_FOUND');
    const huge = await request(
      server.ca,
      'GET',
      `${server.url}/edge/management/v1/identities?filter=${'x'.repeat(20000)}`,
      { headers: { 'zt-session': admin.token! } },
    );
    assert.equal(huge.status, 431);
    assert.equal(huge.body.error.code, 'COULD_NOT_VALIDATE');
    assert.equal(huge.body.meta.apiVersion, '0.0.1');
    for (const deep of ['not '.repeat(1000) + 'isAdmin', 'not '.repeat(2500) + 'isAdmin']) {
      assertError(await admin.get(`/identities?filter=${encodeURIComponent(deep)}`), 400, 'INVALID_FILTER');
    }
  });

  test('an error without a cause leaves `cause` out (the contract types it as an object, never null)', async () => {
    const user = await admin.other('client');
    const res = await user.get('/current-identity/mfa');
    assert.equal(res.status, 404, res.text);
    assert.equal('cause' in res.body.error, false, res.text);
    assert.deepEqual(checkResponse('client', '/current-identity/mfa', 'GET', 404, res.body), []);
  });

  test('a known path with another verb is 405 METHOD_NOT_ALLOWED', async () => {
    assertError(await admin.put('/version', {}), 405, 'METHOD_NOT_ALLOWED');
  });

  test('unparsable JSON is 400 COULD_NOT_PARSE_BODY and stores nothing', async () => {
    const before = (await admin.get('/identities')).body.meta.pagination.totalCount;
    const res = await admin.req('POST', '/identities', { raw: '{"name":"broken",', contentType: 'application/json' });
    assertError(res, 400, 'COULD_NOT_PARSE_BODY');
    assert.equal((await admin.get('/identities')).body.meta.pagination.totalCount, before);
  });

  test('an unsupported content type is refused with the error envelope', async () => {
    const res = await admin.req('POST', '/identities', { raw: '<x/>', contentType: 'application/xml' });
    assertError(res, 400, 'INVALID_CONTENT_TYPE');
  });

  test('a body over 1 MiB is 413 REQUEST_ENTITY_TOO_LARGE', async () => {
    const res = await admin.post('/identities', {
      name: 'big',
      type: 'User',
      isAdmin: false,
      appData: { blob: 'x'.repeat(1024 * 1024 + 10) },
    });
    assertError(res, 413, 'REQUEST_ENTITY_TOO_LARGE');
  });

  test('a schema violation is 400 COULD_NOT_VALIDATE naming the field', async () => {
    let res = await admin.post('/identities', { type: 'User', isAdmin: false });
    assertError(res, 400, 'COULD_NOT_VALIDATE');
    assert.equal(res.body.error.cause.field, 'name');
    res = await admin.post('/identities', { name: 'x-bad-admin', type: 'User', isAdmin: 'yes' });
    assertError(res, 400, 'COULD_NOT_VALIDATE');
    assert.equal(res.body.error.cause.field, 'isAdmin');
    res = await admin.post('/identities', {
      name: 'x-bad-cost',
      type: 'User',
      isAdmin: false,
      defaultHostingCost: 70000,
    });
    assertError(res, 400, 'COULD_NOT_VALIDATE');
    assert.equal(res.body.error.cause.field, 'defaultHostingCost');
    assert.equal((await admin.get('/identities?filter=name contains "x-bad"')).body.meta.pagination.totalCount, 0);
  });

  test('a duplicate name is 400 COULD_NOT_VALIDATE on name', async () => {
    await createIdentity(admin, { name: 'dup-name' });
    const res = await admin.post('/identities', { name: 'dup-name', type: 'User', isAdmin: false });
    assertError(res, 400, 'COULD_NOT_VALIDATE');
    assert.equal(res.body.error.cause.field, 'name');
    assert.match(res.body.error.cause.reason, /unique/);
  });

  test('an unknown id is 404 NOT_FOUND with the id in urlVars', async () => {
    for (const res of [
      await admin.get('/identities/nope123'),
      await admin.patch('/identities/nope123', { name: 'z' }),
      await admin.delete('/identities/nope123'),
    ]) {
      assertError(res, 404, 'NOT_FOUND');
      assert.deepEqual(res.body.error.args.urlVars, { id: 'nope123' });
    }
  });

  test('deleting a referenced auth policy is 409 CAN_NOT_DELETE_REFERENCED_ENTITY', async () => {
    const pol = await admin.post('/auth-policies', authPolicyBody('referenced', {}, { extJwt: { allowed: false } }));
    assert.equal(pol.status, 201);
    await createIdentity(admin, { authPolicyId: pol.body.data.id });
    const res = await admin.delete(`/auth-policies/${pol.body.data.id}`);
    assertError(res, 409, 'CAN_NOT_DELETE_REFERENCED_ENTITY');
    assert.equal((await admin.get(`/auth-policies/${pol.body.data.id}`)).status, 200);
  });
});

describe('paging and filtering', () => {
  before(async () => {
    for (let i = 0; i < 12; i++)
      await createIdentity(admin, {
        name: `page-${String(i).padStart(2, '0')}`,
        roleAttributes: i % 2 ? ['odd'] : ['even'],
      });
  });

  test('limit defaults to 10 and is clamped to 500; limit=-1 means all up to 500', async () => {
    assert.equal((await admin.get('/identities')).body.data.length, 10);
    let res = await admin.get('/identities?limit=100000');
    assert.equal(res.status, 200);
    assert.equal(res.body.meta.pagination.limit, 500);
    res = await admin.get('/identities?limit=-1');
    assert.equal(res.status, 200);
    assert.equal(res.body.meta.pagination.limit, 500);
    assert.equal(res.body.data.length, res.body.meta.pagination.totalCount);
  });

  test('offset beyond the maximum is clamped to 100000', async () => {
    const res = await admin.get('/identities?offset=999999999');
    assert.equal(res.status, 200);
    assert.equal(res.body.meta.pagination.offset, 100000);
    assert.deepEqual(res.body.data, []);
  });

  test('non-integer paging is 400 INVALID_PAGINATION', async () => {
    let res = await admin.get('/identities?limit=abc');
    assertError(res, 400, 'INVALID_PAGINATION');
    assert.equal(res.body.error.cause.field, 'limit');
    res = await admin.get('/identities?offset=1.5');
    assertError(res, 400, 'INVALID_PAGINATION');
    assert.equal(res.body.error.cause.field, 'offset');
  });

  test('the default order is stable (by id)', async () => {
    const a = (await admin.get('/identities?limit=500')).body.data.map((d: any) => d.id);
    assert.deepEqual(a, [...a].sort());
  });

  test('filter with sort, skip and limit in the filter text wins over the URL', async () => {
    const res = await admin.get(
      `/identities?limit=2&filter=${encodeURIComponent('name contains "page-" sort by name desc skip 1 limit 3')}`,
    );
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.data.map((d: any) => d.name),
      ['page-10', 'page-09', 'page-08'],
    );
    assert.equal(res.body.meta.pagination.limit, 3);
    assert.equal(res.body.meta.pagination.offset, 1);
    assert.equal(res.body.meta.pagination.totalCount, 12);
  });

  test('the sort query parameter is honoured', async () => {
    const res = await admin.get(
      `/identities?filter=${encodeURIComponent('name contains "page-"')}&sort=${encodeURIComponent('name desc')}&limit=2`,
    );
    assert.deepEqual(
      res.body.data.map((d: any) => d.name),
      ['page-11', 'page-10'],
    );
  });

  test('set functions filter on role attributes', async () => {
    const res = await admin.get(`/identities?limit=100&filter=${encodeURIComponent('anyOf(roleAttributes) = "odd"')}`);
    assert.equal(res.body.meta.pagination.totalCount, 6);
    assert.ok(res.body.data.every((d: any) => d.roleAttributes.includes('odd')));
  });

  test('a syntax error or an unknown field is 400 INVALID_FILTER', async () => {
    assertError(await admin.get(`/identities?filter=${encodeURIComponent('name = ')}`), 400, 'INVALID_FILTER');
    assertError(
      await admin.get(`/identities?filter=${encodeURIComponent('nosuchfield = "x"')}`),
      400,
      'INVALID_FILTER',
    );
  });

  test('roleFilter and roleSemantic select by attributes and ids', async () => {
    const some = (await admin.get(`/identities?filter=${encodeURIComponent('name = "page-00"')}`)).body.data[0];
    let res = await admin.get(`/identities?roleFilter=%23odd&roleFilter=%40${some.id}&roleSemantic=AnyOf&limit=100`);
    assert.equal(res.status, 200);
    assert.equal(res.body.meta.pagination.totalCount, 7);
    res = await admin.get(`/identities?roleFilter=%23odd&roleFilter=%23even&roleSemantic=AllOf`);
    assert.equal(res.body.meta.pagination.totalCount, 0);
    assertError(await admin.get('/identities?roleFilter=odd'), 400, 'COULD_NOT_VALIDATE');
    assertError(await admin.get('/identities?roleFilter=%23odd&roleSemantic=Some'), 400, 'COULD_NOT_VALIDATE');
  });
});

describe('tolerance existing clients rely on', () => {
  test('unknown query parameters are ignored', async () => {
    assert.equal((await admin.get('/identities?foo=bar&_=123')).status, 200);
  });

  test('doubled slashes in paths are tolerated', async () => {
    const res = await request(server.ca, 'GET', `${server.url}/edge/management/v1//identities`, {
      headers: { 'zt-session': admin.token! },
    });
    assert.equal(res.status, 200);
  });

  test('a POST with a JSON content type and an empty body is an empty object', async () => {
    const id = await createIdentity(admin);
    const res = await admin.req('POST', `/identities/${id}/enable`, { contentType: 'application/json' });
    assert.equal(res.status, 200);
  });
});

describe('browser and session headers', () => {
  test('CORS: without configured origins no origin gets cross-origin access', async () => {
    const pre = await request(server.ca, 'OPTIONS', `${server.url}/edge/management/v1/identities`, {
      headers: {
        origin: 'https://console.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'zt-session',
      },
    });
    assert.equal(pre.status, 200);
    assert.equal(pre.headers['access-control-allow-origin'], undefined);
    assert.equal(pre.headers['access-control-allow-headers'], undefined);
    const get = await admin.get('/identities', { headers: { origin: 'https://console.example' } });
    assert.equal(get.status, 200);
    assert.equal(get.headers['access-control-allow-origin'], undefined);
    assert.equal(get.headers['access-control-allow-credentials'], undefined);
  });

  test('authenticated answers carry the session expiry headers', async () => {
    const res = await admin.get('/current-identity');
    assert.equal(res.status, 200);
    assert.equal(res.headers['expiration-seconds'], '1800');
    assert.ok(new Date(String(res.headers['expires-at'])).getTime() > Date.now() + 1790_000);
    assert.equal((await server.client().get('/version')).headers['expiration-seconds'], undefined);
  });

  test('answers written by the route itself carry them too (the client service list, default page)', async () => {
    const user = await admin.other('client');
    for (const path of ['/services', '/services?limit=500', '/current-identity']) {
      const res = await user.get(path);
      assert.equal(res.status, 200, path);
      assert.equal(res.headers['expiration-seconds'], '1800', path);
      assert.ok(new Date(String(res.headers['expires-at'])).getTime() > Date.now() + 1790_000, path);
    }
  });
});

describe('informational endpoints', () => {
  test('version is the same on /version and both API prefixes', async () => {
    const root = await request(server.ca, 'GET', `${server.url}/version`);
    const c = await server.client('client').get('/version');
    const m = await server.client('management').get('/version');
    assert.equal(c.status, 200);
    assert.equal(m.status, 200);
    assert.equal(root.status, 200);
    assert.deepEqual(c.body.data, m.body.data);
    assert.deepEqual(root.body.data, m.body.data);
    const v = m.body.data.apiVersions;
    for (const name of ['edge', 'edge-client', 'edge-management']) {
      assert.equal(typeof v[name].v1.path, 'string');
      assert.ok(Array.isArray(v[name].v1.apiBaseUrls));
    }
    assert.equal(v['edge-client'].v1.path, '/edge/client/v1');
    assert.deepEqual(m.body.data.capabilities, ['OIDC_AUTH']);
    assert.equal(v['edge-oidc'].v1.path, '/oidc');
    assert.deepEqual(checkResponse('management', '/version', 'GET', 200, m.body), []);
  });

  test('specs list, detail and body describe the served operations', async () => {
    const m = server.client('management');
    const list = await m.get('/specs');
    assert.equal(list.status, 200);
    const id = list.body.data[0].id;
    assert.equal((await m.get(`/specs/${id}`)).body.data.name, id);
    const spec = await m.get(`/specs/${id}/spec`);
    assert.equal(spec.status, 200);
    const ops = Object.values(spec.body.data.paths as Record<string, Record<string, { operationId: string }>>).flatMap(
      (p) => Object.values(p).map((o) => o.operationId),
    );
    for (const op of ['listIdentities', 'createIdentity', 'authenticate', 'listAuthPolicies', 'listAPISessions'])
      assert.ok(ops.includes(op), op);
    assert.equal((await m.get('/specs/nope')).status, 404);
  });

  test('protocols lists the HTTPS API listener, anonymously', async () => {
    const res = await server.client('client').get('/protocols');
    assert.equal(res.status, 200);
    assert.equal(res.body.data.https.address, server.url.replace('https://', ''));
    assert.deepEqual(checkResponse('client', '/protocols', 'GET', 200, res.body), []);
  });

  test('summary counts resources for admins only', async () => {
    const res = await admin.get('/summary');
    assert.equal(res.status, 200);
    assert.ok(res.body.data.identities >= 1);
    assert.equal(typeof res.body.data.authPolicies, 'number');
    for (const key of [
      'services',
      'routers',
      'routers.edge',
      'services.edge',
      'servicePolicies',
      'sessions',
      'terminators',
      'cas',
      'enrollments',
    ])
      assert.equal(typeof res.body.data[key], 'number', key);
    assertError(await server.client().get('/summary'), 401, 'UNAUTHORIZED');
  });

  test('the CA bundle is served as base64 PKCS#7', async () => {
    const res = await request(server.ca, 'GET', `${server.url}/edge/client/v1/.well-known/est/cacerts`, {
      headers: { accept: '*/*' },
    });
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /application\/pkcs7-mime/);
    assert.equal(res.headers['content-transfer-encoding'], 'base64');
    const der = Buffer.from(res.text.replace(/\s+/g, ''), 'base64');
    assert.equal(der[0], 0x30, 'DER sequence');
  });
});
