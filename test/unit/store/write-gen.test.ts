/**
 * The write generations (src/store/write-gen.ts) as real statements move them through an open store: reads
 * move nothing, every write moves `anyWriteGen`, and only writes that may change a principal (and not the
 * activity touch) move `principalGen`.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { openStore, withTx, type OpenedStore } from '../../../src/store/db.js';
import { anyWriteGen, markerGen, principalGen, TOUCH_API_SESSION_SQL } from '../../../src/store/write-gen.js';
import { touchApiSession } from '../../../src/store/api-sessions.js';
import { insertSessionIfAbsent } from '../../../src/store/sessions.js';

let store: OpenedStore;
before(async () => {
  store = await openStore(':memory:');
});
after(() => store.close());

async function moved(run: () => Promise<unknown>): Promise<{ any: number; principal: number; marker: number }> {
  const a = anyWriteGen();
  const p = principalGen();
  const m = markerGen();
  await run();
  return { any: anyWriteGen() - a, principal: principalGen() - p, marker: markerGen() - m };
}

test('reads move nothing', async () => {
  const m = await moved(() => sql`select count(*) as n from identities`.execute(store.db));
  assert.deepEqual(m, { any: 0, principal: 0, marker: 0 });
});

test('the activity touch is a write but not a principal write', async () => {
  assert.match(TOUCH_API_SESSION_SQL, /^update "api_sessions"/);
  const m = await moved(() => touchApiSession(store.db, 'none', new Date().toISOString()));
  assert.equal(m.principal, 0);
  assert.ok(m.any > 0);
});

test('writes to API sessions, identities and auth policies are principal writes', async () => {
  for (const q of [
    sql`delete from api_sessions where id = 'none'`,
    sql`update "identities" set "isAdmin" = 0 where id = 'none'`,
    sql`update auth_policies set name = name where id = 'none'`,
    sql`update api_sessions set "authQueries" = '[]' where id = 'none' returning id`,
  ]) {
    const m = await moved(() => q.execute(store.db));
    assert.ok(m.principal > 0, q.compile(store.db).sql);
  }
});

test('other writes move only anyWriteGen', async () => {
  const m = await moved(() => sql`delete from sessions where id = 'none'`.execute(store.db));
  assert.equal(m.principal, 0);
  assert.ok(m.any > 0);
  const tables = await moved(() =>
    sql`delete from "identities_roleAttributes" where "ownerId" = 'none'`.execute(store.db),
  );
  assert.equal(tables.principal, 0, 'a table whose name only contains "identities"');
});

test('DDL is a principal write; a transaction with a principal write moves it again at its end', async () => {
  const ddl = await moved(() => sql`create table if not exists wg_probe (x integer)`.execute(store.db));
  assert.ok(ddl.principal > 0);
  let inside = 0;
  const before = principalGen();
  await withTx(store.db, async (trx) => {
    await sql`delete from api_sessions where id = 'none'`.execute(trx);
    inside = principalGen();
  });
  assert.ok(inside > before);
  assert.ok(principalGen() > inside, 'the commit moves it again');
});

test('the hot path own writes (session insert, activity touch) leave the marker generation alone', async () => {
  const session = {
    id: 'none',
    createdAt: '',
    updatedAt: '',
    tags: {},
    isSystem: false,
    tokenHash: 'none',
    type: 'Dial',
    apiSessionId: 'none',
    serviceId: 'none',
    identityId: 'none',
  };
  // The insert fails its foreign keys here; what counts is that it was run.
  for (const run of [
    () => touchApiSession(store.db, 'none', new Date().toISOString()),
    () => insertSessionIfAbsent(store.db, session).catch(() => false),
  ]) {
    const m = await moved(run);
    assert.ok(m.any > 0);
    assert.equal(m.marker, 0);
    assert.equal(m.principal, 0);
  }
  // Any other write, and the end of any transaction, moves it.
  assert.ok((await moved(() => sql`delete from services where id = 'none'`.execute(store.db))).marker > 0);
  assert.ok((await moved(() => withTx(store.db, async () => undefined))).marker > 0);
});
