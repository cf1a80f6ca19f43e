/**
 * Certificates tied to a login or an identity, through a real controller over real TLS: API-session
 * certificates (create from a CSR, list, detail, delete, scoping, expiry, removal with the API session),
 * identity certificate extension (extend over mutual TLS with the current certificate, the old certificate
 * working until extend-verify), and re-enrollment of updb and cert authenticators.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createIdentity, createUser, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { checkResponse } from '../harness/schemas.js';
import { assertError, unique } from '../harness/assert.js';
import { assertSansRefused, assertSizeRefused, csrWithHosts, csrWithJunkSans, oversizedCsr } from '../harness/csrs.js';
import {
  generateKeyAndCsr,
  parseCertificate,
  parseCertificates,
  spiffeId,
  verifyChain,
  type KeyAndCsr,
} from '../../src/pki/index.js';

let server: TestServer;
let admin: ApiClient;

before(async () => {
  server = await startTestServer();
  admin = await server.admin();
});
after(() => server.close());

const clientPath = (path: string) => `/edge/client/v1${path}`;
const inFuture = (ms: number) => new Date(Date.now() + ms).toISOString();
const HOUR = 3_600_000;

const newCsr = (commonName = unique('session-test')): Promise<KeyAndCsr> => generateKeyAndCsr({ commonName });

/** An identity enrolled by ott: its id, the authenticator id, its certificate chain and key. */
async function enrolledIdentity(): Promise<{ id: string; authenticatorId: string; certPem: string; keyPem: string }> {
  const id = await createIdentity(admin, { enrollment: { ott: true } });
  const token = (await admin.get(`/identities/${id}`)).body.data.enrollment.ott.token;
  const { privateKeyPem, csrPem } = await newCsr();
  const res = await server.request('POST', clientPath(`/enroll/ott?token=${token}`), {
    raw: csrPem,
    contentType: 'application/pkcs10',
    headers: { accept: 'application/x-x509-user-cert' },
  });
  if (res.status !== 200) throw new Error(`enroll failed: ${res.status} ${res.text}`);
  const authenticatorId = (await admin.get(`/identities/${id}`)).body.data.authenticators.cert.id;
  return { id, authenticatorId, certPem: res.text, keyPem: privateKeyPem };
}

const certLogin = (cert: string, key: string, api: 'client' | 'management' = 'client') =>
  server.request('POST', `/edge/${api}/v1/authenticate?method=cert`, { cert, key });

/** A client of `api` whose requests carry the token and present `cert`/`key` over TLS. */
function tlsClient(api: 'client' | 'management', token: string, cert?: string, key?: string) {
  const c = server.client(api).withToken(token);
  return {
    post: (path: string, body: unknown) => c.post(path, body, cert ? { cert, key } : {}),
  };
}

