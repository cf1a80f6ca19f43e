/**
 * Third-party certificate authorities through a real controller over real mutual TLS: CA records (create,
 * validation, externalIdClaim rules, update, verify, JWT), certificate authentication through verified CAs (with
 * intermediates and external-id claims), CA auto-enrollment, ottca enrollment, re-enrollment of a CA-issued
 * authenticator, CA delete, and the listener's advertised CA list.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import tls from 'node:tls';
import { spawn, spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { createIdentity, createUser, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import type { HttpResponse } from '../harness/http.js';
import { checkResponse } from '../harness/schemas.js';
import {
  issueClientCert,
  newIntermediateCa,
  newRootCa,
  type TestCa,
  type TestClientCert,
} from '../harness/third-party-pki.js';
import { assertError, unique } from '../harness/assert.js';
import { ExtendedKeyUsage, verifyEnrollmentJwt } from '../../src/pki/index.js';

let server: TestServer;
let admin: ApiClient;

before(async () => {
  server = await startTestServer();
  admin = await server.admin();
});
after(() => server.close());

const clientPath = (path: string) => `/edge/client/v1${path}`;
const inFuture = (ms: number) => new Date(Date.now() + ms).toISOString();

interface CaFlags {
  isAuthEnabled?: boolean;
  isAutoCaEnrollmentEnabled?: boolean;
  isOttCaEnrollmentEnabled?: boolean;
  identityRoles?: string[];
  identityNameFormat?: string;
  externalIdClaim?: Record<string, unknown>;
}

const caBody = (name: string, certPem: string, flags: CaFlags = {}) => ({
  name,
  certPem,
  isAuthEnabled: true,
  isAutoCaEnrollmentEnabled: true,
  isOttCaEnrollmentEnabled: true,
  identityRoles: [],
  ...flags,
});

/** Uploads the verification certificate: CN = the CA's verification token, signed by `signer`. */
async function verifyWith(id: string, signer: TestCa, cn?: string): Promise<HttpResponse> {
  const token = cn ?? (await admin.get(`/cas/${id}`)).body.data.verificationToken;
  const proof = await issueClientCert(signer, token);
  return admin.post(`/cas/${id}/verify`, undefined, { raw: proof.certPem, contentType: 'text/plain' });
}

/** A new root CA registered (and verified unless told otherwise) on the controller. */
async function registeredCa(
  flags: CaFlags = {},
  opts: { verify?: boolean } = {},
): Promise<{ id: string; name: string; ca: TestCa }> {
  const ca = await newRootCa(unique('test root'));
  const name = unique('ca');
  const res = await admin.post('/cas', caBody(name, ca.certPem, flags));
  if (res.status !== 201) throw new Error(`CA create failed: ${res.status} ${res.text}`);
  const id = res.body.data.id as string;
  if (opts.verify ?? true) {
    const v = await verifyWith(id, ca);
    if (v.status !== 200) throw new Error(`CA verify failed: ${v.status} ${v.text}`);
  }
  return { id, name, ca };
}

/** POST over mutual TLS with a client certificate (PEM chain) and key. */
const mtls = (path: string, cert: string, key: string, body?: unknown) =>
  server.request('POST', clientPath(path), { cert, key, ...(body !== undefined ? { body } : {}) });

const certLogin = (cert: TestClientCert, chain?: string) =>
  mtls('/authenticate?method=cert', chain ?? cert.certPem, cert.keyPem);

async function identityByName(name: string): Promise<Record<string, any> | undefined> {
  const res = await admin.get(`/identities?filter=${encodeURIComponent(`name = "${name}"`)}`);
  return res.body.data[0];
}

describe('CA auto-enrollment before any CA can take it', () => {
  test('no verified CA with auto-enrollment: 400 ENROLLMENT_NO_VALID_CAS, unverified CAs included', async () => {
    const unverified = await registeredCa({}, { verify: false });
    const cert = await issueClientCert(unverified.ca, 'early-device');
    assertError(await mtls('/enroll/ca', cert.certPem, cert.keyPem), 400, 'ENROLLMENT_NO_VALID_CAS');
    assert.equal(await identityByName(`${unverified.name}-early-device`), undefined);
    assert.equal((await admin.delete(`/cas/${unverified.id}`)).status, 200);
  });
});

