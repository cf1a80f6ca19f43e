/**
 * External JWT signer records (docs/reference-notes.md §5.4): management CRUD with a field error for every rule,
 * on create, PUT and PATCH (judged on the merged record), the derived certificate fields, the anonymous Client API
 * listing, and the auth-policy references to signers. Subtests run in order and build on each other.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, createRecord, type ApiClient, type TestServer } from '../harness/server.js';
import { assertError, assertFieldError, filterParam, unique } from '../harness/assert.js';
import { authPolicyBody } from '../harness/bodies.js';
import { checkResponse } from '../harness/schemas.js';
import { newCertSigner } from '../harness/jwt-issuer.js';
import { certificateFingerprint } from '../../src/pki/index.js';

describe('external JWT signers', () => {
  let server: TestServer;
  let admin: ApiClient;
  let certPem = '';
  let otherPem = '';
  let certId = '';
  let jwksId = '';

  const body = (over: Record<string, unknown> = {}) => ({
    name: unique('signer'),
    issuer: unique('https://issuer.example'),
    audience: 'edge',
    enabled: true,
    certPem,
    ...over,
  });

  before(async () => {
    server = await startTestServer();
    admin = await server.admin();
    certPem = (await newCertSigner('signer one')).certPem;
    otherPem = (await newCertSigner('signer two')).certPem;
  });
  after(() => server?.close());

  it('creates a certificate signer and shows the fields derived from its certificate', async () => {
    const res = await admin.post(
      '/external-jwt-signers',
      body({ kid: 'k1', externalAuthUrl: 'https://issuer.example/login', tags: { team: 'a' } }),
    );
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(checkResponse('management', '/external-jwt-signers', 'POST', 201, res.body), []);
    certId = res.body.data.id;
    const detail = await admin.get(`/external-jwt-signers/${certId}`);
    assert.equal(detail.status, 200);
    assert.deepEqual(checkResponse('management', '/external-jwt-signers/{id}', 'GET', 200, detail.body), []);
    const d = detail.body.data;
    assert.equal(d.fingerprint, certificateFingerprint(certPem));
    assert.equal(d.commonName, 'signer one');
    assert.ok(Date.parse(d.notBefore) < Date.now() && Date.parse(d.notAfter) > Date.now());
    assert.equal(d.claimsProperty, 'sub', 'default claim');
    assert.equal(d.useExternalId, false, 'default: match identity ids');
    assert.equal(d.jwksEndpoint, null);
    assert.deepEqual(d.tags, { team: 'a' });
    const list = await admin.get(`/external-jwt-signers?${filterParam(`id = "${certId}"`)}`);
    assert.deepEqual(checkResponse('management', '/external-jwt-signers', 'GET', 200, list.body), []);
    assert.equal(list.body.data.length, 1);
  });

  it('creates a JWKS signer, whose certificate fields are empty (null only where the schema allows it)', async () => {
    const res = await admin.post(
      '/external-jwt-signers',
      body({
        certPem: undefined,
        jwksEndpoint: 'http://127.0.0.1:9/jwks',
        useExternalId: true,
        claimsProperty: '/email',
      }),
    );
    assert.equal(res.status, 201, res.text);
    jwksId = res.body.data.id;
    const d = (await admin.get(`/external-jwt-signers/${jwksId}`)).body.data;
    assert.equal(d.certPem, null);
    for (const f of ['fingerprint', 'commonName', 'kid']) assert.equal(d[f], '', f);
    // Go's zero time, as the reference renders a time it does not have.
    for (const f of ['notBefore', 'notAfter']) assert.equal(d[f], '0001-01-01T00:00:00.000Z', f);
    assert.equal(d.useExternalId, true);
    assert.equal(d.claimsProperty, '/email');
  });

  it('refuses every broken rule on create with a field error', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ certPem: undefined }, 'certPem'],
      [{ jwksEndpoint: 'https://idp.example/jwks' }, 'jwksEndpoint'],
      [{ certPem: undefined, jwksEndpoint: 'ftp://idp.example/jwks' }, 'jwksEndpoint'],
      [{ certPem: undefined, jwksEndpoint: 'not a url' }, 'jwksEndpoint'],
      [{ externalAuthUrl: 'javascript:alert(1)' }, 'externalAuthUrl'],
      [{ claimsProperty: '/' }, 'claimsProperty'],
      [{ claimsProperty: 'a//b' }, 'claimsProperty'],
      [{ claimsProperty: 'a~2' }, 'claimsProperty'],
      [{ name: '' }, 'name'],
      [{ issuer: '   ' }, 'issuer'],
      [{ audience: '' }, 'audience'],
      [{ audience: undefined }, 'audience'],
      [{ audience: null }, 'audience'],
      [{ enabled: undefined }, 'enabled'],
      [{ issuer: undefined }, 'issuer'],
    ];
    for (const [over, field] of cases) {
      const res = await admin.post('/external-jwt-signers', body(over));
      assertFieldError(res, field);
    }
    const first = (await admin.get(`/external-jwt-signers/${certId}`)).body.data;
    assertFieldError(await admin.post('/external-jwt-signers', body({ name: first.name })), 'name');
    assertFieldError(await admin.post('/external-jwt-signers', body({ issuer: first.issuer })), 'issuer');
  });

  it('refuses a certPem that is not exactly one certificate (INVALID_CERT_PEM)', async () => {
    for (const pem of [
      certPem + otherPem,
      'garbage',
      '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n',
    ]) {
      assertError(
        await admin.post('/external-jwt-signers', body({ certPem: pem })),
        400,
        'INVALID_CERT_PEM',
        'certPem',
      );
    }
  });

  it('judges a PATCH on the merged record and keeps what it leaves out', async () => {
    assertFieldError(
      await admin.patch(`/external-jwt-signers/${certId}`, { jwksEndpoint: 'https://x.example/j' }),
      'jwksEndpoint',
    );
    assertFieldError(await admin.patch(`/external-jwt-signers/${certId}`, { certPem: null }), 'certPem');
    assertError(await admin.patch(`/external-jwt-signers/${certId}`, { certPem: 'nope' }), 400, 'INVALID_CERT_PEM');
    assertFieldError(await admin.patch(`/external-jwt-signers/${certId}`, { audience: '' }), 'audience');
    assert.equal((await admin.patch(`/external-jwt-signers/${certId}`, { name: null, enabled: null })).status, 200);
    const kept = (await admin.get(`/external-jwt-signers/${certId}`)).body.data;
    assert.equal(kept.kid, 'k1');
    assert.equal(kept.enabled, true);
    // Switching to a JWKS endpoint clears the certificate and what was derived from it.
    const sw = await admin.patch(`/external-jwt-signers/${certId}`, {
      certPem: null,
      jwksEndpoint: 'https://x.example/j',
    });
    assert.equal(sw.status, 200, sw.text);
    const now = (await admin.get(`/external-jwt-signers/${certId}`)).body.data;
    assert.equal(now.fingerprint, '');
    assert.equal(now.jwksEndpoint, 'https://x.example/j');
    // And back, with another certificate.
    assert.equal(
      (await admin.patch(`/external-jwt-signers/${certId}`, { certPem: otherPem, jwksEndpoint: null })).status,
      200,
    );
    assert.equal((await admin.get(`/external-jwt-signers/${certId}`)).body.data.commonName, 'signer two');
  });

  it('replaces every field on PUT', async () => {
    const cur = (await admin.get(`/external-jwt-signers/${certId}`)).body.data;
    assertFieldError(
      await admin.put(`/external-jwt-signers/${certId}`, {
        name: cur.name,
        issuer: cur.issuer,
        audience: 'x',
        enabled: true,
      }),
      'certPem',
    );
    const res = await admin.put(`/external-jwt-signers/${certId}`, {
      name: cur.name,
      issuer: cur.issuer,
      audience: 'edge-2',
      enabled: false,
      certPem,
    });
    assert.equal(res.status, 200, res.text);
    const d = (await admin.get(`/external-jwt-signers/${certId}`)).body.data;
    assert.equal(d.kid, '', 'kid reset');
    assert.equal(d.externalAuthUrl, '');
    assert.deepEqual(d.tags, {});
    assert.equal(d.audience, 'edge-2');
    assert.equal(d.fingerprint, certificateFingerprint(certPem));
  });

  it('lists enabled signers anonymously on the Client API with only what a login page needs', async () => {
    assert.equal(
      (await admin.patch(`/external-jwt-signers/${jwksId}`, { externalAuthUrl: 'https://idp.example/login' })).status,
      200,
    );
    const res = await server.client('client').get('/external-jwt-signers');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(checkResponse('client', '/external-jwt-signers', 'GET', 200, res.body), []);
    const ids = res.body.data.map((s: { id: string }) => s.id);
    assert.ok(ids.includes(jwksId));
    assert.ok(!ids.includes(certId), 'a disabled signer is not offered');
    const entry = res.body.data.find((s: { id: string }) => s.id === jwksId);
    assert.deepEqual(Object.keys(entry).sort(), ['_links', 'createdAt', 'externalAuthUrl', 'id', 'name', 'updatedAt']);
    assert.equal(entry.externalAuthUrl, 'https://idp.example/login');
    const filtered = await server.client('client').get(`/external-jwt-signers?${filterParam('name = "none"')}`);
    assert.equal(filtered.body.data.length, 0);
    assert.equal(
      (await server.client('management').get('/external-jwt-signers')).status,
      401,
      'management stays admin',
    );
  });

  it('checks the signers an auth policy names and refuses deleting a named signer', async () => {
    assertFieldError(
      await admin.post(
        '/auth-policies',
        authPolicyBody(unique('p'), {}, { secondary: { requireExtJwtSigner: 'no-such-signer' } }),
      ),
      'secondary.requireExtJwtSigner',
    );
    assertFieldError(
      await admin.post(
        '/auth-policies',
        authPolicyBody(unique('p'), {}, { extJwt: { allowedSigners: [jwksId, 'nope'] } }),
      ),
      'primary.extJwt.allowedSigners',
    );
    const policyId = await createRecord(
      admin,
      '/auth-policies',
      authPolicyBody(
        unique('p'),
        {},
        { extJwt: { allowedSigners: [jwksId] }, secondary: { requireExtJwtSigner: certId } },
      ),
    );
    for (const id of [certId, jwksId]) {
      const res = await admin.delete(`/external-jwt-signers/${id}`);
      assertError(res, 409, 'CAN_NOT_DELETE_REFERENCED_ENTITY');
      assert.match(res.body.error.cause.reason, new RegExp(policyId));
    }
    // A patch with null lifts the second factor (null is a value here); the allowed signers still hold both.
    const lifted = await admin.patch(`/auth-policies/${policyId}`, { secondary: { requireExtJwtSigner: null } });
    assert.equal(lifted.status, 200, JSON.stringify(lifted.body));
    assert.equal((await admin.get(`/auth-policies/${policyId}`)).body.data.secondary.requireExtJwtSigner, null);
    for (const id of [jwksId]) {
      const res = await admin.delete(`/external-jwt-signers/${id}`);
      assertError(res, 409, 'CAN_NOT_DELETE_REFERENCED_ENTITY');
      assert.match(res.body.error.cause.reason, new RegExp(policyId));
    }
    assert.equal((await admin.delete(`/auth-policies/${policyId}`)).status, 200);
    assert.equal((await admin.delete(`/external-jwt-signers/${certId}`)).status, 200);
    assert.equal((await admin.get(`/external-jwt-signers/${certId}`)).status, 404);
  });
});
