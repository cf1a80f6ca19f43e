/**
 * One page of ids from a derived table aliased `t` (distinct set values, constant rows): the filter language's
 * compiled SQL, sorting and paging applied as on every stored listing, with the total before paging.
 */
import { sql, type AliasedExpression, type RawBuilder, type SqlBool } from 'kysely';
import type { Executor } from './db.js';
import { orderedBy } from './filter-sql.js';

export interface DerivedPageQuery {
  where: RawBuilder<SqlBool> | null;
  orderBy: { expr: RawBuilder<unknown>; direction: 'asc' | 'desc' }[];
  limit: number;
  offset: number;
}

export async function pageDerived(
  db: Executor,
  source: () => AliasedExpression<{ id: string }, 't'>,
  q: DerivedPageQuery,
): Promise<{ ids: string[]; total: number }> {
  const where = q.where ?? sql<SqlBool>`1 = 1`;
  const count = await db
    .selectFrom(source())
    .select(sql<number>`count(*)`.as('n'))
    .where(where)
    .executeTakeFirst();
  let query = db
    .selectFrom(source())
    .select(sql<string>`t.id`.as('id'))
    .where(where);
  for (const o of q.orderBy) query = orderedBy(query, db, o);
  // The reference's final tie-breaker (docs/reference-notes.md §1.6).
  query = query.orderBy(sql`t.id`, 'asc');
  const rows = await query.limit(q.limit).offset(q.offset).execute();
  return { ids: rows.map((r) => r.id), total: Number(count?.n ?? 0) };
}
