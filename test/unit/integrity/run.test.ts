/**
 * The integrity runner's rules that the API tests cannot reach by damaging a store: nothing is repaired while a
 * fatal finding (a damaged file) stands, repairs of the other checks run in the list's order in one
 * transaction that a failing repair rolls back whole, and a scan shares the event loop: it
 * runs on after `start` returns, shows its findings so far, refuses a second start, and lets the loop turn
 * between its steps.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { DatabaseOps, repairIntegrity, type ScanFinding } from '../../../src/model/integrity/run.js';
import { INTEGRITY_CHECKS, type IntegrityCheck } from '../../../src/model/integrity/checks.js';
import { readMarkers } from '../../../src/store/access-markers.js';
import { openTestStore } from '../../harness/store.js';

const check = (name: string, fatal = false): IntegrityCheck => ({ name, fatal, scan: async () => [] });

test('a fatal finding stops every repair', async () => {
  const t = await openTestStore();
  try {
    const ran: string[] = [];
    const findings: ScanFinding[] = [
      { description: 'file damaged', check: check('file', true) },
      { description: 'other', check: check('other'), repair: async () => void ran.push('other') },
    ];
    const before = await readMarkers(t.ctx.db);
    await repairIntegrity(t.ctx, findings);
    assert.deepEqual(ran, []);
    assert.deepEqual(await readMarkers(t.ctx.db), before, 'markers untouched');
  } finally {
    await t.close();
  }
});

test('repairs run in one transaction: a failing one rolls back the others and the marker bump', async () => {
  const t = await openTestStore();
  try {
    const markersCheck = INTEGRITY_CHECKS.find((c) => c.name === 'access-markers')!;
    const before = await readMarkers(t.ctx.db);
    const findings: ScanFinding[] = [
      {
        description: 'a marker row goes',
        check: markersCheck,
        repair: async (c) => {
          const { deleteMarker } = await import('../../../src/store/integrity.js');
          await deleteMarker(c.db, 'catalog');
        },
      },
      {
        description: 'then a repair fails',
        check: check('failing'),
        repair: async () => {
          throw new Error('repair failed');
        },
      },
    ];
    await assert.rejects(repairIntegrity(t.ctx, findings), /repair failed/);
    assert.deepEqual(await readMarkers(t.ctx.db), before, 'nothing of the fix remains');
    // A clean store scans clean.
    for (const c of INTEGRITY_CHECKS) assert.deepEqual(await c.scan(t.ctx), [], c.name);
  } finally {
    await t.close();
  }
});

/** Waits (turn by turn of the event loop, at most 1000) until `done` holds. */
async function turnsUntil(done: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !done(); i++) await nextTurn();
  assert.ok(done(), 'reached within 1000 turns of the event loop');
}

test('a scan goes on after start returns: in progress with the findings so far, a second start refused', async () => {
  const t = await openTestStore();
  try {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const checks: IntegrityCheck[] = [
      { name: 'first', scan: async () => [{ description: 'first finding' }] },
      {
        name: 'held',
        scan: async () => {
          await held;
          return [{ description: 'second finding' }];
        },
      },
    ];
    const ops = new DatabaseOps({ ctx: t.ctx, store: t.store, file: t.store.raw.name, checks });
    await ops.start(false);
    await turnsUntil(() => ops.local().results.length === 1);
    const running = await ops.results();
    assert.equal(running.inProgress, true);
    assert.deepEqual(running.results, [{ description: 'first finding', fixed: false }]);
    await assert.rejects(
      () => ops.start(true),
      (e: Error & { code?: string }) => e.code === 'RATE_LIMITED',
    );
    release();
    await ops.idle();
    const done = await ops.results();
    assert.equal(done.inProgress, false);
    assert.equal(done.fixingErrors, false, 'the refused fix did not replace the running check');
    assert.deepEqual(
      done.results.map((r) => r.description),
      ['first finding', 'second finding'],
    );
  } finally {
    await t.close();
  }
});

test('the real checks let the event loop turn: work queued after start runs while the scan is in progress', async () => {
  const t = await openTestStore();
  try {
    const ops = new DatabaseOps({ ctx: t.ctx, store: t.store, file: t.store.raw.name });
    await ops.start(false);
    // Queued after start: with a scan that never yields, the whole scan would end before this runs.
    const first = await nextTurn().then(() => ops.local().inProgress);
    let turns = 0;
    const counted = (async () => {
      for (; ops.local().inProgress; turns++) await nextTurn();
    })();
    await ops.idle();
    await counted;
    assert.equal(first, true, 'the scan was still running on the next turn of the event loop');
    assert.ok(turns > INTEGRITY_CHECKS.length, `the loop turned ${turns} times during the scan`);
    assert.deepEqual((await ops.results()).results, [], 'a clean store scans clean');
  } finally {
    await t.close();
  }
});
