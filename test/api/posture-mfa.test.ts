/**
 * The MFA posture check fed by the real MFA routes (docs/reference-notes.md §6, §9.3): Dial is refused until the
 * API session passes MFA (here by verifying a fresh enrollment), allowed after it, and refused again, with the
 * session removed, once the identity's MFA is deleted.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { generate } from 'otplib';
import {
  createRecord,
  createUser,
  startTestServer,
  type ApiClient,
  type TestServer,
  dialableService,
} from '../harness/server.js';
import { assertError, unique } from '../harness/assert.js';

let server: TestServer;
let admin: ApiClient;

before(async () => {
  server = await startTestServer({ clock: 'frozen' });
  admin = await server.admin();
});
after(() => server.close());

const create = (path: string, body: Record<string, unknown>) => createRecord(admin, path, body);
const totp = (secret: string) => generate({ secret, epoch: Math.floor(server.clock.now().getTime() / 1000) });

test('an MFA posture check passes after the session passes MFA and fails once MFA is removed', async () => {
  const user = await createUser(server, admin, { api: 'client' });
  const check = await create('/posture-checks', { name: unique('pc-mfa'), typeId: 'MFA' });
  const service = await dialableService(admin, user.id, [check]);
  const dial = () => user.client.post('/sessions', { serviceId: service, type: 'Dial' });

  assertError(await dial(), 409, 'INVALID_POSTURE');

  assert.equal((await user.client.post('/current-identity/mfa')).status, 201);
  const detail = (await user.client.get('/current-identity/mfa')).body.data;
  const secret = new URL(detail.provisioningUrl).searchParams.get('secret')!;
  assert.equal((await user.client.post('/current-identity/mfa/verify', { code: await totp(secret) })).status, 200);

  const session = await dial();
  assert.equal(session.status, 201, JSON.stringify(session.body));
  const sessionId = session.body.data.id as string;

  server.clock.advance(30_000); // a new time step: the verifying code is not accepted twice
  const removed = await user.client.delete('/current-identity/mfa', {
    headers: { 'mfa-validation-code': await totp(secret) },
  });
  assert.equal(removed.status, 200, JSON.stringify(removed.body));
  assertError(await admin.get(`/sessions/${sessionId}`), 404, 'NOT_FOUND');
  assertError(await dial(), 409, 'INVALID_POSTURE');
});
