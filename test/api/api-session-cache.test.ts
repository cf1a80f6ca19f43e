/**
 * The in-memory API-session cache (src/model/services/api-session/api-session-cache.ts) answers a token without the
 * store while nothing it depends on changed; every change that matters must show on the very next request.
 * Each test first makes a request, so the token is cached before the change.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRecord, createUser, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { assertError, unique } from '../harness/assert.js';
import { authPolicyBody } from '../harness/bodies.js';
import { newCertSigner } from '../harness/jwt-issuer.js';

let server: TestServer;
let admin: ApiClient;

before(async () => {
  server = await startTestServer();
  admin = await server.admin();
});
after(() => server.close());

/** Two requests: the first fills the cache, the second is answered from it. */
async function warm(c: ApiClient, path = '/current-identity'): Promise<void> {
  for (let i = 0; i < 2; i++) {
    const res = await c.get(path);
    assert.equal(res.status, 200, res.text);
  }
}

describe('API-session cache invalidation', () => {
  it('an identity disabled by an admin is refused on its next request', async () => {
    const u = await createUser(server, admin);
    await warm(u.client);
    const res = await admin.post(`/identities/${u.id}/disable`, { durationMinutes: 10 });
    assert.equal(res.status, 200, res.text);
    assertError(await u.client.get('/current-identity'), 401, 'UNAUTHORIZED');
  });

  it('a deleted identity’s session is refused on its next request', async () => {
    const u = await createUser(server, admin);
    await warm(u.client);
    assert.equal((await admin.delete(`/identities/${u.id}`)).status, 200);
    assertError(await u.client.get('/current-identity'), 401, 'UNAUTHORIZED');
  });

  it('logout ends the session at once', async () => {
    const u = await createUser(server, admin);
    await warm(u.client);
    assert.equal((await u.client.delete('/current-api-session')).status, 200);
    assertError(await u.client.get('/current-identity'), 401, 'UNAUTHORIZED');
  });

  it('an API session deleted by an admin is refused on its next request', async () => {
    const u = await createUser(server, admin);
    await warm(u.client);
    const mine = await u.client.get('/current-api-session');
    assert.equal((await admin.delete(`/api-sessions/${mine.body.data.id}`)).status, 200);
    assertError(await u.client.get('/current-identity'), 401, 'UNAUTHORIZED');
  });

  it('revoking isAdmin takes the admin operations away on the next request', async () => {
    const u = await createUser(server, admin, { api: 'management', identity: { isAdmin: true } });
    await warm(u.client, '/identities');
    const res = await admin.patch(`/identities/${u.id}`, { isAdmin: false });
    assert.equal(res.status, 200, res.text);
    assertError(await u.client.get('/identities'), 401, 'UNAUTHORIZED');
    assert.equal((await u.client.get('/current-identity')).status, 200, 'still a session');
  });

  it('granting isAdmin gives the admin operations on the next request', async () => {
    const u = await createUser(server, admin, { api: 'management' });
    await warm(u.client);
    assertError(await u.client.get('/identities'), 401, 'UNAUTHORIZED');
    assert.equal((await admin.patch(`/identities/${u.id}`, { isAdmin: true })).status, 200);
    assert.equal((await u.client.get('/identities')).status, 200);
  });

  it('a renamed identity shows its new name on the next request', async () => {
    const u = await createUser(server, admin);
    await warm(u.client);
    const name = unique('renamed');
    assert.equal((await admin.patch(`/identities/${u.id}`, { name })).status, 200);
    const res = await u.client.get('/current-identity');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.data.name, name);
  });

  it('an auth policy requiring a secondary ext-JWT after login makes the session partial', async () => {
    const { certPem } = await newCertSigner(unique('cache-signer'));
    const signerId = await createRecord(admin, '/external-jwt-signers', {
      name: unique('cache-signer'),
      issuer: unique('https://idp-cache.example'),
      audience: 'edge',
      enabled: true,
      certPem,
      kid: 'cache-kid',
    });
    const policyName = unique('cache-policy');
    const policyId = await createRecord(admin, '/auth-policies', authPolicyBody(policyName));
    const u = await createUser(server, admin, { identity: { authPolicyId: policyId } });
    await warm(u.client, '/services');
    const res = await admin.patch(`/auth-policies/${policyId}`, { secondary: { requireExtJwtSigner: signerId } });
    assert.equal(res.status, 200, res.text);
    assertError(await u.client.get('/services'), 401, 'UNAUTHORIZED');
    assert.equal((await u.client.get('/current-api-session')).status, 200, 'a partial route still answers');
    // Lifting the requirement (a full update) makes the session full again.
    const lift = await admin.put(`/auth-policies/${policyId}`, authPolicyBody(policyName));
    assert.equal(lift.status, 200, lift.text);
    assert.equal((await u.client.get('/services')).status, 200);
  });

  it('moving an identity to a policy requiring a secondary ext-JWT makes its session partial', async () => {
    const { certPem } = await newCertSigner(unique('cache-signer2'));
    const signerId = await createRecord(admin, '/external-jwt-signers', {
      name: unique('cache-signer2'),
      issuer: unique('https://idp-cache2.example'),
      audience: 'edge',
      enabled: true,
      certPem,
      kid: 'cache-kid2',
    });
    const strict = await createRecord(
      admin,
      '/auth-policies',
      authPolicyBody(unique('cache-strict'), {}, { secondary: { requireExtJwtSigner: signerId } }),
    );
    const u = await createUser(server, admin);
    await warm(u.client, '/services');
    assert.equal((await admin.patch(`/identities/${u.id}`, { authPolicyId: strict })).status, 200);
    assertError(await u.client.get('/services'), 401, 'UNAUTHORIZED');
  });
});
