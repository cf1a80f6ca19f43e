/** Fixtures for the tests of the event outbox and its sinks (no assertions). */
import { readFileSync } from 'node:fs';
import type { NewSessionEvent } from '../../src/store/sessions.js';

/** The events a JSON-lines sink wrote to `file`, one object a line. */
export const jsonLines = <T>(file: string): T[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as T);

/** A new session's event for a session insert (its body is not what the store's tests look at). */
export const sessionEventFor = (id: string): NewSessionEvent => ({ id: `event-${id}`, actorId: 'none', body: '{}' });
