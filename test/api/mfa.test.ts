/**
 * TOTP MFA and partial API sessions: enrollment, verification, the partial session's routes, /authenticate/mfa
 * with TOTP and recovery codes, the ±1 step window, replay refusal, recovery-code handling, removal by the
 * identity and by an admin, `requireTotp` policies, and a pending enrollment shown only to the session that
 * started it. Codes are computed
 * here from the provisioning URL's secret and the controller's frozen clock, so steps are exact.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generate } from 'otplib';
import { createUser, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { checkResponse } from '../harness/schemas.js';
import { assertError, unique } from '../harness/assert.js';
import { authPolicyBody } from '../harness/bodies.js';
import { mfaEventsOf } from '../../src/model/services/mfa/mfa-events.js';

// The source budget is raised so the file's failures do not run into it. Guessing codes (the stored count of
// wrong codes, the locks, the limiter's per-session budget) is in mfa-failures.test.ts.
const YAML = `edge:
  api:
    rateLimit:
      auth:
        failuresPerSource: { burst: 1000, perMinute: 1000 }
`;

const MFA_QUERY = {
  typeId: 'MFA',
  provider: 'svc',
  format: 'alphaNumeric',
  httpMethod: 'POST',
  httpUrl: './authenticate/mfa',
  minLength: 4,
  maxLength: 6,
};
const STEP_MS = 30_000;

let server: TestServer;
let admin: ApiClient;
const passed: { apiSessionId: string; identityId: string }[] = [];
const removed: string[] = [];
const unsubscribe: (() => void)[] = [];

before(async () => {
  server = await startTestServer({ yaml: YAML, clock: 'frozen' });
  admin = await server.admin();
  unsubscribe.push(
    mfaEventsOf(server.daemon.store.db)!.onMfaPassed((apiSessionId, identityId) =>
      passed.push({ apiSessionId, identityId }),
    ),
    mfaEventsOf(server.daemon.store.db)!.onMfaRemoved((identityId) => removed.push(identityId)),
  );
});
after(async () => {
  for (const u of unsubscribe) u();
  await server.close();
});

/** The TOTP code `steps` time steps away from the controller's now. */
const totp = (secret: string, steps = 0) =>
  generate({ secret, epoch: Math.floor((server.clock.now().getTime() + steps * STEP_MS) / 1000) });

const check = (api: 'client' | 'management', path: string, method: string, status: number, body: unknown) =>
  assert.deepEqual(checkResponse(api, path, method, status, body), [], `${method} ${path} ${status} schema`);

interface Enrolled {
  secret: string;
  recoveryCodes: string[];
}

/** Enrolls and verifies MFA for a logged-in client; answers the secret and recovery codes. */
async function enrollAndVerify(c: ApiClient): Promise<Enrolled> {
  assert.equal((await c.post('/current-identity/mfa')).status, 201);
  const d = (await c.get('/current-identity/mfa')).body.data;
  const secret = new URL(d.provisioningUrl).searchParams.get('secret')!;
  assert.equal((await c.post('/current-identity/mfa/verify', { code: await totp(secret) })).status, 200);
  return { secret, recoveryCodes: d.recoveryCodes };
}

/** A new password login of the user (a partial session when MFA applies). */
async function login(user: { username: string; password: string }, api: 'client' | 'management' = 'client') {
  const c = server.client(api);
  const res = await c.login(user.username, user.password);
  assert.equal(res.status, 200, res.text);
  return { c, res };
}

