/**
 * A {@link VersionedCache} whose entries survive the changes that do not concern them. An entry remembers the
 * generations of the marker kinds it depends on; when they moved, the store's journal is asked for the
 * changes in between (src/store/access-journal.ts). If every step is explained, the cache's `revise`
 * decides: keep the value (the changes do not reach it), return a patched one, or `undefined` to recompute.
 * Any unexplained step recomputes, as a plain versioned cache would. As there, the generations are read
 * before computing or revising, so an entry can only look older than it is, and revising is idempotent: the
 * revisers apply the state a change committed, or re-read it.
 */
import { explainTransitions, type Transition } from '../../store/access-journal.js';
import type { MarkerName, Markers } from '../../store/access-markers.js';
import type { Executor } from '../../store/db.js';
import type { AccessChange } from './changes.js';
import { WeighedMap } from '../../store/weighed-map.js';

export type Revise<V> = (value: V, changes: readonly AccessChange[]) => V | Promise<V> | undefined;

interface Entry<V> {
  gens: number[];
  value: Promise<V>;
  settled?: { v: V };
}

export class JournaledCache<K, V> {
  private readonly entries: WeighedMap<Entry<V>, K>;
  hits = 0;
  misses = 0;
  /** Lookups answered by keeping or patching an entry after explained changes. */
  revised = 0;

  constructor(
    maxEntries: number,
    private readonly kinds: readonly MarkerName[],
    /**
     * A second bound, on the entries' summed weights (`of` an entry's value, once it is computed): what caps
     * the memory of a cache whose entries grow with the model (a policy set's services).
     */
    private readonly weight?: { max: number; of: (value: V) => number },
  ) {
    this.entries = new WeighedMap(maxEntries, weight ? weight.max : maxEntries);
  }

  /** The entry for `key` as of `m`: kept, revised for the changes since it was computed, or computed. */
  get(db: Executor, key: K, m: Markers, compute: () => Promise<V>, revise: Revise<V>): Promise<V> {
    // The hit path runs several times per request: no allocation; recency is kept only when it can matter.
    const hit = this.entries.get(key, true);
    if (hit && this.current(hit.gens, m)) {
      this.hits++;
      return hit.value;
    }
    const gens = this.kinds.map((k) => m[k].gen);
    if (hit) {
      const changes = hit.settled && this.explain(db, hit.gens, gens);
      const next = changes && revise(hit.settled!.v, changes);
      if (next !== undefined) {
        this.revised++;
        return this.put(key, gens, Promise.resolve(next));
      }
    }
    this.misses++;
    return this.put(key, gens, compute());
  }

  /**
   * The entry for `key` when it is current at `m` and computed already; undefined otherwise (then `get`). The
   * warm request path reads its entries so, without a promise to await for each.
   */
  now(key: K, m: Markers): V | undefined {
    const hit = this.entries.get(key, true);
    if (!hit?.settled || !this.current(hit.gens, m)) return undefined;
    this.hits++;
    return hit.settled.v;
  }

  private put(key: K, gens: number[], value: Promise<V>): Promise<V> {
    const entry: Entry<V> = { gens, value };
    this.entries.set(key, entry);
    value.then(
      (v) => {
        entry.settled = { v };
        // Weighed once known: kept again under its weight, which evicts the oldest entries past the bound.
        if (this.weight && this.entries.get(key) === entry) this.entries.set(key, entry, this.weight.of(v));
      },
      () => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    );
    return value;
  }

  private current(gens: readonly number[], m: Markers): boolean {
    for (let i = 0; i < gens.length; i++) if (gens[i] !== m[this.kinds[i]!].gen) return false;
    return true;
  }

  private explain(db: Executor, from: number[], to: number[]): AccessChange[] | undefined {
    const steps = new Set<Transition>();
    for (let i = 0; i < this.kinds.length; i++) {
      if (!explainTransitions(db, this.kinds[i]!, from[i]!, to[i]!, steps)) return undefined;
    }
    return [...steps].flatMap((t) => t.notes as AccessChange[]);
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
