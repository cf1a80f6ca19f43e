/**
 * Enrollment and certificate login through the CLI against a real controller over real TLS: identity create with an
 * enrollment JWT → `edgectl enroll` → identity file → `edgectl login --identity` / `--cert --key` → admin commands over
 * mutual TLS → logout; enrollment records; updb enrollment then password login; a tampered JWT refused before anything
 * is sent; authenticator re-enroll and the CA commands when the controller serves them. Subtests run in order and build
 * on each other.
 */
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { edgectl, type Run } from '../harness/cli.js';
import {
  createSelfSignedCa,
  ExtendedKeyUsage,
  generateKeyPair,
  KeyUsage,
  privateKeyToPem,
} from '../../src/pki/index.js';

const mode = (file: string) => statSync(file).mode & 0o777;
const ok = (r: Run, what: string) => assert.equal(r.code, 0, `${what}: exit ${r.code}\n${r.stderr}${r.stdout}`);
const JWT_RE = /^eyJ[\w-]+\.[\w-]+\.[\w-]+$/m;

/** Replaces one claim of a JWT's payload, keeping its header and signature. */
function tamper(jwt: string, claims: Record<string, unknown>): string {
  const [h, p, s] = jwt.split('.');
  const payload = { ...JSON.parse(Buffer.from(p!, 'base64url').toString('utf8')), ...claims };
  return `${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${s}`;
}

