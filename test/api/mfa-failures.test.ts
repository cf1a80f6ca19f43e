/**
 * Guessing second-factor codes (docs/decisions.md, "Guessing bound"): wrong codes are counted per identity in the
 * store, across sessions; an API session's 5th wrong code ends it; at 100 wrong codes within 24 hours TOTP codes are
 * refused (a recovery code still passes) and at 200 recovery codes too, until the failures age out; a correct code
 * forgives only its own session's wrong codes; and the real user's correct code is never refused with 429 because other
 * sessions spent a budget. Codes are computed from the secret and the controller's frozen clock.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generate } from 'otplib';
import { createUser, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { assertError } from '../harness/assert.js';

// The per-account budget of the auth limiter is small, as before this item (it was per identity, so other
// sessions' wrong codes got the real user's right code a 429); the source budgets are raised for the file's
// many attempts from one address.
const YAML = `edge:
  api:
    rateLimit:
      auth:
        perSource: { burst: 10000, perMinute: 10000 }
        failuresPerSource: { burst: 1000, perMinute: 1000 }
        failuresPerAccount: { burst: 15, perMinute: 1 }
`;
const STEP_MS = 30_000;
const DAY_MS = 24 * 60 * 60 * 1000;

let server: TestServer;
let admin: ApiClient;
const warnings: { obj: unknown; msg: unknown }[] = [];

before(async () => {
  server = await startTestServer({ yaml: YAML, clock: 'frozen' });
  admin = await server.admin();
  const log = server.daemon.ctx.log;
  const warn = log.warn.bind(log);
  log.warn = (obj: object | string, msg?: string) => {
    warnings.push({ obj, msg });
    warn(obj, msg);
  };
});
after(() => server.close());

const totp = (secret: string, steps = 0) =>
  generate({ secret, epoch: Math.floor((server.clock.now().getTime() + steps * STEP_MS) / 1000) });

/** Six-digit codes none of which is accepted now (the current step or one either side). */
async function wrongCodes(secret: string, n: number): Promise<string[]> {
  const right = new Set(await Promise.all([-1, 0, 1].map((s) => totp(secret, s))));
  const out: string[] = [];
  for (let i = 100000; out.length < n; i += 7919) if (!right.has(String(i))) out.push(String(i));
  return out;
}

/** A recovery-code-shaped code that is not one of `codes`. */
const wrongRecoveryCode = (codes: string[]) => ['AAAAAA', 'BBBBBB'].find((c) => !codes.includes(c))!;

interface Enrolled {
  user: Awaited<ReturnType<typeof createUser>>;
  mfaId: string;
  secret: string;
  recoveryCodes: string[];
}

async function enrolledUser(): Promise<Enrolled> {
  const user = await createUser(server, admin);
  assert.equal((await user.client.post('/current-identity/mfa')).status, 201);
  const d = (await user.client.get('/current-identity/mfa')).body.data;
  const secret = new URL(d.provisioningUrl).searchParams.get('secret')!;
  assert.equal((await user.client.post('/current-identity/mfa/verify', { code: await totp(secret) })).status, 200);
  // The verifying code's step is used up: the tests' codes start at the next one.
  server.clock.advance(STEP_MS);
  return { user, mfaId: d.id, secret, recoveryCodes: d.recoveryCodes };
}

/** A new password login of the user: a partial session waiting for the code. */
async function partial(e: Enrolled): Promise<ApiClient> {
  const c = server.client('client');
  const res = await c.login(e.user.username, e.user.password);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.data.authQueries.length, 1);
  return c;
}

const sessionId = async (c: ApiClient): Promise<string> => (await c.get('/current-api-session')).body.data.id;

/** Wrong codes of the last 24 hours against the enrollment, read from the store: in all and from one session. */
async function storedFailures(e: Enrolled, apiSessionId = ''): Promise<{ total: number; session: number }> {
  const since = new Date(server.clock.now().getTime() - DAY_MS).toISOString();
  const rows = await server.daemon.store.db
    .selectFrom('mfa_failures')
    .select(['apiSessionId'])
    .where('mfaId', '=', e.mfaId)
    .where('at', '>', since)
    .execute();
  return { total: rows.length, session: rows.filter((r) => r.apiSessionId === apiSessionId).length };
}

