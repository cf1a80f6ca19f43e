/** Listing the role attributes in use by a resource (parity: §1.7, single filterable field `id`). */
import type { Ctx } from './ctx.js';
import type { FieldTable } from './filter/fields.js';
import { compileListQuery, type ListOptions } from './list-query.js';
import { setTable, type ResourceDef } from './resource.js';
import { pageDistinctValues } from '../store/role-attributes.js';
import type { Page } from './crud.js';

const FIELDS: FieldTable = { id: { kind: 'scalar', type: 'string', column: 'id' } };

export async function listRoleAttributes(ctx: Ctx, def: ResourceDef, opts: ListOptions): Promise<{ values: string[] } & Omit<Page, 'rows'>> {
  const q = compileListQuery(opts, FIELDS);
  const { values, total } = await pageDistinctValues(ctx.db, setTable(def, 'roleAttributes'), q);
  return { values, pagination: { limit: q.limit, offset: q.offset, totalCount: total }, filterableFields: ['id'] };
}
