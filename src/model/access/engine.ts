/**
 * The access engine: who may use which service through which edge routers, answered from memory and kept
 * exactly current by the store's access markers (docs/policy-engine.md, "Answering access per request").
 *
 * Every answer is a cache entry computed by indexed SQL (`src/store/access.ts`, through `queries.ts`) and
 * tagged with the generations of the markers it depends on; a request first reads the markers (one small
 * query), so any committed write that could change an answer makes that answer miss. Entries are shared where the inputs are:
 *
 * | entry | key | depends on markers |
 * |---|---|---|
 * | service catalog, router catalog | – | catalog / router |
 * | an identity's selecting service and edge router policies, its service-config overrides | identity id | identity, serviceAccess, router |
 * | the service index: services' attributes, service policies' service sides (service-index.ts) | – | serviceAccess |
 * | services granted (with Dial/Bind) by a set of service policies, from the index | the sorted policy ids | serviceAccess |
 * | edge routers of a set of edge router policies | the sorted policy ids | router |
 * | service edge router policies selecting a service | service id | router |
 * | edge routers of a set of service edge router policies, in session order | the sorted policy ids | router |
 * | the session of an API session, service and type | the three ids | sessions |
 *
 * Identities with the same attributes and no `@id` entries are selected by the same policies, so the
 * expensive entry (a policy set's services: a few ms from the index at 20,000 services and 2,500 policies) is
 * computed once per distinct policy set and generation, not per identity. One engine exists per open store; inside a
 * transaction a throw-away engine is used, so uncommitted state never enters the shared caches.
 */
import { readMarkers, type Markers } from '../../store/access-markers.js';
import type { ChangeFeed, Deps } from '../../store/change-feed.js';
import { defineCache, storeCache } from '../../store/runtime.js';
import type { StoredSession } from '../../store/sessions.js';
import type { Ctx } from '../ctx.js';
import {
  byConnectedThenId,
  loadRouterCatalog,
  loadServiceCatalog,
  reviseServiceCatalog,
  type RouterCatalog,
  type RouterInfo,
  type ServiceCatalog,
} from './catalog.js';
import {
  apiSessionAccess,
  identityRoleAttributes,
  serviceConfigOverrides,
  type ApiSessionAccess,
} from '../../store/access.js';
import {
  BIND,
  DIAL,
  edgeRouterPoliciesOf,
  grantsOf,
  routersOfEdgeRouterPolicies,
  routersOfServiceEdgeRouterPolicies,
  serviceEdgeRouterPoliciesOf,
  servicePoliciesOf,
  type ServiceGrants,
} from './queries.js';
import { VersionedCache } from './versioned-cache.js';
import { grantsFrom, loadServiceIndex, reviseServiceIndex, type ServiceIndex } from './service-index.js';
import { JournaledCache } from './journaled-cache.js';
import { WeighedMap } from '../../store/weighed-map.js';
import type { AccessChange } from './changes.js';
import { roleMatches, type Semantic } from '../policy/roles.js';

export interface IdentityAccess {
  identityId: string;
  /** Its role attributes, to tell whether a changed policy selects it (narrow invalidation). */
  roleAttributes: string[];
  /** Service policies whose identity roles select the identity (sorted ids). */
  servicePolicyIds: string[];
  /** Edge router policies whose identity roles select the identity (sorted ids). */
  edgeRouterPolicyIds: string[];
  /** serviceId → configTypeId → configId (`/identities/{id}/service-configs`). */
  overrides: Map<string, Map<string, string>>;
}

/** What one request needs to answer for one identity, all as of the markers read at its start. */
export interface AccessView {
  markers: Markers;
  identity: IdentityAccess;
  grants: ServiceGrants;
  catalog: ServiceCatalog;
}

/** The edge routers serving a service: as a set, and in session order (connected first, then id). */
export interface ServiceRouters {
  ids: Set<string>;
  ordered: RouterInfo[];
}

