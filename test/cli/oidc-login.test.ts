/**
 * `edgectl login URL --oidc` against a real controller with a frozen clock and short token lifetimes (access 1 min,
 * refresh 2 min): the browserless PKCE flow with a password, with TOTP (`--totp`, and a clear error without a
 * code), with a client certificate; commands use the bearer and refresh it when the controller says it expired
 * (rotation: the replaced refresh token is refused); a refused refresh says to log in again; `logout` ends the
 * session. Subtests run in order.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN, createUser, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { unique } from '../harness/assert.js';
import { claimsOf, enrolledCertIdentity, enrollTotp, refreshRequest, TOTP_STEP_MS, totpCode } from '../harness/oidc.js';
import { edgectl, edgectlEnv, type Run } from '../harness/cli.js';

const ok = (r: Run, what: string) => assert.equal(r.code, 0, `${what}: exit ${r.code}\n${r.stderr}${r.stdout}`);
const STEP_MS = TOTP_STEP_MS;

describe('edgectl login --oidc', () => {
  let server: TestServer;
  let admin: ApiClient;
  let tmp: string;
  let caFile: string;
  const cfgOf = (name: string) => join(tmp, name);
  const saved = (cfg: string, context = 'default') =>
    JSON.parse(readFileSync(join(cfg, 'config.json'), 'utf8')).logins[context] as Record<string, any>;

  before(async () => {
    server = await startTestServer({
      clock: 'frozen',
      yaml: 'edge:\n  oidc:\n    accessTokenDuration: 1m\n    refreshTokenDuration: 2m\n',
    });
    admin = await server.admin();
    tmp = mkdtempSync(join(tmpdir(), 'edgectl-oidc-'));
    caFile = join(tmp, 'ca.pem');
    writeFileSync(caFile, server.ca);
  });
  after(async () => {
    await server?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  describe('a password login', () => {
    const cfg = () => cfgOf('admin');
    const cli = (...args: string[]) => edgectl(cfg(), ...args);

    it('saves the access and refresh tokens, no session token, and commands use the bearer', async () => {
      const login = await cli(
        'login',
        server.url,
        '--oidc',
        '-u',
        ADMIN.username,
        '-p',
        ADMIN.password,
        '--ca',
        caFile,
      );
      ok(login, 'login --oidc');
      assert.match(login.stdout, new RegExp(`logged in to ${server.url} as ${ADMIN.username} through OIDC`));
      const l = saved(cfg());
      assert.equal(l.token, '', 'no legacy session token');
      assert.equal(l.method, 'password');
      assert.equal(l.oidc.clientId, 'native');
      assert.equal(l.oidc.accessToken.split('.').length, 3);
      assert.equal(l.oidc.refreshToken.split('.').length, 3);
      const asid = JSON.parse(Buffer.from(l.oidc.accessToken.split('.')[1], 'base64url').toString()).z_asid;
      const who = await cli('whoami', '-o', 'json');
      ok(who, 'whoami');
      assert.equal(JSON.parse(who.stdout).data.isAdmin, true);
      // The session the commands use is the OIDC login's own.
      const session = await admin.get(`/api-sessions/${asid}`);
      assert.equal(session.status, 200, session.text);
      const list = await cli('context', 'list');
      ok(list, 'context list');
      assert.match(list.stdout, /password \(oidc\)/);
      assert.ok(!list.stdout.includes(l.oidc.accessToken), 'no token in the listing');
    });

    it('refreshes an expired access token transparently, saving the rotated pair; the replaced token is refused', async () => {
      const before = saved(cfg()).oidc;
      server.clock.advance(61_000);
      ok(await cli('identity', 'list'), 'identity list after the access token expired');
      const after = saved(cfg()).oidc;
      assert.notEqual(after.accessToken, before.accessToken);
      assert.notEqual(after.refreshToken, before.refreshToken);
      const reuse = await refreshRequest(server, before.refreshToken);
      assert.equal(reuse.status, 400);
      assert.equal(reuse.body.error, 'invalid_grant');
      ok(await cli('whoami'), 'whoami with the refreshed token');
    });

    it('a refused refresh ends with a clear message to log in again', async () => {
      server.clock.advance(3 * 60_000);
      const r = await cli('identity', 'list');
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /cannot be refreshed \(invalid_grant: refresh token expired\)/);
      assert.match(r.stderr, new RegExp(`edgectl login ${server.url} --oidc -u ${ADMIN.username}\` again`));
    });

    it('logout ends the session and revokes the refresh token', async () => {
      ok(await cli('login', server.url, '--oidc', '-u', ADMIN.username, '-p', ADMIN.password, '--ca', caFile), 'login');
      const l = saved(cfg()).oidc;
      const asid = claimsOf(l.accessToken).z_asid;
      const out = await cli('logout');
      ok(out, 'logout');
      assert.equal(out.stderr, '', 'no warning');
      admin = await server.admin();
      assert.equal((await admin.get(`/api-sessions/${asid}`)).status, 404, 'the session is gone');
      const refresh = await refreshRequest(server, l.refreshToken);
      assert.equal(refresh.status, 400);
      const who = await cli('whoami');
      assert.equal(who.code, 1);
      assert.match(who.stderr, /not logged in/);
    });
  });

  describe('with TOTP MFA', () => {
    let user: Awaited<ReturnType<typeof createUser>>;
    let secret: string;
    const cfg = () => cfgOf('mfa');
    const totp = () => totpCode(secret, server.clock);
    const login = (...extra: string[]) =>
      edgectl(cfg(), 'login', server.url, '--oidc', '-u', user.username, '-p', user.password, '--ca', caFile, ...extra);

    before(async () => {
      admin = await server.admin();
      user = await createUser(server, admin, { api: 'management' });
      ({ secret } = await enrollTotp(user.client, server.clock));
      server.clock.advance(STEP_MS);
    });

    it('without a code and without a terminal, it says how to give one', async () => {
      const r = await login();
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /pass --totp CODE or set EDGECTL_MFA_CODE/);
    });

    it('a wrong code is refused clearly, and nothing is saved', async () => {
      const r = await login('--totp', '000000');
      assert.equal(r.code, 1);
      assert.match(r.stderr, /the TOTP code was not accepted: INVALID TOTP CODE/);
      assert.throws(() => saved(cfg()));
    });

    it('--totp CODE completes the login, and the tokens say totp', async () => {
      ok(await login('--totp', await totp()), 'login --oidc --totp');
      const claims = claimsOf(saved(cfg()).oidc.accessToken);
      assert.deepEqual(claims.amr, ['password', 'totp']);
      ok(await edgectl(cfg(), 'client', 'services'), 'client services with the bearer');
    });

    it('$EDGECTL_MFA_CODE works too', async () => {
      server.clock.advance(STEP_MS);
      ok(
        await edgectlEnv(
          cfg(),
          { EDGECTL_MFA_CODE: await totp() },
          'login',
          server.url,
          '--oidc',
          '-u',
          user.username,
          '-p',
          user.password,
          '--ca',
          caFile,
        ),
        'login with $EDGECTL_MFA_CODE',
      );
    });
  });

  it('a certificate login names the identity and works with the bearer', async () => {
    admin = await server.admin();
    const name = unique('oidc-cli-cert');
    const enrolled = await enrolledCertIdentity(server, admin, { name });
    const certFile = join(tmp, 'c.pem');
    const keyFile = join(tmp, 'c.key');
    writeFileSync(certFile, enrolled.cert);
    writeFileSync(keyFile, enrolled.key, { mode: 0o600 });
    const cfg = cfgOf('cert');
    const r = await edgectl(cfg, 'login', server.url, '--oidc', '--cert', certFile, '--key', keyFile, '--ca', caFile);
    ok(r, 'login --oidc --cert');
    assert.match(r.stdout, new RegExp(`as ${name} through OIDC`));
    const claims = claimsOf(saved(cfg).oidc.accessToken);
    assert.deepEqual(claims.amr, ['cert']);
    ok(await edgectl(cfg, 'client', 'services'), 'client services');
  });

  it('--totp without --oidc is a usage error; --help shows --oidc with examples', async () => {
    const cfg = cfgOf('misc');
    const r = await edgectl(cfg, 'login', server.url, '-u', 'x', '-p', 'y', '--totp', '123456', '--ca', caFile);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--totp goes with --oidc/);
    const help = await edgectl(cfg, 'login', '--help');
    ok(help, 'login --help');
    assert.match(help.stdout, /--oidc/);
    assert.match(help.stdout, /\n {2}edgectl login \S+ --oidc -u admin/);
    assert.match(help.stdout, /--totp 123456/);
  });
});
