/**
 * The Dial/Bind bits of a policy set's granted services, by service id, without a map entry per service: one
 * byte per ordinal of the service index (service-index.ts) it was computed from, plus the services patched
 * since (a write of one service revises every cached set holding it: copying a map of 15,000 entries per set
 * and write held the event loop for milliseconds on the xlarge model). Never changed: a patch is a new object.
 */
export class GrantedPerms {
  constructor(
    /** Service id → ordinal (the index build's map: it only grows, and an ordinal names one service forever). */
    private readonly ordinals: ReadonlyMap<string, number>,
    /** Bits per ordinal as computed; ordinals given out later read as 0. */
    private readonly bits: Uint8Array,
    /** Bits of services patched since (0: not granted any more). */
    private readonly patched?: ReadonlyMap<string, number>,
  ) {}

  /** A service's bits (`DIAL | BIND`), undefined when it is not granted. */
  get(id: string): number | undefined {
    const p = this.patched?.get(id);
    if (p !== undefined) return p === 0 ? undefined : p;
    const o = this.ordinals.get(id);
    const b = o === undefined ? 0 : (this.bits[o] ?? 0);
    return b === 0 ? undefined : b;
  }

  has(id: string): boolean {
    return this.get(id) !== undefined;
  }

  /** A copy with one service's bits set (0: not granted). */
  with(id: string, bits: number): GrantedPerms {
    const patched = new Map(this.patched);
    patched.set(id, bits);
    return new GrantedPerms(this.ordinals, this.bits, patched);
  }

  /** How many services were patched since computing (a bound on what a patch copies). */
  get patches(): number {
    return this.patched?.size ?? 0;
  }

  /** The bits of services given in order with their bits (the SQL path: ids are their own ordinals). */
  static of(entries: readonly (readonly [string, number])[]): GrantedPerms {
    const ordinals = new Map<string, number>();
    const bits = new Uint8Array(entries.length);
    entries.forEach(([id, b], i) => {
      ordinals.set(id, i);
      bits[i] = b;
    });
    return new GrantedPerms(ordinals, bits);
  }
}
