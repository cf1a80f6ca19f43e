/**
 * Group commit on PostgreSQL (src/store/tx-batch.ts, src/store/runtime.ts): transactions that queue while one
 * holds the writer lock run in one transaction under one lock, each in its own savepoint; none is answered
 * before the commit (another connection already sees its rows then); one that fails, a constraint violation
 * included (which aborts a PostgreSQL transaction up to the savepoint), is undone alone and gets its own error.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { sql } from 'kysely';
import { dynamic, withTx, type Executor } from '../../../src/store/db.js';
import { runtimeOf } from '../../../src/store/runtime.js';
import { touchApiSession } from '../../../src/store/api-sessions.js';
import { postgresSkip, postgresStoreForTests } from '../../harness/pg.js';

const skip = await postgresSkip();
const pgStore = postgresStoreForTests(skip);

const insert = (table: string, k: string) => (trx: Executor) =>
  sql`insert into ${sql.table(table)} (k) values (${k})`.execute(dynamic(trx));

async function keysOf(c: pg.Client, table: string): Promise<string[]> {
  return (await c.query<{ k: string }>(`select k from ${table} order by k`)).rows.map((r) => r.k);
}

/**
 * Runs `fn` with a new table of keys and a second connection, outside the store's pool (what another client of
 * the database sees), with the batch's time bound lifted, so a loaded machine does not split a batch it counts.
 */
async function withTable(table: string, fn: (other: pg.Client) => Promise<void>): Promise<void> {
  await sql`create table ${sql.table(table)} (k text primary key)`.execute(dynamic(pgStore.store.db));
  const other = new pg.Client({ connectionString: pgStore.url });
  await other.connect();
  const batcher = runtimeOf(pgStore.store.db)!.batcher;
  const bound = batcher.maxBatchMs;
  batcher.maxBatchMs = 60_000;
  try {
    await fn(other);
  } finally {
    batcher.maxBatchMs = bound;
    await other.end();
  }
}

test('concurrent transactions share one commit; each is answered only once another connection sees it', { skip }, () =>
  withTable('gc_all', async (other) => {
    const db = pgStore.store.db;
    const before = pgStore.store.commits();
    const names = Array.from({ length: 8 }, (_, i) => `k${i}`);
    /** What the other connection saw of the batch's earlier rows while each member ran. */
    const seenWhileRunning: string[][] = [];
    /** What it saw of each member's own row once that member was answered. */
    const seenWhenAnswered: boolean[] = [];
    await Promise.all(
      names.map((k, i) =>
        withTx(db, async (trx) => {
          await insert('gc_all', k)(trx);
          if (i > 0) seenWhileRunning.push(await keysOf(other, 'gc_all'));
        }).then(async () => {
          seenWhenAnswered[i] = (await keysOf(other, 'gc_all')).includes(k);
        }),
      ),
    );
    const after = pgStore.store.commits();
    assert.equal(after.members - before.members, 8);
    assert.equal(after.batches - before.batches, 1, 'one transaction, one commit, for the eight');
    const none = Array.from({ length: 7 }, () => []);
    assert.deepEqual(seenWhileRunning, none, 'nothing was visible before the commit');
    assert.deepEqual(
      seenWhenAnswered,
      names.map(() => true),
      'each answered after its commit',
    );
    assert.deepEqual(await keysOf(other, 'gc_all'), names);
  }),
);

test('a member that violates a constraint or throws after writing is undone alone; the others commit', { skip }, () =>
  withTable('gc_fail', async (other) => {
    const db = pgStore.store.db;
    await withTx(db, insert('gc_fail', 'taken'));
    const before = pgStore.store.commits();
    const results = await Promise.allSettled([
      withTx(db, insert('gc_fail', 'a')),
      withTx(db, async (trx) => {
        await insert('gc_fail', 'b')(trx);
        await insert('gc_fail', 'taken')(trx); // a unique violation: PostgreSQL aborts up to the savepoint
      }),
      withTx(db, async (trx) => {
        await insert('gc_fail', 'c')(trx);
        throw new Error('refused after writing');
      }),
      withTx(db, insert('gc_fail', 'd')),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'rejected', 'fulfilled'],
    );
    assert.equal((results[1] as PromiseRejectedResult).reason.code, '23505', 'its own unique violation');
    assert.equal(((results[2] as PromiseRejectedResult).reason as Error).message, 'refused after writing');
    assert.equal(pgStore.store.commits().batches - before.batches, 1, 'the failures did not end the batch');
    assert.deepEqual(await keysOf(other, 'gc_fail'), ['a', 'd', 'taken']);
  }),
);

test('a batch takes the writer lock: another holder of it keeps the whole batch waiting', { skip }, () =>
  withTable('gc_lock', async (other) => {
    const db = pgStore.store.db;
    await other.query('begin');
    await other.query(`select pg_advisory_xact_lock(${0x65646765})`);
    let answered = 0;
    const writes = ['x', 'y', 'z'].map((k) => withTx(db, insert('gc_lock', k)).then(() => answered++));
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(answered, 0, 'no member ran past the lock another transaction holds');
    await other.query('commit');
    await Promise.all(writes);
    assert.deepEqual(await keysOf(other, 'gc_lock'), ['x', 'y', 'z']);
  }),
);

test("an activity touch inside a member leaves the batch's commit waiting for the log flush", { skip }, async () => {
  const db = pgStore.store.db;
  let setting = '';
  const done = withTx(db, async (trx) => {
    // Test databases commit without waiting (harness/pg.ts): on for this transaction, as on a production server.
    await sql`set local synchronous_commit = on`.execute(trx);
    // An API session to touch, without its identity and authenticator (foreign keys off), all undone below.
    await sql`set local session_replication_role = replica`.execute(trx);
    const now = new Date().toISOString();
    await sql`insert into api_sessions (id, "createdAt", "updatedAt", "tokenHash", "identityId", "authenticatorId",
      "lastActivityAt") values ('touched', ${now}, ${now}, 'h', 'i', 'a', ${now})`.execute(trx);
    await touchApiSession(trx, 'touched', now);
    setting = (await sql<{ s: string }>`select current_setting('synchronous_commit') as s`.execute(trx)).rows[0]!.s;
    throw new Error('undone');
  });
  await assert.rejects(done, /undone/);
  assert.equal(setting, 'on');
});
