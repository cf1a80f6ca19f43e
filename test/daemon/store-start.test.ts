/**
 * What the controller checks about its data dir at start: file modes, an empty or damaged store, a schema that
 * does not match (foreign logic included), the lock taken by exactly one of several racing
 * starters, and masked URLs in debug logs.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { loadConfig } from '../../src/daemon/config.js';
import { DB_FILE, startDaemon } from '../../src/daemon/daemon.js';
import { LOCK_FILE } from '../../src/store/lock.js';
import { ADMIN } from '../harness/server.js';
import { edgectlSlow } from '../harness/cli.js';
import { request } from '../harness/http.js';
import {
  ALTERED_DESCRIPTION,
  FOREIGN_DESCRIPTION,
  injectForeignLogic,
  MISSING_DESCRIPTION,
} from '../harness/schema-damage.js';

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function dataDir(mode = 0o700): string {
  const root = mkdtempSync(join(tmpdir(), 'edgectl-start-'));
  dirs.push(root);
  const dir = join(root, 'data');
  mkdirSync(dir);
  chmodSync(dir, mode);
  return dir;
}

const config = (dir: string, logLevel = 'silent') =>
  loadConfig({ flags: { dataDir: dir, listen: '127.0.0.1:0', logLevel }, env: {} });
const start = (dir: string) => startDaemon(config(dir), { adminCredentials: async () => ADMIN });
const mode = (file: string) => statSync(file).mode & 0o777;

/** Starts and stops a controller once, leaving a valid store in `dir` (fixture). */
async function seeded(): Promise<string> {
  const dir = dataDir();
  await (await start(dir)).close();
  return dir;
}

describe('store files at rest', () => {
  test('in a pre-existing 0755 data dir the database, its -wal/-shm files and the lock are 0600', async () => {
    const dir = dataDir(0o755);
    const old = process.umask(0o022);
    try {
      const d = await start(dir);
      try {
        const login = await request(
          d.pki.caBundlePem,
          'POST',
          `${d.url}/edge/management/v1/authenticate?method=password`,
          { body: ADMIN },
        );
        assert.equal(login.status, 200);
        for (const f of [DB_FILE, `${DB_FILE}-wal`, `${DB_FILE}-shm`, LOCK_FILE]) {
          assert.ok(existsSync(join(dir, f)), `${f} exists`);
          assert.equal(mode(join(dir, f)), 0o600, f);
        }
      } finally {
        await d.close();
      }
    } finally {
      process.umask(old);
    }
  });

  test('a database left at 0644 by an older version is made 0600 at start', async () => {
    const dir = await seeded();
    chmodSync(join(dir, DB_FILE), 0o644);
    const d = await start(dir);
    await d.close();
    assert.equal(mode(join(dir, DB_FILE)), 0o600);
  });
});

