/**
 * `edgectl db snapshot|restore|migrate|info` on a stopped controller's data dir, on a store written by a real
 * controller. While the controller runs, each is refused with the lock holder named. Then the same commands on
 * a PostgreSQL store (`--db URL`): they work in the database, without the data dir's lock, except the scan.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { createIdentity, startTestServer, type TestServer } from '../harness/server.js';
import { edgectlSlow, edgectlWith, type Run } from '../harness/cli.js';
import { emptyDatabase, freshDatabase, postgresSkip } from '../harness/pg.js';
import { readStore, writeStore } from '../harness/raw-store.js';
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

describe('edgectl db (offline, PostgreSQL)', { skip: await postgresSkip() }, () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  /** The database's URL with a password (trust authentication ignores it): never shown, never on a command line. */
  let url: string;
  let server: TestServer;
  let dir: string;
  let work: string;
  let db: (...args: string[]) => Promise<Run>;

  const withPassword = (u: string) => {
    const x = new URL(u);
    x.password = 'Secret-Pw1';
    return x.toString();
  };
  const names = async () =>
    (
      await readStore<{ name: string }>(
        { dbUrl: url, dataDir: dir } as TestServer,
        'select name from identities order by name',
      )
    ).map((r) => r.name);

  before(async () => {
    database = await freshDatabase();
    url = withPassword(database.url);
    server = await startTestServer({ db: database.url });
    dir = server.dataDir;
    work = tmp.tempDir();
    await createIdentity(await server.admin(), { name: 'before-snapshot' });
    db = (...args) => edgectlSlow(join(work, 'config'), 'db', ...args, '--data-dir', dir, '--db', url);
  });
  after(async () => {
    await server?.close();
    await database?.drop();
  });

  it('while the controller runs: check-integrity is refused by its data dir lock; info and snapshot work', async () => {
    const check = await db('check-integrity');
    assert.equal(check.code, 1, check.stdout + check.stderr);
    assert.match(check.stderr, new RegExp(`in use by process ${process.pid}`));
    const info = await db('info', '-o', 'json');
    assert.equal(info.code, 0, info.stderr);
    assert.equal(JSON.parse(info.stdout).data.kind, 'postgres');
    const snap = await db('snapshot', '--out', join(work, 'while-running.dump'));
    assert.equal(snap.code, 0, snap.stderr);
    await server.daemon.close();
  });

  it('info shows the engine, the URL with its password hidden, the schema, counts and size', async () => {
    const r = await db('info', '-o', 'json');
    assert.equal(r.code, 0, r.stderr);
    const info = JSON.parse(r.stdout).data;
    assert.equal(info.kind, 'postgres');
    assert.equal(info.store, url.replace('Secret-Pw1', '***'));
    assert.equal(info.schemaVersion, migrationNames.at(-1));
    assert.deepEqual(info.migrations, migrationNames);
    assert.deepEqual(info.pendingMigrations, []);
    assert.equal(info.counts.identities, 2);
    assert.equal(info.counts.configTypes, 5);
    assert.ok(info.sizes.db > 0);
    assert.equal(info.sizes.wal, undefined);
    const text = await db('info');
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^kind +postgres$/m);
    assert.match(text.stdout, /^store +postgres:\/\/postgres:\*\*\*@/m);
    assert.doesNotMatch(text.stdout + text.stderr, /Secret-Pw1/);
  });

  it('snapshot: a 0600 pg_dump archive in the data dir by default or to --out, never over a file', async () => {
    const beside = await db('snapshot');
    assert.equal(beside.code, 0, beside.stderr);
    const path = beside.stdout.match(/snapshot written to (\S+)/)?.[1];
    assert.ok(path && path.startsWith(`${dir}/`) && /edgectl-postgres-\d{8}-\d{6}\.dump$/.test(path), beside.stdout);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const out = join(work, 'snap.dump');
    const r = await db('snapshot', '--out', out, '-o', 'json');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).data.path, out);
    assert.equal(statSync(out).mode & 0o777, 0o600);
    const again = await db('snapshot', '--out', out);
    assert.equal(again.code, 1, 'an existing file is never overwritten');
    assert.match(again.stderr, /exists/);
  });

  it('restore is refused with the pg_restore command to use instead', async () => {
    const r = await db('restore', join(work, 'snap.dump'));
    assert.equal(r.code, 1);
    assert.match(r.stderr, /restored from its pg_dump archive with pg_restore/);
    assert.doesNotMatch(r.stderr, /Secret-Pw1/);
    assert.deepEqual(await names(), ['Default Admin', 'before-snapshot']);
  });

  it('check-integrity runs the controller scan on the database: a damaged marker is found, --fix repairs it', async () => {
    await writeStore({ dbUrl: url, dataDir: dir } as TestServer, (exec) =>
      exec(`delete from access_markers where name = 'catalog'`),
    );
    const found = await db('check-integrity');
    assert.equal(found.code, 1, found.stdout + found.stderr);
    assert.match(found.stdout, /^problem: access marker catalog is missing/m);
    assert.match(found.stderr, /started on postgres:\/\/postgres:\*\*\*@.* \(offline\)/);
    const fixed = await db('check-integrity', '--fix');
    assert.equal(fixed.code, 0, fixed.stdout + fixed.stderr);
    assert.match(fixed.stdout, /^fixed: access marker catalog is missing/m);
    const clean = await db('check-integrity');
    assert.equal(clean.code, 0, clean.stdout + clean.stderr);
  });

  it('a pending migration: admin commands refuse it, info names it, migrate applies it', async () => {
    const pending = '0007-builtin-config-types';
    await writeStore({ dbUrl: url, dataDir: dir } as TestServer, (exec) =>
      exec('delete from schema_migrations where name = ?', [pending]),
    );
    // An admin command with --data-dir takes the store `serve` would: $EDGECTL_DB_URL here.
    const env = { env: { EDGECTL_DB_URL: url }, timeoutMs: 180_000 };
    const refused = await edgectlWith(join(work, 'config'), env, 'identity', 'list', '--data-dir', dir);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, new RegExp(`needs migrations \\(${pending}\\): run \`edgectl db migrate --db URL`));

    const info = await db('info', '-o', 'json');
    assert.deepEqual(JSON.parse(info.stdout).data.pendingMigrations, [pending]);
    const r = await db('migrate');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), `applied ${pending}`);
    const list = await edgectlWith(join(work, 'config'), env, 'config-type', 'list', '-o', 'id', '--data-dir', dir);
    assert.equal(list.code, 0, list.stderr);
    assert.equal(list.stdout.trim().split('\n').length, 5);
  });

  it('migrate --db on an empty database applies every migration once, run twice at the same moment', async () => {
    const empty = await emptyDatabase();
    try {
      const migrate = () => edgectlSlow(join(work, 'config'), 'db', 'migrate', '--db', empty.url, '-o', 'json');
      const runs = await Promise.all([migrate(), migrate()]);
      for (const r of runs) assert.equal(r.code, 0, r.stderr);
      const applied = runs.flatMap((r) => JSON.parse(r.stdout).data.applied as string[]);
      assert.deepEqual(applied.sort(), [...migrationNames].sort(), 'each migration applied by one of the two');
      const info = await edgectlSlow(join(work, 'config'), 'db', 'info', '--db', empty.url, '-o', 'json');
      assert.deepEqual(JSON.parse(info.stdout).data.pendingMigrations, []);
    } finally {
      await empty.drop();
    }
  });
});
