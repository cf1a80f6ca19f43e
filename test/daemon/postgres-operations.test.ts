/**
 * Operations of controllers on PostgreSQL that one process alone cannot show: the periodic work (the sweeps)
 * runs on one of the replicas sharing a database, not on each, and another takes it over when that one's
 * connection ends or it stops; an integrity scan runs on one replica at a time, and its results are answered by
 * every replica; `/health` answers 503 while the
 * database is unreachable (its connections ended, new ones refused) and 200 once it is back. Replicas run in
 * this process on one database, each with its own data dir.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { claimKey } from '../../src/store/pg/claims.js';
import { assertError } from '../harness/assert.js';
import { freshDatabase, PG_SERVER, postgresSkip } from '../harness/pg.js';
import { startTestServer, type TestServer } from '../harness/server.js';

const skip = await postgresSkip();

const HOUR = 3_600_000;

/** Runs `fn` on a connection to the PostgreSQL server's maintenance database (`test`). */
async function onServer<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: PG_SERVER });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

const nameOf = (url: string) => decodeURIComponent(new URL(url).pathname.slice(1));

/** API sessions in the database, counted past the controllers. */
const apiSessions = (url: string) =>
  onServer(async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      return Number((await c.query('select count(*) as n from api_sessions')).rows[0].n);
    } finally {
      await c.end();
    }
  });

/** Ends the connection holding the periodic-work claim in `database` (as if its replica's socket died). */
const endClaimConnection = (database: string) =>
  onServer(async (c) => {
    const { rowCount } = await c.query(
      `select pg_terminate_backend(l.pid) from pg_locks l join pg_database d on d.oid = l.database
       where l.locktype = 'advisory' and l.objid = $1 and l.granted and d.datname = $2`,
      [claimKey('periodic-work'), database],
    );
    return rowCount;
  });

describe('work that runs once among replicas on one PostgreSQL database', { skip }, () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let a: TestServer;
  let b: TestServer;

  before(async () => {
    database = await freshDatabase();
    // Frozen clocks: nothing sweeps on its own; the tests sweep both replicas at once.
    a = await startTestServer({ db: database.url, clock: 'frozen' });
    b = await startTestServer({ db: database.url, clock: 'frozen' });
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await database?.drop();
  });

  test('a sweep runs on one replica, not on both; the same one keeps running it', async () => {
    await a.admin();
    await b.admin();
    assert.equal(await apiSessions(database.url), 2);
    a.clock.advance(HOUR);
    b.clock.advance(HOUR);
    const first = await Promise.all([a.sweep(), b.sweep()]);
    assert.deepEqual(first.filter(Boolean), [true], `exactly one replica swept: ${first}`);
    assert.equal(await apiSessions(database.url), 0, 'the expired API sessions are gone');
    for (let round = 0; round < 5; round++) {
      assert.deepEqual(await Promise.all([a.sweep(), b.sweep()]), first, `round ${round}: the same replica sweeps`);
    }
  });

  test('when the sweeping replica loses its connection, one replica (not two) runs the next sweep', async () => {
    assert.equal(await endClaimConnection(nameOf(database.url)), 1);
    const next = await Promise.all([a.sweep(), b.sweep()]);
    assert.deepEqual(next.filter(Boolean), [true], `exactly one replica swept: ${next}`);
  });

  test('an integrity scan runs on one replica at a time', async () => {
    const adminA = await a.admin();
    const adminB = await b.admin();
    assert.equal((await adminA.post('/database/check-data-integrity')).status, 202);
    const other = await adminB.post('/database/check-data-integrity');
    assertError(other, 429, 'RATE_LIMITED');
    assert.match(other.body.error.message, /running on another controller/);
    for (let i = 0; i < 1200 && (await adminA.get('/database/data-integrity-results')).body.data.inProgress; i++)
      await new Promise((r) => setTimeout(r, 25));
    const done = (await adminA.get('/database/data-integrity-results')).body.data;
    assert.equal(done.inProgress, false);
    assert.deepEqual(done.results, []);
    assert.equal((await adminB.post('/database/check-data-integrity')).status, 202, 'the claim was given up');
  });

  test('the results of a scan run on one replica are answered by the other; one cut short is shown ended', async () => {
    const adminA = await a.admin();
    const adminB = await b.admin();
    const results = async (admin: typeof adminA) => (await admin.get('/database/data-integrity-results')).body.data;
    for (let i = 0; i < 1200 && ((await results(adminA)).inProgress || (await results(adminB)).inProgress); i++)
      await new Promise((r) => setTimeout(r, 25));
    assert.equal((await adminA.post('/database/check-data-integrity')).status, 202);
    for (let i = 0; i < 1200 && (await results(adminA)).inProgress; i++) await new Promise((r) => setTimeout(r, 25));
    const onA = await results(adminA);
    assert.equal(onA.inProgress, false);
    assert.notEqual(onA.startTime, '0001-01-01T00:00:00.000Z');
    assert.deepEqual(await results(adminB), onA, 'the other replica answers the same results');
    // A scan its controller left running (its row says so, nobody holds its claim) is shown ended.
    const c = new pg.Client({ connectionString: database.url });
    await c.connect();
    try {
      await c.query(`update integrity_results set details = jsonb_set(details::jsonb, '{inProgress}', 'true')::text`);
    } finally {
      await c.end();
    }
    const cut = await results(adminB);
    assert.equal(cut.inProgress, false);
    assert.match(cut.error, /stopped with the controller that ran it/);
  });

  test('when the sweeping replica stops, the other runs the sweeps', async () => {
    const [sweeper, other] = (await a.sweep()) ? [a, b] : [b, a];
    await sweeper.close();
    assert.equal(await other.sweep(), true);
  });
});

