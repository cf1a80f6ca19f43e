/** Entity references on rendered records, resolved for a whole page with one query per referenced table. */
import { namesById } from '../store/crud.js';
import type { Ctx } from './ctx.js';
import { entityRef } from './render.js';
import type { Row } from './resource.js';

export interface RefSpec {
  /** The row field holding the referenced id, e.g. `identityId`. */
  idField: string;
  /** The rendered field receiving `{_links, entity, id, name}`, e.g. `identity`. */
  as: string;
  /** Table and collection of the referenced entity. */
  table: string;
  collection: string;
}

/** Sets `row[spec.as]` to an entity reference for every row whose `idField` is set. */
export async function attachRefs(ctx: Ctx, rows: Row[], ...specs: RefSpec[]): Promise<void> {
  for (const spec of specs) {
    const ids = [...new Set(rows.map((r) => r[spec.idField]).filter((v): v is string => typeof v === 'string'))];
    if (ids.length === 0) continue;
    const byId = await namesById(ctx.db, spec.table, ids);
    for (const r of rows) {
      const id = r[spec.idField];
      if (typeof id === 'string') r[spec.as] = entityRef(spec.collection, id, byId.get(id));
    }
  }
}

export const IDENTITY_REF: RefSpec = {
  idField: 'identityId',
  as: 'identity',
  table: 'identities',
  collection: 'identities',
};
