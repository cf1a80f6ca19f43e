/**
 * Compiles a filter to kysely raw SQL fragments: a WHERE predicate, ORDER BY terms and the paging values.
 *
 * Input is a checked query (filter-ast.ts): the model parses the filter and type-checks it against the
 * listing's field table (`src/model/list-query.ts`), so every symbol arrives as a concrete column, map entry
 * or link-table set. Column references are qualified with the caller's table alias and every literal is a
 * bound parameter. Everything SQLite-specific (json_type/json_extract, instr, CAST, the FTS5 substring index) sits
 * in one {@link FilterDialect} object so that a PostgreSQL dialect can be added beside it.
 *
 * Missing values (docs/reference-notes.md §1.4): SQL's three-valued logic would make `NOT (name = 'x')`
 * drop rows where `name` is NULL, but in the reference a missing value makes `=`, `<`, `contains`, `in`,
 * `between`… false and `!=`, `not contains`, `not icontains`, `not in`, `not between` true. So:
 * - positive leaves are plain SQL: they yield NULL exactly when the reference says false;
 * - negative leaves are written `(x IS NULL OR …)`, which is never NULL;
 * - `not e` is compiled as `(e) IS NOT TRUE`, which maps a NULL (= false) operand to true.
 * Together every compiled predicate matches the reference's two-valued result.
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { CheckedExpr, CheckedQuery, SetRef, Subject, ValueType } from './filter-ast.js';
import { storeKind } from './dialect.js';
import { selectsSql } from './policy-match.js';
import type { Executor } from './executor.js';
import { SEARCH_INDEXES, searchIndexName } from './migrations/0012-search-indexes.js';
import { PENDING_TABLE } from './migrations/0026-search-index-pending.js';

/** The SQL-engine specific pieces of the compiler. */
export interface FilterDialect {
  /** Case-sensitive substring test; must yield NULL when `haystack` is NULL. */
  contains(haystack: RawBuilder<unknown>, needle: RawBuilder<unknown>): RawBuilder<SqlBool>;
  /** Upper-cases a string expression (for `icontains`). */
  upper(e: RawBuilder<unknown>): RawBuilder<unknown>;
  /** Converts a number expression to its text form (§1.4 "numbers → string"). */
  toText(e: RawBuilder<unknown>): RawBuilder<unknown>;
  /** A map entry read as `as`; NULL when absent, JSON null or of another type (the reference reads those as missing). */
  mapValue(column: RawBuilder<unknown>, path: readonly string[], as: ValueType): RawBuilder<unknown>;
  /** A map entry's raw value, NULL when absent (for `= null` and sorting). */
  mapRaw(column: RawBuilder<unknown>, path: readonly string[]): RawBuilder<unknown>;
  /** How a stored bool is spelled as a bound value. */
  bool(v: boolean): unknown;
  /**
   * A predicate that holds for (at least) every row of `alias` whose indexed column contains `needle`, in any
   * letter case, read from the substring index `index`; null when the index cannot help with this needle.
   * The compiler ANDs it with the exact test, so it may over-match but must never miss a row.
   */
  substringCandidates?(alias: string, index: string, needle: string): RawBuilder<SqlBool> | null;
}

/** Trigram indexes need three characters (code points) of needle: shorter ones keep the plain test. */
export const MIN_INDEXED_NEEDLE = 3;

/** A JSON path for a map entry; keys are bound as a parameter, each segment quoted (`$."a"."b"`). */
const jsonPath = (path: readonly string[]): string => `$${path.map((k) => `."${k}"`).join('')}`;

/** The SQLite dialect: JSON1 functions, `instr` (LIKE is case-insensitive in SQLite), bools stored as 0/1. */
export const sqliteDialect: FilterDialect = {
  contains: (haystack, needle) => sql<SqlBool>`instr(${haystack}, ${needle}) > 0`,
  // Note: SQLite's upper() folds ASCII letters only; both sides go through it, so the test stays consistent.
  upper: (e) => sql`upper(${e})`,
  // Note: a float renders as e.g. "2.0" here where the reference prints "2"; ints match exactly.
  toText: (e) => sql`cast(${e} as text)`,
  mapValue: (column, path, as) => {
    const p = jsonPath(path);
    switch (as) {
      case 'string':
        return sql`(case when json_type(${column}, ${p}) = 'text' then json_extract(${column}, ${p}) end)`;
      case 'int':
        return sql`(case when json_type(${column}, ${p}) = 'integer' then json_extract(${column}, ${p}) end)`;
      case 'float':
        return sql`(case when json_type(${column}, ${p}) in ('integer', 'real') then json_extract(${column}, ${p}) end)`;
      case 'bool':
        return sql`(case json_type(${column}, ${p}) when 'true' then 1 when 'false' then 0 end)`;
      case 'datetime':
        // JSON has no datetime type, so a map entry is never a datetime (it reads as missing).
        return sql`null`;
    }
  },
  mapRaw: (column, path) => sql`json_extract(${column}, ${jsonPath(path)})`,
  bool: (v) => (v ? 1 : 0),
  // FTS5 trigram index (migration 0012): a quoted phrase of the needle's trigrams matches exactly the rows
  // containing it with letters case-folded, a superset of both `contains` and `icontains` (upper() folds
  // ASCII only). The quoted FTS5 string takes every character literally but `"`, which is doubled. Rows whose
  // names are still queued for the index (migration 0026: until their transaction commits) are candidates too.
  substringCandidates: (alias, index, needle) => {
    if ([...needle].length < MIN_INDEXED_NEEDLE) return null;
    const phrase = `"${needle.replace(/"/g, '""')}"`;
    return sql<SqlBool>`${sql.id(alias)}.rowid in (select rowid from ${sql.table(index)} where ${sql.table(index)} match ${phrase}
      union all select "docid" from ${sql.table(PENDING_TABLE)} where "ix" = ${index})`;
  },
};