describe('CA records', () => {
  test('create → unverified with a verification token; detail and list match the reference schemas', async () => {
    const root = await newRootCa('records root');
    const name = unique('records');
    const created = await admin.post('/cas', caBody(name, root.certPem, { identityRoles: ['from-ca', 'second'] }));
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(checkResponse('management', '/cas', 'POST', 201, created.body), []);
    const id = created.body.data.id;
    assert.equal(created.body.data._links.self.href, `./cas/${id}`);

    const detail = await admin.get(`/cas/${id}`);
    assert.equal(detail.status, 200);
    assert.deepEqual(checkResponse('management', '/cas/{id}', 'GET', 200, detail.body), []);
    const d = detail.body.data;
    assert.equal(d.name, name);
    assert.equal(d.isVerified, false);
    assert.match(d.verificationToken, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(d.fingerprint, root.ca.certificate.fingerprint);
    assert.equal(d.certPem, root.certPem);
    assert.equal(d.identityNameFormat, '[caName]-[commonName]');
    assert.deepEqual(d.identityRoles, ['from-ca', 'second']);
    assert.equal(d.isAuthEnabled, true);
    assert.equal('externalIdClaim' in d, false);

    const list = await admin.get(`/cas?filter=${encodeURIComponent(`name = "${name}" and isVerified = false`)}`);
    assert.equal(list.status, 200);
    assert.deepEqual(checkResponse('management', '/cas', 'GET', 200, list.body), []);
    assert.deepEqual(
      list.body.data.map((c: { id: string }) => c.id),
      [id],
    );
    for (const f of [
      'name',
      'fingerprint',
      'isVerified',
      'verificationToken',
      'isAuthEnabled',
      'isAutoCaEnrollmentEnabled',
      'isOttCaEnrollmentEnabled',
    ]) {
      assert.ok(list.body.meta.filterableFields.includes(f), f);
    }
    const byToken = await admin.get(
      `/cas?filter=${encodeURIComponent(`verificationToken = "${d.verificationToken}"`)}`,
    );
    assert.equal(byToken.body.meta.pagination.totalCount, 1);
  });

  test('certPem must be exactly one CA certificate, not registered yet', async () => {
    const root = await newRootCa('pem rules root');
    const leaf = await issueClientCert(root, 'not a ca');
    const post = (certPem: unknown, name = unique('pem')) => admin.post('/cas', caBody(name, certPem as string));
    assertError(await post(leaf.certPem), 400, 'CERTIFICATE_IS_NOT_CA');
    assertError(await post(root.certPem + leaf.certPem), 400, 'INVALID_CERT_PEM');
    assertError(await post('not a certificate at all'), 400, 'INVALID_CERT_PEM');
    assertError(await post(root.keyPem), 400, 'INVALID_CERT_PEM');
    const first = await post(root.certPem);
    assert.equal(first.status, 201, first.text);
    assertError(await post(root.certPem), 400, 'COULD_NOT_VALIDATE', 'certPem');
    const other = await newRootCa('pem rules other');
    const name = (await admin.get(`/cas/${first.body.data.id}`)).body.data.name;
    assertError(await post(other.certPem, name), 400, 'COULD_NOT_VALIDATE', 'name');
    // Required create fields and plain role attributes.
    const { isAuthEnabled: _omit, ...noAuthFlag } = caBody(unique('missing'), other.certPem);
    assertError(await admin.post('/cas', noAuthFlag), 400, 'COULD_NOT_VALIDATE', 'isAuthEnabled');
    assertError(
      await admin.post('/cas', caBody(unique('roles'), other.certPem, { identityRoles: ['#all'] })),
      400,
      'COULD_NOT_VALIDATE',
      'identityRoles',
    );
  });

  test('externalIdClaim: location, matcher, parser and index rules; normalised on read; PATCH merges', async () => {
    const root = await newRootCa('claim rules root');
    const claim = (c: Record<string, unknown>) =>
      admin.post('/cas', caBody(unique('claim'), root.certPem, { externalIdClaim: c }));
    const cases: [Record<string, unknown>, string][] = [
      [{ location: 'SUBJECT', matcher: 'ALL', parser: 'NONE' }, 'externalIdClaim.location'],
      [
        { location: 'COMMON_NAME', matcher: 'SCHEME', matcherCriteria: 'spiffe', parser: 'NONE' },
        'externalIdClaim.matcher',
      ],
      [{ location: 'SAN_URI', matcher: 'PREFIX', matcherCriteria: 'x', parser: 'NONE' }, 'externalIdClaim.matcher'],
      [{ location: 'SAN_EMAIL', matcher: 'SUFFIX', parser: 'NONE' }, 'externalIdClaim.matcherCriteria'],
      [
        { location: 'SAN_URI', matcher: 'SCHEME', matcherCriteria: '', parser: 'NONE' },
        'externalIdClaim.matcherCriteria',
      ],
      [{ location: 'COMMON_NAME', matcher: 'ALL', parser: 'SPLIT' }, 'externalIdClaim.parserCriteria'],
      [{ location: 'COMMON_NAME', matcher: 'ALL', parser: 'CUT' }, 'externalIdClaim.parser'],
      [{ location: 'COMMON_NAME', matcher: 'ALL', parser: 'NONE', index: -1 }, 'externalIdClaim.index'],
    ];
    for (const [c, field] of cases) assertError(await claim(c), 400, 'COULD_NOT_VALIDATE', field);

    const ok = await claim({
      location: 'SAN_EMAIL',
      matcher: 'SUFFIX',
      matcherCriteria: '@example.com',
      parser: 'SPLIT',
      parserCriteria: '@',
    });
    assert.equal(ok.status, 201, ok.text);
    const id = ok.body.data.id;
    const detail = await admin.get(`/cas/${id}`);
    assert.deepEqual(checkResponse('management', '/cas/{id}', 'GET', 200, detail.body), []);
    assert.deepEqual(detail.body.data.externalIdClaim, {
      location: 'SAN_EMAIL',
      matcher: 'SUFFIX',
      matcherCriteria: '@example.com',
      parser: 'SPLIT',
      parserCriteria: '@',
      index: 0,
    });
    // PATCH replaces the members it names and re-validates the whole claim.
    assert.equal((await admin.patch(`/cas/${id}`, { externalIdClaim: { index: 1 } })).status, 200);
    assert.equal((await admin.get(`/cas/${id}`)).body.data.externalIdClaim.index, 1);
    assertError(
      await admin.patch(`/cas/${id}`, { externalIdClaim: { matcher: 'SCHEME' } }),
      400,
      'COULD_NOT_VALIDATE',
      'externalIdClaim.matcher',
    );
    assert.equal((await admin.patch(`/cas/${id}`, { externalIdClaim: null })).status, 200);
    assert.equal('externalIdClaim' in (await admin.get(`/cas/${id}`)).body.data, false);
    // A claim without a location is no claim.
    const none = await admin.patch(`/cas/${id}`, {
      externalIdClaim: {
        location: null,
        matcher: null,
        matcherCriteria: null,
        parser: null,
        parserCriteria: null,
        index: null,
      },
    });
    assert.equal(none.status, 200, none.text);
    assert.equal('externalIdClaim' in (await admin.get(`/cas/${id}`)).body.data, false);
  });

  test('update and patch change the switches, never the certificate', async () => {
    const { id, name } = await registeredCa({ identityRoles: ['a'] }, { verify: false });
    const put = await admin.put(`/cas/${id}`, {
      name,
      isAuthEnabled: false,
      isAutoCaEnrollmentEnabled: false,
      isOttCaEnrollmentEnabled: true,
      identityRoles: ['b', 'c'],
      identityNameFormat: '[caId]-[commonName]',
    });
    assert.equal(put.status, 200, put.text);
    let d = (await admin.get(`/cas/${id}`)).body.data;
    assert.deepEqual([d.isAuthEnabled, d.isAutoCaEnrollmentEnabled, d.isOttCaEnrollmentEnabled], [false, false, true]);
    assert.deepEqual(d.identityRoles, ['b', 'c']);
    assert.equal(d.identityNameFormat, '[caId]-[commonName]');
    // PATCH: null flags are left unchanged, a null name format falls back to the default.
    assert.equal(
      (
        await admin.patch(`/cas/${id}`, {
          isAuthEnabled: true,
          isOttCaEnrollmentEnabled: null,
          identityNameFormat: null,
        })
      ).status,
      200,
    );
    d = (await admin.get(`/cas/${id}`)).body.data;
    assert.deepEqual(
      [d.isAuthEnabled, d.isOttCaEnrollmentEnabled, d.identityNameFormat],
      [true, true, '[caName]-[commonName]'],
    );
    const fingerprint = d.fingerprint;
    const other = await newRootCa('replacement');
    assert.equal((await admin.patch(`/cas/${id}`, { certPem: other.certPem })).status, 200);
    assert.equal((await admin.get(`/cas/${id}`)).body.data.fingerprint, fingerprint, 'certPem is not changeable');
    assertError(await admin.put(`/cas/${id}`, { name }), 400, 'COULD_NOT_VALIDATE');
  });

  test('verify: CN must be the token and the CA must have signed it; then 409 CA_ALREADY_VERIFIED', async () => {
    const { id, ca } = await registeredCa({}, { verify: false });
    const token = (await admin.get(`/cas/${id}`)).body.data.verificationToken;
    const stranger = await newRootCa('stranger');
    assertError(await verifyWith(id, ca, 'not-the-token'), 400, 'INVALID_COMMON_NAME');
    assertError(await verifyWith(id, stranger, token), 400, 'CERTIFICATE_FAILED_VALIDATION');
    const raw = (body: string) => admin.post(`/cas/${id}/verify`, undefined, { raw: body, contentType: 'text/plain' });
    assertError(await raw('just some text'), 400, 'COULD_NOT_PARSE_BODY');
    assertError(await raw(ca.keyPem), 400, 'EXPECTED_PEM_CERTIFICATE');
    assertError(
      await raw('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'),
      400,
      'COULD_NOT_PARSE_DER_BLOCK',
    );
    assert.equal((await admin.get(`/cas/${id}`)).body.data.isVerified, false);

    const ok = await verifyWith(id, ca, token);
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body.data, {});
    assert.equal((await admin.get(`/cas/${id}`)).body.data.isVerified, true);
    assertError(await verifyWith(id, ca, token), 409, 'CA_ALREADY_VERIFIED');
    assertError(
      await admin.post('/cas/no-such-ca/verify', undefined, { raw: ca.certPem, contentType: 'text/plain' }),
      404,
      'NOT_FOUND',
    );
  });

  test('the CA JWT is application/jwt: em ca, sub = jti = the CA id, audience, issuer with a trailing slash, no expiry', async () => {
    const { id } = await registeredCa();
    const res = await admin.get(`/cas/${id}/jwt`, { headers: { accept: '*/*' } });
    assert.equal(res.status, 200, res.text);
    assert.match(String(res.headers['content-type']), /^application\/jwt/);
    const serverCert = await new Promise<Buffer>((resolve, reject) => {
      const { hostname, port } = new URL(server.url);
      const s = tls.connect({ host: hostname, port: Number(port), ca: server.ca }, () => {
        resolve(s.getPeerCertificate().raw);
        s.end();
      });
      s.on('error', reject);
    });
    const claims = await verifyEnrollmentJwt(res.text, serverCert);
    assert.equal(claims.em, 'ca');
    assert.equal(claims.sub, id);
    assert.equal(claims.jti, id);
    assert.equal(claims.iss, `${server.url}/`);
    assert.deepEqual(claims.aud, ['openziti-enroller']);
    assert.equal(claims.exp, undefined);
    assertError(await admin.get('/cas/no-such-ca/jwt'), 404, 'NOT_FOUND');
  });

  test('CAs are admin only', async () => {
    const user = await createUser(server, admin, { api: 'management' });
    assertError(await user.client.get('/cas'), 401, 'UNAUTHORIZED');
    assertError(await user.client.post('/cas', {}), 401, 'UNAUTHORIZED');
    assertError(await server.request('GET', `/edge/management/v1/cas/x/jwt`), 401, 'UNAUTHORIZED');
    assertError(await server.request('GET', clientPath('/cas')), 404, 'NOT_FOUND');
  });
});

