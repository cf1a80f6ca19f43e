/**
 * The access journal's reads of the markers (src/store/access-journal.ts): in a group commit a member's first
 * read is the member before it's last, unless a statement may have written the markers since (a failed member's
 * rollback included), and every step between the batch's first and last generation is still explained.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { openTestStore, type TestStore } from '../../harness/store.js';
import type { Ctx } from '../../../src/model/ctx.js';
import { createEntity } from '../../../src/model/crud.js';
import { identities } from '../../../src/model/resources/index.js';
import { readMarkers } from '../../../src/store/access-markers.js';
import { explainTransitions, type Transition } from '../../../src/store/access-journal.js';
import { runtimeOf } from '../../../src/store/runtime.js';

let ts: TestStore;
let ctx: Ctx;
let markerReads = 0;
let policyReads = 0;

before(async () => {
  ts = await openTestStore('edgectl-journal-markers-');
  ({ ctx } = ts);
  const connection = runtimeOf(ctx.db)!.connection!;
  const prepare = connection.prepare.bind(connection);
  connection.prepare = (text) => {
    if (/from access_markers/.test(text)) markerReads++;
    if (/from auth_policies/.test(text)) policyReads++;
    return prepare(text);
  };
  // A loaded machine must not split the batches counted here.
  runtimeOf(ctx.db)!.batcher.maxBatchMs = 60_000;
  // One create first, so the batches below follow a batch of one (no cohort wait) and the markers were read.
  await createEntity(ctx, identities, { name: 'first', type: 'User', isAdmin: false, roleAttributes: ['r'] });
});
after(() => ts.close());

const create = (name: string, roleAttributes: string[]) =>
  createEntity(ctx, identities, { name, type: 'User', isAdmin: false, roleAttributes });

test("a member's first read of the markers is the one before it's last; every step is still explained", async () => {
  const gen0 = (await readMarkers(ctx.db)).identity.gen;
  markerReads = 0;
  const before = runtimeOf(ctx.db)!.batcher!.batches;
  // Each create's attributes move the `identity` marker, so each member reads the markers after its write.
  await Promise.all(Array.from({ length: 8 }, (_, i) => create(`m-${i}`, [`a${i}`])));
  assert.equal(runtimeOf(ctx.db)!.batcher!.batches - before, 1, 'one group commit');
  assert.equal(markerReads, 8 + 1, "the first member's read before, then one after each member's write");
  const gen1 = (await readMarkers(ctx.db)).identity.gen;
  assert.ok(gen1 > gen0);
  const steps = new Set<Transition>();
  assert.ok(explainTransitions(ctx.db, 'identity', gen0, gen1, steps), 'every step from the first to the last');
  assert.equal(steps.size, 8, 'one transition per create');
});

test('after a member that wrote and was undone, the next member reads the markers again', async () => {
  const gen0 = (await readMarkers(ctx.db)).identity.gen;
  markerReads = 0;
  const results = await Promise.allSettled([
    create('u-0', ['x']),
    create('u-0', ['y']), // the name is taken: refused at its insert, undone to its savepoint
    create('u-2', ['z']),
  ]);
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
  // u-0: before and after; the refused one: before (reused) only; u-2: before again (the undo moved the
  // markers' version), then after.
  assert.equal(markerReads, 4);
  const gen1 = (await readMarkers(ctx.db)).identity.gen;
  const steps = new Set<Transition>();
  assert.ok(explainTransitions(ctx.db, 'identity', gen0, gen1, steps));
  assert.equal(steps.size, 2);
});

test('a create that leaves the auth policy to its default reads no auth policy; one that names a policy reads it', async () => {
  policyReads = 0;
  await create('p-0', []);
  assert.equal(policyReads, 0, 'the system policy `default` is not looked up');
  await createEntity(ctx, identities, { name: 'p-1', type: 'User', isAdmin: false, authPolicyId: 'default' });
  assert.equal(policyReads, 0);
  await assert.rejects(
    createEntity(ctx, identities, { name: 'p-2', type: 'User', isAdmin: false, authPolicyId: 'none' }),
    (e: { errorCause?: { field?: string } }) => e.errorCause?.field === 'authPolicyId',
  );
  assert.equal(policyReads, 1, 'another policy is looked up');
});
