/**
 * The hot statements on a pooled store (PostgreSQL, src/store/direct.ts): they run as prepared statements, so a
 * connection parses and plans each once (`select *` texts excepted: a migration adding a column would break their
 * plan); and group commit (`groupedRow`): the rows of one event-loop turn go as one statement over arrays, which
 * commits on its own, so the server flushes its log once for all of them; rows that arrive while it runs go
 * together in the next; a statement that fails is sent again row by row, so only the failing row is refused.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import pg from 'pg';
import { dynamic } from '../../../src/store/db.js';
import { groupedRow, hotRows } from '../../../src/store/direct.js';
import { postgresSkip, postgresStoreForTests } from '../../harness/pg.js';

const skip = await postgresSkip();
const pgStore = postgresStoreForTests(skip);
// Made by the first test rather than a hook of this file: run alone, Node 20 may run a top-level hook registered
// after a top-level await before the harness's own, while the store is not open yet.
let probe: Promise<unknown> | undefined;
const opened = async () => {
  probe ??= sql`create table probe (id text primary key, n int not null check (n >= 0))`.execute(
    dynamic(pgStore.store.db),
  );
  await probe;
  return pgStore.store.db;
};

const INSERT = {
  text: `insert into probe (id, n) select * from unnest($1::text[], $2::int[]) on conflict do nothing returning id`,
};

/** The rows whose id starts with `prefix`, and how many transactions inserted them (a row's xmin is its own). */
async function inserted(prefix: string): Promise<{ n: number; transactions: number }> {
  const { rows } = await sql<{ n: number; transactions: number }>`select count(*)::int as n,
    count(distinct xmin::text)::int as transactions from probe where id like ${prefix + '%'}`.execute(
    dynamic(pgStore.store.db),
  );
  return rows[0]!;
}

test('40 rows of one turn go in one statement; each learns whether it was written', { skip }, async () => {
  const store = await opened();
  const written = await Promise.all(Array.from({ length: 40 }, (_, i) => groupedRow(store, INSERT, [`a${i}`, i])));
  assert.deepEqual(written, Array(40).fill(true));
  assert.deepEqual(await inserted('a'), { n: 40, transactions: 1 });
  // A conflict is not an error: that row answers false, the others true.
  const again = await Promise.all([groupedRow(store, INSERT, ['a1', 1]), groupedRow(store, INSERT, ['a40', 40])]);
  assert.deepEqual(again, [false, true]);
});

test('rows arriving while a statement runs go together in the next one', { skip }, async () => {
  const store = await opened();
  // Another session holds a lock that makes the first statement wait, so it is under way while the rest
  // arrive, however fast the server commits.
  const holder = new pg.Client({ connectionString: pgStore.url });
  await holder.connect();
  try {
    await holder.query('begin');
    await holder.query('lock table probe in share mode');
    const first = groupedRow(store, INSERT, ['c0', 0]);
    const later: Promise<boolean>[] = [];
    for (let turn = 0; turn < 3; turn++) {
      await new Promise((r) => setTimeout(r, 5));
      for (let i = 0; i < 10; i++) later.push(groupedRow(store, INSERT, [`c${turn + 1}-${i}`, i]));
    }
    await holder.query('commit');
    assert.equal(await first, true);
    assert.deepEqual(await Promise.all(later), Array(30).fill(true));
  } finally {
    await holder.end();
  }
  assert.deepEqual(await inserted('c'), { n: 31, transactions: 2 }, 'the first alone, the thirty others together');
});

test('a failing row is refused alone; the others of its statement are written', { skip }, async () => {
  const store = await opened();
  const results = await Promise.allSettled([
    groupedRow(store, INSERT, ['b1', 1]),
    groupedRow(store, INSERT, ['b2', -1]), // breaks the check
    groupedRow(store, INSERT, ['b3', 3]),
  ]);
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
  const { rows } = await sql<{ id: string }>`select id from probe where id like 'b%' order by id`.execute(
    dynamic(store),
  );
  assert.deepEqual(
    rows.map((r) => r.id),
    ['b1', 'b3'],
  );
});

test('hot statements are prepared once per connection; `select *` ones are not', { skip }, async () => {
  const store = await opened();
  // One at a time, so the pool lends the same connection each time (its most recently released).
  for (let i = 0; i < 5; i++) {
    await hotRows(store, 'select id from probe where id = ?', [`a${i}`]);
    await hotRows(store, 'select * from probe where id = ?', [`a${i}`]);
  }
  const { rows } = await sql<{ statement: string }>`select statement from pg_prepared_statements
    where name like 'edgectl\_%' and statement like 'select%'`.execute(dynamic(store));
  assert.deepEqual(
    rows.map((r) => r.statement),
    ['select id from probe where id = $1 /* hot */'],
  );
});
