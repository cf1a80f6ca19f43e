/**
 * Router enrollment through a real controller over real TLS: the erott enrollment an edge router gets at create
 * (shown on the router and as an enrollment record), `/enroll/erott` with both request generations, the
 * transit router's trott through the legacy `/enroll`, edge router re-enrollment, and certificate extension with
 * the router's current certificate.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { checkResponse } from '../harness/schemas.js';
import { assertError, unique } from '../harness/assert.js';
import { generateKeyAndCsr, parseCertificates, spiffeId, verifyChain } from '../../src/pki/index.js';
import { assertSansRefused, assertSizeRefused, csrWithHosts, csrWithJunkSans, oversizedCsr } from '../harness/csrs.js';

let server: TestServer;
let admin: ApiClient;

before(async () => {
  server = await startTestServer();
  admin = await server.admin();
});
after(() => server.close());

const clientPath = (path: string) => `/edge/client/v1${path}`;
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';

async function createRouter(
  collection: 'edge-routers' | 'transit-routers',
): Promise<{ id: string; detail: Record<string, any> }> {
  const res = await admin.post(`/${collection}`, { name: unique('router') });
  assert.equal(res.status, 201, res.text);
  const id = res.body.data.id;
  return { id, detail: (await admin.get(`/${collection}/${id}`)).body };
}

/** Client CSR (CN = `cn`) and server CSR (with host SANs) plus their keys. */
async function routerCsrs(cn: string) {
  const client = await generateKeyAndCsr({ commonName: cn });
  const server = await generateKeyAndCsr({ commonName: cn, hosts: ['router.example.test', '127.0.0.1'] });
  return { client, server };
}

