/**
 * The events of OIDC logins (docs/decisions.md, "Events" and "OIDC login"): each login step records an
 * `authentication` success or failure (`flow: "oidc"`, the method as `type`, the reason, the source address, the
 * login's `api_session_id`), the code exchange the API session's `created` (`type: "jwt"`), a refresh and a token
 * exchange `refreshed`, `/oidc/revoke` and `end_session` their revocations and the session's `deleted`. No code,
 * verifier, token, password, TOTP or recovery code, or authorization request id appears in any event.
 * Frozen clock; TOTP codes are computed from the enrollment's secret.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createIdentity, createUser, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { unique } from '../harness/assert.js';
import {
  callback,
  claimsOf,
  createAuthPolicy,
  createExtJwtSigner,
  enrolledCertIdentity,
  exchangeCode,
  exchangeRequest,
  form,
  passwordLogin,
  pkce,
  postCertLogin,
  postExtJwtLogin,
  REDIRECT_URI,
  refreshRequest,
  RELAXED_FAILURE_LIMITS,
  startLogin,
  tokenRequest,
  TOTP_STEP_MS as STEP_MS,
  totpCode,
  totpSecretOf,
  enrollTotp,
  type Pkce,
  type Tokens,
} from '../harness/oidc.js';

type Ev = Record<string, any>;

let server: TestServer;
let admin: ApiClient;
/** Every secret the tests used, scanned for in every event at the end. */
const secrets = new Set<string>();

before(async () => {
  server = await startTestServer({ yaml: RELAXED_FAILURE_LIMITS, clock: 'frozen' });
  admin = await server.admin();
});
after(async () => server.close());

/** The events concerning `identityId`, oldest first. */
async function eventsOf(identityId: string): Promise<Ev[]> {
  admin = await server.admin();
  const filter = `actorId = "${identityId}"`;
  const res = await admin.get(
    `/events?filter=${encodeURIComponent(filter)}&sort=${encodeURIComponent('timestamp asc')}&limit=500`,
  );
  if (res.status !== 200) throw new Error(`events list failed: ${res.status} ${res.text}`);
  return res.body.data;
}

const oidcAuth = (events: Ev[]) => events.filter((e) => e.namespace === 'authentication' && e.flow === 'oidc');
const sessionEvents = (events: Ev[], asid: string) =>
  events.filter((e) => e.namespace === 'apiSession' && e.api_session_id === asid);

/** Exchanges the code of a completed login, remembering the code, verifier and tokens as secrets. */
async function exchange(id: string, p: Pkce): Promise<Tokens> {
  const res = await exchangeCode(server, id, p);
  secrets.add(p.verifier);
  assert.equal(res.status, 200, res.text);
  const t = res.body as Tokens;
  for (const v of [t.access_token, t.refresh_token!, t.id_token]) secrets.add(v);
  return t;
}

/** Starts a login, remembering its request id as a secret. */
async function start(p: Pkce, o: Parameters<typeof startLogin>[2] = {}): Promise<string> {
  const id = await startLogin(server, p, o);
  secrets.add(id);
  return id;
}

