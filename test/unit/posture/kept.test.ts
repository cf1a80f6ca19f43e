/**
 * What an identity keeps of its reported posture (src/model/posture/kept.ts): which checks
 * apply, which slot a response fills, the size of the records and the byte bound.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  allowedSlots,
  applicableChecks,
  MAX_REPORTED_BYTES,
  recordBytes,
  reportedBytes,
  slotFor,
  withResponses,
  type KeptResponse,
} from '../../../src/model/posture/kept.js';
import type { CheckedPolicy, PolicyCheck } from '../../../src/model/posture/evaluate.js';
import { processKey, type Reported, type ReportedPosture } from '../../../src/model/posture/state.js';
import { isDomainError } from '../../../src/model/errors.js';

const NOW = new Date('2026-01-01T12:00:00Z');
const checkOf = (id: string, typeId: string, details: Record<string, unknown>): PolicyCheck => ({
  id,
  name: id,
  typeId,
  createdAt: '',
  updatedAt: '',
  details,
});
const os = checkOf('os', 'OS', { operatingSystems: [{ type: 'Linux' }] });
const proc = checkOf('proc', 'PROCESS', { process: { osType: 'Linux', path: '/bin/Agent' } });
const multi = checkOf('multi', 'PROCESS_MULTI', {
  semantic: 'AnyOf',
  processes: [
    { osType: 'Linux', path: '/bin/a' },
    { osType: 'Linux', path: '/bin/B' },
  ],
});
const mfa = checkOf('mfa', 'MFA', {});
const policy = (id: string, checks: PolicyCheck[], services: string[]): CheckedPolicy => ({
  id,
  name: id,
  type: 'Dial',
  checks,
  services: new Set(services),
});
const checks = new Map([os, proc, multi, mfa].map((c) => [c.id, c]));
const PROCESS_ANSWERS = ['PROCESS', 'PROCESS_MULTI'];

describe('applicable checks', () => {
  test('those of the identity’s policies that grant a service', () => {
    const model = new Map([
      ['granting', policy('granting', [os, mfa], ['svc'])],
      ['no-service', policy('no-service', [proc], [])],
      ['not-mine', policy('not-mine', [multi], ['svc'])],
    ]);
    assert.deepEqual([...applicableChecks(model, ['granting', 'no-service', 'unknown']).keys()], ['os', 'mfa']);
    assert.equal(applicableChecks(new Map(), ['granting']).size, 0);
  });

  test('their slots: one per type for OS/domain/MAC, one per process, none for MFA', () => {
    assert.deepEqual(
      [...allowedSlots(checks)].sort(),
      ['os', processKey('proc', '/bin/Agent'), processKey('multi', '/bin/a'), processKey('multi', '/bin/B')].sort(),
    );
  });
});

describe('slot of a response', () => {
  const cases: [string, Record<string, unknown>, readonly string[], string | undefined][] = [
    ['an OS response to an OS check', { id: 'os' }, ['OS'], 'os'],
    ['an unknown id', { id: 'nope' }, ['OS'], undefined],
    ['a response of another type', { id: 'os' }, ['MAC'], undefined],
    [
      'a process of a PROCESS check, any path',
      { id: 'proc', path: '/x' },
      PROCESS_ANSWERS,
      processKey('proc', '/bin/agent'),
    ],
    [
      'a named process of a multi check',
      { id: 'multi', path: '/BIN/A' },
      PROCESS_ANSWERS,
      processKey('multi', '/bin/a'),
    ],
    ['another process of a multi check', { id: 'multi', path: '/bin/c' }, PROCESS_ANSWERS, undefined],
    ['a response naming an MFA check', { id: 'mfa' }, PROCESS_ANSWERS, undefined],
  ];
  for (const [name, response, answers, slot] of cases) {
    test(`${name} ⇒ ${slot === undefined ? 'ignored' : 'kept'}`, () =>
      assert.equal(slotFor(checks, response, answers), slot));
  }
});

describe('bytes', () => {
  const mac = (addresses: string[]): Reported => ({ postureCheckId: 'm', lastUpdatedAt: NOW, addresses }) as Reported;

  test('a record counts its strings’ UTF-8 bytes plus fixed costs', () => {
    assert.equal(recordBytes(undefined), 0);
    assert.equal(recordBytes(mac([])), 64 + 8 + 1);
    assert.equal(recordBytes(mac(['ab', 'é'])), 64 + 8 + 1 + (8 + 2) + (8 + 2));
    const r: ReportedPosture = { mac: mac(['ab']) as ReportedPosture['mac'], processes: new Map() };
    assert.equal(reportedBytes(r), recordBytes(r.mac));
  });

  const kept = (slot: string, addresses: string[], prefix = ''): KeptResponse => ({
    slot,
    record: mac(addresses),
    prefix,
    id: 'm',
  });

  test('a newer record replaces the older one of its slot; slots no check fills are dropped', () => {
    const current: ReportedPosture = { processes: new Map() };
    const allowed = new Set(['mac']);
    let next = current;
    for (let i = 0; i < 100; i++) next = withResponses(next, allowed, [kept('mac', [`a${i}`])]);
    assert.deepEqual((next.mac as { addresses: string[] }).addresses, ['a99']);
    const stale: ReportedPosture = {
      ...next,
      processes: new Map([
        [processKey('gone', '/x'), { ...mac([]), path: '/x', isRunning: true, signerFingerprints: [] }],
      ]),
    };
    const pruned = withResponses(stale, new Set(['mac']), []);
    assert.equal(pruned.processes.size, 0);
    assert.equal(stale.processes.size, 1, 'the current record set is not changed');
    assert.equal(withResponses(stale, new Set(), []).mac, undefined);
  });

  test(`over ${MAX_REPORTED_BYTES} bytes in all: refused naming the response, the current records untouched`, () => {
    const current: ReportedPosture = { processes: new Map() };
    const half = Array.from({ length: 40 }, () => 'x'.repeat(MAX_REPORTED_BYTES / 80));
    const ok = withResponses(current, new Set(['mac', 'p']), [kept('mac', half)]);
    assert.ok(reportedBytes(ok) <= MAX_REPORTED_BYTES);
    assert.throws(
      () => withResponses(ok, new Set(['mac', 'p']), [kept('mac', half), kept('p', half, '[1].')]),
      (e: unknown) => isDomainError(e) && (e.errorCause as { field: string }).field === '[1].id',
    );
    assert.equal(ok.processes.size, 0);
    // The same amount again, replacing: within the bound.
    assert.equal(withResponses(ok, new Set(['mac']), [kept('mac', half)]).mac?.postureCheckId, 'm');
  });
});