/** A LIKE pattern matching any text that contains `needle` (its `%`, `_` and `\\` taken literally). */
const containsPattern = (needle: string): string => `%${needle.replace(/[\\%_]/g, (m) => `\\${m}`)}%`;

/**
 * The PostgreSQL dialect: maps are JSON text read through `jsonb`, upper-casing is done in the `C` collation
 * (ASCII letters only, as SQLite's upper() does, whatever the database's own collation), and the substring
 * index is a trigram GIN index on the column itself (migration 0012), which `ilike` uses.
 */
export const postgresDialect: FilterDialect = {
  contains: (haystack, needle) => sql<SqlBool>`strpos(${haystack}, ${needle}) > 0`,
  upper: (e) => sql`upper((${e})::text collate "C")`,
  toText: (e) => sql`cast(${e} as text)`,
  mapValue: (column, path, as) => {
    const j = sql`((${column})::jsonb #> ${[...path]}::text[])`;
    switch (as) {
      case 'string':
        return sql`(case when jsonb_typeof(${j}) = 'string' then ${j} #>> '{}' end)`;
      case 'int':
        return sql`(case when jsonb_typeof(${j}) = 'number' and scale((${j})::numeric) = 0 then (${j})::numeric end)`;
      case 'float':
        return sql`(case when jsonb_typeof(${j}) = 'number' then (${j})::numeric end)`;
      case 'bool':
        return sql`(case when jsonb_typeof(${j}) = 'boolean' then (case when (${j})::boolean then 1 else 0 end) end)`;
      case 'datetime':
        return sql`null`;
    }
  },
  // JSON null reads as missing, as SQLite's json_extract answers SQL NULL for it.
  mapRaw: (column, path) => sql`nullif((${column})::jsonb #> ${[...path]}::text[], 'null'::jsonb)`,
  bool: (v) => (v ? 1 : 0),
  // pg_trgm folds letter case, and `ilike` in the C collation folds ASCII letters as upper() does: every row
  // that contains the needle either way is a candidate.
  substringCandidates: (alias, index, needle) => {
    const ix = SEARCH_INDEXES.find((x) => searchIndexName(x) === index);
    if (!ix || [...needle].length < MIN_INDEXED_NEEDLE) return null;
    return sql<SqlBool>`${sql.ref(`${alias}.${ix.column}`)} ilike ${containsPattern(needle)}`;
  },
};

/** The filter dialect of the store `db` runs on. */
export const filterDialectOf = (db: Executor): FilterDialect =>
  storeKind(db) === 'postgres' ? postgresDialect : sqliteDialect;

/** The pattern an index probe of `needle` reads (the PostgreSQL search's `ilike`). */
export const substringPattern = containsPattern;

export interface CompiledOrder {
  expr: RawBuilder<unknown>;
  direction: 'asc' | 'desc';
  /**
   * parity: nulls sort first ascending and last descending (§1.6). That is SQLite's default order, so
   * callers on SQLite can ignore this; it is spelled out for engines that differ.
   */
  nulls: 'first' | 'last';
}

/** A sort term with its direction; where nulls go follows the reference's rule unless given. */
export interface OrderTerm {
  expr: RawBuilder<unknown>;
  direction: 'asc' | 'desc';
  nulls?: 'first' | 'last';
}

interface Orderable<Q> {
  orderBy(expr: RawBuilder<unknown>, direction?: 'asc' | 'desc'): Q;
}

/**
 * `q` ordered by `o` as the store spells it: PostgreSQL sorts nulls last ascending, so it is told where they
 * go; SQLite's default is already the reference's order (nulls first ascending, last descending).
 */
