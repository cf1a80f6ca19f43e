/**
 * Authentication hardening: second factors the controller cannot serve are refused rather than skipped, the
 * lockout holds under concurrent guesses (logins and self-service password changes share one atomic count), and
 * authentication is rate limited per source address and per username, with a bounded number of Argon2id checks
 * in flight.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ADMIN,
  createIdentity,
  createUser,
  startTestServer,
  type ApiClient,
  type TestServer,
} from '../harness/server.js';
import type { HttpResponse } from '../harness/http.js';
import { assertError, assertFieldError, unique } from '../harness/assert.js';
import { generateKeyAndCsr } from '../../src/pki/index.js';
import { verificationCounts } from '../../src/model/password.js';
import { authPolicyBody } from '../harness/bodies.js';

/** A password login from another source address, so it counts as another source. */
const loginFrom = (server: TestServer, from: string, username: string, password: string): Promise<HttpResponse> =>
  server.request('POST', '/edge/client/v1/authenticate?method=password', { body: { username, password }, from });

function assertRateLimited(res: HttpResponse): void {
  assertError(res, 429, 'RATE_LIMITED');
  const retryAfter = Number(res.headers['retry-after']);
  assert.ok(
    Number.isInteger(retryAfter) && retryAfter >= 1,
    `Retry-After in seconds (got ${res.headers['retry-after']})`,
  );
}

const GENEROUS = `edge:
  api:
    rateLimit:
      auth:
        perSource: { burst: 10000, perMinute: 10000 }
        failuresPerSource: { burst: 10000, perMinute: 10000 }
        failuresPerAccount: { burst: 10000, perMinute: 10000 }
        maxQueued: 1000
`;

describe('second factors that are not served yet', () => {
  let server: TestServer;
  let admin: ApiClient;
  before(async () => {
    server = await startTestServer();
    admin = await server.admin();
  });
  after(() => server.close());

  test('create, update and patch refuse requireExtJwtSigner, naming the field (requireTotp is served)', async () => {
    assert.equal(
      (await admin.post('/auth-policies', authPolicyBody(unique('totp'), {}, { secondary: { requireTotp: true } })))
        .status,
      201,
    );
    const signer = await admin.post(
      '/auth-policies',
      authPolicyBody(unique('signer'), {}, { secondary: { requireExtJwtSigner: 'no-such-signer' } }),
    );
    assertFieldError(signer, 'secondary.requireExtJwtSigner');
    assert.match(signer.body.error.cause.reason, /no external JWT signer/);

    const created = await admin.post('/auth-policies', authPolicyBody(unique('plain')));
    assert.equal(created.status, 201);
    const id = created.body.data.id;
    assertFieldError(
      await admin.put(
        `/auth-policies/${id}`,
        authPolicyBody(unique('plain'), {}, { secondary: { requireExtJwtSigner: 'x' } }),
      ),
      'secondary.requireExtJwtSigner',
    );
    assertFieldError(
      await admin.patch(`/auth-policies/${id}`, { secondary: { requireExtJwtSigner: 'x' } }),
      'secondary.requireExtJwtSigner',
    );
    const stored = (await admin.get(`/auth-policies/${id}`)).body.data.secondary;
    assert.deepEqual(stored, { requireTotp: false, requireExtJwtSigner: null }, 'nothing was written');
    assert.equal(
      (await admin.patch(`/auth-policies/${id}`, { secondary: { requireTotp: false, requireExtJwtSigner: null } }))
        .status,
      200,
    );
  });

  test('a stored policy asking for a second factor refuses password and certificate logins instead of skipping it', async () => {
    const created = await admin.post('/auth-policies', authPolicyBody(unique('2fa')));
    const policyId = created.body.data.id;
    const user = await createUser(server, admin, { identity: { authPolicyId: policyId } });
    // Enroll a certificate identity under the same policy.
    const certId = await createIdentity(admin, { authPolicyId: policyId, enrollment: { ott: true } });
    const token = (await admin.get(`/identities/${certId}`)).body.data.enrollment.ott.token;
    const { privateKeyPem, csrPem } = await generateKeyAndCsr({ commonName: unique('hardening') });
    const enrolled = await server.request('POST', `/edge/client/v1/enroll/ott?token=${token}`, {
      raw: csrPem,
      contentType: 'application/pkcs10',
      headers: { accept: 'application/x-x509-user-cert' },
    });
    assert.equal(enrolled.status, 200);
    const certLogin = () =>
      server.request('POST', `/edge/client/v1/authenticate?method=cert`, {
        cert: enrolled.text,
        key: privateKeyPem,
      });
    assert.equal((await certLogin()).status, 200, 'the certificate works under a plain policy');

    for (const secondary of [{ requireTotp: false, requireExtJwtSigner: 'some-signer' }]) {
      // Written behind the API's back, as an older controller or a restored store could have it.
      await server.daemon.ctx.db
        .updateTable('auth_policies')
        .set({ secondary: JSON.stringify(secondary) })
        .where('id', '=', policyId)
        .execute();
      assertError(
        await server
          .client()
          .post('/authenticate?method=password', { username: user.username, password: user.password }),
        401,
        'INVALID_AUTH',
      );
      assertError(await certLogin(), 401, 'INVALID_AUTH');
    }
    const d = (await admin.get(`/identities/${user.id}`)).body.data;
    assert.equal(d.disabled, false, 'a refused second factor is not a failed password');
  });
});

