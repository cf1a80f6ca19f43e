/** Listing the role attributes in use by a resource (docs/reference-notes.md §1.7: one filterable field, `id`). */
import type { Ctx } from './ctx.js';
import type { FieldTable } from './filter/fields.js';
import { compileListQuery, type ListOptions } from './list-query.js';
import { setTable, type ResourceDef } from './resource.js';
import { pageDistinctValues } from '../store/role-attributes.js';
import { filterDialectOf } from '../store/filter-sql.js';
import type { Page } from './crud.js';

const FIELDS: FieldTable = { id: { kind: 'scalar', type: 'string', column: 'id' } };

/**
 * The reference reads only `filter` on these listings, so the URL `sort` is never refused: a sort on `id` or
 * `name` (the web console always sends `name asc`) orders by the attribute in the direction given, anything
 * else leaves the default ascending order.
 */
function urlSortDirection(text: string | undefined): 'asc' | 'desc' {
  const [field, direction] = (text ?? '').split(',')[0]!.trim().split(/\s+/);
  return (field === 'id' || field === 'name') && direction?.toLowerCase() === 'desc' ? 'desc' : 'asc';
}

export async function listRoleAttributes(
  ctx: Ctx,
  def: ResourceDef,
  opts: ListOptions,
): Promise<{ values: string[] } & Omit<Page, 'rows'>> {
  // A `sort by` in the filter still wins over the URL's, as on every listing.
  const q = compileListQuery({ ...opts, sort: `id ${urlSortDirection(opts.sort)}` }, FIELDS, filterDialectOf(ctx.db));
  const { values, total } = await pageDistinctValues(ctx.db, setTable(def, 'roleAttributes'), q);
  return { values, pagination: { limit: q.limit, offset: q.offset, totalCount: total }, filterableFields: ['id'] };
}
