/**
 * The write-ahead log stays bounded under provisioning at full rate and is emptied when writes stop
 * (docs/decisions.md, "Write-ahead log and commits"); `/metrics` shows its size, the checkpoint lag and the
 * bytes written. The restart size is lowered to 1 MiB so a few seconds of writes overrun it many times.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer } from '../harness/server.js';

const MiB = 1024 * 1024;

function sample(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

test('identity creates at full rate keep the log near its bound, and it is emptied within 10 s after', async () => {
  const s = await startTestServer({ yaml: 'metrics:\n  enabled: true\nstore:\n  wal:\n    restartSizeMiB: 1\n' });
  try {
    const admin = await s.admin();
    const wal = join(s.dataDir, 'edgectl.db-wal');
    const walSize = () => (existsSync(wal) ? statSync(wal).size : 0);
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, walSize())), 10);
    const filler = 'x'.repeat(192 * 1024);
    let created = 0;
    let refused = 0;
    const end = Date.now() + 3000;
    await Promise.all(
      Array.from({ length: 16 }, async (_, w) => {
        for (let i = 0; Date.now() < end; i++) {
          const res = await admin.post('/identities', {
            name: `wal-${w}-${i}`,
            type: 'Device',
            isAdmin: false,
            roleAttributes: ['fleet', `group-${i % 50}`],
            // Large tags make each create write many pages, so even a slow machine overruns the bound.
            tags: { note: filler },
          });
          if (res.status === 201) created++;
          else refused++;
        }
      }),
    );
    clearInterval(sampler);
    assert.equal(refused, 0, 'every create succeeded');
    const metrics = await s.request('GET', `/metrics`, { headers: { accept: '*/*' } });
    assert.equal(metrics.status, 200);
    const text = metrics.text;
    const written = sample(text, 'edgectl_store_wal_written_bytes_total')!;
    assert.ok(
      written > 8 * MiB,
      `the creates wrote many times the bound to the log (${written} bytes, ${created} creates)`,
    );
    // Writers wait at the hard bound (4 MiB) before a commit, not inside it: one group commit of all 16 clients'
    // creates (~200 KiB of pages each) may still pass it, by up to ~3.2 MiB on a busy machine.
    assert.ok(peak <= 8 * MiB, `the log stayed near its 4 MiB hard bound (peak ${peak} bytes)`);
    assert.ok(sample(text, 'edgectl_store_wal_truncations_total')! >= 1, 'the log was cut');
    assert.notEqual(sample(text, 'edgectl_store_wal_checkpoint_lag_frames'), undefined, 'the lag is shown');
    assert.notEqual(sample(text, 'edgectl_store_write_waits_total'), undefined, 'writers waiting is counted');
    for (const t0 = Date.now(); walSize() > 0;) {
      assert.ok(Date.now() - t0 < 10_000, `the log is emptied within 10 s of the last write (${walSize()} bytes)`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const after = await s.request('GET', `/metrics`, { headers: { accept: '*/*' } });
    assert.equal(sample(after.text, 'edgectl_store_wal_checkpoint_lag_frames'), 0);
    const list = await admin.get(`/identities?filter=${encodeURIComponent('name contains "wal-"')}&limit=1`);
    assert.equal(list.body.meta.pagination.totalCount, created, 'every acknowledged create is stored');
  } finally {
    await s.close();
  }
});

test('store.wal.restartSizeMiB outside 1..1024 stops the start with the setting named', async () => {
  await assert.rejects(
    startTestServer({ yaml: 'store:\n  wal:\n    restartSizeMiB: 0\n' }),
    /store\.wal\.restartSizeMiB must be a whole number from 1 to 1024/,
  );
});
