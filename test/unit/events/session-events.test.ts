/**
 * The new session's `created` event is built as text on the hot path (session-events.ts): read back from the
 * outbox it must be the same event, field for field and in the same order, as the generic builder makes; other
 * events' bodies are read as stored; ids are UUID v7 in time order.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sessionCreatedEvent, sessionEvent } from '../../../src/model/events/session-events.js';
import { newEventId, storedEvent } from '../../../src/model/events/event.js';
import { wholeBody } from '../../../src/store/events.js';
import type { Ctx, EventActor } from '../../../src/model/ctx.js';

const now = new Date('2026-03-04T05:06:07.089Z');
const session = {
  // Fields needing escapes, each for its own reason: a lone surrogate, a control character, a quote and backslash.
  id: 'session-1 \ud800',
  createdAt: now.toISOString(),
  type: 'Dial',
  apiSessionId: 'api-session-1 \u0001',
  serviceId: 'service "quoted" \\ one',
  identityId: 'identity-1',
};
const ctxOf = (actor?: EventActor) => ({ now: () => now, actor }) as unknown as Ctx;

test('the hot-path text is the generic event, field for field and in order', () => {
  const actors: (EventActor | undefined)[] = [
    undefined,
    {
      author: { type: 'identity', id: 'identity-1', name: 'me', apiSessionId: 'api-session-1' },
      source: { type: 'rest' },
    },
    { author: { type: 'identity', id: 'admin-1', name: 'admin', apiSessionId: 'x' }, source: { type: 'rest' } },
  ];
  for (const actor of actors) {
    const ctx = ctxOf(actor);
    const fast = sessionCreatedEvent(ctx, session, now);
    const generic = storedEvent(now, sessionEvent(ctx, 'created', session));
    // The rest of its outbox row is the session's (store/sessions.ts).
    assert.deepEqual(
      { actorId: fast.actorId, namespace: 'session', eventType: 'created', timestamp: session.createdAt },
      {
        actorId: generic.actorId,
        namespace: generic.namespace,
        eventType: generic.eventType,
        timestamp: generic.timestamp,
      },
    );
    assert.deepEqual([generic.entityType, generic.entityId], ['sessions', session.id]);
    // Stored without the common fields, which its row's columns hold; read back whole.
    assert.doesNotMatch(fast.body, /"(id|namespace|version|timestamp|event_type)":/);
    const read = wholeBody({
      ...fast,
      namespace: 'session',
      eventType: 'created',
      timestamp: session.createdAt,
      entityType: 'sessions',
      entityId: session.id,
    });
    assert.equal(read.replace(fast.id, 'ID'), generic.body.replace(generic.id, 'ID'), 'the same text');
    assert.equal(JSON.parse(read).id, fast.id);
    assert.equal(fast.id.slice(0, 14), generic.id.slice(0, 14), 'the same time in the id');
  }
});

test("only a new session's event stored without its common fields is rebuilt; whole bodies are read as stored", () => {
  const row = {
    id: 'x',
    namespace: 'session',
    eventType: 'created',
    timestamp: 't',
    actorId: null,
    entityType: 'sessions',
    entityId: 's',
  };
  const whole = '{"id":"x","namespace":"session","version":1,"timestamp":"t","event_type":"created","session_id":"s"}';
  assert.equal(wholeBody({ ...row, body: whole }), whole, 'written before the short form');
  assert.equal(wholeBody({ ...row, body: '{"session_id":"s"}' }), whole);
  const deleted = { ...row, eventType: 'deleted', body: '{"a":1}' };
  assert.equal(wholeBody(deleted), '{"a":1}', 'other events are whole as stored');
});

test('event ids are UUID v7 and sort by time', () => {
  const a = newEventId(new Date(1_700_000_000_000));
  const b = newEventId(new Date(1_700_000_000_001));
  for (const id of [a, b]) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.ok(a < b);
  assert.equal(parseInt(a.replace(/-/g, '').slice(0, 12), 16), 1_700_000_000_000, 'the time in its first 48 bits');
  // The time's text is kept from one id to the next of the same millisecond, never for another.
  const c = newEventId(new Date(1_700_000_000_000));
  assert.equal(c.slice(0, 15), a.slice(0, 15));
  assert.notEqual(c, a);
  assert.equal(newEventId(new Date(1_700_000_000_001)).slice(0, 15), b.slice(0, 15));
});
