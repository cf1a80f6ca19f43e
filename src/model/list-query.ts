/**
 * Turns a list request (filter text, URL sort, limit, offset) into SQL fragments: the filter's own
 * `sort by`/`skip`/`limit` win over the URL's (parity: docs/reference-notes.md §1.5, §1.6).
 *
 * The model parses and type-checks the filter against the listing's field table; the store's compiler
 * (`src/store/filter-sql.ts`) receives only the checked query, so it needs nothing from the model.
 */
import {
  compileChecked,
  searchProbes,
  type CompiledQuery,
  type CompileOptions,
  type FilterDialect,
  type SearchProbe,
} from '../store/filter-sql.js';
import type { PageOrder } from '../store/crud.js';
import type { Scope } from '../store/scopes.js';
import type { FieldTable } from './filter/fields.js';
import { parseFilter, parseSortParam } from './filter/parser.js';
import { filterError, type FilterQuery } from './filter/ast.js';
import { checkFilterBounds } from './filter/bounds.js';
import { checkFilter } from './filter/typecheck.js';
import { clampLimit, clampOffset, parsePagingParams } from './paging.js';

export interface ListOptions {
  filter?: string;
  sort?: string;
  limit?: string;
  offset?: string;
}

export interface ListQuery {
  where: Scope | null;
  orderBy: PageOrder[];
  limit: number;
  offset: number;
}

/** Parses a filter and checks its cost bounds; one nested beyond the parser's stack is refused as invalid, not failed as a 500. */
function parseTolerantly(text: string) {
  try {
    const query = parseFilter(text);
    checkFilterBounds(query);
    return query;
  } catch (e) {
    if (e instanceof RangeError) throw filterError('the filter is nested too deeply');
    throw e;
  }
}

/** Type-checks `q` against `fields` (throwing `INVALID_FILTER`, §1.8) and compiles the checked query. */
export function compileFilter(q: FilterQuery, fields: FieldTable, opts: CompileOptions): CompiledQuery {
  return compileChecked(checkFilter(q, fields), opts);
}

export function compileListQuery(opts: ListOptions, fields: FieldTable, dialect: FilterDialect): ListQuery {
  const { checked, paging } = checkList(opts, fields);
  return finish(compileChecked(checked, { tableAlias: 't', dialect }), paging);
}

/**
 * As {@link compileListQuery}, asking `judge` which of the filter's indexed substring tests should keep the plain
 * test (a needle in most rows is read faster by the scan than by the index: store/search-index.ts).
 */
export async function compileListQueryJudged(
  opts: ListOptions,
  fields: FieldTable,
  judge: (probes: SearchProbe[]) => Promise<ReadonlySet<string>>,
  dialect: FilterDialect,
): Promise<ListQuery> {
  const { checked, paging } = checkList(opts, fields);
  const probes = searchProbes(checked);
  const unindexed = probes.length > 0 ? await judge(probes) : undefined;
  return finish(compileChecked(checked, { tableAlias: 't', dialect, ...(unindexed && { unindexed }) }), paging);
}

function checkList(opts: ListOptions, fields: FieldTable) {
  const paging = parsePagingParams(opts.limit, opts.offset);
  const parsed = parseTolerantly(opts.filter?.trim() ? opts.filter : 'true');
  let query = parsed;
  if (parsed.sort.length === 0 && opts.sort?.trim()) {
    query = { ...parsed, sort: parseSortParam(opts.sort, fields) };
  }
  return { checked: checkFilter(query, fields), paging };
}

function finish(compiled: CompiledQuery, paging: { limit?: number; offset?: number }): ListQuery {
  const limit = clampLimit(compiled.limit ?? paging.limit);
  const offset = clampOffset(compiled.skip ?? paging.offset);
  return { where: compiled.where, orderBy: compiled.orderBy, limit, offset };
}
