/**
 * Sets of small integers (the service index's ordinals, service-index.ts), in the cheaper of two forms: a
 * dense bitmap of a fixed number of 32-bit words, or the sorted ordinals while they are fewer than the bitmap
 * has words. So a set costs at most 4 bytes per word of the bitmap or 8 per member, whichever is less: an
 * attribute held by half the services is a bitmap, one held by a handful a short array. Sets are never
 * changed in place: `with`/`without` return copies, so a set can be shared by several generations.
 */
export type OrdinalSet = Uint32Array | readonly number[];

export const hasBit = (bits: Uint32Array, o: number): boolean => (bits[o >>> 5]! & (1 << (o & 31))) !== 0;

export function setBit(bits: Uint32Array, o: number): void {
  bits[o >>> 5]! |= 1 << (o & 31);
}

/** `target |= s`. */
export function orInto(target: Uint32Array, s: OrdinalSet): void {
  if (s instanceof Uint32Array) {
    for (let i = 0; i < s.length; i++) target[i]! |= s[i]!;
  } else {
    for (const o of s) setBit(target, o);
  }
}

/** `target &= s`. */
export function andInto(target: Uint32Array, s: OrdinalSet): void {
  if (s instanceof Uint32Array) {
    for (let i = 0; i < target.length; i++) target[i]! &= s[i]!;
    return;
  }
  const kept = new Uint32Array(target.length);
  for (const o of s) if (hasBit(target, o)) setBit(kept, o);
  target.set(kept);
}

/** A copy of `s` (undefined: empty) with `o` in it; a bitmap once the ordinals would reach `words`. */
export function withOrdinal(s: OrdinalSet | undefined, o: number, words: number): OrdinalSet {
  if (s instanceof Uint32Array) {
    const out = s.slice();
    setBit(out, o);
    return out;
  }
  const list = s ?? [];
  if (list.length + 1 >= words) {
    const out = new Uint32Array(words);
    orInto(out, list);
    setBit(out, o);
    return out;
  }
  const at = lowerBound(list, o);
  if (list[at] === o) return list;
  return [...list.slice(0, at), o, ...list.slice(at)];
}

/** A copy of `s` without `o`; undefined when nothing is left. A bitmap stays a bitmap. */
export function withoutOrdinal(s: OrdinalSet, o: number): OrdinalSet | undefined {
  if (s instanceof Uint32Array) {
    const out = s.slice();
    out[o >>> 5]! &= ~(1 << (o & 31));
    return out.some((w) => w !== 0) ? out : undefined;
  }
  const out = s.filter((x) => x !== o);
  return out.length > 0 ? out : undefined;
}

/** The first index of sorted `xs` whose value is not below `v`. */
export function lowerBound(xs: ArrayLike<number>, v: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (xs[mid]! < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
