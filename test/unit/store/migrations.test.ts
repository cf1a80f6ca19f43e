/**
 * Migrations: each one is applied atomically with its record, so an interrupted or failed one leaves nothing
 * behind; and what a migration does to existing rows.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely, type Migration } from 'kysely';
import { openStore } from '../../../src/store/db.js';
import { knownMigrations, migrationNames, runMigrations } from '../../../src/store/migrations/index.js';

test('a fresh store records every migration once; running again changes nothing', async () => {
  const store = await openStore(':memory:');
  await runMigrations(store.db, {});
  const names = (await store.db.selectFrom('schema_migrations').select('name').orderBy('name').execute()).map(
    (r: { name: string }) => r.name,
  );
  assert.deepEqual(names, migrationNames);
  await store.close();
});

test('a failing migration leaves neither its tables nor its record, and can be retried', async () => {
  const store = await openStore(':memory:', { migrate: false });
  let fail = true;

  const broken: Migration = {
    async up(db: Kysely<any>) {
      await db.schema.createTable('half_done').addColumn('id', 'text').execute();
      if (fail) throw new Error('power cut');
      await db.schema.createTable('second').addColumn('id', 'text').execute();
    },
  };
  await assert.rejects(runMigrations(store.db, { '9001-broken': broken }), /9001-broken failed: power cut/);
  const tables = await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(store.db);
  assert.ok(!tables.rows.some((t) => t.name === 'half_done'), 'the partial table was rolled back');
  assert.equal((await store.db.selectFrom('schema_migrations').selectAll().execute()).length, 0);
  fail = false;
  await runMigrations(store.db, { '9001-broken': broken });
  assert.deepEqual(
    (await store.db.selectFrom('schema_migrations').select('name').execute()).map((r: { name: string }) => r.name),
    ['9001-broken'],
  );
  await store.close();
});

test('0013 keeps verified MFA enrollments and drops pending ones, which have no API session to belong to', async () => {
  const store = await openStore(':memory:', { migrate: false });
  const upTo12 = Object.fromEntries(Object.entries(knownMigrations).filter(([name]) => name < '0013'));
  await runMigrations(store.db, upTo12);
  // Enrollment rows alone: their identities do not matter here.
  store.raw.pragma('foreign_keys = OFF');
  const insert = store.raw.prepare(
    `insert into mfas (id, "createdAt", "updatedAt", "identityId", "isVerified", "secretSealed", "recoverySalt")
     values (?, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', ?, ?, 's', 'r')`,
  );
  insert.run('verified', 'identity-1', 1);
  insert.run('pending', 'identity-2', 0);
  store.raw.pragma('foreign_keys = ON');
  await runMigrations(store.db, knownMigrations);
  const rows = store.raw.prepare(`select id, "apiSessionId" from mfas order by id`).all();
  assert.deepEqual(rows, [{ id: 'verified', apiSessionId: null }]);
  await store.close();
});

test('0025 keeps the outbox rows and their positions, and never gives a position again, pruned or not', async () => {
  for (const kept of [1, 0]) {
    const store = await openStore(':memory:', { migrate: false });
    const upTo24 = Object.fromEntries(Object.entries(knownMigrations).filter(([name]) => name < '0025'));
    await runMigrations(store.db, upTo24);
    const insert = store.raw.prepare(
      `insert into events (id, namespace, "eventType", timestamp, "actorId", "entityType", "entityId", body)
       values (?, 'session', 'created', '2026-01-01T00:00:00.000Z', 'a', 'sessions', ?, '{}')`,
    );
    for (const n of [1, 2, 3]) insert.run(`e${n}`, `s${n}`);
    // Pruned: the newest two, or all three.
    store.raw.prepare('delete from events where seq > ?').run(kept);
    await runMigrations(
      store.db,
      Object.fromEntries(Object.entries(knownMigrations).filter(([name]) => name < '0026')),
    );
    const rows = () => store.raw.prepare('select seq, id, "entityId" from events order by seq').all();
    assert.deepEqual(rows(), kept ? [{ seq: 1, id: 'e1', entityId: 's1' }] : []);
    store.raw
      .prepare(
        `insert into events (id, namespace, "eventType", timestamp, "actorId", "entityType", "entityId", body)
         values ('e4', 'session', 'created', '2026-01-01T00:00:00.000Z', 'a', 'sessions', 's4', '{}')`,
      )
      .run();
    assert.equal((rows().at(-1) as { seq: number }).seq, 4, 'after the last position ever given');
    const indexes = store.raw.prepare(`select name from sqlite_master where tbl_name = 'events' and type = 'index'`);
    assert.deepEqual(
      (indexes.all() as { name: string }[]).map((r) => r.name).sort(),
      ['events_by_entity', 'events_by_timestamp'],
      'no index on the id',
    );
    await store.close();
  }
});

test('0028 keeps the outbox rows and positions without AUTOINCREMENT; a cursor past the newest kept moves back to it', async () => {
  for (const kept of [2, 0]) {
    const store = await openStore(':memory:', { migrate: false });
    await runMigrations(
      store.db,
      Object.fromEntries(Object.entries(knownMigrations).filter(([name]) => name < '0028')),
    );
    const insert = store.raw.prepare(
      `insert into events (id, namespace, "eventType", timestamp, "actorId", "entityType", "entityId", body)
       values (?, 'session', 'created', '2026-01-01T00:00:00.000Z', 'a', 'sessions', ?, '{}')`,
    );
    for (const n of [1, 2, 3]) insert.run(`e${n}`, `s${n}`);
    const cursor = store.raw.prepare(`insert into event_cursors (name, seq, "updatedAt") values (?, ?, '2026')`);
    cursor.run('behind', 1);
    cursor.run('done', 3);
    // Pruned by the old rules: the oldest, or all three.
    store.raw.prepare('delete from events where seq <= ?').run(3 - kept);
    await runMigrations(store.db, knownMigrations);
    const rows = () => store.raw.prepare('select seq, id from events order by seq').all();
    assert.deepEqual(
      rows(),
      kept
        ? [
            { seq: 2, id: 'e2' },
            { seq: 3, id: 'e3' },
          ]
        : [],
    );
    const table = store.raw.prepare(`select sql from sqlite_master where name = 'events'`).get() as { sql: string };
    assert.doesNotMatch(table.sql, /autoincrement/i);
    insert.run('e4', 's4');
    assert.equal((rows().at(-1) as { seq: number }).seq, kept ? 4 : 1, 'after the newest position kept');
    const cursors = store.raw.prepare('select name, seq from event_cursors order by name').all();
    assert.deepEqual(
      cursors,
      [
        { name: 'behind', seq: kept ? 1 : 0 },
        { name: 'done', seq: kept ? 3 : 0 },
      ],
      'no cursor past the next position, so the next event reaches every sink',
    );
    const indexes = store.raw.prepare(`select name from sqlite_master where tbl_name = 'events' and type = 'index'`);
    assert.deepEqual((indexes.all() as { name: string }[]).map((r) => r.name).sort(), [
      'events_by_entity',
      'events_by_timestamp',
    ]);
    await store.close();
  }
});
