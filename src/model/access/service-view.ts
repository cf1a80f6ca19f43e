/**
 * A service as one identity sees it (docs/reference-notes.md §2.3, §4.7): `permissions` (`Bind` before
 * `Dial`), `config` keyed by config-type name with only the requested config types and the identity's own
 * service configs winning, and `postureQueries`.
 */
import type { ServiceCatalog } from './catalog.js';
import { BIND, DIAL } from './queries.js';

/** The config types a caller asked for, as ids, or every type. */
export type ConfigTypeSelection = 'all' | ReadonlySet<string>;

/**
 * Config types as given at authenticate (or in a `configTypes` query): names or ids, `all` for every type;
 * unknown entries are dropped (§4.3). Resolved when read, so types created or renamed after the
 * authentication are picked up.
 */
export function selectConfigTypes(catalog: ServiceCatalog, requested: readonly string[]): ConfigTypeSelection {
  if (requested.includes('all')) return 'all';
  const ids = new Set<string>();
  for (const r of requested) {
    if (catalog.configTypeNames.has(r)) ids.add(r);
    else {
      const id = catalog.configTypeIdsByName.get(r);
      if (id) ids.add(id);
    }
  }
  return ids;
}

const selected = (sel: ConfigTypeSelection, typeId: string) => sel === 'all' || sel.has(typeId);

/** `config` of one service: its configs of the selected types, then the identity's overrides on top. */
export function configView(
  catalog: ServiceCatalog,
  serviceId: string,
  overrides: ReadonlyMap<string, ReadonlyMap<string, string>> | undefined,
  selection: ConfigTypeSelection,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (selection !== 'all' && selection.size === 0) return out;
  const put = (configId: string) => {
    const c = catalog.configs.get(configId);
    if (!c || !selected(selection, c.typeId)) return;
    const typeName = catalog.configTypeNames.get(c.typeId);
    if (typeName !== undefined) out[typeName] = c.data;
  };
  for (const id of catalog.serviceConfigs.get(serviceId) ?? []) put(id);
  for (const id of overrides?.get(serviceId)?.values() ?? []) put(id);
  return out;
}

const PERMISSIONS: readonly string[][] = [[], ['Dial'], ['Bind'], ['Bind', 'Dial']];

/** `permissions` from Dial/Bind bits, `Bind` first (§2.3). */
export const permissionsOf = (bits: number | undefined): string[] => [...PERMISSIONS[(bits ?? 0) & (DIAL | BIND)]!];

/** The wire record: the rendered service plus the identity's view of it. */
export function serviceRecord(
  base: Record<string, unknown>,
  bits: number | undefined,
  config: Record<string, unknown>,
  postureQueries: unknown[] = [],
): Record<string, unknown> {
  // `postureQueries`: per granting policy carrying posture checks (src/model/posture/queries.ts).
  return { ...base, config, permissions: permissionsOf(bits), postureQueries };
}

const PERMISSIONS_JSON = PERMISSIONS.map((p) => JSON.stringify(p));
const EMPTY_TAIL = PERMISSIONS_JSON.map((p) => Buffer.from(`,"config":{},"permissions":${p},"postureQueries":[]}`));

/**
 * The same record as {@link serviceRecord}, as JSON bytes: the catalog's encoded shared part followed by the
 * per-identity fields. Used by the default client list page, where serialising up to 500 records per
 * request would cost more than everything else the request does.
 */
export function encodedServiceRecord(
  prefix: Buffer,
  bits: number | undefined,
  config: Record<string, unknown>,
  postureQueries: unknown[] = [],
): Buffer[] {
  const b = (bits ?? 0) & (DIAL | BIND);
  if (postureQueries.length > 0) {
    return [
      prefix,
      Buffer.from(
        `,"config":${JSON.stringify(config)},"permissions":${PERMISSIONS_JSON[b]},"postureQueries":${JSON.stringify(postureQueries)}}`,
      ),
    ];
  }
  for (const _ in config) {
    return [
      prefix,
      Buffer.from(`,"config":${JSON.stringify(config)},"permissions":${PERMISSIONS_JSON[b]},"postureQueries":[]}`),
    ];
  }
  return [prefix, EMPTY_TAIL[b]!];
}