export function orderedBy<Q extends Orderable<Q>>(q: Q, db: Executor, o: OrderTerm): Q {
  if (storeKind(db) === 'sqlite') return q.orderBy(o.expr, o.direction);
  const nulls = o.nulls ?? (o.direction === 'asc' ? 'first' : 'last');
  return q.orderBy(sql`${o.expr} ${sql.raw(o.direction)} nulls ${sql.raw(nulls)}`);
}

export interface CompiledQuery {
  /** Null when the filter has no predicate (match everything, §1.5.1). */
  where: RawBuilder<SqlBool> | null;
  /** The filter's sort (at most 5 fields) followed by `id asc`, always present as the final tie-breaker (§1.6). */
  orderBy: CompiledOrder[];
  skip?: number;
  limit?: number | 'none';
}

export interface CompileOptions {
  /** Alias of the main table in the caller's query; every column reference is qualified with it. */
  tableAlias: string;
  dialect?: FilterDialect;
  /**
   * Substring tests ({@link searchKey} of their index and needle) that keep the plain test without the index:
   * needles matching a large part of the rows read faster by scanning (store/search-index.ts `broadNeedles`).
   */
  unindexed?: ReadonlySet<string>;
}

/** A substring test the index could narrow: its index and needle. */
export interface SearchProbe {
  index: string;
  needle: string;
}

export const searchKey = (p: SearchProbe): string => `${p.index}\u0000${p.needle}`;

/** The substring tests of `q` that the compiler would read from an index. */
export function searchProbes(q: CheckedQuery): SearchProbe[] {
  const out: SearchProbe[] = [];
  const walk = (e: CheckedExpr): void => {
    switch (e.kind) {
      case 'and':
      case 'or':
        walk(e.left);
        walk(e.right);
        return;
      case 'not':
        walk(e.expr);
        return;
      case 'anyOf':
      case 'allOf':
        walk(e.predicate);
        return;
      case 'contains': {
        const s = e.subject;
        if (!e.negated && s.kind === 'column' && s.searchIndex && s.type === 'string')
          if ([...e.value].length >= MIN_INDEXED_NEEDLE) out.push({ index: s.searchIndex, needle: e.value });
        return;
      }
      default:
        return;
    }
  };
  if (q.predicate) walk(q.predicate);
  return out;
}

/**
 * Compiles a checked query. Use as `db.selectFrom('identities as t').where(c.where)…` with `tableAlias: 't'`.
 */
export function compileChecked(q: CheckedQuery, opts: CompileOptions): CompiledQuery {
  const c = new SqlCompiler(opts.tableAlias, opts.dialect ?? sqliteDialect, opts.unindexed);
  const orderBy: CompiledOrder[] = q.sort.map((s) => ({
    expr: c.sortValue(s.subject),
    direction: s.direction,
    nulls: s.direction === 'asc' ? 'first' : 'last',
  }));
  orderBy.push({ expr: sql.id(opts.tableAlias, 'id'), direction: 'asc', nulls: 'first' });
  const out: CompiledQuery = { where: q.predicate ? c.predicate(q.predicate) : null, orderBy };
  if (q.skip !== undefined) out.skip = q.skip;
  if (q.limit !== undefined) out.limit = q.limit;
  return out;
}

/** SQL spelling of the comparison operators; a closed set, so emitting them raw is safe. */
const SQL_OPS = { '=': '=', '!=': '<>', '<': '<', '<=': '<=', '>': '>', '>=': '>=' } as const;

class SqlCompiler {
  /** Alias of the link table inside set sub-queries (sets never nest, so one alias suffices). */
  private readonly link: string;

  constructor(
    private readonly alias: string,
    private readonly d: FilterDialect,
    private readonly unindexed?: ReadonlySet<string>,
  ) {
    this.link = `${alias}_set`;
  }