describe('edge router enrollment (erott)', () => {
  test('create → enrollment on the router and in /enrollments → enroll with both CSRs → verified router', async () => {
    const { id, detail } = await createRouter('edge-routers');
    assert.deepEqual(checkResponse('management', '/edge-routers/{id}', 'GET', 200, detail), []);
    const r = detail.data;
    assert.equal(r.isVerified, false);
    assert.match(r.enrollmentToken, /^[0-9a-f-]{36}$/);
    const expires = Date.parse(r.enrollmentExpiresAt) - Date.parse(r.enrollmentCreatedAt);
    assert.ok(Math.abs(expires - 180 * 60_000) < 5_000, `180 minutes by default, got ${expires}`);
    const claims = JSON.parse(Buffer.from(r.enrollmentJwt.split('.')[1], 'base64url').toString());
    assert.deepEqual([claims.em, claims.sub, claims.jti], ['erott', id, r.enrollmentToken]);
    assert.equal(claims.iss, server.url);

    const records = await admin.get(`/enrollments?filter=${encodeURIComponent(`edgeRouter = "${id}"`)}`);
    assert.deepEqual(checkResponse('management', '/enrollments', 'GET', 200, records.body), []);
    assert.equal(records.body.data.length, 1);
    const e = records.body.data[0];
    assert.deepEqual([e.method, e.edgeRouterId, e.edgeRouter.id, e.token], ['erott', id, id, r.enrollmentToken]);
    assert.equal(e.edgeRouter.entity, 'edge-routers');

    const csrs = await routerCsrs(id);
    const res = await server.request('POST', clientPath(`/enroll/erott?token=${r.enrollmentToken}`), {
      body: { certCsr: csrs.client.csrPem, serverCertCsr: csrs.server.csrPem },
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(checkResponse('client', '/enroll/erott', 'POST', 200, res.body), []);
    assert.equal(res.body.data.ca, server.ca);
    const [cert] = parseCertificates(res.body.data.cert);
    const [serverCert] = parseCertificates(res.body.data.serverCert);
    const trusted = parseCertificates(server.ca);
    assert.ok(verifyChain(cert!, { trusted }).ok && verifyChain(serverCert!, { trusted }).ok);
    assert.ok(cert!.extendedKeyUsage.includes(CLIENT_AUTH));
    assert.ok(cert!.sans.uri.includes(spiffeId('edgectl', 'router', id)));
    assert.ok(serverCert!.extendedKeyUsage.includes(SERVER_AUTH));
    assert.ok(serverCert!.sans.dns.includes('router.example.test') && serverCert!.sans.ip.includes('127.0.0.1'));

    const after = (await admin.get(`/edge-routers/${id}`)).body;
    assert.deepEqual(checkResponse('management', '/edge-routers/{id}', 'GET', 200, after), []);
    assert.equal(after.data.isVerified, true);
    assert.equal(after.data.fingerprint, cert!.fingerprint);
    assert.equal(after.data.certPem, cert!.pem);
    assert.equal(after.data.enrollmentToken, null);
    assert.equal(after.data.enrollmentJwt, null);
    assert.equal(
      (await admin.get(`/enrollments?filter=${encodeURIComponent(`edgeRouter = "${id}"`)}`)).body.data.length,
      0,
    );
    assertError(
      await server.request('POST', clientPath(`/enroll/erott?token=${r.enrollmentToken}`), {
        body: { certCsr: csrs.client.csrPem, serverCertCsr: csrs.server.csrPem },
      }),
      400,
      'INVALID_ENROLLMENT_TOKEN',
    );
  });

  test('refusals leave the token usable; the newer shape (token, clientCsr, serverCsr in the body) works', async () => {
    const { id, detail } = await createRouter('edge-routers');
    const token = detail.data.enrollmentToken;
    const csrs = await routerCsrs(id);
    const post = (body: Record<string, unknown>, path = `/enroll/erott?token=${token}`) =>
      server.request('POST', clientPath(path), { body });
    assertError(await post({ certCsr: csrs.client.csrPem }), 400, 'MISSING_OR_INVALID_CSR');
    assertError(await post({ serverCertCsr: csrs.server.csrPem }), 400, 'MISSING_OR_INVALID_CSR');
    const wrongCn = await routerCsrs('not-the-router-id');
    assertError(
      await post({ certCsr: wrongCn.client.csrPem, serverCertCsr: csrs.server.csrPem }),
      400,
      'EDGE_ROUTER_ENROLL_COMMON_NAME_INVALID',
    );
    assertError(await post({ certCsr: 'garbage', serverCertCsr: csrs.server.csrPem }), 400, 'COULD_NOT_PROCESS_CSR');
    assertError(await post({ certCsr: csrs.client.csrPem, serverCertCsr: 'garbage' }), 400, 'COULD_NOT_PROCESS_CSR');
    // An identity endpoint with a router token names the method mismatch.
    assertError(
      await server.request('POST', clientPath(`/enroll/ott?token=${token}`), {
        raw: csrs.client.csrPem,
        contentType: 'application/pkcs10',
      }),
      400,
      'INVALID_ENROLL_METHOD',
    );
    assert.equal((await admin.get(`/edge-routers/${id}`)).body.data.isVerified, false);

    const ok = await post({ token, clientCsr: csrs.client.csrPem, serverCsr: csrs.server.csrPem }, '/enroll/erott');
    assert.equal(ok.status, 200, ok.text);
    assert.equal((await admin.get(`/edge-routers/${id}`)).body.data.isVerified, true);
  });

  test('CSRs beyond 32 KiB or 100 SANs are refused naming the bound; the client certificate keeps DNS and IP names only', async () => {
    const { id, detail } = await createRouter('edge-routers');
    const token = detail.data.enrollmentToken;
    const csrs = await routerCsrs(id);
    const post = (certCsr: string, serverCertCsr: string) =>
      server.request('POST', clientPath(`/enroll/erott?token=${token}`), { body: { certCsr, serverCertCsr } });
    assertSansRefused(await post(csrs.client.csrPem, (await csrWithHosts(id)).csrPem));
    assertSansRefused(await post((await csrWithHosts(id)).csrPem, csrs.server.csrPem));
    assertSizeRefused(await post((await oversizedCsr(id)).csrPem, csrs.server.csrPem));
    assertSizeRefused(await post(csrs.client.csrPem, (await oversizedCsr(id)).csrPem));
    assert.equal((await admin.get(`/edge-routers/${id}`)).body.data.isVerified, false, 'the token stays usable');

    const junk = await csrWithJunkSans(id);
    const res = await post(junk.csrPem, junk.csrPem);
    assert.equal(res.status, 200, res.text);
    const [client] = parseCertificates(res.body.data.cert);
    assert.deepEqual(client!.sans, {
      dns: ['bank.example.com', '*.example.org'],
      ip: ['10.9.8.7'],
      uri: [spiffeId('edgectl', 'router', id)],
      email: [],
    });
    const [serverCert] = parseCertificates(res.body.data.serverCert);
    assert.deepEqual(serverCert!.sans.email, ['ceo@example.com'], "the server certificate: the router's SANs");
  });

  test('re-enroll: certificate dropped, unverified, a new token and JWT; the old certificate can no longer extend', async () => {
    const { id, detail } = await createRouter('edge-routers');
    const csrs = await routerCsrs(id);
    const enrolled = await server.request('POST', clientPath(`/enroll/erott?token=${detail.data.enrollmentToken}`), {
      body: { certCsr: csrs.client.csrPem, serverCertCsr: csrs.server.csrPem },
    });
    assert.equal(enrolled.status, 200);

    const res = await admin.post(`/edge-routers/${id}/re-enroll`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data, {});
    const r = (await admin.get(`/edge-routers/${id}`)).body.data;
    assert.equal(r.isVerified, false);
    assert.equal(r.fingerprint, undefined);
    assert.equal(r.certPem, null);
    assert.notEqual(r.enrollmentToken, detail.data.enrollmentToken);
    assert.match(r.enrollmentJwt, /^ey/);
    const next = await routerCsrs(id);
    assertError(
      await server.request('POST', clientPath('/enroll/extend/router'), {
        cert: enrolled.body.data.cert,
        key: csrs.client.privateKeyPem,
        body: { certCsr: next.client.csrPem, serverCertCsr: next.server.csrPem },
      }),
      401,
      'UNAUTHORIZED',
    );
    const again = await server.request('POST', clientPath(`/enroll/erott?token=${r.enrollmentToken}`), {
      body: { certCsr: next.client.csrPem, serverCertCsr: next.server.csrPem },
    });
    assert.equal(again.status, 200, again.text);
    assertError(await admin.post('/edge-routers/no-such-router/re-enroll'), 404, 'NOT_FOUND');
  });

  test('extension with the current certificate: new certificates, the old fingerprint replaced', async () => {
    const { id, detail } = await createRouter('edge-routers');
    const csrs = await routerCsrs(id);
    const enrolled = await server.request('POST', clientPath(`/enroll/erott?token=${detail.data.enrollmentToken}`), {
      body: { certCsr: csrs.client.csrPem, serverCertCsr: csrs.server.csrPem },
    });
    const next = await routerCsrs(id);
    const extend = (cert: string | undefined, key: string | undefined, body: Record<string, unknown>) =>
      server.request('POST', clientPath('/enroll/extend/router'), { ...(cert ? { cert, key } : {}), body });
    assertError(
      await extend(undefined, undefined, { certCsr: next.client.csrPem, serverCertCsr: next.server.csrPem }),
      401,
      'UNAUTHORIZED',
    );
    assertError(
      await extend(enrolled.body.data.cert, csrs.client.privateKeyPem, { certCsr: next.client.csrPem }),
      400,
      'MISSING_OR_INVALID_CSR',
    );

    const res = await extend(enrolled.body.data.cert, csrs.client.privateKeyPem, {
      certCsr: next.client.csrPem,
      serverCertCsr: next.server.csrPem,
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(checkResponse('client', '/enroll/extend/router', 'POST', 200, res.body), []);
    const [cert] = parseCertificates(res.body.data.cert);
    assert.equal((await admin.get(`/edge-routers/${id}`)).body.data.fingerprint, cert!.fingerprint);
    assert.ok(parseCertificates(res.body.data.serverCert)[0]!.extendedKeyUsage.includes(SERVER_AUTH));
    const third = await routerCsrs(id);
    assertError(
      await extend(enrolled.body.data.cert, csrs.client.privateKeyPem, {
        certCsr: third.client.csrPem,
        serverCertCsr: third.server.csrPem,
      }),
      401,
      'UNAUTHORIZED',
    );
    assert.equal(
      (
        await extend(res.body.data.cert, next.client.privateKeyPem, {
          certCsr: third.client.csrPem,
          serverCertCsr: third.server.csrPem,
        })
      ).status,
      200,
    );
  });

  test('deleting the router removes its enrollment', async () => {
    const { id, detail } = await createRouter('edge-routers');
    const enrollment = (
      await admin.get(`/enrollments?filter=${encodeURIComponent(`token = "${detail.data.enrollmentToken}"`)}`)
    ).body.data[0];
    assert.equal((await admin.delete(`/edge-routers/${id}`)).status, 200);
    assertError(await admin.get(`/enrollments/${enrollment.id}`), 404, 'NOT_FOUND');
  });
});

describe('transit router enrollment (trott)', () => {
  test('create → trott enrollment → legacy /enroll → verified; refresh keeps the router as subject', async () => {
    const { id, detail } = await createRouter('transit-routers');
    assert.deepEqual(checkResponse('management', '/transit-routers/{id}', 'GET', 200, detail), []);
    const token = detail.data.enrollmentToken;
    const enrollment = (await admin.get(`/enrollments?filter=${encodeURIComponent(`transitRouter = "${id}"`)}`)).body
      .data[0];
    assert.deepEqual(
      [enrollment.method, enrollment.transitRouterId, enrollment.transitRouter.entity],
      ['trott', id, 'transit-routers'],
    );
    const refreshed = await admin.post(`/enrollments/${enrollment.id}/refresh`, {
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    assert.equal(refreshed.status, 200, refreshed.text);
    const jwt = (await admin.get(`/transit-routers/${id}`)).body.data.enrollmentJwt;
    assert.equal(JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString()).sub, id);

    const csrs = await routerCsrs(id);
    assertError(
      await server.request('POST', clientPath(`/enroll?method=erott&token=${token}`), {
        body: { certCsr: csrs.client.csrPem, serverCertCsr: csrs.server.csrPem },
      }),
      400,
      'INVALID_ENROLL_METHOD',
    );
    const res = await server.request('POST', clientPath(`/enroll?method=trott&token=${token}`), {
      body: { certCsr: csrs.client.csrPem, serverCertCsr: csrs.server.csrPem },
    });
    assert.equal(res.status, 200, res.text);
    const [cert] = parseCertificates(res.body.data.cert);
    const r = (await admin.get(`/transit-routers/${id}`)).body;
    assert.deepEqual(checkResponse('management', '/transit-routers/{id}', 'GET', 200, r), []);
    assert.equal(r.data.isVerified, true);
    assert.equal(r.data.fingerprint, cert!.fingerprint);
    assert.equal(r.data.enrollmentToken, null);
    // The same router through /routers.
    assert.equal((await admin.get(`/routers/${id}`)).body.data.isVerified, true);
  });
});
