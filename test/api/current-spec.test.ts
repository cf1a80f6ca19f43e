/**
 * Operations the reference's current spec added after 0.25.6 that edgectl serves as a single controller would:
 * the network JWT and the enumerated capabilities (the role-attribute and config-services listings are
 * tested with their resources).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeProtectedHeader, importX509, jwtVerify } from 'jose';
import { startTestServer, type TestServer } from '../harness/server.js';

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
