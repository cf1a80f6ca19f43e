/**
 * Wire rendering of stored records: the base fields, `_links` with `./<collection>/<id>` hrefs, the
 * readable props, and whatever the definition's `decorate` hook added. Empty optional values are left out
 * unless the prop asks for an explicit null (parity: reference README, "Optional fields").
 */
import type { ResourceDef, Row } from './resource.js';
import { textOf } from './row.js';

export type Links = Record<string, { href: string }>;

export const selfHref = (collection: string, id: string): string => `./${collection}/${id}`;

export function linksFor(def: ResourceDef, id: string): Links {
  const links: Links = { self: { href: selfHref(def.name, id) } };
  for (const [rel, href] of Object.entries(def.links?.(id) ?? {})) links[rel] = { href };
  return links;
}

/** `{_links, entity, id, name}` pointing at a record of another collection. */
export function entityRef(collection: string, id: string, name: string | null | undefined): Record<string, unknown> {
  return { _links: { self: { href: selfHref(collection, id) } }, entity: collection, id, name: name ?? '' };
}

const INTERNAL: ReadonlySet<string> = new Set(['isSystem']);

export function renderRecord(def: ResourceDef, row: Row): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: row.id,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    tags: row.tags ?? {},
    _links: linksFor(def, textOf(row, 'id')),
  };
  for (const [k, v] of Object.entries(row)) {
    if (k in out || (INTERNAL.has(k) && !def.showSystem)) continue;
    const p = def.props[k];
    if (p?.hidden) continue;
    if (v === null || v === undefined) {
      if (p?.renderNull || !p) out[k] = null;
      continue;
    }
    out[k] = v;
  }
  return out;
}