describe('edgectl enroll and certificate login', () => {
  let server: TestServer;
  let admin: ApiClient;
  let tmp: string;
  let caFile: string;
  let cfgAdmin: string;
  const f = (name: string) => join(tmp, name);
  const asAdmin = (...args: string[]) => edgectl(cfgAdmin, ...args);

  before(async () => {
    server = await startTestServer();
    admin = await server.admin();
    tmp = mkdtempSync(join(tmpdir(), 'edgectl-enroll-'));
    caFile = f('ca.pem');
    writeFileSync(caFile, server.ca);
    cfgAdmin = f('cfg-admin');
    ok(await asAdmin('login', server.url, '-u', ADMIN.username, '-p', ADMIN.password, '--ca', caFile), 'admin login');
  });

  after(async () => {
    await server?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  let devJwt = '';
  let userJwt = '';

  it('creates identities with ott enrollments: the JWT goes to --jwt-out (0600) or is printed', async () => {
    const [dev, user, noEnrollment] = await Promise.all([
      asAdmin('identity', 'create', 'cli-dev', '--admin', '--ott', '--jwt-out', f('dev.jwt')),
      asAdmin('identity', 'create', 'cli-user', '--ott'),
      asAdmin('identity', 'create', 'cli-nothing', '--jwt-out', f('nothing.jwt')),
    ]);
    ok(dev, 'identity create --ott --jwt-out');
    assert.match(dev.stdout, /created identity \S+/);
    assert.match(dev.stdout, /wrote the ott enrollment JWT to .*dev\.jwt/);
    assert.equal(mode(f('dev.jwt')), 0o600, 'the JWT file is 0600');
    devJwt = readFileSync(f('dev.jwt'), 'utf8').trim();
    assert.match(devJwt, JWT_RE);

    ok(user, 'identity create --ott (printed)');
    userJwt = user.stdout.match(JWT_RE)?.[0] ?? '';
    assert.ok(userJwt, `a JWT is printed:\n${user.stdout}`);
    writeFileSync(f('user.jwt'), userJwt + '\n');

    assert.equal(noEnrollment.code, 2, '--jwt-out without an enrollment is a usage error');
    assert.match(noEnrollment.stderr, /--jwt-out needs an enrollment/);
    assert.equal(
      (await admin.get('/identities?filter=' + encodeURIComponent('name = "cli-nothing"'))).body.data.length,
      0,
      'nothing was created',
    );
  });

  it('refuses a tampered JWT with a clear message, exit 1, sending nothing (the token stays usable)', async () => {
    writeFileSync(f('tampered.jwt'), tamper(devJwt, { sub: 'someone-else' }));
    const r = await edgectl(f('cfg-none'), 'enroll', f('tampered.jwt'), '--out', f('tampered.json'));
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /^error: the enrollment JWT in .*tampered\.jwt does not verify against the server certificate of https:\/\/127\.0\.0\.1:\d+/,
    );
    assert.equal(existsSync(f('tampered.json')), false, 'no identity file is left behind');

    // A controller whose certificate the trusted CA bundle does not validate (as an impostor's would not).
    const pair = await generateKeyPair('ec-p256');
    const other = await createSelfSignedCa({
      subject: [{ CN: ['not the controller'] }],
      privateKey: pair.privateKey,
      notBefore: new Date(),
      notAfter: new Date(Date.now() + 3_600_000),
    });
    writeFileSync(f('other-ca.pem'), other.certPem);
    const m = await edgectl(f('cfg-none'), 'enroll', f('dev.jwt'), '--out', f('mitm.json'), '--ca', f('other-ca.pem'));
    assert.equal(m.code, 1, m.stderr);
    assert.match(
      m.stderr,
      /^error: the controller at https:\/\/127\.0\.0\.1:\d+ presents a certificate that the CA bundle from .*other-ca\.pem does not validate/,
    );
    assert.equal(existsSync(f('mitm.json')), false);

    writeFileSync(f('garbage.jwt'), 'not a jwt');
    const g = await edgectl(f('cfg-none'), 'enroll', f('garbage.jwt'), '--out', f('garbage.json'));
    assert.equal(g.code, 2);
    assert.match(g.stderr, /does not hold a JWT/);
  });

  it('enrolls with the ott JWT: key generated locally, identity file 0600 with ztAPI and pem: key, cert, ca', async () => {
    const r = await edgectl(f('cfg-none'), 'enroll', f('dev.jwt'), '--out', f('dev.json'));
    ok(r, 'enroll');
    assert.match(r.stdout, /enrolled identity \S+ at https:\/\/127\.0\.0\.1:\d+: identity file .*dev\.json/);
    assert.match(r.stdout, /edgectl login --identity/);
    assert.equal(mode(f('dev.json')), 0o600, 'the identity file is 0600');
    const id = JSON.parse(readFileSync(f('dev.json'), 'utf8'));
    assert.equal(id.ztAPI, server.url);
    assert.match(id.id.key, /^pem:-----BEGIN PRIVATE KEY-----/);
    assert.match(id.id.cert, /^pem:-----BEGIN CERTIFICATE-----/);
    assert.match(id.id.ca, /^pem:-----BEGIN CERTIFICATE-----/);
    const cert = new X509Certificate(id.id.cert.slice(4));
    assert.ok(cert.checkPrivateKey(createPrivateKey(id.id.key.slice(4))), 'the certificate is for the generated key');
    assert.equal(createPrivateKey(id.id.key.slice(4)).asymmetricKeyType, 'ec', 'ec-p256 by default');

    const [again, exists] = await Promise.all([
      edgectl(f('cfg-none'), 'enroll', f('dev.jwt'), '--out', f('dev-again.json')),
      edgectl(f('cfg-none'), 'enroll', f('user.jwt'), '--out', f('dev.json')),
    ]);
    assert.equal(again.code, 1, 'a used token');
    assert.match(again.stderr, /^error: INVALID_ENROLLMENT_TOKEN: /);
    assert.equal(existsSync(f('dev-again.json')), false);
    assert.equal(exists.code, 2, 'an existing identity file is never replaced');
    assert.match(exists.stderr, /already exists/);
  });

  it('enrolls with an RSA key on request', async () => {
    ok(
      await edgectl(
        f('cfg-none'),
        'enroll',
        f('user.jwt'),
        '--out',
        f('user.json'),
        '--key-type',
        'rsa-2048',
        '--ca',
        caFile,
      ),
      'enroll --key-type rsa-2048 --ca',
    );
    const id = JSON.parse(readFileSync(f('user.json'), 'utf8'));
    assert.equal(createPrivateKey(id.id.key.slice(4)).asymmetricKeyType, 'rsa');
  });

  it('logs in with --identity; a non-admin identity is refused admin commands (UNAUTHORIZED, exit 1)', async () => {
    const cfg = f('cfg-user');
    const login = await edgectl(cfg, 'login', '--identity', f('user.json'));
    ok(login, 'login --identity (user)');
    assert.match(login.stdout, /logged in to https:\/\/127\.0\.0\.1:\d+ as cli-user with a client certificate/);
    const list = await edgectl(cfg, 'identity', 'list');
    assert.equal(list.code, 1);
    assert.match(list.stderr, /^error: UNAUTHORIZED: /);
  });

  it('logs in with --identity as an admin identity, saves the session 0600 and works over mutual TLS, then logs out', async () => {
    const cfg = f('cfg-dev');
    const login = await edgectl(cfg, 'login', '--identity', f('dev.json'));
    ok(login, 'login --identity (admin)');
    const file = join(cfg, 'config.json');
    assert.equal(mode(file), 0o600);
    const saved = JSON.parse(readFileSync(file, 'utf8')).logins.default;
    assert.equal(saved.method, 'cert');
    assert.equal(saved.url, server.url);
    assert.equal(saved.identityFile, f('dev.json'));
    assert.match(saved.caCert, /BEGIN CERTIFICATE/, "the identity file's CA is trusted");

    const list = await edgectl(cfg, 'identity', 'list', 'name = "cli-dev"');
    ok(list, 'identity list as the enrolled admin');
    assert.match(list.stdout, /cli-dev/);

    // Every command presents the certificate again: without the identity file the session is not used.
    renameSync(f('dev.json'), f('dev.moved.json'));
    const missing = await edgectl(cfg, 'identity', 'list');
    renameSync(f('dev.moved.json'), f('dev.json'));
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /cannot read identity file .*dev\.json/);

    const out = await edgectl(cfg, 'logout');
    ok(out, 'logout');
    assert.equal(existsSync(file), false);
    const res = await server.client('management').withToken(saved.token).get('/current-api-session');
    assert.equal(res.status, 401, 'the session ended on the server');
  });

  it("logs in with --cert and --key (and refuses a key that is not the certificate's)", async () => {
    const id = JSON.parse(readFileSync(f('dev.json'), 'utf8'));
    const other = JSON.parse(readFileSync(f('user.json'), 'utf8'));
    writeFileSync(f('dev.cert.pem'), id.id.cert.slice(4));
    writeFileSync(f('dev.key.pem'), id.id.key.slice(4), { mode: 0o600 });
    writeFileSync(f('user.key.pem'), other.id.key.slice(4), { mode: 0o600 });
    const cfg = f('cfg-cert');
    const [login, mismatch] = await Promise.all([
      edgectl(cfg, 'login', server.url, '--cert', f('dev.cert.pem'), '--key', f('dev.key.pem'), '--ca', caFile),
      edgectl(
        f('cfg-mismatch'),
        'login',
        server.url,
        '--cert',
        f('dev.cert.pem'),
        '--key',
        f('user.key.pem'),
        '--ca',
        caFile,
      ),
    ]);
    ok(login, 'login --cert --key');
    assert.match(login.stdout, /as cli-dev with a client certificate/);
    ok(await edgectl(cfg, 'identity', 'show', 'cli-dev'), 'identity show after a --cert login');
    assert.equal(mismatch.code, 2);
    assert.match(mismatch.stderr, /does not belong to the certificate/);
  });

  let enrollmentId = '';

  it('creates, lists, shows, refreshes and deletes enrollments', async () => {
    ok(await asAdmin('identity', 'create', 'cli-enr'), 'identity create');
    const [created, noUser] = await Promise.all([
      asAdmin(
        'enrollment',
        'create',
        'cli-enr',
        '--method',
        'ott',
        '--duration-minutes',
        '10',
        '--jwt-out',
        f('enr.jwt'),
      ),
      asAdmin('enrollment', 'create', 'cli-enr', '--method', 'updb'),
    ]);
    ok(created, 'enrollment create');
    enrollmentId = created.stdout.match(/created enrollment (\S+)/)?.[1] ?? '';
    assert.ok(enrollmentId, created.stdout);
    assert.equal(mode(f('enr.jwt')), 0o600);
    const firstJwt = readFileSync(f('enr.jwt'), 'utf8').trim();
    assert.match(firstJwt, JWT_RE);
    assert.equal(noUser.code, 2);
    assert.match(noUser.stderr, /--method updb needs --username/);

    const [list, shown] = await Promise.all([
      asAdmin('enrollment', 'list', 'method = "ott"'),
      asAdmin('enrollment', 'show', enrollmentId, '-j'),
    ]);
    ok(list, 'enrollment list');
    assert.match(list.stdout, new RegExp(`│ ${enrollmentId} +│ ott +│ cli-enr +│`));
    const before = JSON.parse(shown.stdout).data;
    const minutesLeft = (Date.parse(before.expiresAt) - Date.now()) / 60_000;
    assert.ok(minutesLeft > 8 && minutesLeft <= 10, `expires in about 10 minutes (${minutesLeft})`);

    const refreshed = await asAdmin(
      'enrollment',
      'refresh',
      enrollmentId,
      '--duration-minutes',
      '120',
      '--jwt-out',
      f('enr.jwt'),
    );
    ok(refreshed, 'enrollment refresh');
    assert.match(refreshed.stdout, new RegExp(`refreshed enrollment ${enrollmentId}: expires `));
    const afterRefresh = JSON.parse((await asAdmin('enrollment', 'show', enrollmentId, '-j')).stdout).data;
    assert.ok(Date.parse(afterRefresh.expiresAt) - Date.now() > 110 * 60_000, 'the new expiry applies');
    assert.notEqual(readFileSync(f('enr.jwt'), 'utf8').trim(), firstJwt, 'the refreshed JWT was written');

    const del = await asAdmin('enrollment', 'delete', enrollmentId);
    ok(del, 'enrollment delete');
    const gone = await asAdmin('enrollment', 'show', enrollmentId);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /NOT_FOUND/);
  });

  it('enrolls with an updb JWT (password) and the password logs in', async () => {
    const c = await asAdmin('identity', 'create', 'cli-pw', '--updb', 'cli-pw-login', '--jwt-out', f('pw.jwt'));
    ok(c, 'identity create --updb');
    const [noPassword, withOut] = await Promise.all([
      edgectl(f('cfg-none'), 'enroll', f('pw.jwt')),
      edgectl(f('cfg-none'), 'enroll', f('pw.jwt'), '--out', f('pw.json'), '-p', 'x'),
    ]);
    assert.equal(noPassword.code, 2, 'no password and no terminal to ask');
    assert.match(noPassword.stderr, /-p PASSWORD is required/);
    assert.equal(withOut.code, 2, 'updb writes no identity file');

    const e = await edgectl(f('cfg-none'), 'enroll', f('pw.jwt'), '--password', 'Pw-Passw0rd!');
    ok(e, 'enroll updb');
    assert.match(e.stdout, /password set for cli-pw-login/);
    const login = await edgectl(
      f('cfg-pw'),
      'login',
      server.url,
      '-u',
      'cli-pw-login',
      '-p',
      'Pw-Passw0rd!',
      '--ca',
      caFile,
    );
    ok(login, 'password login after updb enrollment');
  });

  it('re-enrolls a certificate authenticator (when the controller serves re-enroll)', async (t) => {
    const auths = await admin.get('/authenticators?filter=' + encodeURIComponent('method = "cert"') + '&limit=100');
    const userAuth = auths.body.data.find((a: { identity?: { name?: string } }) => a.identity?.name === 'cli-user');
    assert.ok(userAuth, 'cli-user has a cert authenticator');
    if (!served(server, 'POST', '/edge/management/v1/authenticators/:id/re-enroll'))
      return t.skip('POST /authenticators/{id}/re-enroll is not served yet');
    const r = await asAdmin(
      'authenticator',
      're-enroll',
      userAuth.id,
      '--duration-minutes',
      '15',
      '--jwt-out',
      f('re.jwt'),
    );
    ok(r, 'authenticator re-enroll');
    assert.match(r.stdout, new RegExp(`re-enrolled authenticator ${userAuth.id}: it is replaced by enrollment \\S+`));
    assert.match(readFileSync(f('re.jwt'), 'utf8'), JWT_RE);
    // The JWT enrolls the identity again.
    ok(await edgectl(f('cfg-none'), 'enroll', f('re.jwt'), '--out', f('user2.json')), 'enroll with the re-enroll JWT');
  });

  it('manages third-party CAs: create, verify, jwt, list, delete (when the controller serves /cas)', async (t) => {
    if (!served(server, 'GET', '/edge/management/v1/cas')) return t.skip('/cas is not served yet');
    const HOUR = 3_600_000;
    const pair = await generateKeyPair('ec-p256');
    const ca = await createSelfSignedCa({
      subject: [{ CN: ['cli third party'] }],
      privateKey: pair.privateKey,
      notBefore: new Date(Date.now() - HOUR),
      notAfter: new Date(Date.now() + 24 * HOUR),
    });
    writeFileSync(f('tp-ca.pem'), ca.certPem);
    const c = await asAdmin('ca', 'create', 'cli-ca', f('tp-ca.pem'), '--auth', '--ottca', '-a', 'from-ca');
    ok(c, 'ca create');
    const token = c.stdout.match(/verification token: (\S+)/)?.[1];
    assert.ok(token, c.stdout);
    const shown = JSON.parse((await asAdmin('ca', 'show', 'cli-ca', '-j')).stdout).data;
    assert.equal(shown.isVerified, false);
    assert.equal(shown.isAuthEnabled, true);
    assert.equal(shown.isOttCaEnrollmentEnabled, true);
    assert.equal(shown.isAutoCaEnrollmentEnabled, false);
    assert.deepEqual(shown.identityRoles, ['from-ca']);

    const leafKey = await generateKeyPair('ec-p256');
    const verification = await ca.issue({
      subject: [{ CN: [token!] }],
      publicKey: leafKey.publicKey,
      notBefore: new Date(Date.now() - HOUR),
      notAfter: new Date(Date.now() + HOUR),
      isCA: false,
      keyUsage: KeyUsage.digitalSignature,
      extendedKeyUsage: [ExtendedKeyUsage.clientAuth],
    });
    writeFileSync(f('verify.pem'), verification.pem);
    ok(await asAdmin('ca', 'verify', 'cli-ca', '--cert', f('verify.pem')), 'ca verify');
    assert.equal(JSON.parse((await asAdmin('ca', 'show', 'cli-ca', '-j')).stdout).data.isVerified, true);

    // ottca: an identity created with --ottca CA-NAME enrolls with a certificate the CA issued, then logs in with it.
    ok(
      await asAdmin('identity', 'create', 'cli-ottca', '--admin', '--ottca', 'cli-ca', '--jwt-out', f('ottca.jwt')),
      'identity create --ottca NAME',
    );
    const clientKey = await generateKeyPair('ec-p256');
    const clientCert = await ca.issue({
      subject: [{ CN: ['cli-ottca'] }],
      publicKey: clientKey.publicKey,
      notBefore: new Date(Date.now() - HOUR),
      notAfter: new Date(Date.now() + HOUR),
      isCA: false,
      keyUsage: KeyUsage.digitalSignature | KeyUsage.keyAgreement,
      extendedKeyUsage: [ExtendedKeyUsage.clientAuth],
    });
    writeFileSync(f('ottca.cert.pem'), clientCert.pem);
    writeFileSync(f('ottca.key.pem'), privateKeyToPem(clientKey.privateKey), { mode: 0o600 });
    const e = await edgectl(
      f('cfg-none'),
      'enroll',
      f('ottca.jwt'),
      '--out',
      f('ottca.json'),
      '--cert',
      f('ottca.cert.pem'),
      '--key',
      f('ottca.key.pem'),
    );
    ok(e, 'enroll ottca');
    ok(await edgectl(f('cfg-ottca'), 'login', '--identity', f('ottca.json')), 'login with the CA-issued certificate');
    ok(await edgectl(f('cfg-ottca'), 'identity', 'show', 'cli-ottca'), 'admin command as the ottca identity');

    const [jwt, list] = await Promise.all([
      asAdmin('ca', 'jwt', 'cli-ca', '--out', f('ca.jwt')),
      asAdmin('ca', 'list'),
    ]);
    ok(jwt, 'ca jwt');
    assert.equal(mode(f('ca.jwt')), 0o600);
    assert.match(readFileSync(f('ca.jwt'), 'utf8').trim(), JWT_RE);
    ok(list, 'ca list');
    assert.match(list.stdout, /│ cli-ca +│ true +│ true +│ false +│ true +│ from-ca/);

    ok(await asAdmin('ca', 'delete', 'cli-ca'), 'ca delete');
    assert.equal((await asAdmin('ca', 'show', 'cli-ca')).code, 1);
    const refused = await edgectl(f('cfg-ottca-again'), 'login', '--identity', f('ottca.json'));
    assert.equal(refused.code, 1, 'the CA is gone, and the authenticators it vouched for with it');
    assert.match(refused.stderr, /^error: INVALID_AUTH: /);
  });
});

/** Whether the controller serves a route (features other engineers are adding may not be there yet). */
function served(server: TestServer, method: 'GET' | 'POST', url: string): boolean {
  return server.daemon.app.hasRoute({ method, url });
}
