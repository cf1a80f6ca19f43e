/**
 * The OIDC provider's state is the store's (docs/decisions.md, "OIDC login"): two controllers on one PostgreSQL
 * database share one signing key, so a login begun on one finishes on the other, tokens of either work on both,
 * a rotated refresh token is refused everywhere and a revocation bites on the other controller at once.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createUser, startTestServer, type TestServer } from '../harness/server.js';
import { freshDatabase, postgresSkip, testStoreKind } from '../harness/pg.js';
import { callback, claimsOf, passwordLogin, pkce, REDIRECT_URI, startLogin, tokenRequest } from '../harness/oidc.js';

/** Its database is its own whatever the pass; it runs once, in the PostgreSQL pass of the API tests. */
const skip =
  testStoreKind() === 'postgres' ? await postgresSkip() : 'runs in the PostgreSQL pass (EDGECTL_TEST_STORE=postgres)';

describe('OIDC across two controllers on one database', { skip }, () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let a: TestServer;
  let b: TestServer;
  let user: { id: string; username: string; password: string };

  before(async () => {
    database = await freshDatabase();
    a = await startTestServer({ db: database.url });
    b = await startTestServer({ db: database.url });
    user = await createUser(a, await a.admin());
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await database?.drop();
  });

  const me = (server: TestServer, token: string) =>
    server.request('GET', '/edge/client/v1/current-identity', { headers: { authorization: `Bearer ${token}` } });
  const refresh = (server: TestServer, token: string) =>
    tokenRequest(server, { grant_type: 'refresh_token', refresh_token: token, client_id: 'native' });

  test('a login moves between controllers; tokens, rotation and revocation hold on both', async () => {
    assert.deepEqual(
      (await a.request('GET', '/oidc/keys')).body,
      (await b.request('GET', '/oidc/keys')).body,
      'one signing key',
    );
    const p = pkce();
    const id = await startLogin(a, p);
    assert.equal((await passwordLogin(b, id, user.username, user.password)).status, 302);
    const { code } = await callback(a, id);
    const tok = await tokenRequest(b, {
      grant_type: 'authorization_code',
      code: code!,
      code_verifier: p.verifier,
      redirect_uri: REDIRECT_URI,
      client_id: 'native',
    });
    assert.equal(tok.status, 200, tok.text);
    assert.equal((await me(a, tok.body.access_token)).status, 200);
    assert.equal((await me(b, tok.body.access_token)).status, 200);

    const rotated = await refresh(a, tok.body.refresh_token);
    assert.equal(rotated.status, 200, rotated.text);
    assert.equal((await refresh(b, tok.body.refresh_token)).body.error, 'invalid_grant');

    const adminB = await b.admin();
    const asid = claimsOf(rotated.body.access_token).z_asid;
    assert.equal((await adminB.post('/revocations', { id: asid, type: 'API_SESSION' })).status, 201);
    assert.equal((await me(a, rotated.body.access_token)).status, 401);
  });
});
