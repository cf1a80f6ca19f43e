/**
 * Services as an identity sees them: the Client API's service list and detail (only services the identity
 * may Dial or Bind) and the Management API's per-identity views (every service, with `permissions` and
 * `config` computed for the caller or for `asIdentity`).
 *
 * The default page of the client list (no filter, sort or roleFilter) is served from the access engine's
 * memory: the identity's granted service ids are already in list order, so a page is a slice and each
 * record a copy of the catalog's rendering. Any other list goes through the generic SQL listing, scoped to
 * the granted ids, so filters, sorting and paging behave exactly as on every other list.
 */
import { identityIdByIdOrName } from '../../../store/access.js';
import { allOf, idIn } from '../../../store/scopes.js';
import type { Ctx } from '../../ctx.js';
import { getEntity, listEntities, type Page } from '../../crud.js';
import { notFound } from '../../errors.js';
import type { ListOptions } from '../../list-query.js';
import { clampLimit, clampOffset, parsePagingParams } from '../../paging.js';
import { renderRecord } from '../../render.js';
import { filterFields } from '../../resource.js';
import { textOf } from '../../row.js';
import { services } from '../../resources/service.js';
import { roleFilterScope } from '../../role-filter.js';
import { accessEngine, type AccessView } from '../../access/engine.js';
import {
  configView,
  encodedServiceRecord,
  selectConfigTypes,
  serviceRecord,
  type ConfigTypeSelection,
} from '../../access/service-view.js';
import { postureModel, postureModelNow, postureView } from '../../posture/evaluate.js';
import { defineCache, storeCache } from '../../../store/runtime.js';
import { WeighedMap } from '../../../store/weighed-map.js';
import { postureQueriesFor } from '../../posture/queries.js';

export interface ServiceListRequest {
  list: ListOptions;
  roleFilter: string[];
  roleSemantic?: string;
  /** Config types asked for in the query; absent: those of the API session (given at authenticate). */
  configTypes?: string[];
}

export interface ServicePage {
  /** The records, or (default client page) `answer`: the whole answer, made by the caller's `PageAnswer`. */
  records?: Record<string, unknown>[];
  answer?: Buffer;
  page: Pick<Page, 'pagination' | 'filterableFields'>;
}

/**
 * How the caller writes a default page's answer from the JSON array of its records (byte chunks, valid only
 * during the call) and its paging: the answer is what the page keeps, its only copy of the records' bytes.
 */
export type PageAnswer = (data: readonly Buffer[], page: ServicePage['page']) => Buffer;

/** The fields a service listing may filter on (the definition's, fixed). */
const FILTERABLE = Object.keys(filterFields(services));
const filterableFields = () => FILTERABLE;

/** The config types of a request: the query's when given, else the API session's. */
async function configSelection(
  ctx: Ctx,
  view: AccessView,
  apiSessionId: string | undefined,
  requested?: string[],
): Promise<ConfigTypeSelection> {
  const types =
    requested ??
    (apiSessionId ? (await accessEngine(ctx).apiSession(ctx, apiSessionId))?.configTypes : undefined) ??
    [];
  return selectConfigTypes(view.catalog, types);
}

/** The caller's `postureQueries` per service id, from the posture checks as of the view's markers. */
type PostureQueries = (serviceId: string) => unknown[];

async function postureQueriesOf(ctx: Ctx, view: AccessView, identityId: string, apiSessionId: string) {
  const model = await postureModel(ctx, view.markers.serviceAccess.gen);
  const pv = await postureView(ctx, identityId, apiSessionId, ctx.now());
  return (serviceId: string) => postureQueriesFor(model, view.identity.servicePolicyIds, serviceId, pv);
}

const recordFor = (
  view: AccessView,
  selection: ConfigTypeSelection,
  base: Record<string, unknown>,
  pq?: PostureQueries,
) => {
  const id = textOf(base, 'id');
  return serviceRecord(
    base,
    view.grants.perms.get(id),
    configView(view.catalog, id, view.identity.overrides, selection),
    pq?.(id),
  );
};

const [OPEN, COMMA, CLOSE] = ['[', ',', ']'].map((c) => Buffer.from(c)) as [Buffer, Buffer, Buffer];

const isPlainPage = (req: ServiceListRequest) =>
  !req.list.filter?.trim() && !req.list.sort?.trim() && req.roleFilter.length === 0;

/**
 * The default pages made last, per (identity, config types asked, paging). A page is reused while the view it
 * was made from is the very same: the access engine hands out the same grants, catalog and identity entry
 * until a write reaches them, and a changed one is a new object. Only without posture checks in the
 * controller: `postureQueries` also follow the caller's posture and the clock (MFA timeouts).
 */
interface PlainPage {
  /**
   * The view it was made from, held weakly: a kept page must not keep a replaced catalog (every service write
   * makes a new one, ~3 MB at 20,000 services) or grants alive. A view collected since is not the current one.
   */
  view: { [K in 'grants' | 'catalog' | 'identity']: WeakRef<AccessView[K]> };
  page: ServicePage;
}
const MAX_PLAIN_PAGES = 20_000;
/**
 * And by their bytes: a page of `limit=500` is ~340 KB, and at the xlarge model (20,000 services) a client
 * reading its whole list makes ~30 of them. Counted alone, 100 such clients grew the controller from ~320 MB
 * to over 2 GB (bench/RESULTS.md); 64 MiB keeps ~9,000 default pages (~7 KB) or ~190 of 500 records. A page
 * keeps one copy of its bytes, the answer (the route's envelope around the records was a second copy, kept
 * beside the cache and not counted: 64 MiB of pages held ~130 MiB on the large bench).
 */
