/**
 * The other primary logins of the OIDC provider (docs/reference-notes.md §14.4): the TLS client certificate
 * (`/oidc/login/cert`, over a real TLS connection) and an external JWT (`/oidc/login/ext-jwt`), each through to
 * tokens whose `amr` names the method; refusals in the login endpoints' shape.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KeyObject } from 'node:crypto';
import { generateKeyAndCsr } from '../../src/pki/index.js';
import { createIdentity, createRecord, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { newCertSigner, signJwt } from '../harness/jwt-issuer.js';
import { callback, claimsOf, pkce, REDIRECT_URI, startLogin, tokenRequest, type Pkce } from '../harness/oidc.js';
import { unique } from '../harness/assert.js';

let server: TestServer;
let admin: ApiClient;

before(async () => {
  server = await startTestServer();
  admin = await server.admin();
});
after(async () => server.close());

/** Exchanges the code of a completed login; answers the token response. */
async function tokensFor(id: string, p: Pkce) {
  const { code } = await callback(server, id);
  return tokenRequest(server, {
    grant_type: 'authorization_code',
    code: code!,
    code_verifier: p.verifier,
    redirect_uri: REDIRECT_URI,
    client_id: 'native',
  });
}

describe('certificate login', () => {
  let cert: string;
  let key: string;
  let identityId: string;

  before(async () => {
    identityId = await createIdentity(admin, { enrollment: { ott: true } });
    const token = (await admin.get(`/identities/${identityId}`)).body.data.enrollment.ott.token;
    const { privateKeyPem, csrPem } = await generateKeyAndCsr({ commonName: unique('oidc-cert') });
    const enrolled = await server.request('POST', `/edge/client/v1/enroll/ott?token=${token}`, {
      raw: csrPem,
      contentType: 'application/pkcs10',
      headers: { accept: 'application/x-x509-user-cert' },
    });
    assert.equal(enrolled.status, 200);
    cert = enrolled.text;
    key = privateKeyPem;
  });

  test('the TLS client certificate of the login request logs its identity in', async () => {
    const p = pkce();
    const id = await startLogin(server, p, { method: 'cert' });
    const res = await server.request('POST', `/oidc/login/cert?authRequestID=${id}`, { body: {}, cert, key });
    assert.equal(res.status, 302, res.text);
    const tok = await tokensFor(id, p);
    assert.equal(tok.status, 200, tok.text);
    const claims = claimsOf(tok.body.access_token);
    assert.equal(claims.sub, identityId);
    assert.deepEqual(claims.amr, ['cert']);
  });

  test('without a certificate the login is 401 INVALID_AUTH', async () => {
    const id = await startLogin(server, pkce(), { method: 'cert' });
    const res = await server.request('POST', `/oidc/login/cert?authRequestID=${id}`, { body: {} });
    assert.equal(res.status, 401);
    assert.equal(res.body.code, 'INVALID_AUTH');
  });
});

describe('external JWT login', () => {
  let signer: { certPem: string; key: KeyObject };
  let issuer: string;
  let identityId: string;

  before(async () => {
    signer = await newCertSigner(unique('idp'));
    issuer = `https://${unique('idp')}.example`;
    await createRecord(admin, '/external-jwt-signers', {
      name: unique('signer'),
      issuer,
      audience: 'edge',
      enabled: true,
      certPem: signer.certPem,
      kid: 'k1',
    });
    identityId = await createIdentity(admin);
  });

  test('a bearer JWT of a known signer logs its identity in', async () => {
    const p = pkce();
    const id = await startLogin(server, p, { method: 'ext-jwt' });
    const jwt = await signJwt(signer.key, { iss: issuer, aud: 'edge', kid: 'k1', claims: { sub: identityId } });
    const res = await server.request('POST', `/oidc/login/ext-jwt?authRequestID=${id}`, {
      body: {},
      headers: { authorization: `Bearer ${jwt}` },
    });
    assert.equal(res.status, 302, res.text);
    const tok = await tokensFor(id, p);
    assert.equal(tok.status, 200, tok.text);
    assert.equal(claimsOf(tok.body.access_token).sub, identityId);
    assert.deepEqual(claimsOf(tok.body.access_token).amr, ['ext-jwt']);
  });

  test('a JWT of no known signer, or none, is 401 with a bearer challenge', async () => {
    const id = await startLogin(server, pkce(), { method: 'ext-jwt' });
    const other = await newCertSigner(unique('other'));
    const jwt = await signJwt(other.key, { iss: issuer, aud: 'edge', kid: 'k1', claims: { sub: identityId } });
    const res = await server.request('POST', `/oidc/login/ext-jwt?authRequestID=${id}`, {
      body: {},
      headers: { authorization: `Bearer ${jwt}` },
    });
    assert.equal(res.status, 401);
    assert.equal(res.body.code, 'INVALID_AUTH');
    assert.match(String(res.headers['www-authenticate']), /^Bearer error="invalid"/);
    const none = await server.request('POST', `/oidc/login/ext-jwt?authRequestID=${id}`, { body: {} });
    assert.equal(none.status, 401);
    assert.match(String(none.headers['www-authenticate']), /error="missing"/);
  });
});
