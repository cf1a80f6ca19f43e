/**
 * The hot statements on a pooled store (PostgreSQL, src/store/direct.ts): they run as prepared statements, so a
 * connection parses and plans each once (`select *` texts excepted: a migration adding a column would break their
 * plan); and group commit (`groupedWrite`): the writes of one event-loop turn share one transaction, so the
 * server flushes its log once for all of them; a statement that fails rejects its own write only, the others are
 * committed.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { dynamic } from '../../../src/store/db.js';
import { groupedWrite, hotRows } from '../../../src/store/direct.js';
import { postgresSkip, postgresStoreForTests } from '../../harness/pg.js';

const skip = await postgresSkip();
const pgStore = postgresStoreForTests(skip);
before(async () => {
  if (skip) return;
  await sql`create table probe (id text primary key)`.execute(dynamic(pgStore.store.db));
});

const INSERT = 'insert into probe (id) values (?) on conflict do nothing';

test('40 writes of one turn share one transaction and all commit', { skip }, async () => {
  const db = pgStore.store.db;
  const changes = await Promise.all(Array.from({ length: 40 }, (_, i) => groupedWrite(db, INSERT, [`a${i}`])));
  assert.deepEqual(changes, Array(40).fill(1));
  // A row's xmin is the transaction that inserted it.
  const { rows } = await sql<{ n: number; transactions: number }>`select count(*)::int as n,
    count(distinct xmin::text)::int as transactions from probe where id like 'a%'`.execute(dynamic(db));
  assert.deepEqual(rows[0], { n: 40, transactions: 1 });
});

test('a failing write rejects alone; the others of its batch are committed', { skip }, async () => {
  const db = pgStore.store.db;
  const results = await Promise.allSettled([
    groupedWrite(db, INSERT, ['b1']),
    groupedWrite(db, 'insert into probe (id) values (?)', ['a1']), // a duplicate key
    groupedWrite(db, INSERT, ['b2']),
  ]);
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
  const { rows } = await sql<{ id: string }>`select id from probe where id like 'b%' order by id`.execute(dynamic(db));
  assert.deepEqual(
    rows.map((r) => r.id),
    ['b1', 'b2'],
  );
});

test('hot statements are prepared once per connection; `select *` ones are not', { skip }, async () => {
  const db = pgStore.store.db;
  // One at a time, so the pool lends the same connection each time (its most recently released).
  for (let i = 0; i < 5; i++) {
    await hotRows(db, 'select id from probe where id = ?', [`a${i}`]);
    await hotRows(db, 'select * from probe where id = ?', [`a${i}`]);
  }
  const { rows } = await sql<{ statement: string }>`select statement from pg_prepared_statements
    where name like 'edgectl\_%' and statement like 'select%'`.execute(dynamic(db));
  assert.deepEqual(
    rows.map((r) => r.statement),
    ['select id from probe where id = $1 /* hot */'],
  );
});
