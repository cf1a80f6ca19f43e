/**
 * Paging over rows that live in code, not in a table (the fixed `/posture-check-types` records): the rows are
 * handed to SQLite as a derived table aliased `t`, so the filter language's compiled SQL, sorting and paging
 * work on them exactly as on every stored listing. Values must already be in their stored form (datetimes as
 * ISO text, bools 0/1, maps as JSON text).
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Executor } from './db.js';
import type { PageOrder } from './crud.js';

export type ConstantValue = string | number | null;

export async function pageConstantRows(
  db: Executor,
  columns: readonly string[],
  rows: readonly Record<string, ConstantValue>[],
  q: { where: RawBuilder<SqlBool> | null; orderBy: PageOrder[]; limit: number; offset: number },
): Promise<{ ids: string[]; total: number }> {
  if (rows.length === 0) return { ids: [], total: 0 };
  const selects = rows.map(
    (r) =>
      sql`select ${sql.join(
        columns.map((c) => sql`${r[c] ?? null} as ${sql.ref(c)}`),
        sql`, `,
      )}`,
  );
  const source = () => sql`(${sql.join(selects, sql` union all `)})`.as('t');
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
  for (const o of q.orderBy) query = query.orderBy(o.expr, o.direction);
  // The reference's final tie-breaker (docs/reference-notes.md §1.6).
  query = query.orderBy(sql`t.id`, 'asc');
  const found = await query.limit(q.limit).offset(q.offset).execute();
  return { ids: found.map((r) => r.id), total: Number(count?.n ?? 0) };
}
