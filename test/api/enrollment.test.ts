/**
 * Enrollment and certificate authentication through a real controller over real TLS: enrollment records
 * (CRUD, one per method, refresh, identity create), the enroll endpoints (ott with PEM and JSON shapes, updb,
 * legacy dispatch, token errors, failed attempts that leave the token usable), certificate authentication
 * with mutual TLS, and cert authenticators created by an admin.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import tls from 'node:tls';
import { createIdentity, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { checkResponse } from '../harness/schemas.js';
import { assertError, unique } from '../harness/assert.js';
import {
  createSelfSignedCa,
  generateKeyAndCsr,
  generateKeyPair,
  parseCertificates,
  signClientCsr,
  spiffeId,
  verifyChain,
  verifyEnrollmentJwt,
  type KeyAndCsr,
} from '../../src/pki/index.js';
import { authPolicyBody } from '../harness/bodies.js';
import { assertSansRefused, assertSizeRefused, csrWithHosts, csrWithJunkSans, oversizedCsr } from '../harness/csrs.js';

let server: TestServer;
let admin: ApiClient;

before(async () => {
  server = await startTestServer();
  admin = await server.admin();
});
after(() => server.close());

const clientPath = (path: string) => `/edge/client/v1${path}`;
const mgmtPath = (path: string) => `/edge/management/v1${path}`;
const inFuture = (ms: number) => new Date(Date.now() + ms).toISOString();

/** POST /enroll/ott the 0.25.6 way: token in the query, the CSR as a raw PEM body, PEM answer. */
const enrollOttPem = (token: string, csrPem: string, contentType = 'application/pkcs10', on: TestServer = server) =>
  on.request('POST', `/edge/client/v1/enroll/ott?token=${encodeURIComponent(token)}`, {
    raw: csrPem,
    contentType,
    headers: { accept: 'application/x-x509-user-cert' },
  });

/** POST /authenticate?method=cert over mutual TLS with `cert` (PEM chain) and `key`. */
const certLogin = (
  cert: string,
  key: string,
  api: 'client' | 'management' = 'client',
  opts: { json?: boolean; on?: TestServer } = {},
) =>
  (opts.on ?? server).request('POST', `/edge/${api}/v1/authenticate?method=cert`, {
    cert,
    key,
    ...(opts.json ? { contentType: 'application/json' } : {}),
  });

/** Creates an identity with an `ott` enrollment and returns its id and the enrollment from its detail. */
async function identityWithOtt(extra: Record<string, unknown> = {}) {
  const id = await createIdentity(admin, { enrollment: { ott: true }, ...extra });
  const detail = await admin.get(`/identities/${id}`);
  return {
    id,
    detail,
    ott: detail.body.data.enrollment.ott as { id: string; token: string; jwt: string; expiresAt: string },
  };
}

/** The controller's TLS server certificate, fetched over a connection that must verify against the CA bundle. */
function fetchServerCertificate(): Promise<Buffer> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: hostname, port: Number(port), ca: server.ca }, () => {
      const raw = socket.getPeerCertificate().raw;
      socket.end();
      resolve(raw);
    });
    socket.on('error', reject);
  });
}

const newCsr = (commonName = unique('enroll-test')): Promise<KeyAndCsr> => generateKeyAndCsr({ commonName });