describe('certificate authentication through third-party CAs', () => {
  test('an unverified CA is never trusted; a verified one only while isAuthEnabled', async () => {
    const { id: caId, ca } = await registeredCa({ isAuthEnabled: false }, { verify: false });
    const identityId = await createIdentity(admin);
    const cert = await issueClientCert(ca, 'registered-user');
    // Unverified: its certificates cannot even be registered.
    assertError(
      await admin.post('/authenticators', { identityId, method: 'cert', certPem: cert.certPem }),
      400,
      'CERT_FAILED_VALIDATION',
    );
    assert.equal((await verifyWith(caId, ca)).status, 200);
    const created = await admin.post('/authenticators', { identityId, method: 'cert', certPem: cert.certPem });
    assert.equal(created.status, 201, created.text);
    const auth = (await admin.get(`/authenticators/${created.body.data.id}`)).body.data;
    assert.equal(auth.isIssuedByNetwork, false);
    // Verified but not enabled for authentication.
    assertError(await certLogin(cert), 401, 'INVALID_AUTH');
    assert.equal((await admin.patch(`/cas/${caId}`, { isAuthEnabled: true })).status, 200);
    const login = await certLogin(cert);
    assert.equal(login.status, 200, login.text);
    assert.deepEqual(checkResponse('client', '/authenticate', 'POST', 200, login.body), []);
    assert.equal(login.body.data.identityId, identityId);
    assert.equal(login.body.data.authenticatorId, created.body.data.id);
  });

  test('intermediates sent after the leaf complete the chain to a registered root', async () => {
    const { ca: root } = await registeredCa();
    const intermediate = await newIntermediateCa(root, 'issuing intermediate');
    const cert = await issueClientCert(intermediate, 'chained-device');
    // Auto-enrollment with the chain, then authentication with and without it.
    const enrolled = await mtls('/enroll/ca', cert.chainPem(intermediate), cert.keyPem);
    assert.equal(enrolled.status, 200, enrolled.text);
    assert.equal((await certLogin(cert, cert.chainPem(intermediate))).status, 200);
    assertError(await certLogin(cert), 401, 'INVALID_AUTH');
  });

  test('externalIdClaim: the identity is found by externalId, whatever certificate the PKI issued', async () => {
    const { ca } = await registeredCa({
      isAutoCaEnrollmentEnabled: false,
      externalIdClaim: {
        location: 'SAN_URI',
        matcher: 'SCHEME',
        matcherCriteria: 'spiffe',
        parser: 'SPLIT',
        parserCriteria: '/',
        index: 4,
      },
    });
    const user = unique('alice');
    const identityId = await createIdentity(admin, { externalId: user });
    const first = await issueClientCert(ca, 'any-cn', {
      uris: ['https://example.org/ignored', `spiffe://example.org/user/${user}`],
    });
    const login = await certLogin(first);
    assert.equal(login.status, 200, login.text);
    assert.equal(login.body.data.identityId, identityId);
    // A rotated certificate (new key, same claim) works without touching the controller.
    const rotated = await issueClientCert(ca, 'other-cn', { uris: [`spiffe://example.org/user/${user}`] });
    assert.equal((await certLogin(rotated)).body.data?.identityId, identityId);
    // A claim naming nobody, or no claim at all, authenticates nobody.
    assertError(
      await certLogin(await issueClientCert(ca, 'x', { uris: ['spiffe://example.org/user/nobody-here'] })),
      401,
      'INVALID_AUTH',
    );
    assertError(await certLogin(await issueClientCert(ca, 'y')), 401, 'INVALID_AUTH');

    const email = await registeredCa({
      externalIdClaim: { location: 'SAN_EMAIL', matcher: 'SUFFIX', matcherCriteria: '@corp.example', parser: 'NONE' },
    });
    const mailUser = `${unique('bob')}@corp.example`;
    const bob = await createIdentity(admin, { externalId: mailUser });
    const mailCert = await issueClientCert(email.ca, 'bob', { emails: ['bob@elsewhere.example', mailUser] });
    assert.equal((await certLogin(mailCert)).body.data?.identityId, bob);
  });
});

