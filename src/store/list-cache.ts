/**
 * Listing reads kept until the store is written to: the exact `count(*)` of a listing and the rows of one of its
 * pages, each by its SQL and bound values (filter, scope, sort, limit and offset). A search matching many rows
 * (10,000 of the large model's identities for `name contains "id-0"`) otherwise re-reads and re-checks
 * every match on each request, once to count them and once to sort them for the page.
 *
 * Exactness rests on the write generation (write-gen.ts): it moves with every statement that may write and
 * with every commit and rollback, and an entry is answered only while the generation is the one it was read
 * at. The API session activity touch is the one write left out, unless the query reads `api_sessions` (the
 * touch changes nothing else). Reads inside a transaction are neither answered nor kept: the transaction's
 * view includes its own uncommitted writes. A result is kept only when no write ran while it was read.
 */
import type { CompiledQuery } from 'kysely';
import { listCountGen } from './write-gen.js';
import { WeighedMap } from './weighed-map.js';

const MAX_ENTRIES = 500;
/** Bound on the summed weights (a page weighs its rows): at most this many records are held. */
const MAX_WEIGHT = 20_000;

/** Kept results by query, each with the generation it was read at. */
const entries = new WeighedMap<{ gen: number; value: unknown }>(MAX_ENTRIES, MAX_WEIGHT);

const keyOf = (q: CompiledQuery): string => `${q.sql}\u0000${JSON.stringify(q.parameters)}`;
const generation = (q: CompiledQuery): number => listCountGen(/\bapi_sessions\b/.test(q.sql));

/**
 * Runs `read` for `q`, or answers the result kept for it when the store has not been written to since.
 * `inTransaction`: the caller's executor is a transaction, so the cache is bypassed both ways. The value is
 * shared between requests: callers must not mutate it. `weigh` gives its share of the cache's bound (default 1).
 */
export async function readWithCache<T>(
  q: CompiledQuery,
  inTransaction: boolean,
  read: () => Promise<T>,
  weigh: (value: T) => number = () => 1,
): Promise<T> {
  if (inTransaction) return read();
  const key = keyOf(q);
  const before = generation(q);
  const kept = entries.get(key);
  if (kept?.gen === before) return kept.value as T;
  const value = await read();
  // Another request may have written while this one waited for the connection: keep only an undisturbed read.
  if (generation(q) !== before) return value;
  entries.set(key, { gen: before, value }, weigh(value));
  return value;
}

/** How many results are kept (tests). */
export const listCacheSize = (): number => entries.size;

/** Forgets every kept result (tests). */
export function clearListCache(): void {
  entries.clear();
}
