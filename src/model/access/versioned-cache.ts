/**
 * A bounded, least-recently-used map whose entries remember the version (marker generations) they were
 * computed at. A lookup with any other version misses, so an entry can never outlive a relevant write; the
 * caller reads the version *before* computing, so a write that lands during the computation only makes the
 * entry look older than it is (a later miss), never newer. Values are promises: concurrent misses on one
 * key share one computation, and a failed computation is forgotten.
 */
import { WeighedMap } from '../../store/weighed-map.js';

interface VersionedEntry<V> {
  version: string;
  value: Promise<V>;
  /** The value once computed (`now`). */
  settled?: { v: V };
}

export class VersionedCache<K, V> {
  private readonly entries: WeighedMap<VersionedEntry<V>, K>;
  /** Lookups answered from an entry, and those that computed one (read by the daemon's metrics). */
  hits = 0;
  misses = 0;

  constructor(maxEntries: number) {
    this.entries = new WeighedMap(maxEntries);
  }

  get(key: K, version: string, compute: () => Promise<V>): Promise<V> {
    const hit = this.entries.get(key, true);
    if (hit && hit.version === version) {
      this.hits++;
      return hit.value;
    }
    this.misses++;
    const value = compute();
    const entry: VersionedEntry<V> = { version, value };
    this.entries.set(key, entry);
    value.then(
      (v) => (entry.settled = { v }),
      () => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    );
    return value;
  }

  /** The entry for `key` when it is current at `version`, without computing one (a miss counts as one). */
  peek(key: K, version: string): Promise<V> | undefined {
    const hit = this.entries.get(key, true);
    if (hit && hit.version === version) {
      this.hits++;
      return hit.value;
    }
    this.misses++;
    return undefined;
  }

  /**
   * The entry for `key` when it is current at `version` and computed already (`{ v }`: the value may itself be
   * undefined); undefined otherwise, without counting a miss (then `get` or `peek`).
   */
  now(key: K, version: string): { v: V } | undefined {
    const hit = this.entries.get(key, true);
    if (!hit?.settled || hit.version !== version) return undefined;
    this.hits++;
    return hit.settled;
  }

  /** Stores a value computed elsewhere (e.g. a row just written), under the version read before writing it. */
  set(key: K, version: string, value: V): void {
    this.entries.set(key, { version, value: Promise.resolve(value), settled: { v: value } });
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
