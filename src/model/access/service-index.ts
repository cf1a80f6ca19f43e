/**
 * The service side of every service policy, in memory, so that a policy set's grants are set operations over
 * the services instead of a query (docs/policy-engine.md, "Grants from the service index").
 *
 * Each service has an ordinal. The index keeps, per role attribute, the ordinals of the services holding it
 * (the services' attribute table, as an {@link OrdinalSet}), and per service policy its type, semantic and
 * service roles. A set's grants apply the matching rule (`roleMatches`, §2.2) the way the SQL does
 * (policy-match.ts): `#all`; the `@id` entries; the union of the holders of every attribute an `AnyOf` policy
 * (or an `AllOf` policy with one `#` entry) names, each distinct attribute once; the intersection of the
 * holders per distinct attribute list of the other `AllOf` policies. On the xlarge model (20,000 services,
 * a set of ~1,200 policies) that is a few ms where the query took ~250 ms.
 *
 * An index is never changed: a revision returns a new one sharing what did not change. What revises it are the
 * notes of service and service policy writes, which carry the attributes (the service side) they committed
 * (changes.ts); anything else that moves the `serviceAccess` marker rebuilds it. Ordinals are handed out by
 * the build and never reused for another service, so the id ↔ ordinal maps only grow and every revision of one
 * build shares them; a generation sees the services live in it through its own `order`. When the ordinals
 * reach the build's room (its services plus an eighth, at least 1,024) the next service create rebuilds it.
 */
import type { Executor } from '../../store/db.js';
import { entityAttributes, policyRoles, type EntityAttributes, type PolicyRoles } from '../../store/access.js';
import { matchSideOf, SERVICE_POLICY } from '../policy/kinds.js';
import { parseRoles } from '../policy/roles.js';
import type { AccessChange } from './changes.js';
import { andInto, hasBit, orInto, setBit, withOrdinal, withoutOrdinal, type OrdinalSet } from './ordinal-set.js';
import { BIND, DIAL, type ServiceGrants } from './queries.js';
import { GrantedPerms } from './granted-perms.js';

const SP_SERVICE = matchSideOf(SERVICE_POLICY, 'service');

/** The ordinals of one build: grown by its revisions, shared by all of them. */
interface Ordinals {
  byId: Map<string, number>;
  idOf: string[];
  /** Words of every bitmap of this build: room for `words * 32` ordinals. */
  words: number;
}

/** A service policy's service side, parsed once. */
export interface PolicyServiceSide {
  /** {@link DIAL} or {@link BIND}. */
  bits: number;
  all: boolean;
  ids: readonly string[];
  attributes: readonly string[];
  /** `AllOf` over several `#` entries: the services holding every one (else any one). */
  every: boolean;
  /** `attributes` joined, to evaluate each distinct list once per set. */
  key: string;
}

export interface ServiceIndex {
  readonly ordinals: Ordinals;
  /** The live services' ordinals in id order (the grants' order). */
  readonly order: Int32Array;
  /** Each ordinal's role attributes while its service lives. */
  readonly attributesOf: readonly (readonly string[] | undefined)[];
  /** Per role attribute, the ordinals of the live services holding it. */
  readonly holders: ReadonlyMap<string, OrdinalSet>;
  readonly policies: ReadonlyMap<string, PolicyServiceSide>;
}

/** Reads every service's attributes and every service policy's service side. */
export async function loadServiceIndex(db: Executor): Promise<ServiceIndex> {
  const services = await entityAttributes(db, SP_SERVICE);
  const policies = await policyRoles(db, SP_SERVICE, true);
  return buildServiceIndex(services, policies);
}

/** The index of `services` (in id order) and `policies`. */
export function buildServiceIndex(
  services: readonly EntityAttributes[],
  policies: readonly PolicyRoles[],
): ServiceIndex {
  const room = services.length + Math.max(1024, services.length >>> 3);
  const ordinals: Ordinals = { byId: new Map(), idOf: [], words: Math.ceil(room / 32) };
  const order = new Int32Array(services.length);
  const attributesOf: (readonly string[] | undefined)[] = [];
  const members = new Map<string, number[]>();
  services.forEach((s, o) => {
    ordinals.byId.set(s.id, o);
    ordinals.idOf.push(s.id);
    order[o] = o;
    attributesOf.push(s.attributes);
    for (const a of s.attributes) {
      let list = members.get(a);
      if (!list) members.set(a, (list = []));
      list.push(o);
    }
  });
  const holders = new Map<string, OrdinalSet>();
  for (const [a, list] of members) {
    if (list.length < ordinals.words) holders.set(a, list);
    else {
      const bits = new Uint32Array(ordinals.words);
      orInto(bits, list);
      holders.set(a, bits);
    }
  }
  const sides = new Map<string, PolicyServiceSide>();
  for (const p of policies) sides.set(p.id, policySide(p.type, p.semantic, p.roles));
  return { ordinals, order, attributesOf, holders, policies: sides };
}

function policySide(type: string, semantic: string, roles: readonly string[]): PolicyServiceSide {
  const p = parseRoles(roles);
  const attributes = [...p.attributes].sort();
  return {
    bits: type === 'Dial' ? DIAL : type === 'Bind' ? BIND : 0,
    all: p.all,
    ids: p.ids,
    attributes,
    every: semantic === 'AllOf' && attributes.length > 1,
    key: attributes.join('\n'),
  };
}

/**
 * The index after explained changes (journaled-cache.ts): services and service policies set to what their
 * notes say was committed; undefined (rebuild) for a note without that state or when the ordinals are full.
 */
