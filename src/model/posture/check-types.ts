/**
 * `/posture-check-types` (docs/reference-notes.md §9.1): one fixed record per listed type, built from the
 * type modules. MFA has no record, as in the reference, though checks of that type can be created. The
 * listing takes `filter`, `sort`, `limit` and `offset` like every other (§1.5, §1.6) over the common fields
 * and `name`; the rows are constants, so the store pages them as a derived table (docs/decisions.md, "Posture").
 */
import { pageConstantRows } from '../../store/constant-rows.js';
import { filterDialectOf } from '../../store/filter-sql.js';
import type { Page } from '../crud.js';
import type { Ctx } from '../ctx.js';
import { notFound } from '../errors.js';
import type { FieldTable } from '../filter/fields.js';
import { compileListQuery, type ListOptions } from '../list-query.js';
import { BASE_FIELDS } from '../resource.js';
import { textOf } from '../row.js';
import { POSTURE_CHECK_TYPES } from './types/index.js';

/** The reference seeds these records when its store is created; edgectl's are constant, dated at the epoch. */
const SEEDED_AT = '1970-01-01T00:00:00.000Z';

/** The public symbols of a posture check type (§1.7: the common ones plus `name`). */
const FIELDS: FieldTable = { ...BASE_FIELDS, name: { kind: 'scalar', type: 'string', column: 'name' } };

export function postureCheckTypeRecords(): Record<string, unknown>[] {
  return POSTURE_CHECK_TYPES.filter((t) => t.name !== undefined).map((t) => ({
    id: t.id,
    createdAt: SEEDED_AT,
    updatedAt: SEEDED_AT,
    tags: {},
    _links: { self: { href: `./posture-check-types/${t.id}` } },
    name: t.name,
    operatingSystems: t.operatingSystems,
    version: '1',
  }));
}

/** How many type records there are (the `/summary` count). */
export const postureCheckTypeCount = (): number => postureCheckTypeRecords().length;

export function postureCheckTypeRecord(id: string): Record<string, unknown> {
  const r = postureCheckTypeRecords().find((x) => x.id === id);
  if (!r) throw notFound(id, 'posture check type');
  return r;
}

/** One page of the type records, filtered, sorted and paged by the listing rules. */
export async function listPostureCheckTypes(ctx: Ctx, opts: ListOptions): Promise<Page> {
  const q = compileListQuery(opts, FIELDS, filterDialectOf(ctx.db));
  const records = postureCheckTypeRecords();
  const stored = records.map((r) => ({
    id: textOf(r, 'id'),
    createdAt: SEEDED_AT,
    updatedAt: SEEDED_AT,
    tags: '{}',
    isSystem: 0,
    name: textOf(r, 'name'),
  }));
  const { ids, total } = await pageConstantRows(ctx.db, Object.keys(FIELDS), stored, q);
  const byId = new Map(records.map((r) => [textOf(r, 'id'), r]));
  return {
    rows: ids.map((id) => byId.get(id)!),
    pagination: { limit: q.limit, offset: q.offset, totalCount: total },
    filterableFields: Object.keys(FIELDS),
  };
}