describe('CA auto-enrollment (POST /enroll/ca)', () => {
  test('creates the identity from the certificate: name format, roles, cert authenticator; then cert login', async () => {
    const { id: caId, name: caName, ca } = await registeredCa({ identityRoles: ['auto-role', 'devices'] });
    const cert = await issueClientCert(ca, 'device-1');
    const res = await mtls('/enroll/ca', cert.certPem, cert.keyPem);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(checkResponse('client', '/enroll/ca', 'POST', 200, res.body), []);
    assert.deepEqual(res.body.data, {});

    const identity = await identityByName(`${caName}-device-1`);
    assert.ok(identity, 'identity named [caName]-[commonName]');
    assert.deepEqual(identity.roleAttributes, ['auto-role', 'devices']);
    assert.equal(identity.isAdmin, false);
    assert.equal(identity.authenticators.cert.fingerprint, cert.fingerprint);
    const auth = (await admin.get(`/authenticators/${identity.authenticators.cert.id}`)).body;
    assert.deepEqual(checkResponse('management', '/authenticators/{id}', 'GET', 200, auth), []);
    assert.equal(auth.data.isIssuedByNetwork, false);

    const login = await certLogin(cert);
    assert.equal(login.status, 200, login.text);
    assert.equal(login.body.data.identityId, identity.id);
    const me = await server.client('client').withToken(login.body.data.token).get('/current-identity');
    assert.equal(me.body.data.name, `${caName}-device-1`);

    // The same certificate cannot enroll twice; another certificate with the same CN gets a suffixed name.
    assertError(await mtls('/enroll/ca', cert.certPem, cert.keyPem), 409, 'CERT_IN_USE');
    const twin = await issueClientCert(ca, 'device-1');
    assert.equal((await mtls('/enroll/ca', twin.certPem, twin.keyPem)).status, 200);
    assert.ok(await identityByName(`${caName}-device-1000001`), 'collision suffix');
    const triplet = await issueClientCert(ca, 'device-1');
    assert.equal((await mtls('/enroll/ca', triplet.certPem, triplet.keyPem)).status, 200);
    assert.ok(await identityByName(`${caName}-device-1000002`), 'second collision suffix');

    // All placeholders, and the legacy dispatcher.
    assert.equal(
      (
        await admin.patch(`/cas/${caId}`, {
          identityNameFormat: '[caName]/[caId]/[requestedName]/[commonName]/[identityId]',
        })
      ).status,
      200,
    );
    const named = await issueClientCert(ca, 'laptop');
    const legacy = await mtls('/enroll?method=ca', named.certPem, named.keyPem, { name: 'my-laptop' });
    assert.equal(legacy.status, 200, legacy.text);
    const list = await admin.get(
      `/identities?filter=${encodeURIComponent(`name contains "${caName}/${caId}/my-laptop/laptop/"`)}`,
    );
    assert.equal(list.body.data.length, 1);
    assert.equal(list.body.data[0].name, `${caName}/${caId}/my-laptop/laptop/${list.body.data[0].id}`);
    const noName = await issueClientCert(ca, 'tablet');
    assert.equal((await mtls('/enroll/ca', noName.certPem, noName.keyPem)).status, 200);
    const tablet = (await admin.get(`/identities?filter=${encodeURIComponent(`name contains "/tablet/"`)}`)).body
      .data[0];
    assert.equal(
      tablet.name,
      `${caName}/${caId}/${tablet.id}/tablet/${tablet.id}`,
      '[requestedName] defaults to the identity id',
    );
  });

  test('refusals: no certificate, an unknown CA, a CA without auto-enrollment, a certificate not for client auth', async () => {
    await registeredCa(); // at least one CA takes auto-enrollment
    assertError(await server.request('POST', clientPath('/enroll/ca')), 400, 'CERT_FAILED_VALIDATION');
    const stranger = await newRootCa('unknown to the controller');
    const foreign = await issueClientCert(stranger, 'foreign');
    assertError(await mtls('/enroll/ca', foreign.certPem, foreign.keyPem), 400, 'CERT_FAILED_VALIDATION');
    const { ca: noAuto, name } = await registeredCa({ isAutoCaEnrollmentEnabled: false });
    const manual = await issueClientCert(noAuto, 'manual-only');
    assertError(await mtls('/enroll/ca', manual.certPem, manual.keyPem), 400, 'CERT_FAILED_VALIDATION');
    assert.equal(await identityByName(`${name}-manual-only`), undefined);
    const { ca: auto, name: autoName } = await registeredCa();
    const serverOnly = await issueClientCert(auto, 'server-only', { eku: [ExtendedKeyUsage.serverAuth] });
    assertError(await mtls('/enroll/ca', serverOnly.certPem, serverOnly.keyPem), 400, 'CERT_FAILED_VALIDATION');
    assert.equal(await identityByName(`${autoName}-server-only`), undefined);
  });

  test('with an externalIdClaim: externalId from the certificate; missing claim and taken externalId are refused', async () => {
    const { ca, name } = await registeredCa({
      externalIdClaim: {
        location: 'COMMON_NAME',
        matcher: 'PREFIX',
        matcherCriteria: 'emp-',
        parser: 'SPLIT',
        parserCriteria: '-',
        index: 1,
      },
    });
    const employee = Math.random().toString(36).slice(2, 10);
    const cert = await issueClientCert(ca, `emp-${employee}`);
    assert.equal((await mtls('/enroll/ca', cert.certPem, cert.keyPem)).status, 200);
    const identity = await identityByName(`${name}-emp-${employee}`);
    assert.ok(identity);
    assert.equal(identity.externalId, employee);
    const login = await certLogin(await issueClientCert(ca, `emp-${employee}`));
    assert.equal(
      login.body.data?.identityId,
      identity.id,
      'a new certificate with the same claim logs in as the enrolled identity',
    );

    const noClaim = await issueClientCert(ca, 'contractor-1');
    assertError(await mtls('/enroll/ca', noClaim.certPem, noClaim.keyPem), 400, 'MISSING_CERT_CLAIM');
    const again = await issueClientCert(ca, `emp-${employee}`);
    assertError(await mtls('/enroll/ca', again.certPem, again.keyPem), 409, 'ENROLLMENT_IDENTITY_ALREADY_ENROLLED');
  });
});