export function reviseServiceIndex(index: ServiceIndex, changes: readonly AccessChange[]): ServiceIndex | undefined {
  let out: ServiceIndex | undefined = index;
  for (const c of changes) {
    if (c.type === 'service') {
      if (c.attributes === undefined) return undefined;
      out = withService(out, c.id, c.attributes);
    } else if (c.type === 'servicePolicy') {
      if (c.serviceSide === undefined) return undefined;
      const policies = new Map(out.policies);
      if (c.serviceSide === null) policies.delete(c.id);
      else policies.set(c.id, policySide(c.serviceSide.type, c.serviceSide.semantic, c.serviceSide.serviceRoles));
      out = { ...out, policies };
    }
    if (!out) return undefined;
  }
  return out;
}

/** The index with service `id` holding `attributes`, or gone (null). */
function withService(index: ServiceIndex, id: string, attributes: readonly string[] | null): ServiceIndex | undefined {
  const { ordinals } = index;
  let o = ordinals.byId.get(id);
  const had = o === undefined ? undefined : index.attributesOf[o];
  if (attributes === null) {
    if (had === undefined) return index;
    // Its `@id` entries left the role lists with it (no note of their own): an id is never selected again.
    let policies = index.policies;
    for (const [pid, p] of index.policies) {
      if (!p.ids.includes(id)) continue;
      if (policies === index.policies) policies = new Map(index.policies);
      (policies as Map<string, PolicyServiceSide>).set(pid, { ...p, ids: p.ids.filter((x) => x !== id) });
    }
    return {
      ...index,
      policies,
      order: index.order.filter((x) => x !== o),
      attributesOf: replaced(index.attributesOf, o!, undefined),
      holders: withHolders(index.holders, o!, ordinals.words, had, []),
    };
  }
  if (o === undefined) {
    if (ordinals.idOf.length >= ordinals.words * 32) return undefined;
    o = ordinals.idOf.length;
    ordinals.idOf.push(id);
    ordinals.byId.set(id, o);
  }
  if (had !== undefined && sameMembers(had, attributes)) return index;
  let order = index.order;
  if (had === undefined) {
    const at = orderSlot(index, id);
    order = new Int32Array(order.length + 1);
    order.set(index.order.subarray(0, at));
    order[at] = o;
    order.set(index.order.subarray(at), at + 1);
  }
  return {
    ...index,
    order,
    attributesOf: replaced(index.attributesOf, o, attributes),
    holders: withHolders(index.holders, o, ordinals.words, had ?? [], attributes),
  };
}

/** Where service `id` goes in the index's id order. */
function orderSlot(index: ServiceIndex, id: string): number {
  const { order } = index;
  const { idOf } = index.ordinals;
  let lo = 0;
  let hi = order.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (idOf[order[mid]!]! < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function replaced<T>(xs: readonly T[], i: number, v: T): T[] {
  const out = xs.slice();
  out[i] = v;
  return out;
}

const sameMembers = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((x) => b.includes(x));

/** The holders after ordinal `o` went from attributes `before` to `after`; only the sets that change are copied. */
function withHolders(
  holders: ReadonlyMap<string, OrdinalSet>,
  o: number,
  words: number,
  before: readonly string[],
  after: readonly string[],
): ReadonlyMap<string, OrdinalSet> {
  const out = new Map(holders);
  for (const a of before) {
    if (after.includes(a)) continue;
    const s = out.get(a);
    const next = s && withoutOrdinal(s, o);
    if (next) out.set(a, next);
    else out.delete(a);
  }
  for (const a of after) if (!before.includes(a)) out.set(a, withOrdinal(out.get(a), o, words));
  return out;
}

/** What a set of service policies grants: every live service any of them selects, Dial/Bind folded, in id order. */
export function grantsFrom(index: ServiceIndex, policyIds: readonly string[]): ServiceGrants {
  const { words, byId } = index.ordinals;
  const room = words * 32;
  const dial = new Uint32Array(words);
  const bind = new Uint32Array(words);
  let everyService = 0;
  // Per type: the attributes named by AnyOf-like policies, and the distinct attribute lists of AllOf ones.
  const any = [new Set<string>(), new Set<string>()];
  const every = [new Map<string, readonly string[]>(), new Map<string, readonly string[]>()];
  for (const id of policyIds) {
    const p = index.policies.get(id);
    if (!p || p.bits === 0) continue;
    if (p.all) {
      everyService |= p.bits;
      continue;
    }
    const k = p.bits === DIAL ? 0 : 1;
    const target = k === 0 ? dial : bind;
    for (const s of p.ids) {
      const o = byId.get(s);
      if (o !== undefined && o < room) setBit(target, o);
    }
    if (p.every) every[k]!.set(p.key, p.attributes);
    else for (const a of p.attributes) any[k]!.add(a);
  }
  for (const k of [0, 1]) {
    const target = k === 0 ? dial : bind;
    for (const a of any[k]!) {
      const h = index.holders.get(a);
      if (h) orInto(target, h);
    }
    for (const attributes of every[k]!.values()) {
      const sets = attributes.map((a) => index.holders.get(a));
      if (sets.some((s) => s === undefined)) continue;
      const hit = new Uint32Array(words);
      orInto(hit, sets[0]!);
      for (const s of sets.slice(1)) andInto(hit, s!);
      orInto(target, hit);
    }
  }
  const ids: string[] = [];
  const perms = new Uint8Array(room);
  const { idOf } = index.ordinals;
  for (const o of index.order) {
    const bits = everyService | (hasBit(dial, o) ? DIAL : 0) | (hasBit(bind, o) ? BIND : 0);
    if (bits === 0) continue;
    ids.push(idOf[o]!);
    perms[o] = bits;
  }
  return { ids, perms: new GrantedPerms(byId, perms) };
}
