/**
 * Cost bounds on a parsed filter. Every term becomes SQL (sets become correlated sub-queries) that SQLite
 * runs on the event loop, so a filter of hundreds of set terms would block every other request; a filter
 * is therefore limited in terms, in nesting and in literal values (docs/decisions.md, "Input bounds").
 * The walk is iterative: it must not overflow on the shapes it is there to refuse.
 */
import { filterError, type BoolExpr, type FilterQuery, type Lhs, type SetExpr } from './ast.js';

/** Most operations (comparisons, `in`, `contains`, `between`, `isEmpty`, bare booleans) in one filter, sub-queries included. */
export const MAX_FILTER_TERMS = 100;
/** Deepest nesting: `not`, sub-queries and each switch between `and` and `or` add a level; a plain chain does not. */
export const MAX_FILTER_DEPTH = 32;
/** Most literal values in all `in [...]` lists of one filter. */
export const MAX_FILTER_VALUES = 1000;

type Node = { expr: BoolExpr; depth: number };

function setQueries(lhs: Lhs | SetExpr): FilterQuery[] {
  if (lhs.kind === 'subQuery') return [lhs.query];
  if (lhs.kind === 'count') return setQueries(lhs.set);
  return [];
}

/** Throws 400 INVALID_FILTER when the filter exceeds a bound. */
export function checkFilterBounds(query: FilterQuery): void {
  let terms = 0;
  let values = 0;
  const stack: Node[] = query.predicate ? [{ expr: query.predicate, depth: 1 }] : [];
  const pushQuery = (q: FilterQuery, depth: number) => {
    if (q.predicate) stack.push({ expr: q.predicate, depth: depth + 1 });
  };
  while (stack.length > 0) {
    const { expr, depth } = stack.pop()!;
    if (depth > MAX_FILTER_DEPTH)
      throw filterError(`the filter is nested too deeply (at most ${MAX_FILTER_DEPTH} levels)`);
    switch (expr.kind) {
      case 'and':
      case 'or':
        for (const side of [expr.left, expr.right])
          stack.push({ expr: side, depth: side.kind === expr.kind ? depth : depth + 1 });
        continue;
      case 'not':
        stack.push({ expr: expr.expr, depth: depth + 1 });
        continue;
      case 'isEmpty':
        for (const q of setQueries(expr.set)) pushQuery(q, depth);
        break;
      case 'compare':
      case 'contains':
      case 'between':
        for (const q of setQueries(expr.left)) pushQuery(q, depth);
        break;
      case 'in':
        for (const q of setQueries(expr.left)) pushQuery(q, depth);
        values += expr.values.values.length;
        if (values > MAX_FILTER_VALUES)
          throw filterError(`the filter has too many values in its lists (at most ${MAX_FILTER_VALUES})`);
        break;
      case 'boolConst':
      case 'boolSymbol':
        break;
    }
    if (++terms > MAX_FILTER_TERMS) throw filterError(`the filter has too many terms (at most ${MAX_FILTER_TERMS})`);
  }
}
