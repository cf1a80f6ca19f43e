/**
 * A read-only map of a large base and the few entries changed since, for the service catalog's per-service maps
 * (catalog.ts): a service write changes one entry, and copying maps of 20,000 entries (three per write) held the
 * event loop for milliseconds per write on the xlarge model. A change copies only the changed entries; once they
 * reach a sixteenth of the base (at least 64), the next change folds them into a new base (one full copy per that
 * many writes). Never changed in place, so a request holding an older map keeps reading what it read.
 */
export class LayeredMap<K, V> {
  private constructor(
    private readonly base: ReadonlyMap<K, V>,
    /** Entries set since the base was made; undefined: removed. */
    private readonly top: ReadonlyMap<K, V | undefined>,
  ) {}

  static of<K, V>(base: ReadonlyMap<K, V>): LayeredMap<K, V> {
    return new LayeredMap(base, new Map());
  }

  get(key: K): V | undefined {
    return this.top.has(key) ? this.top.get(key) : this.base.get(key);
  }

  has(key: K): boolean {
    return this.get(key) !== undefined;
  }

  /** A copy with each key set to its value, or removed (undefined). */
  with(changes: Iterable<readonly [K, V | undefined]>): LayeredMap<K, V> {
    const top = new Map(this.top);
    for (const [k, v] of changes) top.set(k, v);
    if (top.size < Math.max(64, this.base.size >>> 4)) return new LayeredMap(this.base, top);
    const base = new Map(this.base);
    for (const [k, v] of top) {
      if (v === undefined) base.delete(k);
      else base.set(k, v);
    }
    return new LayeredMap(base, new Map());
  }
}