describe('stores refused at start', () => {
  test('a zero-length database is refused, not replaced by a new store with a new admin', async () => {
    const dir = dataDir();
    writeFileSync(join(dir, DB_FILE), '');
    await assert.rejects(
      start(dir),
      (e: Error) => /empty/.test(e.message) && /edgectl db check-integrity/.test(e.message),
    );
    assert.equal(statSync(join(dir, DB_FILE)).size, 0, 'the file is left as it was');
    assert.ok(!existsSync(join(dir, LOCK_FILE)), 'the lock is released');
  });

  test('a database with damaged pages is refused naming edgectl db check-integrity', async () => {
    const dir = await seeded();
    const file = join(dir, DB_FILE);
    const size = statSync(file).size;
    assert.ok(size > 16 * 4096);
    const fd = openSync(file, 'r+');
    // Pages 2 onwards hold the schema's tables and indexes: overwrite a run of them.
    writeSync(fd, Buffer.alloc(8 * 4096, 0xa5), 0, 8 * 4096, 4096);
    closeSync(fd);
    await assert.rejects(start(dir), /edgectl db check-integrity/);
  });

  test('a file that is not a database at all is refused naming edgectl db check-integrity', async () => {
    const dir = dataDir();
    writeFileSync(join(dir, DB_FILE), 'this is not a database, but it is not empty either\n'.repeat(100));
    await assert.rejects(start(dir), /edgectl db check-integrity/);
  });

  test('a missing table is refused at start with the table named', async () => {
    const dir = await seeded();
    const raw = new Database(join(dir, DB_FILE));
    const table = (
      raw
        .prepare(
          `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations' ORDER BY name LIMIT 1`,
        )
        .get() as { name: string }
    ).name;
    raw.pragma('foreign_keys = OFF');
    raw.exec(`DROP TABLE "${table}"`);
    raw.close();
    await assert.rejects(
      start(dir),
      (e: Error) => e.message.includes(`table ${table}`) && /edgectl db check-integrity/.test(e.message),
    );
  });

  test('a store carrying schema objects its migrations do not create is refused, each named', async () => {
    const dir = await seeded();
    const raw = new Database(join(dir, DB_FILE));
    injectForeignLogic(raw);
    raw.close();
    // A start that is not refused is closed again, so the failure does not leave a controller running.
    const refusal = await start(dir).then(
      (d) => d.close().then(() => undefined),
      (e: Error) => e,
    );
    assert.ok(refusal, 'the start is refused');
    for (const d of [FOREIGN_DESCRIPTION, ALTERED_DESCRIPTION, MISSING_DESCRIPTION])
      assert.ok(refusal.message.includes(d), `${d} in ${refusal.message}`);
    assert.match(refusal.message, new RegExp(`edgectl db check-integrity --data-dir ${dir}`));
    assert.ok(!existsSync(join(dir, LOCK_FILE)), 'the lock is released');
  });

  test('a store written by a newer version (unknown migration) is refused', async () => {
    const dir = await seeded();
    const raw = new Database(join(dir, DB_FILE));
    raw
      .prepare('INSERT INTO schema_migrations (name, timestamp) VALUES (?, ?)')
      .run('9999-from-the-future', new Date().toISOString());
    raw.close();
    await assert.rejects(start(dir), /newer edgectl.*9999-from-the-future/);
  });
});

describe('edgectl db check-integrity', () => {
  // The command in-process (test/harness/cli.ts): its exit status and output, without a Node start for each.
  const check = (dir: string, ...flags: string[]) =>
    edgectlSlow(join(dirname(dir), 'cli'), 'db', 'check-integrity', ...flags, '--data-dir', dir);

  test('passes a sound store and fails one with a missing table, naming it', async () => {
    const dir = await seeded();
    const ok = await check(dir);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^ok: /);
    const raw = new Database(join(dir, DB_FILE));
    raw.pragma('foreign_keys = OFF');
    raw.exec('DROP TABLE schema_migrations');
    raw.close();
    const bad = await check(dir);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /problem: .*schema_migrations/);
  });

  test('reports foreign logic without running it (exit 1); --fix drops and recreates what differs; then it starts', async () => {
    const dir = await seeded();
    const file = join(dir, DB_FILE);
    const raw = new Database(file);
    raw.exec(`INSERT INTO identities (id, "createdAt", "updatedAt", name, "typeId", "authPolicyId")
      VALUES ('plain', 'x', 'x', 'plain', 'User', 'default')`);
    injectForeignLogic(raw);
    // Would run on the first session the offline command opened: it opens none.
    raw.exec(`CREATE TRIGGER on_session AFTER INSERT ON api_sessions BEGIN UPDATE identities SET "isAdmin" = 1; END`);
    raw.close();
    const plainIsAdmin = () => {
      const db = new Database(file, { readonly: true });
      try {
        return (db.prepare(`SELECT "isAdmin" FROM identities WHERE id = 'plain'`).get() as { isAdmin: number }).isAdmin;
      } finally {
        db.close();
      }
    };
    const descriptions = [FOREIGN_DESCRIPTION, ALTERED_DESCRIPTION, MISSING_DESCRIPTION];
    const bad = await check(dir);
    assert.equal(bad.code, 1, bad.stdout + bad.stderr);
    for (const d of [...descriptions, "trigger on_session on api_sessions is not created by the store's migrations"])
      assert.ok(bad.stdout.includes(`problem: ${d}`), `${d} in ${bad.stdout}`);
    assert.equal(plainIsAdmin(), 0);

    const fix = await check(dir, '--fix');
    assert.equal(fix.code, 0, fix.stdout + fix.stderr);
    for (const d of descriptions) assert.ok(fix.stdout.includes(`fixed: ${d}`), `${d} in ${fix.stdout}`);
    assert.equal(plainIsAdmin(), 0);
    const again = await check(dir);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    await (await start(dir)).close();
  });

  test('fails an empty store file', async () => {
    const dir = dataDir();
    writeFileSync(join(dir, DB_FILE), '');
    const bad = await check(dir);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /empty/);
  });
});

