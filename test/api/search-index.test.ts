/**
 * `contains`/`icontains` on names read the substring index (migration 0012); these requests check from outside
 * that the answers are those of the plain test: the same records in the same order with the same totalCount,
 * as records are created, renamed and deleted. The oracle is `not (name not contains …)`, which means the same
 * but is compiled without the index (a negated test reads every row), and the full listing filtered here.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRecord, startTestServer, type ApiClient, type TestServer } from '../harness/server.js';

let server: TestServer;
let admin: ApiClient;
let RUN = '';

before(async () => {
  server = await startTestServer();
  admin = await server.admin();
});
after(() => server.close());

interface Listed {
  names: string[];
  total: number;
}

async function list(path: string, filter: string, limit = 500): Promise<Listed> {
  const res = await admin.get(`${path}?filter=${encodeURIComponent(filter)}&limit=${limit}`);
  assert.equal(res.status, 200, res.text);
  return { names: res.body.data.map((r: { name: string }) => r.name), total: res.body.meta.pagination.totalCount };
}

/** Binary (code unit) order, as SQLite compares names. */
const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Asserts `name <op> "<needle>"` answers as its unindexed twin and as the full listing filtered here. */
async function agree(path: string, needle: string, op: 'contains' | 'icontains', sort: 'asc' | 'desc', limit = 500) {
  const q = JSON.stringify(needle);
  const indexed = await list(path, `name ${op} ${q} sort by name ${sort}`, limit);
  const plain = await list(path, `not (name not ${op} ${q}) sort by name ${sort}`, limit);
  assert.deepEqual(indexed, plain, `${path} ${op} ${q}`);
  const all = (await list(path, 'true')).names;
  const hit = (n: string) => (op === 'contains' ? n.includes(needle) : n.toUpperCase().includes(needle.toUpperCase()));
  const expected = all.filter(hit).sort(byName);
  if (sort === 'desc') expected.reverse();
  assert.equal(indexed.total, expected.length, `${path} ${op} ${q} totalCount`);
  assert.deepEqual(indexed.names, expected.slice(0, limit), `${path} ${op} ${q} names`);
}

const needles = (): [string, 'contains' | 'icontains'][] => [
  [`${RUN}-alpha`, 'contains'],
  [`${RUN}-ALPHA`, 'icontains'],
  ['Pha', 'icontains'],
  ['ph', 'contains'],
];

async function agreeAll(path: string) {
  for (const [needle, op] of needles()) {
    await agree(path, needle, op, 'desc');
    await agree(path, needle, op, 'asc', 3);
  }
}

for (const [path, body] of [
  ['/identities', { type: 'User', isAdmin: false }],
  ['/services', { encryptionRequired: true }],
  ['/edge-routers', { isTunnelerEnabled: true }],
] as const) {
  test(`${path}: indexed and plain answers agree across creates, renames and deletes`, async () => {
    // Tunneler routers own an identity of their name: each collection gets its own names.
    RUN = `s${path.length}${Date.now().toString(36)}`;
    const ids: string[] = [];
    for (const n of ['alpha-1', 'Alpha-2', 'alphabet', 'beta', 'ALPHA-3', 'gamma-alpha'])
      ids.push(await createRecord(admin, path, { name: `${RUN}-${n}`, ...body }));
    await agreeAll(path);
    assert.equal((await list(path, `name contains "${RUN}-alpha"`)).total, 2);

    // Renames by PATCH and PUT, then deletes.
    assert.equal((await admin.patch(`${path}/${ids[3]}`, { name: `${RUN}-alpha-renamed` })).status, 200);
    assert.equal((await admin.put(`${path}/${ids[0]}`, { name: `${RUN}-omega`, ...body })).status, 200);
    await agreeAll(path);
    assert.deepEqual((await list(path, `name contains "${RUN}-alpha" sort by name asc`)).names, [
      `${RUN}-alpha-renamed`,
      `${RUN}-alphabet`,
    ]);
    assert.equal((await admin.delete(`${path}/${ids[2]}`)).status, 200);
    assert.equal((await admin.delete(`${path}/${ids[3]}`)).status, 200);
    await agreeAll(path);
    assert.deepEqual((await list(path, `name icontains "${RUN}-alpha"`)).names.sort(byName), [
      `${RUN}-ALPHA-3`,
      `${RUN}-Alpha-2`,
    ]);
    for (const id of [ids[0], ids[1], ids[4], ids[5]]) assert.equal((await admin.delete(`${path}/${id}`)).status, 200);
    await agreeAll(path);
  });
}