describe('API session certificates', () => {
  test('create from a CSR → 12-hour client certificate; list and detail with reference schemas; delete', async () => {
    const user = await createUser(server, admin);
    const { csrPem } = await newCsr();
    const res = await user.client.post('/current-api-session/certificates', { csr: csrPem });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(checkResponse('client', '/current-api-session/certificates', 'POST', 201, res.body), []);
    const { id, certificate, cas, _links } = res.body.data;
    assert.equal(_links.self.href, `./current-api-session/certificates/${id}`);
    assert.equal(cas, server.ca);
    const cert = parseCertificate(certificate);
    assert.ok(verifyChain(cert, { trusted: parseCertificates(server.ca) }).ok, 'signed by the controller');
    const lifetime = cert.notAfter.getTime() - Date.now();
    assert.ok(lifetime > 11.9 * HOUR && lifetime <= 12 * HOUR, `12 h validity, got ${lifetime} ms`);
    const session = (await user.client.get('/current-api-session')).body.data;
    assert.ok(
      cert.sans.uri.includes(spiffeId('edgectl', 'identity', user.id, 'api-session', session.id)),
      JSON.stringify(cert.sans),
    );
    assert.ok(cert.extendedKeyUsage.includes('1.3.6.1.5.5.7.3.2'), 'clientAuth');

    const detail = await user.client.get(`/current-api-session/certificates/${id}`);
    assert.equal(detail.status, 200);
    assert.deepEqual(checkResponse('client', '/current-api-session/certificates/{id}', 'GET', 200, detail.body), []);
    const d = detail.body.data;
    assert.equal(d.certificate, certificate);
    assert.equal(d.fingerprint, cert.fingerprint);
    assert.equal(d.subject, cert.subject);
    assert.equal(Date.parse(d.validTo), cert.notAfter.getTime());
    assert.equal(Date.parse(d.validFrom), cert.notBefore.getTime());

    const second = await user.client.post('/current-api-session/certificates', { csr: (await newCsr()).csrPem });
    assert.equal(second.status, 201);
    const list = await user.client.get('/current-api-session/certificates');
    assert.equal(list.status, 200);
    assert.deepEqual(checkResponse('client', '/current-api-session/certificates', 'GET', 200, list.body), []);
    assert.deepEqual(list.body.data.map((c: { id: string }) => c.id).sort(), [id, second.body.data.id].sort());
    const filtered = await user.client.get(
      `/current-api-session/certificates?filter=${encodeURIComponent(`fingerprint = "${cert.fingerprint}"`)}`,
    );
    assert.deepEqual(
      filtered.body.data.map((c: { id: string }) => c.id),
      [id],
    );

    assert.equal((await user.client.delete(`/current-api-session/certificates/${id}`)).status, 200);
    assertError(await user.client.get(`/current-api-session/certificates/${id}`), 404, 'NOT_FOUND');
    assertError(await user.client.delete(`/current-api-session/certificates/${id}`), 404, 'NOT_FOUND');
    assert.equal((await user.client.get('/current-api-session/certificates')).body.data.length, 1);
  });

  test('scoped to the API session: another session of the same identity sees nothing', async () => {
    const user = await createUser(server, admin);
    const created = await user.client.post('/current-api-session/certificates', { csr: (await newCsr()).csrPem });
    assert.equal(created.status, 201);
    const other = server.client('client');
    assert.equal((await other.login(user.username, user.password)).status, 200);
    assert.deepEqual((await other.get('/current-api-session/certificates')).body.data, []);
    assertError(await other.get(`/current-api-session/certificates/${created.body.data.id}`), 404, 'NOT_FOUND');
    assertError(await other.delete(`/current-api-session/certificates/${created.body.data.id}`), 404, 'NOT_FOUND');
  });

  test('bad requests: no CSR, an unusable CSR, no session, the Management API', async () => {
    const user = await createUser(server, admin);
    assertError(await user.client.post('/current-api-session/certificates', {}), 400, 'COULD_NOT_VALIDATE', 'csr');
    assertError(
      await user.client.post('/current-api-session/certificates', { csr: 'not a csr' }),
      400,
      'COULD_NOT_PROCESS_CSR',
    );
    assertError(
      await user.client.post('/current-api-session/certificates', { csr: server.ca }),
      400,
      'COULD_NOT_PROCESS_CSR',
    );
    assertError(
      await server.request('POST', clientPath('/current-api-session/certificates'), {
        body: { csr: (await newCsr()).csrPem },
      }),
      401,
      'UNAUTHORIZED',
    );
    assertError(await user.client.other('management').get('/current-api-session/certificates'), 404, 'NOT_FOUND');
  });

  test('CSRs beyond 32 KiB or 100 SANs are refused naming the bound; junk SANs are left out', async () => {
    const user = await createUser(server, admin);
    const create = (csr: string) => user.client.post('/current-api-session/certificates', { csr });
    assertSizeRefused(await create((await oversizedCsr('big')).csrPem));
    assertSansRefused(await create((await csrWithHosts('many')).csrPem));
    const res = await create((await csrWithJunkSans('junk')).csrPem);
    assert.equal(res.status, 201, res.text);
    const session = (await user.client.get('/current-api-session')).body.data;
    assert.deepEqual(parseCertificate(res.body.data.certificate).sans, {
      dns: [],
      ip: [],
      uri: [spiffeId('edgectl', 'identity', user.id, 'api-session', session.id)],
      email: [],
    });
  });

  test('an API session gets 10 certificates at once, then 429 RATE_LIMITED with Retry-After; another session its own', async () => {
    const user = await createUser(server, admin);
    const { csrPem } = await newCsr();
    const create = (client: ApiClient) => client.post('/current-api-session/certificates', { csr: csrPem });
    for (let i = 0; i < 10; i++) assert.equal((await create(user.client)).status, 201, `certificate ${i + 1}`);
    const refused = await create(user.client);
    assertError(refused, 429, 'RATE_LIMITED');
    const retryAfter = Number(refused.headers['retry-after']);
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After ${refused.headers['retry-after']}`);
    assert.equal((await user.client.get('/current-api-session/certificates')).body.data.length, 10, 'none added');

    const other = server.client('client');
    assert.equal((await other.login(user.username, user.password)).status, 200);
    assert.equal((await create(other)).status, 201);
  });

  test('they expire with their validity window and vanish with their API session', async () => {
    const user = await createUser(server, admin);
    const a = (await user.client.post('/current-api-session/certificates', { csr: (await newCsr()).csrPem })).body.data
      .id;
    const b = (await user.client.post('/current-api-session/certificates', { csr: (await newCsr()).csrPem })).body.data
      .id;
    // Move one certificate's validity window into the past: it is no longer listed nor readable.
    const db = server.daemon.store.db;
    await db
      .updateTable('api_session_certs')
      .set({ validTo: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', a)
      .execute();
    assert.deepEqual(
      (await user.client.get('/current-api-session/certificates')).body.data.map((c: { id: string }) => c.id),
      [b],
    );
    assertError(await user.client.get(`/current-api-session/certificates/${a}`), 404, 'NOT_FOUND');

    assert.equal((await user.client.delete('/current-api-session')).status, 200);
    const left = await db.selectFrom('api_session_certs').select('id').where('id', 'in', [a, b]).execute();
    assert.deepEqual(left, [], 'logout removes the API session certificates');
  });
});

describe('identity certificate extension', () => {
  test('extend over TLS with the current certificate; the old one works until extend-verify, then only the new one', async () => {
    const me = await enrolledIdentity();
    const login = await certLogin(me.certPem, me.keyPem);
    assert.equal(login.status, 200, login.text);
    const token = login.body.data.token;
    const { privateKeyPem: newKey, csrPem } = await newCsr();
    const path = `/current-identity/authenticators/${me.authenticatorId}`;

    const res = await tlsClient('client', token, me.certPem, me.keyPem).post(`${path}/extend`, {
      clientCertCsr: csrPem,
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      checkResponse('client', '/current-identity/authenticators/{id}/extend', 'POST', 200, res.body),
      [],
    );
    assert.equal(res.body.data.ca, server.ca);
    const [leaf] = parseCertificates(res.body.data.clientCert);
    assert.ok(leaf!.sans.uri.includes(spiffeId('edgectl', 'identity', me.id)));
    assert.ok(leaf!.notAfter.getTime() - Date.now() > 360 * 24 * HOUR, 'one year');

    // Until verified: the old certificate authenticates, the new one does not.
    assert.equal((await certLogin(me.certPem, me.keyPem)).status, 200);
    assertError(await certLogin(res.body.data.clientCert, newKey), 401, 'INVALID_AUTH');
    assert.equal(
      (await admin.get(`/authenticators/${me.authenticatorId}`)).body.data.fingerprint,
      parseCertificate(me.certPem).fingerprint,
    );

    // A certificate other than the issued one is refused.
    const stray = await server.daemon.pki.signClientCsr((await newCsr()).csrPem, { id: me.id });
    assertError(
      await tlsClient('client', token).post(`${path}/extend-verify`, { clientCert: stray.certPem }),
      400,
      'INVALID_CLIENT_CERT',
    );
    assertError(
      await tlsClient('client', token).post(`${path}/extend-verify`, { clientCert: 'garbage' }),
      400,
      'INVALID_CLIENT_CERT',
    );

    const verified = await tlsClient('client', token).post(`${path}/extend-verify`, {
      clientCert: res.body.data.clientCert,
    });
    assert.equal(verified.status, 200, verified.text);
    assert.deepEqual(verified.body.data, {});
    const relog = await certLogin(res.body.data.clientCert, newKey);
    assert.equal(relog.status, 200, relog.text);
    assert.equal(relog.body.data.identityId, me.id);
    assertError(await certLogin(me.certPem, me.keyPem), 401, 'INVALID_AUTH');
    assert.equal((await admin.get(`/authenticators/${me.authenticatorId}`)).body.data.fingerprint, leaf!.fingerprint);
    // Nothing is pending any more.
    assertError(
      await tlsClient('client', token).post(`${path}/extend-verify`, { clientCert: res.body.data.clientCert }),
      400,
      'INVALID_CLIENT_CERT',
    );
  });

  test('request-extend (admin): the next login shows the request; a verified extension clears it and records the key roll', async () => {
    const me = await enrolledIdentity();
    const path = `/authenticators/${me.authenticatorId}/request-extend`;
    let login = await certLogin(me.certPem, me.keyPem);
    assert.equal(login.body.data.isCertExtendRequested, false);
    assert.equal(login.body.data.isCertKeyRollRequested, false);

    const asked = await admin.post(path, { rollKeys: true });
    assert.equal(asked.status, 200, asked.text);
    assert.deepEqual(checkResponse('management', '/authenticators/{id}/request-extend', 'POST', 200, asked.body), []);
    assert.deepEqual(asked.body.data, {});
    const detailRes = await admin.get(`/authenticators/${me.authenticatorId}`);
    assert.deepEqual(checkResponse('management', '/authenticators/{id}', 'GET', 200, detailRes.body), []);
    const detail = detailRes.body.data;
    assert.equal(detail.isExtendRequested, true);
    assert.equal(detail.isKeyRollRequested, true);
    assert.equal(typeof detail.extendRequestedAt, 'string');
    login = await certLogin(me.certPem, me.keyPem);
    assert.equal(login.body.data.isCertExtendRequested, true);
    assert.equal(login.body.data.isCertKeyRollRequested, true);
    const token = login.body.data.token;
    const current = await server.client('client').withToken(token).get('/current-api-session');
    assert.equal(current.body.data.isCertExtendRequested, true);

    // The client extends with a new key and verifies: the request is answered.
    const { csrPem } = await newCsr();
    const apath = `/current-identity/authenticators/${me.authenticatorId}`;
    const res = await tlsClient('client', token, me.certPem, me.keyPem).post(`${apath}/extend`, {
      clientCertCsr: csrPem,
    });
    assert.equal(res.status, 200, res.text);
    const verified = await tlsClient('client', token).post(`${apath}/extend-verify`, {
      clientCert: res.body.data.clientCert,
    });
    assert.equal(verified.status, 200, verified.text);
    const after = (await admin.get(`/authenticators/${me.authenticatorId}`)).body.data;
    assert.equal(after.isExtendRequested, false);
    assert.equal(after.isKeyRollRequested, false);
    assert.equal(after.lastExtendRolledKeys, true, 'the new certificate has a new key');

    // Without rollKeys only the extension is asked for.
    assert.equal((await admin.post(path, {})).status, 200);
    const again = (await admin.get(`/authenticators/${me.authenticatorId}`)).body.data;
    assert.equal(again.isExtendRequested, true);
    assert.equal(again.isKeyRollRequested, false);
  });

  test('request-extend: unknown id 404, a password authenticator 401, non-admin or no session 401, bad body 400', async () => {
    assertError(await admin.post('/authenticators/nope/request-extend', { rollKeys: false }), 404, 'NOT_FOUND');
    const user = await createUser(server, admin);
    const updb = (await admin.get(`/identities/${user.id}`)).body.data.authenticators.updb.id;
    assertError(await admin.post(`/authenticators/${updb}/request-extend`, { rollKeys: false }), 401, 'UNAUTHORIZED');
    assertError(
      await user.client.other('management').post(`/authenticators/${updb}/request-extend`, {}),
      401,
      'UNAUTHORIZED',
    );
    assertError(
      await server.client('management').post(`/authenticators/${updb}/request-extend`, {}),
      401,
      'UNAUTHORIZED',
    );
    assertError(
      await admin.post(`/authenticators/${updb}/request-extend`, { rollKeys: 'yes' }),
      400,
      'COULD_NOT_VALIDATE',
    );
  });

  test('on the Management API too', async () => {
    const me = await enrolledIdentity();
    const token = (await certLogin(me.certPem, me.keyPem, 'management')).body.data.token;
    const { privateKeyPem, csrPem } = await newCsr();
    const path = `/current-identity/authenticators/${me.authenticatorId}`;
    const res = await tlsClient('management', token, me.certPem, me.keyPem).post(`${path}/extend`, {
      clientCertCsr: csrPem,
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      checkResponse('management', '/current-identity/authenticators/{id}/extend', 'POST', 200, res.body),
      [],
    );
    assert.equal(
      (await tlsClient('management', token).post(`${path}/extend-verify`, { clientCert: res.body.data.clientCert }))
        .status,
      200,
    );
    assert.equal((await certLogin(res.body.data.clientCert, privateKeyPem, 'management')).status, 200);
  });

  test('refusals: no or another TLS certificate (401), not the caller’s (404), not a network cert authenticator (409), bad CSR', async () => {
    const me = await enrolledIdentity();
    const token = (await certLogin(me.certPem, me.keyPem)).body.data.token;
    const path = `/current-identity/authenticators/${me.authenticatorId}/extend`;
    const { csrPem } = await newCsr();
    assertError(await tlsClient('client', token).post(path, { clientCertCsr: csrPem }), 401, 'UNAUTHORIZED');
    const other = await enrolledIdentity();
    assertError(
      await tlsClient('client', token, other.certPem, other.keyPem).post(path, { clientCertCsr: csrPem }),
      401,
      'UNAUTHORIZED',
    );
    assertError(
      await tlsClient('client', token, me.certPem, me.keyPem).post(
        `/current-identity/authenticators/${other.authenticatorId}/extend`,
        { clientCertCsr: csrPem },
      ),
      404,
      'NOT_FOUND',
    );
    assertError(
      await tlsClient('client', token, me.certPem, me.keyPem).post(path, { clientCertCsr: 'no csr here' }),
      400,
      'COULD_NOT_PROCESS_CSR',
    );
    assertError(
      await tlsClient('client', token, me.certPem, me.keyPem).post(path, {}),
      400,
      'COULD_NOT_VALIDATE',
      'clientCertCsr',
    );

    const user = await createUser(server, admin);
    const updbId = (await admin.get(`/identities/${user.id}`)).body.data.authenticators.updb.id;
    assertError(
      await user.client.post(`/current-identity/authenticators/${updbId}/extend`, { clientCertCsr: csrPem }),
      409,
      'CAN_NOT_UPDATE_AUTHENTICATOR',
    );
    assertError(
      await server.request('POST', clientPath(path), { body: { clientCertCsr: csrPem } }),
      401,
      'UNAUTHORIZED',
    );
  });
});

describe('identity certificate extension: CSR bounds and names', () => {
  test('CSRs beyond 32 KiB or 100 SANs are refused naming the bound; junk SANs are left out', async () => {
    const me = await enrolledIdentity();
    const token = (await certLogin(me.certPem, me.keyPem)).body.data.token;
    const extend = (clientCertCsr: string) =>
      tlsClient('client', token, me.certPem, me.keyPem).post(
        `/current-identity/authenticators/${me.authenticatorId}/extend`,
        { clientCertCsr },
      );
    assertSizeRefused(await extend((await oversizedCsr('big')).csrPem));
    assertSansRefused(await extend((await csrWithHosts('many')).csrPem));
    const res = await extend((await csrWithJunkSans('junk')).csrPem);
    assert.equal(res.status, 200, res.text);
    const [leaf] = parseCertificates(res.body.data.clientCert);
    assert.deepEqual(leaf!.sans, { dns: [], ip: [], uri: [spiffeId('edgectl', 'identity', me.id)], email: [] });
  });

  test('extension takes from the same budget: 429 RATE_LIMITED after 10 in one API session', async () => {
    const me = await enrolledIdentity();
    const token = (await certLogin(me.certPem, me.keyPem)).body.data.token;
    const { csrPem } = await newCsr();
    const extend = () =>
      tlsClient('client', token, me.certPem, me.keyPem).post(
        `/current-identity/authenticators/${me.authenticatorId}/extend`,
        { clientCertCsr: csrPem },
      );
    for (let i = 0; i < 10; i++) assert.equal((await extend()).status, 200, `extension ${i + 1}`);
    assertError(await extend(), 429, 'RATE_LIMITED');
  });
});

describe('authenticator re-enroll', () => {
  test('updb → a updb enrollment with the same username; the password stops working until enrolled again', async () => {
    const user = await createUser(server, admin);
    const authId = (await admin.get(`/identities/${user.id}`)).body.data.authenticators.updb.id;
    const res = await admin.post(`/authenticators/${authId}/re-enroll`, { expiresAt: inFuture(HOUR) });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(checkResponse('management', '/authenticators/{id}/re-enroll', 'POST', 201, res.body), []);
    assert.equal(res.body.data._links.self.href, `./enrollments/${res.body.data.id}`);
    const enrollment = (await admin.get(`/enrollments/${res.body.data.id}`)).body.data;
    assert.deepEqual([enrollment.method, enrollment.username, enrollment.identityId], ['updb', user.username, user.id]);
    assertError(await admin.get(`/authenticators/${authId}`), 404, 'NOT_FOUND');
    assertError(await server.client('client').login(user.username, user.password), 401, 'INVALID_AUTH');

    const enrolled = await server.request('POST', clientPath(`/enroll/updb?token=${enrollment.token}`), {
      body: { password: 'renewed-Passw0rd' },
    });
    assert.equal(enrolled.status, 200, enrolled.text);
    assert.equal((await server.client('client').login(user.username, 'renewed-Passw0rd')).status, 200);
  });

  test('a network-issued cert → an ott enrollment; the old certificate stops working', async () => {
    const me = await enrolledIdentity();
    const res = await admin.post(`/authenticators/${me.authenticatorId}/re-enroll`, { expiresAt: inFuture(HOUR) });
    assert.equal(res.status, 201, res.text);
    const enrollment = (await admin.get(`/enrollments/${res.body.data.id}`)).body.data;
    assert.deepEqual([enrollment.method, enrollment.identityId, enrollment.caId], ['ott', me.id, null]);
    assertError(await certLogin(me.certPem, me.keyPem), 401, 'INVALID_AUTH');
    assert.equal((await admin.get(`/identities/${me.id}`)).body.data.enrollment.ott.token, enrollment.token);
  });

  test('refusals: unknown authenticator, expiry not in the future, non-admin', async () => {
    const user = await createUser(server, admin);
    const authId = (await admin.get(`/identities/${user.id}`)).body.data.authenticators.updb.id;
    assertError(
      await admin.post('/authenticators/no-such-authenticator/re-enroll', { expiresAt: inFuture(HOUR) }),
      404,
      'NOT_FOUND',
    );
    assertError(
      await admin.post(`/authenticators/${authId}/re-enroll`, { expiresAt: new Date(Date.now() - 1000).toISOString() }),
      400,
      'COULD_NOT_VALIDATE',
      'expiresAt',
    );
    assertError(await admin.post(`/authenticators/${authId}/re-enroll`, {}), 400, 'COULD_NOT_VALIDATE', 'expiresAt');
    assertError(
      await user.client.other('management').post(`/authenticators/${authId}/re-enroll`, { expiresAt: inFuture(HOUR) }),
      401,
      'UNAUTHORIZED',
    );
    assert.equal((await admin.get(`/authenticators/${authId}`)).status, 200, 'nothing changed');
  });
});
