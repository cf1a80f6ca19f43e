/**
 * Operations the reference's current spec added after 0.25.6: the network JWT, the enumerated capabilities, the
 * enrollment keys and nonce challenge, and what `/version` advertises (OIDC, `edge.oidc.advertise`) (the role-attribute and config-services
 * listings are tested with their resources; controllers and controller settings in controllers.test.ts,
 * `/enroll/token` in enroll-token.test.ts, request-extend in session-certs.test.ts).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey, randomUUID, verify, type JsonWebKey } from 'node:crypto';
import { decodeProtectedHeader, importJWK, importX509, jwtVerify, type JWK } from 'jose';
import { assertError, assertFieldError } from '../harness/assert.js';
import { checkResponse } from '../harness/schemas.js';
import { startTestServer, type TestServer } from '../harness/server.js';
import { SPEC_VERSION } from '../../src/daemon/openapi.js';

let server: TestServer;

before(async () => {
  server = await startTestServer();
});
after(() => server.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('GET /network-jwts: one `default` JWT naming the controller, signed by its server key, on both APIs', async () => {
  for (const api of ['client', 'management'] as const) {
    const res = await server.request('GET', `/edge/${api}/v1/network-jwts`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.data.length, 1);
    const { name, token } = res.body.data[0] as { name: string; token: string };
    assert.equal(name, 'default');
    const certPem = server.daemon.pki.serverCertChainPem.split(/(?<=-----END CERTIFICATE-----)/)[0]!.trim();
    const header = decodeProtectedHeader(token);
    const key = await importX509(certPem, header.alg!);
    const { payload } = await jwtVerify(token, key, { audience: 'openziti-enroller' });
    assert.equal(payload.em, 'network');
    assert.equal(payload.iss, `${server.url}/`);
    assert.equal(payload.sub, `${server.url}/`);
    assert.match(String(payload.jti), UUID);
    assert.equal(payload.ctrls, null);
    assert.equal(payload.exp, undefined, 'it does not expire');
  }
});

test('GET /enumerated-capabilities lists every capability a controller may have, without a session', async () => {
  for (const api of ['client', 'management'] as const) {
    const res = await server.request('GET', `/edge/${api}/v1/enumerated-capabilities`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data, ['OIDC_AUTH', 'HA_CONTROLLER']);
  }
});

test('GET /enroll/jwks: the server key that signs enrollment JWTs, as a public JWK whose kid is their kid', async () => {
  const res = await server.request('GET', '/edge/client/v1/enroll/jwks');
  assert.equal(res.status, 200, res.text);
  assert.ok(!('data' in res.body), 'no envelope: the body is the key set');
  assert.deepEqual(checkResponse('client', '/enroll/jwks', 'GET', 200, res.body), []);
  const keys = res.body.keys as Record<string, unknown>[];
  assert.equal(keys.length, 1);
  const [jwk] = keys;
  const token = (await server.request('GET', '/edge/client/v1/network-jwts')).body.data[0].token as string;
  const header = decodeProtectedHeader(token);
  assert.equal(jwk!.kid, header.kid);
  assert.equal(jwk!.alg, header.alg);
  assert.equal(jwk!.use, 'sig');
  for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi']) assert.ok(!(secret in jwk!), `no private member ${secret}`);
  // The JWK verifies the JWTs it signs.
  await jwtVerify(token, await importJWK(jwk as JWK, header.alg!), { audience: 'openziti-enroller' });
  assert.equal((jwk!.x5c as string[]).length, 2, 'the server certificate and its issuing CA');
});

test('POST /enroll/challenge signs the nonce with the named key; unknown key or bad nonce: 400', async () => {
  const { keys } = (await server.request('GET', '/edge/client/v1/enroll/jwks')).body as { keys: JWK[] };
  const jwk = keys[0]!;
  const nonce = randomUUID();
  const res = await server.request('POST', '/edge/client/v1/enroll/challenge', { body: { nonce, keyId: jwk.kid } });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(checkResponse('client', '/enroll/challenge', 'POST', 200, res.body), []);
  assert.equal(res.body.kid, jwk.kid);
  assert.equal(res.body.algorithm, jwk.alg);
  assert.equal(res.body.caPool, server.ca.trim() + '\n', 'the CA bundle');
  // A JWS signature (RS256: PKCS#1 v1.5; ES*: r || s) of the nonce's UTF-8 bytes.
  const pub = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
  const sig = Buffer.from(res.body.signature, 'base64url');
  const ok =
    jwk.kty === 'RSA'
      ? verify('sha256', Buffer.from(nonce), pub, sig)
      : verify(`sha${jwk.alg!.slice(2)}`, Buffer.from(nonce), { key: pub, dsaEncoding: 'ieee-p1363' }, sig);
  assert.ok(ok, 'the signature verifies with the published key');

  const unknown = await server.request('POST', '/edge/client/v1/enroll/challenge', { body: { nonce, keyId: 'nope' } });
  assertFieldError(unknown, 'keyId');
  const bad = await server.request('POST', '/edge/client/v1/enroll/challenge', {
    body: { nonce: 'not-a-uuid', keyId: jwk.kid },
  });
  assertError(bad, 400, 'COULD_NOT_VALIDATE');
  assertError(
    await server.request('POST', '/edge/client/v1/enroll/challenge', { body: {} }),
    400,
    'COULD_NOT_VALIDATE',
  );
});

test('/version and / advertise what is served: OIDC at /oidc, the spec version of the route coverage', async () => {
  for (const path of ['/edge/client/v1/version', '/edge/management/v1/', '/version']) {
    const res = await server.request('GET', path);
    assert.equal(res.status, 200, res.text);
    const { capabilities, apiVersions } = res.body.data;
    // What the Go SDK and the console read to switch to OIDC (docs/reference-notes.md §14); never HA_CONTROLLER.
    assert.deepEqual(capabilities, ['OIDC_AUTH'], `${path}: OIDC_AUTH and not HA_CONTROLLER`);
    assert.deepEqual(Object.keys(apiVersions).sort(), ['edge', 'edge-client', 'edge-management', 'edge-oidc']);
    assert.equal(SPEC_VERSION, '0.29.0');
    assert.equal(apiVersions['edge-client'].v1.version, SPEC_VERSION);
    assert.equal(apiVersions['edge-client'].v1.path, '/edge/client/v1');
    assert.deepEqual(apiVersions['edge-oidc'], { v1: { path: '/oidc', apiBaseUrls: [`${server.url}/oidc`] } });
    assert.deepEqual(checkResponse('client', '/version', 'GET', 200, res.body), []);
  }
  // The advertised base serves the provider.
  const discovery = await server.request('GET', '/oidc/.well-known/openid-configuration');
  assert.equal(discovery.status, 200);
  assert.equal(discovery.body.issuer, `${server.url}/oidc`);
});

test('edge.oidc.advertise: false keeps OIDC out of /version; the provider and the legacy login still work', async () => {
  const quiet = await startTestServer({ yaml: 'edge:\n  oidc:\n    advertise: false\n' });
  try {
    for (const path of ['/edge/client/v1/version', '/edge/management/v1/version', '/version']) {
      const { capabilities, apiVersions } = (await quiet.request('GET', path)).body.data;
      assert.deepEqual(capabilities, [], path);
      assert.deepEqual(Object.keys(apiVersions).sort(), ['edge', 'edge-client', 'edge-management'], path);
    }
    assert.equal((await quiet.request('GET', '/oidc/.well-known/openid-configuration')).status, 200);
    assert.equal((await (await quiet.admin()).get('/current-identity')).status, 200);
  } finally {
    await quiet.close();
  }
});

test('edge.oidc.advertise must be a boolean: anything else stops the start', async () => {
  await assert.rejects(startTestServer({ yaml: 'edge:\n  oidc:\n    advertise: maybe\n' }), /edge.oidc.advertise/);
});

test('the nonce challenge and token enrollment are rate limited per source like logins: 429 RATE_LIMITED', async () => {
  const limited = await startTestServer({
    yaml: 'edge:\n  api:\n    rateLimit:\n      auth:\n        perSource: { burst: 2, perMinute: 1 }\n',
  });
  try {
    const { keys } = (await limited.request('GET', '/edge/client/v1/enroll/jwks')).body as { keys: JWK[] };
    const body = { nonce: randomUUID(), keyId: keys[0]!.kid };
    for (let i = 0; i < 2; i++)
      assert.equal((await limited.request('POST', '/edge/client/v1/enroll/challenge', { body })).status, 200);
    assertError(await limited.request('POST', '/edge/client/v1/enroll/challenge', { body }), 429, 'RATE_LIMITED');
    assertError(await limited.request('POST', '/edge/client/v1/enroll/token', { body: {} }), 429, 'RATE_LIMITED');
  } finally {
    await limited.close();
  }
});