describe('the data-dir lock', () => {
  const LOCK_MODULE = fileURLToPath(new URL('../../dist/store/lock.js', import.meta.url));

  /** A pid that no process has now: a child that has already exited. */
  const deadPid = () => spawnSync(process.execPath, ['-e', '0']).pid!;

  /**
   * Starts `n` processes that all try to take the lock at the same moment; resolves what each printed. Once every
   * one has loaded the lock module and said so, each is told the moment, shortly ahead: it sleeps until just before
   * it and spins through the rest. The winner holds the lock a second while the others try.
   */
  async function race(dir: string, n: number): Promise<string[]> {
    const script = `
      const { acquireLock } = await import(${JSON.stringify(LOCK_MODULE)});
      process.stdout.write('ready\\n');
      const at = Number(await new Promise((resolve) => process.stdin.once('data', resolve)));
      const sleep = at - Date.now() - 20;
      if (sleep > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, sleep);
      while (Date.now() < at) {}
      let out;
      try { acquireLock(${JSON.stringify(dir)}, ${JSON.stringify(join(dir, DB_FILE))}); out = 'won'; } catch (e) { out = /in use by process/.test(e.message) ? 'lost' : 'error: ' + e.message; }
      process.stdout.write(out);
      setTimeout(() => {}, 1000);`;
    const racers = Array.from({ length: n }, () => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      let out = '';
      const ready = new Promise<void>((resolve) =>
        child.stdout.on('data', (c) => {
          out += c;
          if (out.startsWith('ready\n')) resolve();
        }),
      );
      const result = new Promise<string>((resolve) => child.on('exit', () => resolve(out.replace(/^ready\n/, ''))));
      return { child, ready: Promise.race([ready, result]), result };
    });
    await Promise.all(racers.map((r) => r.ready));
    const at = Date.now() + 100;
    for (const r of racers) r.child.stdin.end(`${at}\n`);
    return Promise.all(racers.map((r) => r.result));
  }

  test('starters racing on a stale lock: exactly one takes it', async () => {
    for (let trial = 0; trial < 4; trial++) {
      const dir = dataDir();
      writeFileSync(join(dir, LOCK_FILE), `${deadPid()} stale`);
      const results = await race(dir, 6);
      assert.deepEqual(
        results.filter((r) => r !== 'won' && r !== 'lost'),
        [],
        'no other failure',
      );
      assert.equal(results.filter((r) => r === 'won').length, 1, `trial ${trial}: ${results.join(', ')}`);
    }
  });

  test('a second controller on the same data dir in the same process is refused while the first runs', async () => {
    const dir = await seeded();
    const d = await start(dir);
    try {
      await assert.rejects(start(dir), /in use by process/);
    } finally {
      await d.close();
    }
    await (await start(dir)).close();
  });
});

describe('debug logs', () => {
  test('a malformed URL is logged with its token masked', async () => {
    const dir = dataDir();
    let logged = '';
    const sink = new Writable({ write: (chunk, _enc, done) => ((logged += chunk), done()) });
    const d = await startDaemon(config(dir, 'debug'), { adminCredentials: async () => ADMIN, logStream: sink });
    try {
      const secret = 'b1f8a21e-1111-4222-8333-123456789abc';
      const status = await new Promise<number>((resolve, reject) => {
        const req = https.request(
          `${d.url}/edge/client/v1/%zz/${secret}?token=topsecretvalue`,
          { ca: d.pki.caBundlePem, agent: false },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end();
      });
      assert.equal(status, 404);
      await new Promise((r) => setTimeout(r, 100));
      assert.match(logged, /request refused by the router/, 'the refusal is logged');
      assert.ok(!logged.includes(secret), 'no UUID token in the log');
      assert.ok(!logged.includes('topsecretvalue'), 'no query token in the log');
    } finally {
      await d.close();
    }
  });
});
