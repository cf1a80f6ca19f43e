/** Cross-origin access only for the origins the operator lists (`web.cors.allowedOrigins`). */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN, startTestServer, type TestServer } from '../harness/server.js';

describe('CORS with configured origins', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({
      yaml: 'web:\n  cors:\n    allowedOrigins:\n      - https://console.example\n      - http://localhost:8443\n',
    });
  });
  after(() => server.close());

  const preflight = (origin: string) =>
    server.request('OPTIONS', `/edge/management/v1/identities`, {
      headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'zt-session' },
    });

  test('a listed origin gets its preflight answered and is echoed with credentials', async () => {
    for (const origin of ['https://console.example', 'http://localhost:8443']) {
      const pre = await preflight(origin);
      assert.equal(pre.status, 200);
      assert.equal(pre.headers['access-control-allow-origin'], origin);
      assert.equal(pre.headers['access-control-allow-credentials'], 'true');
      assert.match(String(pre.headers['access-control-allow-headers']), /zt-session/);
      assert.match(String(pre.headers['vary']), /origin/i);
    }
    const admin = await server.admin();
    const get = await admin.get('/identities', { headers: { origin: 'https://console.example' } });
    assert.equal(get.status, 200);
    assert.equal(get.headers['access-control-allow-origin'], 'https://console.example');
    assert.match(String(get.headers['access-control-expose-headers']), /zt-session/);
  });

  test('any other origin gets no CORS header, not even with a near-miss spelling', async () => {
    for (const origin of [
      'https://evil.example',
      'https://console.example.evil.example',
      'http://console.example',
      'https://console.example:444',
      'null',
    ]) {
      const pre = await preflight(origin);
      assert.equal(pre.status, 200);
      assert.equal(pre.headers['access-control-allow-origin'], undefined, origin);
      assert.equal(pre.headers['access-control-allow-headers'], undefined, origin);
      assert.equal(pre.headers['access-control-allow-credentials'], undefined, origin);
      const auth = await server.request('POST', `/edge/management/v1/authenticate?method=password`, {
        body: ADMIN,
        headers: { origin },
      });
      assert.equal(auth.status, 200);
      assert.equal(auth.headers['access-control-allow-origin'], undefined, origin);
      assert.match(String(auth.headers['vary']), /origin/i, 'the answer depends on the origin: caches must know');
    }
  });
});