export const MAX_PLAIN_PAGE_BYTES = 64 * 1024 * 1024;
const PLAIN_PAGES = defineCache(
  'plain-service-pages',
  () => new WeighedMap<PlainPage>(MAX_PLAIN_PAGES, MAX_PLAIN_PAGE_BYTES),
);

const sameView = (a: PlainPage['view'], b: AccessView) =>
  a.grants.deref() === b.grants && a.catalog.deref() === b.catalog && a.identity.deref() === b.identity;

/** Client `GET /services`: the services the identity may Dial or Bind. */
export async function listServicesOf(
  ctx: Ctx,
  identityId: string,
  apiSessionId: string,
  req: ServiceListRequest,
  answer: PageAnswer,
): Promise<ServicePage> {
  const engine = accessEngine(ctx);
  // Warm, every entry is read as it is; only what is being (re)computed is awaited.
  const view = engine.viewNow(ctx, identityId) ?? (await engine.view(ctx, identityId));
  if (isPlainPage(req)) {
    const paging = parsePagingParams(req.list.limit, req.list.offset);
    const limit = clampLimit(paging.limit);
    const offset = clampOffset(paging.offset);
    const gen = view.markers.serviceAccess.gen;
    const model = postureModelNow(ctx, gen) ?? (await postureModel(ctx, gen));
    // An API session's config types never change, so the session stands for them when the query names none.
    const key = `${identityId} ${req.configTypes ? `q:${req.configTypes.join(',')}` : `s:${apiSessionId}`} ${limit} ${offset}`;
    const cache = model.size === 0 ? storeCache(ctx.db, PLAIN_PAGES) : undefined;
    const hit = cache?.get(key);
    if (hit && sameView(hit.view, view)) return hit.page;
    const selection = await configSelection(ctx, view, apiSessionId, req.configTypes);
    const pq = await postureQueriesOf(ctx, view, identityId, apiSessionId);
    const encoded: Buffer[] = [OPEN];
    for (const id of view.grants.ids.slice(offset, offset + limit)) {
      const prefix = view.catalog.encoded.get(id);
      if (!prefix) continue;
      if (encoded.length > 1) encoded.push(COMMA);
      encoded.push(
        ...encodedServiceRecord(
          prefix,
          view.grants.perms.get(id),
          configView(view.catalog, id, view.identity.overrides, selection),
          pq(id),
        ),
      );
    }
    encoded.push(CLOSE);
    const meta: ServicePage['page'] = {
      pagination: { limit, offset, totalCount: view.grants.ids.length },
      filterableFields: filterableFields(),
    };
    const page: ServicePage = { answer: answer(encoded, meta), page: meta };
    cache?.set(
      key,
      {
        view: {
          grants: new WeakRef(view.grants),
          catalog: new WeakRef(view.catalog),
          identity: new WeakRef(view.identity),
        },
        page,
      },
      page.answer!.length,
    );
    return page;
  }
  const selection = await configSelection(ctx, view, apiSessionId, req.configTypes);
  const pq = await postureQueriesOf(ctx, view, identityId, apiSessionId);
  const scope = allOf(roleFilterScope(services, req.roleFilter, req.roleSemantic), idIn(view.grants.ids));
  const page = await listEntities(ctx, services, req.list, scope);
  return { records: page.rows.map((r) => recordFor(view, selection, renderRecord(services, r), pq)), page };
}

/** Client `GET /services/{id}`: 404 unless the identity may Dial or Bind it. */
export async function serviceOf(
  ctx: Ctx,
  identityId: string,
  apiSessionId: string,
  serviceId: string,
): Promise<Record<string, unknown>> {
  const view = await accessEngine(ctx).view(ctx, identityId);
  const base = view.grants.perms.has(serviceId) ? view.catalog.records.get(serviceId) : undefined;
  if (!base) throw notFound(serviceId, 'service');
  const pq = await postureQueriesOf(ctx, view, identityId, apiSessionId);
  return recordFor(view, await configSelection(ctx, view, apiSessionId), base, pq);
}

/**
 * Management `GET /services`: every service (it is the admin listing), with `permissions` and `config` as
 * `viewerId` would get them (the caller, or `asIdentity`). This follows the newer reference, which lists all
 * services and only computes the view per identity (docs/decisions.md).
 */
export async function listServicesAs(
  ctx: Ctx,
  viewerId: string,
  apiSessionId: string,
  req: ServiceListRequest,
): Promise<ServicePage> {
  const view = await accessEngine(ctx).view(ctx, viewerId);
  const selection = await configSelection(ctx, view, apiSessionId, req.configTypes);
  const page = await listEntities(ctx, services, req.list, roleFilterScope(services, req.roleFilter, req.roleSemantic));
  return { records: page.rows.map((r) => recordFor(view, selection, renderRecord(services, r))), page };
}

/** Management `GET /services/{id}`: any service, with the caller's view of it. */
export async function serviceAs(
  ctx: Ctx,
  viewerId: string,
  apiSessionId: string,
  serviceId: string,
): Promise<Record<string, unknown>> {
  const row = await getEntity(ctx, services, serviceId);
  const view = await accessEngine(ctx).view(ctx, viewerId);
  return recordFor(view, await configSelection(ctx, view, apiSessionId), renderRecord(services, row));
}

/** `asIdentity`: an identity id or name (404 when neither matches). */
export async function resolveIdentityRef(ctx: Ctx, idOrName: string): Promise<string> {
  const id = await identityIdByIdOrName(ctx.db, idOrName);
  if (id === undefined) throw notFound(idOrName, 'identity');
  return id;
}
