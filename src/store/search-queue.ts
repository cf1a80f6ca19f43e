/**
 * The substring-search indexes' queue (migration 0026): the names inserted since the last commit, moved into
 * their FTS5 indexes by the group commit right before it commits (tx-batch.ts), outside every member's
 * savepoint, so each commit writes one segment per index instead of one per member.
 */
import type { Executor } from './executor.js';
import { hotRows, hotWrite } from './direct.js';
import { SEARCH_INDEXES } from './migrations/0012-search-indexes.js';
import { flushPendingStatements, PENDING_TABLE } from './migrations/0026-search-index-pending.js';

/** The texts that move every queued row into its search index (migration 0026), made once. */
const FLUSH_SEARCH_QUEUE: readonly string[] = SEARCH_INDEXES.flatMap((ix) => flushPendingStatements(ix));
const ANY_QUEUED = `select 1 as queued from "${PENDING_TABLE}" limit 1`;

/**
 * Moves the names queued for the substring-search indexes into them, in one statement per index, before the
 * group commit's transaction commits (migration 0026): one FTS5 segment per commit, not one per member. A store
 * without the queue (not migrated yet) has nothing to move.
 */
export async function flushSearchQueue(trx: Executor): Promise<void> {
  let queued: unknown[];
  try {
    queued = await hotRows(trx, ANY_QUEUED, []);
  } catch (e) {
    // Only the missing table means "nothing to move"; any other failure fails the batch like its commit would.
    if (/no such table/.test((e as Error).message)) return;
    throw e;
  }
  if (queued.length === 0) return;
  for (const text of FLUSH_SEARCH_QUEUE) await hotWrite(trx, text, []);
}
