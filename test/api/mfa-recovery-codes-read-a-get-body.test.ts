/**
 * `GET /current-identity/mfa/recovery-codes` reads an optional JSON body with the code (parity: the reference's
 * clients send it so). A client announcing a body it never sends still gets its answer, not a hang until the
 * request timeout (found by the route fuzzer).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createUser, startTestServer, type TestServer } from '../harness/server.js';
import { request } from '../harness/http.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.close());

test('an announced body that never arrives: the answer comes within seconds, in the envelope', async () => {
  const u = await createUser(server, await server.admin());
  const started = Date.now();
  const res = await request(server.ca, 'GET', `${server.url}/edge/client/v1/current-identity/mfa/recovery-codes`, {
    headers: { 'zt-session': u.client.token!, 'content-length': '4' },
  });
  assert.ok(Date.now() - started < 10_000, `answered after ${Date.now() - started} ms`);
  // No MFA enrolment: the same 404 as without a body.
  assert.equal(res.status, 404, res.text);
  assert.equal(res.body.error.code, 'NOT_FOUND');
});