/** `n` wrong codes from one new partial session each time, five at most per session (the fifth ends it). */
async function guess(e: Enrolled, n: number): Promise<void> {
  const codes = await wrongCodes(e.secret, n);
  for (let i = 0; i < n; i += 5) {
    const c = await partial(e);
    for (const code of codes.slice(i, i + 5))
      assertError(await c.post('/authenticate/mfa', { code }), 401, 'MFA_INVALID_TOKEN');
  }
}

/** Rows of wrong codes from sessions that are not the test's, as an attacker's earlier guesses would leave. */
async function seedFailures(e: Enrolled, n: number): Promise<void> {
  const at = server.clock.now().toISOString();
  const rows = Array.from({ length: n }, (_, i) => ({ mfaId: e.mfaId, apiSessionId: `earlier-${i % 20}`, at }));
  await server.daemon.store.db.insertInto('mfa_failures').values(rows).execute();
}

describe('counting wrong codes', () => {
  test('wrong codes count per identity across sessions, in the store; the fifth from a session ends it', async () => {
    const e = await enrolledUser();
    const codes = await wrongCodes(e.secret, 7);
    const s1 = await partial(e);
    const s1Id = await sessionId(s1);
    for (const code of codes.slice(0, 4))
      assertError(await s1.post('/authenticate/mfa', { code }), 401, 'MFA_INVALID_TOKEN');
    assert.equal((await s1.get('/current-api-session')).status, 200, 'four wrong codes: the session lives');
    assertError(await s1.post('/authenticate/mfa', { code: codes[4] }), 401, 'MFA_INVALID_TOKEN');
    assertError(await s1.get('/current-api-session'), 401, 'UNAUTHORIZED');
    assertError(await s1.post('/authenticate/mfa', { code: await totp(e.secret) }), 401, 'UNAUTHORIZED');

    const s2 = await partial(e);
    const s2Id = await sessionId(s2);
    for (const code of codes.slice(5))
      assertError(await s2.post('/authenticate/mfa', { code }), 401, 'MFA_INVALID_TOKEN');
    assert.deepEqual(await storedFailures(e, s2Id), { total: 7, session: 2 });
    assert.deepEqual(await storedFailures(e, s1Id), { total: 7, session: 5 }, 'an ended session forgives nothing');
    assert.ok(
      warnings.some(
        (w) =>
          (w.obj as { identityId?: string; apiSessionId?: string }).identityId === e.user.id &&
          (w.obj as { apiSessionId?: string }).apiSessionId === s1Id &&
          /ended after 5 wrong MFA codes/.test(String(w.msg)),
      ),
      'the ended session is logged at warn',
    );

    // Full sessions count too: a wrong code on a recovery-code read or a verified delete.
    const full = e.user.client;
    assertError(
      await full.get('/current-identity/mfa/recovery-codes', { headers: { 'mfa-validation-code': codes[0]! } }),
      401,
      'MFA_INVALID_TOKEN',
    );
    assertError(
      await full.delete('/current-identity/mfa', {
        headers: { 'mfa-validation-code': wrongRecoveryCode(e.recoveryCodes) },
      }),
      401,
      'MFA_INVALID_TOKEN',
    );
    assert.equal((await storedFailures(e)).total, 9);
  });

  test('a correct code forgives its own session’s wrong codes, not other sessions’', async () => {
    const e = await enrolledUser();
    await guess(e, 3);
    const mine = await partial(e);
    const mineId = await sessionId(mine);
    const [typo] = await wrongCodes(e.secret, 1);
    assertError(await mine.post('/authenticate/mfa', { code: typo }), 401, 'MFA_INVALID_TOKEN');
    assert.equal((await mine.post('/authenticate/mfa', { code: await totp(e.secret) })).status, 200);
    assert.deepEqual(await storedFailures(e, mineId), { total: 3, session: 0 });
  });
});

