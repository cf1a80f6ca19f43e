/**
 * Group commit (src/store/tx-batch.ts): transactions that arrive together share one commit, each in its own
 * savepoint; one that fails is undone alone; none is answered before the commit; the write gate holds new
 * ones back, and the direct writes outside a transaction too.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openStore, withTx, type OpenedStore } from '../../../src/store/db.js';
import { runtimeOf, writeGateOf } from '../../../src/store/runtime.js';
import { groupedWrite, hotWrite } from '../../../src/store/direct.js';

const GROUPED = 'insert into t (k) values (?) /* grouped in a test */';

async function withStore(fn: (s: OpenedStore) => Promise<void>): Promise<void> {
  const store = await openStore(':memory:');
  try {
    await sql`create table t (k text primary key)`.execute(store.db);
    await fn(store);
  } finally {
    await store.close();
  }
}

const keys = (s: OpenedStore) => (s.raw.prepare('select k from t order by k').all() as { k: string }[]).map((r) => r.k);
const insert = (k: string) => (trx: Parameters<Parameters<typeof withTx>[1]>[0]) =>
  sql`insert into t (k) values (${k})`.execute(trx);

test('transactions begun in the same turn share one commit and all land', async () => {
  await withStore(async (s) => {
    const before = s.commits();
    const names = Array.from({ length: 10 }, (_, i) => `k${i}`);
    await Promise.all(names.map((k) => withTx(s.db, insert(k))));
    const after = s.commits();
    assert.equal(after.members - before.members, 10);
    assert.equal(after.batches - before.batches, 1, 'one commit for the ten');
    assert.deepEqual(keys(s), names);
  });
});

test('a member that throws after writing is undone alone, and gets its own error', async () => {
  await withStore(async (s) => {
    const results = await Promise.allSettled([
      withTx(s.db, insert('a')),
      withTx(s.db, async (trx) => {
        await insert('b')(trx);
        throw new Error('refused after writing');
      }),
      withTx(s.db, insert('a')), // a constraint failure inside SQLite: undone alone as well
      withTx(s.db, insert('c')),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'rejected', 'fulfilled'],
    );
    assert.equal(((results[1] as PromiseRejectedResult).reason as Error).message, 'refused after writing');
    assert.match(String((results[2] as PromiseRejectedResult).reason), /UNIQUE/);
    assert.deepEqual(keys(s), ['a', 'c']);
    assert.equal(s.raw.inTransaction, false);
  });
});

test('no member is answered before the batch commits', async () => {
  await withStore(async (s) => {
    const events: string[] = [];
    const first = withTx(s.db, async (trx) => {
      await insert('x')(trx);
      events.push('first ran');
    }).then(() => events.push('first answered'));
    const second = withTx(s.db, async (trx) => {
      await insert('y')(trx);
      events.push('second ran');
    }).then(() => events.push('second answered'));
    await Promise.all([first, second]);
    assert.deepEqual(events.slice(0, 2), ['first ran', 'second ran']);
  });
});

test('a closed write gate holds new transactions until it opens', async () => {
  await withStore(async (s) => {
    const gate = writeGateOf(s.db)!;
    gate.close();
    let done = false;
    const pending = withTx(s.db, insert('held')).then(() => (done = true));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(done, false, 'the transaction waits at the closed gate');
    assert.deepEqual(keys(s), []);
    assert.equal(gate.waits, 1);
    gate.open();
    await pending;
    assert.deepEqual(keys(s), ['held']);
  });
});

test('direct writes outside a transaction, single or grouped, wait at a closed gate too', async () => {
  await withStore(async (s) => {
    const gate = writeGateOf(s.db)!;
    gate.close();
    const single = hotWrite(s.db, 'insert into t (k) values (?)', ['single']);
    const grouped = groupedWrite(s.db, GROUPED, ['grouped']);
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(keys(s), [], 'nothing is written while the log is being cut');
    gate.open();
    assert.deepEqual(await Promise.all([single, grouped]), [1, 1]);
    assert.deepEqual(keys(s), ['grouped', 'single']);
  });
});

test('after a commit of several, the next waits for as many writers instead of committing the first alone', async () => {
  await withStore(async (s) => {
    // The wait for the cohort is lifted from 2 ms: a loaded machine may pause this process longer than that
    // between the writers' turns. What is tested is that the batch waits for them, not how long.
    runtimeOf(s.db)!.batcher!.cohortWaitMs = 1000;
    // Four writers share a commit...
    await Promise.all(['a', 'b', 'c', 'd'].map((k) => withTx(s.db, insert(k))));
    const before = s.commits();
    // ...then come back one by one, a few turns of the event loop apart (their next requests being read). The
    // first no longer commits alone, leaving the others to the next commit: cohorts that would last.
    const again = ['e', 'f', 'g', 'h'].map(async (k, i) => {
      for (let t = 0; t < 6 * i; t++) await new Promise((r) => setImmediate(r));
      await withTx(s.db, insert(k));
    });
    await Promise.all(again);
    const after = s.commits();
    assert.equal(after.members - before.members, 4);
    assert.equal(after.batches - before.batches, 1, 'the four share one commit again');
    assert.deepEqual(keys(s), ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']);
  });
});

test('a lone writer does not wait: its commits hold one transaction each', async () => {
  await withStore(async (s) => {
    const before = s.commits();
    for (let i = 0; i < 5; i++) await withTx(s.db, insert(`k${i}`));
    const after = s.commits();
    assert.equal(after.batches - before.batches, 5);
  });
});

test('transactions that cannot begin (the store closed) are refused, not retried without end', async () => {
  const store = await openStore(':memory:');
  await sql`create table t (k text primary key)`.execute(store.db);
  const db = store.db;
  await store.close();
  // Without the refusal the batcher retried the first member in a loop of microtasks: this timer never fired.
  const watchdog = new Promise<string>((r) => setTimeout(() => r('the event loop is still turning'), 50));
  const results = await Promise.allSettled([withTx(db, insert('a')), withTx(db, insert('b'))]);
  assert.deepEqual(
    results.map((r) => r.status),
    ['rejected', 'rejected'],
  );
  assert.equal(await watchdog, 'the event loop is still turning');
});
