/**
 * The outbox's order on PostgreSQL with several writers (src/store/event-horizon.ts): three stores on one
 * database, as three replicas, record new sessions with their events concurrently (their statements take no
 * lock, so positions commit out of order) while a reader follows the outbox by position, as a sink's delivery
 * does (each read starts after the last position it saw). Reads stop at the settled horizon, so the reader never
 * passes a position that a later commit fills: it reads every event exactly once. (Without the horizon it
 * skips some in every run on the 2-core machine.)
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { openStore, type OpenedStore } from '../../../src/store/db.js';
import { hotWrite } from '../../../src/store/direct.js';
import { numberedPlaceholders } from '../../../src/store/dialect.js';
import { eventsAfter } from '../../../src/store/events.js';
import { insertSessionIfAbsent } from '../../../src/store/sessions.js';
import { sessionCreatedEvent } from '../../../src/model/events/session-events.js';
import type { Ctx } from '../../../src/model/ctx.js';
import { freshDatabase, postgresSkip } from '../../harness/pg.js';

const skip = await postgresSkip();
let database: Awaited<ReturnType<typeof freshDatabase>> | undefined;
const stores: OpenedStore[] = [];

const now = new Date().toISOString();
const q = numberedPlaceholders;

before(async () => {
  if (skip) return;
  database = await freshDatabase();
  for (let i = 0; i < 3; i++) stores.push(await openStore(database.url));
  const db = stores[0]!.db;
  await hotWrite(
    db,
    q(`insert into identities (id, "createdAt", "updatedAt", tags, "isSystem", name, "typeId", "authPolicyId")
      select 'order-identity', ?, ?, '{}', 0, 'order-identity', (select min(id) from identity_types),
        (select min(id) from auth_policies)`),
    [now, now],
  );
  await hotWrite(
    db,
    q(
      `insert into services (id, "createdAt", "updatedAt", tags, "isSystem", name) values ('order-service', ?, ?, '{}', 0, 'order-service')`,
    ),
    [now, now],
  );
});
after(async () => {
  for (const s of stores) await s.close();
  await database?.drop();
});

/** A minimal Ctx: what the event's builder reads. */
const ctx = { now: () => new Date(), actor: undefined } as unknown as Ctx;

test('a reader following the outbox by position sees every event of concurrent writers once', { skip }, async () => {
  const PER_STORE = 800;
  const ids = stores.map((_, k) => Array.from({ length: PER_STORE }, (_, i) => `order-${k}-${i}`));
  for (const [k, store] of stores.entries())
    for (const id of ids[k]!)
      await hotWrite(
        store.db,
        q(`insert into api_sessions (id, "createdAt", "updatedAt", tags, "isSystem", "tokenHash", "identityId",
          "authenticatorId", "lastActivityAt") values (?, ?, ?, '{}', 0, ?, 'order-identity', '', ?)`),
        [id, now, now, `h-${id}`, now],
      );

  let writing = true;
  const seen: string[] = [];
  const reader = (async () => {
    let cursor = 0;
    for (;;) {
      const done = !writing;
      for (const e of await eventsAfter(stores[1]!.db, cursor, 1000)) {
        seen.push((JSON.parse(e.body) as { session_id: string }).session_id);
        cursor = e.seq;
      }
      if (done) return;
      await new Promise((r) => setImmediate(r));
    }
  })();
  // 16 writers per store, each on its own turns, so the statements of both stores interleave at the server.
  await Promise.all(
    stores.flatMap((store, k) =>
      Array.from({ length: 16 }, async (_, w) => {
        for (let i = w; i < PER_STORE; i += 16) {
          const apiSessionId = ids[k]![i]!;
          const s = {
            id: `s-${apiSessionId}`,
            createdAt: now,
            updatedAt: now,
            tags: {},
            isSystem: false,
            tokenHash: `t-${apiSessionId}`,
            type: 'Dial',
            apiSessionId,
            serviceId: 'order-service',
            identityId: 'order-identity',
          };
          assert.equal(await insertSessionIfAbsent(store.db, s, sessionCreatedEvent(ctx, s, new Date(now))), true);
        }
      }),
    ),
  );
  writing = false;
  await reader;
  const expected = ids.flat().map((id) => `s-${id}`);
  assert.equal(seen.length, expected.length, 'every event read once');
  assert.deepEqual([...seen].sort(), expected.sort());
});
