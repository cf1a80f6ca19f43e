/**
 * Paging over rows that live in code, not in a table (the fixed `/posture-check-types` records): the rows are
 * handed to SQLite as a derived table aliased `t`, so the filter language's compiled SQL, sorting and paging
 * work on them exactly as on every stored listing. Values must already be in their stored form (datetimes as
 * ISO text, bools 0/1, maps as JSON text).
 */
import { sql } from 'kysely';
import type { Executor } from './db.js';
import { pageDerived, type DerivedPageQuery } from './derived-page.js';

export type ConstantValue = string | number | null;

export async function pageConstantRows(
  db: Executor,
  columns: readonly string[],
  rows: readonly Record<string, ConstantValue>[],
  q: DerivedPageQuery,
): Promise<{ ids: string[]; total: number }> {
  if (rows.length === 0) return { ids: [], total: 0 };
  const selects = rows.map(
    (r) =>
      sql`select ${sql.join(
        columns.map((c) => sql`${r[c] ?? null} as ${sql.ref(c)}`),
        sql`, `,
      )}`,
  );
  const source = () => sql<{ id: string }>`(${sql.join(selects, sql` union all `)})`.as('t');
  return pageDerived(db, source, q);
}
