/**
 * Small defects found from outside (the reference's web console and a new user): role-attribute listings
 * take the console's `sort`, `/summary` names its counts as the reference does, CA claim criteria read back
 * as written, and one content-type rule for every route.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRecord, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { assertError, filterParam, unique } from '../harness/assert.js';
import { checkResponse } from '../harness/schemas.js';
import { newRootCa } from '../harness/third-party-pki.js';

let server: TestServer;
let admin: ApiClient;

before(async () => {
  server = await startTestServer();
  admin = await server.admin();
});
after(() => server.close());

describe('role-attribute listings', () => {
  const LISTINGS = [
    ['/identity-role-attributes', '/identities', { type: 'User', isAdmin: false }],
    ['/service-role-attributes', '/services', { encryptionRequired: true }],
    ['/edge-router-role-attributes', '/edge-routers', {}],
    ['/posture-check-role-attributes', '/posture-checks', { typeId: 'DOMAIN', domains: ['corp.example'] }],
  ] as const;

  for (const [listing, collection, extra] of LISTINGS) {
    test(`${listing} answers any sort the console sends, ordering by the attribute`, async () => {
      const tag = unique('ra');
      const attrs = [`${tag}-b`, `${tag}-a`, `${tag}-c`];
      await createRecord(admin, collection, { name: unique('ra-rec'), roleAttributes: attrs, ...extra });
      const mine = filterParam(`id contains "${tag}"`);
      for (const [sort, expected] of [
        ['name asc', [...attrs].sort()],
        ['name desc', [...attrs].sort().reverse()],
        ['id desc', [...attrs].sort().reverse()],
        ['createdAt desc', [...attrs].sort()],
        ['no-such-field', [...attrs].sort()],
        ['!!', [...attrs].sort()],
      ] as const) {
        const res = await admin.get(`${listing}?${mine}&sort=${encodeURIComponent(sort)}`);
        assert.equal(res.status, 200, `sort=${sort}: ${res.text}`);
        assert.deepEqual(res.body.data, expected, `sort=${sort}`);
        // The same envelope as every role-attribute listing (the 0.25.6 spec has no posture-check one).
        assert.deepEqual(checkResponse('management', '/service-role-attributes', 'GET', 200, res.body), []);
      }
    });
  }

  test('the filter still applies and is still checked', async () => {
    assertError(await admin.get(`/identity-role-attributes?${filterParam('name = "x"')}`), 400, 'INVALID_FILTER');
  });
});

describe('summary', () => {
  test('names its counts as the reference does, counting every router and the edge ones apart', async () => {
    await createRecord(admin, '/edge-routers', { name: unique('sum-er') });
    await createRecord(admin, '/transit-routers', { name: unique('sum-tr') });
    await createRecord(admin, '/services', { name: unique('sum-svc'), encryptionRequired: true });
    const res = await admin.get('/summary');
    assert.equal(res.status, 200);
    assert.deepEqual(checkResponse('management', '/summary', 'GET', 200, res.body), []);
    const d = res.body.data;
    for (const key of [
      'apiSessionCertificates',
      'apiSessions',
      'authPolicies',
      'authenticators',
      'cas',
      'configTypes',
      'configs',
      'edgeRouterPolicies',
      'enrollments',
      'externalJwtSigners',
      'identities',
      'identityTypes',
      'mfas',
      'postureCheckTypes',
      'postureChecks',
      'routers',
      'routers.edge',
      'serviceEdgeRouterPolicies',
      'servicePolicies',
      'services',
      'services.edge',
      'sessions',
      'terminators',
    ]) {
      assert.equal(typeof d[key], 'number', key);
    }
    for (const gone of ['edgeRouters', 'transitRouters', 'identity-types', 'identityTypesCount'])
      assert.equal(d[gone], undefined, gone);
    const edge = (await admin.get('/edge-routers')).body.meta.pagination.totalCount;
    const transit = (await admin.get('/transit-routers')).body.meta.pagination.totalCount;
    assert.equal(d['routers.edge'], edge);
    assert.equal(d.routers, edge + transit);
    assert.equal(d['services.edge'], d.services);
    assert.equal(d.services, (await admin.get('/services')).body.meta.pagination.totalCount);
    assert.equal(d.identityTypes, (await admin.get('/identity-types')).body.meta.pagination.totalCount);
    assert.ok(d.apiSessions >= 1, 'the admin session is counted');
  });
});

describe('CA externalIdClaim', () => {
  test('criteria read back as written, empty strings included', async () => {
    const ca = await newRootCa(unique('claim root'));
    const claim = {
      location: 'COMMON_NAME',
      matcher: 'ALL',
      matcherCriteria: '',
      parser: 'NONE',
      parserCriteria: '',
      index: 0,
    };
    const created = await admin.post('/cas', {
      name: unique('claim-ca'),
      certPem: ca.certPem,
      isAuthEnabled: true,
      isAutoCaEnrollmentEnabled: false,
      isOttCaEnrollmentEnabled: false,
      identityRoles: [],
      externalIdClaim: claim,
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.data.id;
    assert.deepEqual((await admin.get(`/cas/${id}`)).body.data.externalIdClaim, claim);
    // A patch of one member keeps the others as written.
    assert.equal((await admin.patch(`/cas/${id}`, { externalIdClaim: { parserCriteria: '-' } })).status, 200);
    assert.deepEqual((await admin.get(`/cas/${id}`)).body.data.externalIdClaim, { ...claim, parserCriteria: '-' });
    // An empty criterion is still no criterion where one is required.
    assertError(
      await admin.patch(`/cas/${id}`, { externalIdClaim: { matcher: 'PREFIX' } }),
      400,
      'COULD_NOT_VALIDATE',
      'externalIdClaim.matcherCriteria',
    );
  });
});

describe('content types', () => {
  test('a JSON-only route answers INVALID_CONTENT_TYPE to every other type, text/plain included', async () => {
    const before = (await admin.get('/identities')).body.meta.pagination.totalCount;
    const body = JSON.stringify({ name: unique('ct'), type: 'User', isAdmin: false });
    for (const contentType of [
      'text/plain',
      'text/plain; charset=utf-8',
      'application/x-pem-file',
      'application/pkcs10',
      'application/jwt',
      'application/xml',
    ]) {
      assertError(await admin.req('POST', '/identities', { raw: body, contentType }), 400, 'INVALID_CONTENT_TYPE');
    }
    assert.equal((await admin.get('/identities')).body.meta.pagination.totalCount, before, 'nothing was created');
    const id = await createRecord(admin, '/identities', { name: unique('ct'), type: 'User', isAdmin: false });
    // Routes without a body schema follow the same rule.
    assertError(
      await admin.req('POST', `/identities/${id}/disable`, { raw: '{}', contentType: 'text/plain' }),
      400,
      'INVALID_CONTENT_TYPE',
    );
    assertError(
      await admin.req('PATCH', `/identities/${id}`, { raw: '{}', contentType: 'text/plain' }),
      400,
      'INVALID_CONTENT_TYPE',
    );
  });

  test('JSON types stay accepted, and an anonymous caller is refused before the type is looked at', async () => {
    const ok = await admin.req('POST', '/identities', {
      raw: JSON.stringify({ name: unique('ct'), type: 'User', isAdmin: false }),
      contentType: 'application/vnd.api+json',
    });
    assert.equal(ok.status, 201, ok.text);
    assertError(
      await server.client().req('POST', '/identities', { raw: '{}', contentType: 'text/plain' }),
      401,
      'UNAUTHORIZED',
    );
  });

  test('the routes that take PEM still take text/plain', async () => {
    // CA verify reads its proof as text: a non-certificate body is its own error, not a content-type one.
    const ca = await newRootCa(unique('ct root'));
    const id = await createRecord(admin, '/cas', {
      name: unique('ct-ca'),
      certPem: ca.certPem,
      isAuthEnabled: false,
      isAutoCaEnrollmentEnabled: false,
      isOttCaEnrollmentEnabled: false,
      identityRoles: [],
    });
    assertError(
      await admin.req('POST', `/cas/${id}/verify`, { raw: 'not a pem', contentType: 'text/plain' }),
      400,
      'COULD_NOT_PARSE_BODY',
    );
    const enroll = '/edge/client/v1';
    for (const path of ['/enroll/ott', '/enroll']) {
      const res = await server.request('POST', `${enroll}${path}?token=9b2f3c1e-0000-4000-8000-000000000000`, {
        raw: 'x',
        contentType: 'text/plain',
      });
      assert.notEqual(res.body?.error?.code, 'INVALID_CONTENT_TYPE', `${path}: ${res.text}`);
      assert.equal(res.status, 400, `${path}: ${res.text}`);
    }
  });
});
