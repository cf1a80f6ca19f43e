/**
 * `POST /authenticate?method=ext-jwt` and secondary ext-JWT, through a real server (docs/reference-notes.md §5.4,
 * §4.4): a certificate signer and a JWKS signer served by the test on a loopback port; expiry, audience, issuer,
 * key rotation, an unreachable JWKS, identity matching both ways (an externalId moved), auth policies, and a session
 * whose policy requires a signer's JWT on every request. Subtests run in order and build on each other. Last, a
 * JWKS endpoint that never answers must not hold the authentication limiter's concurrency gate.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KeyObject } from 'node:crypto';
import {
  ADMIN,
  startTestServer,
  createIdentity,
  createRecord,
  createUser,
  type ApiClient,
  type TestServer,
} from '../harness/server.js';
import { assertError, tracked, unique } from '../harness/assert.js';
import { authPolicyBody } from '../harness/bodies.js';
import { checkResponse } from '../harness/schemas.js';
import { JwksServer, newCertSigner, newSigningKey, signJwt, signWith, type SigningKey } from '../harness/jwt-issuer.js';
import type { HttpResponse } from '../harness/http.js';
import { ExtJwtState } from '../../src/model/services/ext-jwt/ext-jwt-keys.js';

// Many refusals from one address on purpose: the failure budget must not be what answers.
const YAML = `edge:
  api:
    rateLimit:
      auth:
        failuresPerSource: { burst: 10000, perMinute: 10000 }
`;

/** Creates an enabled signer for the audience `edge` under a fresh issuer, which it answers. */
async function createSigner(admin: ApiClient, fields: Record<string, unknown>): Promise<string> {
  const issuer = unique('https://idp.example');
  await createRecord(admin, '/external-jwt-signers', {
    name: unique('signer'),
    issuer,
    audience: 'edge',
    enabled: true,
    ...fields,
  });
  return issuer;
}

