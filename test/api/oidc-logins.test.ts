/**
 * The other primary logins of the OIDC provider (docs/reference-notes.md §14.4): the TLS client certificate
 * (`/oidc/login/cert`, over a real TLS connection) and an external JWT (`/oidc/login/ext-jwt`), each through to
 * tokens whose `amr` names the method; a certificate login's tokens bound to its certificate; refusals in the
 * login endpoints' shape.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createIdentity, createUser } from '../harness/server.js';
import {
  bearer,
  claimsOf,
  createExtJwtSigner,
  enrolledCertIdentity,
  exchangeCode,
  exchangeRequest,
  oidcCertLogin,
  oidcLogin,
  pkce,
  postCertLogin,
  postExtJwtLogin,
  refreshRequest,
  serverForTests,
  startLogin,
  type ClientCert,
  type Tokens,
} from '../harness/oidc.js';

const env = serverForTests();

describe('certificate login', () => {
  let me: Awaited<ReturnType<typeof enrolledCertIdentity>>;

  before(async () => {
    me = await enrolledCertIdentity(env.server, env.admin);
  });

  test('the TLS client certificate of the login request logs its identity in', async () => {
    const { id, p, res } = await postCertLogin(env.server, me);
    assert.equal(res.status, 302, res.text);
    const tok = await exchangeCode(env.server, id, p);
    assert.equal(tok.status, 200, tok.text);
    const claims = claimsOf(tok.body.access_token);
    assert.equal(claims.sub, me.id);
    assert.deepEqual(claims.amr, ['cert']);
  });

  describe('the tokens are bound to the certificate (z_cfs, z_acf)', () => {
    let tokens: Tokens;
    const currentIdentity = (token: string, tls?: ClientCert) =>
      env.server.request('GET', '/edge/client/v1/current-identity', { headers: bearer(token), ...tls });

    before(async () => {
      tokens = await oidcCertLogin(env.server, me);
    });

    test('the access and refresh tokens name the login certificate', () => {
      for (const t of [tokens.access_token, tokens.refresh_token!]) {
        const c = claimsOf(t);
        assert.deepEqual(c.z_cfs, [me.fingerprint]);
        assert.equal(c.z_acf, me.fingerprint);
      }
    });

    test('the access token works beside its certificate, and is 401 invalid without it', async () => {
      const ok = await currentIdentity(tokens.access_token, me);
      assert.equal(ok.status, 200, ok.text);
      const bare = await currentIdentity(tokens.access_token);
      assert.equal(bare.status, 401);
      assert.equal(bare.body.error.code, 'UNAUTHORIZED');
      assert.match(String(bare.headers['www-authenticate']), /error="invalid"/);
      const info = await env.server.request('GET', '/oidc/userinfo', { headers: bearer(tokens.access_token) });
      assert.equal(info.status, 401, 'userinfo judges the binding too');
    });

    test('another certificate does not stand in for it', async () => {
      const other = await enrolledCertIdentity(env.server, env.admin);
      assert.equal((await currentIdentity(tokens.access_token, other)).status, 401);
    });

    test('a refresh or exchange without the certificate is access_denied; with it the new tokens stay bound', async () => {
      const bare = await refreshRequest(env.server, tokens.refresh_token!);
      assert.equal(bare.status, 400);
      assert.equal(bare.body.error, 'access_denied');
      const exchange = await exchangeRequest(env.server, tokens.refresh_token!);
      assert.equal(exchange.body.error, 'access_denied');
      const refreshed = await refreshRequest(env.server, tokens.refresh_token!, me);
      assert.equal(refreshed.status, 200, refreshed.text);
      assert.deepEqual(claimsOf(refreshed.body.access_token).z_cfs, [me.fingerprint]);
      assert.deepEqual(claimsOf(refreshed.body.refresh_token).z_acf, me.fingerprint);
    });

    test('tokens of a password login are bound to nothing', async () => {
      const user = await createUser(env.server, env.admin);
      const t = await oidcLogin(env.server, user.username, user.password);
      assert.equal(claimsOf(t.access_token).z_cfs, null);
      assert.equal(claimsOf(t.access_token).z_acf, undefined);
    });
  });

  test('without a certificate the login is 401 INVALID_AUTH', async () => {
    const id = await startLogin(env.server, pkce(), { method: 'cert' });
    const res = await env.server.request('POST', `/oidc/login/cert?authRequestID=${id}`, { body: {} });
    assert.equal(res.status, 401);
    assert.equal(res.body.code, 'INVALID_AUTH');
  });
});

describe('external JWT login', () => {
  let signer: Awaited<ReturnType<typeof createExtJwtSigner>>;
  let identityId: string;

  before(async () => {
    signer = await createExtJwtSigner(env.admin);
    identityId = await createIdentity(env.admin);
  });

  test('a bearer JWT of a known signer logs its identity in', async () => {
    const p = pkce();
    const id = await startLogin(env.server, p, { method: 'ext-jwt' });
    const res = await postExtJwtLogin(env.server, id, await signer.jwtFor(identityId));
    assert.equal(res.status, 302, res.text);
    const tok = await exchangeCode(env.server, id, p);
    assert.equal(tok.status, 200, tok.text);
    assert.equal(claimsOf(tok.body.access_token).sub, identityId);
    assert.deepEqual(claimsOf(tok.body.access_token).amr, ['ext-jwt']);
  });

  test('a JWT of no known signer, or none, is 401 with a bearer challenge', async () => {
    const id = await startLogin(env.server, pkce(), { method: 'ext-jwt' });
    const res = await postExtJwtLogin(env.server, id, await signer.foreignJwtFor(identityId));
    assert.equal(res.status, 401);
    assert.equal(res.body.code, 'INVALID_AUTH');
    assert.match(String(res.headers['www-authenticate']), /^Bearer error="invalid"/);
    const none = await postExtJwtLogin(env.server, id);
    assert.equal(none.status, 401);
    assert.match(String(none.headers['www-authenticate']), /error="missing"/);
  });
});