export type ApiSessionInfo = ApiSessionAccess;

export interface CacheStats {
  cache: string;
  hits: number;
  misses: number;
  entries: number;
}

export class AccessEngine {
  /** The markers' table: its version moves with every write that fires a marker trigger (change-feed.ts). */
  private readonly markerDeps: Deps | undefined;

  constructor(private readonly feed?: ChangeFeed) {
    this.markerDeps = feed?.deps(['access_markers']);
  }

  // Each entry depends on the marker kinds named; explained changes revise it (journaled-cache.ts, changes.ts).
  private readonly services = new JournaledCache<0, ServiceCatalog>(1, ['catalog']);
  private readonly routers = new JournaledCache<0, RouterCatalog>(1, ['router']);
  private readonly identities = new JournaledCache<string, IdentityAccess>(100_000, [
    'identity',
    'serviceAccess',
    'router',
  ]);
  // The policy sets' entries grow with the model (at the xlarge model a set grants most of 20,000 services): each
  // is bounded by what its entries hold together too, not only by their count (`MAX_SET_MEMBERS`).
  /**
   * What selects each service (service-index.ts): one entry, revised by the notes of service and service
   * policy writes. Its size follows the model like the service catalog's: per service its attributes, per
   * attribute its holders (4 bytes per holder at most), per service policy its service roles.
   */
  private readonly serviceIndexes = new JournaledCache<0, ServiceIndex>(1, ['serviceAccess']);
  private readonly grants = new JournaledCache<string, ServiceGrants>(1024, ['serviceAccess'], {
    max: MAX_SET_MEMBERS,
    of: (g) => g.ids.length + 1,
  });
  private readonly policyRouters = new JournaledCache<string, Set<string>>(1024, ['router'], {
    max: MAX_SET_MEMBERS,
    of: (ids) => ids.size + 1,
  });
  private readonly serviceRouterPolicies = new JournaledCache<string, string[]>(20_000, ['router']);
  private readonly serviceRouters = new JournaledCache<string, ServiceRouters>(1024, ['router'], {
    max: MAX_SET_MEMBERS,
    of: (r) => r.ids.size + 1,
  });
  /**
   * The session of (API session, service, type), for the idempotent `POST /sessions`. Sessions never change;
   * any removal moves the `sessions` marker. A session just created is added with the version read before.
   */
  readonly sessions = new VersionedCache<string, StoredSession | undefined>(50_000);
  /** API sessions never change their config types or creation time, so these entries have one version. */
  private readonly apiSessions = new VersionedCache<string, ApiSessionInfo | undefined>(50_000);

  /**
   * One array per distinct policy id list, by its key: the entries of identities (services) selected by the same
   * policies hold the same list, and its key (`keyOf`) is joined once. Without it each entry held its own copy: at
   * the xlarge model's 2,500 policies of each kind an identity is selected by ~600 of each, ~60 KB of ids and keys
   * per cached identity (bench/access-memory.ts). Bounded by the ids held (`MAX_SHARED_IDS`); a list pushed out
   * stays with the entries holding it, and the next equal list read is kept in its place.
   */
  private readonly lists = new WeighedMap<string[]>(MAX_SHARED_LISTS, MAX_SHARED_IDS);

  private shared(ids: string[]): string[] {
    const key = ids.join(',');
    const had = this.lists.get(key, true);
    if (had) return had;
    this.lists.set(key, ids, ids.length + 1);
    keys.set(ids, key);
    return ids;
  }

  /** Hit, miss and entry counts of each cache, by name (the daemon's metrics read them at scrape time). */
  cacheStats(): CacheStats[] {
    const caches = {
      services: this.services,
      routers: this.routers,
      identities: this.identities,
      serviceIndex: this.serviceIndexes,
      grants: this.grants,
      policyRouters: this.policyRouters,
      serviceRouterPolicies: this.serviceRouterPolicies,
      serviceRouters: this.serviceRouters,
      sessions: this.sessions,
      apiSessions: this.apiSessions,
    };
    return Object.entries(caches).map(([cache, c]) => ({ cache, hits: c.hits, misses: c.misses, entries: c.size }));
  }

