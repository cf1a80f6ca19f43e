/**
 * Listing reads kept until a table they read is written to: the exact `count(*)` of a listing and the rows of
 * one of its pages, each by its SQL and bound values (filter, scope, sort, limit and offset). A search matching
 * many rows (10,000 of the large model's identities for `name contains "id-0"`) otherwise re-reads and
 * re-checks every match on each request, once to count them and once to sort them for the page.
 *
 * Exactness rests on the store's change feed (change-feed.ts): an entry depends on every table its SQL names,
 * and an API session's activity touch reaches only the reads of `api_sessions`. Reads inside a transaction are
 * neither answered nor kept: the transaction's view includes its own uncommitted writes.
 *
 * With replicas (PostgreSQL), other replicas' writes reach the feed through the change counters, which some
 * writes do not move (migration 0015's `UNTRACED`: a new session, an activity time, a failed-attempt count, a
 * heartbeat, events). A listing reading one of those tables never learns of them, so there it is read each time.
 */
import type { CompiledQuery } from 'kysely';
import type { Executor } from './executor.js';
import { FeedCache } from './feed-cache.js';
import { defineCache, runtimeOf, storeCache } from './runtime.js';
import { UNTRACED } from './migrations/0015-change-log.js';

/** At most this many results, and this many records summed over them (a page weighs its rows). */
const BOUNDS = { maxEntries: 500, maxWeight: 20_000 };

export const LIST_CACHE = defineCache('listings', (feed) => new FeedCache<unknown>(feed, BOUNDS));

/**
 * Runs `read` for `q`, or answers the result kept for it when no table it reads has been written since. The
 * value is shared between requests: callers must not mutate it. `weigh` gives its share of the bound.
 */
export function readWithCache<T>(
  db: Executor,
  q: CompiledQuery,
  read: () => Promise<T>,
  weigh: (value: T) => number = () => 1,
  /** Tables the answer reads besides those `q` names (e.g. the page's link tables). */
  also: readonly string[] = [],
): Promise<T> {
  const cache = storeCache(db, LIST_CACHE);
  if (!cache) return read();
  const deps = cache.feed.readDeps(q.sql, also);
  if (runtimeOf(db)?.replicas && deps.tables.some((t) => t === '*' || Object.hasOwn(UNTRACED, t))) return read();
  const key = `${q.sql}\u0000${JSON.stringify(q.parameters)}`;
  return cache.read(key, deps, read, weigh as (v: unknown) => number) as Promise<T>;
}
