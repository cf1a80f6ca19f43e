/**
 * The OIDC provider's state is the store's (docs/decisions.md, "OIDC login"): two controllers on one PostgreSQL
 * database share one signing key, so a login begun on one finishes on the other, tokens of either work on both,
 * a rotated refresh token is refused everywhere and a revocation bites on the other controller at once.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createUser, startTestServer, type TestServer } from '../harness/server.js';
import { freshDatabase, postgresSkip, testStoreKind } from '../harness/pg.js';
import { bearer, claimsOf, exchangeCode, passwordLogin, pkce, refreshRequest, startLogin } from '../harness/oidc.js';

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
    server.request('GET', '/edge/client/v1/current-identity', { headers: bearer(token) });

  test('a login moves between controllers; tokens, rotation and revocation hold on both', async () => {
    assert.deepEqual(
      (await a.request('GET', '/oidc/keys')).body,
      (await b.request('GET', '/oidc/keys')).body,
      'one signing key',
    );
    const p = pkce();
    const id = await startLogin(a, p);
    assert.equal((await passwordLogin(b, id, user.username, user.password)).status, 302);
    const tok = await exchangeCode(a, id, p);
    assert.equal(tok.status, 200, tok.text);
    assert.equal((await me(a, tok.body.access_token)).status, 200);
    assert.equal((await me(b, tok.body.access_token)).status, 200);

    const rotated = await refreshRequest(b, tok.body.refresh_token);
    assert.equal(rotated.status, 200, rotated.text);
    assert.equal((await refreshRequest(a, tok.body.refresh_token)).body.error, 'invalid_grant');

    const adminA = await a.admin();
    const asid = claimsOf(rotated.body.access_token).z_asid;
    assert.equal((await adminA.post('/revocations', { id: asid, type: 'API_SESSION' })).status, 201);
    assert.equal((await me(b, rotated.body.access_token)).status, 401);
  });
});
