/**
 * A replica's own commits come back through the change counters like another replica's (pg/replica-changes.ts):
 * a table they alone moved is not told to the feed again (its own feed saw the writes, more narrowly), while
 * a table another writer moved too, in the same read or not, is. First against scripted counters, then against
 * the database's trigger through the group commit.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { ChangeFeed } from '../../../src/store/change-feed.js';
import { ReplicaChanges, type CounterConnection } from '../../../src/store/pg/replica-changes.js';
import { openStore, withTx } from '../../../src/store/db.js';
import { runtimeOf } from '../../../src/store/runtime.js';
import { postgresSkip, postgresStoreForTests } from '../../harness/pg.js';

/** Counters as the database would answer them, and a way to wait for the replica's next read of them. */
class ScriptedCounters {
  gens = new Map<string, number>([
    ['*', 10],
    ['identities', 5],
    ['services', 7],
  ]);
  onNotice: ((channel: string) => void) | undefined;
  onLost: (() => void) | undefined;
  private leases = 0;
  private waiters: (() => void)[] = [];

  async rows<R>(query: { name: string }): Promise<R[]> {
    switch (query.name) {
      case 'edgectl_changes_star':
        return [{ gen: this.gens.get('*') }] as R[];
      case 'edgectl_changes_all':
        return [...this.gens].map(([name, gen]) => ({ name, gen })) as R[];
      case 'edgectl_lease':
        this.leases++;
        for (const w of this.waiters.splice(0)) w();
        return [];
      default:
        return [];
    }
  }

  /** A commit of another process moved these tables (and `*` once). */
  commit(tables: readonly string[]): number {
    const star = this.gens.get('*')! + 1;
    this.gens.set('*', star);
    for (const t of tables) this.gens.set(t, (this.gens.get(t) ?? 0) + 1);
    return star;
  }

  /** Notifies the replica and settles once it has read the counters and acknowledged them. */
  async read(): Promise<void> {
    const done = new Promise<void>((r) => this.waiters.push(r));
    this.onNotice?.('edgectl_changes');
    await done;
  }

  async close(): Promise<void> {}
}

function scripted(): { counters: ScriptedCounters; replica: ReplicaChanges; told: string[][] } {
  const counters = new ScriptedCounters();
  const feed = new ChangeFeed(() => []);
  const told: string[][] = [];
  feed.onChange((tables) => told.push([...tables]));
  const replica = new ReplicaChanges({} as never, feed, counters as unknown as CounterConnection);
  return { counters, replica, told };
}

test('moves only this replica made are not told again; moves of another writer are', async () => {
  const { counters, replica, told } = scripted();
  try {
    await replica.fresh();
    assert.deepEqual(told, [['*']], 'the first read drops everything');
    told.length = 0;

    // Its own commit of an identity: nothing to tell.
    replica.ownCommit(counters.commit(['identities']), ['identities']);
    await counters.read();
    assert.deepEqual(told, []);

    // Another replica's commit of a service: told.
    counters.commit(['services']);
    await counters.read();
    assert.deepEqual(told, [['services']]);
    told.length = 0;

    // Two own commits and another's within one read: the table both moved is told, the one only it moved is not.
    replica.ownCommit(counters.commit(['identities']), ['identities']);
    counters.commit(['identities']);
    replica.ownCommit(counters.commit(['identities', 'services']), ['identities', 'services']);
    await counters.read();
    assert.deepEqual(told, [['identities']]);
    told.length = 0;

    // Own commits known only after a read already told them (the read raced the bookkeeping): told once, then ignored.
    const late = counters.commit(['services']);
    await counters.read();
    assert.deepEqual(told, [['services']]);
    replica.ownCommit(late, ['services']);
    counters.commit(['services']);
    await counters.read();
    assert.deepEqual(told, [['services'], ['services']], 'a later move of another is still told');
    told.length = 0;

    // Counters that went back (a restored database) say nothing of what changed: everything is dropped.
    replica.ownCommit(counters.commit(['identities']), ['identities']);
    replica.ownCommit(counters.commit(['identities']), ['identities']);
    counters.gens.set('*', counters.gens.get('*')! - 5);
    await counters.read();
    assert.deepEqual(told, [['*']]);
    told.length = 0;
    counters.commit(['identities']);
    await counters.read();
    assert.deepEqual(told, [['identities']], "another's commit after the restore is told");
  } finally {
    await replica.close();
  }
});

const skip = await postgresSkip();
const pgStore = postgresStoreForTests(skip);

test("the group commit's own writes reach its feed once; another store's writes are told to it", { skip }, async () => {
  const a = pgStore.store;
  const b = await openStore(pgStore.url);
  try {
    const runtime = runtimeOf(a.db)!;
    const replicas = runtime.replicas!;
    await replicas.fresh();
    const told: string[][] = [];
    const stop = runtime.feed.onChange((tables) => told.push([...tables]));
    const identityTypes = runtime.feed.deps(['identity_types']);

    let version = runtime.feed.version(identityTypes);
    await withTx(a.db, (trx) => sql`update identity_types set tags = '{"own":1}' where id = 'User'`.execute(trx));
    // Its own feed saw the write statement by statement, moved at the write and again at the commit.
    assert.ok(runtime.feed.version(identityTypes) > version);
    const heard = told.length;
    version = runtime.feed.version(identityTypes);
    // Another replica's acknowledgement: b reads the counters (the commit moved them), a waits for it.
    await runtimeOf(b.db)!.replicas!.fresh();
    await replicas.published();
    await waitForReads(replicas, 2);
    assert.equal(runtime.feed.version(identityTypes), version, 'the counters its own commit moved changed nothing');
    assert.equal(told.length, heard, 'and told the listeners nothing again');

    await withTx(b.db, (trx) => sql`update identity_types set tags = '{"other":1}' where id = 'User'`.execute(trx));
    await runtimeOf(b.db)!.replicas!.published();
    assert.ok(runtime.feed.version(identityTypes) > version, "another store's write reached this feed");
    assert.ok(told.slice(heard).some((t) => t.includes('identity_types')));
    stop();
  } finally {
    await b.close();
  }
});

/** Waits until the replica has read the counters `n` more times (its heartbeat reads every 100 ms). */
async function waitForReads(replicas: { readonly reads: number }, n: number): Promise<void> {
  const from = replicas.reads;
  for (let i = 0; i < 200 && replicas.reads < from + n; i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(replicas.reads >= from + n, 'the replica kept reading the counters');
}
