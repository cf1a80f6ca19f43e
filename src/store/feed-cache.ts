/**
 * The one shape of a store's caches: a map bounded by entries and by summed weights (weighed-map.ts), whose
 * entries remember the version of the tables they were read from (change-feed.ts) and are answered only while
 * that version has not moved. Values are shared between requests: callers must not mutate them.
 */
import type { ChangeFeed, Deps } from './change-feed.js';
import { WeighedMap } from './weighed-map.js';

export interface FeedCacheBounds {
  maxEntries: number;
  /** Bound on the summed weights (default: one per entry). */
  maxWeight?: number;
}

interface Entry<V> {
  deps: Deps;
  version: number;
  value: V;
}

export class FeedCache<V> {
  private readonly entries: WeighedMap<Entry<V>>;
  hits = 0;
  misses = 0;

  constructor(
    readonly feed: ChangeFeed,
    readonly bounds: FeedCacheBounds,
  ) {
    this.entries = new WeighedMap(bounds.maxEntries, bounds.maxWeight ?? bounds.maxEntries);
  }

  /** The value kept for `key`, while none of the tables it was read from has been written since. */
  get(key: string, touch = false): V | undefined {
    const e = this.entries.get(key, touch);
    if (e && this.feed.version(e.deps) === e.version) {
      this.hits++;
      return e.value;
    }
    this.misses++;
    if (e) this.entries.delete(key);
    return undefined;
  }

  /** Keeps `value`, read from `deps` at `version` (taken before reading), unless a write has moved it since. */
  set(key: string, deps: Deps, version: number, value: V, weight = 1): void {
    if (this.feed.version(deps) !== version) return;
    this.entries.set(key, { deps, version, value }, weight);
  }

  /** Answers the kept value, or reads it (and keeps it when no write to `deps` ran meanwhile). */
  async read(key: string, deps: Deps, read: () => Promise<V>, weigh: (v: V) => number = () => 1): Promise<V> {
    const kept = this.get(key, true);
    if (kept !== undefined) return kept;
    const version = this.feed.version(deps);
    const value = await read();
    this.set(key, deps, version, value, weigh(value));
    return value;
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
