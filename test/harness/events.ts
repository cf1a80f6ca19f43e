/** Fixtures for the tests of the event outbox and its sinks (no assertions). */
import { readFileSync } from 'node:fs';
import type { StoredEvent } from '../../src/store/events.js';

/** The events a JSON-lines sink wrote to `file`, one object a line. */
export const jsonLines = <T>(file: string): T[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as T);

/** A stored event for a session insert (its body is not what the store's tests look at). */
export const sessionEventFor = (id: string): StoredEvent => ({
  id: `event-${id}`,
  namespace: 'session',
  eventType: 'created',
  timestamp: '2026-01-01T00:00:00.000Z',
  actorId: null,
  entityType: 'sessions',
  entityId: id,
  body: '{}',
});
