/**
 * A map bounded both by its number of entries and by the summed weights of its values, oldest out first: the
 * kept listing reads (list-cache.ts) and the kept rendered pages (model/rendered-pages.ts). Insertion order is
 * the eviction order; `get(key, true)` moves an entry to the young end (least recently used out first).
 */
export class WeighedMap<V> {
  private readonly entries = new Map<string, { value: V; weight: number }>();
  private total = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxWeight: number,
    /** Heavier values than this are not kept at all (default: the whole bound). */
    private readonly maxItemWeight = maxWeight,
  ) {}

  get(key: string, touch = false): V | undefined {
    const e = this.entries.get(key);
    if (e && touch) {
      this.entries.delete(key);
      this.entries.set(key, e);
    }
    return e?.value;
  }

  /** Keeps `value` under `key` (replacing what was there), evicting the oldest entries to stay in bounds. */
  set(key: string, value: V, weight: number): void {
    this.delete(key);
    if (weight > this.maxItemWeight) return;
    while (this.entries.size >= this.maxEntries || this.total + weight > this.maxWeight)
      this.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { value, weight });
    this.total += weight;
  }

  delete(key: string): void {
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
