/** Paging over the distinct values of a set property (the `/…-role-attributes` listings). */
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { dynamic, type Executor } from './db.js';

export async function pageDistinctValues(
  db: Executor,
  table: string,
  q: {
    where: RawBuilder<SqlBool> | null;
    orderBy: { expr: RawBuilder<unknown>; direction: 'asc' | 'desc' }[];
    limit: number;
    offset: number;
  },
): Promise<{ values: string[]; total: number }> {
  const source = () =>
    dynamic(db)
      .selectFrom(table)
      .select(sql<string>`value`.as('id'))
      .distinct()
      .as('t');
  const where = q.where ?? sql<SqlBool>`1 = 1`;
  const count = await db
    .selectFrom(source())
    .select(sql<number>`count(*)`.as('n'))
    .where(where)
    .executeTakeFirst();
  let query = db.selectFrom(source()).select('t.id').where(where);
  for (const o of q.orderBy) query = query.orderBy(o.expr, o.direction);
  if (q.orderBy.length === 0) query = query.orderBy('t.id', 'asc');
  const rows = await query.limit(q.limit).offset(q.offset).execute();
  return { values: rows.map((r: { id: string }) => r.id), total: Number(count?.n ?? 0) };
}
