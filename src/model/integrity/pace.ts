/**
 * How the data-integrity scan shares the event loop: every store call is synchronous (better-sqlite3), so a
 * scan that never waited for anything else would hold every request until it ended. It waits for the loop's
 * next turn between its steps instead (docs/decisions.md, "Database operations").
 */
import { setImmediate } from 'node:timers/promises';

/** Resolves on the event loop's next turn, after the I/O (requests) waiting now has been handled. */
export const yieldToEventLoop = (): Promise<void> => setImmediate();