describe('the real user while others guess', () => {
  test('a correct code is accepted while other sessions spend more than the limiter’s budget (never 429)', async () => {
    const e = await enrolledUser();
    // 16 wrong codes from four sessions: beyond the per-account burst of 15, were it per identity.
    const codes = await wrongCodes(e.secret, 16);
    const guessers = await Promise.all([0, 1, 2, 3].map(() => partial(e)));
    for (let i = 0; i < 16; i++)
      assertError(await guessers[i % 4]!.post('/authenticate/mfa', { code: codes[i] }), 401, 'MFA_INVALID_TOKEN');
    const real = await partial(e);
    const res = await real.post('/authenticate/mfa', { code: await totp(e.secret) });
    assert.equal(res.status, 200, res.text);
    assert.equal((await real.get('/current-api-session')).body.data.isMfaComplete, true);
    assert.equal((await real.get('/current-identity')).status, 200);
  });
});

describe('the locks', () => {
  test('after 100 wrong codes TOTP codes are refused, right or wrong; a recovery code passes; 24 h later TOTP works', async () => {
    const e = await enrolledUser();
    await guess(e, 100);
    assert.equal((await storedFailures(e)).total, 100);
    assert.ok(
      warnings.some(
        (w) =>
          (w.obj as { identityId?: string }).identityId === e.user.id &&
          /TOTP codes locked after 100 wrong MFA codes/.test(String(w.msg)),
      ),
      'the lock is logged at warn with the identity id',
    );
    const codes = new Set(await wrongCodes(e.secret, 100));
    for (const w of warnings) for (const code of codes) assert.ok(!JSON.stringify(w).includes(code), 'no code logged');

    const real = await partial(e);
    const refused = await real.post('/authenticate/mfa', { code: await totp(e.secret) });
    assertError(refused, 401, 'MFA_INVALID_TOKEN');
    assert.match(refused.body.error.causeMessage, /after 100 wrong codes within 24 hours: use a recovery code/);
    assert.equal((await storedFailures(e)).total, 100, 'a code refused unchecked is not counted');
    const recovered = await real.post('/authenticate/mfa', { code: e.recoveryCodes[0] });
    assert.equal(recovered.status, 200, recovered.text);
    assert.equal((await real.get('/current-identity')).status, 200);
    // Locked for every use of a TOTP code, full sessions included.
    assertError(
      await real.get('/current-identity/mfa/recovery-codes', {
        headers: { 'mfa-validation-code': await totp(e.secret) },
      }),
      401,
      'MFA_INVALID_TOKEN',
    );

    // The failures age out of the 24-hour window: TOTP codes work again.
    server.clock.advance(DAY_MS);
    const later = await partial(e);
    assert.equal((await later.post('/authenticate/mfa', { code: await totp(e.secret) })).status, 200);
    admin = await server.admin(); // the admin's session went idle meanwhile
  });

  test('a real user’s sign-in does not give an attacker a fresh budget', async () => {
    const e = await enrolledUser();
    await seedFailures(e, 98);
    const real = await partial(e);
    assert.equal((await real.post('/authenticate/mfa', { code: await totp(e.secret) })).status, 200);
    await guess(e, 2);
    server.clock.advance(STEP_MS);
    const next = await partial(e);
    assertError(await next.post('/authenticate/mfa', { code: await totp(e.secret) }), 401, 'MFA_INVALID_TOKEN');
  });

  test('at 200 wrong codes recovery codes are refused too; an admin removing the enrollment is the way back', async () => {
    const e = await enrolledUser();
    await seedFailures(e, 199);
    const c = await partial(e);
    // A wrong recovery code is still checked (and counted: the 200th)…
    assertError(
      await c.post('/authenticate/mfa', { code: wrongRecoveryCode(e.recoveryCodes) }),
      401,
      'MFA_INVALID_TOKEN',
    );
    // …after which a right one is refused unchecked.
    const refused = await c.post('/authenticate/mfa', { code: e.recoveryCodes[0] });
    assertError(refused, 401, 'MFA_INVALID_TOKEN');
    assert.match(refused.body.error.causeMessage, /after 200 wrong codes within 24 hours/);
    assert.equal((await admin.delete(`/identities/${e.user.id}/mfa`)).status, 200);
    assert.equal((await storedFailures(e)).total, 0, 'the failures go with the enrollment');
    const res = await server.client('client').login(e.user.username, e.user.password);
    assert.deepEqual(res.body.data.authQueries, []);
  });
});