describe('a password login', () => {
  let user: { id: string; username: string; password: string };
  let tokens: Tokens;
  let asid: string;

  before(async () => {
    user = await createUser(server, admin, { password: 'Oidc-Events-Passw0rd-1!' });
    secrets.add(user.password);
  });

  test('a wrong password records a failure with the reason, the username and the source address', async () => {
    const id = await start(pkce());
    const res = await server.request('POST', '/oidc/login/password', {
      body: { id, username: user.username, password: 'Wrong-Oidc-Passw0rd-9!' },
      from: '127.0.0.11',
    });
    assert.equal(res.status, 401);
    secrets.add('Wrong-Oidc-Passw0rd-9!');
    const [fail] = oidcAuth(await eventsOf(user.id));
    assert.equal(fail?.event_type, 'fail');
    assert.equal(fail.type, 'updb');
    assert.equal(fail.reason, 'invalid password');
    assert.equal(fail.username, user.username);
    assert.equal(fail.identity_id, user.id);
    assert.equal(fail.remote_address, '127.0.0.11');
    assert.equal(fail.success, false);
  });

  test('the right one records a success naming the login API session; the exchange records the session', async () => {
    const p = pkce();
    const id = await start(p);
    const res = await server.request('POST', '/oidc/login/password', {
      body: { id, username: user.username, password: user.password },
      from: '127.0.0.12',
    });
    assert.equal(res.status, 302, res.text);
    tokens = await exchange(id, p);
    asid = claimsOf(tokens.access_token).z_asid;
    const events = await eventsOf(user.id);
    const success = oidcAuth(events).find((e) => e.event_type === 'success');
    assert.equal(success?.type, 'updb');
    assert.equal(success.api_session_id, asid);
    assert.equal(success.remote_address, '127.0.0.12');
    assert.equal(success.fully_authenticated, true);
    assert.equal(success.authenticator_id, claimsOf(tokens.access_token).z_authid);
    const [created] = sessionEvents(events, asid);
    assert.equal(created?.event_type, 'created');
    assert.equal(created.type, 'jwt');
    assert.equal(created.identity_id, user.id);
    assert.equal(created.fully_authenticated, true);
    assert.deepEqual(created.amr, ['password']);
    assert.equal(created.client_id, 'native');
  });

  test('a refresh and a token exchange record the session refreshed', async () => {
    const refreshed = await refreshRequest(server, tokens.refresh_token!);
    assert.equal(refreshed.status, 200, refreshed.text);
    for (const v of [refreshed.body.access_token, refreshed.body.refresh_token, refreshed.body.id_token])
      secrets.add(v);
    const exchanged = await exchangeRequest(server, refreshed.body.refresh_token);
    assert.equal(exchanged.status, 200, exchanged.text);
    secrets.add(exchanged.body.access_token);
    secrets.add(exchanged.body.refresh_token);
    tokens = { ...tokens, ...refreshed.body };
    const events = sessionEvents(await eventsOf(user.id), asid);
    assert.deepEqual(
      events.map((e) => [e.event_type, e.reason ?? null]),
      [
        ['created', null],
        ['refreshed', 'token refresh'],
        ['refreshed', 'token exchange'],
      ],
    );
  });

  test('a revoked refresh token records its revocation; end_session its revocation and the session deleted', async () => {
    const revoked = await server.request(
      'POST',
      '/oidc/revoke',
      form({ token: tokens.refresh_token!, client_id: 'native' }),
    );
    assert.equal(revoked.status, 200);
    const jti = claimsOf(tokens.refresh_token!).jti;
    const q = new URLSearchParams({ id_token_hint: tokens.id_token, client_id: 'native' });
    const ended = await server.request('GET', `/oidc/end_session?${q}`, { from: '127.0.0.13' });
    assert.equal(ended.status, 302);
    admin = await server.admin();
    const changes = (await admin.get(`/events?filter=${encodeURIComponent('entityType = "revocations"')}&limit=500`))
      .body.data as Ev[];
    const byJti = changes.find((e) => e.entityId === jti);
    assert.equal(byJti?.eventType, 'created');
    assert.equal(byJti.finalState.type, 'JTI');
    assert.equal(byJti.metadata.source.api, 'oidc');
    assert.equal(byJti.finalState.issuedBefore, undefined, 'the cutoff is not shown');
    const bySession = changes.find((e) => e.entityId === asid);
    assert.equal(bySession?.finalState.type, 'API_SESSION');
    assert.equal(bySession.metadata.source.remoteAddr, '127.0.0.13');
    const last = sessionEvents(await eventsOf(user.id), asid).at(-1);
    assert.equal(last?.event_type, 'deleted');
    assert.equal(last.type, 'jwt');
  });

  test('an admin revocation records its change with the admin as author', async () => {
    const res = await admin.post('/revocations', { id: user.id, type: 'IDENTITY' });
    assert.equal(res.status, 201, res.text);
    const [change] = (
      await admin.get(`/events?filter=${encodeURIComponent(`entityType = "revocations" and entityId = "${user.id}"`)}`)
    ).body.data as Ev[];
    assert.equal(change?.eventType, 'created');
    assert.equal(change.metadata.author.type, 'identity');
    assert.equal(change.metadata.source.api, 'management');
    assert.equal((await admin.post('/revocations', { id: user.id, type: 'IDENTITY' })).status, 201);
    const again = (
      await admin.get(`/events?filter=${encodeURIComponent(`entityType = "revocations" and entityId = "${user.id}"`)}`)
    ).body.data as Ev[];
    assert.deepEqual(again.map((e) => e.eventType).sort(), ['created', 'updated']);
  });
});

