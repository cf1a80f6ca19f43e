/**
 * SQL for `roleFilter`/`roleSemantic` on list operations (parity: docs/reference-notes.md §2.4): entities
 * holding the attributes (all of them for AllOf, any for AnyOf), united with the listed ids.
 * It matches through the attribute link table's (value, ownerId) index, never by loading rows.
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely';

export function roleFilterSql(
  setTable: string,
  attributes: readonly string[],
  ids: readonly string[],
  semantic: 'AllOf' | 'AnyOf',
): RawBuilder<SqlBool> {
  const parts: RawBuilder<SqlBool>[] = [];
  if (attributes.length > 0) {
    const list = sql.join(attributes.map((a) => sql`${a}`));
    const table = sql.table(setTable);
    parts.push(
      semantic === 'AnyOf'
        ? sql<SqlBool>`exists (select 1 from ${table} ra where ra."ownerId" = ${sql.ref('t.id')} and ra."value" in (${list}))`
        : sql<SqlBool>`(select count(*) from ${table} ra where ra."ownerId" = ${sql.ref('t.id')} and ra."value" in (${list})) = ${attributes.length}`,
    );
  }
  if (ids.length > 0) parts.push(sql<SqlBool>`${sql.ref('t.id')} in (${sql.join(ids.map((i) => sql`${i}`))})`);
  if (parts.length === 0) return sql<SqlBool>`1 = 0`;
  return sql<SqlBool>`(${sql.join(parts, sql` or `)})`;
}