describe('lockout under concurrency', () => {
  let server: TestServer;
  let admin: ApiClient;
  before(async () => {
    server = await startTestServer({ yaml: GENEROUS });
    admin = await server.admin();
  });
  after(() => server.close());

  const lockingPolicy = async () =>
    (await admin.post('/auth-policies', authPolicyBody(unique('lock'), { maxAttempts: 3, lockoutDurationMinutes: 5 })))
      .body.data.id as string;

  test('60 wrong passwords at once verify at most maxAttempts guesses and lock the identity', async () => {
    const user = await createUser(server, admin, { identity: { authPolicyId: await lockingPolicy() } });
    const before = verificationCounts.stored;
    const c = server.client();
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        c.post('/authenticate?method=password', { username: user.username, password: `wrong-${i}-pass` }),
      ),
    );
    for (const res of answers) assertError(res, 401, 'INVALID_AUTH');
    const verified = verificationCounts.stored - before;
    assert.ok(verified <= 3, `at most 3 guesses verified (was ${verified})`);
    const d = (await admin.get(`/identities/${user.id}`)).body.data;
    assert.equal(d.disabled, true, 'locked after the burst');
    assertError(
      await c.post('/authenticate?method=password', { username: user.username, password: user.password }),
      401,
      'INVALID_AUTH',
    );
    assert.equal(verificationCounts.stored - before, verified, 'the right password is not even checked while locked');
    assert.equal((await admin.post(`/identities/${user.id}/enable`, {})).status, 200);
    assert.equal(
      (await c.post('/authenticate?method=password', { username: user.username, password: user.password })).status,
      200,
    );
  });

  test('wrong current passwords on self-service changes count toward the same lockout, also at once', async () => {
    const user = await createUser(server, admin, { identity: { authPolicyId: await lockingPolicy() } });
    const authId = (await user.client.get('/current-identity/authenticators')).body.data[0].id;
    const before = verificationCounts.stored;
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        user.client.put(`/current-identity/authenticators/${authId}`, {
          username: user.username,
          password: 'new-Passw0rd!',
          currentPassword: `wrong-${i}-pass`,
        }),
      ),
    );
    for (const res of answers) assert.equal(res.status, 401);
    assert.ok(
      verificationCounts.stored - before <= 3,
      `at most 3 current passwords verified (was ${verificationCounts.stored - before})`,
    );
    assert.equal((await admin.get(`/identities/${user.id}`)).body.data.disabled, true);
    assertError(await user.client.get('/current-identity'), 401, 'UNAUTHORIZED');
    assertError(
      await server.client().post('/authenticate?method=password', { username: user.username, password: user.password }),
      401,
      'INVALID_AUTH',
    );
  });

  test('login failures and self-service failures add up; a right current password resets the count', async () => {
    const user = await createUser(server, admin, { identity: { authPolicyId: await lockingPolicy() } });
    const authId = (await user.client.get('/current-identity/authenticators')).body.data[0].id;
    const c = server.client();
    const change = (currentPassword: string, password = 'other-Passw0rd!') =>
      user.client.patch(`/current-identity/authenticators/${authId}`, { password, currentPassword });
    assertError(
      await c.post('/authenticate?method=password', { username: user.username, password: 'wrong-pass-1' }),
      401,
      'INVALID_AUTH',
    );
    assertError(await change('wrong-pass-2'), 401, 'UNAUTHORIZED', 'currentPassword');
    assert.equal(
      (await change(user.password, 'changed-Passw0rd!')).status,
      200,
      'the right current password changes it',
    );
    assertError(await change('wrong-pass-3'), 401, 'UNAUTHORIZED', 'currentPassword');
    assertError(
      await c.post('/authenticate?method=password', { username: user.username, password: 'wrong-pass-4' }),
      401,
      'INVALID_AUTH',
    );
    assert.equal((await admin.get(`/identities/${user.id}`)).body.data.disabled, false, 'two failures since the reset');
    assert.equal(
      (await c.post('/authenticate?method=password', { username: user.username, password: 'changed-Passw0rd!' }))
        .status,
      200,
      'the new password logs in',
    );
    assertError(
      await c.post('/authenticate?method=password', { username: user.username, password: user.password }),
      401,
      'INVALID_AUTH',
    );
  });
});