  /** The markers as last read, while no write has reached their table since (change-feed.ts). */
  private lastMarkers: { gen: number; markers: Promise<Markers>; settled?: Markers } | undefined;

  markers(ctx: Ctx): Promise<Markers> {
    if (ctx.db.isTransaction || !this.feed || !this.markerDeps) return readMarkers(ctx.db);
    // Read the version first: a write racing the read moves it, so the next request reads again.
    const gen = this.feed.version(this.markerDeps);
    if (this.lastMarkers?.gen === gen) return this.lastMarkers.markers;
    const markers = readMarkers(ctx.db);
    const entry: NonNullable<typeof this.lastMarkers> = { gen, markers };
    this.lastMarkers = entry;
    markers.then(
      (m) => (entry.settled = m),
      () => {
        if (this.lastMarkers === entry) this.lastMarkers = undefined;
      },
    );
    return markers;
  }

  /** The markers `markers` would answer, when they are read already; undefined otherwise (then `markers`). */
  markersNow(ctx: Ctx): Markers | undefined {
    if (ctx.db.isTransaction || !this.feed || !this.markerDeps) return undefined;
    const last = this.lastMarkers;
    return last?.settled && last.gen === this.feed.version(this.markerDeps) ? last.settled : undefined;
  }

  serviceCatalog(ctx: Ctx, m: Markers): Promise<ServiceCatalog> {
    return this.services.get(
      ctx.db,
      0,
      m,
      () => loadServiceCatalog(ctx),
      (catalog, changes) => reviseServiceCatalog(ctx, catalog, changes),
    );
  }

  routerCatalog(ctx: Ctx, m: Markers): Promise<RouterCatalog> {
    return this.routers.get(ctx.db, 0, m, () => loadRouterCatalog(ctx), keepForRouters);
  }

  identity(ctx: Ctx, m: Markers, identityId: string): Promise<IdentityAccess> {
    return this.identities.get(
      ctx.db,
      identityId,
      m,
      async () => ({
        identityId,
        roleAttributes: await identityRoleAttributes(ctx.db, identityId),
        servicePolicyIds: this.shared(await servicePoliciesOf(ctx.db, identityId)),
        edgeRouterPolicyIds: this.shared(await edgeRouterPoliciesOf(ctx.db, identityId)),
        overrides: await serviceConfigOverrides(ctx.db, identityId),
      }),
      (entry, changes) => (changes.some((c) => reachesIdentity(c, entry)) ? undefined : entry),
    );
  }

  /** Every service's attributes and every service policy's service side (service-index.ts). */
  serviceIndex(ctx: Ctx, m: Markers): Promise<ServiceIndex> {
    return this.serviceIndexes.get(ctx.db, 0, m, () => loadServiceIndex(ctx.db), reviseServiceIndex);
  }

  grantsOf(ctx: Ctx, m: Markers, identity: IdentityAccess): Promise<ServiceGrants> {
    const ids = identity.servicePolicyIds;
    // A transaction's throw-away engine asks the store: one query costs less than building the index for it.
    if (ctx.db.isTransaction) return grantsOf(ctx.db, ids);
    return this.grants.get(
      ctx.db,
      keyOf(ids),
      m,
      async () => grantsFrom(await this.serviceIndex(ctx, m), ids),
      (grants, changes) => reviseGrants(grants, ids, changes),
    );
  }

  routersOfIdentity(ctx: Ctx, m: Markers, identity: IdentityAccess): Promise<Set<string>> {
    return this.policyRouters.get(
      ctx.db,
      keyOf(identity.edgeRouterPolicyIds),
      m,
      () => routersOfEdgeRouterPolicies(ctx.db, identity.edgeRouterPolicyIds),
      keepForRouters,
    );
  }

