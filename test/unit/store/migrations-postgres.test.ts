/**
 * Migrations on PostgreSQL: replicas that start together on an empty database leave one migrator (each
 * migration applied and recorded once, every replica serving), and a database migrated by a newer version is
 * refused.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { sql } from 'kysely';
import { dynamic, openStore } from '../../../src/store/db.js';
import { migrationNames } from '../../../src/store/migrations/index.js';
import { StoreRefused } from '../../../src/store/open-checks.js';
import { createDatabase, PG_SERVER, postgresSkip } from '../../harness/pg.js';

const skip = await postgresSkip();

/** An empty database (no template), dropped after `fn`. */
async function withEmptyDatabase(fn: (url: string) => Promise<void>): Promise<void> {
  const name = `edgectl_empty_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: PG_SERVER });
  await admin.connect();
  try {
    await admin.query(createDatabase(name));
    // As the harness's test databases (pg.ts): commits do not wait for the log flush.
    await admin.query(`alter database "${name}" set synchronous_commit = off`);
    const url = new URL(PG_SERVER);
    url.pathname = `/${name}`;
    await fn(url.toString());
  } finally {
    await admin.query(`drop database if exists "${name}" with (force)`);
    await admin.end();
  }
}

test(
  'three replicas opening an empty database at once: every one serves, each migration runs once',
  { skip },
  async () => {
    for (let run = 0; run < 6; run++) {
      await withEmptyDatabase(async (url) => {
        const stores = await Promise.all([0, 1, 2].map(() => openStore(url, { verify: true })));
        try {
          for (const s of stores)
            assert.equal((await s.db.selectFrom('identity_types').select('id').execute()).length, 4);
          const { rows } = await sql<{ name: string; n: number }>`select name, count(*) as n from schema_migrations
          group by name order by name`.execute(dynamic(stores[0]!.db));
          assert.deepEqual(
            rows.map((r) => [r.name, Number(r.n)]),
            migrationNames.map((n) => [n, 1]),
          );
        } finally {
          for (const s of stores) await s.close();
        }
      });
    }
  },
);

test('a database migrated by a newer edgectl is refused at start, naming the unknown migration', { skip }, async () => {
  await withEmptyDatabase(async (url) => {
    const first = await openStore(url);
    await first.db
      .insertInto('schema_migrations')
      .values({ name: '9999-from-the-future', timestamp: new Date().toISOString() })
      .execute();
    await first.close();
    await assert.rejects(openStore(url, { verify: true }), (e: Error) => {
      assert.ok(e instanceof StoreRefused);
      assert.match(e.message, /newer edgectl.*9999-from-the-future/);
      assert.doesNotMatch(e.message, /password/);
      return true;
    });
  });
});
