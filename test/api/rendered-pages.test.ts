/**
 * Identity list pages are kept rendered until the next write (src/model/rendered-pages.ts). A repeated listing
 * must answer exactly what rendering it anew would: after writes to the identities and to what their records
 * show (authenticators, API sessions), and when the clock alone changes a record (a lock or a trace ending).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRecord, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';

let server: TestServer;
let admin: ApiClient;
const RUN = `rp${Math.random().toString(36).slice(2, 8)}`;

before(async () => {
  server = await startTestServer({ clock: 'frozen' });
  admin = await server.admin();
});
after(() => server.close());

type Listed = Record<string, any>;

/** The same listing each time, asked twice in a row: both answers must be the same bytes. */
async function listing(): Promise<Listed[]> {
  const path = `/identities?filter=${encodeURIComponent(`name contains "${RUN}" sort by name`)}`;
  const first = await admin.get(path);
  const second = await admin.get(path);
  assert.equal(first.status, 200, first.text);
  assert.equal(second.text, first.text, 'a repeated listing answers the same bytes');
  assert.equal(first.body.meta.pagination.totalCount, first.body.data.length);
  assert.ok(Array.isArray(first.body.meta.filterableFields));
  assert.equal(first.body.meta.apiVersion, '0.0.1');
  return first.body.data as Listed[];
}

test('a kept page follows writes to the identities and to what their records show', async () => {
  const a = await createRecord(admin, '/identities', { name: `${RUN}-a`, type: 'User', isAdmin: false });
  let page = await listing();
  assert.deepEqual(
    page.map((r) => r.name),
    [`${RUN}-a`],
  );
  assert.equal(Object.keys(page[0]!.authenticators).length, 0);
  assert.equal(page[0]!.hasApiSession, false);

  await createRecord(admin, '/identities', { name: `${RUN}-b`, type: 'Device', isAdmin: false });
  page = await listing();
  assert.deepEqual(
    page.map((r) => r.name),
    [`${RUN}-a`, `${RUN}-b`],
  );

  // A password authenticator and a login change the record without touching the identity's row.
  await createRecord(admin, '/authenticators', {
    identityId: a,
    method: 'updb',
    username: `${RUN}-user`,
    password: 'rp-Passw0rd!',
  });
  page = await listing();
  assert.equal(page[0]!.authenticators.updb.username, `${RUN}-user`);
  const login = await server.client().post('/authenticate?method=password', {
    username: `${RUN}-user`,
    password: 'rp-Passw0rd!',
  });
  assert.equal(login.status, 200, login.text);
  page = await listing();
  assert.equal(page[0]!.hasApiSession, true);

  assert.equal((await admin.patch(`/identities/${a}`, { tags: { k: 'v' } })).status, 200);
  page = await listing();
  assert.deepEqual(page[0]!.tags, { k: 'v' });
});

test('a kept page changes when the clock ends a lock or a trace, with no write', async () => {
  const id = await createRecord(admin, '/identities', { name: `${RUN}-c`, type: 'User', isAdmin: false });
  assert.equal((await admin.post(`/identities/${id}/disable`, { durationMinutes: 1 })).status, 200);
  assert.equal(
    (await admin.put(`/identities/${id}/trace`, { enabled: true, duration: '2m', traceId: 't-1' })).status,
    200,
  );
  const find = (page: Listed[]) => page.find((r) => r.id === id)!;
  let rec = find(await listing());
  assert.equal(rec.disabled, true);
  assert.equal(rec.tracing.enabled, true);

  server.clock.advance(61_000);
  rec = find(await listing());
  assert.equal(rec.disabled, false, 'the lock ended by the clock');
  assert.equal(rec.tracing.enabled, true);

  server.clock.advance(60_000);
  rec = find(await listing());
  assert.equal(rec.tracing.enabled, false, 'the trace ended by the clock');
});