describe('enrolling and verifying', () => {
  test('enroll, detail, QR code, verify; afterwards no secret, codes or QR code are shown', async () => {
    const user = await createUser(server, admin);
    const c = user.client;
    assertError(await c.get('/current-identity/mfa'), 404, 'NOT_FOUND');
    assertError(await c.get('/current-identity/mfa/qr-code'), 404, 'NOT_FOUND');

    const enrolled = await c.post('/current-identity/mfa');
    assert.equal(enrolled.status, 201, enrolled.text);
    check('client', '/current-identity/mfa', 'POST', 201, enrolled.body);
    assertError(await c.post('/current-identity/mfa'), 409, 'MFA_EXISTS');

    const detail = await c.get('/current-identity/mfa');
    assert.equal(detail.status, 200);
    check('client', '/current-identity/mfa', 'GET', 200, detail.body);
    const d = detail.body.data;
    assert.equal(d.id, enrolled.body.data.id);
    assert.equal(d.isVerified, false);
    assert.ok(d.provisioningUrl.startsWith(`otpauth://totp/edgectl:${user.username}?issuer=edgectl&secret=`));
    const secret = new URL(d.provisioningUrl).searchParams.get('secret')!;
    assert.match(secret, /^[A-Z2-7]{32}$/, '20 random bytes in base32');
    assert.equal(d.recoveryCodes.length, 20);
    assert.equal(new Set(d.recoveryCodes).size, 20);
    for (const code of d.recoveryCodes) assert.match(code, /^[A-Z2-7]{6}$/);

    const qr = await c.get('/current-identity/mfa/qr-code', { headers: { accept: 'image/png' } });
    assert.equal(qr.status, 200);
    assert.match(String(qr.headers['content-type']), /^image\/png/);
    assert.deepEqual([...qr.bytes!.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');

    // Sealed at rest: the store holds neither the secret nor a recovery code in clear.
    const row = await server.daemon.ctx.db
      .selectFrom('mfas')
      .selectAll()
      .where('id', '=', d.id)
      .executeTakeFirstOrThrow();
    const stored = JSON.stringify(row);
    assert.ok(!stored.includes(secret), 'secret not in clear');
    for (const code of d.recoveryCodes) assert.ok(!stored.includes(code), 'recovery code not in clear');

    assertError(await c.post('/current-identity/mfa/verify', { code: '000000' }), 401, 'MFA_INVALID_TOKEN');
    assertError(await c.post('/current-identity/mfa/verify', { code: d.recoveryCodes[0] }), 401, 'MFA_INVALID_TOKEN');
    const verified = await c.post('/current-identity/mfa/verify', { code: await totp(secret) });
    assert.equal(verified.status, 200, verified.text);
    check('client', '/current-identity/mfa/verify', 'POST', 200, verified.body);
    assert.ok(
      passed.some((p) => p.identityId === user.id),
      'onMfaPassed fired on verify',
    );

    const after = (await c.get('/current-identity/mfa')).body.data;
    assert.equal(after.isVerified, true);
    assert.equal(after.provisioningUrl, undefined);
    assert.equal(after.recoveryCodes, undefined);
    assertError(await c.get('/current-identity/mfa/qr-code'), 404, 'NOT_FOUND');
    assertError(await c.post('/current-identity/mfa/verify', { code: await totp(secret, 1) }), 404, 'NOT_FOUND');
    assertError(await c.post('/current-identity/mfa'), 409, 'MFA_EXISTS');

    assert.ok((await admin.get('/summary')).body.data.mfas >= 1, '/summary counts enrollments');
    const identity = await admin.get(`/identities/${user.id}`);
    assert.equal(identity.body.data.isMfaEnabled, true);
    check('management', '/identities/{id}', 'GET', 200, identity.body);
  });

  test('a pending enrollment’s secret and recovery codes are shown only to the session that started it', async () => {
    const user = await createUser(server, admin);
    const owner = user.client;
    assert.equal((await owner.post('/current-identity/mfa')).status, 201);
    const mine = (await owner.get('/current-identity/mfa')).body.data;
    const secret = new URL(mine.provisioningUrl).searchParams.get('secret')!;
    assert.equal(mine.recoveryCodes.length, 20);

    // Another session of the identity (a password login) sees that one is pending, nothing more.
    const other = (await login(user)).c;
    const seen = await other.get('/current-identity/mfa');
    assert.equal(seen.status, 200);
    check('client', '/current-identity/mfa', 'GET', 200, seen.body);
    assert.equal(seen.body.data.id, mine.id);
    assert.equal(seen.body.data.isVerified, false);
    assert.equal(seen.body.data.provisioningUrl, undefined);
    assert.equal(seen.body.data.recoveryCodes, undefined);
    assert.ok(!seen.text.includes(secret), 'no secret');
    assertError(await other.get('/current-identity/mfa/qr-code'), 404, 'NOT_FOUND');
    assertError(await other.post('/current-identity/mfa/verify', { code: await totp(secret) }), 404, 'NOT_FOUND');
    assertError(await other.post('/current-identity/mfa'), 409, 'MFA_EXISTS');

    // The owner verifies; the other session never passed MFA with it.
    assert.equal((await owner.post('/current-identity/mfa/verify', { code: await totp(secret) })).status, 200);
    assert.equal((await other.get('/current-api-session')).body.data.isMfaComplete, false);
    assert.equal((await owner.get('/current-identity/mfa')).body.data.isVerified, true);
  });

  test('a pending enrollment goes with the session that started it', async () => {
    const user = await createUser(server, admin);
    assert.equal((await user.client.post('/current-identity/mfa')).status, 201);
    const other = (await login(user)).c;
    assert.equal((await other.get('/current-identity/mfa')).status, 200);
    assert.equal((await user.client.delete('/current-api-session')).status, 200);
    assertError(await other.get('/current-identity/mfa'), 404, 'NOT_FOUND');
    assert.equal((await other.post('/current-identity/mfa')).status, 201, 'another session can start again');
    assert.ok((await other.get('/current-identity/mfa')).body.data.provisioningUrl);
  });

  test('the issuer and the account name are URL-encoded', async () => {
    const user = await createUser(server, admin, { username: unique('a b&c') });
    await user.client.post('/current-identity/mfa');
    const url: string = (await user.client.get('/current-identity/mfa')).body.data.provisioningUrl;
    assert.ok(url.startsWith(`otpauth://totp/edgectl:${encodeURIComponent(user.username)}?issuer=edgectl&secret=`));
  });
});

describe('partial sessions and /authenticate/mfa', () => {
  let user: Awaited<ReturnType<typeof createUser>>;
  let mfa: Enrolled;
  before(async () => {
    user = await createUser(server, admin);
    mfa = await enrollAndVerify(user.client);
  });

  test('a new login is partial and reaches only the §4.4 routes until the code is given', async () => {
    server.clock.advance(STEP_MS);
    const { c, res } = await login(user);
    check('client', '/authenticate', 'POST', 200, res.body);
    assert.deepEqual(res.body.data.authQueries, [MFA_QUERY]);
    assert.equal(res.body.data.isMfaRequired, true);
    assert.equal(res.body.data.isMfaComplete, false);

    // Everything else is 401 UNAUTHORIZED, on both APIs.
    for (const path of ['/current-identity', '/services', '/sessions', '/current-identity/mfa/recovery-codes'])
      assertError(await c.get(path), 401, 'UNAUTHORIZED');
    assertError(await c.other('management').get('/current-identity'), 401, 'UNAUTHORIZED');
    assertError(await c.delete('/current-identity/mfa'), 401, 'UNAUTHORIZED');
    assertError(await c.post('/current-api-session/certificates', { csr: 'x' }), 401, 'UNAUTHORIZED');
    // The §4.4 routes answer.
    const current = await c.get('/current-api-session');
    assert.equal(current.status, 200);
    check('client', '/current-api-session', 'GET', 200, current.body);
    assert.equal((await c.get('/current-identity/mfa')).body.data.isVerified, true);
    assertError(await c.get('/current-identity/mfa/qr-code'), 404, 'NOT_FOUND');
    assertError(await c.post('/current-identity/mfa'), 409, 'MFA_EXISTS');

    assertError(await c.post('/authenticate/mfa', { code: '123456' }), 401, 'MFA_INVALID_TOKEN');
    assertError(await c.post('/authenticate/mfa', {}), 400, 'COULD_NOT_VALIDATE');
    const code = await totp(mfa.secret);
    const ok = await c.post('/authenticate/mfa', { code });
    assert.equal(ok.status, 200, ok.text);
    check('client', '/authenticate/mfa', 'POST', 200, ok.body);
    assert.ok(
      passed.some((p) => p.apiSessionId === res.body.data.id),
      'onMfaPassed fired',
    );
    const full = (await c.get('/current-api-session')).body.data;
    assert.deepEqual(full.authQueries, []);
    assert.equal(full.isMfaComplete, true);
    assert.equal((await c.get('/current-identity')).status, 200);
    assert.equal((await c.other('management').get('/current-identity')).status, 200);

    // The same code on another partial session is a replay.
    const again = await login(user);
    assertError(await again.c.post('/authenticate/mfa', { code }), 401, 'MFA_INVALID_TOKEN');
    assertError(await again.c.get('/current-identity'), 401, 'UNAUTHORIZED');
    // Logging out works from a partial session.
    assert.equal((await again.c.delete('/current-api-session')).status, 200);
  });

  test('a code one step either side is accepted, two steps is refused, an older step than the last is refused', async () => {
    server.clock.advance(3 * STEP_MS);
    const s1 = (await login(user)).c;
    assertError(await s1.post('/authenticate/mfa', { code: await totp(mfa.secret, 2) }), 401, 'MFA_INVALID_TOKEN');
    assertError(await s1.post('/authenticate/mfa', { code: await totp(mfa.secret, -2) }), 401, 'MFA_INVALID_TOKEN');
    assert.equal((await s1.post('/authenticate/mfa', { code: await totp(mfa.secret, -1) })).status, 200);
    const s2 = (await login(user)).c;
    assert.equal((await s2.post('/authenticate/mfa', { code: await totp(mfa.secret, 1) })).status, 200);
    const s3 = (await login(user)).c;
    // The current step is older than the one just accepted.
    assertError(await s3.post('/authenticate/mfa', { code: await totp(mfa.secret) }), 401, 'MFA_INVALID_TOKEN');
  });

  test('a recovery code works once, in either case; regenerating replaces them all', async () => {
    server.clock.advance(3 * STEP_MS);
    const s1 = (await login(user)).c;
    assert.equal((await s1.post('/authenticate/mfa', { code: mfa.recoveryCodes[0]!.toLowerCase() })).status, 200);
    const s2 = (await login(user)).c;
    assertError(await s2.post('/authenticate/mfa', { code: mfa.recoveryCodes[0] }), 401, 'MFA_INVALID_TOKEN');

    // Reading the codes needs a TOTP code (header or body) and shows the remaining ones masked.
    assertError(await s1.get('/current-identity/mfa/recovery-codes'), 401, 'MFA_INVALID_TOKEN');
    const read = await s1.get('/current-identity/mfa/recovery-codes', {
      headers: { 'mfa-validation-code': await totp(mfa.secret) },
    });
    assert.equal(read.status, 200, read.text);
    assert.deepEqual(read.body.data.recoveryCodes, Array(19).fill('******'));
    server.clock.advance(STEP_MS);
    const inBody = await s1.get('/current-identity/mfa/recovery-codes', { body: { code: await totp(mfa.secret) } });
    assert.equal(inBody.status, 200, inBody.text);
    assert.equal(inBody.body.data.recoveryCodes.length, 19);

    server.clock.advance(STEP_MS);
    const regen = await s1.post('/current-identity/mfa/recovery-codes', { code: mfa.recoveryCodes[1] });
    assert.equal(regen.status, 200, regen.text);
    const fresh: string[] = regen.body.data.recoveryCodes;
    assert.equal(fresh.length, 20);
    assertError(await s2.post('/authenticate/mfa', { code: mfa.recoveryCodes[2] }), 401, 'MFA_INVALID_TOKEN');
    assert.equal((await s2.post('/authenticate/mfa', { code: fresh[0] })).status, 200);
    const regen2 = await s1.post('/current-identity/mfa/recovery-codes', { code: await totp(mfa.secret) });
    assert.equal(regen2.status, 200, regen2.text);
    mfa.recoveryCodes = regen2.body.data.recoveryCodes;
    assertError(await s1.post('/current-identity/mfa/recovery-codes', { code: 'ABCDEF' }), 401, 'MFA_INVALID_TOKEN');
  });

  test('deleting a verified enrollment needs a TOTP or recovery code; then logins are full again', async () => {
    server.clock.advance(STEP_MS);
    const c = (await login(user)).c;
    assert.equal((await c.post('/authenticate/mfa', { code: await totp(mfa.secret) })).status, 200);
    assertError(await c.delete('/current-identity/mfa'), 401, 'MFA_INVALID_TOKEN');
    assertError(
      await c.delete('/current-identity/mfa', { headers: { 'mfa-validation-code': '999999' } }),
      401,
      'MFA_INVALID_TOKEN',
    );
    const del = await c.delete('/current-identity/mfa', { headers: { 'mfa-validation-code': mfa.recoveryCodes[0]! } });
    assert.equal(del.status, 200, del.text);
    check('client', '/current-identity/mfa', 'DELETE', 200, del.body);
    assert.ok(removed.includes(user.id), 'onMfaRemoved fired');
    assertError(await c.get('/current-identity/mfa'), 404, 'NOT_FOUND');
    assertError(await c.delete('/current-identity/mfa'), 404, 'NOT_FOUND');
    assertError(await c.post('/authenticate/mfa', { code: '123456' }), 409, 'MFA_NOT_ENROLLED');
    assert.equal((await admin.get(`/identities/${user.id}`)).body.data.isMfaEnabled, false);
    const { res } = await login(user);
    assert.deepEqual(res.body.data.authQueries, []);
    assert.equal(res.body.data.isMfaRequired, false);

    // An unverified enrollment is deleted without a code.
    assert.equal((await c.post('/current-identity/mfa')).status, 201);
    assert.equal((await c.delete('/current-identity/mfa')).status, 200);
  });
});

describe('admin removal', () => {
  test('DELETE /identities/{id}/mfa removes the enrollment without a code; admin only', async () => {
    const user = await createUser(server, admin, { api: 'management' });
    await enrollAndVerify(user.client);
    assertError(await user.client.delete(`/identities/${user.id}/mfa`), 401, 'UNAUTHORIZED');
    const res = await admin.delete(`/identities/${user.id}/mfa`);
    assert.equal(res.status, 200, res.text);
    check('management', '/identities/{id}/mfa', 'DELETE', 200, res.body);
    assert.ok(removed.includes(user.id));
    assertError(await user.client.get('/current-identity/mfa'), 404, 'NOT_FOUND');
    assert.deepEqual((await login(user, 'management')).res.body.data.authQueries, []);
    assertError(await admin.delete('/identities/no-such-identity/mfa'), 404, 'NOT_FOUND');
  });
});

describe('auth policy requireTotp', () => {
  test('without an enrollment the partial session can enroll and verify, which completes it', async () => {
    const policy = await admin.post(
      '/auth-policies',
      authPolicyBody(unique('totp'), {}, { secondary: { requireTotp: true } }),
    );
    assert.equal(policy.status, 201, policy.text);
    const user = await createUser(server, admin, { identity: { authPolicyId: policy.body.data.id } });
    const { c, res } = await login(user, 'management');
    assert.deepEqual(res.body.data.authQueries, [MFA_QUERY]);
    assert.equal(res.body.data.isMfaRequired, false, 'no verified enrollment at authentication');
    assertError(await c.get('/current-identity'), 401, 'UNAUTHORIZED');
    assertError(await c.post('/authenticate/mfa', { code: '123456' }), 409, 'MFA_NOT_ENROLLED');

    assert.equal((await c.post('/current-identity/mfa')).status, 201);
    const d = (await c.get('/current-identity/mfa')).body.data;
    check('management', '/current-identity/mfa', 'GET', 200, (await c.get('/current-identity/mfa')).body);
    assert.equal((await c.get('/current-identity/mfa/qr-code')).status, 200);
    // Still nothing else.
    assertError(await c.get('/current-identity'), 401, 'UNAUTHORIZED');
    const secret = new URL(d.provisioningUrl).searchParams.get('secret')!;
    assert.equal((await c.post('/current-identity/mfa/verify', { code: await totp(secret) })).status, 200);
    const now = (await c.get('/current-api-session')).body.data;
    assert.deepEqual(now.authQueries, []);
    assert.equal(now.isMfaComplete, true);
    assert.equal((await c.get('/current-identity')).status, 200);

    const next = await login(user, 'management');
    assert.deepEqual(next.res.body.data.authQueries, [MFA_QUERY]);
    assert.equal(next.res.body.data.isMfaRequired, true);
  });
});