describe('refusals', () => {
  test('a step naming no live request records one failure a minute per source, not one per request', async () => {
    const name = unique('nobody');
    for (let i = 0; i < 3; i++) {
      const res = await server.request('POST', '/oidc/login/password', {
        body: { id: '3f1c9a52-0000-4000-8000-000000000000', username: name, password: 'x-Passw0rd!' },
        from: '127.0.0.14',
      });
      assert.equal(res.status, 401);
    }
    admin = await server.admin();
    const fails = (
      await admin.get(
        `/events?filter=${encodeURIComponent('namespace = "authentication" and eventType = "fail"')}&limit=500`,
      )
    ).body.data.filter((e: Ev) => e.username === name) as Ev[];
    assert.equal(fails.length, 1, 'a flood of unknown requests is not a flood of writes');
    assert.equal(fails[0]!.reason, 'unknown auth request');
    assert.equal(fails[0]!.flow, 'oidc');
  });

  test('a live code exchanged with a wrong verifier records the refusal once, naming the identity', async () => {
    const user = await createUser(server, admin);
    const p = pkce();
    const id = await start(p);
    assert.equal((await passwordLogin(server, id, user.username, user.password)).status, 302);
    const { code } = await callback(server, id);
    secrets.add(code!);
    const wrong = pkce().verifier;
    secrets.add(wrong);
    for (let i = 0; i < 2; i++) {
      const res = await tokenRequest(server, {
        grant_type: 'authorization_code',
        code: code!,
        code_verifier: wrong,
        redirect_uri: REDIRECT_URI,
        client_id: 'native',
      });
      assert.equal(res.status, 400);
    }
    const fails = oidcAuth(await eventsOf(user.id)).filter((e) => e.event_type === 'fail');
    assert.equal(fails.length, 1, 'the first attempt used the code up');
    assert.equal(fails[0]!.type, 'authorization_code');
    assert.equal(fails[0]!.reason, 'the code_verifier does not match the code_challenge');
    assert.equal(typeof fails[0]!.api_session_id, 'string');
  });
});

describe('TOTP', () => {
  let user: { id: string; username: string; password: string; client: ApiClient };
  let secret: string;
  const totp = (steps = 0) => totpCode(secret, server.clock, steps);

  before(async () => {
    user = await createUser(server, admin);
    secrets.add(user.password);
    const enrolled = await enrollTotp(user.client, server.clock);
    secret = enrolled.secret;
    secrets.add(secret);
    for (const c of enrolled.recoveryCodes) secrets.add(c);
    server.clock.advance(STEP_MS);
  });

  test('the password step, a wrong and a right code each record their step; the session is made at the exchange', async () => {
    const p = pkce();
    const id = await start(p);
    assert.equal((await passwordLogin(server, id, user.username, user.password)).status, 200);
    const wrongCode = (await totp(5)) as string;
    const wrong = await server.request('POST', '/oidc/login/totp', {
      body: { id, code: wrongCode },
      from: '127.0.0.15',
    });
    assert.equal(wrong.status, 400);
    const code = await totp();
    secrets.add(code);
    const right = await server.request('POST', '/oidc/login/totp', { body: { id, code }, from: '127.0.0.15' });
    assert.equal(right.status, 302, right.text);
    const t = await exchange(id, p);
    const asid = claimsOf(t.access_token).z_asid;
    const events = await eventsOf(user.id);
    assert.deepEqual(
      oidcAuth(events).map((e) => [e.event_type, e.type, e.fully_authenticated ?? null, e.reason]),
      [
        ['success', 'updb', false, ''],
        ['fail', 'totp', null, 'invalid totp code'],
        ['success', 'totp', true, ''],
      ],
    );
    const totpFail = oidcAuth(events)[1]!;
    assert.equal(totpFail.identity_id, user.id);
    assert.equal(totpFail.remote_address, '127.0.0.15');
    assert.equal(oidcAuth(events)[2]!.api_session_id, asid);
    const [created] = sessionEvents(events, asid);
    assert.equal(created?.event_type, 'created');
    assert.deepEqual(created.amr, ['password', 'totp']);
  });

  test('a TOTP enrollment inside a login makes the session early, and the exchange completes it', async () => {
    const policyId = await createAuthPolicy(admin, { requireTotp: true });
    const other = await createUser(server, admin, { identity: { authPolicyId: policyId } });
    secrets.add(other.password);
    const p = pkce();
    const id = await start(p);
    assert.equal((await passwordLogin(server, id, other.username, other.password)).status, 200);
    const enrolled = await server.request('POST', '/oidc/login/totp/enroll', { body: { id } });
    assert.equal(enrolled.status, 201);
    const own = totpSecretOf(enrolled.body.provisioningUrl);
    secrets.add(own);
    for (const c of enrolled.body.recoveryCodes as string[]) secrets.add(c);
    const code = await totpCode(own, server.clock);
    secrets.add(code);
    const verified = await server.request('POST', '/oidc/login/totp/enroll/verify', { body: { id, code } });
    assert.equal(verified.status, 302, verified.text);
    const t = await exchange(id, p);
    const asid = claimsOf(t.access_token).z_asid;
    const events = await eventsOf(other.id);
    const mine = sessionEvents(events, asid).filter((e) => e.type === 'jwt');
    assert.deepEqual(
      mine.map((e) => [e.event_type, e.reason, e.fully_authenticated]),
      [
        ['created', 'totp enrollment in a login', false],
        ['refreshed', 'code exchanged', true],
      ],
    );
    const steps = oidcAuth(events).map((e) => [e.event_type, e.type]);
    assert.deepEqual(steps, [
      ['success', 'updb'],
      ['success', 'totp'],
    ]);
  });
});

