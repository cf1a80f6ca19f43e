/**
 * The online `edgectl db` commands against a running controller, on either store: check-integrity (clean, then
 * a damaged store: findings and exit 1, then --fix: fixed and exit 0), snapshot, and `identity trace`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { edgectl, type Run } from '../harness/cli.js';
import { postgresSkip } from '../harness/pg.js';
import { writeStore } from '../harness/raw-store.js';
import { ADMIN, createIdentity, startTestServer, type TestServer } from '../harness/server.js';

const ok = (r: Run, what: string) => assert.equal(r.code, 0, `${what}: ${r.stdout}\n${r.stderr}`);

for (const store of ['sqlite', 'postgres'] as const)
  describe(`edgectl db online (${store})`, { skip: store === 'postgres' && (await postgresSkip()) }, () =>
    online(store),
  );

function online(store: 'sqlite' | 'postgres'): void {
  let s: TestServer;
  let tmp: string;
  let cfg: string;
  const cli = (...args: string[]) => edgectl(cfg, ...args);

  before(async () => {
    s = await startTestServer({ store });
    tmp = mkdtempSync(join(tmpdir(), 'edgectl-db-cli-'));
    cfg = join(tmp, 'cfg');
    const caFile = join(tmp, 'ca.pem');
    writeFileSync(caFile, s.ca);
    ok(await cli('login', s.url, '-u', ADMIN.username, '-p', ADMIN.password, '--ca', caFile), 'login');
  });
  after(async () => {
    await s?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test('db check-integrity online: clean, then findings (exit 1), then --fix repairs them', async () => {
    const clean = await cli('db', 'check-integrity');
    ok(clean, 'clean check');
    assert.match(clean.stdout, /^ok: the data-integrity scan found nothing$/m);
    assert.match(clean.stderr, /data-integrity check started on https:/);

    await writeStore(s, (exec) => exec(`delete from access_markers where name = 'catalog'`));

    const found = await cli('db', 'check-integrity');
    assert.equal(found.code, 1, found.stdout + found.stderr);
    assert.match(found.stdout, /^problem: access marker catalog is missing/m);
    assert.match(found.stderr, /1 finding; run `edgectl db check-integrity --fix`/);

    const json = await cli('db', 'check-integrity', '--json');
    assert.equal(json.code, 1);
    assert.equal(JSON.parse(json.stdout).results[0].fixed, false);

    const fixed = await cli('db', 'check-integrity', '--fix');
    ok(fixed, 'fix');
    assert.match(fixed.stdout, /^fixed: access marker catalog is missing/m);
    assert.match(fixed.stdout, /1 finding, 1 fixed/);
    ok(await cli('db', 'check-integrity'), 'clean after the fix');
  });

  test('db check-integrity --data-dir on a running controller: the file check passes, the scan is refused by the lock', async () => {
    const offline = await cli('db', 'check-integrity', '--data-dir', s.dataDir, ...(s.dbUrl ? ['--db', s.dbUrl] : []));
    assert.equal(offline.code, 1, offline.stdout + offline.stderr);
    // A PostgreSQL store has no file to check: the database answers, then the data dir's lock refuses.
    if (store === 'sqlite') assert.match(offline.stdout, /passed SQLite's integrity check/);
    assert.match(offline.stderr, new RegExp(`in use by process ${process.pid}`));
  });

  test('db snapshot online: the controller writes it and names it; a second within a minute is refused', async () => {
    const first = await cli('db', 'snapshot');
    ok(first, 'snapshot');
    const path = /host: (\S+)$/m.exec(first.stdout)?.[1];
    assert.ok(path && existsSync(path), first.stdout);
    // (`-1` added when the fix above took one in the same second.)
    assert.match(
      path,
      store === 'postgres' ? /edgectl-postgres-\d{8}-\d{6}(-\d+)?\.dump$/ : /edgectl\.db-\d{8}-\d{6}(-\d+)?$/,
    );
    const second = await cli('db', 'snapshot');
    assert.equal(second.code, 1);
    assert.match(second.stderr, /RATE_LIMITED/);
  });

  test('identity trace: on with a duration, trace id and channels, then off', async () => {
    const admin = await s.admin();
    const id = await createIdentity(admin, { name: 'traced-one' });
    const on = await cli('identity', 'trace', 'traced-one', '--duration', '2h', '--trace-id', 'tr-9', '--channel', 'a');
    ok(on, 'trace on');
    assert.match(on.stdout, new RegExp(`tracing identity ${id} until \\S+ \\(trace id tr-9\\)`));
    const shown = (await admin.get(`/identities/${id}`)).body.data.tracing;
    assert.equal(shown.enabled, true);
    assert.deepEqual(shown.channels, ['a']);
    const off = await cli('identity', 'trace', id, '--disable');
    ok(off, 'trace off');
    assert.match(off.stdout, /tracing of identity \S+ is off/);
    assert.equal((await admin.get(`/identities/${id}`)).body.data.tracing.enabled, false);
  });
}
