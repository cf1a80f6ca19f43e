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
 * | services granted (with Dial/Bind) by a set of service policies | the sorted policy ids | serviceAccess |
 * | edge routers of a set of edge router policies | the sorted policy ids | router |
 * | service edge router policies selecting a service | service id | router |
 * | edge routers of a set of service edge router policies, in session order | the sorted policy ids | router |
 * | the session of an API session, service and type | the three ids | sessions |
 *
 * Identities with the same attributes and no `@id` entries are selected by the same policies, so the
 * expensive entry (a policy set's services, ~25 ms at 100,000 identities and 250 policies) is computed once
 * per distinct policy set and generation, not per identity. One engine exists per open store; inside a
 * transaction a throw-away engine is used, so uncommitted state never enters the shared caches.
 */
import type { Executor } from '../../store/db.js';
import { readMarkers, type Markers } from '../../store/access-markers.js';
import { anyWriteGen } from '../../store/write-gen.js';
import type { StoredSession } from '../../store/sessions.js';
import type { Ctx } from '../ctx.js';
import {
  byConnectedThenId,
  loadRouterCatalog,
  loadServiceCatalog,
  type RouterCatalog,
  type RouterInfo,
  type ServiceCatalog,
} from './catalog.js';
import {
  apiSessionAccess,
  routersOfEdgeRouterPolicies,
  routersOfServiceEdgeRouterPolicies,
  serviceConfigOverrides,
  serviceEdgeRouterPoliciesOfService,
  type ApiSessionAccess,
} from '../../store/access.js';
import { edgeRouterPoliciesOf, grantsOf, servicePoliciesOf, type ServiceGrants } from './queries.js';
import { VersionedCache } from './versioned-cache.js';

export interface IdentityAccess {
  identityId: string;
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
  private readonly services = new VersionedCache<0, ServiceCatalog>(1);
  private readonly routers = new VersionedCache<0, RouterCatalog>(1);
  private readonly identities = new VersionedCache<string, IdentityAccess>(100_000);
  private readonly grants = new VersionedCache<string, ServiceGrants>(1024);
  private readonly policyRouters = new VersionedCache<string, Set<string>>(1024);
  private readonly serviceRouterPolicies = new VersionedCache<string, string[]>(20_000);
  private readonly serviceRouters = new VersionedCache<string, ServiceRouters>(1024);
  /**
   * The session of (API session, service, type), for the idempotent `POST /sessions`. Sessions never change;
   * any removal moves the `sessions` marker. A session just created is added with the version read before.
   */
  readonly sessions = new VersionedCache<string, StoredSession | undefined>(50_000);
  /** API sessions never change their config types or creation time, so these entries have one version. */
  private readonly apiSessions = new VersionedCache<string, ApiSessionInfo | undefined>(50_000);

  /** Hit, miss and entry counts of each cache, by name (the daemon's metrics read them at scrape time). */
  cacheStats(): CacheStats[] {
    const caches = {
      services: this.services,
      routers: this.routers,
      identities: this.identities,
      grants: this.grants,
      policyRouters: this.policyRouters,
      serviceRouterPolicies: this.serviceRouterPolicies,
      serviceRouters: this.serviceRouters,
      sessions: this.sessions,
      apiSessions: this.apiSessions,
    };
    return Object.entries(caches).map(([cache, c]) => ({ cache, hits: c.hits, misses: c.misses, entries: c.size }));
  }

  /** The markers as last read, while no statement that could move them has run since (store/write-gen.ts). */
  private lastMarkers: { gen: number; markers: Promise<Markers> } | undefined;

  markers(ctx: Ctx): Promise<Markers> {
    if (ctx.db.isTransaction) return readMarkers(ctx.db);
    // Read the generation first: a write racing the read moves it, so the next request reads again.
    const gen = anyWriteGen();
    if (this.lastMarkers?.gen === gen) return this.lastMarkers.markers;
    const markers = readMarkers(ctx.db);
    const entry = { gen, markers };
    this.lastMarkers = entry;
    markers.catch(() => {
      if (this.lastMarkers === entry) this.lastMarkers = undefined;
    });
    return markers;
  }

  serviceCatalog(ctx: Ctx, m: Markers): Promise<ServiceCatalog> {
    return this.services.get(0, String(m.catalog.gen), () => loadServiceCatalog(ctx));
  }

  routerCatalog(ctx: Ctx, m: Markers): Promise<RouterCatalog> {
    return this.routers.get(0, String(m.router.gen), () => loadRouterCatalog(ctx));
  }

  identity(ctx: Ctx, m: Markers, identityId: string): Promise<IdentityAccess> {
    const version = `${m.identity.gen}.${m.serviceAccess.gen}.${m.router.gen}`;
    return this.identities.get(identityId, version, async () => ({
      identityId,
      servicePolicyIds: await servicePoliciesOf(ctx.db, identityId),
      edgeRouterPolicyIds: await edgeRouterPoliciesOf(ctx.db, identityId),
      overrides: await serviceConfigOverrides(ctx.db, identityId),
    }));
  }

  grantsOf(ctx: Ctx, m: Markers, identity: IdentityAccess): Promise<ServiceGrants> {
    return this.grants.get(identity.servicePolicyIds.join(','), String(m.serviceAccess.gen), () =>
      grantsOf(ctx.db, identity.servicePolicyIds),
    );
  }

  routersOfIdentity(ctx: Ctx, m: Markers, identity: IdentityAccess): Promise<Set<string>> {
    return this.policyRouters.get(identity.edgeRouterPolicyIds.join(','), String(m.router.gen), () =>
      routersOfEdgeRouterPolicies(ctx.db, identity.edgeRouterPolicyIds),
    );
  }

  /** Services selected by the same service edge router policies share one entry, like identities share grants. */
  async routersOfService(ctx: Ctx, m: Markers, serviceId: string): Promise<ServiceRouters> {
    const version = String(m.router.gen);
    const policyIds = await this.serviceRouterPolicies.get(serviceId, version, () =>
      serviceEdgeRouterPoliciesOfService(ctx.db, serviceId),
    );
    return this.serviceRouters.get(policyIds.join(','), version, async () => {
      const ids = await routersOfServiceEdgeRouterPolicies(ctx.db, policyIds);
      const { routers } = await this.routerCatalog(ctx, m);
      const ordered = [...ids].flatMap((id) => routers.get(id) ?? []).sort(byConnectedThenId);
      return { ids, ordered };
    });
  }

  apiSession(ctx: Ctx, apiSessionId: string): Promise<ApiSessionInfo | undefined> {
    return this.apiSessions.get(apiSessionId, '', () => apiSessionAccess(ctx.db, apiSessionId));
  }

  /** The service side of one identity's access, as of now. */
  async view(ctx: Ctx, identityId: string, markers?: Markers): Promise<AccessView> {
    const m = markers ?? (await this.markers(ctx));
    const identity = await this.identity(ctx, m, identityId);
    const [grants, catalog] = await Promise.all([this.grantsOf(ctx, m, identity), this.serviceCatalog(ctx, m)]);
    return { markers: m, identity, grants, catalog };
  }
}

const engines = new WeakMap<Executor, AccessEngine>();

/**
 * The engine of the context's store. Inside a transaction the caches are bypassed (a fresh engine), so what
 * a transaction has not committed is never cached for other requests.
 */
export function accessEngine(ctx: Ctx): AccessEngine {
  if (ctx.db.isTransaction) return new AccessEngine();
  let engine = engines.get(ctx.db);
  if (!engine) engines.set(ctx.db, (engine = new AccessEngine()));
  return engine;
}

/** The cache counters of the context's shared engine (never a transaction's throw-away one). */
export const accessCacheStats = (ctx: Ctx): CacheStats[] => accessEngine(ctx).cacheStats();
