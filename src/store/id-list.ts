/**
 * A predicate "column is one of these ids" for lists too long for a parameter per value (the access engine's
 * per-identity service sets, up to every service). The ids travel as one JSON parameter and SQLite expands
 * them with `json_each`; another dialect would use its array type here (e.g. `= any($1::text[])`).
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely';

export function inIdList(column: RawBuilder<unknown>, ids: readonly string[]): RawBuilder<SqlBool> {
  if (ids.length === 0) return sql<SqlBool>`1 = 0`;
  return sql<SqlBool>`${column} in (${idList(ids)})`;
}

/** The ids as a one-column sub-select (`value`), for `x in (…)` or as a policy-id source. */
export function idList(ids: readonly string[]): RawBuilder<unknown> {
  return sql`select value from json_each(${JSON.stringify(ids)})`;
}
