/**
 * Listing totals and pages are kept until the next write (src/store/list-cache.ts). The same request, repeated
 * around each kind of write, must answer exactly what the store holds: creates, renames into and out of the
 * filter, deletes, and writes that change a listed record without moving it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRecord, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';

let server: TestServer;
let admin: ApiClient;
const RUN = `lc${Math.random().toString(36).slice(2, 8)}`;

before(async () => {
  server = await startTestServer();
  admin = await server.admin();
});
after(() => server.close());

/** The same request each time: a substring search (index and re-check), sorted by name, one page of 3. */
async function search(): Promise<{ names: string[]; total: number; tags: unknown[] }> {
  const filter = `name contains "${RUN}-m" sort by name desc limit 3`;
  const res = await admin.get(`/identities?filter=${encodeURIComponent(filter)}`);
  assert.equal(res.status, 200, res.text);
  const data = res.body.data as { name: string; tags: unknown }[];
  return { names: data.map((r) => r.name), total: res.body.meta.pagination.totalCount, tags: data.map((r) => r.tags) };
}

async function expect(names: string[], total: number) {
  // Twice: the second answer is the kept one.
  for (let i = 0; i < 2; i++) {
    const got = await search();
    assert.deepEqual({ names: got.names, total: got.total }, { names, total });
  }
}

const mk = (n: string) => createRecord(admin, '/identities', { name: n, type: 'User', isAdmin: false });
const rename = async (id: string, name: string) =>
  assert.equal((await admin.patch(`/identities/${id}`, { name })).status, 200);

test('a repeated search stays exact across creates, renames in both directions and deletes', async () => {
  await expect([], 0);
  const a = await mk(`${RUN}-m1`);
  await expect([`${RUN}-m1`], 1);
  const b = await mk(`${RUN}-m2`);
  const c = await mk(`${RUN}-x3`);
  await expect([`${RUN}-m2`, `${RUN}-m1`], 2);
  await rename(c, `${RUN}-m3`); // into the filter, first on the page
  await expect([`${RUN}-m3`, `${RUN}-m2`, `${RUN}-m1`], 3);
  const d = await mk(`${RUN}-m4`); // the page is full: m1 leaves it, the total still counts it
  await expect([`${RUN}-m4`, `${RUN}-m3`, `${RUN}-m2`], 4);
  await rename(d, `${RUN}-y4`); // out of the filter
  await expect([`${RUN}-m3`, `${RUN}-m2`, `${RUN}-m1`], 3);
  await rename(a, `${RUN}-m9`); // within the filter, moves to the front
  await expect([`${RUN}-m9`, `${RUN}-m3`, `${RUN}-m2`], 3);
  assert.equal((await admin.delete(`/identities/${b}`)).status, 200);
  await expect([`${RUN}-m9`, `${RUN}-m3`], 2);
  assert.equal((await admin.delete(`/identities/${c}`)).status, 200);
  assert.equal((await admin.delete(`/identities/${a}`)).status, 200);
  await expect([], 0);
});

test('a write that leaves the page as it is still shows in the listed records', async () => {
  const id = await mk(`${RUN}-m5`);
  assert.deepEqual((await search()).tags, [{}]);
  assert.equal((await admin.patch(`/identities/${id}`, { tags: { k: 'v' } })).status, 200);
  const got = await search();
  assert.deepEqual(
    { names: got.names, total: got.total, tags: got.tags },
    {
      names: [`${RUN}-m5`],
      total: 1,
      tags: [{ k: 'v' }],
    },
  );
});
