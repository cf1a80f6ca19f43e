/**
 * Event delivery to JSON-lines files (`events.sinks`): each sink gets every event it takes, once and in order,
 * resuming from its cursor in the store; files are 0600; a namespace filter holds; events past the retention
 * are pruned by the periodic work. And the secret scan: operations with known secrets (passwords, enrollment
 * tokens and JWTs, TOTP secrets and codes, recovery codes, session tokens, and the OIDC flow's authorization
 * request ids, codes, PKCE verifiers, access, refresh and ID tokens) leave none of them in any event, in the
 * API's listing or in any sink (the files, stdout, a webhook receiver), each of which got every event.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'otplib';
import { createIdentity, createUser, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { deliverEvents } from '../../src/model/events/deliver.js';
import { FileSink } from '../../src/daemon/event-sinks.js';
import { startReceiver, type Receiver } from '../harness/https-receiver.js';
import {
  callback,
  form,
  passwordLogin,
  pkce,
  REDIRECT_URI,
  startLogin,
  tokenRequest,
  type Pkce,
} from '../harness/oidc.js';
import { jsonLines } from '../harness/events.js';

type Ev = Record<string, any>;

const dir = mkdtempSync(join(tmpdir(), 'edgectl-sinks-'));
const ALL = join(dir, 'all.jsonl');
const AUTH = join(dir, 'auth.jsonl');
const WEBHOOK_SECRET = 'scan-Webhook-Secret-000111222';
let s: TestServer;
let admin: ApiClient;
let receiver: Receiver;
let stdout = '';

before(async () => {
  receiver = await startReceiver(WEBHOOK_SECRET);
  writeFileSync(join(dir, 'receiver-ca.pem'), receiver.caPem);
  s = await startTestServer({
    clock: 'frozen',
    backgroundSweep: false,
    eventStdout: new Writable({
      write(chunk: Buffer, _enc, done) {
        stdout += chunk.toString();
        done();
      },
    }),
    yaml: `events:
  retention: 1h
  sinks:
    - type: file
      path: ${ALL}
    - type: file
      path: ${AUTH}
      namespaces: [authentication]
    - type: stdout
    - type: webhook
      url: https://127.0.0.1:${receiver.port}/events
      secret: ${WEBHOOK_SECRET}
      caFile: receiver-ca.pem
`.replace('receiver-ca.pem', join(dir, 'receiver-ca.pem')),
  });
  admin = await s.admin();
});
after(async () => {
  await s?.close();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

const lines = (file: string): Ev[] => jsonLines<Ev>(file);

async function allEvents(): Promise<Ev[]> {
  const out: Ev[] = [];
  for (let offset = 0; ; offset += 500) {
    const res = await admin.get(`/events?limit=500&offset=${offset}`);
    assert.equal(res.status, 200, res.text);
    out.push(...res.body.data);
    if (out.length >= res.body.meta.pagination.totalCount) return out;
  }
}

test('each sink gets every event it takes, once, in order, from where it stopped; files are 0600', async () => {
  await createIdentity(admin);
  assert.equal(await s.sweep(), true);
  const first = lines(ALL);
  assert.ok(first.length >= 2, 'the admin login and the identity at least');
  await createIdentity(admin);
  await createUser(s, admin);
  await s.sweep();
  // A sink made anew (as after a restart) starts from the cursor in the store: nothing twice.
  assert.equal(await deliverEvents(s.daemon.ctx, new FileSink(sinkConfig(ALL))), 0);
  const all = lines(ALL);
  assert.deepEqual(all.slice(0, first.length), first, 'appended after what was there');
  assert.equal(new Set(all.map((e) => e.id)).size, all.length, 'no event twice');
  const listed = (await allEvents()).reverse();
  assert.deepEqual(
    all.map((e) => e.id),
    listed.map((e) => e.id),
    'every recorded event, in the outbox order',
  );
  const auth = lines(AUTH);
  assert.ok(auth.length > 0);
  assert.ok(auth.every((e) => e.namespace === 'authentication'));
  assert.deepEqual(
    auth.map((e) => e.id),
    all.filter((e) => e.namespace === 'authentication').map((e) => e.id),
  );
  assert.equal(statSync(ALL).mode & 0o777, 0o600);
  assert.equal(statSync(AUTH).mode & 0o777, 0o600);
});

function sinkConfig(path: string) {
  return { type: 'file' as const, name: `file:${path}`, path, maxBytes: 1 << 30, maxFiles: 1 };
}

test('no secret appears in any event, in the listing or in any sink (files, stdout, webhook)', async () => {
  const secrets: string[] = [];
  // A password authenticator, a login, a password change.
  const user = await createUser(s, admin, { password: 'Scan-Passw0rd-0001!', api: 'client' });
  secrets.push(user.password, user.client.token!, admin.token!);
  const auth = (await admin.get(`/authenticators?filter=${encodeURIComponent(`identityId = "${user.id}"`)}`)).body
    .data[0];
  const changed = await user.client.patch(`/current-identity/authenticators/${auth.id}`, {
    password: 'Scan-Passw0rd-0002!',
    currentPassword: user.password,
  });
  assert.equal(changed.status, 200, changed.text);
  secrets.push('Scan-Passw0rd-0002!');
  const own = (
    await admin.get(`/events?filter=${encodeURIComponent(`entityId = "${auth.id}" and eventType = "updated"`)}`)
  ).body.data;
  assert.equal(own.length, 1, 'the self-service change is recorded');
  assert.equal(own[0].metadata.author.id, user.id);
  assert.deepEqual(own[0].changes.passwordHash, { redacted: true });
  const reset = await admin.patch(`/authenticators/${auth.id}`, { password: 'Scan-Passw0rd-0003!' });
  assert.equal(reset.status, 200, reset.text);
  secrets.push('Scan-Passw0rd-0003!');
  // Enrollment tokens and JWTs: one-time and updb, the latter used with a password.
  const ottId = await createIdentity(admin, { enrollment: { ott: true } });
  const ott = (await admin.get(`/identities/${ottId}`)).body.data.enrollment.ott;
  const username = `scan-${Math.random().toString(36).slice(2, 8)}`;
  const updbId = await createIdentity(admin, { enrollment: { updb: username } });
  const updb = (await admin.get(`/identities/${updbId}`)).body.data.enrollment.updb;
  secrets.push(ott.token, ott.jwt, updb.token, updb.jwt);
  const enrolled = await s.request('POST', `/edge/client/v1/enroll/updb?token=${updb.token}`, {
    body: { password: 'Scan-Passw0rd-0004!' },
  });
  assert.equal(enrolled.status, 200, enrolled.text);
  secrets.push('Scan-Passw0rd-0004!');
  // TOTP: enrolled, verified, then a login completed with a code; the recovery codes shown once.
  const mfaUser = await createUser(s, admin, { password: 'Scan-Passw0rd-0005!', api: 'client' });
  assert.equal((await mfaUser.client.post('/current-identity/mfa')).status, 201);
  const mfa = (await mfaUser.client.get('/current-identity/mfa')).body.data;
  const secret = new URL(mfa.provisioningUrl).searchParams.get('secret')!;
  const code = await generate({ secret, epoch: Math.floor(s.clock.now().getTime() / 1000) });
  assert.equal((await mfaUser.client.post('/current-identity/mfa/verify', { code })).status, 200);
  secrets.push(secret, ...(mfa.recoveryCodes as string[]));
  const again = s.client('client');
  await again.login(mfaUser.username, 'Scan-Passw0rd-0005!');
  s.clock.advance(30_000);
  const code2 = await generate({ secret, epoch: Math.floor(s.clock.now().getTime() / 1000) });
  assert.equal((await again.post('/authenticate/mfa', { code: code2 })).status, 200);
  secrets.push('Scan-Passw0rd-0005!', again.token!);
  // OIDC: a login with a password and a TOTP code, its code exchanged, the tokens refreshed, exchanged and
  // revoked; another login's code tried with a wrong verifier.
  const oidcCode = async (p: Pkce, id: string) => {
    const { code } = (await callback(s, id)) as { code: string };
    secrets.push(id, p.verifier, code);
    return code;
  };
  const tokens = async (fields: Record<string, string>) => {
    const res = await tokenRequest(s, { client_id: 'native', ...fields });
    assert.equal(res.status, 200, res.text);
    for (const k of ['access_token', 'refresh_token', 'id_token'])
      if (typeof res.body[k] === 'string') secrets.push(res.body[k] as string);
    return res.body as Record<string, string>;
  };
  const p = pkce();
  const loginId = await startLogin(s, p);
  assert.equal((await passwordLogin(s, loginId, mfaUser.username, 'Scan-Passw0rd-0005!')).status, 200);
  s.clock.advance(30_000);
  const code3 = await generate({ secret, epoch: Math.floor(s.clock.now().getTime() / 1000) });
  const totpStep = await s.request('POST', '/oidc/login/totp', { body: { id: loginId, code: code3 } });
  assert.equal(totpStep.status, 302, totpStep.text);
  const first = await tokens({
    grant_type: 'authorization_code',
    code: await oidcCode(p, loginId),
    code_verifier: p.verifier,
    redirect_uri: REDIRECT_URI,
  });
  const refreshed = await tokens({ grant_type: 'refresh_token', refresh_token: first.refresh_token! });
  await tokens({
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
    subject_token: refreshed.refresh_token!,
    subject_token_type: 'urn:ietf:params:oauth:token-type:refresh_token',
  });
  const revoked = await s.request(
    'POST',
    '/oidc/revoke',
    form({ token: refreshed.refresh_token!, client_id: 'native' }),
  );
  assert.equal(revoked.status, 200);
  const p2 = pkce();
  const otherId = await startLogin(s, p2);
  assert.equal((await passwordLogin(s, otherId, user.username, 'Scan-Passw0rd-0003!')).status, 302);
  const wrong = pkce().verifier;
  secrets.push(wrong);
  const refused = await tokenRequest(s, {
    grant_type: 'authorization_code',
    code: await oidcCode(p2, otherId),
    code_verifier: wrong,
    redirect_uri: REDIRECT_URI,
    client_id: 'native',
  });
  assert.equal(refused.status, 400);
  await s.sweep();

  const events = await allEvents();
  assert.ok(
    events.some((e) => e.namespace === 'apiSession' && e.event_type === 'refreshed'),
    'the MFA pass recorded',
  );
  const oidc = events.filter((e) => e.namespace === 'authentication' && e.flow === 'oidc');
  assert.deepEqual(
    [...new Set(oidc.map((e) => `${e.event_type} ${e.type}`))].sort(),
    ['fail authorization_code', 'success totp', 'success updb'],
    'the OIDC steps recorded',
  );
  const texts = new Map([
    ['the listing', JSON.stringify(events)],
    ['the file sink', readFileSync(ALL, 'utf8')],
    ['the stdout sink', stdout],
    ['the webhook sink', receiver.accepted.map((b) => b.body).join('\n')],
  ]);
  const ids = (text: string) => new Set([...text.matchAll(/"id":"([0-9a-f-]{36})"/g)].map((m) => m[1]));
  for (const [where, text] of texts) {
    if (where === 'the listing') continue;
    const got = ids(text);
    assert.ok(
      events.every((e) => got.has(e.id)),
      `every listed event reached ${where}`,
    );
  }
  for (const [where, text] of texts) {
    for (const secret of secrets) assert.ok(!text.includes(secret), `${secret.slice(0, 12)}… found in ${where}`);
    for (const c of [code, code2, code3])
      assert.doesNotMatch(text, new RegExp(`(^|[^0-9a-f])${c}([^0-9a-f]|$)`), `the TOTP code in ${where}`);
    assert.doesNotMatch(text, /\$argon2/, `a password hash in ${where}`);
  }
});

test('events past the retention are pruned by the periodic work', async () => {
  const id = await createIdentity(admin);
  const before = await admin.get(`/events?filter=${encodeURIComponent(`entityId = "${id}"`)}`);
  assert.equal(before.body.data.length, 1);
  s.clock.advance(61 * 60_000);
  admin = await s.admin();
  await s.sweep();
  const afterPrune = await admin.get(`/events?filter=${encodeURIComponent(`entityId = "${id}"`)}`);
  assert.equal(afterPrune.status, 200);
  assert.deepEqual(afterPrune.body.data, []);
  assert.ok((await admin.get('/events')).body.data.length > 0, 'the new login is kept');
});
