/**
 * WAL checkpoints from a worker thread (src/store/checkpointer.ts): it starts once the log has grown past its
 * start size; while it runs, the connection does not checkpoint on its own, yet what is written reaches the
 * database file; the log stays bounded under writes and is emptied when they stop; closing the store stops the
 * worker.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openStore, withTx } from '../../../src/store/db.js';
import { DEFAULT_CHECKPOINT_LIMITS } from '../../../src/store/checkpointer.js';

async function until(what: string, ok: () => boolean, ms = 8000): Promise<void> {
  for (const t0 = Date.now(); !ok();) {
    if (Date.now() - t0 > ms) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('a background checkpointer starts once the log passes 4 MiB and copies it into the database file; the connection does not', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'edgectl-ckpt-'));
  const file = join(dir, 'store.db');
  const store = await openStore(file, {
    backgroundCheckpoints: true,
    checkpointLimits: { ...DEFAULT_CHECKPOINT_LIMITS, intervalMs: 50 },
  });
  try {
    const auto = () => store.raw.pragma('wal_autocheckpoint', { simple: true }) as number;
    store.raw.exec('create table blobs (b blob)');
    const insert = store.raw.prepare('insert into blobs (b) values (randomblob(?))');
    for (let i = 0; i < 32; i++) insert.run(64 * 1024); // 2 MiB, into the WAL
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(auto(), 10000, 'no worker while the log is under its start size');
    assert.equal(store.wal()!.background, false);
    const before = statSync(file).size;
    for (let i = 0; i < 48; i++) insert.run(64 * 1024); // 3 MiB more
    await until('the worker to take over', () => auto() === 0);
    assert.equal(store.wal()!.background, true);
    await until('the database file to grow by the checkpointed pages', () => statSync(file).size > before + 4_000_000);
    assert.equal(auto(), 0, 'the connection still leaves checkpoints to the worker');
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('without the option the connection checkpoints on its own, as before', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'edgectl-ckpt-'));
  const store = await openStore(join(dir, 'store.db'));
  try {
    assert.equal(store.raw.pragma('wal_autocheckpoint', { simple: true }), 10000);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('under a steady stream of write transactions the log is cut, stays near its bound, and is emptied when writes stop', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'edgectl-ckpt-'));
  const file = join(dir, 'store.db');
  const MiB = 1024 * 1024;
  // A 1 MiB restart size: the hard bound is 4 MiB, and nothing may let the log pass it by more than one
  // interval's writes.
  const store = await openStore(file, {
    backgroundCheckpoints: true,
    checkpointLimits: { restartBytes: MiB, intervalMs: 50, startBytes: 0 },
  });
  try {
    const auto = () => store.raw.pragma('wal_autocheckpoint', { simple: true }) as number;
    await until('the worker to take over', () => auto() === 0);
    await sql`create table blobs (b blob)`.execute(store.db);
    const walSize = () => (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0);
    let peak = 0;
    let written = 0;
    // Writers as fast as the store takes them, 64 KiB a transaction, until 48 MiB went in: counted, not timed,
    // so a busy machine makes the run longer, not the stream shorter.
    while (written < 48 * MiB) {
      await withTx(store.db, (trx) => sql`insert into blobs (b) values (randomblob(${64 * 1024}))`.execute(trx));
      written += 64 * 1024;
      peak = Math.max(peak, walSize());
    }
    assert.ok(peak <= 6 * MiB, `the log stayed near its bound while written to (peak ${peak} bytes)`);
    await until('the log to be emptied once writes stop', () => walSize() === 0, 10_000);
    const wal = store.wal()!;
    assert.equal(wal.background, true);
    assert.ok(wal.truncations >= 2, `the log was cut (${wal.truncations} times)`);
    assert.ok(wal.writtenBytes >= written, `the bytes appended to the log are counted (${wal.writtenBytes})`);
    assert.equal(wal.lagFrames, 0);
    const rows = (store.raw.prepare('select count(*) as n from blobs').get() as { n: number }).n;
    assert.equal(rows * 64 * 1024, written, 'every acknowledged write is in the store');
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
