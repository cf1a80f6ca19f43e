/**
 * A PostgreSQL store survives the server ending its connections (a restart, a failover, an administrator): a
 * query running when its connection ends fails, and neither that nor the pool's idle connections ending throws
 * in the process (pg emits 'error' on a lent-out client after failing its query; unheard, Node throws it).
 * The next queries open new connections.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import pg from 'pg';
import { dynamic } from '../../../src/store/db.js';
import { PG_SERVER, postgresSkip, postgresStoreForTests } from '../../harness/pg.js';

const skip = await postgresSkip();
const pgStore = postgresStoreForTests(skip);

/** Ends every connection to the test database but the caller's, as `pg_terminate_backend` does. */
async function terminateAll(): Promise<number> {
  const admin = new pg.Client({ connectionString: PG_SERVER });
  await admin.connect();
  try {
    const { rows } = await admin.query(
      `select pg_terminate_backend(pid) as ended from pg_stat_activity
       where datname = $1 and pid <> pg_backend_pid()`,
      [new URL(pgStore.url).pathname.slice(1)],
    );
    return rows.length;
  } finally {
    await admin.end();
  }
}

test(
  'a query whose connection is ended fails; the process goes on and the next queries succeed',
  { skip },
  async () => {
    const db = dynamic(pgStore.store.db);
    const uncaught: unknown[] = [];
    const hear = (e: unknown): void => void uncaught.push(e);
    process.on('uncaughtException', hear);
    try {
      // Some idle connections in the pool, one lent out running a query, and one lent out to a transaction that
      // is between two statements (no query running: the client alone hears of its connection's end).
      await Promise.all([1, 2, 3].map(() => sql`select pg_sleep(0.05)`.execute(db)));
      const running = sql`select pg_sleep(3)`.execute(db);
      const between = db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
        await new Promise((r) => setTimeout(r, 600));
        await sql`select 2`.execute(trx);
      });
      const outcome = (p: Promise<unknown>) =>
        p.then(
          () => 'answered',
          (e: Error) => e.message,
        );
      const outcomes = [outcome(running), outcome(between)];
      await new Promise((r) => setTimeout(r, 200));
      assert.ok((await terminateAll()) >= 3, 'the store had connections to end');
      const [first, second] = await Promise.all(outcomes);
      assert.match(first!, /terminat/i);
      assert.notEqual(second, 'answered');
      // Let the sockets' end events run.
      await new Promise((r) => setTimeout(r, 200));
      assert.deepEqual(uncaught, [], 'nothing was thrown in the process');
      for (let i = 0; i < 5; i++) {
        const { rows } = await sql<{ one: number }>`select 1 as one`.execute(db);
        assert.equal(rows[0]?.one, 1);
      }
    } finally {
      process.off('uncaughtException', hear);
    }
  },
);