describe('a stopped replica’s periodic work is taken over within a round', { skip }, () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  const replicas: TestServer[] = [];

  before(async () => {
    database = await freshDatabase();
    // Sweeping in the background every 500 ms (a quarter of the 2 s idle timeout), on frozen clocks.
    const opts = {
      db: database.url,
      clock: 'frozen' as const,
      backgroundSweep: true,
      yaml: 'edge:\n  api:\n    sessionTimeout: 2s\n',
    };
    replicas.push(await startTestServer(opts));
    replicas.push(await startTestServer({ ...opts }));
  });
  after(async () => {
    for (const r of replicas) await r.close();
    await database?.drop();
  });

  test('the survivor sweeps within a round of the other stopping', async () => {
    // Whichever claimed the work first is the one stopped.
    const [gone, survivor] = (await replicas[0]!.sweep()) ? [replicas[0]!, replicas[1]!] : [replicas[1]!, replicas[0]!];
    await gone.close();
    await survivor.admin();
    assert.equal(await apiSessions(database.url), 1);
    survivor.clock.advance(HOUR);
    const stopped = Date.now();
    while ((await apiSessions(database.url)) > 0) {
      assert.ok(Date.now() - stopped < 5000, 'swept by the survivor within 5 s (rounds of 500 ms)');
      await new Promise((r) => setTimeout(r, 50));
    }
  });
});

describe('/health on PostgreSQL', { skip }, () => {
  let s: TestServer;
  let database: string;

  before(async () => {
    s = await startTestServer({ store: 'postgres' });
    database = nameOf(s.dbUrl!);
  });
  after(async () => {
    await onServer((c) => c.query(`alter database "${database}" allow_connections true`)).catch(() => {});
    await s?.close();
  });

  const health = () => s.request('GET', '/health');

  test('503 while the database refuses connections, 200 again once it takes them', async () => {
    const ok = await health();
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body.data, { status: 'ok', store: 'postgres' });

    await onServer(async (c) => {
      await c.query(`alter database "${database}" allow_connections false`);
      await c.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = $1`, [database]);
    });
    const down = await health();
    assert.equal(down.status, 503, down.text);
    assert.equal(down.body.error.code, 'TIMEOUT');
    assert.match(down.body.error.message, /PostgreSQL/);
    assert.equal((await health()).status, 503, 'and stays so while it is unreachable');

    await onServer((c) => c.query(`alter database "${database}" allow_connections true`));
    const back = Date.now();
    let status = 0;
    while ((status = (await health()).status) !== 200 && Date.now() - back < 5000)
      await new Promise((r) => setTimeout(r, 100));
    assert.equal(status, 200, 'healthy again within 5 s, without a restart');
  });
});