describe('certificate and external JWT logins', () => {
  test('a certificate login records its success, a login without a certificate its failure', async () => {
    const me = await enrolledCertIdentity(server, admin);
    const identityId = me.id;
    secrets.add(me.key.split('\n')[1]!);
    const { id, p, res } = await postCertLogin(server, me);
    secrets.add(id);
    assert.equal(res.status, 302, res.text);
    await exchange(id, p);
    const id2 = await start(pkce(), { method: 'cert' });
    assert.equal((await server.request('POST', `/oidc/login/cert?authRequestID=${id2}`, { body: {} })).status, 401);
    const [success] = oidcAuth(await eventsOf(identityId));
    assert.equal(success?.event_type, 'success');
    assert.equal(success.type, 'cert');
    admin = await server.admin();
    const fails = (
      await admin.get(
        `/events?filter=${encodeURIComponent('namespace = "authentication" and eventType = "fail"')}&limit=500`,
      )
    ).body.data.filter((e: Ev) => e.flow === 'oidc' && e.type === 'cert') as Ev[];
    assert.ok(fails.length >= 1, 'the refused certificate login is recorded');
  });

  test('an external JWT login records its success; a refused one its failure, without the JWT', async () => {
    const signer = await createExtJwtSigner(admin);
    const identityId = await createIdentity(admin);
    const p = pkce();
    const id = await start(p, { method: 'ext-jwt' });
    const jwt = await signer.jwtFor(identityId);
    secrets.add(jwt);
    const res = await postExtJwtLogin(server, id, jwt);
    assert.equal(res.status, 302, res.text);
    await exchange(id, p);
    const foreign = await signer.foreignJwtFor(identityId);
    secrets.add(foreign);
    const id2 = await start(pkce(), { method: 'ext-jwt' });
    assert.equal((await postExtJwtLogin(server, id2, foreign)).status, 401);
    const [success] = oidcAuth(await eventsOf(identityId));
    assert.equal(success?.type, 'ext-jwt');
    assert.equal(success.event_type, 'success');
    admin = await server.admin();
    const fails = (
      await admin.get(
        `/events?filter=${encodeURIComponent('namespace = "authentication" and eventType = "fail"')}&limit=500`,
      )
    ).body.data.filter((e: Ev) => e.flow === 'oidc' && e.type === 'ext-jwt') as Ev[];
    assert.ok(fails.length >= 1, 'the refused external JWT login is recorded');
  });
});

test('no event holds a code, verifier, token, password, TOTP or recovery code, or an authorization request id', async () => {
  admin = await server.admin();
  const all: Ev[] = [];
  for (let offset = 0; ; offset += 500) {
    const page = await admin.get(`/events?limit=500&offset=${offset}`);
    assert.equal(page.status, 200, page.text);
    all.push(...page.body.data);
    if (page.body.data.length < 500) break;
  }
  assert.ok(
    all.some((e) => e.flow === 'oidc'),
    'the OIDC events are there to scan',
  );
  const text = JSON.stringify(all);
  assert.ok(secrets.size > 20, `${secrets.size} secrets`);
  for (const s of secrets) assert.ok(!text.includes(s), `an event holds a secret (${s.slice(0, 6)}…)`);
});
