/**
 * The substring-search indexes' queue (migration 0026): the names inserted since the last commit, moved into
 * their FTS5 indexes by the group commit right before it commits (tx-batch.ts), outside every member's
 * savepoint, so each commit writes one segment per index instead of one per member.
 */
import type { Executor } from './executor.js';
import { hotRows, hotWrite } from './direct.js';
import { SEARCH_INDEXES, searchIndexName } from './migrations/0012-search-indexes.js';
import { flushPendingStatements, PENDING_TABLE } from './migrations/0026-search-index-pending.js';

/** The texts that move each index's queued rows into it (migration 0026), by index name, made once. */
const FLUSH_BY_INDEX: ReadonlyMap<string, readonly string[]> = new Map(
  SEARCH_INDEXES.map((ix) => [searchIndexName(ix), flushPendingStatements(ix)]),
);
const QUEUED_INDEXES = `select distinct "ix" from "${PENDING_TABLE}"`;

/**
 * Moves the names queued for the substring-search indexes into them, in one statement per index that has any,
 * before the group commit's transaction commits (migration 0026): one FTS5 segment per commit, not one per
 * member. An index with nothing queued is left alone: a write to an FTS5 table costs even when it adds no row
 * (an identity create's commit paid ~130 µs for the services' index). A store without the queue (not migrated
 * yet) has nothing to move.
 */
export async function flushSearchQueue(trx: Executor): Promise<void> {
  let queued: { ix: string }[];
  try {
    queued = await hotRows<{ ix: string }>(trx, QUEUED_INDEXES, []);
  } catch (e) {
    // Only the missing table means "nothing to move"; any other failure fails the batch like its commit would.
    if (/no such table/.test((e as Error).message)) return;
    throw e;
  }
  // Only the indexes of SEARCH_INDEXES are ever queued for (their triggers); anything else was never moved.
  for (const { ix } of queued) for (const text of FLUSH_BY_INDEX.get(ix) ?? []) await hotWrite(trx, text, []);
}
