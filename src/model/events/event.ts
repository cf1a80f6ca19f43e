/**
 * Events (docs/design.md, "Events"): one JSON object each, with a unique, time-ordered `id` (a UUID version 7),
 * its `namespace` and `version` (of the event's shape), a `timestamp`, and the fields of its namespace, named as
 * the reference names them where it has the event (`entityChange`, `apiSession`, `authentication`, …).
 *
 * An event is recorded in the transaction of what it records (the outbox, src/store/events.ts): a committed
 * change always has its event, a rolled-back one never does.
 */
import { randomUUID } from 'node:crypto';
import { insertEvents, type StoredEvent } from '../../store/events.js';
import { iso, type Ctx } from '../ctx.js';

/** The version of every event's shape; raised when a field changes meaning or goes. */
export const EVENT_VERSION = 1;

/**
 * Every namespace recorded. `eventSink` is edgectl's own: what delivery gave up (events dropped from a sink's
 * backlog or past the retention, batches a webhook never took).
 */
export const EVENT_NAMESPACES = [
  'entityChange',
  'apiSession',
  'authentication',
  'session',
  'database',
  'controller',
  'eventSink',
] as const;

export type EventNamespace = (typeof EVENT_NAMESPACES)[number];

/** An event as recorded: the fields of its namespace, and what the listing filters it by. */
export interface EventRecord {
  namespace: EventNamespace;
  /** The event's type within its namespace (`created`, `fail`, …). */
  eventType: string;
  /** Who acted or is concerned (an identity's id), for the listing's `actorId`. */
  actorId?: string | undefined;
  entityType?: string | undefined;
  entityId?: string | undefined;
  /** The namespace's own fields; the common ones (id, namespace, version, timestamp) are added. */
  fields: Record<string, unknown>;
  /** Where the namespace names its type (`eventType` for entityChange, `event_type` elsewhere). */
  typeField: 'eventType' | 'event_type';
}

/** Each byte's two hex digits: a time's hex from six lookups (`toString(16)` of a time costs as much as the rest of the id). */
const HEX: readonly string[] = Object.freeze(Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0')));

/**
 * A UUID version 7: the time in milliseconds first, so ids sort by time. Its random bits are a version 4
 * UUID's (crypto.randomUUID draws from a pool of random bytes: about a quarter of the CPU of filling a buffer
 * per id, on the session create's hot path), whose variant bits are already those of version 7.
 */
export function newEventId(now: Date): string {
  const random = randomUUID();
  const t = now.getTime();
  // xxxxxxxx-xxxx-4xxx-vxxx-xxxxxxxxxxxx: the first 48 bits become the time, the version nibble 7.
  const high = Math.floor(t / 0x1000000);
  const low = t % 0x1000000;
  return (
    HEX[(high >>> 16) & 255]! +
    HEX[(high >>> 8) & 255]! +
    HEX[high & 255]! +
    HEX[low >>> 16]! +
    '-' +
    HEX[(low >>> 8) & 255]! +
    HEX[low & 255]! +
    '-7' +
    random.slice(15)
  );
}

/** The stored form of an event: the whole object as JSON plus the listing's columns. */
export function storedEvent(now: Date, e: EventRecord): StoredEvent {
  const id = newEventId(now);
  const timestamp = iso(now);
  // The common fields first in the text and never overridden by a namespace's own. Keys added one by one, not
  // a computed key and a spread in one literal (slow on the runtime's V8: copyOf in model/row.ts).
  const body: Record<string, unknown> = { id, namespace: e.namespace, version: EVENT_VERSION, timestamp };
  body[e.typeField] = e.eventType;
  for (const k of Object.keys(e.fields)) if (!Object.hasOwn(body, k)) body[k] = e.fields[k];
  return {
    id,
    namespace: e.namespace,
    eventType: e.eventType,
    timestamp,
    actorId: e.actorId ?? null,
    entityType: e.entityType ?? null,
    entityId: e.entityId ?? null,
    body: JSON.stringify(body),
  };
}

/** Records events in the transaction `ctx.db` (which must be one: the outbox is written with the change). */
export async function recordEvents(ctx: Ctx, events: readonly EventRecord[]): Promise<void> {
  if (events.length === 0) return;
  const now = ctx.now();
  await insertEvents(
    ctx.db,
    events.map((e) => storedEvent(now, e)),
  );
}
