/**
 * The offline database operations record their events in the store (issue #24): `edgectl db snapshot` and
 * `db check-integrity` in the store they worked on, `db restore` in the restored store, `db migrate` in the
 * migrated store, each with the offline CLI as its source and the operating-system user. A controller's clean
 * run is framed by `started` and `stopped`.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { userInfo } from 'node:os';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { startTestServer, type TestServer } from '../harness/server.js';
import { edgectlSlow, type Run } from '../harness/cli.js';
import { scratch } from '../harness/processes.js';
import { wholeBody, type EventRow } from '../../src/store/events.js';

const tmp = scratch('edgectl-db-events-');

type Ev = Record<string, any>;

/** The events of a store file, oldest first (fixture: no assertions). */
function storedEvents(file: string, namespace: string): Ev[] {
  const db = new Database(file, { readonly: true });
  try {
    const rows = db
      .prepare(
        'select id, namespace, "eventType", timestamp, "actorId", "entityType", "entityId", body from events where namespace = ? order by seq',
      )
      .all(namespace) as EventRow[];
    // Stored shortened: read whole as the controller reads them (src/store/event-text.ts).
    return rows.map((r) => JSON.parse(wholeBody(r)) as Ev);
  } finally {
    db.close();
  }
}

describe('offline database operations record their events', () => {
  let server: TestServer;
  let dir: string;
  let store: string;
  let db: (...args: string[]) => Promise<Run>;

  before(async () => {
    server = await startTestServer();
    dir = server.dataDir;
    store = join(dir, 'edgectl.db');
    const work = tmp.tempDir();
    db = (...args) => edgectlSlow(join(work, 'config'), 'db', ...args, '--data-dir', dir);
    await server.admin();
    // The controller stops; its data dir stays (the server's close removes it, after the tests).
    await server.daemon.close();
  });
  after(() => server?.close());

  it('a stopped controller left its started and stopped events', () => {
    assert.deepEqual(
      storedEvents(store, 'controller').map((e) => e.event_type),
      ['started', 'stopped'],
    );
  });

  let snapshot: string;
  it('snapshot, integrity check and restore each record one event with the offline source', async () => {
    const snap = await db('snapshot');
    assert.equal(snap.code, 0, snap.stderr);
    snapshot = snap.stdout.match(/snapshot written to (\S+)/)![1]!;
    const check = await db('check-integrity');
    assert.equal(check.code, 0, check.stderr);
    const recorded = storedEvents(store, 'database');
    assert.deepEqual(
      recorded.map((e) => e.event_type),
      ['snapshot', 'integrity-check'],
    );
    for (const e of recorded) {
      assert.equal(e.source, 'offline');
      assert.equal(e.os_user, userInfo().username);
    }
    assert.equal(recorded[0]!.path, snapshot);
    assert.equal(recorded[1]!.findings, 0);

    const restored = await db('restore', snapshot);
    assert.equal(restored.code, 0, restored.stderr);
    const after = storedEvents(store, 'database');
    assert.deepEqual(
      after.map((e) => e.event_type),
      ['restore'],
      'the restored store: its own history, then the restore',
    );
    assert.equal(after[0]!.from, snapshot);
    assert.match(after[0]!.replaced, /edgectl\.db\.replaced-/);
  });

  it('migrate records the migrations it applied', async () => {
    // 0007 only adds the built-in config types when missing: recorded as not applied, it is pending.
    const pending = '0007-builtin-config-types';
    const d = new Database(store);
    d.prepare('DELETE FROM schema_migrations WHERE name = ?').run(pending);
    d.close();
    const r = await db('migrate');
    assert.equal(r.code, 0, r.stderr);
    const migrated = storedEvents(store, 'database').filter((e) => e.event_type === 'migrate');
    assert.equal(migrated.length, 1);
    assert.deepEqual(migrated[0]!.applied, [pending]);
    assert.equal(migrated[0]!.source, 'offline');
  });
});
