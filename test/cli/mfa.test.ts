/**
 * MFA from the CLI against a real controller with a frozen clock: `mfa enable` without a terminal (prints the secret,
 * then `--code` finishes it), `login` answering the MFA challenge with `--mfa-code` or $EDGECTL_MFA_CODE (and failing
 * clearly without either), `mfa recovery-codes [--regenerate]`, `mfa disable`, and the admin's `identity mfa-remove`.
 * Subtests run in order.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generate } from 'otplib';
import { ADMIN, createUser, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { edgectl, edgectlEnv, type Run } from '../harness/cli.js';

const ok = (r: Run, what: string) => assert.equal(r.code, 0, `${what}: exit ${r.code}\n${r.stderr}${r.stdout}`);
const STEP_MS = 30_000;

const codesIn = (text: string): string[] => text.match(/\b[A-Z2-7]{6}\b/g) ?? [];

describe('edgectl mfa and MFA logins', () => {
  let server: TestServer;
  let admin: ApiClient;
  let tmp: string;
  let cfg: string;
  let adminCfg: string;
  let caFile: string;
  let user: Awaited<ReturnType<typeof createUser>>;
  let secret = '';
  let recovery: string[] = [];
  const cli = (...args: string[]) => edgectl(cfg, ...args);
  const totp = (steps = 0) =>
    generate({ secret, epoch: Math.floor((server.clock.now().getTime() + steps * STEP_MS) / 1000) });
  const login = (...extra: string[]) =>
    cli('login', server.url, '-u', user.username, '-p', user.password, '--ca', caFile, ...extra);

  before(async () => {
    server = await startTestServer({ clock: 'frozen' });
    admin = await server.admin();
    user = await createUser(server, admin, { api: 'management' });
    tmp = mkdtempSync(join(tmpdir(), 'edgectl-mfa-'));
    cfg = join(tmp, 'cfg');
    adminCfg = join(tmp, 'admin-cfg');
    caFile = join(tmp, 'ca.pem');
    writeFileSync(caFile, server.ca);
  });
  after(async () => {
    await server?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('mfa enable without a terminal prints the secret and stops; --code finishes it and prints the recovery codes', async () => {
    ok(await login(), 'login');
    const started = await cli('mfa', 'enable');
    assert.equal(started.code, 2, started.stderr);
    secret = /^secret: ([A-Z2-7]+)$/m.exec(started.stdout)?.[1] ?? '';
    assert.match(secret, /^[A-Z2-7]{32}$/);
    assert.match(started.stdout, /^url: otpauth:\/\/totp\/edgectl:/m);
    assert.match(started.stderr, /mfa enable --code CODE/);

    const wrong = await cli('mfa', 'enable', '--code', '000000');
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /MFA_INVALID_TOKEN/);

    const done = await cli('mfa', 'enable', '--code', await totp());
    ok(done, 'mfa enable --code');
    assert.match(done.stderr, /continuing the enrollment/);
    assert.match(done.stdout, /MFA enabled/);
    recovery = codesIn(done.stdout.slice(done.stdout.indexOf('MFA enabled')));
    assert.equal(recovery.length, 20);

    const again = await cli('mfa', 'enable');
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already enabled/);
  });

  it('login asks for the MFA code: a clear error without one, --mfa-code and $EDGECTL_MFA_CODE work', async () => {
    server.clock.advance(STEP_MS);
    const none = await login();
    assert.equal(none.code, 2);
    assert.match(none.stderr, /--mfa-code CODE or set EDGECTL_MFA_CODE/);

    const wrong = await login('--mfa-code', '123456');
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /MFA_INVALID_TOKEN/);

    ok(await login('--mfa-code', await totp()), 'login --mfa-code');
    ok(await cli('mfa', 'recovery-codes', '--code', await totp(1)), 'a full session');

    const viaEnv = await edgectlEnv(
      cfg,
      { EDGECTL_MFA_CODE: recovery[0]! },
      'login',
      server.url,
      '-u',
      user.username,
      '-p',
      user.password,
      '--ca',
      caFile,
    );
    ok(viaEnv, 'login with EDGECTL_MFA_CODE (a recovery code)');
    server.clock.advance(2 * STEP_MS);
    const left = await cli('mfa', 'recovery-codes', '--code', await totp());
    ok(left, 'mfa recovery-codes');
    assert.match(left.stdout, /^19 recovery codes left/m);
  });

  it('mfa recovery-codes --regenerate prints new codes; mfa disable needs a code', async () => {
    server.clock.advance(STEP_MS);
    const regen = await cli('mfa', 'recovery-codes', '--regenerate', '--code', await totp());
    ok(regen, 'regenerate');
    const fresh = codesIn(regen.stdout.slice(regen.stdout.indexOf('\n')));
    assert.equal(fresh.length, 20);
    const noCode = await cli('mfa', 'disable');
    assert.equal(noCode.code, 2);
    assert.match(noCode.stderr, /--code CODE/);
    ok(await cli('mfa', 'disable', '--code', fresh[0]!), 'mfa disable');
    ok(await login(), 'login without MFA');
  });

  it('identity mfa-remove removes the enrollment of another identity (admin)', async () => {
    const c = server.client('management');
    await c.login(user.username, user.password);
    assert.equal((await c.post('/current-identity/mfa')).status, 201);
    const d = (await c.get('/current-identity/mfa')).body.data;
    secret = new URL(d.provisioningUrl).searchParams.get('secret')!;
    server.clock.advance(STEP_MS);
    assert.equal((await c.post('/current-identity/mfa/verify', { code: await totp() })).status, 200);
    assert.equal((await admin.get(`/identities/${user.id}`)).body.data.isMfaEnabled, true);

    ok(
      await edgectl(adminCfg, 'login', server.url, '-u', ADMIN.username, '-p', ADMIN.password, '--ca', caFile),
      'admin login',
    );
    const removed = await edgectl(adminCfg, 'identity', 'mfa-remove', user.username);
    ok(removed, 'identity mfa-remove');
    assert.match(removed.stdout, new RegExp(`removed the MFA enrollment of identity ${user.id}`));
    assert.equal((await admin.get(`/identities/${user.id}`)).body.data.isMfaEnabled, false);
  });
});
