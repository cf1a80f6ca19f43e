/**
 * The other primary logins of the OIDC provider (docs/reference-notes.md §14.4): the TLS client certificate
 * (`/oidc/login/cert`, over a real TLS connection) and an external JWT (`/oidc/login/ext-jwt`), each through to
 * tokens whose `amr` names the method; a certificate login's tokens bound to its certificate; refusals in the
 * login endpoints' shape.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, type KeyObject } from 'node:crypto';
import { generateKeyAndCsr } from '../../src/pki/index.js';
import {
  createIdentity,
  createRecord,
  createUser,
  startTestServer,
  type ApiClient,
  type TestServer,
} from '../harness/server.js';
import { newCertSigner, signJwt } from '../harness/jwt-issuer.js';
import {
  callback,
  claimsOf,
  form,
  oidcLogin,
  pkce,
  REDIRECT_URI,
  startLogin,
  tokenRequest,
  type Pkce,
} from '../harness/oidc.js';
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

  describe('the tokens are bound to the certificate (z_cfs, z_acf)', () => {
    let tokens: { access_token: string; refresh_token: string; id_token: string };
    let fingerprint: string;
    const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

    before(async () => {
      fingerprint = new X509Certificate(cert).fingerprint.replace(/:/g, '').toLowerCase();
      const p = pkce();
      const id = await startLogin(server, p, { method: 'cert' });
      assert.equal(
        (await server.request('POST', `/oidc/login/cert?authRequestID=${id}`, { body: {}, cert, key })).status,
        302,
      );
      const tok = await tokensFor(id, p);
      assert.equal(tok.status, 200, tok.text);
      tokens = tok.body;
    });

    test('the access and refresh tokens name the login certificate', () => {
      for (const t of [tokens.access_token, tokens.refresh_token]) {
        const c = claimsOf(t);
        assert.deepEqual(c.z_cfs, [fingerprint]);
        assert.equal(c.z_acf, fingerprint);
      }
    });

    test('the access token works beside its certificate, and is 401 invalid without it', async () => {
      const ok = await server.request('GET', '/edge/client/v1/current-identity', {
        headers: bearer(tokens.access_token),
        cert,
        key,
      });
      assert.equal(ok.status, 200, ok.text);
      const bare = await server.request('GET', '/edge/client/v1/current-identity', {
        headers: bearer(tokens.access_token),
      });
      assert.equal(bare.status, 401);
      assert.equal(bare.body.error.code, 'UNAUTHORIZED');
      assert.match(String(bare.headers['www-authenticate']), /error="invalid"/);
      const info = await server.request('GET', '/oidc/userinfo', { headers: bearer(tokens.access_token) });
      assert.equal(info.status, 401, 'userinfo judges the binding too');
    });

    test('another certificate does not stand in for it', async () => {
      const other = await createIdentity(admin, { enrollment: { ott: true } });
      const token = (await admin.get(`/identities/${other}`)).body.data.enrollment.ott.token;
      const pair = await generateKeyAndCsr({ commonName: unique('oidc-other') });
      const enrolled = await server.request('POST', `/edge/client/v1/enroll/ott?token=${token}`, {
        raw: pair.csrPem,
        contentType: 'application/pkcs10',
        headers: { accept: 'application/x-x509-user-cert' },
      });
      const res = await server.request('GET', '/edge/client/v1/current-identity', {
        headers: bearer(tokens.access_token),
        cert: enrolled.text,
        key: pair.privateKeyPem,
      });
      assert.equal(res.status, 401);
    });

    test('a refresh or exchange without the certificate is access_denied; with it the new tokens stay bound', async () => {
      const bare = await tokenRequest(server, {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: 'native',
      });
      assert.equal(bare.status, 400);
      assert.equal(bare.body.error, 'access_denied');
      const exchange = await tokenRequest(server, {
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        client_id: 'native',
        subject_token: tokens.refresh_token,
        subject_token_type: 'urn:ietf:params:oauth:token-type:refresh_token',
      });
      assert.equal(exchange.body.error, 'access_denied');
      const refreshed = await server.request('POST', '/oidc/oauth/token', {
        ...form({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: 'native' }),
        cert,
        key,
      });
      assert.equal(refreshed.status, 200, refreshed.text);
      assert.deepEqual(claimsOf(refreshed.body.access_token).z_cfs, [fingerprint]);
      assert.deepEqual(claimsOf(refreshed.body.refresh_token).z_acf, fingerprint);
    });

    test('tokens of a password login are bound to nothing', async () => {
      const user = await createUser(server, admin);
      const t = await oidcLogin(server, user.username, user.password);
      assert.equal(claimsOf(t.access_token).z_cfs, null);
      assert.equal(claimsOf(t.access_token).z_acf, undefined);
    });
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
