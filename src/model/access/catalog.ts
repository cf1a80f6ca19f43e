/**
 * The catalogs the access engine serves from memory: every service as rendered (without the per-identity
 * `permissions`/`config`/`postureQueries`), the configs and config types those views need, and every edge
 * router's session-facing fields. They are loaded through the resource definitions (same rows, same
 * decoration, same rendering as the generic listings), so the fast paths and the SQL paths answer alike.
 * A catalog is reloaded whole when its marker moves: at 2,000 services or 500 routers that is tens of
 * milliseconds, once per write, instead of several queries on every request.
 */
import { allConfigs, allConfigTypeNames, type StoredConfig } from '../../store/access.js';
import { findRows } from '../../store/crud.js';
import { everything, idIn } from '../../store/scopes.js';
import type { Ctx } from '../ctx.js';
import { renderRecord } from '../render.js';
import { hooksOf } from '../resource-hooks.js';
import type { Row } from '../resource.js';
import { textList, textOf } from '../row.js';
import { edgeRouters } from '../resources/edge-router.js';
import type { AccessChange } from './changes.js';
import { services } from '../resources/service.js';
import { LayeredMap } from './layered-map.js';

export type ConfigInfo = StoredConfig;

export interface ServiceCatalog {
  /** Rendered service records by id; the per-identity fields are added by the view (service-view.ts). */
  records: LayeredMap<string, Record<string, unknown>>;
  /**
   * The same records as UTF-8 JSON without the per-identity fields and without the closing brace, so a list
   * page is assembled from bytes instead of serialising hundreds of objects per request (service-view.ts).
   */
  encoded: LayeredMap<string, Buffer>;
  /** The config ids of each service, in the service's order. */
  serviceConfigs: LayeredMap<string, string[]>;
  configs: Map<string, ConfigInfo>;
  configTypeNames: Map<string, string>;
  configTypeIdsByName: Map<string, string>;
}

export async function loadServiceCatalog(ctx: Ctx): Promise<ServiceCatalog> {
  const configMaps = await loadConfigMaps(ctx);
  const rows = await findRows(ctx.db, services, everything);
  await hooksOf(ctx, services).decorate?.(ctx, rows);
  const records = new Map<string, Record<string, unknown>>();
  const encoded = new Map<string, Buffer>();
  const serviceConfigs = new Map<string, string[]>();
  for (const r of rows) {
    const s = renderService(r);
    records.set(s.id, s.record);
    encoded.set(s.id, s.encoded);
    serviceConfigs.set(s.id, s.configs);
  }
  return {
    records: LayeredMap.of(records),
    encoded: LayeredMap.of(encoded),
    serviceConfigs: LayeredMap.of(serviceConfigs),
    ...configMaps,
  };
}

function renderService(r: Row) {
  const record = renderRecord(services, r);
  const { config: _c, permissions: _p, postureQueries: _q, ...shared } = record;
  return {
    id: textOf(r, 'id'),
    record,
    encoded: Buffer.from(JSON.stringify(shared).slice(0, -1)),
    configs: textList(r.configs) ?? [],
  };
}

async function loadConfigMaps(ctx: Ctx) {
  const configs = new Map<string, ConfigInfo>();
  for (const c of await allConfigs(ctx.db)) configs.set(c.id, c);
  const configTypeNames = new Map<string, string>();
  const configTypeIdsByName = new Map<string, string>();
  for (const t of await allConfigTypeNames(ctx.db)) {
    configTypeNames.set(t.id, t.name);
    configTypeIdsByName.set(t.name, t.id);
  }
  return { configs, configTypeNames, configTypeIdsByName };
}

/**
 * The catalog after explained changes (docs/policy-engine.md, "What a write invalidates"): the services
 * named are rendered again from the store (or dropped), the config maps reloaded if a config or config type
 * changed; the rest is shared with the previous catalog, which requests in flight keep using unchanged.
 */
export async function reviseServiceCatalog(
  ctx: Ctx,
  catalog: ServiceCatalog,
  changes: readonly AccessChange[],
): Promise<ServiceCatalog> {
  const serviceIds = new Set<string>();
  let configsChanged = false;
  for (const c of changes) {
    if (c.type === 'service') serviceIds.add(c.id);
    else if (c.type === 'config' || c.type === 'configType') configsChanged = true;
  }
  const out: ServiceCatalog = { ...catalog, ...(configsChanged && (await loadConfigMaps(ctx))) };
  if (serviceIds.size > 0) {
    const rows = await findRows(ctx.db, services, idIn([...serviceIds]));
    await hooksOf(ctx, services).decorate?.(ctx, rows);
    const now = new Map(rows.map((r) => [textOf(r, 'id'), renderService(r)]));
    const changed = <V>(of: (s: ReturnType<typeof renderService>) => V) =>
      [...serviceIds].map((id): [string, V | undefined] => {
        const s = now.get(id);
        return [id, s && of(s)];
      });
    out.records = catalog.records.with(changed((s) => s.record));
    out.encoded = catalog.encoded.with(changed((s) => s.encoded));
    out.serviceConfigs = catalog.serviceConfigs.with(changed((s) => s.configs));
  }
  return out;
}

/** An edge router as sessions and policy advice show it (docs/reference-notes.md §12 "Session edge router"). */
export interface RouterInfo {
  id: string;
  name: string;
  isOnline: boolean;
  isVerified: boolean;
  /** The `sessionEdgeRouter` record: `{name, hostname, isOnline, cost, noTraversal, supportedProtocols, syncStatus, urls}`. */
  sessionRecord: Record<string, unknown>;
}

/** Connected first, then by id (the store's default order), so router lists are stable. */
export const byConnectedThenId = (a: RouterInfo, b: RouterInfo): number =>
  Number(b.isOnline) - Number(a.isOnline) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export interface RouterCatalog {
  routers: Map<string, RouterInfo>;
}

export async function loadRouterCatalog(ctx: Ctx): Promise<RouterCatalog> {
  const rows: Row[] = await findRows(ctx.db, edgeRouters, everything);
  await hooksOf(ctx, edgeRouters).decorate?.(ctx, rows);
  const routers = new Map<string, RouterInfo>();
  for (const r of rows) {
    const protocols = (r.supportedProtocols as Record<string, string>) ?? {};
    const id = textOf(r, 'id');
    routers.set(id, {
      id,
      name: textOf(r, 'name'),
      isOnline: Boolean(r.isOnline),
      isVerified: Boolean(r.isVerified),
      sessionRecord: {
        name: r.name,
        hostname: r.hostname ?? '',
        isOnline: Boolean(r.isOnline),
        disabled: Boolean(r.disabled),
        cost: r.cost ?? null,
        noTraversal: r.noTraversal ?? null,
        supportedProtocols: protocols,
        syncStatus: r.syncStatus,
        // Deprecated twin of supportedProtocols, kept for older SDKs (docs/reference-notes.md §12).
        urls: protocols,
      },
    });
  }
  return { routers };
}
