/**
 * The doorway to the store for the composition roots (the daemon's start-up, the offline CLI commands): opening,
 * locking and checking it. Everything else reaches the store through model services.
 */
export { openStore, type OpenedStore } from '../store/db.js';
export type { ClaimName, StoreClaim } from '../store/claims.js';
export { onTablesChanged, replicaFeedStats, replicatedWrites, storeFresh, storePublished } from '../store/runtime.js';
export { databaseBytes } from '../store/health.js';
export type { CheckpointLimits, WalStatus } from '../store/checkpointer.js';
export { acquireLock } from '../store/lock.js';
export { knownMigrations } from '../store/migrations/index.js';
export { checkSchemaObjects, firstFew, integrityProblems } from '../store/open-checks.js';
export { schemaObjectProblems } from '../store/maintenance.js';
export { migrationNames } from '../store/migrations/index.js';
export { backupStoreFile, countStoreRows, inspectStoreFile, type StoreFileSummary } from '../store/maintenance.js';
export { storeFiles } from '../store/open-checks.js';
export { inspectPostgresStore, migratePostgresStore, newerStore } from '../store/pg/maintenance.js';
export { dumpDatabase } from '../store/pg/dump.js';
export { redactedUrl } from '../store/pg/open.js';
export { snapshotPath, SnapshotUnavailable } from '../store/snapshot.js';
