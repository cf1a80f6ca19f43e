/**
 * Each posture check type's evaluation, table-driven (docs/reference-notes.md §9.3): passing and failing
 * reports, semver ranges, case rules, AllOf/AnyOf, MFA timeouts and wake/unlock prompts; and the bound on
 * failed service requests.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { domainType } from '../../../src/model/posture/types/domain.js';
import { macType } from '../../../src/model/posture/types/mac.js';
import { mfaType, PROMPT_GRACE_SECONDS } from '../../../src/model/posture/types/mfa.js';
import { osType } from '../../../src/model/posture/types/os.js';
import { processMultiType } from '../../../src/model/posture/types/process-multi.js';
import { processType } from '../../../src/model/posture/types/process.js';
import type { PostureView } from '../../../src/model/posture/types/type.js';
import {
  MAX_FAILED_REQUESTS,
  processKey,
  recordsFromStore,
  storedRecords,
  type ApiSessionPosture,
  type IdentityPosture,
  type ReportedPosture,
} from '../../../src/model/posture/state.js';
import { identityPosture, recordFailedRequest } from '../../../src/model/posture/posture-of.js';
import { createEntity } from '../../../src/model/crud.js';
import { identities } from '../../../src/model/resources/index.js';
import { failedRequests, putIdentityPosture } from '../../../src/store/posture-state.js';
import { openTestStore, type TestStore } from '../../harness/store.js';

const NOW = new Date('2026-01-01T12:00:00Z');
const at = (secondsAgo: number) => new Date(NOW.getTime() - secondsAgo * 1000);
const reported = { postureCheckId: 'c', lastUpdatedAt: NOW };

function view(identity: Partial<IdentityPosture> = {}, session?: ApiSessionPosture): PostureView {
  return { identity: { processes: new Map(), ...identity }, session, now: NOW };
}

describe('OS', () => {
  const d = {
    operatingSystems: [
      { type: 'Windows', versions: ['>=10.0.19041 <11', '^12.1.0'] },
      { type: 'Linux', versions: [] },
    ],
  };
  const cases: [string, string, boolean][] = [
    ['Windows', '10.0.19041', true],
    ['windows', '10.0.20000', true],
    ['WINDOWS', '11.0.0', false],
    ['Windows', '12.3.4', true],
    ['Windows', '10.0.1', false],
    ['Windows', '10', false],
    ['Windows', 'not-a-version', false],
    ['Linux', 'anything', true],
    ['macOS', '14.0.0', false],
  ];
  for (const [type, version, pass] of cases) {
    test(`${type} ${version} ⇒ ${pass}`, () => {
      assert.equal(osType.evaluate(d, 'c', view({ os: { ...reported, type, version, build: '' } })).isPassing, pass);
    });
  }
  test('nothing reported fails, with the expected value recorded', () => {
    const o = osType.evaluate(d, 'c', view());
    assert.equal(o.isPassing, false);
    assert.deepEqual(o.failure.expectedValue, d.operatingSystems);
  });
});

describe('DOMAIN and MAC', () => {
  const domains = { domains: ['Corp.Example', 'lab.example'] };
  for (const [domain, pass] of [
    ['corp.example', true],
    ['LAB.EXAMPLE', true],
    ['other.example', false],
    ['', false],
  ] as const) {
    test(`domain ${domain || '(none)'} ⇒ ${pass}`, () => {
      assert.equal(domainType.evaluate(domains, 'c', view({ domain: { ...reported, domain } })).isPassing, pass);
    });
  }
  const macs = { macAddresses: ['aa:bb:cc:dd:ee:ff'] };
  for (const [addresses, pass] of [
    [['00:00:00:00:00:00', 'aa:bb:cc:dd:ee:ff'], true],
    [['AA:BB:CC:DD:EE:FF'], false], // exact strings
    [[], false],
  ] as const) {
    test(`mac ${addresses.join(',') || '(none)'} ⇒ ${pass}`, () => {
      assert.equal(
        macType.evaluate(macs, 'c', view({ mac: { ...reported, addresses: [...addresses] } })).isPassing,
        pass,
      );
    });
  }
});

describe('PROCESS and PROCESS_MULTI', () => {
  const hash = 'ab'.repeat(64);
  const signer = 'cd'.repeat(20);
  const proc = (path: string, over: Record<string, unknown> = {}) => ({
    ...reported,
    path,
    isRunning: true,
    hash: hash.toUpperCase(),
    signerFingerprints: [signer.toUpperCase()],
    ...over,
  });
  const withProcs = (checkId: string, ...ps: ReturnType<typeof proc>[]) =>
    view({ processes: new Map(ps.map((p) => [processKey(checkId, p.path), p])) });
  const single = { process: { osType: 'Linux', path: '/bin/a', hashes: [hash], signerFingerprint: signer } };
  const cases: [string, PostureView, boolean][] = [
    ['running with hash and signer (case-insensitive)', withProcs('c', proc('/bin/a')), true],
    ['not running', withProcs('c', proc('/bin/a', { isRunning: false })), false],
    ['other hash', withProcs('c', proc('/bin/a', { hash: 'ef'.repeat(64) })), false],
    ['other signer', withProcs('c', proc('/bin/a', { signerFingerprints: ['00'.repeat(20)] })), false],
    ['reported for another check', withProcs('other', proc('/bin/a')), false],
    ['nothing reported', view(), false],
  ];
  for (const [name, v, pass] of cases) {
    test(`PROCESS: ${name} ⇒ ${pass}`, () => assert.equal(processType.evaluate(single, 'c', v).isPassing, pass));
  }
  const multi = (semantic: string) => ({
    semantic,
    processes: [
      { osType: 'Linux', path: '/bin/a' },
      { osType: 'Linux', path: '/bin/B', signerFingerprints: ['11'.repeat(20), signer] },
    ],
  });
  const both = withProcs('c', proc('/bin/a'), proc('/bin/b'));
  const one = withProcs('c', proc('/bin/a'));
  for (const [semantic, v, pass] of [
    ['AllOf', both, true],
    ['AllOf', one, false],
    ['AnyOf', one, true],
    ['AnyOf', view(), false],
  ] as const) {
    test(`PROCESS_MULTI ${semantic} ⇒ ${pass}`, () =>
      assert.equal(processMultiType.evaluate(multi(semantic), 'c', v).isPassing, pass));
  }
});

describe('MFA', () => {
  const cases: [string, Record<string, unknown>, ApiSessionPosture | undefined, boolean][] = [
    ['not passed', {}, {}, false],
    ['no API session data', {}, undefined, false],
    ['passed, no timeout', {}, { mfaPassedAt: at(100_000) }, true],
    ['passed within the timeout', { timeoutSeconds: 300 }, { mfaPassedAt: at(299) }, true],
    ['passed before the timeout', { timeoutSeconds: 300 }, { mfaPassedAt: at(301) }, false],
    [
      'legacy client exempt from the timeout',
      { timeoutSeconds: 300, ignoreLegacyEndpoints: true },
      { mfaPassedAt: at(301) },
      true,
    ],
    [
      'new client not exempt',
      { timeoutSeconds: 300, ignoreLegacyEndpoints: true },
      { mfaPassedAt: at(301), sdkNew: true },
      false,
    ],
    [
      'woken within the grace',
      { promptOnWake: true },
      { mfaPassedAt: at(1000), wokenAt: at(PROMPT_GRACE_SECONDS - 1) },
      true,
    ],
    [
      'woken past the grace',
      { promptOnWake: true },
      { mfaPassedAt: at(1000), wokenAt: at(PROMPT_GRACE_SECONDS + 1) },
      false,
    ],
    ['woken before the pass', { promptOnWake: true }, { mfaPassedAt: at(10), wokenAt: at(1000) }, true],
    ['woken but no prompt on wake', {}, { mfaPassedAt: at(1000), wokenAt: at(900) }, true],
    ['unlocked past the grace', { promptOnUnlock: true }, { mfaPassedAt: at(1000), unlockedAt: at(900) }, false],
  ];
  for (const [name, d, session, pass] of cases) {
    test(`${name} ⇒ ${pass}`, () => assert.equal(mfaType.evaluate(d, 'c', view({}, session)).isPassing, pass));
  }
  test('timeout and timeoutRemaining of the query', () => {
    assert.deepEqual(mfaType.timeout!({ timeoutSeconds: 300 }, view({}, { mfaPassedAt: at(100) })), {
      timeout: 300,
      timeoutRemaining: 200,
    });
    assert.deepEqual(mfaType.timeout!({}, view({}, { mfaPassedAt: at(100) })), { timeout: -1, timeoutRemaining: -1 });
    // A wake after the pass leaves the grace, if shorter than the timeout.
    assert.deepEqual(
      mfaType.timeout!(
        { timeoutSeconds: 3600, promptOnWake: true },
        view({}, { mfaPassedAt: at(100), wokenAt: at(60) }),
      ),
      { timeout: 3600, timeoutRemaining: PROMPT_GRACE_SECONDS - 60 },
    );
  });
});

describe('in the store', () => {
  let t: TestStore;
  before(async () => {
    t = await openTestStore();
  });
  after(() => t.close());
  const identity = (name: string) => createEntity(t.ctx, identities, { name, type: 'User', isAdmin: false });

  test(`failed service requests keep the newest ${MAX_FAILED_REQUESTS}`, async () => {
    const id = await identity(`failing-${Math.random()}`);
    for (let i = 0; i < MAX_FAILED_REQUESTS + 20; i++) await recordFailedRequest(t.store.db, id, { n: i });
    const kept = await failedRequests(t.store.db, id);
    assert.equal(kept.length, MAX_FAILED_REQUESTS);
    assert.deepEqual(kept[0], { n: 20 });
    assert.deepEqual(kept.at(-1), { n: MAX_FAILED_REQUESTS + 19 });
  });

  test('reported records read back from the store as they were kept, and the cache follows writes', async () => {
    const id = await identity(`reporting-${Math.random()}`);
    assert.equal(await identityPosture(t.store.db, id), undefined);
    const r: ReportedPosture = {
      os: { ...reported, type: 'Linux', version: '6.1.0', build: '' },
      mac: { ...reported, addresses: ['aa:bb'] },
      processes: new Map([
        [processKey('p', '/bin/a'), { ...reported, path: '/bin/a', isRunning: true, signerFingerprints: ['f'] }],
      ]),
    };
    assert.deepEqual(recordsFromStore(JSON.parse(JSON.stringify(storedRecords(r)))), r);
    await putIdentityPosture(t.store.db, id, { records: storedRecords(r), changedAt: NOW.toISOString() });
    const read = await identityPosture(t.store.db, id);
    assert.deepEqual({ ...read, changedAt: undefined }, { ...r, changedAt: undefined });
    assert.deepEqual(read?.changedAt, NOW);
    // A write the cache did not make itself (another controller's, as the feed reports it) is read again.
    await putIdentityPosture(t.store.db, id, { records: {}, changedAt: null });
    assert.equal((await identityPosture(t.store.db, id))?.os, undefined);
  });
});
