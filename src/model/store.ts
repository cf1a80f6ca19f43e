/**
 * The doorway to the store for the composition roots (the daemon's start-up, the offline CLI commands): opening,
 * locking and checking it. Everything else reaches the store through model services.
 */
export { openStore, type OpenedStore } from '../store/db.js';
export { acquireLock } from '../store/lock.js';
export { knownMigrations } from '../store/migrations/index.js';
export { integrityProblems } from '../store/open-checks.js';
