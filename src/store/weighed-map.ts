/**
 * The one bounded map of the store's caches: bounded both by its number of entries and by the summed weights of
 * its values (default weight 1, so by default only by entries), oldest out first. Insertion order is the
 * eviction order; `get(key, true)` moves an entry to the young end (least recently used out first), and does so
 * only once the map is at least half full, so a hit on a cache far from its bound neither allocates nor
 * reorders. Every cache of the runtime keeps its entries in one (docs/design.md, "Caches and the hot path").
 */
export class WeighedMap<V, K = string> {
  private readonly entries = new Map<K, { value: V; weight: number }>();
  private total = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxWeight: number = maxEntries,
    /** Heavier values than this are not kept at all (default: the whole bound). */
    private readonly maxItemWeight = maxWeight,
  ) {}

  get(key: K, touch = false): V | undefined {
    const e = this.entries.get(key);
    if (e && touch && this.entries.size >= this.maxEntries / 2) {
      this.entries.delete(key);
      this.entries.set(key, e);
    }
    return e?.value;
  }

  /** Keeps `value` under `key` (replacing what was there), evicting the oldest entries to stay in bounds. */
  set(key: K, value: V, weight = 1): void {
    this.delete(key);
    if (weight > this.maxItemWeight) return;
    while (this.entries.size > 0 && (this.entries.size >= this.maxEntries || this.total + weight > this.maxWeight))
      this.delete(this.entries.keys().next().value as K);
    this.entries.set(key, { value, weight });
    this.total += weight;
  }

  delete(key: K): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.total -= e.weight;
  }

  clear(): void {
    this.entries.clear();
    this.total = 0;
  }

  get size(): number {
    return this.entries.size;
  }
}
