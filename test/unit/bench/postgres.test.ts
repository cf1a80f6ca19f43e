/**
 * The bench's PostgreSQL helpers (bench/postgres.ts): a database of the run's own on the server the URL names,
 * dropped from a synchronous exit path, and the CPU its backend processes spend, read from /proc.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { BackendCpu, createDatabase, databaseUrl, dropDatabaseSync } from '../../../bench/postgres.js';
import { PG_SERVER, postgresSkip } from '../../harness/pg.js';

const skip = await postgresSkip();

test('a database URL keeps the server and credentials and names another database', () => {
  assert.equal(
    databaseUrl('postgres://bench:secret@db.example:6432/postgres?sslmode=disable', 'edgectl_bench_x'),
    'postgres://bench:secret@db.example:6432/edgectl_bench_x?sslmode=disable',
  );
});

test('the bench database is created, its backends charged with the CPU they spend, and dropped', { skip }, async () => {
  const name = `edgectl_bench_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const url = await createDatabase(PG_SERVER, name);
  try {
    const cpu = new BackendCpu(name, 50);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const stop = cpu.start();
    // A backend that starts during the count is charged from zero.
    const late = new pg.Client({ connectionString: url });
    await late.connect();
    await Promise.all(
      [client, late].map((c) => c.query('select count(*) from generate_series(1, 3000000) g where g % 7 = 0')),
    );
    const seconds = stop();
    await Promise.all([client.end(), late.end()]);
    // Counting three million rows twice takes well over a clock tick of CPU, however fast the machine.
    assert.ok(seconds >= 0.05, `backend CPU ${seconds} s`);
    // Another database's backends are not counted.
    assert.ok(Number.isNaN(new BackendCpu(`${name}_none`).start()()));
  } finally {
    dropDatabaseSync(PG_SERVER, name);
  }
  const c = new pg.Client({ connectionString: PG_SERVER });
  await c.connect();
  const { rowCount } = await c.query('select 1 from pg_database where datname = $1', [name]);
  await c.end();
  assert.equal(rowCount, 0);
});

test('names that would need quoting are refused', async () => {
  await assert.rejects(createDatabase(PG_SERVER, 'bench"; drop database x; --'), /not a plain database name/);
});
