/**
 * The store's change feed (src/store/change-feed.ts) as real statements move it through an open store: reads
 * move nothing; a write moves the tables it writes, those its triggers and cascades change, and nothing else;
 * the activity touch moves only its split column; a transaction's tables move again at its end; DDL moves all.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { openStore, withTx, type OpenedStore } from '../../../src/store/db.js';
import { touchApiSession } from '../../../src/store/api-sessions.js';
import { insertSessionIfAbsent } from '../../../src/store/sessions.js';
import { feedOf } from '../../../src/store/runtime.js';
import type { ChangeFeed } from '../../../src/store/change-feed.js';
import { sessionEventFor } from '../../harness/events.js';

let store: OpenedStore;
let feed: ChangeFeed;
before(async () => {
  store = await openStore(':memory:');
  feed = feedOf(store.db)!;
});
after(() => store.close());

/** Which of `tables` moved while `run` ran. */
async function moved(tables: string[], run: () => Promise<unknown>): Promise<string[]> {
  const deps = tables.map((t) => feed.deps([t]));
  const before = deps.map((d) => feed.version(d));
  await run();
  return tables.filter((_, i) => feed.version(deps[i]!) !== before[i]);
}

const PRINCIPAL = ['api_sessions', 'identities', 'auth_policies'];

test('reads move nothing', async () => {
  assert.deepEqual(
    await moved(['identities', 'api_sessions'], () => sql`select count(*) from identities`.execute(store.db)),
    [],
  );
});

test('a write moves its own table only, not one whose name contains it', async () => {
  const m = await moved(['auth_policies', 'identities', 'identities_roleAttributes', 'services'], () =>
    sql`update auth_policies set name = name where id = 'none'`.execute(store.db),
  );
  assert.deepEqual(m, ['auth_policies']);
  const link = await moved(['identities', 'identities_roleAttributes'], () =>
    sql`delete from "identities_roleAttributes" where "ownerId" = 'none'`.execute(store.db),
  );
  assert.deepEqual(link, ['identities_roleAttributes']);
});

test('a delete reaches the child tables its foreign keys cascade to', async () => {
  const m = await moved(['identities', 'api_sessions', 'sessions', 'services'], () =>
    sql`delete from identities where id = 'none'`.execute(store.db),
  );
  assert.deepEqual(m, ['identities', 'api_sessions', 'sessions']);
});

test('a write reaches the tables its triggers write (access markers, search indexes)', async () => {
  const m = await moved(['access_markers', 'identities_name_search'], () =>
    sql`delete from services where id = 'none'`.execute(store.db),
  );
  assert.deepEqual(m, ['access_markers']);
  const rename = await moved(['identities_name_search', 'access_markers'], () =>
    sql`update identities set name = name where id = 'none'`.execute(store.db),
  );
  assert.deepEqual(
    rename,
    ['identities_name_search'],
    "a rename updates the index; no marker watches an identity's name",
  );
});

test('the activity touch moves only its split column; a new session moves no access marker', async () => {
  const touch = await moved([...PRINCIPAL, 'api_sessions.lastActivityAt'], () =>
    touchApiSession(store.db, 'none', new Date().toISOString()),
  );
  assert.deepEqual(touch, ['api_sessions.lastActivityAt']);
  assert.ok(feed.readDeps('select * from api_sessions').tables.includes('api_sessions.lastActivityAt'));
  const session = {
    id: 'none',
    createdAt: '',
    updatedAt: '',
    tags: {},
    isSystem: false,
    tokenHash: 'none',
    type: 'Dial',
    apiSessionId: 'none',
    serviceId: 'none',
    identityId: 'none',
  };
  // The insert fails its foreign keys here; what counts is that it was run.
  const insert = await moved(['sessions', 'access_markers', ...PRINCIPAL], () =>
    insertSessionIfAbsent(store.db, session, sessionEventFor(session.id)).catch(() => false),
  );
  assert.deepEqual(insert, ['sessions']);
});