describe('ottca enrollment', () => {
  test('identity with an ottca enrollment → enroll with a certificate from that CA → cert login', async () => {
    const { id: caId, ca } = await registeredCa({ isAutoCaEnrollmentEnabled: false });
    const identityId = await createIdentity(admin, { enrollment: { ottca: caId } });
    const detail = await admin.get(`/identities/${identityId}`);
    assert.deepEqual(checkResponse('management', '/identities/{id}', 'GET', 200, detail.body), []);
    const ottca = detail.body.data.enrollment.ottca;
    assert.equal(ottca.caId, caId);
    assert.equal(ottca.ca.id, caId, 'the CA as an entity reference');
    assert.equal(ottca.ca.entity, 'cas');
    const enrollment = (await admin.get(`/enrollments/${ottca.id}`)).body.data;
    assert.equal(enrollment.method, 'ottca');
    assert.equal(enrollment.caId, caId);

    // Refusals leave the token usable.
    const stranger = await newRootCa('ottca stranger');
    const wrong = await issueClientCert(stranger, 'wrong');
    assertError(
      await mtls(`/enroll/ottca?token=${ottca.token}`, wrong.certPem, wrong.keyPem),
      400,
      'CERTIFICATE_FAILED_VALIDATION',
    );
    assertError(
      await server.request('POST', clientPath(`/enroll/ottca?token=${ottca.token}`)),
      400,
      'CERTIFICATE_FAILED_VALIDATION',
    );
    const cert = await issueClientCert(ca, 'ottca-user');
    assertError(
      await mtls('/enroll/ottca?token=9b2f3c1e-0000-4000-8000-000000000000', cert.certPem, cert.keyPem),
      400,
      'INVALID_ENROLLMENT_TOKEN',
    );

    const res = await mtls('/enroll/ottca', cert.certPem, cert.keyPem, { token: ottca.token });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(checkResponse('client', '/enroll/ottca', 'POST', 200, res.body), []);
    assert.deepEqual(res.body.data, {});
    const enrolled = (await admin.get(`/identities/${identityId}`)).body.data;
    assert.deepEqual(enrolled.enrollment, {});
    assert.equal(enrolled.authenticators.cert.fingerprint, cert.fingerprint);
    assert.equal(
      (await admin.get(`/authenticators/${enrolled.authenticators.cert.id}`)).body.data.isIssuedByNetwork,
      false,
    );
    const login = await certLogin(cert);
    assert.equal(login.status, 200, login.text);
    assert.equal(login.body.data.identityId, identityId);
    assertError(
      await mtls(`/enroll/ottca?token=${ottca.token}`, cert.certPem, cert.keyPem),
      400,
      'INVALID_ENROLLMENT_TOKEN',
    );

    // Re-enrolling the CA-issued authenticator gives a new ottca enrollment for the same CA.
    const re = await admin.post(`/authenticators/${enrolled.authenticators.cert.id}/re-enroll`, {
      expiresAt: inFuture(3_600_000),
    });
    assert.equal(re.status, 201, re.text);
    assert.deepEqual(checkResponse('management', '/authenticators/{id}/re-enroll', 'POST', 201, re.body), []);
    const next = (await admin.get(`/enrollments/${re.body.data.id}`)).body.data;
    assert.deepEqual([next.method, next.caId, next.identityId], ['ottca', caId, identityId]);
    assertError(await certLogin(cert), 401, 'INVALID_AUTH');
    // Through the legacy dispatcher this time.
    const legacy = await mtls(`/enroll?method=ottca&token=${next.token}`, cert.certPem, cert.keyPem);
    assert.equal(legacy.status, 200, legacy.text);
    assert.equal((await certLogin(cert)).status, 200);
  });

  test('the CA must exist at create, and be verified with ottca enabled at enroll time', async () => {
    const id = await createIdentity(admin);
    assertError(
      await admin.post('/enrollments', {
        identityId: id,
        method: 'ottca',
        caId: 'no-such-ca',
        expiresAt: inFuture(60_000),
      }),
      400,
      'COULD_NOT_VALIDATE',
      'caId',
    );
    const { id: caId, ca } = await registeredCa({ isOttCaEnrollmentEnabled: false });
    const created = await admin.post('/enrollments', {
      identityId: id,
      method: 'ottca',
      caId,
      expiresAt: inFuture(60_000),
    });
    assert.equal(created.status, 201, created.text);
    const { token, jwt } = (await admin.get(`/enrollments/${created.body.data.id}`)).body.data;
    assert.equal(JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString()).em, 'ottca');
    const cert = await issueClientCert(ca, 'disabled-ottca');
    assertError(await mtls(`/enroll/ottca?token=${token}`, cert.certPem, cert.keyPem), 400, 'ENROLLMENT_CA_NOT_VALID');
    assert.equal((await admin.patch(`/cas/${caId}`, { isOttCaEnrollmentEnabled: true })).status, 200);
    assert.equal((await mtls(`/enroll/ottca?token=${token}`, cert.certPem, cert.keyPem)).status, 200);

    const unverified = await registeredCa({}, { verify: false });
    const other = await createIdentity(admin, { enrollment: { ottca: unverified.id } });
    const otherToken = (await admin.get(`/identities/${other}`)).body.data.enrollment.ottca.token;
    const fromUnverified = await issueClientCert(unverified.ca, 'unverified-ottca');
    assertError(
      await mtls(`/enroll/ottca?token=${otherToken}`, fromUnverified.certPem, fromUnverified.keyPem),
      400,
      'ENROLLMENT_CA_NOT_VALID',
    );
  });
});

