/**
 * `PUT /identities/{id}/trace`: tracing set for a duration, shown on the identity, off again by itself when the
 * controller's clock passes its end, or at once when disabled; bad input gets the error envelope.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkResponse } from '../harness/schemas.js';
import { assertError, assertFieldError } from '../harness/assert.js';
import { createIdentity, createUser, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';

let s: TestServer;
let admin: ApiClient;

before(async () => {
  s = await startTestServer({ clock: 'frozen' });
  admin = await s.admin();
});
after(() => s?.close());

test('trace on for a duration: the answer, the identity record, and the end by the clock', async () => {
  const id = await createIdentity(admin);
  const before = await admin.get(`/identities/${id}`);
  assert.deepEqual(before.body.data.tracing, { enabled: false });
  assert.equal(before.body.data.traceUntil, undefined, 'stored columns stay out of the record');

  const res = await admin.put(`/identities/${id}/trace`, {
    enabled: true,
    duration: '1h30m',
    traceId: 'trace-1',
    channels: ['sdk', 'router'],
  });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(checkResponse('management', '/identities/{id}/trace', 'PUT', 200, res.body), []);
  const until = s.clock.in(90 * 60_000);
  assert.deepEqual(res.body.data, { enabled: true, traceId: 'trace-1', until });

  const shown = await admin.get(`/identities/${id}`);
  assert.deepEqual(shown.body.data.tracing, { enabled: true, traceId: 'trace-1', until, channels: ['sdk', 'router'] });
  assert.deepEqual(checkResponse('management', '/identities/{id}', 'GET', 200, shown.body), []);
  const listed = await admin.get(`/identities?filter=${encodeURIComponent(`id = "${id}"`)}`);
  assert.equal(listed.body.data[0].tracing.enabled, true);

  // The admin's API session idles out over that time: log in again after each move of the clock.
  s.clock.advance(90 * 60_000 - 1);
  admin = await s.admin();
  assert.equal((await admin.get(`/identities/${id}`)).body.data.tracing.enabled, true);
  s.clock.advance(1);
  admin = await s.admin();
  assert.deepEqual((await admin.get(`/identities/${id}`)).body.data.tracing, { enabled: false });
});

test('a trace id is made when none is given; disabling ends tracing at once', async () => {
  const id = await createIdentity(admin);
  const on = await admin.put(`/identities/${id}/trace`, { enabled: true, duration: '10m' });
  assert.equal(on.status, 200, on.text);
  assert.match(on.body.data.traceId, /^[0-9a-f-]{36}$/);
  const off = await admin.put(`/identities/${id}/trace`, { enabled: false });
  assert.equal(off.status, 200, off.text);
  assert.deepEqual(off.body.data, { enabled: false });
  assert.deepEqual((await admin.get(`/identities/${id}`)).body.data.tracing, { enabled: false });
});

test('bad trace specs are refused with the error envelope; unknown identity 404; admins only', async () => {
  const id = await createIdentity(admin);
  assertFieldError(await admin.put(`/identities/${id}/trace`, { enabled: true }), 'duration');
  assertFieldError(await admin.put(`/identities/${id}/trace`, { enabled: true, duration: '10 minutes' }), 'duration');
  assertFieldError(await admin.put(`/identities/${id}/trace`, { enabled: true, duration: '0s' }), 'duration');
  assertFieldError(await admin.put(`/identities/${id}/trace`, { enabled: true, duration: '9000h' }), 'duration');
  assertFieldError(await admin.put(`/identities/${id}/trace`, { enabled: 'yes' }), 'enabled');
  assertFieldError(
    await admin.put(`/identities/${id}/trace`, { enabled: true, duration: '1m', channels: [1] }),
    'channels.0',
  );
  assertError(await admin.put('/identities/no-such-id/trace', { enabled: true, duration: '1m' }), 404, 'NOT_FOUND');
  assert.deepEqual((await admin.get(`/identities/${id}`)).body.data.tracing, { enabled: false });

  const { client } = await createUser(s, admin, { api: 'management' });
  assertError(await client.put(`/identities/${id}/trace`, { enabled: true, duration: '1m' }), 401, 'UNAUTHORIZED');
});
