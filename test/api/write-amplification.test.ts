/**
 * What an identity create costs in write-ahead log on SQLite (docs/decisions.md, "Write-ahead log and commits"):
 * created through the Management API, 16 at once as concurrent provisioning clients send them, they share one
 * commit and write at most 16 KB of log each. Counted from the log file itself: a reader holds the log open
 * meanwhile, so no checkpoint starts it over, and the frames the creates appended are read back
 * (bench/wal-frames.ts). Not a timing test: the batch's time bound is lifted so a slow machine does not split
 * the commit, and what is counted is bytes. The bound is SQLite's (its log is the store's own); the servers here
 * are SQLite whatever the run's store.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startTestServer } from '../harness/server.js';
import { runtimeOf } from '../../src/store/runtime.js';
import { readWalFrames } from '../../bench/wal-frames.js';

const BOUND = 16 * 1024;

test('16 identity creates at once write at most 16 KB of log each', async () => {
  const s = await startTestServer({ store: 'sqlite' });
  try {
    const admin = await s.admin();
    const batcher = runtimeOf(s.daemon.store.db)!.batcher!;
    batcher.maxBatchMs = Infinity;
    const create = (name: string, i: number) =>
      admin.post('/identities', {
        name,
        type: 'Device',
        isAdmin: false,
        roleAttributes: ['fleet', `group-${i % 4}`, ...(i % 3 === 0 ? ['sensors'] : [])],
      });
    // A create first, so the log holds frames not yet checkpointed when the reader begins (it then keeps a
    // mark in the log, and no writer may start the log over while it is held).
    assert.equal((await create('warm-up', 0)).status, 201);
    const file = join(s.dataDir, 'edgectl.db');
    const reader = new Database(file, { readonly: true });
    try {
      reader.exec('begin');
      reader.prepare('select count(*) from sqlite_schema').get();
      const before = readWalFrames(`${file}-wal`);
      const commits = s.daemon.store.commits();
      const created = await Promise.all(Array.from({ length: 16 }, (_, i) => create(`device-${i}`, i)));
      assert.deepEqual(
        created.map((r) => r.status),
        Array(16).fill(201),
      );
      const after = readWalFrames(`${file}-wal`);
      assert.equal(after.salt, before.salt, 'the log did not start over while it was held');
      assert.equal(s.daemon.store.commits().batches - commits.batches, 1, 'the 16 creates shared one commit');
      const bytes = (after.frames.length - before.frames.length) * after.frameBytes;
      assert.ok(bytes / 16 <= BOUND, `an identity create wrote ${(bytes / 16 / 1024).toFixed(1)} KB of log`);
    } finally {
      reader.close();
    }
  } finally {
    await s.close();
  }
});