describe('CA delete', () => {
  test('removes the authenticators issued through the CA and its ottca enrollments; identities stay', async () => {
    const { id: caId, name, ca } = await registeredCa();
    const cert = await issueClientCert(ca, 'doomed');
    assert.equal((await mtls('/enroll/ca', cert.certPem, cert.keyPem)).status, 200);
    const identity = (await identityByName(`${name}-doomed`))!;
    const pending = await createIdentity(admin, { enrollment: { ottca: caId } });
    const pendingEnrollment = (await admin.get(`/identities/${pending}`)).body.data.enrollment.ottca.id;
    // A controller-issued authenticator of another identity is untouched.
    const bystander = await createUser(server, admin);
    assert.equal((await certLogin(cert)).status, 200);

    assert.equal((await admin.delete(`/cas/${caId}`)).status, 200);
    assertError(await admin.get(`/cas/${caId}`), 404, 'NOT_FOUND');
    assertError(await admin.get(`/authenticators/${identity.authenticators.cert.id}`), 404, 'NOT_FOUND');
    assertError(await admin.get(`/enrollments/${pendingEnrollment}`), 404, 'NOT_FOUND');
    assert.equal((await admin.get(`/identities/${identity.id}`)).status, 200);
    assertError(await certLogin(cert), 401, 'INVALID_AUTH');
    assert.equal((await bystander.client.get('/current-identity')).status, 200);
  });
});