describe('rate limits per source and per username', () => {
  let server: TestServer;
  let admin: ApiClient;
  before(async () => {
    server = await startTestServer({
      yaml: `edge:
  api:
    rateLimit:
      auth:
        failuresPerSource: { burst: 6, perMinute: 1 }
        failuresPerAccount: { burst: 3, perMinute: 1 }
`,
    });
    admin = await server.admin();
  });
  after(() => server.close());

  test('failures on one username are refused with 429 and Retry-After; another username is still served', async () => {
    const victim = await createUser(server, admin);
    const other = await createUser(server, admin);
    const src = '127.0.0.2';
    for (let i = 0; i < 3; i++)
      assertError(await loginFrom(server, src, victim.username, `wrong-${i}-pass`), 401, 'INVALID_AUTH');
    const limited = await loginFrom(server, src, victim.username, victim.password);
    assertRateLimited(limited);
    assert.ok(Number(limited.headers['retry-after']) <= 60, 'one token back within a minute');
    assertRateLimited(await loginFrom(server, '127.0.0.3', victim.username, victim.password));
    assert.equal(
      (await loginFrom(server, src, other.username, other.password)).status,
      200,
      'another username from the same source',
    );
  });

  test('failures from one source are refused with 429 there; another source is still served', async () => {
    const user = await createUser(server, admin);
    const src = '127.0.0.4';
    // Unknown usernames spend the source's budget (six) without touching any account's.
    const answers = [];
    for (let i = 0; i < 8; i++) answers.push(await loginFrom(server, src, unique('nobody'), 'wrong-pass'));
    for (const res of answers.slice(0, 6)) assertError(res, 401, 'INVALID_AUTH');
    for (const res of answers.slice(6)) assertRateLimited(res);
    assertRateLimited(await loginFrom(server, src, user.username, user.password));
    assert.equal((await loginFrom(server, '127.0.0.5', user.username, user.password)).status, 200, 'another source');
  });

  test('a concurrent burst cannot overdraw the budget: at most burst failures are checked', async () => {
    const user = await createUser(server, admin);
    const before = verificationCounts.stored + verificationCounts.dummy;
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => loginFrom(server, '127.0.0.6', user.username, `wrong-${i}-pass`)),
    );
    const checked = verificationCounts.stored + verificationCounts.dummy - before;
    assert.equal(answers.filter((r) => r.status === 401).length, 3);
    for (const res of answers.filter((r) => r.status !== 401)) assertRateLimited(res);
    assert.equal(checked, 3, 'refused attempts run no Argon2id');
  });

  test('wrong current passwords on self-service changes are limited per identity too', async () => {
    const user = await createUser(server, admin);
    const authId = (await user.client.get('/current-identity/authenticators')).body.data[0].id;
    const change = (currentPassword: string) =>
      user.client.patch(`/current-identity/authenticators/${authId}`, { password: 'new-Passw0rd!', currentPassword });
    for (let i = 0; i < 3; i++) assertError(await change(`wrong-${i}-pass`), 401, 'UNAUTHORIZED', 'currentPassword');
    assertRateLimited(await change(user.password));
    assert.equal((await user.client.get('/current-identity')).status, 200, 'the session itself is untouched');
  });

  test('successes do not spend the failure budgets', async () => {
    const c = server.client();
    for (let i = 0; i < 8; i++) assert.equal((await c.login(ADMIN.username, ADMIN.password)).status, 200);
  });
});

describe('bounded Argon2id work in flight', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({
      yaml: 'edge:\n  api:\n    rateLimit:\n      auth:\n        maxConcurrent: 1\n        maxQueued: 1\n',
    });
  });
  after(() => server.close());

  test('beyond maxConcurrent running and maxQueued waiting, attempts are refused at once with 429', async () => {
    const c = server.client();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        c.post('/authenticate?method=password', { username: ADMIN.username, password: ADMIN.password }),
      ),
    );
    const ok = answers.filter((r) => r.status === 200);
    const refused = answers.filter((r) => r.status !== 200);
    assert.ok(ok.length >= 2, `the running and the queued attempt succeed (${ok.length})`);
    assert.ok(refused.length >= 1, 'some are refused');
    for (const res of refused) {
      assertRateLimited(res);
      assert.equal(res.headers['retry-after'], '1');
    }
    assert.equal((await c.login(ADMIN.username, ADMIN.password)).status, 200, 'served again once the burst is over');
  });
});
