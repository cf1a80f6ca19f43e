/** The committed schema snapshots (src/store/schema-snapshots/) are what the migrations leave on each engine. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { renderPostgresSnapshot, renderSqliteSnapshot, SNAPSHOT_FILES } from '../../../scripts/gen-schema-snapshots.js';
import { postgresSkip } from '../../harness/pg.js';

const HINT = 'run `node --import tsx scripts/gen-schema-snapshots.ts` and review the diff';

test('the SQLite schema snapshot matches the migrations', async () => {
  assert.equal(await renderSqliteSnapshot(), readFileSync(SNAPSHOT_FILES.sqlite, 'utf8'), HINT);
});

test('the PostgreSQL schema snapshot matches the migrations', { skip: await postgresSkip() }, async () => {
  const text = await renderPostgresSnapshot();
  assert.equal(text, readFileSync(SNAPSHOT_FILES.postgres, 'utf8'), HINT);
  // Every text column sorts by code point, as SQLite's do.
  assert.doesNotMatch(text, /^column [^:]+: text(?! collate C)/m);
});