const hasOpenssl = spawnSync('openssl', ['version'], { encoding: 'utf8' }).status === 0;

/**
 * The CA names the listener sends in its certificate request, read with `openssl s_client` (asynchronously: the
 * server runs in this process and must keep serving the handshake).
 */
function acceptableCaNames(): Promise<string> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve) => {
    const child = spawn('openssl', ['s_client', '-connect', `${hostname}:${port}`], {
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('close', () => {
      const start = out.indexOf('Acceptable client certificate CA names');
      const end = start < 0 ? -1 : out.indexOf('---', start);
      resolve(start < 0 ? '' : out.slice(start, end < 0 ? undefined : end));
    });
    child.stdin.end();
  });
}

describe('the TLS listener', () => {
  test(
    'names verified CAs in its certificate request, following verify and delete live',
    { skip: !hasOpenssl && 'openssl not available' },
    async () => {
      const cn = unique('listener root');
      const ca = await newRootCa(cn);
      const created = await admin.post('/cas', caBody(unique('listener'), ca.certPem));
      assert.equal(created.status, 201);
      const id = created.body.data.id;
      const before = await acceptableCaNames();
      assert.ok(before.includes('edgectl'), `the controller CAs are advertised: ${before}`);
      assert.ok(!before.includes(cn), 'an unverified CA is not advertised');
      assert.equal((await verifyWith(id, ca)).status, 200);
      const waitFor = async (present: boolean) => {
        for (let i = 0; i < 50; i++) {
          if ((await acceptableCaNames()).includes(cn) === present) return true;
          await sleep(100);
        }
        return false;
      };
      assert.ok(await waitFor(true), 'the verified CA is advertised');
      assert.equal((await admin.delete(`/cas/${id}`)).status, 200);
      assert.ok(await waitFor(false), 'a deleted CA is no longer advertised');
    },
  );
});