  predicate(e: CheckedExpr): RawBuilder<SqlBool> {
    switch (e.kind) {
      case 'and':
        return sql<SqlBool>`(${this.predicate(e.left)} and ${this.predicate(e.right)})`;
      case 'or':
        return sql<SqlBool>`(${this.predicate(e.left)} or ${this.predicate(e.right)})`;
      case 'not':
        // A NULL operand means "false" (see the module comment), so NOT must turn it into true.
        return sql<SqlBool>`((${this.predicate(e.expr)}) is not true)`;
      case 'const':
        return e.value ? sql<SqlBool>`true` : sql<SqlBool>`false`;
      case 'isNull': {
        const v = this.rawValue(e.subject);
        return e.negated ? sql<SqlBool>`${v} is not null` : sql<SqlBool>`${v} is null`;
      }
      case 'boolTest': {
        // parity: a missing bool reads as false (§1.4), so `flag = false` matches NULL.
        const v = this.value(e.subject, 'bool');
        return e.expect
          ? sql<SqlBool>`${v} = ${this.d.bool(true)}`
          : sql<SqlBool>`(${v} is null or ${v} = ${this.d.bool(false)})`;
      }
      case 'compare': {
        const v = this.value(e.subject, e.as);
        if (e.op === '!=') return sql<SqlBool>`(${v} is null or ${v} <> ${e.value})`;
        return sql<SqlBool>`${v} ${sql.raw(SQL_OPS[e.op])} ${e.value}`;
      }
      case 'contains': {
        // parity: case-sensitive substring; icontains upper-cases both sides (§1.4).
        const v = this.value(e.subject, 'string');
        const test = e.caseInsensitive
          ? this.d.contains(this.d.upper(v), this.d.upper(sql`${e.value}`))
          : this.d.contains(v, sql`${e.value}`);
        if (e.negated) return sql<SqlBool>`(${v} is null or not (${test}))`;
        // A positive test on an indexed column reads the index's candidates first, then re-checks each one
        // exactly, so the result is the plain test's (a negated test would need every row anyway).
        const candidates = this.indexed(e.subject, e.value);
        return candidates ? sql<SqlBool>`(${candidates} and ${test})` : test;
      }
      case 'in': {
        const v = this.value(e.subject, e.as);
        const list = sql.join(e.values.map((x) => sql`${x}`));
        return e.negated ? sql<SqlBool>`(${v} is null or ${v} not in (${list}))` : sql<SqlBool>`${v} in (${list})`;
      }
      case 'between': {
        // parity: half-open, lower <= x < upper (§1.4).
        const v = this.value(e.subject, e.as);
        return e.negated
          ? sql<SqlBool>`(${v} is null or ${v} < ${e.lower} or ${v} >= ${e.upper})`
          : sql<SqlBool>`(${v} >= ${e.lower} and ${v} < ${e.upper})`;
      }
      case 'isEmpty':
        return sql<SqlBool>`not exists (${this.elements(e.set)})`;
      case 'anyOf':
        // parity: true if any element satisfies; an empty set is false (§1.4).
        return sql<SqlBool>`exists (${this.elements(e.set)} and ${this.predicate(e.predicate)})`;
      case 'allOf':
        // parity: true if every element satisfies; an empty set is true (§1.4).
        return sql<SqlBool>`not exists (${this.elements(e.set)} and (${this.predicate(e.predicate)}) is not true)`;
    }
  }

  /** The substring index's candidates for `needle` in a column subject, when it has an index that helps. */
  private indexed(s: Subject, needle: string): RawBuilder<SqlBool> | null {
    if (s.kind !== 'column' || !s.searchIndex || s.type !== 'string' || !this.d.substringCandidates) return null;
    if (this.unindexed?.has(searchKey({ index: s.searchIndex, needle }))) return null;
    return this.d.substringCandidates(this.alias, s.searchIndex, needle);
  }

  /** `select 1 from <link> where <owner> = <main>.id`, to be extended with `and …`. */
  private elements(s: SetRef): RawBuilder<unknown> {
    return sql`select 1 from ${sql.table(s.table)} as ${sql.id(this.link)} where ${this.ownedBy(s)}`;
  }

  /** The link row belongs to the main row: its owner column, or for a policy's selected rows the matching rule. */
  private ownedBy(s: SetRef): RawBuilder<SqlBool> {
    if (s.selects) return selectsSql(s.selects, sql.id(this.alias, 'id'), sql.id(this.link, 'id'));
    return sql<SqlBool>`${sql.id(this.link, s.ownerColumn)} = ${sql.id(this.alias, 'id')}`;
  }

  /** A subject read at type `as`. */
  private value(s: Subject, as: ValueType): RawBuilder<unknown> {
    switch (s.kind) {
      case 'column': {
        const ref = sql.id(this.alias, s.column);
        return as === 'string' && (s.type === 'int' || s.type === 'float') ? this.d.toText(ref) : ref;
      }
      case 'mapEntry':
        return this.d.mapValue(sql.id(this.alias, s.column), s.path, as);
      case 'element':
        return sql.id(this.link, s.set.valueColumn);
      case 'count':
        return sql`(select count(*) from ${sql.table(s.set.table)} as ${sql.id(this.link)} where ${this.ownedBy(s.set)})`;
    }
  }

  /** A subject's stored value whatever its type (presence tests). */
  private rawValue(s: Subject): RawBuilder<unknown> {
    if (s.kind === 'column') return sql.id(this.alias, s.column);
    if (s.kind === 'mapEntry') return this.d.mapRaw(sql.id(this.alias, s.column), s.path);
    return this.value(s, 'string');
  }

  /** The ORDER BY expression of a sort subject. */
  sortValue(s: Subject): RawBuilder<unknown> {
    return this.rawValue(s);
  }
}
