/**
 * WAL checkpoints from a worker thread (src/store/checkpointer.ts): while it runs, the connection does not
 * checkpoint on its own, yet what is written reaches the database file; closing the store stops the worker.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../../src/store/db.js';

async function until(what: string, ok: () => boolean, ms = 8000): Promise<void> {
  for (const t0 = Date.now(); !ok();) {
    if (Date.now() - t0 > ms) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('a background checkpointer copies the WAL into the database file; the connection does not', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'edgectl-ckpt-'));
  const file = join(dir, 'store.db');
  const store = await openStore(file, { backgroundCheckpoints: true });
  try {
    const auto = () => store.raw.pragma('wal_autocheckpoint', { simple: true }) as number;
    await until('the worker to take over', () => auto() === 0);
    store.raw.exec('create table blobs (b blob)');
    const before = statSync(file).size;
    const insert = store.raw.prepare('insert into blobs (b) values (randomblob(?))');
    for (let i = 0; i < 64; i++) insert.run(64 * 1024); // 4 MiB, into the WAL
    await until('the database file to grow by the checkpointed pages', () => statSync(file).size > before + 3_000_000);
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
