/** Paging over the distinct values of a set property (the `/…-role-attributes` listings). */
import { sql } from 'kysely';
import { dynamic, type Executor } from './db.js';
import { pageDerived, type DerivedPageQuery } from './derived-page.js';

export async function pageDistinctValues(
  db: Executor,
  table: string,
  q: DerivedPageQuery,
): Promise<{ values: string[]; total: number }> {
  const source = () =>
    dynamic(db)
      .selectFrom(table)
      .select(sql<string>`value`.as('id'))
      .distinct()
      .as('t');
  const { ids, total } = await pageDerived(db, source, q);
  return { values: ids, total };
}