  /** Services selected by the same service edge router policies share one entry, like identities share grants. */
  async routersOfService(ctx: Ctx, m: Markers, serviceId: string): Promise<ServiceRouters> {
    const policyIds = await this.serviceRouterPolicies.get(
      ctx.db,
      serviceId,
      m,
      async () => this.shared(await serviceEdgeRouterPoliciesOf(ctx.db, serviceId)),
      (ids, changes) => (changes.some((c) => c.type === 'service' && c.id === serviceId) ? undefined : ids),
    );
    return this.serviceRouters.get(
      ctx.db,
      keyOf(policyIds),
      m,
      async () => {
        const ids = await routersOfServiceEdgeRouterPolicies(ctx.db, policyIds);
        const { routers } = await this.routerCatalog(ctx, m);
        const ordered = [...ids].flatMap((id) => routers.get(id) ?? []).sort(byConnectedThenId);
        return { ids, ordered };
      },
      keepForRouters,
    );
  }

  apiSession(ctx: Ctx, apiSessionId: string): Promise<ApiSessionInfo | undefined> {
    return this.apiSessions.get(apiSessionId, '', () => apiSessionAccess(ctx.db, apiSessionId));
  }

  /**
   * The view `view` would answer, when every entry of it is current and computed; undefined otherwise (then
   * `view`). A warm request answers from it without awaiting each entry.
   */
  viewNow(ctx: Ctx, identityId: string, markers?: Markers): AccessView | undefined {
    const m = markers ?? this.markersNow(ctx);
    const identity = m && this.identities.now(identityId, m);
    const grants = identity && this.grants.now(keyOf(identity.servicePolicyIds), m);
    const catalog = grants && this.services.now(0, m!);
    return catalog && { markers: m!, identity: identity!, grants: grants!, catalog };
  }

  /**
   * The edge router sets of a session (the identity's, the service's) when their entries are current and
   * computed; undefined otherwise (then `routersOfIdentity` and `routersOfService`).
   */
  routerSetsNow(m: Markers, identity: IdentityAccess, serviceId: string): [Set<string>, ServiceRouters] | undefined {
    const mine = this.policyRouters.now(keyOf(identity.edgeRouterPolicyIds), m);
    const policyIds = mine && this.serviceRouterPolicies.now(serviceId, m);
    const serving = policyIds && this.serviceRouters.now(keyOf(policyIds), m);
    return serving && [mine!, serving];
  }

  /** The service side of one identity's access, as of now. */
  async view(ctx: Ctx, identityId: string, markers?: Markers): Promise<AccessView> {
    const m = markers ?? (await this.markers(ctx));
    const identity = await this.identity(ctx, m, identityId);
    const [grants, catalog] = await Promise.all([this.grantsOf(ctx, m, identity), this.serviceCatalog(ctx, m)]);
    return { markers: m, identity, grants, catalog };
  }
}

/**
 * Router-side entries (router catalog, routers of edge router and service edge router policy sets): the only
 * explained changes that move the `router` marker are a service's write (which SERPs select it: its own entry)
 * and an identity's `@id` leaving router policies, which change none of them (changes.ts). Router and router-policy writes are not
 * explained, so they still recompute these.
 */
const keepForRouters = <V>(value: V): V => value;

/** Whether a change can alter what an identity's entry holds (changes.ts lists what each change reaches). */
function reachesIdentity(c: AccessChange, e: IdentityAccess): boolean {
  switch (c.type) {
    case 'identity':
      return c.id === e.identityId;
    case 'servicePolicy':
      return (
        e.servicePolicyIds.includes(c.id) ||
        (c.identitySide !== undefined &&
          roleMatches(c.identitySide.identityRoles, c.identitySide.semantic as Semantic, {
            id: e.identityId,
            roleAttributes: e.roleAttributes,
          }))
      );
    case 'service':
      return e.overrides.has(c.id);
    case 'config':
      for (const byType of e.overrides.values()) for (const id of byType.values()) if (id === c.id) return true;
      return false;
    case 'configType':
      return false;
  }
}

