/**
 * Every table of a PostgreSQL store moves its change counter (migration 0015) on every write other replicas
 * must learn of: each table has its trigger, and a table with untraced columns lists every other column, so a
 * column added by a later migration without being added to its trigger fails here (`replica_leases`, the
 * replicas' own bookkeeping, is the exception: nothing caches it). A replica learns of another's committed
 * write from its notice, and acknowledges it before the writer's `published()` settles; outside its lease it
 * reads the counters when asked, the asks of one turn sharing one read, and its heartbeat stops while no request
 * comes (pg/replica-changes.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { dynamic, openStore } from '../../../src/store/db.js';
import { runtimeOf } from '../../../src/store/runtime.js';
import { storeChangesTriggerName, tracedEvents } from '../../../src/store/migrations/0015-change-log.js';
import { postgresSkip, postgresStoreForTests } from '../../harness/pg.js';
import { COUNTERS_APPLICATION, HEARTBEAT_MS, IDLE_MS } from '../../../src/store/pg/replica-changes.js';

const skip = await postgresSkip();

/** Trigger events as a sorted list, an `update of` with its columns sorted (PostgreSQL reorders both). */
const normalized = (events: string): string[] =>
  events
    .toLowerCase()
    .replace(/"/g, '')
    .split(' or ')
    .map((e) => e.replace(/^update of (.+)$/, (_, cols: string) => `update of ${cols.split(', ').sort().join(',')}`))
    .sort();
const pgStore = postgresStoreForTests(skip);

test('every table has its change-counter trigger, over every column it must trace', { skip }, async () => {
  const db = dynamic(pgStore.store.db);
  const { rows } = await sql<{ table: string; columns: string[] }>`
    select c.table_name as "table", array_agg(c.column_name::text order by c.ordinal_position) as columns
    from information_schema.columns c join information_schema.tables t
      on t.table_schema = c.table_schema and t.table_name = c.table_name
    where c.table_schema = current_schema() and t.table_type = 'BASE TABLE'
      and c.table_name not in ('schema_migrations', 'store_changes', 'replica_leases')
    group by c.table_name`.execute(db);
  const triggers = new Map(
    (
      await sql<{ name: string; def: string }>`select tgname as name, pg_get_triggerdef(oid) as def from pg_trigger
        where not tgisinternal and tgname like 'store_changes_%'`.execute(db)
    ).rows.map((r) => [r.name, r.def.toLowerCase()]),
  );
  assert.ok(rows.length > 40);
  for (const t of rows) {
    const def = triggers.get(storeChangesTriggerName(t.table));
    assert.ok(def, `${t.table} has no change-counter trigger`);
    const events = /after (.+?) on /.exec(def)?.[1] ?? '';
    assert.deepEqual(normalized(events), normalized(tracedEvents(t.table, t.columns)), `${t.table}: ${def}`);
  }
});

test(
  'a write moves its table and the store counters once it commits; an activity touch moves none',
  { skip },
  async () => {
    const db = dynamic(pgStore.store.db);
    const gens = async () =>
      new Map(
        (await sql<{ name: string; gen: number }>`select name, gen from store_changes`.execute(db)).rows.map((r) => [
          r.name,
          Number(r.gen),
        ]),
      );
    const before = await gens();
    await sql`update identity_types set tags = '{"a":1}' where id = 'User'`.execute(db);
    const after = await gens();
    assert.equal(after.get('identity_types'), before.get('identity_types')! + 1);
    assert.equal(after.get('*'), before.get('*')! + 1);
    await sql`update api_sessions set "lastActivityAt" = 'x' where id = 'none'`.execute(db);
    assert.deepEqual(await gens(), after);
  },
);

test(
  "a write another store publishes is in this store's feed before published() settles; within its lease fresh() is at once",
  { skip },
  async () => {
    const a = pgStore.store;
    const b = await openStore(pgStore.url);
    try {
      const runtime = runtimeOf(a.db)!;
      const replicas = runtime.replicas!;
      await replicas.fresh();
      assert.equal(replicas.fresh(), undefined, 'within its lease a replica reads nothing before a request');
      const deps = runtime.feed.deps(['identity_types']);
      const version = runtime.feed.version(deps);
      // Written through the other store (another replica), which answers only once this one acknowledged it.
      await sql`update identity_types set tags = '{"b":1}' where id = 'Device'`.execute(dynamic(b.db));
      await runtimeOf(b.db)!.replicas!.published();
      assert.ok(runtime.feed.version(deps) > version, 'the write reached this store’s feed before the writer answers');
    } finally {
      await b.close();
    }
  },
);

test("outside a lease one turn's asks share one read", { skip }, async () => {
  // A store that has not read yet holds no lease.
  const c = await openStore(pgStore.url);
  try {
    const replicas = runtimeOf(c.db)!.replicas!;
    const reads = replicas.reads;
    await Promise.all(Array.from({ length: 10 }, () => replicas.fresh()));
    assert.equal(replicas.reads - reads, 1, 'the ten calls of one turn shared one read');
  } finally {
    await c.close();
  }
});

test(
  'an idle replica stops its heartbeat; its next request reads the counters first and starts it again',
  { skip },
  async () => {
    const c = await openStore(pgStore.url);
    try {
      const replicas = runtimeOf(c.db)!.replicas!;
      await replicas.fresh();
      assert.equal(replicas.beating, true, 'a request starts the heartbeat');
      const started = Date.now();
      while (replicas.beating) {
        assert.ok(Date.now() - started < IDLE_MS + 3000, 'the heartbeat stops once no request comes');
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(Date.now() - started >= IDLE_MS - 100, 'not before IDLE_MS without requests');
      const reads = replicas.reads;
      await new Promise((r) => setTimeout(r, 5 * HEARTBEAT_MS));
      assert.equal(replicas.reads, reads, 'no reads while idle');
      const fresh = replicas.fresh();
      assert.notEqual(fresh, undefined, 'past its lease, a request waits for a read');
      await fresh;
      assert.equal(replicas.reads, reads + 1);
      assert.equal(replicas.beating, true);
    } finally {
      await c.close();
    }
  },
);

test(
  'the counters are read over a connection of their own; one the server ends is opened anew at the next read',
  { skip },
  async () => {
    const a = pgStore.store;
    const runtime = runtimeOf(a.db)!;
    const replicas = runtime.replicas!;
    const db = dynamic(a.db);
    await replicas.fresh();
    const backends = async () =>
      (
        await sql<{ pid: number }>`select pid from pg_stat_activity
          where datname = current_database() and application_name = ${COUNTERS_APPLICATION}`.execute(db)
      ).rows.map((r) => r.pid);
    const [first, ...others] = await backends();
    assert.ok(first !== undefined, 'a connection names itself as the change counters');
    assert.deepEqual(others, [], 'one connection only');
    const { failures, reads } = replicas;
    await sql`select pg_terminate_backend(${first})`.execute(db);
    // The next read on the ended connection fails (every cache dropped, as for a lost database) or, if the
    // client saw the end first, reconnects at once; either way a read soon succeeds on a new connection (the
    // heartbeat reads without being asked).
    let now: number[] = [];
    for (let i = 0; i < 100; i++) {
      await replicas.fresh();
      now = await backends();
      if (now.length === 1 && now[0] !== first && replicas.reads > reads) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(replicas.failures - failures <= 1);
    assert.ok(replicas.reads > reads, 'a read after that succeeds');
    assert.equal(now.length, 1);
    assert.notEqual(now[0], first, 'on a new connection');
  },
);