describe('ott enrollment and certificate authentication', () => {
  test('identity create with ott → JWT → CSR → certificate → cert login → current identity', async () => {
    const { id, detail, ott } = await identityWithOtt();
    assert.deepEqual(checkResponse('management', '/identities/{id}', 'GET', 200, detail.body), []);
    assert.equal(typeof ott.id, 'string');
    assert.match(ott.token, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const expiresAt = Date.parse(ott.expiresAt);
    // Default identity enrollment duration: 180 minutes.
    assert.ok(Math.abs(expiresAt - (Date.now() + 180 * 60_000)) < 60_000, ott.expiresAt);

    // The JWT verifies with the certificate the controller serves TLS with, which chains to the CA bundle.
    const serverCert = await fetchServerCertificate();
    const claims = await verifyEnrollmentJwt(ott.jwt, serverCert);
    assert.equal(claims.em, 'ott');
    assert.equal(claims.iss, server.url);
    assert.equal(claims.sub, id);
    assert.equal(claims.jti, ott.token);
    assert.equal(claims.exp, Math.floor(expiresAt / 1000));

    const commonName = unique('enroll-test');
    const { privateKeyPem, csrPem } = await newCsr(commonName);
    const res = await enrollOttPem(claims.jti, csrPem);
    assert.equal(res.status, 200, res.text);
    assert.match(String(res.headers['content-type']), /^application\/x-x509-user-cert/);
    const chain = parseCertificates(res.text);
    assert.equal(chain.length, 2, 'leaf + intermediate');
    const leaf = chain[0]!;
    assert.ok(
      verifyChain(leaf, { trusted: parseCertificates(server.ca) }).ok,
      'the certificate chains to the CA bundle',
    );
    assert.ok(leaf.sans.uri.includes(spiffeId('edgectl', 'identity', id)), JSON.stringify(leaf.sans));
    assert.equal(leaf.commonName, commonName);

    // The enrollment is consumed and the cert authenticator exists.
    const enrolled = (await admin.get(`/identities/${id}`)).body.data;
    assert.deepEqual(enrolled.enrollment, {});
    assert.equal(enrolled.authenticators.cert.fingerprint, leaf.fingerprint);
    const auth = (await admin.get(`/authenticators/${enrolled.authenticators.cert.id}`)).body;
    assert.equal(auth.data.method, 'cert');
    assert.equal(auth.data.isIssuedByNetwork, true);
    assert.equal(auth.data.fingerprint, leaf.fingerprint);
    assert.deepEqual(checkResponse('management', '/authenticators/{id}', 'GET', 200, auth), []);
    assert.equal((await admin.get(`/enrollments/${ott.id}`)).status, 404);

    // Mutual TLS with the new certificate authenticates, on the Client API without a body ...
    const login = await certLogin(res.text, privateKeyPem);
    assert.equal(login.status, 200, login.text);
    assert.deepEqual(checkResponse('client', '/authenticate', 'POST', 200, login.body), []);
    assert.equal(login.body.data.identityId, id);
    assert.equal(login.body.data.authenticatorId, enrolled.authenticators.cert.id);
    assert.equal(login.headers['zt-session'], login.body.data.token);
    const me = await server.client('client').withToken(login.body.data.token).get('/current-identity');
    assert.equal(me.status, 200);
    assert.equal(me.body.data.id, id);

    // ... and on the Management API with a JSON content type and an empty body.
    const mgmt = await certLogin(res.text, privateKeyPem, 'management', { json: true });
    assert.equal(mgmt.status, 200, mgmt.text);
    assert.equal(mgmt.body.data.identityId, id);

    // The token is single use.
    const again = await newCsr();
    assertError(await enrollOttPem(ott.token, again.csrPem), 400, 'INVALID_ENROLLMENT_TOKEN');
  });

  test('the JSON shape: token and clientCsr in the body, {data:{cert, ca}} when JSON is accepted', async () => {
    const { id, ott } = await identityWithOtt();
    const { privateKeyPem, csrPem } = await newCsr();
    const res = await server.request('POST', clientPath('/enroll/ott'), {
      body: { token: ott.token, clientCsr: csrPem },
    });
    assert.equal(res.status, 200, res.text);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.equal(res.body.data.ca, server.ca);
    const [leaf] = parseCertificates(res.body.data.cert);
    assert.ok(leaf!.sans.uri.includes(spiffeId('edgectl', 'identity', id)));
    assert.deepEqual(res.body.meta, { apiVersion: '0.0.1', apiEnrollmentVersion: '0.0.1' });
    assert.equal((await certLogin(res.body.data.cert, privateKeyPem)).status, 200);
  });

  test('the legacy /enroll dispatches by the token and answers PEM', async () => {
    const { ott } = await identityWithOtt();
    const { privateKeyPem, csrPem } = await newCsr();
    const wrong = await server.request('POST', clientPath(`/enroll?method=updb&token=${ott.token}`), {
      raw: csrPem,
      contentType: 'application/x-pem-file',
    });
    assertError(wrong, 400, 'INVALID_ENROLL_METHOD');
    const res = await server.request('POST', clientPath(`/enroll?method=ott&token=${ott.token}`), {
      raw: csrPem,
      contentType: 'text/plain',
      headers: { accept: '*/*' },
    });
    assert.equal(res.status, 200, res.text);
    assert.match(String(res.headers['content-type']), /^application\/x-pem-file/);
    assert.equal((await certLogin(res.text, privateKeyPem)).status, 200);
  });

  test('a bad or missing CSR fails, creates no authenticator and leaves the token usable', async () => {
    const { id, ott } = await identityWithOtt();
    const { csrPem } = await newCsr();
    // Not PEM at all.
    assertError(await enrollOttPem(ott.token, 'this is not a CSR'), 400, 'COULD_NOT_PROCESS_CSR');
    // A CSR whose signature does not verify (one byte of the signature flipped).
    const lines = csrPem.trim().split('\n');
    const body = Buffer.from(lines.slice(1, -1).join(''), 'base64');
    body.writeUInt8(body.readUInt8(body.length - 3) ^ 0xff, body.length - 3);
    const tampered = `${lines[0]}\n${body.toString('base64').replace(/(.{64})/g, '$1\n')}\n${lines.at(-1)}\n`;
    assertError(await enrollOttPem(ott.token, tampered), 400, 'COULD_NOT_PROCESS_CSR');
    // A certificate where a CSR belongs.
    assertError(await enrollOttPem(ott.token, server.ca), 400, 'COULD_NOT_PROCESS_CSR');
    // No CSR at all.
    assertError(
      await server.request('POST', clientPath('/enroll/ott'), { body: { token: ott.token } }),
      400,
      'MISSING_OR_INVALID_CSR',
    );

    const d = (await admin.get(`/identities/${id}`)).body.data;
    assert.deepEqual(d.authenticators, {});
    assert.equal(d.enrollment.ott.token, ott.token);
    const good = await enrollOttPem(ott.token, csrPem, 'application/x-pem-file');
    assert.equal(good.status, 200, good.text);
  });

  test('CSRs beyond 32 KiB or 100 SANs are refused naming the bound; junk SANs are left out of the certificate', async () => {
    const { id, ott } = await identityWithOtt();
    assertSizeRefused(await enrollOttPem(ott.token, (await oversizedCsr('big')).csrPem));
    assertSansRefused(await enrollOttPem(ott.token, (await csrWithHosts('many')).csrPem));
    const json = await server.request('POST', clientPath('/enroll/ott'), {
      body: { token: ott.token, clientCsr: (await csrWithHosts('many-json')).csrPem },
    });
    assertSansRefused(json);
    assert.deepEqual((await admin.get(`/identities/${id}`)).body.data.authenticators, {}, 'nothing created');

    const junk = await csrWithJunkSans(unique('junk'));
    const res = await enrollOttPem(ott.token, junk.csrPem);
    assert.equal(res.status, 200, res.text);
    const [leaf] = parseCertificates(res.text);
    assert.deepEqual(leaf!.sans, { dns: [], ip: [], uri: [spiffeId('edgectl', 'identity', id)], email: [] });
  });

  test('unknown, malformed and wrong-method tokens', async () => {
    const { csrPem } = await newCsr();
    assertError(await enrollOttPem('9b2f3c1e-0000-4000-8000-000000000000', csrPem), 400, 'INVALID_ENROLLMENT_TOKEN');
    assertError(await enrollOttPem('not-a-token', csrPem), 400, 'INVALID_ENROLLMENT_TOKEN');
    assertError(
      await server.request('POST', clientPath('/enroll/ott'), { raw: csrPem, contentType: 'application/pkcs10' }),
      400,
      'COULD_NOT_VALIDATE',
      'token',
    );
    const id = await createIdentity(admin, { enrollment: { updb: unique('wrongm') } });
    const updb = (await admin.get(`/identities/${id}`)).body.data.enrollment.updb;
    assertError(await enrollOttPem(updb.token, csrPem), 400, 'INVALID_ENROLL_METHOD');
  });

  test('an expired token is refused until the enrollment is refreshed', async (t) => {
    // Its own controller with a frozen clock: the expiry happens when the test moves the clock.
    const own = await startTestServer({ clock: 'frozen' });
    t.after(() => own.close());
    const ownAdmin = await own.admin();
    const id = await createIdentity(ownAdmin);
    const created = await ownAdmin.post('/enrollments', {
      identityId: id,
      method: 'ott',
      expiresAt: own.clock.in(1000),
    });
    assert.equal(created.status, 201, created.text);
    const enrollment = (await ownAdmin.get(`/enrollments/${created.body.data.id}`)).body.data;
    const { privateKeyPem, csrPem } = await newCsr();
    own.clock.advance(1001);
    assertError(await enrollOttPem(enrollment.token, csrPem, undefined, own), 400, 'ENROLLMENT_EXPIRED');
    assert.equal(
      (await ownAdmin.post(`/enrollments/${enrollment.id}/refresh`, { expiresAt: own.clock.in(60_000) })).status,
      200,
    );
    const res = await enrollOttPem(enrollment.token, csrPem, undefined, own);
    assert.equal(res.status, 200, res.text);
    assert.equal((await certLogin(res.text, privateKeyPem, 'client', { on: own })).status, 200);
  });
});

describe('updb enrollment', () => {
  test('identity create with updb → enroll a password → password login; the token is single use', async () => {
    const username = unique('updb-user');
    const id = await createIdentity(admin, { enrollment: { updb: username } });
    const d = (await admin.get(`/identities/${id}`)).body;
    assert.deepEqual(checkResponse('management', '/identities/{id}', 'GET', 200, d), []);
    const updb = d.data.enrollment.updb;
    const claims = await verifyEnrollmentJwt(updb.jwt, await fetchServerCertificate());
    assert.equal(claims.em, 'updb');
    assert.equal(claims.jti, updb.token);

    const res = await server.request('POST', clientPath(`/enroll/updb?token=${updb.token}`), {
      body: { username: 'ignored-name', password: 'enrolled-Passw0rd' },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.data.username, username);
    const c = server.client('client');
    assert.equal((await c.login(username, 'enrolled-Passw0rd')).status, 200);
    assert.equal((await c.get('/current-identity')).body.data.id, id);
    const enrolled = (await admin.get(`/identities/${id}`)).body.data;
    assert.equal(enrolled.authenticators.updb.username, username);
    assert.deepEqual(enrolled.enrollment, {});
    assertError(
      await server.request('POST', clientPath(`/enroll/updb?token=${updb.token}`), {
        body: { password: 'another-Passw0rd' },
      }),
      400,
      'INVALID_ENROLLMENT_TOKEN',
    );
  });

  test("the password must satisfy the identity's auth policy; a refused password leaves the token usable", async () => {
    const policy = await admin.post(
      '/auth-policies',
      authPolicyBody(unique('strict-enroll'), {
        minPasswordLength: 12,
        requireMixedCase: true,
        requireNumberChar: true,
      }),
    );
    assert.equal(policy.status, 201, policy.text);
    const username = unique('strict-user');
    const id = await createIdentity(admin, { authPolicyId: policy.body.data.id, enrollment: { updb: username } });
    const token = (await admin.get(`/identities/${id}`)).body.data.enrollment.updb.token;
    const url = clientPath(`/enroll/updb?token=${token}`);
    assertError(
      await server.request('POST', url, { body: { password: 'short1A' } }),
      400,
      'COULD_NOT_VALIDATE',
      'password',
    );
    assertError(
      await server.request('POST', url, { body: { password: 'longbutnodigitsorcase' } }),
      400,
      'COULD_NOT_VALIDATE',
      'password',
    );
    assert.deepEqual((await admin.get(`/identities/${id}`)).body.data.authenticators, {});
    // Through the legacy endpoint this time.
    const ok = await server.request('POST', clientPath(`/enroll?token=${token}`), {
      body: { password: 'Long-enough-Passw0rd' },
    });
    assert.equal(ok.status, 200, ok.text);
    assert.equal((await server.client('client').login(username, 'Long-enough-Passw0rd')).status, 200);
  });
});

describe('enrollment records', () => {
  test('create, detail, list, identity enrollments and delete, with reference schemas', async () => {
    const id = await createIdentity(admin);
    const expiresAt = inFuture(30 * 60_000);
    const created = await admin.post('/enrollments', { identityId: id, method: 'ott', expiresAt });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(checkResponse('management', '/enrollments', 'POST', 201, created.body), []);
    const eid = created.body.data.id;
    assert.equal(created.body.data._links.self.href, `./enrollments/${eid}`);

    const detail = await admin.get(`/enrollments/${eid}`);
    assert.equal(detail.status, 200);
    assert.deepEqual(checkResponse('management', '/enrollments/{id}', 'GET', 200, detail.body), []);
    const e = detail.body.data;
    assert.equal(e.method, 'ott');
    assert.equal(e.identityId, id);
    assert.equal(e.identity.id, id);
    assert.equal(e.identity.entity, 'identities');
    assert.equal(e.expiresAt, expiresAt);
    assert.equal(e.caId, null);
    assert.equal('username' in e, false);
    const claims = await verifyEnrollmentJwt(e.jwt, await fetchServerCertificate());
    assert.deepEqual([claims.em, claims.sub, claims.jti], ['ott', id, e.token]);

    const list = await admin.get(`/enrollments?filter=${encodeURIComponent(`identity = "${id}"`)}`);
    assert.equal(list.status, 200);
    assert.deepEqual(checkResponse('management', '/enrollments', 'GET', 200, list.body), []);
    assert.deepEqual(
      list.body.data.map((x: { id: string }) => x.id),
      [eid],
    );
    for (const field of ['token', 'identity', 'method', 'expiresAt'])
      assert.ok(list.body.meta.filterableFields.includes(field), field);
    const byToken = await admin.get(`/enrollments?filter=${encodeURIComponent(`token = "${e.token}"`)}`);
    assert.equal(byToken.body.meta.pagination.totalCount, 1);

    const ofIdentity = await admin.get(`/identities/${id}/enrollments`);
    assert.equal(ofIdentity.status, 200);
    assert.deepEqual(checkResponse('management', '/identities/{id}/enrollments', 'GET', 200, ofIdentity.body), []);
    assert.deepEqual(
      ofIdentity.body.data.map((x: { id: string }) => x.id),
      [eid],
    );
    assertError(await admin.get('/identities/no-such-identity/enrollments'), 404, 'NOT_FOUND');

    const updbName = unique('rec-user');
    const updb = await admin.post('/enrollments', { identityId: id, method: 'updb', username: updbName, expiresAt });
    assert.equal(updb.status, 201, updb.text);
    assert.equal((await admin.get(`/enrollments/${updb.body.data.id}`)).body.data.username, updbName);
    const summary = (await admin.get(`/identities/${id}`)).body.data.enrollment;
    assert.deepEqual(Object.keys(summary).sort(), ['ott', 'updb']);
    assert.deepEqual(Object.keys(summary.ott).sort(), ['expiresAt', 'id', 'jwt', 'token']);

    const del = await admin.delete(`/enrollments/${eid}`);
    assert.equal(del.status, 200);
    assertError(await admin.get(`/enrollments/${eid}`), 404, 'NOT_FOUND');
    assert.deepEqual(Object.keys((await admin.get(`/identities/${id}`)).body.data.enrollment), ['updb']);

    // Deleting the identity removes its enrollments.
    assert.equal((await admin.delete(`/identities/${id}`)).status, 200);
    assertError(await admin.get(`/enrollments/${updb.body.data.id}`), 404, 'NOT_FOUND');
  });

  test('one outstanding enrollment per method per identity: 409 ENROLLMENT_EXISTS naming the method', async () => {
    const { id } = await identityWithOtt();
    const res = await admin.post('/enrollments', { identityId: id, method: 'ott', expiresAt: inFuture(60_000) });
    assertError(res, 409, 'ENROLLMENT_EXISTS', 'method');
    assert.equal((await admin.get(`/identities/${id}/enrollments`)).body.data.length, 1);
  });

  test('invalid creates are refused with the failing field', async () => {
    const id = await createIdentity(admin);
    const taken = unique('taken-user');
    await createIdentity(admin, { enrollment: { updb: taken } });
    const cases: [Record<string, unknown>, string][] = [
      [{ method: 'magic' }, 'method'],
      [{ expiresAt: new Date(Date.now() - 60_000).toISOString() }, 'expiresAt'],
      [{ expiresAt: 'tomorrow-ish' }, 'expiresAt'],
      [{ identityId: 'no-such-identity' }, 'identityId'],
      [{ method: 'updb' }, 'username'],
      [{ method: 'updb', username: 'abc' }, 'username'],
      [{ method: 'updb', username: taken }, 'username'],
      [{ method: 'updb', username: 'admin' }, 'username'],
      [{ method: 'ottca', caId: 'no-such-ca' }, 'caId'],
    ];
    for (const [extra, field] of cases) {
      const res = await admin.post('/enrollments', {
        identityId: id,
        method: 'ott',
        expiresAt: inFuture(60_000),
        ...extra,
      });
      assertError(res, 400, 'COULD_NOT_VALIDATE', field);
    }
    assertError(
      await admin.post('/enrollments', { identityId: id, method: 'ott' }),
      400,
      'COULD_NOT_VALIDATE',
      'expiresAt',
    );
    assert.equal((await admin.get(`/identities/${id}/enrollments`)).body.data.length, 0);
  });

  test('an identity create whose enrollment is refused creates nothing', async () => {
    const name = unique('refused-enroll');
    const res = await admin.post('/identities', { name, type: 'User', isAdmin: false, enrollment: { updb: 'ab' } });
    assertError(res, 400, 'COULD_NOT_VALIDATE', 'enrollment.updb');
    assert.equal(
      (await admin.get(`/identities?filter=${encodeURIComponent(`name = "${name}"`)}`)).body.meta.pagination.totalCount,
      0,
    );
  });

  test('an enrollment for a method whose authenticator exists is refused', async () => {
    const username = unique('has-updb');
    const id = await createIdentity(admin);
    assert.equal(
      (await admin.post('/authenticators', { identityId: id, method: 'updb', username, password: 'some-Passw0rd' }))
        .status,
      201,
    );
    const res = await admin.post('/enrollments', {
      identityId: id,
      method: 'updb',
      username: unique('other'),
      expiresAt: inFuture(60_000),
    });
    assertError(res, 409, 'MAX_AUTHENTICATOR_METHODS_REACHED');
  });

  test('refresh sets a new expiry and JWT for the same token (200 createEnvelope)', async () => {
    const { ott } = await identityWithOtt();
    const expiresAt = inFuture(2 * 60 * 60_000);
    const res = await admin.post(`/enrollments/${ott.id}/refresh`, { expiresAt });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(checkResponse('management', '/enrollments/{id}/refresh', 'POST', 200, res.body), []);
    assert.equal(res.body.data.id, ott.id);
    assert.equal(res.body.data._links.self.href, `./enrollments/${ott.id}`);
    const e = (await admin.get(`/enrollments/${ott.id}`)).body.data;
    assert.equal(e.expiresAt, expiresAt);
    assert.notEqual(e.jwt, ott.jwt);
    assert.equal(e.token, ott.token);
    const claims = await verifyEnrollmentJwt(e.jwt, await fetchServerCertificate());
    assert.equal(claims.exp, Math.floor(Date.parse(expiresAt) / 1000));

    assertError(
      await admin.post(`/enrollments/${ott.id}/refresh`, { expiresAt: new Date(Date.now() - 1000).toISOString() }),
      400,
      'COULD_NOT_VALIDATE',
      'expiresAt',
    );
    assertError(await admin.post(`/enrollments/${ott.id}/refresh`, {}), 400, 'COULD_NOT_VALIDATE', 'expiresAt');
    assertError(await admin.post('/enrollments/no-such-enrollment/refresh', { expiresAt }), 404, 'NOT_FOUND');
  });

  test('enrollment management needs an admin session', async () => {
    const anon = await server.request('GET', mgmtPath('/enrollments'));
    assertError(anon, 401, 'UNAUTHORIZED');
  });
});

describe('cert authenticators from the admin API and certificate authentication', () => {
  test('a certificate signed by the controller is accepted once and then authenticates', async () => {
    const id = await createIdentity(admin);
    const { privateKeyPem, csrPem } = await newCsr();
    const issued = await server.daemon.pki.signClientCsr(csrPem, { id });
    const res = await admin.post('/authenticators', { identityId: id, method: 'cert', certPem: issued.certPem });
    assert.equal(res.status, 201, res.text);
    const auth = (await admin.get(`/authenticators/${res.body.data.id}`)).body.data;
    assert.equal(auth.fingerprint, issued.fingerprint);
    assert.equal(auth.isIssuedByNetwork, true);

    const login = await certLogin(issued.chainPem, privateKeyPem);
    assert.equal(login.status, 200, login.text);
    assert.equal(login.body.data.identityId, id);
    // A client that sends only its leaf still verifies (the chain completes with the controller's intermediate).
    const leafOnly = await certLogin(issued.certPem, privateKeyPem);
    assert.equal(leafOnly.status, 200, leafOnly.text);

    // The same certificate for another identity is in use.
    const other = await createIdentity(admin);
    assertError(
      await admin.post('/authenticators', { identityId: other, method: 'cert', certPem: issued.certPem }),
      409,
      'CERT_IN_USE',
    );
  });

  test('PEMs that are not exactly one certificate, or not from a trusted CA, are refused', async () => {
    const id = await createIdentity(admin);
    const { csrPem } = await newCsr();
    const issued = await server.daemon.pki.signClientCsr(csrPem, { id });
    const post = (certPem: unknown) => admin.post('/authenticators', { identityId: id, method: 'cert', certPem });
    assertError(await post(issued.chainPem), 400, 'INVALID_CERT_PEM');
    assertError(await post('not a certificate'), 400, 'INVALID_CERT_PEM');
    assertError(await post(csrPem), 400, 'INVALID_CERT_PEM');
    assertError(await post(undefined), 400, 'INVALID_AUTHENTICATOR_PROPERTIES');

    const foreign = await foreignCertificate(id);
    assertError(await post(foreign.certPem), 400, 'CERT_FAILED_VALIDATION');
    assertError(await post(foreign.caPem), 400, 'CERT_FAILED_VALIDATION');
    assert.deepEqual((await admin.get(`/identities/${id}`)).body.data.authenticators, {});
  });

  test('unknown, foreign and missing certificates are 401 INVALID_AUTH', async () => {
    const id = await createIdentity(admin);
    // Signed by the controller but registered nowhere.
    const { privateKeyPem, csrPem } = await newCsr();
    const unregistered = await server.daemon.pki.signClientCsr(csrPem, { id });
    assertError(await certLogin(unregistered.chainPem, privateKeyPem), 401, 'INVALID_AUTH');
    // From a CA the controller does not know, and self-signed.
    const foreign = await foreignCertificate(id);
    assertError(await certLogin(foreign.certPem, foreign.keyPem), 401, 'INVALID_AUTH');
    assertError(await certLogin(foreign.caPem, foreign.caKeyPem), 401, 'INVALID_AUTH');
    // No certificate at all.
    assertError(await server.request('POST', clientPath('/authenticate?method=cert')), 401, 'INVALID_AUTH');
  });

  test('disabled identities, auth policies without cert and expired certificates under strict policies fail', async () => {
    const { id, ott } = await identityWithOtt();
    const { privateKeyPem, csrPem } = await newCsr();
    const enrolled = await enrollOttPem(ott.token, csrPem);
    assert.equal(enrolled.status, 200);
    assert.equal((await certLogin(enrolled.text, privateKeyPem)).status, 200);

    assert.equal((await admin.post(`/identities/${id}/disable`, { durationMinutes: 0 })).status, 200);
    assertError(await certLogin(enrolled.text, privateKeyPem), 401, 'INVALID_AUTH');
    assert.equal((await admin.post(`/identities/${id}/enable`)).status, 200);
    assert.equal((await certLogin(enrolled.text, privateKeyPem)).status, 200);

    const noCert = await admin.post(
      '/auth-policies',
      authPolicyBody(unique('no-cert'), {}, { cert: { allowed: false } }),
    );
    assert.equal((await admin.patch(`/identities/${id}`, { authPolicyId: noCert.body.data.id })).status, 200);
    assertError(await certLogin(enrolled.text, privateKeyPem), 401, 'INVALID_AUTH');

    // An expired certificate: accepted while the policy allows expired certificates, refused once it does not.
    const expiredId = await createIdentity(admin);
    const expiredKey = await newCsr();
    const expired = await server.daemon.pki.signClientCsr(expiredKey.csrPem, {
      id: expiredId,
      now: new Date(Date.now() - 3_600_000),
      validityMs: 60_000,
    });
    assert.ok(expired.notAfter.getTime() < Date.now());
    assert.equal(
      (await admin.post('/authenticators', { identityId: expiredId, method: 'cert', certPem: expired.certPem })).status,
      201,
    );
    assert.equal(
      (await certLogin(expired.chainPem, expiredKey.privateKeyPem)).status,
      200,
      'default policy allows expired certificates',
    );
    const strict = await admin.post(
      '/auth-policies',
      authPolicyBody(unique('strict-cert'), {}, { cert: { allowExpiredCerts: false } }),
    );
    assert.equal((await admin.patch(`/identities/${expiredId}`, { authPolicyId: strict.body.data.id })).status, 200);
    assertError(await certLogin(expired.chainPem, expiredKey.privateKeyPem), 401, 'INVALID_AUTH');
  });
});

/** A client certificate (and its self-signed CA) from a PKI the controller has never seen. */
async function foreignCertificate(id: string) {
  const pair = await generateKeyPair('ec-p256');
  const ca = await createSelfSignedCa({
    subject: [{ CN: ['foreign test CA'] }],
    privateKey: pair.privateKey,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 86_400_000),
  });
  const { privateKeyPem, csrPem } = await newCsr();
  const issued = await signClientCsr(ca, csrPem, { id });
  return {
    certPem: issued.certPem,
    keyPem: privateKeyPem,
    caPem: ca.certPem,
    caKeyPem: pair.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  };
}