/**
 * A policy set's grants after explained changes: recomputed when one of its policies changed; patched for a
 * service whose policies changed (in, out, or other Dial/Bind bits), from the policies selecting it after
 * the change; kept otherwise.
 */
function reviseGrants(
  grants: ServiceGrants,
  policyIds: readonly string[],
  changes: readonly AccessChange[],
): ServiceGrants | undefined {
  const ours = new Set(policyIds);
  let out = grants;
  for (const c of changes) {
    if (c.type === 'servicePolicy' && ours.has(c.id)) return undefined;
    // Recomputing from the service index costs a few ms: less than patches copying ever more.
    if (out.perms.patches >= MAX_PATCHES) return undefined;
    if (c.type !== 'service') continue;
    let bits = 0;
    for (const p of c.policies) if (ours.has(p.id)) bits |= p.type === 'Dial' ? DIAL : p.type === 'Bind' ? BIND : 0;
    if (bits === (out.perms.get(c.id) ?? 0)) continue;
    out = withServiceBits(out, c.id, bits);
  }
  return out;
}

const keys = new WeakMap<readonly string[], string>();

/**
 * The cache key of a policy id list: joined once per list (entries hold their lists unchanged), not on every
 * request (an identity in a hundred policies has a 3.7 kB key).
 */
function keyOf(ids: readonly string[]): string {
  let key = keys.get(ids);
  if (key === undefined) keys.set(ids, (key = ids.join(',')));
  return key;
}

/**
 * The services (edge routers) the entries of one policy-set cache may hold together: ~100 bytes each, so ~100 MB
 * per cache at most. At the large model (2,000 services) the count bound of 1,024 sets comes first; at the xlarge
 * model one set grants most of 20,000 services (15,000 for an identity of one attribute, measured on a partial
 * build), so ~60 sets are kept, where 1,024 would take ~1.5 GB.
 */
const MAX_SET_MEMBERS = 1_000_000;

/** Services a policy set's grants may have had patched before they are computed again (`reviseGrants`). */
const MAX_PATCHES = 256;

/** Distinct policy id lists shared by the engine's entries, and the ids they may hold together (`shared`). */
const MAX_SHARED_LISTS = 4096;
const MAX_SHARED_IDS = 1_000_000;

/** A copy of `grants` with one service's bits set (0: not granted), `ids` kept in id order. */
function withServiceBits(grants: ServiceGrants, serviceId: string, bits: number): ServiceGrants {
  const had = grants.perms.has(serviceId);
  let ids = grants.ids;
  if (bits === 0) ids = ids.filter((id) => id !== serviceId);
  else if (!had) {
    let lo = 0;
    let hi = ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ids[mid]! < serviceId) lo = mid + 1;
      else hi = mid;
    }
    ids = [...ids.slice(0, lo), serviceId, ...ids.slice(lo)];
  }
  return { ids, perms: grants.perms.with(serviceId, bits) };
}

/** The access engine and its caches, one per store. */
export const ACCESS_ENGINE = defineCache('access-engine', (feed) => new AccessEngine(feed));

/**
 * The engine of the context's store. Inside a transaction the caches are bypassed (a fresh engine), so what
 * a transaction has not committed is never cached for other requests.
 */
export const accessEngine = (ctx: Ctx): AccessEngine => storeCache(ctx.db, ACCESS_ENGINE) ?? new AccessEngine();

/** The cache counters of the context's shared engine (never a transaction's throw-away one). */
export const accessCacheStats = (ctx: Ctx): CacheStats[] => accessEngine(ctx).cacheStats();
