/**
 * `edgectl db snapshot|restore|migrate|info` on a stopped controller's data dir, on a store written by a real
 * controller. While the controller runs, each is refused with the lock holder named.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { createIdentity, startTestServer, type TestServer } from '../harness/server.js';
import { edgectlSlow, type Run } from '../harness/cli.js';
import { scratch } from '../harness/processes.js';
import { migrationNames } from '../../src/store/migrations/index.js';
import { FOREIGN_DESCRIPTION, injectForeignTrigger } from '../harness/schema-damage.js';

const tmp = scratch('edgectl-db-offline-');

const identityNames = (file: string): string[] => {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare('SELECT name FROM identities ORDER BY name').all() as { name: string }[]).map((r) => r.name);
  } finally {
    db.close();
  }
};

describe('edgectl db (offline)', () => {
  let server: TestServer;
  let dir: string;
  let work: string;
  let db: (...args: string[]) => Promise<Run>;
  let store: string;

  before(async () => {
    server = await startTestServer();
    dir = server.dataDir;
    store = join(dir, 'edgectl.db');
    work = tmp.tempDir();
    await createIdentity(await server.admin(), { name: 'before-snapshot' });
    db = (...args) => edgectlSlow(join(work, 'config'), 'db', ...args, '--data-dir', dir);
  });

  after(() => server?.close());

  it('refuses snapshot, restore, migrate and info while the controller runs', async () => {
    for (const args of [['snapshot'], ['restore', store], ['migrate'], ['info'], ['check-integrity']]) {
      const r = await db(...args);
      assert.equal(r.code, 1, args.join(' '));
      assert.match(r.stderr, new RegExp(`in use by process ${process.pid}`), args.join(' '));
    }
    assert.equal(
      readdirSync(dir).some((f) => f.includes('-2') || f.includes('.replaced-')),
      false,
      'nothing was written',
    );
    await server.daemon.close();
  });

  it('info shows the schema version, entity counts and file sizes', async () => {
    const r = await db('info', '-o', 'json');
    assert.equal(r.code, 0, r.stderr);
    const info = JSON.parse(r.stdout).data;
    assert.equal(info.schemaVersion, migrationNames.at(-1));
    assert.deepEqual(info.migrations, migrationNames);
    assert.deepEqual(info.pendingMigrations, []);
    assert.equal(info.counts.identities, 2);
    assert.equal(info.counts.authPolicies, 1);
    assert.equal(info.counts.configTypes, 5);
    assert.equal(info.sizes.db, statSync(store).size);
    assert.equal(typeof info.sizes.wal, 'number');
    const text = await db('info');
    assert.equal(text.code, 0, text.stderr);
    assert.match(
      text.stdout,
      new RegExp(`^schema +${migrationNames.at(-1)} \\(${migrationNames.length} migrations\\)$`, 'm'),
    );
    assert.match(text.stdout, /^identities +2$/m);
  });

  it('migrate on an up-to-date store says so', async () => {
    const r = await db('migrate');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /is up to date \(schema /);
  });

  let snapshot: string;
  it('snapshot writes a 0600 copy, beside the store by default or to --out', async () => {
    const beside = await db('snapshot');
    assert.equal(beside.code, 0, beside.stderr);
    const path = beside.stdout.match(/snapshot written to (\S+)/)?.[1];
    assert.ok(path && /edgectl\.db-\d{8}-\d{6}$/.test(path), beside.stdout);
    assert.equal(statSync(path).mode & 0o777, 0o600);

    snapshot = join(work, 'snap.db');
    const out = await db('snapshot', '--out', snapshot, '-o', 'json');
    assert.equal(out.code, 0, out.stderr);
    assert.equal(JSON.parse(out.stdout).data.path, snapshot);
    assert.equal(statSync(snapshot).mode & 0o777, 0o600);
    assert.deepEqual(identityNames(snapshot), ['Default Admin', 'before-snapshot']);

    const again = await db('snapshot', '--out', snapshot);
    assert.equal(again.code, 1, 'an existing file is never overwritten');
    assert.match(again.stderr, /exists/);
  });

  it('restore puts a snapshot back and keeps the replaced store', async () => {
    const later = await edgectlSlow(join(work, 'config'), 'identity', 'create', 'after-snapshot', '--data-dir', dir);
    assert.equal(later.code, 0, later.stderr);
    assert.deepEqual(identityNames(store), ['Default Admin', 'after-snapshot', 'before-snapshot']);

    const r = await db('restore', snapshot);
    assert.equal(r.code, 0, r.stderr);
    const replaced = r.stdout.match(/kept as (\S+)/)?.[1];
    assert.ok(replaced && /edgectl\.db\.replaced-\d{8}-\d{6}$/.test(replaced), r.stdout);
    assert.equal(statSync(replaced).mode & 0o777, 0o600);
    assert.deepEqual(identityNames(replaced), ['Default Admin', 'after-snapshot', 'before-snapshot']);
    assert.deepEqual(identityNames(store), ['Default Admin', 'before-snapshot']);
    assert.equal(statSync(store).mode & 0o777, 0o600);

    // The restored store serves offline commands at once.
    const list = await edgectlSlow(join(work, 'config'), 'identity', 'list', '-o', 'id', '--data-dir', dir);
    assert.equal(list.code, 0, list.stderr);
    assert.equal(list.stdout.trim().split('\n').length, 2);
  });

  it('restore refuses a file that is not a store, and leaves the store alone', async () => {
    const junk = join(work, 'junk.db');
    writeFileSync(junk, 'not a database at all, just some text\n'.repeat(200));
    const before = statSync(store).mtimeMs;
    const r = await db('restore', junk);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /not an SQLite database/);

    const plain = join(work, 'plain.db');
    const d = new Database(plain);
    d.exec('CREATE TABLE t (x)');
    d.close();
    const p = await db('restore', plain);
    assert.equal(p.code, 1);
    assert.match(p.stderr, /not an edgectl store \(it has no schema_migrations table\)/);

    const missing = await db('restore', join(work, 'nothing-here.db'));
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /does not exist/);

    assert.equal(statSync(store).mtimeMs, before);
    assert.deepEqual(identityNames(store), ['Default Admin', 'before-snapshot']);
  });

  it('restore refuses a store written by a newer edgectl (an unknown migration)', async () => {
    const newer = join(work, 'newer.db');
    copyFileSync(snapshot, newer);
    const d = new Database(newer);
    d.prepare('INSERT INTO schema_migrations (name, timestamp) VALUES (?, ?)').run('9999-from-the-future', 'x');
    d.close();
    const r = await db('restore', newer);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /newer edgectl \(unknown migrations: 9999-from-the-future\)/);
    assert.deepEqual(identityNames(store), ['Default Admin', 'before-snapshot']);
    assert.equal(existsSync(join(dir, 'edgectl.lock')), false, 'the lock is released');
  });

  it('restore refuses a snapshot carrying a trigger no migration creates, naming it', async () => {
    const tampered = join(work, 'tampered.db');
    copyFileSync(snapshot, tampered);
    const d = new Database(tampered);
    injectForeignTrigger(d);
    d.close();
    const before = statSync(store).mtimeMs;
    const r = await db('restore', tampered);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.ok(r.stderr.includes(FOREIGN_DESCRIPTION), r.stderr);
    assert.match(r.stderr, /refusing to restore it/);
    assert.equal(statSync(store).mtimeMs, before, 'the store is left alone');
    assert.equal(existsSync(join(dir, 'edgectl.lock')), false, 'the lock is released');
  });

  it('a store with a pending migration: admin commands refuse it, info names it, migrate applies it', async () => {
    // 0007 only adds the built-in config types when missing: recording it as not applied makes it pending.
    const pending = '0007-builtin-config-types';
    const d = new Database(store);
    d.prepare('DELETE FROM schema_migrations WHERE name = ?').run(pending);
    d.close();

    const refused = await edgectlSlow(join(work, 'config'), 'identity', 'list', '--data-dir', dir);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, new RegExp(`needs migrations \\(${pending}\\): run \`edgectl db migrate`));

    const info = await db('info', '-o', 'json');
    assert.equal(info.code, 0, info.stderr);
    assert.deepEqual(JSON.parse(info.stdout).data.pendingMigrations, [pending]);

    const r = await db('migrate');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), `applied ${pending}`);
    const list = await edgectlSlow(join(work, 'config'), 'config-type', 'list', '-o', 'id', '--data-dir', dir);
    assert.equal(list.code, 0, list.stderr);
    assert.equal(list.stdout.trim().split('\n').length, 5);
  });

  it('check-integrity runs the controller scan in-process: a damaged marker is found, --fix repairs it', async () => {
    const raw = new Database(store);
    raw.prepare(`DELETE FROM access_markers WHERE name = 'catalog'`).run();
    raw.close();
    const found = await db('check-integrity');
    assert.equal(found.code, 1, found.stdout + found.stderr);
    assert.match(found.stdout, /^problem: access marker catalog is missing/m);
    const fixed = await db('check-integrity', '--fix');
    assert.equal(fixed.code, 0, fixed.stdout + fixed.stderr);
    assert.match(fixed.stdout, /^fixed: access marker catalog is missing/m);
    const clean = await db('check-integrity');
    assert.equal(clean.code, 0, clean.stdout + clean.stderr);
  });
});
