/**
 * The outbox (src/store/events.ts): an event goes with its transaction (kept when it commits, gone when it
 * rolls back, also as a member of a shared commit), is refused outside a transaction, and is read back in
 * commit order; ids are UUID v7 (time first); entity states leave secrets out.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { openStore, withTx, type OpenedStore } from '../../../src/store/db.js';
import { eventsAfter, insertEvents, pruneEvents, readCursor, writeCursor } from '../../../src/store/events.js';
import { LAST_SEQ_BEFORE } from '../../../src/store/event-backlog.js';
import { newEventId, storedEvent } from '../../../src/model/events/event.js';
import { pruneEvents as pruneOutbox } from '../../../src/model/events/deliver.js';
import type { Ctx } from '../../../src/model/ctx.js';
import { auditState, changedFields } from '../../../src/model/events/entity-change.js';
import { isSecretProp } from '../../../src/model/prop-lists.js';
import type { ResourceDef } from '../../../src/model/resource.js';

let store: OpenedStore;
before(async () => {
  store = await openStore(':memory:');
});
after(() => store?.close());

const ev = (n: number, at = new Date()) =>
  storedEvent(at, { namespace: 'entityChange', typeField: 'eventType', eventType: 'created', fields: { n } });

test('an event is kept when its transaction commits and gone when it rolls back', async () => {
  const start = (await eventsAfter(store.db, 0, 1000)).length;
  await withTx(store.db, (trx) => insertEvents(trx, [ev(1)]));
  await assert.rejects(
    withTx(store.db, async (trx) => {
      await insertEvents(trx, [ev(2)]);
      throw new Error('refused');
    }),
    /refused/,
  );
  // Members of one shared commit: the failing one's event goes alone.
  await Promise.allSettled([
    withTx(store.db, (trx) => insertEvents(trx, [ev(3)])),
    withTx(store.db, async (trx) => {
      await insertEvents(trx, [ev(4)]);
      throw new Error('refused');
    }),
    withTx(store.db, (trx) => insertEvents(trx, [ev(5)])),
  ]);
  const rows = (await eventsAfter(store.db, 0, 1000)).slice(start);
  assert.deepEqual(
    rows.map((r) => JSON.parse(r.body).n),
    [1, 3, 5],
  );
  assert.ok(
    rows.every((r, i) => i === 0 || r.seq > rows[i - 1]!.seq),
    'in outbox order',
  );
});

test('an event is refused outside a transaction', async () => {
  await assert.rejects(insertEvents(store.db, [ev(9)]), /inside the transaction/);
});

test('event ids are UUID v7 and sort by time', () => {
  const a = newEventId(new Date('2026-01-01T00:00:00.000Z'));
  const b = newEventId(new Date('2026-01-01T00:00:00.001Z'));
  assert.match(a, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.ok(a < b);
  assert.notEqual(newEventId(new Date(0)), newEventId(new Date(0)));
  // The first 48 bits are the time in milliseconds, at the edges of each byte too.
  for (const t of [0, 255, 0xffffff, 0x1000000, Date.parse('2026-11-29T07:00:00.123Z'), 2 ** 48 - 1]) {
    const id = newEventId(new Date(t));
    assert.equal(id.slice(0, 8) + id.slice(9, 13), t.toString(16).padStart(12, '0'), `the time of ${t}`);
  }
});

test('pruning removes events older than the retention; cursors remember where a sink stopped', async () => {
  await withTx(store.db, (trx) => insertEvents(trx, [ev(10, new Date('2000-01-01T00:00:00Z'))]));
  // The newest event stays, however old: SQLite would give its position again.
  assert.equal(await withTx(store.db, (trx) => pruneEvents(trx, '2001-01-01T00:00:00.000Z', 100)), 0);
  await withTx(store.db, (trx) => insertEvents(trx, [ev(11)]));
  const removed = await withTx(store.db, (trx) => pruneEvents(trx, '2001-01-01T00:00:00.000Z', 100));
  assert.equal(removed, 1);
  assert.equal(await readCursor(store.db, 'file:a'), 0);
  await withTx(store.db, (trx) => writeCursor(trx, 'file:a', 7, new Date().toISOString()));
  await withTx(store.db, (trx) => writeCursor(trx, 'file:a', 9, new Date().toISOString()));
  assert.equal(await readCursor(store.db, 'file:a'), 9);
});

test('the retention prune keeps the newest event, however old: SQLite would give its position again', async () => {
  const ctx = { db: store.db, now: () => new Date() } as unknown as Ctx;
  const old = new Date('2000-01-01T00:00:00Z');
  await withTx(store.db, (trx) => insertEvents(trx, [ev(20, old), ev(21, old)]));
  const last = (await eventsAfter(store.db, 0, 1000)).at(-1)!;
  await pruneOutbox(ctx, { retentionMs: 3_600_000, maxEvents: 1000, sinks: [] });
  assert.deepEqual(
    (await eventsAfter(store.db, 0, 1000)).map((r) => r.seq),
    [last.seq],
  );
  await withTx(store.db, (trx) => insertEvents(trx, [ev(22)]));
  assert.equal((await eventsAfter(store.db, 0, 1000)).at(-1)!.seq, last.seq + 1, 'after the newest position given');
  await pruneOutbox(ctx, { retentionMs: 3_600_000, maxEvents: 1000, sinks: [] });
  assert.deepEqual(
    (await eventsAfter(store.db, 0, 1000)).map((r) => JSON.parse(r.body).n),
    [22],
  );
});

test('finding the events past the retention reads the timestamp index, not the whole outbox', () => {
  // Behaviour locked in: with every event within the retention, `max(seq)` walked the table back to its start
  // at every sweep (issue #25: ~50 ms per sweep on 100,000 events). The plan names the index's range.
  const plan = store.raw.prepare(`explain query plan ${LAST_SEQ_BEFORE}`).all('2026-01-01') as { detail: string }[];
  assert.deepEqual(
    plan.map((p) => p.detail),
    ['SEARCH events USING COVERING INDEX events_by_timestamp (timestamp<?)'],
  );
});

test('entity states leave out hidden props and props named like secrets, unless audited', () => {
  const def = {
    name: 'things',
    props: {
      name: { schema: Type.String(), storage: 'text' },
      secretHash: { schema: Type.String(), storage: 'text', hidden: true },
      apiToken: { schema: Type.String(), storage: 'text' },
      details: { schema: Type.Object({}), storage: 'json', hidden: true, audited: true },
      password: { schema: Type.String(), storage: 'text', virtual: true },
    },
  } as unknown as ResourceDef;
  const before = { id: 'x', name: 'a', secretHash: 'h1', apiToken: 't1', details: { k: 1 } };
  const after = { id: 'x', name: 'b', secretHash: 'h2', apiToken: 't2', details: { k: 1 } };
  assert.deepEqual(auditState(def, before), { id: 'x', name: 'a', details: { k: 1 } });
  assert.deepEqual(changedFields(def, before, after), {
    name: { before: 'a', after: 'b' },
    secretHash: { redacted: true },
    apiToken: { redacted: true },
  });
  assert.equal(isSecretProp('privateKeyPem', def.props.name), true);
  assert.equal(isSecretProp('name', def.props.name), false);
});
