/**
 * A bounded, least-recently-used map whose entries remember the version (marker generations) they were
 * computed at. A lookup with any other version misses, so an entry can never outlive a relevant write; the
 * caller reads the version *before* computing, so a write that lands during the computation only makes the
 * entry look older than it is (a later miss), never newer. Values are promises: concurrent misses on one
 * key share one computation, and a failed computation is forgotten.
 */
export class VersionedCache<K, V> {
  private readonly entries = new Map<K, { version: string; value: Promise<V> }>();
  /** Lookups answered from an entry, and those that computed one (read by the daemon's metrics). */
  hits = 0;
  misses = 0;

  constructor(private readonly maxEntries: number) {}

  get(key: K, version: string, compute: () => Promise<V>): Promise<V> {
    const hit = this.entries.get(key);
    if (hit && hit.version === version) {
      this.hits++;
      // Re-insert to mark it recently used (Map keeps insertion order), once the bound is near enough to matter.
      if (this.entries.size >= this.maxEntries / 2) {
        this.entries.delete(key);
        this.entries.set(key, hit);
      }
      return hit.value;
    }
    this.misses++;
    const value = compute();
    const entry = { version, value };
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as K);
    value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return value;
  }

  /** Stores a value computed elsewhere (e.g. a row just written), under the version read before writing it. */
  set(key: K, version: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, { version, value: Promise.resolve(value) });
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as K);
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
