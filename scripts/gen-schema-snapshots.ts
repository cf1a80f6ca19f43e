/**
 * Writes `src/store/schema-snapshots/<engine>.txt`: the schema the migrations leave on each engine, as sorted
 * text (src/store/schema-snapshot.ts). `test/unit/store/schema-snapshots.test.ts` fails when a committed file
 * differs from what this renders, so a migration's effect on both engines is reviewed as a diff.
 *
 * The PostgreSQL snapshot is taken in a temporary database on `EDGECTL_TEST_PG` (default: the local server).
 *
 * Usage: node --import tsx scripts/gen-schema-snapshots.ts
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { dynamic, openStore } from '../src/store/db.js';
import { schemaSnapshot } from '../src/store/schema-snapshot.js';

export const SNAPSHOT_FILES = {
  sqlite: fileURLToPath(new URL('../src/store/schema-snapshots/sqlite.txt', import.meta.url)),
  postgres: fileURLToPath(new URL('../src/store/schema-snapshots/postgres.txt', import.meta.url)),
} as const;

const PG_SERVER = process.env.EDGECTL_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/test';

async function snapshotOf(target: string): Promise<string> {
  const store = await openStore(target);
  try {
    return await schemaSnapshot(dynamic(store.db));
  } finally {
    await store.close();
  }
}

export const renderSqliteSnapshot = (): Promise<string> => snapshotOf(':memory:');

export async function renderPostgresSnapshot(): Promise<string> {
  const name = `edgectl_snapshot_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: PG_SERVER });
  await admin.connect();
  try {
    await admin.query(`create database "${name}"`);
    const url = new URL(PG_SERVER);
    url.pathname = `/${name}`;
    return await snapshotOf(url.toString());
  } finally {
    await admin.query(`drop database if exists "${name}" with (force)`);
    await admin.end();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(SNAPSHOT_FILES.sqlite, await renderSqliteSnapshot());
  writeFileSync(SNAPSHOT_FILES.postgres, await renderPostgresSnapshot());
}
