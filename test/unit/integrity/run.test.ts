/**
 * The integrity runner's rules that the API tests cannot reach by damaging a store: nothing is repaired while a
 * fatal finding (a damaged file) stands, and repairs of the other checks run in the list's order in one
 * transaction that a failing repair rolls back whole.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { repairIntegrity, type ScanFinding } from '../../../src/model/integrity/run.js';
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