test('an insert that only adds rows moves its table for every dependent except those that ignore new rows', async () => {
  // Behaviour locked in: provisioning (a new identity a request) keeps the API-session principals (issue #25).
  const ignoring = feed.deps(['identities', 'auth_policies'], ['identities']);
  const plain = feed.deps(['identities']);
  const changes = async (run: () => Promise<unknown>) => {
    const [a, b] = [feed.version(ignoring), feed.version(plain)];
    await run();
    return { ignoring: feed.version(ignoring) !== a, plain: feed.version(plain) !== b };
  };
  // Foreign keys refuse these rows; what counts is that each was run.
  const run = (text: string) => () =>
    sql
      .raw(text)
      .execute(store.db)
      .catch(() => undefined);
  const adding = "insert into identities (id, name) values ('feed-probe', 'feed-probe')";
  assert.deepEqual(await changes(run(adding)), { ignoring: false, plain: true });
  assert.deepEqual(await changes(run(adding.replace('insert', 'insert or ignore'))), {
    ignoring: false,
    plain: true,
  });
  for (const changing of [
    adding.replace('insert', 'insert or replace'),
    adding.replace('insert', 'replace'),
    `${adding} on conflict (id) do update set name = excluded.name`,
    "update identities set name = name where id = 'none'",
    "delete from identities where id = 'none'",
  ])
    assert.deepEqual(await changes(run(changing)), { ignoring: true, plain: true }, changing);
  // The tables its triggers write move as usual (the name-search index's queue).
  assert.deepEqual(await moved(['search_index_pending'], run(adding)), ['search_index_pending']);
  const policies = await changes(run("insert into auth_policies (id, name) values ('feed-probe', 'feed-probe')"));
  assert.deepEqual(policies, { ignoring: true, plain: false }, 'a table not ignored moves on any write');
});

test("a transaction's tables move when it writes and again when it ends", async () => {
  const deps = feed.deps(['auth_policies']);
  const start = feed.version(deps);
  let inside = 0;
  await withTx(store.db, async (trx) => {
    await sql`update auth_policies set name = name where id = 'none'`.execute(trx);
    inside = feed.version(deps);
  });
  assert.ok(inside > start);
  assert.ok(feed.version(deps) > inside, 'the commit moves it again');
  assert.deepEqual(await moved(['auth_policies'], () => withTx(store.db, async () => undefined)), []);
});

test('DDL and statements of unknown reach move every table', async () => {
  assert.deepEqual(
    await moved(['identities', 'sessions'], () =>
      sql`create table if not exists feed_probe (x integer)`.execute(store.db),
    ),
    ['identities', 'sessions'],
  );
  assert.deepEqual(await moved(['identities'], async () => store.raw.exec('delete from feed_probe')), ['identities']);
  // The schema is read again after DDL: the new table is known.
  assert.deepEqual(
    await moved(['feed_probe', 'identities'], () => sql`insert into feed_probe (x) values (1)`.execute(store.db)),
    ['feed_probe'],
  );
});

test('listeners hear each write once it ended: a statement at once, a transaction at its end', async () => {
  const heard: string[][] = [];
  const stop = feed.onChange((tables) => heard.push([...tables].sort()));
  try {
    await sql`update auth_policies set name = name where id = 'none'`.execute(store.db);
    assert.deepEqual(heard, [['auth_policies']]);
    await withTx(store.db, async (trx) => {
      await sql`delete from identities where id = 'none'`.execute(trx);
      assert.equal(heard.length, 1, 'nothing before the commit');
    });
    assert.equal(heard.length, 2);
    for (const t of ['api_sessions', 'identities', 'sessions', 'identities_name_search', 'access_markers']) {
      assert.ok(heard[1]!.includes(t), t);
    }
    assert.ok(!heard[1]!.includes('services'));
  } finally {
    stop();
  }
});

test('each store has its own feed', async () => {
  const other = await openStore(':memory:');
  try {
    const mine = feed.deps(['auth_policies']);
    const before = feed.version(mine);
    await sql`update auth_policies set name = name where id = 'none'`.execute(other.db);
    assert.equal(feed.version(mine), before);
    assert.notEqual(feedOf(other.db), feed);
  } finally {
    await other.close();
  }
});
