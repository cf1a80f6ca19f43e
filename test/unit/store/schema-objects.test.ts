/**
 * The store's schema objects against what its recorded migrations create: the statement
 * normalisation, the comparison at the store's own migration level, and the repair of each kind of difference.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { withTx } from '../../../src/store/db.js';
import { knownMigrations, migrationNames, runMigrations } from '../../../src/store/migrations/index.js';
import {
  describeSchemaDifference,
  migrationsAt,
  normaliseSql,
  repairOrder,
  repairSchemaObject,
  schemaDifferencesOf,
  storeSchemaDifferences,
} from '../../../src/store/schema-objects.js';
import { openTestStore } from '../../harness/store.js';
import {
  ALTERED_DESCRIPTION,
  FOREIGN_DESCRIPTION,
  injectForeignLogic,
  MISSING_DESCRIPTION,
} from '../../harness/schema-damage.js';

test('normalising ignores whitespace, comments, keyword and identifier case and quoting, never a literal', () => {
  const a = `CREATE TRIGGER "t1" AFTER INSERT ON [Items]  -- a comment
    BEGIN /* another */ UPDATE items SET n = n + 1 WHERE name = 'a  B'; END`;
  const b = `create trigger t1 after insert on "items" begin update "ITEMS" set "n"=n+1 where name='a  B';end`;
  assert.equal(normaliseSql(a), normaliseSql(b));
  assert.notEqual(normaliseSql(b), normaliseSql(b.replace("'a  B'", "'a B'")), 'a literal is kept exactly');
  assert.notEqual(normaliseSql(b), normaliseSql(b.replace('n+1', 'n+2')));
  assert.notEqual(normaliseSql('select "a b"'), normaliseSql('select a b'), 'a quoted name with a space stays one');
  assert.equal(normaliseSql("select 'it''s'"), "select'it''s'");
});

test('a fresh store holds exactly what its migrations create', async () => {
  const t = await openTestStore();
  try {
    assert.deepEqual(await storeSchemaDifferences(t.ctx.db, knownMigrations), []);
    assert.deepEqual(await schemaDifferencesOf(t.store.raw, knownMigrations), []);
  } finally {
    await t.close();
  }
});

test('an older store is compared with the migrations it records, not with the newest ones', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'edgectl-schema-'));
  const raw = new Database(join(dir, 'old.db'));
  const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: raw }) });
  try {
    await runMigrations(db, migrationsAt(knownMigrations, migrationNames.slice(0, 6)));
    assert.deepEqual(await schemaDifferencesOf(raw, knownMigrations), []);
    raw.exec('CREATE VIEW admins AS SELECT id FROM identities WHERE "isAdmin" = 1');
    assert.deepEqual((await schemaDifferencesOf(raw, knownMigrations)).map(describeSchemaDifference), [
      "view admins is not created by the store's migrations",
    ]);
  } finally {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a foreign trigger, view and table, an altered trigger and a missing index are found and repaired', async () => {
  const t = await openTestStore();
  try {
    injectForeignLogic(t.store.raw);
    t.store.raw.exec('CREATE VIEW peek AS SELECT id FROM identities');
    t.store.raw.exec('CREATE TABLE notes (x)');
    const found = await storeSchemaDifferences(t.ctx.db, knownMigrations);
    assert.deepEqual(
      found.map(describeSchemaDifference).sort(),
      [
        ALTERED_DESCRIPTION,
        MISSING_DESCRIPTION,
        FOREIGN_DESCRIPTION,
        "table notes is not created by the store's migrations",
        "view peek is not created by the store's migrations",
      ].sort(),
    );
    await withTx(t.ctx.db, async (trx) => {
      for (const d of [...found].sort((a, b) => repairOrder(a) - repairOrder(b))) await repairSchemaObject(trx, d);
    });
    assert.deepEqual(await storeSchemaDifferences(t.ctx.db, knownMigrations), []);
    // The altered trigger is the migration's again: deleting an identity moves the marker, nothing else.
    t.store.raw.exec(`INSERT INTO identities (id, "createdAt", "updatedAt", name, "typeId", "authPolicyId")
      VALUES ('gone', 'x', 'x', 'gone', 'User', 'default')`);
    t.store.raw.exec(`DELETE FROM identities WHERE id = 'gone'`);
    const admins = t.store.raw.prepare('SELECT count(*) AS n FROM identities WHERE "isAdmin" = 1').get() as {
      n: number;
    };
    assert.equal(admins.n, 0);
  } finally {
    await t.close();
  }
});

test('a repair reads the store again: an object already as expected is left alone', async () => {
  const t = await openTestStore();
  try {
    t.store.raw.exec('DROP INDEX identities_by_auth_policy');
    const [missing] = await storeSchemaDifferences(t.ctx.db, knownMigrations);
    t.store.raw.exec('CREATE INDEX identities_by_auth_policy ON identities ("authPolicyId")');
    await repairSchemaObject(t.ctx.db, missing!);
    assert.deepEqual(await storeSchemaDifferences(t.ctx.db, knownMigrations), []);
  } finally {
    await t.close();
  }
});
