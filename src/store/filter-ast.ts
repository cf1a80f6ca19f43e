/**
 * The filter as the SQL compiler (filter-sql.ts) consumes it: the field table (which symbols a listing
 * exposes and where each lives in SQL) and the checked query, in which every symbol is already a concrete
 * column, map entry or link-table set and every operation carries the type it is evaluated at.
 *
 * Pure types. The model parses and type-checks filters (`src/model/filter/`) and hands the result here, so
 * the store needs nothing from the model. parity: the typing rules are docs/reference-notes.md §1.4.
 */
import type { MatchSide } from './policy-match.js';

/** A comparison operator of the filter language. */
export type CompareOp = '=' | '!=' | '<' | '<=' | '>' | '>=';

/** Scalar value types a column can hold; the filter's literal conversions follow §1.4. */
export type ScalarType = 'string' | 'int' | 'float' | 'datetime' | 'bool';

export type FieldDef =
  /**
   * A column of the main table. Datetime columns hold ISO-8601 UTC strings with milliseconds
   * ("2026-01-02T03:04:05.678Z"), so string order is instant order; bools are stored as 0/1;
   * any column may be null in a row.
   */
  | {
      kind: 'scalar';
      type: ScalarType;
      column: string;
      /**
       * The column holds SHA-256 of the value (secrets such as tokens, docs/design.md "Tokens at rest"): only equality tests
       * work, and the checker hashes their literals.
       */
      hashed?: boolean;
      /**
       * A substring-search index over the column (migration 0012, `src/store/search-index.ts`): the compiler
       * may narrow `contains`/`icontains` with it, re-checking each candidate.
       */
      searchIndex?: string;
    }
  /**
   * String elements stored as rows of a link table: (ownerColumn = main row's id, valueColumn = element). With
   * `selects`, the elements are instead the ids of the rows of `table` (the side's target table) that the main
   * row, a policy, selects by its role list: nothing is stored, each candidate pair is tested by the rule
   * (`selectsSql`); `ownerColumn` is then unused and `valueColumn` is `id`.
   */
  | { kind: 'set'; table: string; ownerColumn: string; valueColumn: string; selects?: MatchSide }
  /** JSON object text column (e.g. tags); `<name>.<key>` addresses one entry; values are null, string, bool or number. */
  | { kind: 'map'; column: string };

/** Public symbols of one entity, keyed by the name used in filters. The main table's id column is always `id`. */
export type FieldTable = Readonly<Record<string, FieldDef>>;

/** The type an operation is evaluated at. */
export type ValueType = 'string' | 'int' | 'float' | 'datetime' | 'bool';

/** A set field: its elements are rows of a link table. */
export interface SetRef {
  readonly kind: 'set';
  readonly field: string;
  readonly table: string;
  readonly ownerColumn: string;
  readonly valueColumn: string;
  /** The elements are the target rows a policy selects (see the set {@link FieldDef}). */
  readonly selects?: MatchSide;
}

/** A column of the main table. */
export interface ColumnSubject {
  readonly kind: 'column';
  readonly field: string;
  readonly column: string;
  readonly type: ScalarType;
  /** The column holds SHA-256 of the values (see the scalar {@link FieldDef}): literals are hashed, only equality tests. */
  readonly hashed?: boolean;
  /** The column's substring-search index, if it has one (see the scalar {@link FieldDef}). */
  readonly searchIndex?: string;
}

/** One entry of a JSON map column, `path` being the key segments after the map's name (`tags.a` → `['a']`). */
export interface MapEntrySubject {
  readonly kind: 'mapEntry';
  readonly field: string;
  readonly column: string;
  readonly path: readonly string[];
}

/** The element under test inside `anyOf(set)` / `allOf(set)`; elements are strings. */
export interface ElementSubject {
  readonly kind: 'element';
  readonly set: SetRef;
}

/** `count(set)`, an int that is never missing. */
export interface CountSubject {
  readonly kind: 'count';
  readonly set: SetRef;
}

/** What an operation reads. */
export type Subject = ColumnSubject | MapEntrySubject | ElementSubject | CountSubject;

/**
 * A checked predicate. Leaves read one {@link Subject}; `as` is the type the comparison happens at (a
 * number column is read as text for `contains` / `in [strings]`, §1.4 "numbers → string").
 */
export type CheckedExpr =
  | { readonly kind: 'and' | 'or'; readonly left: CheckedExpr; readonly right: CheckedExpr }
  | { readonly kind: 'not'; readonly expr: CheckedExpr }
  | { readonly kind: 'const'; readonly value: boolean }
  /** `x = null` (negated: `x != null`): the value is absent. */
  | { readonly kind: 'isNull'; readonly subject: Subject; readonly negated: boolean }
  /** A bool read as "missing is false" equals `expect` (§1.4 bool row; also the bare bool symbol). */
  | { readonly kind: 'boolTest'; readonly subject: Subject; readonly expect: boolean }
  | {
      readonly kind: 'compare';
      readonly subject: Subject;
      readonly as: Exclude<ValueType, 'bool'>;
      readonly op: CompareOp;
      readonly value: string | number;
    }
  | {
      readonly kind: 'contains';
      readonly subject: Subject;
      readonly negated: boolean;
      readonly caseInsensitive: boolean;
      readonly value: string;
    }
  | {
      readonly kind: 'in';
      readonly subject: Subject;
      readonly as: Exclude<ValueType, 'bool'>;
      readonly negated: boolean;
      readonly values: readonly (string | number)[];
    }
  | {
      readonly kind: 'between';
      readonly subject: Subject;
      readonly as: 'int' | 'float' | 'datetime';
      readonly negated: boolean;
      readonly lower: string | number;
      readonly upper: string | number;
    }
  | { readonly kind: 'isEmpty'; readonly set: SetRef }
  /** `anyOf(set) …` / `allOf(set) …`: `predicate` reads the {@link ElementSubject}. */
  | { readonly kind: 'anyOf' | 'allOf'; readonly set: SetRef; readonly predicate: CheckedExpr };

export interface CheckedSort {
  readonly subject: ColumnSubject | MapEntrySubject;
  readonly direction: 'asc' | 'desc';
}

export interface CheckedQuery {
  readonly predicate: CheckedExpr | null;
  /** At most {@link MAX_SORT_FIELDS} entries; the `id` tie-breaker is added by the SQL compiler. */
  readonly sort: readonly CheckedSort[];
  readonly skip?: number;
  readonly limit?: number | 'none';
}
