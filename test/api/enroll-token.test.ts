/**
 * `POST /enroll/token` (Client API, anonymous): enrollment with an external JWT, to a certificate (with a CSR) or
 * to an ext-JWT identity (without), as the signer's enrollment fields and the auth policy allow
 * (docs/decisions.md, "Enrollment with an external JWT").
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertError, assertFieldError, unique } from '../harness/assert.js';
import { authPolicyBody } from '../harness/bodies.js';
import { checkResponse } from '../harness/schemas.js';
import { newCertSigner, signJwt } from '../harness/jwt-issuer.js';
import { createRecord, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';
import { generateKeyAndCsr, parseCertificates, spiffeId } from '../../src/pki/index.js';
import type { KeyObject } from 'node:crypto';

let server: TestServer;
let admin: ApiClient;
let key: KeyObject;
let signerId: string;
const issuer = `https://idp.example/${unique('iss')}`;
const AUD = 'edgectl-enroll';

before(async () => {
  server = await startTestServer();
  admin = await server.admin();
  const signer = await newCertSigner('enroll idp');
  key = signer.key;
  signerId = await createRecord(admin, '/external-jwt-signers', {
    name: unique('enroll-signer'),
    issuer,
    audience: AUD,
    enabled: true,
    certPem: signer.certPem,
    kid: 'k1',
    useExternalId: true,
    enrollToCertEnabled: true,
    enrollNameClaimsSelector: '/preferred_username',
    enrollAttributeClaimsSelector: '/groups',
  });
});
after(() => server.close());

const token = (claims: Record<string, unknown>, iss = issuer) =>
  signJwt(key, { iss, aud: AUD, kid: 'k1', claims: { sub: unique('sub'), ...claims } });

const enroll = (jwt: string | undefined, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  server.request('POST', '/edge/client/v1/enroll/token', {
    body,
    headers: { ...(jwt !== undefined && { authorization: `Bearer ${jwt}` }), ...headers },
  });

const identityByExternalId = async (externalId: string) =>
  (await admin.get(`/identities?filter=${encodeURIComponent(`externalId = "${externalId}"`)}`)).body.data[0];

describe('POST /enroll/token', () => {
  test('the signer shows its enrollment fields, false by default', async () => {
    const res = await admin.get(`/external-jwt-signers/${signerId}`);
    const d = res.body.data;
    assert.equal(d.enrollToCertEnabled, true);
    assert.equal(d.enrollToTokenEnabled, false);
    assert.equal(d.enrollNameClaimsSelector, '/preferred_username');
    assert.equal(d.enrollAttributeClaimsSelector, '/groups');
  });

  test('with a CSR: a new identity named by the token, with its attributes and a network-issued certificate', async () => {
    const sub = unique('alice');
    const name = unique('alice-name');
    const jwt = await token({ sub, preferred_username: name, groups: ['eng', 'ops'] });
    const { csrPem, privateKeyPem } = await generateKeyAndCsr({ commonName: 'alice' });
    const res = await enroll(jwt, { clientCsr: csrPem });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(checkResponse('client', '/enroll/token', 'POST', 200, res.body), []);
    assert.equal(res.body.data.ca, server.ca);
    const identity = await identityByExternalId(sub);
    assert.equal(identity.name, name);
    assert.deepEqual([...identity.roleAttributes].sort(), ['eng', 'ops']);
    assert.equal(identity.authPolicyId, 'default');
    const [leaf] = parseCertificates(res.body.data.cert);
    assert.ok(leaf!.sans.uri.includes(spiffeId('edgectl', 'identity', identity.id)));
    const login = await server.request('POST', '/edge/client/v1/authenticate?method=cert', {
      cert: res.body.data.cert,
      key: privateKeyPem,
    });
    assert.equal(login.status, 200, login.text);
    assert.equal(login.body.data.identityId, identity.id);
    const auth = (await admin.get(`/identities/${identity.id}`)).body.data.authenticators.cert;
    assert.ok(auth?.id, 'a cert authenticator');

    // The same token (the same external id) again: already enrolled.
    assertError(await enroll(jwt, { clientCsr: csrPem }), 409, 'ENROLLMENT_IDENTITY_ALREADY_ENROLLED');
  });

  test('without a CSR: refused while the signer does not allow it, then an identity that logs in with such tokens', async () => {
    const sub = unique('bob');
    const jwt = await token({ sub, preferred_username: unique('bob-name') });
    assertError(await enroll(jwt), 409, 'INVALID_ENROLLMENT_NOT_ALLOWED');
    assert.equal((await admin.patch(`/external-jwt-signers/${signerId}`, { enrollToTokenEnabled: true })).status, 200);
    const res = await enroll(jwt);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data, {});
    const identity = await identityByExternalId(sub);
    assert.ok(identity, 'the identity exists');
    const login = await server.request('POST', '/edge/client/v1/authenticate?method=ext-jwt', {
      headers: { authorization: `Bearer ${jwt}` },
      body: {},
    });
    assert.equal(login.status, 200, login.text);
    assert.equal(login.body.data.identityId, identity.id);
  });

  test('the auth policy must allow the login the enrollment makes', async () => {
    const other = await createRecord(admin, '/external-jwt-signers', {
      name: unique('other-signer'),
      issuer: `https://other.example/${unique('iss')}`,
      audience: AUD,
      enabled: true,
      certPem: (await newCertSigner('other idp')).certPem,
    });
    const noCert = await createRecord(
      admin,
      '/auth-policies',
      authPolicyBody(unique('no-cert'), {}, { cert: { allowed: false }, extJwt: { allowedSigners: [other] } }),
    );
    assert.equal((await admin.patch(`/external-jwt-signers/${signerId}`, { enrollAuthPolicyId: noCert })).status, 200);
    const { csrPem } = await generateKeyAndCsr({ commonName: 'carol' });
    assertError(
      await enroll(await token({ preferred_username: unique('carol') }), { clientCsr: csrPem }),
      409,
      'INVALID_ENROLLMENT_NOT_ALLOWED',
    );
    // Token enrollment: the policy's allowedSigners does not name this signer.
    assertError(
      await enroll(await token({ preferred_username: unique('carol') })),
      409,
      'INVALID_ENROLLMENT_NOT_ALLOWED',
    );
    // The policy is referenced now: it cannot be deleted.
    assertError(await admin.delete(`/auth-policies/${noCert}`), 409, 'CAN_NOT_DELETE_REFERENCED_ENTITY');
    assert.equal((await admin.patch(`/external-jwt-signers/${signerId}`, { enrollAuthPolicyId: null })).status, 200);
  });

  test('a token that does not verify, a missing name claim, a bad CSR: 400 with the reference codes', async () => {
    assertError(await enroll(undefined), 400, 'INVALID_ENROLLMENT_TOKEN');
    assertError(await enroll('not-a-jwt'), 400, 'INVALID_ENROLLMENT_TOKEN');
    assertError(
      await enroll(await token({ preferred_username: 'x' }, 'https://unknown.example')),
      400,
      'INVALID_ENROLLMENT_TOKEN',
    );
    assertError(await enroll(await token({})), 400, 'INVALID_ENROLLMENT_TOKEN');
    // Named by the issuer header: an unknown signer id refuses a token that would otherwise verify.
    const good = await token({ preferred_username: unique('dave') });
    assertError(await enroll(good, {}, { 'ziti-token-issuer-id': 'nope' }), 400, 'INVALID_ENROLLMENT_TOKEN');
    assertError(await enroll(good, { clientCsr: 'not a csr' }), 400, 'COULD_NOT_PROCESS_CSR');
    assertError(await enroll(good, { clientCsr: 7 }), 400, 'COULD_NOT_VALIDATE');
    // The right signer named by either header spelling works.
    const ok = await enroll(good, {}, { 'svc-token-issuer-id': signerId });
    assert.equal(ok.status, 200, ok.text);
  });

  test('signer fields are checked: an unknown auth policy, a bad claims selector', async () => {
    assertFieldError(
      await admin.patch(`/external-jwt-signers/${signerId}`, { enrollAuthPolicyId: 'nope' }),
      'enrollAuthPolicyId',
    );
    assertFieldError(
      await admin.patch(`/external-jwt-signers/${signerId}`, { enrollNameClaimsSelector: '/a//b' }),
      'enrollNameClaimsSelector',
    );
    assertError(
      await admin.patch(`/external-jwt-signers/${signerId}`, { enrollToCertEnabled: 'yes' }),
      400,
      'COULD_NOT_VALIDATE',
    );
  });
});