describe('ext-jwt login and secondary ext-JWT', () => {
  let server: TestServer;
  let admin: ApiClient;
  let client: ApiClient;
  let jwks: JwksServer;
  let hanging: Server;
  let k1: SigningKey;
  let certKey: KeyObject;
  let certPem: string;
  let certSignerId = '';
  let jwksSignerId = '';
  let userId = '';
  let extUserId = '';
  const certIss = unique('https://idp-cert.example');
  const jwksIss = unique('https://idp-jwks.example');

  const login = (token?: string): Promise<HttpResponse> =>
    client.post(
      '/authenticate?method=ext-jwt',
      undefined,
      token ? { headers: { authorization: `Bearer ${token}` } } : {},
    );
  const certToken = (sub: string, extra: Partial<Parameters<typeof signJwt>[1]> = {}) =>
    signJwt(certKey, { iss: certIss, aud: 'edge', kid: 'cert-kid', claims: { sub }, ...extra });
  const refused = (res: HttpResponse, flavour: string, code = 'INVALID_AUTH') => {
    assertError(res, 401, code);
    assert.equal(res.headers['www-authenticate'], `Bearer error="${flavour}"`);
  };

  before(async () => {
    server = await startTestServer({ yaml: YAML });
    admin = await server.admin();
    client = server.client('client');
    ({ certPem, key: certKey } = await newCertSigner('idp signing'));
    k1 = await newSigningKey('k1');
    jwks = await JwksServer.start([k1.jwk]);
    hanging = createServer(() => {});
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', r));
    userId = await createIdentity(admin);
    extUserId = await createIdentity(admin, { externalId: 'alice@example.com' });
  });

  after(async () => {
    await server?.close();
    await jwks?.close();
    hanging?.closeAllConnections();
    await new Promise((r) => hanging?.close(r));
  });

  it('refuses every token while no signer is enabled, with a bearer challenge', async () => {
    refused(await login(await certToken(userId)), 'invalid', 'UNAUTHORIZED');
    refused(await login(), 'missing');
  });

  it('logs in with a JWT of a certificate signer, the identity named by sub', async () => {
    certSignerId = await createRecord(admin, '/external-jwt-signers', {
      name: unique('cert-signer'),
      issuer: certIss,
      audience: 'edge',
      enabled: true,
      certPem,
      kid: 'cert-kid',
      externalAuthUrl: 'https://idp-cert.example/login',
    });
    const res = await login(await certToken(userId));
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(checkResponse('client', '/authenticate', 'POST', 200, res.body), []);
    assert.equal(res.body.data.identityId, userId);
    assert.deepEqual(res.body.data.authQueries, []);
    const me = await client.withToken(res.body.data.token).get('/current-identity');
    assert.equal(me.status, 200);
    assert.equal(me.body.data.id, userId);
  });

  it('refuses expired, never expiring, not yet valid, wrong-audience, unknown-issuer, wrong-kid and unsigned tokens', async () => {
    refused(await login(await certToken(userId, { expiresIn: -60 })), 'expired');
    refused(await login(await certToken(userId, { expiresIn: null })), 'invalid');
    refused(await login(await certToken(userId, { notBeforeIn: 120 })), 'invalid');
    refused(await login(await certToken(userId, { aud: 'someone-else' })), 'invalid');
    refused(await login(await certToken(userId, { iss: 'https://unknown.example' })), 'invalid');
    refused(await login(await certToken(userId, { kid: 'other-kid' })), 'invalid');
    const other = await newSigningKey('cert-kid');
    refused(await login(await signWith(other, { iss: certIss, aud: 'edge', claims: { sub: userId } })), 'invalid');
    const [h, p] = (await certToken(userId)).split('.');
    const none = Buffer.from(JSON.stringify({ alg: 'none', kid: 'cert-kid' })).toString('base64url');
    refused(await login(`${none}.${p}.`), 'invalid');
    refused(await login(`${h}.${p}.AAAA`), 'invalid');
    refused(await login('not-a-jwt'), 'invalid');
  });

  it('accepts an audience list containing the signer audience', async () => {
    const res = await login(await certToken(userId, { aud: ['other', 'edge'] }));
    assert.equal(res.status, 200, res.text);
  });

  it('refuses unknown and disabled identities, and a disabled signer', async () => {
    refused(await login(await certToken('no-such-identity')), 'invalid');
    const dis = await createIdentity(admin);
    assert.equal((await admin.post(`/identities/${dis}/disable`, { durationMinutes: 0 })).status, 200);
    refused(await login(await certToken(dis)), 'invalid');
    assert.equal((await admin.patch(`/external-jwt-signers/${certSignerId}`, { enabled: false })).status, 200);
    refused(await login(await certToken(userId)), 'invalid', 'UNAUTHORIZED');
    assert.equal((await admin.patch(`/external-jwt-signers/${certSignerId}`, { enabled: true })).status, 200);
    assert.equal((await login(await certToken(userId))).status, 200);
  });

  it('uses the certificate fingerprint as the kid when the signer has none', async () => {
    assert.equal((await admin.patch(`/external-jwt-signers/${certSignerId}`, { kid: null })).status, 200);
    const fingerprint = (await admin.get(`/external-jwt-signers/${certSignerId}`)).body.data.fingerprint;
    refused(await login(await certToken(userId)), 'invalid');
    assert.equal((await login(await certToken(userId, { kid: fingerprint }))).status, 200);
    assert.equal((await admin.patch(`/external-jwt-signers/${certSignerId}`, { kid: 'cert-kid' })).status, 200);
  });

  it('follows an externalId moved or removed after a token was verified, from the next login on', async () => {
    const idp = await newCertSigner('idp by email');
    const iss = await createSigner(admin, {
      certPem: idp.certPem,
      kid: 'email-kid',
      claimsProperty: 'email',
      useExternalId: true,
    });
    const email = `${unique('bob')}@example.com`;
    const first = await createIdentity(admin, { externalId: email });
    const second = await createIdentity(admin);
    const token = await signJwt(idp.key, { iss, aud: 'edge', kid: 'email-kid', claims: { email } });
    const holder = async () => {
      const res = await login(token);
      assert.equal(res.status, 200, res.text);
      return res.body.data.identityId;
    };
    const setExternalId = async (id: string, externalId: string | null) =>
      assert.equal((await admin.patch(`/identities/${id}`, { externalId })).status, 200);

    assert.equal(await holder(), first);
    await setExternalId(first, null);
    refused(await login(token), 'invalid');
    await setExternalId(second, email);
    assert.equal(await holder(), second);
    await setExternalId(second, null);
    await setExternalId(first, email);
    assert.equal(await holder(), first);
  });

  it('logs in through a JWKS signer by externalId at a claims pointer, and by id when useExternalId is off', async () => {
    jwksSignerId = await createRecord(admin, '/external-jwt-signers', {
      name: unique('jwks-signer'),
      issuer: jwksIss,
      audience: 'edge',
      enabled: true,
      jwksEndpoint: jwks.url,
      claimsProperty: '/user/email',
      useExternalId: true,
    });
    const byEmail = await signWith(k1, { iss: jwksIss, aud: 'edge', claims: { user: { email: 'alice@example.com' } } });
    const res = await login(byEmail);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.data.identityId, extUserId);
    refused(await login(await signWith(k1, { iss: jwksIss, aud: 'edge', claims: { user: { email: 7 } } })), 'invalid');

    assert.equal(
      (await admin.patch(`/external-jwt-signers/${jwksSignerId}`, { useExternalId: false, claimsProperty: 'sub' }))
        .status,
      200,
    );
    refused(
      await login(await signWith(k1, { iss: jwksIss, aud: 'edge', claims: { sub: 'alice@example.com' } })),
      'invalid',
    );
    const byId = await login(await signWith(k1, { iss: jwksIss, aud: 'edge', claims: { sub: extUserId } }));
    assert.equal(byId.status, 200, byId.text);
  });

  it('refetches the JWKS for an unknown kid (key rotation), at most once a second', async () => {
    const k2 = await newSigningKey('k2', 'RS256');
    // Past the once-a-second limit of the fetch the previous test caused.
    await new Promise((r) => setTimeout(r, 1100));
    jwks.keys = [k2.jwk];
    const before = jwks.hits;
    const token = await signWith(k2, { iss: jwksIss, aud: 'edge', claims: { sub: extUserId } });
    const res = await login(token);
    assert.equal(res.status, 200, res.text);
    assert.equal(jwks.hits, before + 1, 'one refetch for the new kid');
    const k3 = await newSigningKey('k3');
    const unknown = await signWith(k3, { iss: jwksIss, aud: 'edge', claims: { sub: extUserId } });
    const answers = await Promise.all([login(unknown), login(unknown), login(unknown)]);
    for (const a of answers) refused(a, 'invalid');
    assert.equal(jwks.hits, before + 1, 'no second fetch within a second of the first');
  });

  it('answers 401 quickly when the JWKS endpoint is down, hangs, fails or is too large', async () => {
    const hangUrl = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/jwks`;
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const closedUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/jwks`;
    await new Promise((r) => closed.close(r));
    const k = await newSigningKey('kx');
    for (const [url, mode] of [
      [closedUrl, 'ok'],
      [hangUrl, 'ok'],
      [jwks.url, 'error'],
      [jwks.url, 'huge'],
    ] as const) {
      const iss = await createSigner(admin, { jwksEndpoint: url });
      jwks.mode = mode;
      jwks.keys = [k.jwk];
      const started = Date.now();
      refused(await login(await signWith(k, { iss, aud: 'edge', claims: { sub: userId } })), 'invalid');
      assert.ok(Date.now() - started < 6000, `${url} ${mode}: answered after ${Date.now() - started} ms`);
    }
    jwks.mode = 'ok';
  });

  it('honours the auth policy: extJwt.allowed and allowedSigners', async () => {
    const policyId = await createRecord(
      admin,
      '/auth-policies',
      authPolicyBody(unique('no-jwt'), {}, { extJwt: { allowed: false } }),
    );
    const id = await createIdentity(admin, { authPolicyId: policyId });
    refused(await login(await certToken(id)), 'invalid');
    assert.equal(
      (
        await admin.patch(`/auth-policies/${policyId}`, {
          primary: { extJwt: { allowed: true, allowedSigners: [jwksSignerId] } },
        })
      ).status,
      200,
    );
    refused(await login(await certToken(id)), 'invalid');
    jwks.keys = [k1.jwk];
    const viaJwks = await login(await signWith(k1, { iss: jwksIss, aud: 'edge', claims: { sub: id } }));
    assert.equal(viaJwks.status, 200, viaJwks.text);
    assertError(
      await admin.patch(`/auth-policies/${policyId}`, { primary: { extJwt: { allowedSigners: ['no-such-signer'] } } }),
      400,
      'COULD_NOT_VALIDATE',
      'primary.extJwt.allowedSigners',
    );
  });

  describe('a policy requiring the certificate signer as second factor', () => {
    let user: Awaited<ReturnType<typeof createUser>>;
    let policyId = '';

    before(async () => {
      policyId = await createRecord(
        admin,
        '/auth-policies',
        authPolicyBody(unique('2nd-jwt'), {}, { secondary: { requireExtJwtSigner: certSignerId } }),
      );
      user = await createUser(server, admin, { identity: { authPolicyId: policyId } });
    });

    it('gives a password login a partial session carrying the EXT-JWT query', async () => {
      const res = await client.post('/authenticate?method=password', {
        username: user.username,
        password: user.password,
      });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(checkResponse('client', '/authenticate', 'POST', 200, res.body), []);
      assert.deepEqual(res.body.data.authQueries, [
        { typeId: 'EXT-JWT', provider: 'url', httpUrl: 'https://idp-cert.example/login', id: certSignerId },
      ]);
      const session = client.withToken(res.body.data.token);
      const missing = await session.get('/services');
      assertError(missing, 401, 'UNAUTHORIZED');
      assert.equal(missing.headers['www-authenticate'], 'Bearer error="missing"');
      assert.equal((await session.get('/current-api-session')).status, 200, 'a partial route');
      const bearer = { authorization: `Bearer ${await certToken(user.id)}` };
      const full = await session.get('/services', { headers: bearer });
      assert.equal(full.status, 200, full.text);
      assert.equal((await session.get('/current-identity', { headers: bearer })).status, 200);
      // Every request must carry it: the next one without is partial again.
      assertError(await session.get('/current-identity'), 401, 'UNAUTHORIZED');
      // Another identity's token, or an expired one, does not count.
      const others = { authorization: `Bearer ${await certToken(userId)}` };
      const other = await session.get('/services', { headers: others });
      assertError(other, 401, 'UNAUTHORIZED');
      assert.equal(other.headers['www-authenticate'], 'Bearer error="invalid"', 'valid, but for another identity');
      const expired = { authorization: `Bearer ${await certToken(user.id, { expiresIn: -5 })}` };
      const stale = await session.get('/services', { headers: expired });
      assertError(stale, 401, 'UNAUTHORIZED');
      assert.equal(stale.headers['www-authenticate'], 'Bearer error="expired"');
    });

    it('starts a full session when the password login carries the bearer JWT', async () => {
      const res = await client.post(
        '/authenticate?method=password',
        { username: user.username, password: user.password },
        { headers: { authorization: `Bearer ${await certToken(user.id)}` } },
      );
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.data.authQueries, []);
    });

    it('refuses deleting a signer an auth policy names (409)', async () => {
      assertError(await admin.delete(`/external-jwt-signers/${certSignerId}`), 409, 'CAN_NOT_DELETE_REFERENCED_ENTITY');
      assertError(await admin.delete(`/external-jwt-signers/${jwksSignerId}`), 409, 'CAN_NOT_DELETE_REFERENCED_ENTITY');
    });
  });
});

