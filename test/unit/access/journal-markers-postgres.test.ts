/**
 * The access journal's reads of the markers on PostgreSQL (src/store/access-journal.ts): in a group commit,
 * whose transaction holds the writer lock from its start to its commit, a member's first read is the member
 * before it's last, unless a statement may have written the markers since (a failed member's undo included);
 * every step between the batch's first and last generation is still explained.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { sql } from 'kysely';
import { silentLogger, type Ctx } from '../../../src/model/ctx.js';
import { tokenMinter } from '../../../src/model/tokens.js';
import { RESOURCE_HOOKS } from '../../../src/model/services/hooks/index.js';
import { createEntity } from '../../../src/model/crud.js';
import { identities } from '../../../src/model/resources/index.js';
import { readMarkers } from '../../../src/store/access-markers.js';
import { explainTransitions, type Transition } from '../../../src/store/access-journal.js';
import { runtimeOf } from '../../../src/store/runtime.js';
import { postgresSkip, postgresStoreForTests } from '../../harness/pg.js';

// The store's pooled connections take the client's query when they connect (pg/open.ts), so the count is put
// in before the store opens (at load, ahead of every hook), and taken out after this file.
let markerReads = 0;
let policyReads = 0;
let transitionInserts = 0;
const query = pg.Client.prototype.query;
(pg.Client.prototype as { query: unknown }).query = function (this: pg.Client, ...args: unknown[]) {
  const q = args[0] as string | { text?: string } | undefined;
  const text = typeof q === 'string' ? q : q?.text;
  if (text !== undefined && /from access_markers/.test(text)) markerReads++;
  if (text !== undefined && /from auth_policies/.test(text)) policyReads++;
  if (text !== undefined && /insert into access_transitions/.test(text)) transitionInserts++;
  return (query as (...a: unknown[]) => unknown).apply(this, args);
};
after(() => {
  pg.Client.prototype.query = query;
});

const skip = await postgresSkip();
const pgStore = postgresStoreForTests(skip);

// Made by the first test rather than a hook of this file: run alone, Node 20 may run a top-level hook registered
// after a top-level await before the harness's own, while the store is not open yet.
let made: Ctx | undefined;
function context(): Ctx {
  if (made) return made;
  made = {
    db: pgStore.store.db,
    now: () => new Date(),
    settings: { sessionTimeoutMs: 60_000, identityEnrollmentDurationMs: 60_000, routerEnrollmentDurationMs: 60_000 },
    log: silentLogger,
    tokens: tokenMinter(Buffer.alloc(32, 7)),
    hooks: RESOURCE_HOOKS,
  };
  // A loaded machine must not split the batches counted here.
  const batcher = runtimeOf(made.db)!.batcher;
  batcher.maxBatchMs = 60_000;
  batcher.cohortWaitMs = 0;
  return made;
}

const create = (name: string, roleAttributes: string[]) =>
  createEntity(context(), identities, { name, type: 'User', isAdmin: false, roleAttributes });

test('a batch reads the markers once before its first member and once after each', { skip }, async () => {
  await create('first', ['r']);
  const gen0 = (await readMarkers(context().db)).identity.gen;
  markerReads = 0;
  transitionInserts = 0;
  const { rows } = await sql<{
    last: number;
  }>`select coalesce(max(id), 0)::int as last from access_transitions`.execute(context().db);
  const last = rows[0]!.last;
  const batcher = runtimeOf(context().db)!.batcher!;
  const batches = batcher.batches;
  await Promise.all(Array.from({ length: 8 }, (_, i) => create(`m-${i}`, [`a${i}`])));
  assert.equal(batcher.batches - batches, 1, 'one group commit');
  assert.equal(markerReads, 8 + 1, "the first member's read before, then one after each member's write");
  const gen1 = (await readMarkers(context().db)).identity.gen;
  assert.ok(gen1 > gen0);
  const steps = new Set<Transition>();
  assert.ok(explainTransitions(context().db, 'identity', gen0, gen1, steps), 'every step from the first to the last');
  assert.equal(steps.size, 8, 'one transition per create');
  // Stored for the other replicas in one statement before the commit, in the order of the generations.
  assert.equal(transitionInserts, 1, 'one insert for the batch');
  const stored = (
    await sql<{ moves: string }>`select moves from access_transitions where id > ${last} order by id`.execute(
      context().db,
    )
  ).rows.map((r) => (JSON.parse(r.moves) as { identity: [number, number] }).identity);
  assert.equal(stored.length, 8);
  assert.equal(stored[0]![0], gen0);
  for (let i = 1; i < 8; i++) assert.equal(stored[i]![0], stored[i - 1]![1], 'each from where the one before ended');
  assert.equal(stored[7]![1], gen1);
});

test('after a member that wrote and was undone, the next member reads the markers again', { skip }, async () => {
  const gen0 = (await readMarkers(context().db)).identity.gen;
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
  // u-0: before and after; the refused one: before (reused) only; u-2: before again (the undo), then after.
  assert.equal(markerReads, 4);
  const gen1 = (await readMarkers(context().db)).identity.gen;
  const steps = new Set<Transition>();
  assert.ok(explainTransitions(context().db, 'identity', gen0, gen1, steps));
  assert.equal(steps.size, 2);
});

test(
  'a create that leaves the auth policy to its default reads no auth policy; one that names a policy reads it',
  { skip },
  async () => {
    policyReads = 0;
    await create('p-0', []);
    assert.equal(policyReads, 0, 'the system policy `default` is not looked up');
    await assert.rejects(
      createEntity(context(), identities, { name: 'p-2', type: 'User', isAdmin: false, authPolicyId: 'none' }),
      (e: { errorCause?: { field?: string } }) => e.errorCause?.field === 'authPolicyId',
    );
    assert.equal(policyReads, 1, 'another policy is looked up');
  },
);
