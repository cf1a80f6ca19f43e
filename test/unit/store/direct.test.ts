/**
 * Hot statements run on the connection directly only when no transaction holds it (src/store/direct.ts):
 * inside a transaction they see its uncommitted writes, and from another flow while a transaction is open
 * they wait for it like any kysely query, never joining it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { groupedWrite, hotRows, hotWrite } from '../../../src/store/direct.js';
import { withTx } from '../../../src/store/db.js';
import { feedOf } from '../../../src/store/runtime.js';
import { openTestStore, type TestStore } from '../../harness/store.js';

let t: TestStore;
before(async () => {
  t = await openTestStore();
  await t.store.raw.exec('create table hot (k text primary key, v integer not null)');
});
after(() => t.close());

const value = async (db = t.store.db) =>
  (await hotRows<{ v: number }>(db, 'select v from hot where k = ?', ['a']))[0]?.v;

test('outside a transaction: reads and writes run directly and count as writes', async () => {
  const feed = feedOf(t.store.db)!;
  const deps = feed.deps(['hot']);
  const before = feed.version(deps);
  assert.equal(await hotWrite(t.store.db, 'insert into hot (k, v) values (?, ?)', ['a', 1]), 1);
  assert.ok(feed.version(deps) > before, 'a direct write reaches the change feed');
  assert.equal(await value(), 1);
  assert.equal(await hotWrite(t.store.db, 'insert into hot (k, v) values (?, ?) on conflict do nothing', ['a', 9]), 0);
});

test('inside a transaction: its own uncommitted write is seen; a rollback leaves nothing', async () => {
  await assert.rejects(
    withTx(t.store.db, async (trx) => {
      await hotWrite(trx, 'update hot set v = ? where k = ?', [2, 'a']);
      assert.equal(await value(trx), 2);
      throw new Error('roll back');
    }),
    /roll back/,
  );
  assert.equal(await value(), 1);
});

/**
 * Another flow's transaction that writes `v` to row `k` and stays open (holding the connection) until
 * `release()`, then rolls back; answers once it holds the connection.
 */
async function heldTransaction(k: string, v: number): Promise<{ release: () => void; done: Promise<unknown> }> {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let inside!: () => void;
  const started = new Promise<void>((r) => (inside = r));
  const done = withTx(t.store.db, async (trx) => {
    await hotWrite(trx, 'update hot set v = ? where k = ?', [v, k]);
    inside();
    await held;
    throw new Error('roll back');
  }).catch(() => undefined);
  await started;
  return { release, done };
}

test('another flow during an open transaction waits for it instead of joining it', async () => {
  const { release, done: tx } = await heldTransaction('a', 3);
  assert.equal(t.store.raw.inTransaction, true);
  // Issued while the transaction is open: must not see (or commit) its write.
  const outside = value();
  const write = hotWrite(t.store.db, 'insert into hot (k, v) values (?, ?)', ['b', 5]);
  release();
  await tx;
  assert.equal(await outside, 1);
  assert.equal(await write, 1);
  assert.equal((await hotRows<{ v: number }>(t.store.db, 'select v from hot where k = ?', ['b']))[0]?.v, 5);
});

test('inside withTx the transaction runs its statements on the connection it holds', async () => {
  await withTx(t.store.db, async (trx) => {
    await hotWrite(trx, 'update hot set v = ? where k = ?', [7, 'a']);
    // Read straight from the connection: the transaction's write is there, uncommitted.
    assert.equal(t.store.raw.inTransaction, true);
    assert.equal((t.store.raw.prepare('select v from hot where k = ?').get('a') as { v: number }).v, 7);
  });
  assert.equal(await value(), 7);
  await hotWrite(t.store.db, 'update hot set v = ? where k = ?', [1, 'a']);
});

const GROUPED = 'insert into hot (k, v) values (?, ?) on conflict do nothing';

test('grouped writes of one turn share a commit; each answers its own change or error', async () => {
  await t.store.raw.exec('create table child (k text primary key references hot(k))');
  const CHILD = 'insert into child (k) values (?)';
  const feed = feedOf(t.store.db)!;
  const deps = { hot: feed.deps(['hot']), markers: feed.deps(['access_markers']) };
  const versions = { hot: feed.version(deps.hot), markers: feed.version(deps.markers) };
  const results = await Promise.allSettled([
    groupedWrite(t.store.db, GROUPED, ['g1', 1]),
    groupedWrite(t.store.db, GROUPED, ['g2', 2]),
    groupedWrite(t.store.db, GROUPED, ['g1', 3]), // the same key: nothing changed
    groupedWrite(t.store.db, CHILD, ['no-such-parent']), // a foreign key violation: this one only
    groupedWrite(t.store.db, CHILD, ['g2']),
  ]);
  assert.deepEqual(
    results.map((r) => (r.status === 'fulfilled' ? r.value : 'rejected')),
    [1, 1, 0, 'rejected', 1],
  );
  assert.match(String((results[3] as PromiseRejectedResult).reason), /FOREIGN KEY/);
  assert.equal(t.store.raw.inTransaction, false, 'the batch committed');
  assert.equal(feed.version(deps.markers), versions.markers, 'the batch wrote no access marker');
  assert.ok(feed.version(deps.hot) > versions.hot, 'the batch reached what reads its tables');
  assert.equal((t.store.raw.prepare("select k from hot where k like 'g%'").all() as unknown[]).length, 2);
});

test('grouped writes while another flow holds a transaction wait for it, one by one', async () => {
  const { release, done: tx } = await heldTransaction('g1', 8);
  const writes = Promise.all([
    groupedWrite(t.store.db, GROUPED, ['h1', 1]),
    groupedWrite(t.store.db, GROUPED, ['h2', 2]),
  ]);
  await new Promise((r) => setImmediate(r));
  release();
  await tx;
  assert.deepEqual(await writes, [1, 1]);
  assert.equal((await hotRows<{ v: number }>(t.store.db, 'select v from hot where k = ?', ['g1']))[0]?.v, 1);
});