describe('a JWKS endpoint that never answers (ext-jwt logins hold no authentication slot)', () => {
  let server: TestServer;
  let admin: ApiClient;
  let client: ApiClient;
  let jwks: JwksServer;
  let key: SigningKey;
  let userId = '';

  const bearer = async (iss: string) => ({
    headers: { authorization: `Bearer ${await signWith(key, { iss, aud: 'edge', claims: { sub: userId } })}` },
  });
  const passwordLogin = (opts = {}) =>
    client.post('/authenticate?method=password', { username: ADMIN.username, password: ADMIN.password }, opts);

  before(async () => {
    // One slot and no queue: a login holding the slot would make any other attempt a 429 at once, so the proof
    // below is by status, not by time.
    server = await startTestServer({
      yaml: 'edge:\n  api:\n    rateLimit:\n      auth: { maxConcurrent: 1, maxQueued: 0 }\n',
    });
    // Only the test ends a held fetch: a fetch timeout longer than any step keeps a slow machine from ending it.
    server.daemon.ctx.extJwt = new ExtJwtState({ fetchTimeoutMs: 60_000 });
    admin = await server.admin();
    client = server.client('client');
    key = await newSigningKey('k1');
    jwks = await JwksServer.start([key.jwk]);
    userId = await createIdentity(admin);
  });

  after(async () => {
    await server?.close();
    await jwks?.close();
  });

  it('leaves the gate free for password logins while ext-jwt logins wait, and they share one fetch', async () => {
    const iss = await createSigner(admin, { jwksEndpoint: jwks.url });
    jwks.mode = 'hang';
    const hitsBefore = jwks.hits;
    const opts = await bearer(iss);
    const logins = tracked(
      Array.from({ length: 10 }, () => client.post('/authenticate?method=ext-jwt', undefined, opts)),
    );
    await jwks.hitsReach(hitsBefore + 1);

    const password = await passwordLogin();
    assert.equal(password.status, 200, password.text);
    assert.equal(logins.settled, 0, 'the ext-jwt logins are still waiting for the keys');
    assert.equal(jwks.holding, 1);

    jwks.mode = 'ok';
    jwks.release();
    // Released together, the ten meet a gate of one slot and no queue (this block's setting): a login's
    // transaction waits a turn of the event loop for others to share its commit, so some find the slot taken.
    // Each either logs in or is refused by the full gate, never by its token.
    const answers = await logins.all;
    for (const res of answers)
      assert.ok(res.status === 200 || (res.status === 429 && res.body.error.code === 'RATE_LIMITED'), res.text);
    assert.ok(answers.some((res) => res.status === 200));
    assert.equal(jwks.hits, hitsBefore + 1, 'one fetch for all of them');
    const again = await client.post('/authenticate?method=ext-jwt', undefined, opts);
    assert.equal(again.status, 200, again.text);
    assert.equal(jwks.hits, hitsBefore + 1, 'the keys fetched once serve later logins');
  });

  it('does not hold a slot for a bearer JWT sent beside a password', async () => {
    const iss = await createSigner(admin, { jwksEndpoint: jwks.url });
    jwks.mode = 'hang';
    const hitsBefore = jwks.hits;
    const withBearer = tracked([passwordLogin(await bearer(iss))]);
    await jwks.hitsReach(hitsBefore + 1);

    const plain = await passwordLogin();
    assert.equal(plain.status, 200, plain.text);
    assert.equal(withBearer.settled, 0);

    jwks.mode = 'ok';
    jwks.release();
    const [res] = await withBearer.all;
    assert.equal(res!.status, 200, res!.text);
  });
});
